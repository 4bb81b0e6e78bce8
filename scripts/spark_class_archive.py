"""Build the class-data-sharing archive of a local Spark driver (uniview.local.class_archive), once per JDK and
Spark install: a SparkSession started as `uniview sink` starts one runs a small batch of each input format into
DuckDB, and its JVM writes the classes it loaded when it exits (`-XX:ArchiveClassesAtExit`).  The archive is
written under a temporary name and renamed only once its JVM exited cleanly, so a JVM never maps a partial one.

    .venv/bin/python scripts/spark_class_archive.py          # prints the archive's path; nothing to do if cached
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from uniview.local.class_archive import archive_dump_options, spark_archive_path  # noqa: E402
from uniview.local.processes import QUICK_JIT  # noqa: E402

#: Records of a few types, in uniview's input format, and one that does not parse (the quarantine path).
_COLUMNS = [("id", "int"), ("name", "varchar(20)"), ("price", "decimal(10,2)"), ("at", "datetime"), ("on", "date")]


def _training_input(folder: Path) -> Path:
    schema = [{"name": name, "type": declared} for name, declared in _COLUMNS]
    meta = {"ingestion_method": "BINLOG", "database_name": "shop", "table_name": "item", "schema": schema}
    rows = [
        {"id": n, "name": f"item {n}", "price": f"{n}.50", "at": "2024-01-02 03:04:05", "on": "2024-01-02"}
        for n in range(20)
    ]
    lines = [json.dumps({"data": row, "metadata": meta}) for row in rows] + ["not a record"]
    (folder / "in").mkdir(parents=True)
    (folder / "in" / "part-0.json").write_text("\n".join(lines) + "\n")
    return folder / "in"


def train(folder: Path) -> None:
    """Run two sink batches in one local session, then wait for its JVM to exit (it writes the archive then)."""
    from pyspark import SparkContext

    from uniview.cli.sink import _new_session, sink_command

    spark = _new_session("local[2]")
    source = _training_input(folder)
    for run in ("first", "again"):
        warehouse = f"duckdb:///{folder / run}.duckdb"
        sink_command.main(["--input", str(source), "--warehouse", warehouse, "--quiet"], standalone_mode=False)
    spark.stop()
    gateway = SparkContext._gateway
    if gateway is not None and getattr(gateway, "proc", None) is not None:
        gateway.proc.stdin.close()  # the gateway JVM exits at the end of its input
        sys.exit(gateway.proc.wait())


def build() -> Path | None:
    target = spark_archive_path()
    if target is None or target.is_file():
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_name(f"{target.name}.{os.getpid()}.partial")
    with tempfile.TemporaryDirectory(prefix="uniview-archive-") as folder:
        env = {**os.environ, "SPARK_SUBMIT_OPTS": f"{QUICK_JIT} {archive_dump_options(partial)}"}
        env.update(SPARK_LOCAL_DIRS=folder, SPARK_LOCAL_IP="127.0.0.1")
        done = subprocess.run(
            [sys.executable, __file__, "--train", folder], env=env, capture_output=True, text=True, check=False
        )
    if done.returncode != 0 or not partial.is_file():
        partial.unlink(missing_ok=True)
        sys.stderr.write(done.stdout[-3000:] + done.stderr[-3000:])
        raise SystemExit(f"error: the Spark driver's class archive was not written (exit code {done.returncode})")
    os.replace(partial, target)
    return target


if __name__ == "__main__":
    if sys.argv[1:2] == ["--train"]:
        train(Path(sys.argv[2]))
    else:
        print(build() or "no archive: Java or pyspark is not installed")
