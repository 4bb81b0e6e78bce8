"""Fixtures for the Terraform module tests (helpers in terraform_support.py)."""

from __future__ import annotations

import shutil
import subprocess

import pytest
from terraform_support import EXAMPLES_DIR, MODULE_DIR, Evaluator, Module, load_module, terraform_env


@pytest.fixture(scope="session")
def module() -> Module:
    return load_module(MODULE_DIR)


@pytest.fixture(scope="session")
def example() -> Module:
    return load_module(EXAMPLES_DIR)


@pytest.fixture(scope="session")
def terraform_bin() -> str:
    found = shutil.which("terraform")
    if not found:
        pytest.skip("the terraform CLI is not on PATH")
    return found


@pytest.fixture(scope="session")
def evaluator(terraform_bin: str, tmp_path_factory: pytest.TempPathFactory) -> Evaluator:
    directory = tmp_path_factory.mktemp("tf-locals")
    for name in ("variables.tf", "locals.tf"):
        shutil.copy(MODULE_DIR / name, directory / name)
    init = subprocess.run(
        [terraform_bin, "init", "-input=false", "-no-color"],
        cwd=directory,
        env=terraform_env(),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert init.returncode == 0, init.stderr
    return Evaluator(terraform_bin, directory)
