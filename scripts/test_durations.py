"""Write the measured durations of a test run into docs/testing.md (between its durations markers).

    UNIVIEW_DURATIONS_FILE=/tmp/durations.json bash scripts/test.sh
    .venv/bin/python scripts/test_durations.py /tmp/durations.json [--note "fresh clone, 2 cores"]

The file is the one tests/durations_record.py writes: the run's wall time, and per test process its wall time
and the summed durations of each test file.  Without --write the table is printed instead."""

from __future__ import annotations

import argparse
import json
import re
from pathlib import Path

PAGE = Path(__file__).resolve().parents[1] / "docs" / "testing.md"
BEGIN, END = "<!-- durations:begin -->", "<!-- durations:end -->"
SLOWEST = 10


def minutes(seconds: float) -> str:
    whole = round(seconds)
    return f"{whole // 60} min {whole % 60:02d} s"


def table(record: dict, note: str) -> str:
    processes = record["processes"]
    files: dict[str, tuple[float, str]] = {}
    for name, figures in processes.items():
        for path, seconds in figures["files"].items():
            files[path] = (seconds, name)
    tests = sum(sum(figures["tests"].values()) for figures in processes.values())
    lines = [f"Measured {note}: **{minutes(record['wall'])}** of pytest for {tests} tests.", ""]
    lines += ["| the slowest test files | seconds | test process |", "|---|---:|---|"]
    for path, (seconds, name) in sorted(files.items(), key=lambda item: -item[1][0])[:SLOWEST]:
        lines.append(f"| `{path}` | {seconds:.0f} | {name} |")
    lines += ["", "| test process | wall | files | tests' own time |", "|---|---:|---:|---:|"]
    for name, figures in sorted(processes.items()):
        own = sum(figures["files"].values())
        lines.append(f"| {name} | {minutes(figures['wall'])} | {len(figures['files'])} | {minutes(own)} |")
    return "\n".join(lines)


def rewrite(page: str, body: str) -> str:
    pattern = re.compile(re.escape(BEGIN) + ".*?" + re.escape(END), re.DOTALL)
    if not pattern.search(page):
        raise SystemExit(f"{PAGE} has no {BEGIN} ... {END} section")
    return pattern.sub(lambda _: f"{BEGIN}\n{body}\n{END}", page)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("record", type=Path, help="the JSON file of UNIVIEW_DURATIONS_FILE")
    parser.add_argument("--note", default="on this machine", help="where and how the run was made")
    parser.add_argument("--write", action="store_true", help=f"rewrite the table in {PAGE.name}")
    args = parser.parse_args(argv)
    body = table(json.loads(args.record.read_text()), args.note)
    if args.write:
        PAGE.write_text(rewrite(PAGE.read_text(), body))
    else:
        print(body)


if __name__ == "__main__":
    main()
