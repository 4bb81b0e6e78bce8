"""Facts Terraform repeats from the package must match their owner in the package."""

from __future__ import annotations

import json
import re
from pathlib import Path

from uniview.core.resolve import POLICIES
from uniview.planning.plan import DEFAULT_MAX_VIEW_CHARS, DEFAULT_POLICY

VARIABLES = Path(__file__).resolve().parents[2] / "terraform" / "variables.tf"


def variable_block(name: str) -> str:
    text = VARIABLES.read_text()
    start = text.index(f'variable "{name}"')
    return text[start : text.index("\nvariable ", start + 1) if "\nvariable " in text[start + 1 :] else len(text)]


def test_policy_choices_are_the_packages_policies():
    block = variable_block("policy")
    allowed = json.loads(re.search(r"contains\((\[[^\]]*\]), var\.policy\)", block).group(1))
    assert allowed == list(POLICIES)
    assert re.search(r'default\s*=\s*"([^"]+)"', block).group(1) == DEFAULT_POLICY


def test_view_budget_default_is_the_packages():
    block = variable_block("max_view_chars")
    assert int(re.search(r"default\s*=\s*(\d+)", block).group(1)) == DEFAULT_MAX_VIEW_CHARS
