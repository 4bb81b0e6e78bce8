"""Helpers for the Terraform module tests: the parsed module, and an offline evaluator.

Besides `terraform validate` and `plan` against the stand-in providers (terraform_plan.py):
- `terraform fmt`;
- python-hcl2 parsing of every .tf file (structure, wiring, IAM scope);
- `terraform console` / `plan` over variables.tf + locals.tf alone (both are provider-free by
  design), which evaluates the real expressions and the real variable validations.
"""

from __future__ import annotations

import json
import os
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

import hcl2
from hcl2 import SerializationOptions

REPO_ROOT = Path(__file__).resolve().parents[2]
MODULE_DIR = REPO_ROOT / "terraform"
EXAMPLES_DIR = MODULE_DIR / "examples"
PROJECT = "uniview-test-123"
_HCL_OPTIONS = SerializationOptions(strip_string_quotes=True, explicit_blocks=False)


#: Go's garbage collector runs when the heap has grown by GOGC percent since the last collection (100 by default).
#: A plan of the variable sets allocates some 10 GB over its run (GOGC=off: 9.8 GB resident), so collections were a
#: large share of Terraform's own CPU.  At 400: its `show -json` 4.7 and 4.9 -> 3.6 and 3.4 CPU seconds (410 MB
#: resident), test_terraform_plan.py 83.5 and 86.5 -> 65.0 and 69.2 CPU seconds (up to 980 MB resident, not 260).
TERRAFORM_GOGC = "400"


def terraform_env() -> dict[str, str]:
    """Environment for terraform subprocesses: no update check, no (missing) CLI config file, fewer collections."""
    env = {key: value for key, value in os.environ.items() if key != "TF_CLI_CONFIG_FILE"}
    env.update(CHECKPOINT_DISABLE="1", TF_IN_AUTOMATION="1", GOGC=TERRAFORM_GOGC)
    return env


def load_tf(path: Path) -> dict:
    with path.open() as handle:
        return hcl2.load(handle, serialization_options=_HCL_OPTIONS)


@dataclass
class Module:
    """Every block of a directory's .tf files, indexed by kind and name."""

    resources: dict[str, dict[str, dict]] = field(default_factory=dict)
    data: dict[str, dict[str, dict]] = field(default_factory=dict)
    variables: dict[str, dict] = field(default_factory=dict)
    outputs: dict[str, dict] = field(default_factory=dict)
    locals: dict[str, object] = field(default_factory=dict)
    modules: dict[str, dict] = field(default_factory=dict)

    def resource(self, kind: str, name: str) -> dict:
        assert name in self.resources.get(kind, {}), f"missing resource {kind}.{name}"
        return self.resources[kind][name]

    def of_kind(self, kind: str) -> dict[str, dict]:
        return self.resources.get(kind, {})


def _index_blocks(module: Module, parsed: dict) -> None:
    for kind, target in (("resource", module.resources), ("data", module.data)):
        for block in parsed.get(kind, []):
            for type_name, by_name in block.items():
                target.setdefault(type_name, {}).update(by_name)
    for kind, target in (("variable", module.variables), ("output", module.outputs), ("module", module.modules)):
        for block in parsed.get(kind, []):
            target.update(block)
    for block in parsed.get("locals", []):
        module.locals.update({key: value for key, value in block.items() if key != "__comments__"})


def load_module(directory: Path) -> Module:
    module = Module()
    for path in sorted(directory.glob("*.tf")):
        _index_blocks(module, load_tf(path))
    return module


class Evaluator:
    """variables.tf + locals.tf of the module in a scratch root module, evaluated offline."""

    def __init__(self, terraform: str, directory: Path) -> None:
        self.terraform = terraform
        self.directory = directory

    def _run(self, args: list[str], stdin: str | None = None) -> subprocess.CompletedProcess:
        return subprocess.run(
            [self.terraform, *args],
            cwd=self.directory,
            env=terraform_env(),
            input=stdin,
            capture_output=True,
            text=True,
            timeout=120,
        )

    @staticmethod
    def _var_args(variables: dict[str, object]) -> list[str]:
        args: list[str] = []
        for name, value in {"project_id": PROJECT, **variables}.items():
            rendered = value if isinstance(value, str) else json.dumps(value)
            args += ["-var", f"{name}={rendered}"]
        return args

    def value(self, expression: str, **variables: object) -> object:
        """The JSON value of `expression` with the given variables (project_id defaults to PROJECT)."""
        result = self._run(["console", "-no-color", *self._var_args(variables)], stdin=f"jsonencode({expression})\n")
        assert result.returncode == 0, result.stderr
        return json.loads(json.loads(result.stdout))

    def plan(self, **variables: object) -> subprocess.CompletedProcess:
        """`terraform plan` of the scratch module: fails exactly when a variable validation fails."""
        return self._run(["plan", "-input=false", "-no-color", "-lock=false", *self._var_args(variables)])
