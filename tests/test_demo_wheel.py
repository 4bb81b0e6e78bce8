"""`uniview demo` from an installed wheel, as a user gets it: `python -m build`, `pip install
'dist/uniview-0.1.0-py3-none-any.whl[demo]'` into a new venv (pip's own cache makes it quick after the
first time), then `uniview demo` and `uniview demo --source postgres` in a folder outside the checkout.
The function's entry module comes from the installed package, and the Kafka stack's jars are resolved
from Maven Central by the installed package into a new cache folder (Maven's local repository spares
the downloads), not by the checkout's scripts.

Slow (minutes: the build, the install and two demos), hence the `slow` mark; one venv serves the module.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

pytest.importorskip("pyspark", reason="the demo needs the spark extra (pyspark)")

ROOT = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("dist")
    built = subprocess.run(
        [sys.executable, "-m", "build", "--outdir", str(out), str(ROOT)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    if built.returncode != 0 and "hatchling" in built.stderr and "Could not find a version" in built.stderr:
        pytest.skip("the build backend (hatchling) cannot be fetched: no package index reachable")
    assert built.returncode == 0, built.stdout[-2000:] + built.stderr[-2000:]
    (path,) = out.glob("uniview-*-py3-none-any.whl")
    return path


@pytest.fixture(scope="module")
def venv(wheel, tmp_path_factory) -> Path:
    """A new venv with the wheel and its demo extra installed by pip, as a user installs it."""
    folder = tmp_path_factory.mktemp("venv")
    subprocess.run([sys.executable, "-m", "venv", str(folder)], check=True, timeout=120)
    environment = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    installed = subprocess.run(
        # pip's cache spares the downloads; --no-compile spares compiling pyspark's thousands of modules
        [str(folder / "bin" / "python"), "-m", "pip", "install", "-q", "--no-compile", f"{wheel}[demo]"],
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


def in_venv(venv: Path, folder: Path, *command: str, timeout: float = 600, **env: str) -> subprocess.CompletedProcess:
    environment = {"PATH": f"{venv / 'bin'}:/usr/bin:/bin", "HOME": str(Path.home()), "COLUMNS": "160", **env}
    return subprocess.run(
        [str(venv / "bin" / command[0]), *command[1:]],
        cwd=folder,
        capture_output=True,
        text=True,
        timeout=timeout,
        env=environment,
    )


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


@pytest.mark.timeout(900)
def test_the_stream_demo_runs_from_the_wheel(venv, user_folder):
    done = in_venv(venv, user_folder, "uniview", "demo", timeout=600)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert "Traceback" not in done.stderr and "Query it with:" in done.stdout
    assert "debezium: read 10 = written 10 + quarantined 0" in done.stdout
    assert (user_folder / ".uniview-demo" / "uniview-demo.duckdb").is_file()


@pytest.mark.timeout(900)
def test_the_postgres_demo_runs_from_the_wheel_in_the_same_folder(venv, user_folder, tmp_path):
    from uniview.local.postgres import find_bin_dir

    if not (shutil.which("java") and shutil.which("mvn")):
        pytest.skip("java and mvn resolve the Kafka stack's jars: apt-get install openjdk-17-jre-headless maven")
    if find_bin_dir() is None:
        pytest.skip("PostgreSQL's server is not installed (apt-get install postgresql)")
    cache = tmp_path / "cache"
    done = in_venv(venv, user_folder, "uniview", "demo", "--source", "postgres", UNIVIEW_CACHE=str(cache))
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert "Traceback" not in done.stderr
    agreed = done.stdout.count("customer_current equals the source table")
    assert agreed == 7 and "differs" not in done.stdout, done.stdout[-3000:]
    assert sorted(p.name for p in (cache / "kafka-stack").glob("*/*")) == ["broker", "spark"]
