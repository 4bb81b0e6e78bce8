"""Hooks of the whole run.  gRPC's fork handlers are off in test processes (uniview.local.processes).
Spark's scratch files (SPARK_LOCAL_DIRS, and the JVM's java.io.tmpdir) go to one directory per test
process, removed at its end: the tests kill Spark processes with SIGKILL, which would leave them in the
system's temporary directory.
Spark's JVMs started by the tests compile with C1 only (SPARK_SUBMIT_OPTS, uniview.local.processes.QUICK_JIT): on
test-sized inputs C2's compiling is most of their CPU (in the connector's tests, 274 s of JVM CPU became
174 s), while the code that runs is the same.
They also map Spark's classes from the class-data-sharing archive scripts/setup-spark-archive.sh builds
(uniview.local.class_archive), when it is there: a third less CPU per Spark start.
The BigQuery emulators the tests start run each query on one DuckDB thread (UNIVIEW_BQ_EMULATOR_THREADS): the
tests' queries are small, and DuckDB's second thread cost the emulator about 15% more CPU for the same jobs.
In a parallel run (pytest-xdist, as scripts/test.sh runs the suite) each test
process reports how many statements its ZetaSQL analyzer checked (tests/zetasql/conftest.py), and the
run's summary gives their sum.
The longest test files are collected first (SLOWEST_FIRST), and `--dist loadfile` hands files to the test
processes in collection order (SharedStackScheduling turns off pytest-xdist's reordering by number of tests), so
no long file starts last and keeps one process running alone.
The end-to-end CDC files (SHARED_STACK) go to one test process together (SharedStackScheduling): they share its
Kafka broker, Kafka Connect worker, BigQuery emulator and database servers, which start once.
A test process holds at most one local SparkSession (`spark`), whichever file asks for it first: Spark's JVM reads
the connector's jar only when it starts, so a session started without it would fail the connector's tests later."""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
from pathlib import Path

from uniview.local.bigquery_emulator import THREADS_VARIABLE
from uniview.local.class_archive import spark_archive_options
from uniview.local.processes import QUICK_JIT, keep_grpc_fork_handlers_off

keep_grpc_fork_handlers_off()  # a test process keeps gRPC channels open while it starts Spark's gateway

import pytest  # noqa: E402

sys.path.insert(0, str(Path(__file__).parent / "zetasql"))

from analyzer import STATEMENTS_REPORTED  # noqa: E402
from durations_record import register as register_durations  # noqa: E402

#: The longest test files, longest first (the run's durations record, docs/testing.md); the others follow in their
#: own order.  The SHARED_STACK files are one unit, placed by the first of them.
SLOWEST_FIRST = (
    "tests/kafka/test_postgres_debezium_e2e.py",
    "tests/kafka/test_mariadb_debezium_e2e.py",
    "tests/kafka/test_generative_migrations.py",
    "tests/test_demo.py",
    "tests/sink/test_sink_bigquery_connector.py",
    "tests/terraform/test_terraform_plan.py",
    "tests/bigquery/test_bq_current_table.py",
    "tests/kafka/test_kafka_source.py",
    "tests/bigquery/test_bq_consolidation.py",
    "tests/sink/test_sink_warehouses_agree.py",
    "tests/current/test_current_table_random.py",
    "tests/consolidation/test_consolidate_duckdb.py",
    "tests/sink/test_sink_current_fresh.py",
    "tests/sink/test_sink_streaming.py",
    "tests/bigquery/test_bq_warehouse.py",
    "tests/terraform/test_terraform_monitoring.py",
    "tests/bigquery/test_bq_concurrency.py",
)

#: The files run by one test process, sharing its Kafka + Connect stack (tests/kafka/conftest.py).
SHARED_STACK = (
    "tests/kafka/test_postgres_debezium_e2e.py",
    "tests/kafka/test_mariadb_debezium_e2e.py",
    "tests/kafka/test_generative_migrations.py",
)

_reported: list[int] = []
_scratch: list[str] = []


def pytest_configure(config):
    _scratch.append(tempfile.mkdtemp(prefix="uniview-tests-spark-"))
    os.environ.setdefault("SPARK_LOCAL_DIRS", _scratch[-1])
    java = f"{QUICK_JIT} {spark_archive_options()} -Djava.io.tmpdir={_scratch[-1]}"
    os.environ.setdefault("SPARK_SUBMIT_OPTS", " ".join(java.split()))
    os.environ.setdefault(THREADS_VARIABLE, "1")
    register_durations(config)


def pytest_unconfigure(config):
    for directory in _scratch:
        shutil.rmtree(directory, ignore_errors=True)


def pytest_collection_modifyitems(config, items):
    rank = {path: place for place, path in enumerate(SLOWEST_FIRST)}
    root = Path(str(config.rootpath))
    items.sort(key=lambda item: rank.get(Path(str(item.path)).relative_to(root).as_posix(), len(rank)))


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config, log):
    """`--dist loadfile`, with the SHARED_STACK files as one unit: one test process runs them all.  The files are
    handed out in collection order (SLOWEST_FIRST): pytest-xdist would otherwise reorder them by their number of
    tests, and the long files, which hold few tests, would start last."""
    if config.getvalue("dist") != "loadfile":
        return None
    config.option.loadscopereorder = False
    from xdist.scheduler import LoadFileScheduling

    class SharedStackScheduling(LoadFileScheduling):
        def _split_scope(self, nodeid: str) -> str:
            scope = super()._split_scope(nodeid)
            return SHARED_STACK[0] if scope in SHARED_STACK else scope

    return SharedStackScheduling(config, log)


@pytest.fixture(scope="session")
def spark():
    """The test process's local[2] session, with the settings `uniview sink` gives a session it starts itself,
    and the real spark-bigquery-connector when scripts/setup-bigquery-connector.sh has resolved it; stopped at
    the end of the run."""
    pyspark_sql = pytest.importorskip("pyspark.sql", reason="pyspark is not installed")
    from uniview.cli.sink import local_session_settings
    from uniview.local.bigquery_connector import find_connector
    from uniview.local.processes import use_this_python_for_spark_workers

    settings = {**local_session_settings("local[2]"), "spark.driver.memory": "1g"}
    connector = find_connector()
    for key, value in (connector.spark_settings() if connector else {}).items():
        settings[key] = f"{settings[key]} {value}" if key.endswith("extraJavaOptions") and key in settings else value
    builder = pyspark_sql.SparkSession.builder.master("local[2]").appName("uniview-tests")
    for key, value in settings.items():
        builder = builder.config(key, value)
    session = builder.getOrCreate()
    session.sparkContext.setLogLevel("ERROR")
    use_this_python_for_spark_workers(session.sparkContext)
    yield session
    session.stop()


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node, error):
    _reported.append(getattr(node, "workeroutput", {}).get(STATEMENTS_REPORTED, 0))


def pytest_terminal_summary(terminalreporter):
    if sum(_reported):
        terminalreporter.write_line(
            f"ZetaSQL analyzer: {sum(_reported)} statements analyzed (in {len(_reported)} test processes)"
        )
