"""`terraform fmt` agrees with every .tf file of the module and its example."""

from __future__ import annotations

import subprocess

from terraform_support import MODULE_DIR, terraform_env


def test_module_and_example_are_formatted(terraform_bin: str) -> None:
    result = subprocess.run(
        [terraform_bin, "fmt", "-check", "-recursive", "-diff", "-no-color", str(MODULE_DIR)],
        env=terraform_env(),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, f"terraform fmt would change:\n{result.stdout}{result.stderr}"
