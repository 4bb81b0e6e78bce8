"""Open a page in headless Chromium and read, from the real rendering, where its texts are drawn: the page
is copied with layout_probe.js appended, and Chromium's --dump-dom gives back the probe's findings."""

from __future__ import annotations

import html
import json
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

PROBE = Path(__file__).with_name("layout_probe.js")
PROBE_OUTPUT = re.compile(r'<pre id="layout-probe">(.*?)</pre>', re.DOTALL)


def chromium() -> str:
    found = shutil.which("chromium")
    if found is None:
        pytest.skip("chromium is not installed: run scripts/setup-chromium.sh (Debian's chromium package)")
    return found


def chromium_args(width: int, height: int) -> list[str]:
    return [
        chromium(),
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--hide-scrollbars",
        "--force-device-scale-factor=1",
        f"--window-size={width},{height}",
        "--host-resolver-rules=MAP * ~NOTFOUND",  # the page must need no network
    ]


def screenshot(page: Path, png: Path, width: int = 1200, height: int = 700) -> None:
    subprocess.run(
        [*chromium_args(width, height), f"--screenshot={png}", page.as_uri()],
        check=True,
        capture_output=True,
        timeout=120,
    )


def measure_layout(page: str, folder: Path, width: int = 1200, height: int = 700) -> dict[str, Any]:
    """{"view_width", "texts": [{"text", "element", "content_width", "box_width"}], "problems": [{"why", "text",
    ...}], "boxes": {id: [left, top, right, bottom]}}, as Chromium lays `page` out in a window of that size."""
    probed = folder / "probed.html"
    probed.write_text(page.replace("</body>", f"<script>{PROBE.read_text()}</script></body>"))
    result = subprocess.run(
        [*chromium_args(width, height), "--dump-dom", probed.as_uri()],
        check=True,
        capture_output=True,
        text=True,
        timeout=120,
    )
    found = PROBE_OUTPUT.findall(result.stdout)
    assert found, f"the layout probe did not run: {result.stderr[-2000:]}"
    measured: dict[str, Any] = json.loads(html.unescape(found[-1]))
    return measured
