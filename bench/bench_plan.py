"""Benchmark: `plan` on a synthetic family of N versions x 300 columns with 20% conflicting types.

Reports plan time, SQL size and views, and the ratio of plan time to the time sqlglot alone
takes to parse the same SQL (the validation every statement goes through), measured in the
same run.  Usage: python -m bench.bench_plan [--versions 250 500 1000] [--columns 300]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import sqlglot

from uniview.plan import GeneratorOptions, plan_family
from bench.results_file import write_results

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from families import synthetic_family  # noqa: E402  (the same families the tests plan)

def measure(versions: int, columns: int) -> dict:
    family = synthetic_family(versions, columns)
    # The 1,000-resources check is BigQuery's query-time limit, not the generator's work: lift it here.
    options = GeneratorOptions(max_query_resources=10**9)
    started = time.perf_counter()
    plan = plan_family("cdc", "cdc_unified", family, options)
    plan_seconds = time.perf_counter() - started
    started = time.perf_counter()
    for view in plan.views:
        sqlglot.parse(view.statement, read="bigquery")
    parse_seconds = time.perf_counter() - started
    sql_chars = sum(len(view.body) for view in plan.views)
    return {
        "versions": versions, "columns": columns, "views": len(plan.views), "sql_chars": sql_chars,
        "plan_seconds": round(plan_seconds, 3), "parse_only_seconds": round(parse_seconds, 3),
        "plan_to_parse_ratio": round(plan_seconds / parse_seconds, 2),
        "within_1000_resources": versions + len(plan.views) <= 1000,
    }


def main(argv: list[str] | None = None) -> list[dict]:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--versions", type=int, nargs="+", default=[250, 500, 1000])
    parser.add_argument("--columns", type=int, default=300)
    args = parser.parse_args(argv)
    results = [measure(count, args.columns) for count in args.versions]
    print(f"{'versions':>8} {'views':>5} {'SQL chars':>11} {'plan s':>7} {'parse-only s':>12} {'ratio':>6}")
    for r in results:
        print(f"{r['versions']:>8} {r['views']:>5} {r['sql_chars']:>11,} {r['plan_seconds']:>7} "
              f"{r['parse_only_seconds']:>12} {r['plan_to_parse_ratio']:>6}")
    write_results("plan", results)
    return results


if __name__ == "__main__":
    main()
