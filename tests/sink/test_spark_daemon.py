"""The workers' daemon of a local session (uniview.local.spark_daemon): a zip archive on the path is read again by
`importlib.invalidate_caches()` only when it changed, so a module replaced in its archive is still imported anew."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import zipfile
from pathlib import Path

#: Run in a new interpreter with the archive first on its path: (version imported, archive reads) after each step.
SCRIPT = textwrap.dedent(
    """
    import importlib, json, os, sys, zipfile
    from uniview.local import spark_daemon
    reads = []
    original = spark_daemon._read_again
    spark_daemon._read_again = lambda importer: (reads.append(importer.archive), original(importer))
    spark_daemon.install()
    archive = sys.argv[1]
    import shipped
    seen = [[shipped.VERSION, len(reads)]]
    for _ in range(3):
        importlib.invalidate_caches()
        seen.append([importlib.reload(shipped).VERSION, len(reads)])
    with zipfile.ZipFile(archive, "w") as rewritten:
        rewritten.writestr("shipped.py", "VERSION = 'second, a longer one'\\n")
    importlib.invalidate_caches()
    sys.modules.pop("shipped")
    import shipped
    seen.append([shipped.VERSION, len(reads)])
    print(json.dumps(seen))
    """
)


def test_an_archive_is_read_again_only_when_it_changed(tmp_path: Path):
    archive = tmp_path / "shipped.zip"
    with zipfile.ZipFile(archive, "w") as written:
        written.writestr("shipped.py", "VERSION = 'first'\n")
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT, str(archive)],
        env={**os.environ, "PYTHONPATH": os.pathsep.join([str(archive), *sys.path])},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    seen = json.loads(done.stdout.splitlines()[-1])
    assert seen[:4] == [["first", 0], ["first", 1], ["first", 1], ["first", 1]]  # read once, then kept
    assert seen[4] == ["second, a longer one", 2]  # the archive changed: read again, the new module imported
