"""The consolidation tests share tests/families.py with the planning tests, and the sink tests' records."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parents[1]))
sys.path.insert(0, str(Path(__file__).parents[1] / "sink"))
