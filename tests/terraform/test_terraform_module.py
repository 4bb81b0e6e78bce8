"""Structure of the Terraform module, read with python-hcl2: what exists and how it is wired."""

from __future__ import annotations

import re

import pytest
from terraform_support import EXAMPLES_DIR, MODULE_DIR, Module

PRIMITIVE_ROLE = re.compile(r"roles/(owner|editor|viewer)\b")


def _ref(address: str) -> str:
    return "${" + address + "}"


def _single(block: dict, name: str) -> dict:
    assert name in block, f"missing block {name}"
    assert len(block[name]) == 1
    return block[name][0]


# --- what the function needs --------------------------------------------------------------------

REQUIRED = [
    ("google_pubsub_topic", "table_created"),
    ("google_pubsub_topic", "dead_letter"),
    ("google_pubsub_subscription", "function_push"),
    ("google_pubsub_subscription", "dead_letter"),
    ("google_cloudfunctions2_function", "refresh"),
    ("google_storage_bucket", "function_source"),
    ("google_storage_bucket_object", "function_source"),
    ("google_service_account", "function"),
    ("google_service_account", "sink"),
    ("google_service_account", "push"),
    ("google_service_account", "build"),
    ("google_bigquery_dataset", "source"),
    ("google_bigquery_dataset", "target"),
    ("google_bigquery_dataset_access", "authorized_target"),
    ("google_cloud_scheduler_job", "full_refresh"),
    ("google_cloud_run_v2_service_iam_member", "push_invoker"),
    ("google_project_iam_custom_role", "authorized_view_writer"),
]


@pytest.mark.parametrize(("kind", "name"), REQUIRED)
def test_required_resource_exists(module: Module, kind: str, name: str) -> None:
    module.resource(kind, name)


def test_function_is_gen2_python311_with_handler_entry_point(module: Module) -> None:
    function = module.resource("google_cloudfunctions2_function", "refresh")
    build = _single(function, "build_config")
    assert build["runtime"] == "python311"
    assert build["entry_point"] == "handler"
    assert build["service_account"] == _ref("google_service_account.build.id")
    storage = _single(_single(build, "source"), "storage_source")
    assert storage == {
        "bucket": _ref("google_storage_bucket.function_source.name"),
        "object": _ref("google_storage_bucket_object.function_source.name"),
    }
    service = _single(function, "service_config")
    assert service["service_account_email"] == _ref("google_service_account.function.email")
    assert service["environment_variables"] == _ref("local.function_env")
    assert service["max_instance_request_concurrency"] == 1


def test_function_source_is_the_content_addressed_zip(module: Module) -> None:
    archive = module.data["archive_file"]["function_source"]
    assert archive["type"] == "zip"
    dynamic_source = _single(archive, "dynamic")["source"]
    assert dynamic_source["for_each"] == _ref("local.function_files")
    obj = module.resource("google_storage_bucket_object", "function_source")
    assert obj["source"] == _ref("data.archive_file.function_source.output_path")
    assert "data.archive_file.function_source.output_md5" in obj["name"]


def test_function_env_var_values_come_from_their_variables(module: Module) -> None:
    env = module.locals["function_env_all"]
    assert env["UNIVIEW_WAREHOUSE"] == "bigquery://${var.project_id}"
    assert env["UNIVIEW_TARGET_DATASET"] == _ref("var.target_dataset_template")
    assert env["UNIVIEW_POLICY"] == _ref("var.policy")
    assert env["UNIVIEW_DATETIME_TIMEZONE"] == _ref("var.datetime_timezone")
    assert env["UNIVIEW_SOURCE_COLUMN"] == _ref("var.source_column")


# --- delivery: push subscription, retries, dead letters -------------------------------------------


def test_push_subscription_delivers_to_the_function_with_oidc(module: Module) -> None:
    subscription = module.resource("google_pubsub_subscription", "function_push")
    assert subscription["topic"] == _ref("google_pubsub_topic.table_created.id")
    push = _single(subscription, "push_config")
    uri = _ref("google_cloudfunctions2_function.refresh.service_config[0].uri")
    assert push["push_endpoint"] == uri
    token = _single(push, "oidc_token")
    assert token == {"service_account_email": _ref("google_service_account.push.email"), "audience": uri}
    assert subscription["ack_deadline_seconds"] == _ref("var.function_timeout_seconds")


def test_function_has_no_eventarc_trigger(module: Module) -> None:
    """The push subscription above is the only delivery path, so its dead-letter policy applies."""
    assert "event_trigger" not in module.resource("google_cloudfunctions2_function", "refresh")


def test_failed_deliveries_retry_with_backoff_then_dead_letter(module: Module) -> None:
    subscription = module.resource("google_pubsub_subscription", "function_push")
    retry = _single(subscription, "retry_policy")
    assert retry["minimum_backoff"] == "${var.retry_minimum_backoff_seconds}s"
    assert retry["maximum_backoff"] == "${var.retry_maximum_backoff_seconds}s"
    dead_letter = _single(subscription, "dead_letter_policy")
    assert dead_letter["dead_letter_topic"] == _ref("google_pubsub_topic.dead_letter.id")
    assert dead_letter["max_delivery_attempts"] == _ref("var.max_delivery_attempts")


def test_dead_letters_are_kept_on_a_subscription(module: Module) -> None:
    keeper = module.resource("google_pubsub_subscription", "dead_letter")
    assert keeper["topic"] == _ref("google_pubsub_topic.dead_letter.id")
    assert "push_config" not in keeper
    assert keeper["message_retention_duration"] == "604800s"


def test_pubsub_service_agent_can_forward_dead_letters_and_sign_push_tokens(module: Module) -> None:
    agent = _ref("local.pubsub_service_agent")
    publisher = module.resource("google_pubsub_topic_iam_member", "dead_letter_publisher")
    assert (publisher["topic"], publisher["role"], publisher["member"]) == (
        _ref("google_pubsub_topic.dead_letter.name"),
        "roles/pubsub.publisher",
        agent,
    )
    subscriber = module.resource("google_pubsub_subscription_iam_member", "dead_letter_source_subscriber")
    assert (subscriber["subscription"], subscriber["role"], subscriber["member"]) == (
        _ref("google_pubsub_subscription.function_push.name"),
        "roles/pubsub.subscriber",
        agent,
    )
    token = module.resource("google_service_account_iam_member", "pubsub_push_token_creator")
    assert (token["service_account_id"], token["role"], token["member"]) == (
        _ref("google_service_account.push.name"),
        "roles/iam.serviceAccountTokenCreator",
        agent,
    )
    # the agent is created explicitly before it is granted anything (first apply on a new project)
    assert module.locals["pubsub_service_agent"] == "serviceAccount:${google_project_service_identity.pubsub.email}"
    identity = module.resource("google_project_service_identity", "pubsub")
    assert (identity["service"], identity["provider"]) == ("pubsub.googleapis.com", "google-beta")


def test_grants_naming_custom_roles_wait_for_them_to_propagate(module: Module) -> None:
    wait = module.resource("time_sleep", "custom_roles_propagated")
    assert wait["create_duration"] == "60s"
    assert set(wait["triggers"]) == {"authorized_view_writer", "dataproc_worker", "consolidator"}
    for kind, name in (
        ("google_project_iam_member", "project_roles"),
        ("google_bigquery_dataset_access", "function_source_authorizer"),
        ("google_bigquery_dataset_access", "function_consolidator"),
    ):
        assert "${time_sleep.custom_roles_propagated}" in module.resource(kind, name)["depends_on"]


@pytest.mark.parametrize("directory", [MODULE_DIR, EXAMPLES_DIR])
def test_provider_floor_avoids_the_permanent_function_diff(directory) -> None:
    """google < 5.38 shows a permanent diff on service_config.environment_variables (LOG_EXECUTION_ID)."""
    text = "\n".join(path.read_text() for path in directory.glob("*.tf"))
    floors = re.findall(
        r'source\s*=\s*"hashicorp/google(?:-beta)?"\s*\n\s*(?:#.*\n\s*)*version\s*=\s*">= ([0-9.]+)', text
    )
    assert floors and all(tuple(map(int, f.split("."))) >= (5, 38) for f in floors), floors


def test_push_identity_may_invoke_only_the_function_service(module: Module) -> None:
    invoker = module.resource("google_cloud_run_v2_service_iam_member", "push_invoker")
    assert invoker["name"] == _ref("google_cloudfunctions2_function.refresh.service_config[0].service")
    assert invoker["role"] == "roles/run.invoker"
    assert invoker["member"] == _ref("local.members.push")


def test_scheduler_publishes_the_full_refresh_message_to_the_topic(module: Module) -> None:
    job = module.resource("google_cloud_scheduler_job", "full_refresh")
    assert job["for_each"] == "${var.self_healing_enabled ? toset(var.source_datasets) : toset([])}"
    target = _single(job, "pubsub_target")
    assert target["topic_name"] == _ref("google_pubsub_topic.table_created.id")
    assert target["data"] == _ref("base64encode(local.full_refresh_messages[each.key])")


# --- IAM: scoped, never primitive -------------------------------------------------------------------


def _all_tf_text() -> str:
    paths = [*MODULE_DIR.glob("*.tf"), *EXAMPLES_DIR.glob("*.tf"), *EXAMPLES_DIR.glob("*.example")]
    return "\n".join(path.read_text() for path in paths)


def test_no_primitive_roles_anywhere() -> None:
    text = _all_tf_text()
    assert PRIMITIVE_ROLE.findall(text) == []
    # The legacy dataset OWNER (= roles/bigquery.dataOwner) is not granted either.
    assert re.findall(r'role\s*=\s*"OWNER"', text) == []


def test_no_authoritative_iam_resources(module: Module) -> None:
    authoritative = [kind for kind in module.resources if kind.endswith(("_iam_policy", "_iam_binding"))]
    assert authoritative == []


def test_project_level_grants_are_only_the_ones_listed_in_locals(module: Module) -> None:
    grants = module.of_kind("google_project_iam_member")
    assert list(grants) == ["project_roles"]
    assert grants["project_roles"]["for_each"] == _ref("local.project_roles")


def test_source_dataset_grants_are_dataset_access_entries_on_source_datasets(module: Module) -> None:
    """google_bigquery_dataset_iam_* would drop the authorized-dataset entry of a source dataset."""
    entries = module.of_kind("google_bigquery_dataset_access")
    expected = {
        "function_source_reader": ("READER", _ref("google_service_account.function.email")),
        "function_source_authorizer": (
            _ref("google_project_iam_custom_role.authorized_view_writer.name"),
            _ref("google_service_account.function.email"),
        ),
        "sink_source_writer": ("WRITER", _ref("google_service_account.sink.email")),
    }
    for name, (role, email) in expected.items():
        entry = entries[name]
        assert entry["for_each"] == _ref("toset(var.source_datasets)")
        assert entry["dataset_id"] == _ref("each.key")
        assert (entry["role"], entry["user_by_email"]) == (role, email)
    consolidator = entries["function_consolidator"]  # only with consolidate_idle_for (test_terraform_plan)
    assert consolidator["for_each"] == _ref("local.consolidated_datasets")
    assert (consolidator["role"], consolidator["user_by_email"]) == (
        _ref("google_project_iam_custom_role.consolidator[0].name"),
        _ref("google_service_account.function.email"),
    )
    status = entries["status_source_reader"]  # only with the status job (test_terraform_monitoring)
    assert status["for_each"] == _ref("local.status_job == 1 ? toset(var.source_datasets) : toset([])")
    assert (status["role"], status["user_by_email"]) == ("READER", _ref("google_service_account.status[0].email"))
    ledger = entries["function_ledger_reader"]  # only with current_views = "table" and a separate control dataset
    assert ledger["for_each"] == _ref("local.ledger_datasets")
    assert (ledger["role"], ledger["user_by_email"]) == ("READER", _ref("google_service_account.function.email"))
    assert set(entries) == {
        *expected,
        "authorized_target",
        "function_consolidator",
        "status_source_reader",
        "function_ledger_reader",
    }


def test_target_dataset_is_authorized_on_its_source_for_views(module: Module) -> None:
    access = module.resource("google_bigquery_dataset_access", "authorized_target")
    assert access["for_each"] == _ref("local.target_datasets")
    assert access["dataset_id"] == _ref("each.key")
    grant = _single(access, "dataset")
    assert grant["target_types"] == ["VIEWS"]
    assert _single(grant, "dataset")["dataset_id"] == _ref("google_bigquery_dataset.target[each.key].dataset_id")
    assert "role" not in access


def test_dataset_iam_members_are_only_on_target_datasets(module: Module) -> None:
    members = module.of_kind("google_bigquery_dataset_iam_member")
    assert members, "expected dataset-scoped grants on the target datasets"
    for name, member in members.items():
        assert member["dataset_id"].startswith("${google_bigquery_dataset.target["), name
    editor = members["function_target_editor"]
    assert (editor["role"], editor["member"]) == ("roles/bigquery.dataEditor", _ref("local.members.function"))


def test_authorized_view_writer_role_has_exactly_the_two_permissions(module: Module) -> None:
    role = module.resource("google_project_iam_custom_role", "authorized_view_writer")
    assert sorted(role["permissions"]) == ["bigquery.datasets.get", "bigquery.datasets.update"]


def test_sink_publishes_to_the_topic_only(module: Module) -> None:
    publishers = {
        name: grant
        for name, grant in module.of_kind("google_pubsub_topic_iam_member").items()
        if grant["member"] == _ref("local.members.sink")
    }
    assert list(publishers) == ["sink_publisher"]
    grant = publishers["sink_publisher"]
    assert (grant["topic"], grant["role"]) == (_ref("google_pubsub_topic.table_created.name"), "roles/pubsub.publisher")


def test_sink_bucket_access_is_bucket_scoped(module: Module) -> None:
    grant = module.resource("google_storage_bucket_iam_member", "sink_object_admin")
    assert (grant["bucket"], grant["role"], grant["member"]) == (
        _ref("local.sink_bucket_name"),
        "roles/storage.objectAdmin",
        _ref("local.members.sink"),
    )


# --- buckets and datasets ----------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["function_source", "sink"])
def test_buckets_are_private_uniform_and_versioned(module: Module, name: str) -> None:
    bucket = module.resource("google_storage_bucket", name)
    assert bucket["uniform_bucket_level_access"] is True
    assert bucket["public_access_prevention"] == "enforced"
    assert _single(bucket, "versioning") == {"enabled": True}


def test_source_data_survives_destroy_and_views_do_not(module: Module) -> None:
    assert module.resource("google_bigquery_dataset", "source")["delete_contents_on_destroy"] is False
    assert module.resource("google_bigquery_dataset", "target")["delete_contents_on_destroy"] is True
    assert module.resource("google_storage_bucket", "sink")["force_destroy"] is False


def test_source_dataset_creation_is_optional(module: Module) -> None:
    source = module.resource("google_bigquery_dataset", "source")
    assert source["for_each"] == "${var.create_source_datasets ? toset(var.source_datasets) : toset([])}"


def test_dataproc_cluster_is_optional_private_and_runs_as_the_sink(module: Module) -> None:
    cluster = module.resource("google_dataproc_cluster", "sink")
    assert cluster["count"] == '${var.dataproc_mode == "cluster" ? 1 : 0}'
    gce = _single(_single(cluster, "cluster_config"), "gce_cluster_config")
    assert gce["internal_ip_only"] is True
    assert gce["service_account"] == _ref("google_service_account.sink.email")


# --- variables and outputs ---------------------------------------------------------------------------


def test_every_variable_has_a_description_and_a_type(module: Module) -> None:
    for name, variable in module.variables.items():
        assert variable.get("description"), name
        assert variable.get("type"), name


@pytest.mark.parametrize(
    "name",
    [
        "topic_id",
        "dead_letter_topic_id",
        "function_name",
        "function_uri",
        "function_service_account_email",
        "sink_service_account_email",
        "push_service_account_email",
        "sink_bucket",
        "notify_url",
        "target_datasets",
    ],
)
def test_output_exists(module: Module, name: str) -> None:
    assert module.outputs[name].get("description"), name


def test_example_uses_the_module(example: Module) -> None:
    call = example.modules["uniview"]
    assert call["source"] == "../"
    assert call["project_id"] == _ref("var.project_id")
    assert set(example.outputs) >= {"notify_url", "sink_bucket", "function_name"}
