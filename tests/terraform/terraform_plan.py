"""`terraform validate` and `plan` of the module, offline, through the stand-in providers that
scripts/setup-terraform-standin.sh installs (the real providers' schemas, served without their
binaries), and a reading of `terraform show -json` in terms of who is granted what, where."""

from __future__ import annotations

import json
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from terraform_support import REPO_ROOT, terraform_env

STANDIN_CONFIG = REPO_ROOT / ".venv-terraform" / "terraformrc"
#: What the module reads besides itself: the function's sources and the sink's entry script.
CHECKOUT_PARTS = ("terraform", "functions", "uniview", "sql_templates", "dataproc")


def standin_env() -> dict[str, str]:
    return {**terraform_env(), "TF_CLI_CONFIG_FILE": str(STANDIN_CONFIG)}


def copy_checkout(target: Path) -> Path:
    """The parts of the checkout the module needs, copied to `target` (plans write into .terraform/)."""
    ignore = shutil.ignore_patterns("__pycache__", ".terraform", ".terraform.lock.hcl", "*.tfstate*")
    for part in CHECKOUT_PARTS:
        shutil.copytree(REPO_ROOT / part, target / part, ignore=ignore)
    return target


def terraform(terraform_bin: str, directory: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess:
    done = subprocess.run(
        [terraform_bin, *args, "-no-color"],
        cwd=directory,
        env=standin_env(),
        capture_output=True,
        text=True,
        timeout=300,
    )
    if check:
        assert done.returncode == 0, f"terraform {args[0]}: {done.stderr[-4000:]}{done.stdout[-2000:]}"
    return done


def plans_json(terraform_bin: str, examples: Path, variable_sets: dict[str, dict]) -> dict:
    """One `terraform plan -refresh=false` of the example called once per variable set (name -> its
    variables), as `terraform show -json` gives it: a root module beside `examples` whose module `<name>`
    is the example with that set. One plan evaluates the configuration and starts the providers once for
    every set; `Plan(document, name)` reads one set's part."""
    root = examples.parent / "variable_sets"
    root.mkdir()
    calls = {name: {"source": f"../{examples.name}", **variables} for name, variables in variable_sets.items()}
    (root / "main.tf.json").write_text(json.dumps({"module": calls}, indent=2))
    terraform(terraform_bin, root, "init", "-backend=false", "-input=false")
    terraform(terraform_bin, root, "plan", "-refresh=false", "-lock=false", "-input=false", "-out=sets.plan")
    return json.loads(terraform(terraform_bin, root, "show", "-json", "sets.plan").stdout)


@dataclass(frozen=True)
class Grant:
    """One IAM grant or dataset access entry as the plan shows it."""

    address: str
    role: str
    member: str | None  # None: known only after apply
    member_refs: tuple[str, ...]
    scope_type: str  # the granting resource's type
    scope: str | None  # the dataset, topic, bucket, ... it is on; None for the project or unknown
    scope_refs: tuple[str, ...]
    condition: str | None


_SCOPE_ATTRIBUTE = {
    "google_bigquery_dataset_access": "dataset_id",
    "google_bigquery_dataset_iam_member": "dataset_id",
    "google_pubsub_topic_iam_member": "topic",
    "google_pubsub_subscription_iam_member": "subscription",
    "google_storage_bucket_iam_member": "bucket",
    "google_service_account_iam_member": "service_account_id",
    "google_cloud_run_v2_service_iam_member": "name",
    "google_project_iam_member": "project",
}
_MEMBER_ATTRIBUTES = ("member", "user_by_email", "group_by_email", "special_group", "iam_member")


class Plan:
    """The module's resources in one plan, with the configuration's references for what is unknown."""

    def __init__(self, document: dict, instance: str) -> None:
        """The part of `document` (plans_json's) that the example called as module `instance` plans."""
        self.document = document
        prefix = f"module.{instance}."
        (example,) = [
            m for m in document["planned_values"]["root_module"]["child_modules"] if m["address"] == prefix[:-1]
        ]
        (module,) = example["child_modules"]
        self.resources = [{**r, "address": r["address"].removeprefix(prefix)} for r in module["resources"]]
        self.resource_changes = [c for c in document["resource_changes"] if c["address"].startswith(prefix)]
        calls = document["configuration"]["root_module"]["module_calls"][instance]["module"]["module_calls"]
        self.configuration = {r["address"]: r["expressions"] for r in calls["uniview"]["module"]["resources"]}

    def of_type(self, type_name: str) -> list[dict]:
        return [resource for resource in self.resources if resource["type"] == type_name]

    def types(self) -> set[str]:
        return {resource["type"] for resource in self.resources}

    def references(self, resource: dict, attribute: str) -> tuple[str, ...]:
        """What the configuration's expression for `attribute` ("block.argument" inside a block) refers to."""
        expression: object = self.configuration.get(f"{resource['type']}.{resource['name']}", {})
        for step in attribute.split("."):
            expression = expression[0] if isinstance(expression, list) and expression else expression
            expression = expression.get(step, {}) if isinstance(expression, dict) else {}
        return tuple(expression.get("references", ())) if isinstance(expression, dict) else ()

    def grants(self) -> list[Grant]:
        found = []
        for resource in self.resources:
            if resource["type"] not in _SCOPE_ATTRIBUTE:
                continue
            values = resource["values"]
            if not values.get("role") and not self.references(resource, "role"):
                continue  # an authorized-dataset entry, not a grant to a principal
            member_attribute = next(
                (a for a in _MEMBER_ATTRIBUTES if a in values and (values[a] or self.references(resource, a))), "member"
            )
            scope_attribute = _SCOPE_ATTRIBUTE[resource["type"]]
            condition = (values.get("condition") or [{}])[0].get("expression")
            found.append(
                Grant(
                    resource["address"],
                    values.get("role") or self._role_from_refs(resource),
                    values.get(member_attribute),
                    self.references(resource, member_attribute),
                    resource["type"],
                    values.get(scope_attribute) if scope_attribute != "project" else None,
                    self.references(resource, scope_attribute),
                    condition,
                )
            )
        return found

    def _role_from_refs(self, resource: dict) -> str:
        """A role named by a custom role of the plan: projects/<project>/roles/<role_id>."""
        for reference in self.references(resource, "role"):
            kind, _, name = reference.partition(".")
            for custom in self.of_type(kind):
                if custom["name"] == name.split(".")[0]:
                    return f"projects/{custom['values']['project']}/roles/{custom['values']['role_id']}"
        raise AssertionError(f"{resource['address']}: role unknown and not a custom role of the plan")

    def custom_role_permissions(self, role: str) -> list[str] | None:
        for custom in self.of_type("google_project_iam_custom_role"):
            if role == f"projects/{custom['values']['project']}/roles/{custom['values']['role_id']}":
                return custom["values"]["permissions"]
        return None
