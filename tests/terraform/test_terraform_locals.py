"""The module's variables.tf and locals.tf evaluated by terraform itself, offline.

Covers what the function is configured with, which files its zip holds (and that the package
works from that layout), the project-level grants, the self-healing messages, and the variable
validations.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from terraform_support import MODULE_DIR, PROJECT, REPO_ROOT, Evaluator

PRIMITIVE_ROLES = {"roles/owner", "roles/editor", "roles/viewer"}
# Roles that exist on datasets, topics, subscriptions, buckets or services: never at project level.
SCOPABLE_ROLES = {
    "roles/bigquery.dataViewer",
    "roles/bigquery.dataEditor",
    "roles/bigquery.dataOwner",
    "roles/bigquery.metadataViewer",
    "roles/pubsub.publisher",
    "roles/pubsub.subscriber",
    "roles/storage.objectAdmin",
    "roles/storage.objectCreator",
    "roles/run.invoker",
    "roles/iam.serviceAccountTokenCreator",
    "roles/iam.serviceAccountUser",
}


# --- the sink's jobs ------------------------------------------------------------------------------


def test_sink_jobs_get_the_jvm_options_the_sink_starts_with(evaluator: Evaluator) -> None:
    from uniview.sink.job import JVM_PROPERTIES

    assert evaluator.value("local.sink_spark_properties") == JVM_PROPERTIES


# --- the function's environment ------------------------------------------------------------------


def test_env_var_names_are_ones_the_function_reads(evaluator: Evaluator) -> None:
    from uniview.cloudfn.config import ENV_VARS

    declared = evaluator.value("keys(local.function_env_all)")
    assert "UNIVIEW_WAREHOUSE" in declared
    assert set(declared) <= set(ENV_VARS), set(declared) - set(ENV_VARS)
    assert set(declared) == set(ENV_VARS), "a configuration variable of the function is not settable"
    # LOCAL_ENV_VARS (scheduled consolidation) are refused with a BigQuery warehouse, so not deployed


@pytest.mark.parametrize(
    "variables",
    [
        {},
        {
            "datetime_timezone": "Europe/Berlin",
            "source_column": "_version_table",
            "policy": "widen",
            "max_view_chars": 120000,
            "max_event_age_seconds": 3600,
            "target_dataset_template": "views_{dataset}",
            "consolidate_idle_for": "30d",
            "consolidate_max_versions": 400,
            "consolidate_settle": "2h",
            "sink_control_dataset": "uniview",
        },
    ],
    ids=["defaults", "every-option"],
)
def test_function_accepts_the_environment_terraform_sets(evaluator: Evaluator, variables: dict) -> None:
    from uniview.cloudfn.config import load_config

    config = load_config(evaluator.value("local.function_env", **variables))
    assert config.warehouse_url == f"bigquery://{PROJECT}"
    assert config.target_dataset("cdc") == variables.get("target_dataset_template", "{dataset}_unified").replace(
        "{dataset}", "cdc"
    )
    assert config.max_event_age_seconds == variables.get("max_event_age_seconds", 86400)
    if "consolidate_idle_for" in variables:
        assert (
            config.consolidation.idle_for.days,
            config.consolidation.max_versions,
            config.consolidation.control_dataset,
        ) == (30, 400, "uniview")
    else:
        assert config.consolidation is None


def test_env_with_defaults_sets_no_optional_variable(evaluator: Evaluator) -> None:
    assert evaluator.value("local.function_env") == {
        "UNIVIEW_WAREHOUSE": f"bigquery://{PROJECT}",
        "UNIVIEW_TARGET_DATASET": "{dataset}_unified",
        "UNIVIEW_POLICY": "uniview",
        "UNIVIEW_MAX_VIEW_CHARS": "250000",
        "UNIVIEW_MAX_EVENT_AGE_SECONDS": "86400",
        "UNIVIEW_MAX_STALENESS": "900s",
        "UNIVIEW_CURRENT": "off",
        "UNIVIEW_CONSOLIDATE_MAX_VERSIONS": "500",
        "UNIVIEW_CONSOLIDATE_SETTLE": "1h",
    }


def test_env_sets_optional_variables_when_given(evaluator: Evaluator) -> None:
    env = evaluator.value(
        "local.function_env",
        datetime_timezone="Europe/Berlin",
        source_column="_version_table",
        policy="widen",
        max_view_chars=120000,
        target_dataset_template="views_{dataset}",
    )
    assert env["UNIVIEW_DATETIME_TIMEZONE"] == "Europe/Berlin"
    assert env["UNIVIEW_SOURCE_COLUMN"] == "_version_table"
    assert env["UNIVIEW_POLICY"] == "widen"
    assert env["UNIVIEW_MAX_VIEW_CHARS"] == "120000"
    assert env["UNIVIEW_TARGET_DATASET"] == "views_{dataset}"
    assert all(value != "" for value in env.values())


@pytest.mark.parametrize(
    ("setting", "expected"),
    [(True, "view"), (False, "off"), ("view", "view"), ("TABLE", "table"), ("off", "off")],
)
def test_current_views_reaches_the_function_as_a_mode_it_reads(
    evaluator: Evaluator, setting: object, expected: str
) -> None:
    from uniview.cloudfn.config import load_config

    env = evaluator.value("local.function_env", current_views=setting)
    assert env["UNIVIEW_CURRENT"] == expected
    assert load_config({**env, "UNIVIEW_WAREHOUSE": "duckdb:///x.duckdb"}).options.current == expected


def test_target_datasets_follow_the_template(evaluator: Evaluator) -> None:
    assert evaluator.value("local.target_datasets") == {"cdc": "cdc_unified"}
    assert evaluator.value(
        "local.target_datasets", source_datasets=["cdc", "crm"], target_dataset_template="views_{dataset}"
    ) == {"cdc": "views_cdc", "crm": "views_crm"}


def test_full_refresh_message_per_source_dataset(evaluator: Evaluator) -> None:
    messages = evaluator.value("local.full_refresh_messages", source_datasets=["cdc", "crm"])
    assert {ds: json.loads(body) for ds, body in messages.items()} == {
        "cdc": {"dataset": "cdc", "all": True},
        "crm": {"dataset": "crm", "all": True},
    }


# --- project-level grants ------------------------------------------------------------------------


def _roles_by_account(grants: dict) -> dict[str, set[str]]:
    accounts: dict[str, set[str]] = {}
    for grant in grants.values():
        accounts.setdefault(grant["account"], set()).add(grant["role"])
    return accounts


WORKER_ROLE = f"projects/{PROJECT}/roles/uniview_dataproc_worker"
#: Permissions of the predefined roles the module may grant at project level, as Google documents them
#: (https://cloud.google.com/iam/docs/understanding-roles); storage.* is what matters here.
PREDEFINED_ROLE_PERMISSIONS = {
    "roles/bigquery.jobUser": {
        "bigquery.jobs.create",
        "bigquery.config.get",
        "resourcemanager.projects.get",
        "resourcemanager.projects.list",
    },
    "roles/logging.logWriter": {"logging.logEntries.create", "logging.logEntries.route"},
    "roles/artifactregistry.writer": {
        "artifactregistry.repositories.uploadArtifacts",
        "artifactregistry.repositories.downloadArtifacts",
        "artifactregistry.tags.create",
    },
    "roles/storage.objectViewer": {"storage.objects.get", "storage.objects.list", "resourcemanager.projects.get"},
    "roles/dataproc.worker": {
        "dataproc.agents.create",
        "dataproc.tasks.lease",
        "logging.logEntries.create",
        "storage.buckets.get",
        "storage.objects.create",
        "storage.objects.delete",
        "storage.objects.get",
        "storage.objects.list",
        "storage.objects.update",
    },
}


def test_project_level_grants_are_the_unscopable_minimum(evaluator: Evaluator) -> None:
    accounts = _roles_by_account(evaluator.value("local.project_roles"))
    assert accounts == {
        "function": {"roles/bigquery.jobUser"},
        "sink": {"roles/bigquery.jobUser", WORKER_ROLE},
        "build": {"roles/logging.logWriter", "roles/artifactregistry.writer", "roles/storage.objectViewer"},
    }
    granted = set().union(*accounts.values())
    assert not granted & PRIMITIVE_ROLES
    assert not granted & SCOPABLE_ROLES


def _permissions(role: str, evaluator: Evaluator) -> set[str]:
    if role == WORKER_ROLE:
        return set(evaluator.value("local.dataproc_worker_permissions"))
    assert role in PREDEFINED_ROLE_PERMISSIONS, f"{role}: add its documented permissions to this test"
    return PREDEFINED_ROLE_PERMISSIONS[role]


@pytest.mark.parametrize("mode", ["cluster", "serverless", "none"])
def test_no_identity_holds_storage_objects_project_wide(evaluator: Evaluator, mode: str) -> None:
    """Unconditional project-level grants carry no storage.objects.* (so no account can overwrite the
    function's source archive); the build's storage grant is conditioned to Cloud Functions' source buckets."""
    for name, grant in evaluator.value("local.project_roles", dataproc_mode=mode).items():
        storage = {p for p in _permissions(grant["role"], evaluator) if p.startswith("storage.objects.")}
        if storage:
            assert grant["condition"] is not None, f"{name}: {grant['role']} grants {sorted(storage)} project-wide"
            assert grant["condition"]["expression"] == 'resource.name.startsWith("projects/_/buckets/gcf-v2-sources-")'


def test_the_build_reaches_only_its_bucket_and_repository(evaluator: Evaluator) -> None:
    grants = {g["role"]: g for g in evaluator.value("local.project_roles").values() if g["account"] == "build"}
    assert grants["roles/logging.logWriter"]["condition"] is None
    assert (
        grants["roles/artifactregistry.writer"]["condition"]["expression"]
        == f'resource.name.startsWith("projects/{PROJECT}/locations/us-central1/repositories/gcf-artifacts")'
    )
    assert grants["roles/storage.objectViewer"]["condition"]["title"] == "Cloud Functions source bucket only"


def test_the_dataproc_worker_role_is_the_predefined_one_without_storage(evaluator: Evaluator) -> None:
    permissions = set(evaluator.value("local.dataproc_worker_permissions"))
    assert not {p for p in permissions if p.startswith("storage.")}
    documented = PREDEFINED_ROLE_PERMISSIONS["roles/dataproc.worker"]
    assert documented - permissions == {p for p in documented if p.startswith("storage.")}


def test_no_dataproc_role_without_dataproc(evaluator: Evaluator) -> None:
    accounts = _roles_by_account(evaluator.value("local.project_roles", dataproc_mode="none"))
    assert accounts["sink"] == {"roles/bigquery.jobUser"}
    assert "dataproc.googleapis.com" not in evaluator.value("local.apis", dataproc_mode="none")


def test_apis_follow_the_features(evaluator: Evaluator) -> None:
    apis = evaluator.value("local.apis")
    assert {
        "cloudfunctions.googleapis.com",
        "run.googleapis.com",
        "pubsub.googleapis.com",
        "cloudscheduler.googleapis.com",
        "dataproc.googleapis.com",
    } <= set(apis)
    assert "cloudscheduler.googleapis.com" not in evaluator.value("local.apis", self_healing_enabled=False)


# --- the function's zip ----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def zip_layout(evaluator: Evaluator) -> dict[str, str]:
    return evaluator.value("local.function_files", source_root=str(REPO_ROOT))


def test_zip_holds_main_requirements_package_and_templates(zip_layout: dict[str, str]) -> None:
    expected = {
        "main.py": REPO_ROOT / "functions" / "main.py",
        "requirements.txt": REPO_ROOT / "functions" / "requirements.txt",
    }
    expected |= {path.relative_to(REPO_ROOT).as_posix(): path for path in (REPO_ROOT / "uniview").rglob("*.py")}
    expected |= {
        f"uniview/sql_templates/{path.relative_to(REPO_ROOT / 'sql_templates').as_posix()}": path
        for path in (REPO_ROOT / "sql_templates").rglob("*")
        if path.is_file() and not path.name.startswith(".")
    }
    assert {name: Path(path).resolve() for name, path in zip_layout.items()} == {
        name: path.resolve() for name, path in expected.items()
    }
    assert "uniview/sql_templates/union_view.sql.j2" in zip_layout


def test_default_source_root_is_the_checkout(evaluator: Evaluator) -> None:
    relative = evaluator.value("local.source_root")
    assert (MODULE_DIR / relative).resolve() == REPO_ROOT.resolve()


def _materialize(layout: dict[str, str], root: Path) -> None:
    for name, source in layout.items():
        if Path(source).is_file():
            (root / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(source, root / name)


def _python_in(root: Path, code: str) -> subprocess.CompletedProcess:
    env = {key: value for key, value in os.environ.items() if not key.startswith("UNIVIEW_")}
    env["PYTHONPATH"] = str(root)
    return subprocess.run([sys.executable, "-c", code], cwd=root, env=env, capture_output=True, text=True, timeout=120)


def test_package_finds_its_templates_inside_the_zip_layout(zip_layout: dict[str, str], tmp_path: Path) -> None:
    _materialize(zip_layout, tmp_path)
    code = "import uniview, uniview.core.render as r; print(uniview.__file__); print(r.templates_dir())"
    result = _python_in(tmp_path, code)
    assert result.returncode == 0, result.stderr
    package_file, templates = result.stdout.split()
    assert Path(package_file).parent == tmp_path / "uniview"
    assert Path(templates) == tmp_path / "uniview" / "sql_templates"


def test_handler_imports_from_the_zip_layout(zip_layout: dict[str, str], tmp_path: Path) -> None:
    _materialize(zip_layout, tmp_path)
    assert (tmp_path / "main.py").is_file(), "functions/main.py is missing"
    assert (tmp_path / "requirements.txt").is_file(), "functions/requirements.txt is missing"
    result = _python_in(tmp_path, "import main; assert callable(main.handler)")
    assert result.returncode == 0, result.stderr


# --- variable validation -----------------------------------------------------------------------------

ACCEPTED = [
    ("source_datasets", ["cdc", "crm_2"]),
    ("target_dataset_template", "unified_{dataset}"),
    ("name_prefix", "uv-prod"),
    ("policy", "widen"),
    ("max_view_chars", 256000),
    ("datetime_timezone", "America/Argentina/Buenos_Aires"),
    ("source_column", "_source_table"),
    ("function_timeout_seconds", 600),
    ("max_delivery_attempts", 5),
    ("self_healing_schedule", "*/30 * * * *"),
    ("dataproc_mode", "cluster"),
    ("dataproc_cluster", {"num_workers": 0}),
    ("view_readers", ["group:analysts@example.com"]),
    ("bigquery_kms_key_name", "projects/p/locations/us/keyRings/r/cryptoKeys/k"),
    ("current_views", "table"),
    ("current_views", True),
]

REJECTED = [
    ("project_id", "My_Project"),
    ("source_datasets", []),
    ("source_datasets", ["cdc", "cdc"]),
    ("source_datasets", ["bad-name"]),
    ("target_dataset_template", "{dataset}-unified"),
    ("name_prefix", "UV"),
    ("name_prefix", "a-name-prefix-that-is-too-long"),
    ("policy", "strict"),
    ("max_view_chars", 300000),
    ("datetime_timezone", "not a zone"),
    ("source_column", "1st"),
    ("max_event_age_seconds", 10),
    ("function_timeout_seconds", 601),
    ("function_ingress_settings", "ALLOW_ALL"),
    ("max_delivery_attempts", 4),
    ("max_delivery_attempts", 101),
    ("self_healing_schedule", "hourly"),
    ("dataproc_mode", "gke"),
    ("dataproc_cluster", {"num_workers": 1}),
    ("view_readers", ["analysts@example.com"]),
    ("bigquery_kms_key_name", "my-key"),
    ("current_views", "materialized"),
]


@pytest.mark.parametrize(("name", "value"), ACCEPTED, ids=[f"{n}={v}" for n, v in ACCEPTED])
def test_variable_accepts(evaluator: Evaluator, name: str, value: object) -> None:
    result = evaluator.plan(**{name: value})
    assert result.returncode == 0, result.stderr


@pytest.mark.parametrize(("name", "value"), REJECTED, ids=[f"{n}={v}" for n, v in REJECTED])
def test_variable_rejects(evaluator: Evaluator, name: str, value: object) -> None:
    result = evaluator.plan(**{name: value})
    assert result.returncode != 0
    assert "Invalid value for variable" in result.stderr
    assert f'variable "{name}"' in result.stderr


def test_renames_reach_the_function_as_a_renames_document(evaluator: Evaluator) -> None:
    from uniview.core.renames import Rename, parse_renames

    assert "UNIVIEW_RENAMES" not in evaluator.value("local.function_env")
    renames = [{"table": "customer", "from": "memo", "to": "note"}, {"table": "customer", "from": "note", "to": "memo"}]
    text = evaluator.value("local.function_env", renames=renames)["UNIVIEW_RENAMES"]
    assert parse_renames(text, "UNIVIEW_RENAMES") == (
        Rename("customer", "memo", "note"),
        Rename("customer", "note", "memo"),
    )


@pytest.mark.parametrize(
    ("variables", "expected"),
    [
        ({"current_views": "view", "sink_control_dataset": "control"}, []),
        ({"current_views": "table"}, []),  # the ledger is in the source datasets: function_source_reader reads it
        ({"current_views": "table", "sink_control_dataset": "control"}, ["control"]),
        ({"current_views": "table", "sink_control_dataset": "shop"}, []),  # a source dataset: already READER
    ],
)
def test_the_function_reads_the_ledger_through_one_access_entry_per_dataset(
    evaluator: Evaluator, variables: dict, expected: list
) -> None:
    assert evaluator.value("local.ledger_datasets", source_datasets=["shop", "shop2"], **variables) == expected
