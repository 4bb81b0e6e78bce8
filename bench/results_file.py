"""Where benchmarks write their full results: bench/results/<name>.json (not committed)."""

from __future__ import annotations

import json
from pathlib import Path

RESULTS_DIR = Path(__file__).parent / "results"


def write_results(name: str, results: object) -> Path:
    """Write `results` as bench/results/<name>.json and return the path."""
    RESULTS_DIR.mkdir(exist_ok=True)
    path = RESULTS_DIR / f"{name}.json"
    path.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    return path
