"""`uniview demo` end to end, as a user runs it: a subprocess, real Spark, emulator, function.

Every source runs in one folder outside the checkout, one after the other, twice each, as a user runs the
demo again: stream, stream, postgres, postgres, mysql, mysql.  Each run must work in the folder the one
before left behind (the folder keeps the warehouses and the previous run's Kafka data and logs).  Each
source runs once from the checkout (the README's editable install, `--workdir` given) and once from the
wheel, as a user gets it: `python -m build --wheel`, `pip install 'dist/uniview-0.1.0-py3-none-any.whl[demo]'` into
a new venv (the extra's packages linked from the test venv's, see `venv`), run in the folder with the demo's default
`--workdir`.  The wheel's first database demo resolves the Kafka stack's jars from Maven Central into a new
cache folder (Maven's local repository spares the downloads), with the installed package, not the checkout's
scripts.

Slow (minutes: the build, the install and six demos), hence the `slow` mark; one venv serves the module.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import zipfile
from importlib import metadata
from pathlib import Path

import duckdb
import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

pytest.importorskip("pyspark", reason="the demo needs the spark extra (pyspark)")

ROOT = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("dist")
    built = subprocess.run(
        # the wheel only: building the sdist first and the wheel from it built twice for one file (9.4 -> 3.8 s)
        [sys.executable, "-m", "build", "--wheel", "--outdir", str(out), str(ROOT)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    if built.returncode != 0 and "hatchling" in built.stderr and "Could not find a version" in built.stderr:
        pytest.skip("the build backend (hatchling) cannot be fetched: no package index reachable")
    assert built.returncode == 0, built.stdout[-2000:] + built.stderr[-2000:]
    (path,) = out.glob("uniview-*-py3-none-any.whl")
    return path


def demo_closure() -> set[metadata.Distribution]:
    """The installed distributions `uniview[demo]` requires, directly or not (uniview's own left out)."""
    found: dict[str, metadata.Distribution] = {}
    pending = [(requirement, extra) for requirement in metadata.requires("uniview") or () for extra in ("demo",)]
    while pending:
        requirement, extra = pending.pop()
        parsed = Requirement(requirement)
        if parsed.marker and not parsed.marker.evaluate({"extra": extra}):
            continue
        if canonicalize_name(parsed.name) == "uniview":  # the extra's own extras: spark, gcp, function
            pending += [(r, e) for r in metadata.requires("uniview") or () for e in parsed.extras]
            continue
        distribution = metadata.distribution(parsed.name)
        name = canonicalize_name(distribution.metadata["Name"])
        if name not in found:
            found[name] = distribution
            pending += [(r, e) for r in distribution.requires or () for e in ("", *parsed.extras)]
    return set(found.values())


def link_distributions(distributions: set[metadata.Distribution], site_packages: Path) -> None:
    """Each distribution's top-level files and folders (its modules, its .dist-info) linked into `site_packages`."""
    for distribution in distributions:
        base = Path(str(distribution.locate_file("")))
        tops = {f.parts[0] for f in distribution.files or () if f.parts and f.parts[0] != ".."}
        for top in tops - {"__pycache__"}:
            if not (site_packages / top).exists() and (base / top).exists():
                (site_packages / top).symlink_to(base / top)


@pytest.fixture(scope="module")
def venv(wheel, tmp_path_factory) -> Path:
    """A new venv with the wheel installed by pip with its demo extra, as a user installs it.

    The extra's packages, and only they, are linked from the test venv into the new one, so the test venv's pip
    finds every requirement of the extra installed (with no index) and installs the wheel alone; the venv needs no
    pip of its own (a venv with its own pip, the extra unpacked from pip's cache: 31 s -> about 2 s).
    """
    folder = tmp_path_factory.mktemp("venv")
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(folder)], check=True, timeout=120)
    environment = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    new_python = str(folder / "bin" / "python")
    paths = "import sysconfig; print(sysconfig.get_paths()['purelib'])"
    site_packages = subprocess.run([new_python, "-c", paths], capture_output=True, text=True, check=True)
    link_distributions(demo_closure(), Path(site_packages.stdout.strip()))
    pip = [sys.executable, "-m", "pip", "--python", new_python]
    installed = subprocess.run(
        # --no-index: every requirement of the extra must be met by what is linked; --no-compile: no .pyc
        [*pip, "install", "-q", "--no-index", "--no-compile", f"{wheel}[demo]"],
        capture_output=True,
        text=True,
        timeout=900,
        env=environment,
    )
    assert installed.returncode == 0, installed.stderr[-3000:]
    return folder


@pytest.fixture(scope="module")
def user_folder(tmp_path_factory) -> Path:
    """Where the user runs the demo: outside the checkout, the demo's default --workdir inside it."""
    folder = tmp_path_factory.mktemp("user")
    assert ROOT not in folder.parents
    return folder


def from_checkout(folder: Path, *options: str, timeout: float = 240) -> subprocess.CompletedProcess:
    """The checkout's `uniview demo --workdir <folder>/.uniview-demo [options]` (checkout_uniview)."""
    return checkout_uniview(folder, "demo", "--workdir", str(folder / ".uniview-demo"), *options, timeout=timeout)


def checkout_uniview(folder: Path, *arguments: str, timeout: float = 240) -> subprocess.CompletedProcess:
    """The checkout's `uniview <arguments>` with a bare environment (HOME is `folder`); the jars' cache is the
    user's."""
    from uniview.local.java_stack import cache_root

    uniview = Path(sys.executable).with_name("uniview")
    return subprocess.run(
        [str(uniview), *arguments],
        capture_output=True,
        text=True,
        timeout=timeout,
        env={"COLUMNS": "160", "PATH": "/usr/bin:/bin", "HOME": str(folder), "UNIVIEW_CACHE": str(cache_root())},
    )


def in_venv(venv: Path, folder: Path, *command: str, timeout: float = 600, **env: str) -> subprocess.CompletedProcess:
    """`command` from the wheel's venv, run in `folder` (the demo's default --workdir is under it)."""
    environment = {"PATH": f"{venv / 'bin'}:/usr/bin:/bin", "HOME": str(Path.home()), "COLUMNS": "160", **env}
    return subprocess.run(
        [str(venv / "bin" / command[0]), *command[1:]],
        cwd=folder,
        capture_output=True,
        text=True,
        timeout=timeout,
        env=environment,
    )


def succeeded(completed: subprocess.CompletedProcess) -> subprocess.CompletedProcess:
    assert completed.returncode == 0, completed.stdout[-3000:] + completed.stderr[-3000:]
    assert "Traceback" not in completed.stderr
    return completed


def test_the_wheel_carries_the_function_the_templates_and_the_logging_setup(wheel):
    names = set(zipfile.ZipFile(wheel).namelist())
    templates = {f"uniview/sql_templates/{p.name}" for p in (ROOT / "sql_templates").glob("*.j2")}
    assert templates and templates <= names
    assert {"uniview/cloudfn/entry.py", "uniview/demo/log4j2.properties", "uniview/local/java_stack.py"} <= names
    assert not any(name.startswith(("functions/", "scripts/", "tests/")) for name in names)


@pytest.mark.timeout(1200)
def test_the_installed_package_runs_from_the_venv_not_the_checkout(venv, user_folder):
    probe = in_venv(
        venv,
        user_folder,
        "python",
        "-c",
        "import uniview; from uniview.local.function_server import find_function_source as f; "
        "print(uniview.__file__); print(f())",
    )
    assert probe.returncode == 0, probe.stderr
    for path in probe.stdout.split():
        assert Path(path).is_relative_to(venv), path


@pytest.fixture(scope="module")
def demo_run(user_folder):
    return user_folder / ".uniview-demo", from_checkout(user_folder)


def test_demo_succeeds_and_accounts_for_every_line(demo_run):
    _, completed = demo_run
    succeeded(completed)
    match = re.search(r"uniview: read (\d+) = written (\d+) \+ quarantined (\d+)", completed.stdout)
    assert match and int(match[1]) == int(match[2]) + int(match[3]) and int(match[3]) == 4
    debezium = re.search(r"debezium: read (\d+) = written (\d+) \+ quarantined (\d+)", completed.stdout)
    assert debezium and debezium.groups() == ("10", "10", "0")
    assert "cdc_unified.accounts_current (latest row per database and key)" in completed.stdout
    for heading in (
        "Version tables per family",
        "resolved columns",
        "rows per version",
        "Quarantine",
        "Time per stage",
    ):
        assert heading in completed.stdout
    assert "Query it with:" in completed.stdout


def test_the_status_command_the_demo_prints_finds_its_views_current(demo_run):
    """The `uniview status` line the demo ends with, run as printed, plans with the options the demo refreshed
    with: every family's views are current (a status planned with other options calls them outdated)."""
    workdir, completed = demo_run
    printed = re.search(r"see each family's state with: uniview (status .*)", succeeded(completed).stdout)
    assert printed, completed.stdout[-2000:]
    status = succeeded(checkout_uniview(workdir.parent, *printed[1].split(), timeout=120))
    for family in ("customer", "orders", "products", "shipments", "accounts"):
        assert re.search(rf"^│ {family} +│", status.stdout, re.MULTILINE), status.stdout
    assert "view outdated" not in status.stdout and "pending" not in status.stdout, status.stdout


def test_demo_leaves_queryable_unified_views(demo_run):
    workdir, completed = demo_run
    assert completed.returncode == 0
    with duckdb.connect(str(workdir / "uniview-demo.duckdb"), read_only=True) as connection:
        views = {
            r[0]
            for r in connection.execute(
                "SELECT view_name FROM duckdb_views() WHERE schema_name = 'cdc_unified'"
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
            "SELECT _cdc_database, id, email, CAST(balance AS VARCHAR), plan FROM cdc_unified.accounts_current "
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
                "WHERE table_schema = 'cdc_unified' AND table_name = 'orders_unified'"
            ).fetchall()
        )
        assert types["created_at"] == "TIMESTAMP WITH TIME ZONE" and types["amount"] == "BIGINT"
        customer = connection.execute(
            "SELECT count(*), count(full_name), count(email), count(DISTINCT _uniview_source) "
            "FROM cdc_unified.customer_unified"
        ).fetchone()
        assert customer == (80, 40, 40, 2)
        countries = connection.execute("SELECT count(address.country) FROM cdc_unified.shipments_unified").fetchone()
        assert countries == (30,)


def stream_summary(stdout: str) -> tuple[str, ...]:
    """The sink's counts of both inputs, as the stream demo prints them."""
    return tuple(re.findall(r"(?:uniview|debezium): read \d+ = written \d+ \+ quarantined \d+", stdout))


@pytest.fixture(scope="module")
def stream_again(demo_run, venv, user_folder):
    """The wheel's `uniview demo`, with its default --workdir: the folder the checkout's run left."""
    workdir, first = demo_run
    assert first.returncode == 0, "the first run failed; see test_demo_succeeds_and_accounts_for_every_line"
    return workdir, in_venv(venv, user_folder, "uniview", "demo", timeout=600)


@pytest.mark.timeout(900)
def test_the_stream_demo_runs_again_from_the_wheel_in_the_folder_it_left(stream_again, demo_run):
    """The second run starts from nothing: the same counts, the same rows, not twice the rows."""
    workdir, completed = stream_again
    succeeded(completed)
    assert "Query it with:" in completed.stdout
    assert "debezium: read 10 = written 10 + quarantined 0" in completed.stdout
    assert stream_summary(completed.stdout) == stream_summary(demo_run[1].stdout) != ()
    with duckdb.connect(str(workdir / "uniview-demo.duckdb"), read_only=True) as connection:
        assert connection.execute("SELECT count(*) FROM cdc_unified.customer_unified").fetchone() == (80,)


def database_demo_skip(source: str) -> str | None:
    """Why `uniview demo --source <source>` cannot run here (a server binary or Maven is missing), or None."""
    from uniview.local.mariadb import find_server
    from uniview.local.postgres import find_bin_dir

    if not (shutil.which("java") and shutil.which("mvn")):
        return "java and mvn resolve the Kafka stack's jars: apt-get install openjdk-17-jre-headless maven"
    if source == "postgres" and find_bin_dir() is None:
        return "PostgreSQL's server is not installed (apt-get install postgresql)"
    if source == "mysql" and find_server() is None:
        return "MariaDB's server is not installed (scripts/setup-mariadb.sh)"
    return None


@pytest.fixture(scope="module")
def new_cache(tmp_path_factory) -> Path:
    """An empty cache folder for the wheel's first database demo, which must resolve the stack's jars into it."""
    return tmp_path_factory.mktemp("cache")


@pytest.fixture(scope="module")
def postgres_runs(stream_again, venv, user_folder, new_cache):
    """The wheel's first (into a new jars' cache), then the checkout's."""
    if reason := database_demo_skip("postgres"):
        pytest.skip(reason)
    first = in_venv(venv, user_folder, "uniview", "demo", "--source", "postgres", UNIVIEW_CACHE=str(new_cache))
    return first, from_checkout(user_folder, "--source", "postgres", timeout=600)


@pytest.fixture(scope="module")
def mysql_runs(postgres_runs, venv, user_folder):
    """The checkout's first, then the wheel's."""
    if reason := database_demo_skip("mysql"):
        pytest.skip(reason)
    first = from_checkout(user_folder, "--source", "mysql", timeout=600)
    return first, in_venv(venv, user_folder, "uniview", "demo", "--source", "mysql")


def assert_views_equal_the_source(completed: subprocess.CompletedProcess, steps: int) -> None:
    """After each step the demo compares both source tables (once shop2 has rows) with `customer_current`; its first
    step's statements ran once Debezium's initial snapshot had ended (made during it, they may be read twice)."""
    succeeded(completed)
    snapshot_ended = completed.stdout.find("Debezium's initial snapshot ended")
    assert 0 <= snapshot_ended < completed.stdout.find("sink: read"), completed.stdout[:3000]
    agreed = completed.stdout.count("customer_current equals the source table")
    assert agreed == 2 * steps - 1 and "differs" not in completed.stdout, completed.stdout[-3000:]


@pytest.mark.timeout(1500)
def test_the_postgres_demo_runs_after_the_stream_demo_and_again(postgres_runs, stream_again, new_cache):
    """Twice in the folder the stream demo used: the second run finds the first one's Kafka data, offsets
    and checkpoint (another Kafka cluster, another database server) and must not reuse them."""
    workdir, _ = stream_again
    for completed in postgres_runs:
        assert_views_equal_the_source(completed, steps=4)
    assert (workdir / "uniview-demo.duckdb").is_file(), "the stream demo's warehouse is left as it was"
    assert sorted(p.name for p in (new_cache / "kafka-stack").glob("*/*")) == ["broker", "spark"]


@pytest.mark.timeout(1500)
def test_the_mysql_demo_runs_after_the_postgres_demo_and_again(mysql_runs, stream_again):
    workdir, _ = stream_again
    for completed in mysql_runs:
        assert_views_equal_the_source(completed, steps=4)
    with duckdb.connect(str(workdir / "uniview-mysql-demo.duckdb"), read_only=True) as connection:
        rows = connection.execute(
            "SELECT id, name FROM cdc_unified.customer_current WHERE _cdc_database = 'shop1' ORDER BY id"
        ).fetchall()
    assert rows == [(1, "Ann"), (2, "Bobby"), (4, "Dee")], "the second run's rows only, each once"


def test_the_setup_script_and_the_package_resolve_the_same_jars():
    """One owner of the Kafka stack's versions: scripts/setup-kafka-stack.sh runs uniview.local.java_stack."""
    from uniview.local.java_stack import DEBEZIUM_VERSION, stack_folder

    cached = all((stack_folder() / name / ".complete").is_file() for name in ("broker", "spark"))
    if not cached and not (shutil.which("java") and shutil.which("mvn")):
        pytest.skip("java and mvn resolve the Kafka stack's jars: apt-get install openjdk-17-jre-headless maven")
    script = ROOT / "scripts" / "setup-kafka-stack.sh"
    done = subprocess.run(["bash", str(script)], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    folder = Path(done.stdout.splitlines()[-1])
    assert folder == stack_folder() and sorted(p.name for p in folder.iterdir()) == ["broker", "spark"]
    assert (folder / "broker" / f"debezium-connector-mysql-{DEBEZIUM_VERSION}.jar").is_file()
