"""`uniview demo` end to end, as a user runs it: a subprocess, real Spark, emulator, function.

Every source runs in one folder, one after the other, twice each, as a user runs the demo again:
stream, stream, postgres, postgres, mysql, mysql.  Each run must work in the folder the one before
left behind (the folder keeps the warehouses and the previous run's Kafka data and logs).
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest

pytest.importorskip("pyspark", reason="the demo needs the spark extra (pyspark)")


def run_demo(workdir: Path, *options: str, timeout: float = 240) -> subprocess.CompletedProcess:
    """`uniview demo --workdir workdir [options]` with a bare environment; the jars' cache is the user's."""
    from uniview.local.java_stack import cache_root

    uniview = Path(sys.executable).with_name("uniview")
    return subprocess.run(
        [str(uniview), "demo", "--workdir", str(workdir), *options],
        capture_output=True,
        text=True,
        timeout=timeout,
        env={"COLUMNS": "160", "PATH": "/usr/bin:/bin", "HOME": str(workdir), "UNIVIEW_CACHE": str(cache_root())},
    )


@pytest.fixture(scope="module")
def demo_run(tmp_path_factory):
    workdir = tmp_path_factory.mktemp("demo")
    return workdir, run_demo(workdir)


def test_demo_succeeds_and_accounts_for_every_line(demo_run):
    _, completed = demo_run
    assert completed.returncode == 0, completed.stdout[-3000:] + completed.stderr[-3000:]
    match = re.search(r"uniview: read (\d+) = written (\d+) \+ quarantined (\d+)", completed.stdout)
    assert match and int(match[1]) == int(match[2]) + int(match[3]) and int(match[3]) == 4
    debezium = re.search(r"debezium: read (\d+) = written (\d+) \+ quarantined (\d+)", completed.stdout)
    assert debezium and debezium.groups() == ("10", "10", "0")
    assert "shop_unified.accounts_current (latest row per database and key)" in completed.stdout
    for heading in (
        "Version tables per family",
        "resolved columns",
        "rows per version",
        "Quarantine",
        "Time per stage",
    ):
        assert heading in completed.stdout
    assert "Query it with:" in completed.stdout


def test_demo_leaves_queryable_unified_views(demo_run):
    workdir, completed = demo_run
    assert completed.returncode == 0
    with duckdb.connect(str(workdir / "uniview-demo.duckdb"), read_only=True) as connection:
        views = {
            r[0]
            for r in connection.execute(
                "SELECT view_name FROM duckdb_views() WHERE schema_name = 'shop_unified'"
            ).fetchall()
        }
        assert views == {
            "customer_unified",
            "orders_unified",
            "products_unified",
            "shipments_unified",
            "accounts_unified",
            "accounts_current",
        }
        current = connection.execute(
            "SELECT _cdc_database, id, email, CAST(balance AS VARCHAR), plan FROM shop_unified.accounts_current "
            "ORDER BY 1, 2"
        ).fetchall()
        assert current == [
            ("tenant1", 1, "ann@example.com", "20.75", None),
            ("tenant1", 2, "bob@example.com", "1.00", "free"),
            ("tenant1", 3, "cy@example.com", "12.00", "pro"),
            ("tenant2", 1, "eve@example.org", "1000.00", "pro"),
        ]
        types = dict(
            connection.execute(
                "SELECT column_name, data_type FROM information_schema.columns "
                "WHERE table_schema = 'shop_unified' AND table_name = 'orders_unified'"
            ).fetchall()
        )
        assert types["created_at"] == "TIMESTAMP WITH TIME ZONE" and types["amount"] == "BIGINT"
        customer = connection.execute(
            "SELECT count(*), count(full_name), count(email), count(DISTINCT _uniview_source) "
            "FROM shop_unified.customer_unified"
        ).fetchone()
        assert customer == (80, 40, 40, 2)
        countries = connection.execute("SELECT count(address.country) FROM shop_unified.shipments_unified").fetchone()
        assert countries == (30,)


def stream_summary(stdout: str) -> tuple[str, ...]:
    """The sink's counts of both inputs, as the stream demo prints them."""
    return tuple(re.findall(r"(?:uniview|debezium): read \d+ = written \d+ \+ quarantined \d+", stdout))


@pytest.fixture(scope="module")
def stream_again(demo_run):
    workdir, first = demo_run
    assert first.returncode == 0, "the first run failed; see test_demo_succeeds_and_accounts_for_every_line"
    return workdir, run_demo(workdir)


def test_the_stream_demo_runs_again_in_the_folder_it_left(stream_again, demo_run):
    """The second run starts from nothing: the same counts, the same rows, not twice the rows."""
    workdir, completed = stream_again
    assert completed.returncode == 0, completed.stdout[-3000:] + completed.stderr[-3000:]
    assert stream_summary(completed.stdout) == stream_summary(demo_run[1].stdout) != ()
    with duckdb.connect(str(workdir / "uniview-demo.duckdb"), read_only=True) as connection:
        assert connection.execute("SELECT count(*) FROM shop_unified.customer_unified").fetchone() == (80,)


def database_demo_skip(source: str) -> str | None:
    """Why `uniview demo --source <source>` cannot run here (a server binary or Maven is missing), or None."""
    import shutil

    from uniview.local.mariadb import find_server
    from uniview.local.postgres import find_bin_dir

    if not (shutil.which("java") and shutil.which("mvn")):
        return "java and mvn resolve the Kafka stack's jars: apt-get install openjdk-17-jre-headless maven"
    if source == "postgres" and find_bin_dir() is None:
        return "PostgreSQL's server is not installed (apt-get install postgresql)"
    if source == "mysql" and find_server() is None:
        return "MariaDB's server is not installed (scripts/setup-mariadb.sh)"
    return None


def run_database_demo(workdir: Path, source: str) -> subprocess.CompletedProcess:
    if reason := database_demo_skip(source):
        pytest.skip(reason)
    return run_demo(workdir, "--source", source, timeout=600)


@pytest.fixture(scope="module")
def postgres_runs(stream_again):
    workdir, _ = stream_again
    first = run_database_demo(workdir, "postgres")
    return first, run_database_demo(workdir, "postgres")


@pytest.fixture(scope="module")
def mysql_runs(postgres_runs, stream_again):
    workdir, _ = stream_again
    first = run_database_demo(workdir, "mysql")
    return first, run_database_demo(workdir, "mysql")


def assert_views_equal_the_source(completed: subprocess.CompletedProcess, steps: int) -> None:
    """After each step the demo compares both source tables (once shop2 has rows) with `customer_current`."""
    assert completed.returncode == 0, completed.stdout[-3000:] + completed.stderr[-3000:]
    assert "Traceback" not in completed.stderr
    agreed = completed.stdout.count("customer_current equals the source table")
    assert agreed == 2 * steps - 1 and "differs" not in completed.stdout, completed.stdout[-3000:]


@pytest.mark.timeout(1500)
def test_the_postgres_demo_runs_after_the_stream_demo_and_again(postgres_runs, stream_again):
    """Twice in the folder the stream demo used: the second run finds the first one's Kafka data, offsets
    and checkpoint (another Kafka cluster, another database server) and must not reuse them."""
    workdir, _ = stream_again
    for completed in postgres_runs:
        assert_views_equal_the_source(completed, steps=4)
    assert (workdir / "uniview-demo.duckdb").is_file(), "the stream demo's warehouse is left as it was"


@pytest.mark.timeout(1500)
def test_the_mysql_demo_runs_after_the_postgres_demo_and_again(mysql_runs, stream_again):
    workdir, _ = stream_again
    for completed in mysql_runs:
        assert_views_equal_the_source(completed, steps=4)
    with duckdb.connect(str(workdir / "uniview-mysql-demo.duckdb"), read_only=True) as connection:
        rows = connection.execute("SELECT id, name FROM shop1_unified.customer_current ORDER BY id").fetchall()
    assert rows == [(1, "Ann"), (2, "Bobby"), (4, "Dee")], "the second run's rows only, each once"


def test_the_setup_script_and_the_package_resolve_the_same_jars():
    """One owner of the Kafka stack's versions: scripts/setup-kafka-stack.sh runs uniview.local.java_stack."""
    import shutil

    from uniview.local.java_stack import DEBEZIUM_VERSION, stack_folder

    cached = all((stack_folder() / name / ".complete").is_file() for name in ("broker", "spark"))
    if not cached and not (shutil.which("java") and shutil.which("mvn")):
        pytest.skip("java and mvn resolve the Kafka stack's jars: apt-get install openjdk-17-jre-headless maven")
    script = Path(__file__).resolve().parents[1] / "scripts" / "setup-kafka-stack.sh"
    done = subprocess.run(["bash", str(script)], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    folder = Path(done.stdout.splitlines()[-1])
    assert folder == stack_folder() and sorted(p.name for p in folder.iterdir()) == ["broker", "spark"]
    assert (folder / "broker" / f"debezium-connector-mysql-{DEBEZIUM_VERSION}.jar").is_file()
