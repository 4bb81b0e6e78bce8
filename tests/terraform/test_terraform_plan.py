"""`terraform validate` and `terraform plan` of the module and the example, offline, against the real
providers' schemas (google 6.50.0 and the floor 5.38.0, google-beta 6.50.0 and 5.43.1, time 0.13.1,
archive 2.7.1; see scripts/terraform_standin), and least privilege read from each plan's JSON."""

from __future__ import annotations

import re
import shutil

import pytest
from terraform_plan import STANDIN_CONFIG, Plan, copy_checkout, plans_json, terraform
from terraform_support import REPO_ROOT

PROJECT = "acme-cdc-prod"
PREFIX = "uniview"

#: Example variable sets: name -> variables. Every plan-JSON test runs on each.
VARIABLE_SETS = {
    "minimal": {"project_id": PROJECT},
    "sink_bucket": {
        "project_id": PROJECT,
        "sink_input_buckets": ["acme-cdc-landing", "acme-cdc-archive"],
        "sink_code_files": {"uniview_sink.py": "../../dataproc/uniview_sink.py"},
    },
    "dataproc_cluster": {"project_id": PROJECT, "dataproc_mode": "cluster"},
    "several_datasets": {
        "project_id": PROJECT,
        "source_datasets": ["cdc", "shop_eu", "shop_us"],
        "view_readers": ["group:analysts@example.com", "user:ana@example.com"],
        "current_views": "table",
    },
    "scheduler_off": {
        "project_id": PROJECT,
        "self_healing_enabled": False,
        "dataproc_mode": "none",
        "create_sink_bucket": False,
    },
    "consolidation": {"project_id": PROJECT, "source_datasets": ["cdc", "shop_eu"], "consolidate_idle_for": "30d"},
}

#: Predefined roles the module may grant project-wide, none of which carries storage.objects.create,
#: .delete or .update (https://cloud.google.com/iam/docs/understanding-roles). A role missing here
#: fails the test until its permissions are checked and it is added.
PROJECT_ROLES_WITHOUT_OBJECT_WRITES = {
    "roles/bigquery.jobUser",
    "roles/logging.logWriter",
    "roles/artifactregistry.writer",
    "roles/storage.objectViewer",
}
PRIMITIVE_ROLES = {"roles/owner", "roles/editor", "roles/viewer"}


def account(name: str) -> str:
    return f"serviceAccount:{PREFIX}-{name}@{PROJECT}.iam.gserviceaccount.com"


#: Provider versions every test runs with: the newest the stand-in serves, and the module's floor.
PROVIDER_PINS = {"google-6.50.0": {}, "google-5.38.0": {"google": "5.38.0", "google-beta": "5.43.1"}}


def pin_providers(examples, pins: dict[str, str]) -> None:
    """An override file in the example that pins the providers to `pins` (name -> version)."""
    entries = "".join(
        f'    {name} = {{ source = "hashicorp/{name}", version = "{version}" }}\n' for name, version in pins.items()
    )
    (examples / "pinned_override.tf").write_text(f"terraform {{\n  required_providers {{\n{entries}  }}\n}}\n")


@pytest.fixture(scope="session", params=sorted(PROVIDER_PINS))
def workspace(request, terraform_bin, tmp_path_factory):
    """A copy of the checkout with the example initialized against the stand-in providers."""
    if not STANDIN_CONFIG.is_file():
        pytest.skip("the stand-in providers are not installed: run scripts/setup-terraform-standin.sh")
    root = copy_checkout(tmp_path_factory.mktemp("tf-plan"))
    if PROVIDER_PINS[request.param]:
        pin_providers(root / "terraform" / "examples", PROVIDER_PINS[request.param])
    (root / "google-version").write_text(request.param.removeprefix("google-"))
    for directory in (root / "terraform", root / "terraform" / "examples"):
        terraform(terraform_bin, directory, "init", "-backend=false", "-input=false")
    return root


@pytest.fixture(scope="session")
def plans(terraform_bin, workspace) -> dict[str, Plan]:
    document = plans_json(terraform_bin, workspace / "terraform" / "examples", VARIABLE_SETS)
    planned = {name: Plan(document, name) for name in VARIABLE_SETS}
    lock = (workspace / "terraform" / "variable_sets" / ".terraform.lock.hcl").read_text()
    google = re.search(r'provider "registry.terraform.io/hashicorp/google" \{\n  version\s+= "([\d.]+)"', lock)
    assert google and google.group(1) == (workspace / "google-version").read_text(), lock
    return planned


@pytest.fixture(params=sorted(VARIABLE_SETS))
def each_plan(request, plans) -> Plan:
    return plans[request.param]


@pytest.mark.parametrize("directory", ["terraform", "terraform/examples"])
def test_module_and_example_validate(terraform_bin, workspace, directory):
    done = terraform(terraform_bin, workspace / directory, "validate")
    assert "The configuration is valid" in done.stdout


def validate_with(terraform_bin, workspace, directory, edit) -> str:
    """`terraform validate` of a copy of the module whose pubsub.tf went through `edit`: its errors."""
    module = directory / "module"
    shutil.copytree(workspace / "terraform", module, ignore=shutil.ignore_patterns("examples"))
    (module / "pubsub.tf").write_text(edit((module / "pubsub.tf").read_text()))
    done = terraform(terraform_bin, module, "validate", check=False)
    assert done.returncode != 0
    return done.stderr


def test_validate_rejects_what_the_provider_schema_rejects(terraform_bin, workspace, tmp_path):
    """The stand-in is not lenient: an unknown argument and a missing required one (checked by
    Terraform against the served schema), and a second max-one block (checked by the provider)."""
    errors = validate_with(
        terraform_bin,
        workspace,
        tmp_path / "arguments",
        lambda text: text.replace(
            'resource "google_pubsub_topic" "table_created" {',
            'resource "google_pubsub_topic" "table_created" {\n  no_such_argument = 1',
            1,
        ).replace("  topic   = google_pubsub_topic.dead_letter.id\n", "", 1),
    )
    assert 'An argument named "no_such_argument" is not expected here' in errors
    assert 'The argument "topic" is required' in errors
    errors = validate_with(
        terraform_bin,
        workspace,
        tmp_path / "blocks",
        lambda text: re.sub(r"(\n  dead_letter_policy \{.*?\n  \})", r"\1\1", text, count=1, flags=re.S),
    )
    assert 'No more than 1 "dead_letter_policy" blocks are allowed' in errors


def test_each_variable_set_plans_its_resources(plans):
    counts = {name: {t: len(plan.of_type(t)) for t in plan.types()} for name, plan in plans.items()}
    assert counts["dataproc_cluster"].get("google_dataproc_cluster") == 1
    assert all("google_dataproc_cluster" not in counts[n] for n in VARIABLE_SETS if n != "dataproc_cluster")
    assert "google_cloud_scheduler_job" not in counts["scheduler_off"]
    assert counts["minimal"]["google_cloud_scheduler_job"] == 1
    assert counts["several_datasets"]["google_cloud_scheduler_job"] == 3
    assert counts["several_datasets"]["google_bigquery_dataset"] == 6  # three sources, three targets
    assert counts["sink_bucket"]["google_storage_bucket_object"] == 2  # the function source, the sink script
    assert "google_storage_bucket" not in {t for t in counts["scheduler_off"] if counts["scheduler_off"][t] > 1}
    assert "google_project_iam_custom_role" in counts["minimal"]
    for plan in plans.values():
        assert plan.resource_changes
        assert all(change["change"]["actions"] == ["create"] for change in plan.resource_changes)


def test_no_primitive_roles_and_no_authoritative_iam(each_plan):
    assert not {grant.role for grant in each_plan.grants()} & PRIMITIVE_ROLES
    authoritative = {t for t in each_plan.types() if t.endswith(("_iam_binding", "_iam_policy"))}
    assert not authoritative


def test_no_project_wide_role_writes_objects(each_plan):
    """storage.objects.* reaches the sink only through its bucket grants: no identity holds a
    project-wide role that can create, delete or overwrite objects (the function's source included)."""
    for grant in each_plan.grants():
        if grant.scope_type != "google_project_iam_member":
            continue
        permissions = each_plan.custom_role_permissions(grant.role)
        if permissions is None:
            assert grant.role in PROJECT_ROLES_WITHOUT_OBJECT_WRITES, (
                f"{grant.address}: project-wide {grant.role} may carry storage.objects.create"
            )
        else:
            assert not [p for p in permissions if p.startswith("storage.")], grant.address


def test_the_build_account_reaches_only_the_function_source_and_its_repository(each_plan):
    build = [grant for grant in each_plan.grants() if grant.member == account("build")]
    by_role = {(grant.scope_type, grant.role): grant for grant in build}
    assert set(by_role) == {
        ("google_project_iam_member", "roles/logging.logWriter"),
        ("google_project_iam_member", "roles/artifactregistry.writer"),
        ("google_project_iam_member", "roles/storage.objectViewer"),
        ("google_storage_bucket_iam_member", "roles/storage.objectViewer"),
    }
    assert by_role[("google_project_iam_member", "roles/artifactregistry.writer")].condition == (
        f'resource.name.startsWith("projects/{PROJECT}/locations/us-central1/repositories/gcf-artifacts")'
    )
    assert by_role[("google_project_iam_member", "roles/storage.objectViewer")].condition == (
        'resource.name.startsWith("projects/_/buckets/gcf-v2-sources-")'
    )
    assert by_role[("google_storage_bucket_iam_member", "roles/storage.objectViewer")].scope == (
        f"{PROJECT}-{PREFIX}-fn-src"
    )


def test_storage_grants_are_on_the_buckets_each_identity_needs(plans):
    for name, plan in plans.items():
        buckets = {
            (grant.member, grant.role, grant.scope)
            for grant in plan.grants()
            if grant.scope_type == "google_storage_bucket_iam_member"
        }
        expected = {(account("build"), "roles/storage.objectViewer", f"{PROJECT}-{PREFIX}-fn-src")}
        if VARIABLE_SETS[name].get("create_sink_bucket", True):
            expected.add((account("sink"), "roles/storage.objectAdmin", f"{PROJECT}-{PREFIX}-sink"))
        expected |= {
            (account("sink"), "roles/storage.objectViewer", bucket)
            for bucket in VARIABLE_SETS[name].get("sink_input_buckets", [])
        }
        assert buckets == expected, name


def test_dataset_access_entries(plans):
    plan = plans["several_datasets"]
    entries = {
        (
            r["values"]["dataset_id"],
            r["values"].get("role"),
            r["values"].get("user_by_email"),
            tuple(d["dataset"][0]["dataset_id"] for d in r["values"]["dataset"]),
        )
        for r in plan.of_type("google_bigquery_dataset_access")
    }
    function, sink = (account(n).removeprefix("serviceAccount:") for n in ("fn", "sink"))
    custom = {
        grant.role
        for grant in plan.grants()
        if grant.address.startswith("module.uniview.google_bigquery_dataset_access.function_source_authorizer")
    }
    assert custom == {f"projects/{PROJECT}/roles/{PREFIX}_authorized_view_writer"}
    expected = set()
    for dataset in ("cdc", "shop_eu", "shop_us"):
        expected |= {
            (dataset, None, None, (f"{dataset}_unified",)),
            (dataset, "READER", function, ()),
            (dataset, None, function, ()),
            (dataset, "WRITER", sink, ()),
        }
    assert entries == expected  # the custom role's name is known only after apply
    readers = {(g.scope, g.member) for g in plan.grants() if g.role == "roles/bigquery.dataViewer"}
    assert readers == {
        (f"{d}_unified", m)
        for d in ("cdc", "shop_eu", "shop_us")
        for m in ("group:analysts@example.com", "user:ana@example.com")
    }


def test_scheduled_consolidation_is_granted_on_the_source_datasets_only_when_asked(plans):
    role = f"projects/{PROJECT}/roles/{PREFIX}_consolidator"
    grants = [g for g in plans["consolidation"].grants() if g.role == role]
    assert sorted(g.scope for g in grants) == ["cdc", "shop_eu"]
    assert {g.member for g in grants} == {account("fn").removeprefix("serviceAccount:")}
    assert sorted(plans["consolidation"].custom_role_permissions(role)) == [
        "bigquery.tables.create",
        "bigquery.tables.get",
        "bigquery.tables.getData",
        "bigquery.tables.update",
        "bigquery.tables.updateData",
    ]  # no tables.delete: dropping folded tables stays a manual opt-in
    (function,) = plans["consolidation"].of_type("google_cloudfunctions2_function")
    environment = function["values"]["service_config"][0]["environment_variables"]
    assert (environment["UNIVIEW_CONSOLIDATE_IDLE_FOR"], environment["UNIVIEW_CONSOLIDATE_SETTLE"]) == ("30d", "1h")
    for name in set(VARIABLE_SETS) - {"consolidation"}:
        assert not [g for g in plans[name].grants() if g.role == role]
        (function,) = plans[name].of_type("google_cloudfunctions2_function")
        assert "UNIVIEW_CONSOLIDATE_IDLE_FOR" not in function["values"]["service_config"][0]["environment_variables"]


def test_current_tables_need_no_grant_beyond_the_views(plans):
    """current_views = "table": the function keeps <table>_current tables in the target datasets with the
    grant the views already need there (roles/bigquery.dataEditor on each target dataset only)."""
    plan = plans["several_datasets"]
    (function,) = plan.of_type("google_cloudfunctions2_function")
    assert function["values"]["service_config"][0]["environment_variables"]["UNIVIEW_CURRENT"] == "table"
    on_targets = sorted(
        (g.scope, g.role)
        for g in plan.grants()
        if g.member == account("fn") and g.scope_type.endswith("_iam_member") and (g.scope or "").endswith("_unified")
    )
    assert on_targets == [(f"{d}_unified", "roles/bigquery.dataEditor") for d in ("cdc", "shop_eu", "shop_us")]
    (minimal,) = plans["minimal"].of_type("google_cloudfunctions2_function")
    assert minimal["values"]["service_config"][0]["environment_variables"]["UNIVIEW_CURRENT"] == "off"


def test_push_subscription_authenticates_and_dead_letters(each_plan):
    (push,) = [r for r in each_plan.of_type("google_pubsub_subscription") if r["name"] == "function_push"]
    values = push["values"]
    (oidc,) = values["push_config"][0]["oidc_token"]
    assert oidc["service_account_email"] == account("push").removeprefix("serviceAccount:")
    (dead_letter,) = values["dead_letter_policy"]
    assert dead_letter["max_delivery_attempts"] == 10
    assert "google_pubsub_topic.dead_letter.id" in each_plan.references(push, "dead_letter_policy.dead_letter_topic")
    assert "google_pubsub_topic.table_created.id" in each_plan.references(push, "topic")
    assert "google_cloudfunctions2_function.refresh.service_config[0].uri" in each_plan.references(
        push, "push_config.oidc_token.audience"
    )
    assert values["retry_policy"] == [{"minimum_backoff": "10s", "maximum_backoff": "600s"}]
    agent = [g for g in each_plan.grants() if "local.pubsub_service_agent" in g.member_refs]
    assert {(g.role, g.scope) for g in agent} == {
        ("roles/pubsub.publisher", f"{PREFIX}-table-created-dead-letter"),
        ("roles/pubsub.subscriber", f"{PREFIX}-refresh-push"),
        (
            "roles/iam.serviceAccountTokenCreator",
            f"projects/{PROJECT}/serviceAccounts/{account('push').removeprefix('serviceAccount:')}",
        ),
    }
    assert each_plan.of_type("google_project_service_identity")[0]["values"]["service"] == "pubsub.googleapis.com"


# --- docs/deployment.md's IAM table is the plan's --------------------------------------------------

_PRINCIPALS = {
    account(name): f"{label} SA `<prefix>-{name}`"
    for name, label in (("fn", "function"), ("sink", "sink"), ("push", "push"), ("build", "build"))
}


def principal_label(grant, view_readers) -> str:
    member = grant.member if grant.member is None or ":" in grant.member else f"serviceAccount:{grant.member}"
    if "local.pubsub_service_agent" in grant.member_refs:
        return "Pub/Sub service agent"
    if member in view_readers:
        return "`view_readers`"
    return _PRINCIPALS[member]


def scope_label(grant, variables) -> str:
    sources = variables.get("source_datasets", ["cdc"])
    labels = {
        None: "project",
        f"{PREFIX}-table-created": "table-created topic",
        f"{PREFIX}-table-created-dead-letter": "dead-letter topic",
        f"{PREFIX}-refresh-push": "push subscription",
        f"{PROJECT}-{PREFIX}-sink": "sink bucket",
        f"{PROJECT}-{PREFIX}-fn-src": "the function-source bucket",
        f"projects/{PROJECT}/serviceAccounts/{account('push').removeprefix('serviceAccount:')}": "push SA",
        **dict.fromkeys(sources, "each source dataset"),
        **{f"{d}_unified": "each target dataset" for d in sources},
        **dict.fromkeys(variables.get("sink_input_buckets", []), "each of `sink_input_buckets`"),
    }
    if grant.scope_type == "google_cloud_run_v2_service_iam_member":
        assert "google_cloudfunctions2_function.refresh" in grant.scope_refs
        return "the function's Cloud Run service"
    return labels[grant.scope]


def role_label(role: str) -> str:
    return re.sub(rf"^projects/{PROJECT}/roles/{PREFIX}_", "<prefix>_", role)


def documented_grants() -> set[tuple[str, str, str]]:
    text = (REPO_ROOT / "docs" / "deployment.md").read_text()
    table = text[text.index("| Principal | Role | Scope | Why |") :].split("\n\n")[0].splitlines()[2:]
    rows, principal = set(), ""
    for line in table:
        cells = [cell.strip() for cell in line.strip("|").split("|")]
        principal = cells[0] or principal
        role = re.match(r"`([^`]+)`", cells[1]).group(1)
        scope = re.split(r",| \(", cells[2])[0].strip()
        rows.add((principal, role, scope))
    return rows


def test_the_documented_iam_table_is_the_plans(plans):
    """Every grant of the plans with every kind of grant, as (principal, role, scope), is a row of
    docs/deployment.md's IAM table, and every row is a grant of those plans."""
    variables = {**VARIABLE_SETS["several_datasets"], **VARIABLE_SETS["sink_bucket"]}
    planned = set()
    for name in ("several_datasets", "sink_bucket", "consolidation"):
        plan = plans[name]
        for grant in plan.grants():
            planned.add(
                (
                    principal_label(grant, variables.get("view_readers", [])),
                    role_label(grant.role),
                    scope_label(grant, VARIABLE_SETS[name]),
                )
            )
    assert planned == documented_grants()
