"""checkov over the module and its example: no failed check, and every skip explains itself.

checkov is looked up in $UNIVIEW_CHECKOV, then <repo>/.venv-checkov/bin/checkov (its own venv,
see docs/deployment.md), then PATH.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from terraform_support import MODULE_DIR, REPO_ROOT

_SKIP_COMMENT = re.compile(r"#\s*checkov:skip=([A-Z0-9_]+)(?::(.*))?")
_MIN_REASON_CHARS = 30


def _checkov() -> str:
    candidates = [
        os.environ.get("UNIVIEW_CHECKOV"),
        str(REPO_ROOT / ".venv-checkov" / "bin" / "checkov"),
        shutil.which("checkov"),
    ]
    for candidate in candidates:
        if candidate and Path(candidate).is_file() and os.access(candidate, os.X_OK):
            return candidate
    pytest.skip(
        "checkov not found ($UNIVIEW_CHECKOV, .venv-checkov/bin/checkov or PATH); "
        "install it with: bash scripts/setup-checkov.sh"
    )


@pytest.fixture(scope="module")
def report() -> dict:
    result = subprocess.run(
        [
            _checkov(),
            "-d",
            str(MODULE_DIR),
            "--framework",
            "terraform",
            "--compact",
            "--skip-download",
            "--skip-path",
            r"\.terraform",
            "-o",
            "json",
        ],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=REPO_ROOT,
    )
    assert result.returncode in (0, 1), result.stderr
    parsed = json.loads(result.stdout)
    return parsed[0] if isinstance(parsed, list) else parsed


def test_checkov_read_the_whole_module(report: dict) -> None:
    summary = report["summary"]
    assert summary["parsing_errors"] == 0
    assert summary["resource_count"] >= 30, summary
    assert summary["passed"] > 0


def test_no_failed_checks(report: dict) -> None:
    failed = [
        f"{check['check_id']} {check['resource']} ({check['file_path']})"
        for check in report["results"]["failed_checks"]
    ]
    assert failed == []


def test_every_skipped_check_carries_its_reason(report: dict) -> None:
    for check in report["results"]["skipped_checks"]:
        reason = (check["check_result"].get("suppress_comment") or "").strip()
        assert len(reason) >= _MIN_REASON_CHARS, f"{check['check_id']} on {check['resource']}: reason {reason!r}"


def test_skip_comments_name_a_check_and_a_reason() -> None:
    comments = [
        (path.name, match)
        for path in MODULE_DIR.rglob("*.tf")
        if ".terraform" not in path.parts
        for match in _SKIP_COMMENT.finditer(path.read_text())
    ]
    assert comments, "expected the documented checkov skips"
    for name, match in comments:
        assert match.group(1).startswith(("CKV_GCP_", "CKV2_GCP_")), f"{name}: {match.group(0)}"
        assert len((match.group(2) or "").strip()) >= _MIN_REASON_CHARS, f"{name}: {match.group(0)}"
