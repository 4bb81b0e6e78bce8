"""The opt-in alerts and dashboard (terraform/monitoring.tf), validated and planned offline with the
stand-in providers: nothing without alerts_enabled; with it, each alert watches what the runbook says,
the log-based metrics read what the function and `uniview status` write, and the only grants are the
status job's own, each on the narrowest scope."""

from __future__ import annotations

import json
import re

import pytest
from terraform_plan import STANDIN_CONFIG, Plan, copy_checkout, plans_json, terraform

PROJECT = "acme-cdc-prod"
CHANNEL = f"projects/{PROJECT}/notificationChannels/42"
IMAGE = "us-docker.pkg.dev/acme-cdc-prod/tools/uniview:1"
STATUS = f"serviceAccount:uniview-status@{PROJECT}.iam.gserviceaccount.com"

#: The example's module call, given the monitoring variables (an override file merges them in).
OVERRIDE = """
variable "test_alerts_enabled" { type = bool }
variable "test_status_job_image" {
  type    = string
  default = null
}
"""
MODULE_OVERRIDE = (
    """
module "uniview" {
  alerts_enabled        = var.test_alerts_enabled
  notification_channels = ["%s"]
  status_job_image      = var.test_status_job_image
  stale_after           = "2h"
}
"""
    % CHANNEL
)


@pytest.fixture(scope="module")
def plans(terraform_bin, tmp_path_factory) -> dict[str, Plan]:
    if not STANDIN_CONFIG.is_file():
        pytest.skip("the stand-in providers are not installed: run scripts/setup-terraform-standin.sh")
    root = copy_checkout(tmp_path_factory.mktemp("tf-monitoring"))
    examples = root / "terraform" / "examples"
    (examples / "monitoring_test.tf").write_text(OVERRIDE)
    (examples / "monitoring_test_override.tf").write_text(MODULE_OVERRIDE)
    terraform(terraform_bin, examples, "init", "-backend=false", "-input=false")
    assert "The configuration is valid" in terraform(terraform_bin, examples, "validate").stdout
    base = {"project_id": PROJECT, "source_datasets": ["cdc", "shop_eu"]}
    variants = {
        "off": {**base, "test_alerts_enabled": False, "test_status_job_image": IMAGE},
        "alerts": {**base, "test_alerts_enabled": True},
        "status_job": {**base, "test_alerts_enabled": True, "test_status_job_image": IMAGE},
    }
    document = plans_json(terraform_bin, examples, variants)
    return {name: Plan(document, name) for name in variants}


MONITORING_TYPES = {
    "google_monitoring_alert_policy",
    "google_logging_metric",
    "google_monitoring_dashboard",
    "google_cloud_run_v2_job",
    "google_cloud_run_v2_job_iam_member",
}


def named(plan: Plan, type_name: str) -> dict[str, dict]:
    return {resource["name"]: resource["values"] for resource in plan.of_type(type_name)}


def test_nothing_is_created_without_alerts_enabled(plans):
    assert not plans["off"].types() & MONITORING_TYPES
    assert "monitoring.googleapis.com" not in {
        r["values"]["service"] for r in plans["off"].of_type("google_project_service")
    }


def test_each_alert_watches_its_signal_and_notifies_the_channels(plans):
    policies = named(plans["status_job"], "google_monitoring_alert_policy")
    assert set(policies) == {"dead_letters", "function_errors", "retries", "limit_warnings", "stale_families"}
    assert set(named(plans["alerts"], "google_monitoring_alert_policy")) == set(policies) - {"stale_families"}
    for policy in policies.values():
        assert policy["notification_channels"] == [CHANNEL]
        assert "docs/operations-runbook.md#" in policy["documentation"][0]["content"]
    filters = {name: [c["condition_threshold"][0]["filter"] for c in p["conditions"]] for name, p in policies.items()}
    assert 'subscription_id="uniview-table-created-dead-letter"' in filters["dead_letters"][0]
    assert "num_undelivered_messages" in filters["dead_letters"][0]
    assert (
        'response_class!="ack"' in filters["retries"][0]
        and 'subscription_id="uniview-refresh-push"' in filters["retries"][0]
    )
    assert 'response_code_class="5xx"' in filters["function_errors"][0]
    assert "logging.googleapis.com/user/uniview/limit_warnings" in filters["limit_warnings"][0]
    assert "logging.googleapis.com/user/uniview/status_crossings" in filters["stale_families"][0]
    assert 'metric.labels.result="failed"' in filters["stale_families"][1]


def test_the_log_based_metrics_read_what_uniview_logs(plans):
    from uniview.core.limits import FamilyFootprint
    from uniview.ops.status.report import THRESHOLD_EXIT_CODE  # noqa: F401  (the job's failure is this exit code)

    metrics = named(plans["status_job"], "google_logging_metric")
    assert set(metrics) == {"limit_warnings", "refresh_jobs", "quarantined", "status_crossings"}
    warning = FamilyFootprint("orders", [1000], 11_000_000, 10, 10, 1).nearing_limits()
    quoted = re.search(r'jsonPayload\.message:"([^"]+)"', metrics["limit_warnings"]["filter"]).group(1)
    assert warning is not None and quoted in warning
    assert metrics["refresh_jobs"]["value_extractor"] == "EXTRACT(jsonPayload.job_count)"
    crossing = re.search(
        r'REGEXP_EXTRACT\(textPayload, "(.+)"\)', metrics["status_crossings"]["label_extractors"]["family"]
    )
    assert (
        re.search(crossing.group(1).replace("\\\\", "\\"), "uniview: orders: crosses --fail-on stale").group(1)
        == "orders"
    )
    totals = re.search(r'textPayload=~"(.+)"', metrics["quarantined"]["filter"]).group(1)
    assert re.search(totals, "read=10 written=7 quarantined=3 skipped=0")


def test_the_dashboard_shows_events_latency_jobs_per_event_and_quarantine(plans):
    (dashboard,) = plans["alerts"].of_type("google_monitoring_dashboard")
    tiles = json.loads(dashboard["values"]["dashboard_json"])["mosaicLayout"]["tiles"]
    titles = [tile["widget"]["title"] for tile in tiles]
    for wanted in ("Events", "latency", "jobs per event", "quarantined"):
        assert any(wanted in title for title in titles), titles
    assert len({(tile["xPos"], tile["yPos"]) for tile in tiles}) == len(tiles)


def test_the_status_job_runs_status_with_the_thresholds_for_each_dataset(plans):
    (job,) = plans["status_job"].of_type("google_cloud_run_v2_job")
    template = job["values"]["template"][0]
    assert template["task_count"] == 2
    (container,) = template["template"][0]["containers"]
    assert container["image"] == IMAGE
    script = container["args"][0]
    assert "set -- cdc shop_eu;" in script and "set -- cdc_unified shop_eu_unified;" in script
    assert "uniview status --warehouse bigquery://acme-cdc-prod" in script
    assert "--fail-on stale=2h,pending=1h,headroom=20" in script


def test_only_the_status_job_is_granted_anything_and_narrowly(plans):
    before = {(g.role, g.member, g.scope) for g in plans["off"].grants()}
    added = {(g.role, g.member, g.scope) for g in plans["status_job"].grants()} - before
    assert {(g.role, g.member, g.scope) for g in plans["alerts"].grants()} == before
    assert added == {
        ("roles/bigquery.jobUser", STATUS, None),
        ("READER", STATUS.removeprefix("serviceAccount:"), "cdc"),  # dataset access entries: an email
        ("READER", STATUS.removeprefix("serviceAccount:"), "shop_eu"),
        ("roles/bigquery.metadataViewer", STATUS, "cdc_unified"),
        ("roles/bigquery.metadataViewer", STATUS, "shop_eu_unified"),
    }
    (invoker,) = plans["status_job"].of_type("google_cloud_run_v2_job_iam_member")
    assert (invoker["values"]["role"], invoker["values"]["member"]) == ("roles/run.invoker", STATUS)
    assert invoker["values"]["name"] == "uniview-status"
