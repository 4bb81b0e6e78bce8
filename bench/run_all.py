"""Run every benchmark, each in its own process, and print one table of the figures the README carries.

Usage: python -m bench.run_all [--quick]   (--quick: smaller inputs, for a smoke run)
       python -m bench.run_all --compare [--only plan tenants] [--reuse]
Each benchmark also writes its full results to bench/results/<name>.json.  --compare reruns the benchmarks
of the headline figures docs/benchmarks.md records and prints each against its recorded value, saying
which fell by more than 10% (exit status 1 then; a figure that falls is measured once more, and has fallen only
when it falls again); --reuse compares the results the last runs left instead, without a second run.
"""

from __future__ import annotations

import argparse
import json
import platform
import subprocess
import sys
from collections.abc import Callable, Iterable
from datetime import date
from pathlib import Path
from typing import cast

from rich.console import Console
from rich.table import Table

from bench.bench_sink import results_name as sink_results_name
from bench.compare import DOCS_PAGE, Comparison, compare, confirm, recorded_figures, verdict
from bench.results_file import RESULTS_DIR

RESULTS = RESULTS_DIR
FULL = {
    "plan": ["--versions", "250", "500", "900"],
    "function": [],
    "sink": ["--records", "400000", "1000000", "--pairs", "3"],
    "sink_bigquery": ["--records", "20000", "--pairs", "1"],
    "scan": [],
    "tenants": ["--databases", "1", "100", "1000", "--rounds", "3"],
    "current_table": ["--keys", "100000", "--changes", "3", "--repeats", "5", "--backfill", "300000"],
}
#: The headline figures' benchmarks, as docs/benchmarks.md's headline figures were measured.
COMPARE = {
    "plan": ["--versions", "250", "--shell-versions", "900", "--pairs", "7"],
    "tenants": ["--databases", "1", "1000", "--emulator-databases", "--rounds", "3"],
    "sink": ["--records", "400000", "1000000", "--pairs", "3"],
}
QUICK = {
    "plan": ["--versions", "50", "100", "--shell-versions", "100"],
    "function": ["--events", "2", "--imports", "3"],
    "sink": ["--records", "100000", "--pairs", "1"],
    "sink_bigquery": ["--records", "5000", "--pairs", "1"],
    "scan": ["--versions", "4", "--rows", "50000", "--repeats", "3"],
    "tenants": ["--databases", "1", "100", "--emulator-databases", "1", "10", "--rounds", "1"],
    "current_table": ["--keys", "10000", "--changes", "3", "--repeats", "2", "--backfill", "30000"],
}


#: The results file of a headline benchmark whose comparison runs it on other inputs than its default.
COMPARE_RESULTS = {"sink": sink_results_name([400_000, 1_000_000])}


def run(name: str, args: list[str], results: str | None = None) -> dict | list:
    subprocess.run([sys.executable, "-m", f"bench.bench_{name}", *args], check=True, cwd=Path(__file__).parents[1])
    return json.loads((RESULTS / f"{results or name}.json").read_text())


def plan_rows(results: dict) -> list[tuple[str, str, str]]:
    families = results["families"]
    rows = [
        (
            f"plan: {r['versions']} versions x {r['columns']} columns, 20% conflicting",
            f"{r['plan_seconds']} s; {r['sql_chars'] / 1e6:.1f} M chars in {r['views']} views",
            f"{r['plan_to_full_parse_ratio']}x sqlglot parsing the same SQL (what every plan paid before)",
        )
        for r in families
    ]
    rows += [
        (
            f"plan from the shell: {shell['versions']} x {shell['columns']} in DuckDB, {shell['family']}, "
            "`uniview plan --json`",
            f"{shell['shell_plan_seconds']} s",
            f"{shell['shell_plan_to_metadata_read_ratio']}x a process that only opens the file and reads "
            f"information_schema.columns ({shell['shell_metadata_read_seconds']} s)",
        )
        for shell in results["shell"]
    ]
    return rows


def function_rows(r: dict) -> list[tuple[str, str, str]]:
    return [
        (
            "function: BigQuery jobs per event (emulator)",
            f"{r['jobs_changed_event']} changed view / {r['jobs_unchanged_event']} unchanged",
            "-",
        ),
        (
            "function: end-to-end latency per event (emulator, median)",
            f"{r['latency_changed_s']} s changed / {r['latency_unchanged_s']} s unchanged",
            "-",
        ),
        (
            "function: cold `import main`",
            f"{r['import_function_s']} s",
            f"{r['import_ratio_function_to_bigquery']}x `import google.cloud.bigquery`",
        ),
    ]


def sink_rows(r: dict) -> list[tuple[str, str, str]]:
    return [
        (
            f"sink: {run['records']:,} records, {r['versions']} versions, {r['master']}, median of {run['pairs']} pairs",
            f"{run['sink_seconds']} s ({run['records'] / run['sink_seconds']:,.0f} records/s)",
            f"{run['ratio']}x a hand-written Spark job parsing the same input ({run['baseline_seconds']} s); "
            f"a text copy that parses nothing: {run['text_copy_seconds']} s"
            + (
                f"; peak memory {run['sink_peak_mib']:,} MiB (the job: {run['baseline_peak_mib']:,} MiB)"
                if "sink_peak_mib" in run
                else ""
            ),
        )
        for run in r["runs"]
    ]


def sink_bigquery_rows(r: dict) -> list[tuple[str, str, str]]:
    return [
        (
            f"sink on BigQuery (emulator, real connector): {r['records']:,} records, {r['versions']} versions, "
            f"median of {r['pairs']} pairs",
            f"{r['sink_seconds']} s, {r['sink_request_seconds']} s of it in {r['first_batch_requests']} BigQuery "
            "requests",
            f"Spark's share {r['spark_share_ratio']}x a hand-written job landing the same input with one connector "
            f"write ({r['baseline_seconds']} s; goal <= 1.0x)",
        ),
        (
            "sink on BigQuery: Spark jobs and BigQuery requests per batch",
            f"first batch {r['first_batch_spark_jobs']} jobs, {r['first_batch_requests']} requests; later batch "
            f"{r['later_batch_spark_jobs']} jobs, {r['later_batch_requests']} requests",
            "goal: 1 job, <= 10 requests per later batch",
        ),
    ]


def scan_rows(r: dict) -> list[tuple[str, str, str]]:
    return [
        (
            f"DuckDB scan: unified view over {r['versions']} versions, {r['rows']:,} rows",
            f"{r['view_seconds']} s",
            f"{r['view_to_table_ratio']}x one consolidated table",
        )
    ]


def tenants_rows(r: dict) -> list[tuple[str, str, str]]:
    rows = [
        (
            f"sink: {r['records']:,} records from {run['databases']:,} source databases, one dataset each (DuckDB)",
            f"{run['seconds']} s, {run['spark_jobs']} Spark jobs",
            f"{run['ratio_to_one']}x the one-database run",
        )
        for run in r["runs"]
    ]
    shared = r["shared_dataset"]
    rows.append(
        (
            f"sink: the same from {shared['databases']:,} databases into one shared dataset",
            f"{shared['seconds']} s, {shared['spark_jobs']} Spark jobs",
            f"{shared['ratio_to_one']}x",
        )
    )
    rows += [
        (
            f"sink: {r['records']:,} records from {run['databases']:,} source databases, one dataset each "
            "(BigQuery emulator, real connector, tables created by the run)",
            f"{run['seconds']} s, {run['spark_jobs']} Spark jobs",
            f"{run['ratio_to_one']}x the one-database run",
        )
        for run in r.get("emulator_runs", [])
    ]
    return rows


def current_table_rows(r: dict) -> list[tuple[str, str, str]]:
    return [
        (
            f"DuckDB current table: `uniview refresh --current table` process after 1% of {r['keys']:,} keys change "
            f"({r['history_rows']:,} changes)",
            f"{r['maintain_process_s']:.3f} s",
            f"{r['maintain_vs_read']:.2f}x a process reading just the changes (goal <= 2x)",
        ),
        (
            f"the same after a {r['backfill_rows']:,}-change backfill",
            f"{r['maintain_after_backfill_process_s']:.3f} s",
            f"{r['after_backfill_vs_read']:.2f}x a process reading just the changes (goal <= 2x)",
        ),
        (
            f"the same on {r['long_history_rows']:,} changes",
            f"{r['maintain_long_process_s']:.3f} s",
            f"{r['long_vs_short']:.2f}x the shorter history (goal <= 1.2x)",
        ),
        (
            "full scan of the current table",
            f"{r['scan_table_s']:.3f} s",
            f"{r['table_vs_plain']:.2f}x a plain table (goal <= 1.1x); the view {r['view_vs_table']:.1f}x the table",
        ),
    ]


FORMATTERS = {
    "plan": plan_rows,
    "function": function_rows,
    "sink": sink_rows,
    "sink_bigquery": sink_bigquery_rows,
    "scan": scan_rows,
    "tenants": tenants_rows,
    "current_table": current_table_rows,
}


def _shell_ratio(results: dict, family: str) -> float | None:
    return next((r["shell_plan_to_metadata_read_ratio"] for r in results["shell"] if r["family"] == family), None)


def _run_figure(runs: list[dict], size_key: str, size: int, figure: str) -> float | None:
    return next((run[figure] for run in runs if run[size_key] == size), None)


#: Each headline figure's key in docs/benchmarks.md: its benchmark, and how its value is read from the results.
HEADLINE: dict[str, tuple[str, Callable[[dict], float | None]]] = {
    "plan-mixed": ("plan", lambda r: _shell_ratio(r, "mixed")),
    "plan-all-conflicting": ("plan", lambda r: _shell_ratio(r, "every column changes type")),
    "tenants-1000": ("tenants", lambda r: _run_figure(r["runs"], "databases", 1000, "ratio_to_one")),
    "tenants-shared": ("tenants", lambda r: r["shared_dataset"]["ratio_to_one"]),
    "sink-400k": ("sink", lambda r: _run_figure(r["runs"], "records", 400_000, "ratio")),
    "sink-1m": ("sink", lambda r: _run_figure(r["runs"], "records", 1_000_000, "ratio")),
}


def compare_with_docs(names: list[str], reuse: bool) -> list[Comparison]:
    """Rerun (or with `reuse`, read the last results of) the headline benchmarks among `names`, and set each
    figure against the one docs/benchmarks.md records.  The benchmarks of the figures that fell are run once
    more (not with `reuse`), and a figure has fallen only when it falls in that run too."""
    recorded = recorded_figures(DOCS_PAGE.read_text(encoding="utf-8"))
    unknown = sorted(set(recorded) - set(HEADLINE))
    if unknown:
        raise SystemExit(f"docs/benchmarks.md records figures run_all cannot measure: {', '.join(unknown)}")
    wanted = [name for name in COMPARE if name in names]
    results = {name: _last_results(name) if reuse else _run_compared(name) for name in wanted}
    comparisons = compare(recorded.values(), lambda key: _figure(key, results))
    if reuse:
        return comparisons
    again = {name: _run_compared(name) for name in _benchmarks_of(c for c in comparisons if c.fell_once)}
    return confirm(comparisons, lambda key: _figure(key, again))


def _run_compared(name: str) -> dict:
    return cast(dict, run(name, COMPARE[name], COMPARE_RESULTS.get(name)))


def _last_results(name: str) -> dict:
    return json.loads((RESULTS / f"{COMPARE_RESULTS.get(name, name)}.json").read_text())


def _figure(key: str, results: dict[str, dict]) -> float | None:
    """The headline figure `key` read from its benchmark's `results`; None when that benchmark did not run."""
    benchmark, read = HEADLINE[key]
    return read(results[benchmark]) if benchmark in results else None


def _benchmarks_of(comparisons: Iterable[Comparison]) -> list[str]:
    """The benchmarks the figures of `comparisons` come from, each once, in COMPARE's order."""
    benchmarks = {HEADLINE[c.recorded.key][0] for c in comparisons}
    return [name for name in COMPARE if name in benchmarks]


def print_comparisons(comparisons: list[Comparison], console: Console) -> None:
    table = Table(title=f"headline figures against {DOCS_PAGE.name}, {date.today()}", title_justify="left")
    for heading in ("figure", "goal", "recorded", "now", "change"):
        table.add_column(heading, overflow="fold")
    for c in comparisons:
        figure = c.recorded
        goal = f"{'<=' if figure.lower_is_better else '>='} {figure.goal}x"
        now = "-" if c.measured is None else f"{c.measured}x" + ("" if c.again is None else f", then {c.again}x")
        now += "" if c.measured is None or c.meets_goal else " (goal not met)"
        table.add_row(figure.key, goal, f"{figure.value}x ({figure.commit})", now, verdict(c))
    console.print(table)
    fallen = [c.recorded.key for c in comparisons if c.fell]
    console.print(f"fell by more than 10%: {', '.join(fallen)}" if fallen else "no figure fell by more than 10%")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="smaller inputs (a smoke run, not the README figures)")
    parser.add_argument("--only", nargs="+", choices=list(FULL), default=list(FULL))
    parser.add_argument("--compare", action="store_true", help="rerun the headline figures, set against the docs'")
    parser.add_argument("--reuse", action="store_true", help="with --compare: the last results, not a new run")
    args = parser.parse_args(argv)
    if args.compare:
        comparisons = compare_with_docs(args.only, args.reuse)
        print_comparisons(comparisons, Console(width=140))
        raise SystemExit(1 if any(c.fell for c in comparisons) else 0)
    settings = QUICK if args.quick else FULL
    table = Table(
        title=f"uniview benchmarks, {date.today()}, {platform.machine()}, "
        f"{__import__('os').cpu_count()} cores, Python {platform.python_version()}",
        title_justify="left",
    )
    for heading in ("benchmark", "measured", "ratio to baseline (same run)"):
        table.add_column(heading, overflow="fold")
    for name in args.only:
        for row in FORMATTERS[name](run(name, settings[name])):
            table.add_row(*row)
    Console(width=140).print(table)


if __name__ == "__main__":
    main()
