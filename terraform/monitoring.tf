# Alerts and a dashboard (opt-in: alerts_enabled). docs/operations-runbook.md says what each alert
# means and which command to run.
#
# - dead letters: notifications the function failed max_delivery_attempts times wait on the
#   dead-letter subscription (Pub/Sub's num_undelivered_messages);
# - function errors: the function answered 5xx (Cloud Run's request_count of its service);
# - retries: the push subscription's deliveries the function did not acknowledge;
# - limit warnings: the function's structured WARNING "nearing BigQuery's per-query limits"
#   (uniview.core.limits.FamilyFootprint.nearing_limits), counted by a log-based metric per family;
# - stale families: a Cloud Run job runs `uniview status --fail-on stale=...,pending=...` on a
#   schedule (status_job_image); each family it names crosses a threshold, and a failed run alerts.
#
# Nothing here grants anything, except to the status job's own service account: BigQuery jobs in
# the project, reading the source datasets (status reads _cdc_ingested_at and _cdc_database) and
# the target datasets' metadata, and the right to run its own job (for Cloud Scheduler).

locals {
  alerts              = var.alerts_enabled ? 1 : 0
  status_job          = var.alerts_enabled && var.status_job_image != null ? 1 : 0
  function_service    = google_cloudfunctions2_function.refresh.name # a 2nd-gen function's Cloud Run service has its name
  function_log_filter = "resource.type=\"cloud_run_revision\" AND resource.labels.service_name=\"${local.function_service}\""
  status_job_name     = "${var.name_prefix}-status"
  # One `uniview status` per source dataset, in one job execution (one task per dataset).
  status_fail_on = "stale=${var.stale_after},pending=${var.pending_after},headroom=${var.headroom_below_percent}"
}

# ---------------------------------------------------------------------------
# Log-based metrics, from the function's structured log (uniview.cloudfn.logs) and the status job
# ---------------------------------------------------------------------------

resource "google_logging_metric" "limit_warnings" {
  count   = local.alerts
  project = var.project_id
  name    = "${var.name_prefix}/limit_warnings"
  filter  = "${local.function_log_filter} AND severity=WARNING AND jsonPayload.outcome=\"note\" AND jsonPayload.message:\"nearing BigQuery's per-query limits\""

  metric_descriptor {
    metric_kind = "DELTA"
    value_type  = "INT64"
    unit        = "1"
    labels {
      key         = "family"
      value_type  = "STRING"
      description = "The family nearing a limit."
    }
  }
  label_extractors = { family = "EXTRACT(jsonPayload.family)" }
}

resource "google_logging_metric" "refresh_jobs" {
  count   = local.alerts
  project = var.project_id
  name    = "${var.name_prefix}/refresh_jobs"
  filter  = "${local.function_log_filter} AND jsonPayload.job_count>=0"

  metric_descriptor {
    metric_kind = "DELTA"
    value_type  = "DISTRIBUTION"
    unit        = "1"
    labels {
      key         = "outcome"
      value_type  = "STRING"
      description = "refreshed or unchanged."
    }
  }
  value_extractor  = "EXTRACT(jsonPayload.job_count)"
  label_extractors = { outcome = "EXTRACT(jsonPayload.outcome)" }
  bucket_options {
    explicit_buckets {
      bounds = [0, 1, 2, 3, 5, 10, 20]
    }
  }
}

resource "google_logging_metric" "quarantined" {
  count   = local.alerts
  project = var.project_id
  name    = "${var.name_prefix}/quarantined"
  # The first line `uniview sink` prints when a run ends (uniview.sink.summary.totals_line).
  filter = "textPayload=~\"^read=[0-9]+ written=[0-9]+ quarantined=[0-9]+\""

  metric_descriptor {
    metric_kind = "DELTA"
    value_type  = "DISTRIBUTION"
    unit        = "1"
  }
  value_extractor = "REGEXP_EXTRACT(textPayload, \"quarantined=([0-9]+)\")"
  bucket_options {
    exponential_buckets {
      num_finite_buckets = 16
      growth_factor      = 4
      scale              = 1
    }
  }
}

resource "google_logging_metric" "status_crossings" {
  count   = local.status_job
  project = var.project_id
  name    = "${var.name_prefix}/status_crossings"
  # `uniview status` names each family over a --fail-on threshold on stderr.
  filter = "resource.type=\"cloud_run_job\" AND resource.labels.job_name=\"${local.status_job_name}\" AND textPayload:\"crosses --fail-on\""

  metric_descriptor {
    metric_kind = "DELTA"
    value_type  = "INT64"
    unit        = "1"
    labels {
      key         = "family"
      value_type  = "STRING"
      description = "The family over a threshold."
    }
  }
  label_extractors = { family = "REGEXP_EXTRACT(textPayload, \"uniview: (\\\\S+): crosses\")" }
}

# ---------------------------------------------------------------------------
# Alert policies
# ---------------------------------------------------------------------------

resource "google_monitoring_alert_policy" "dead_letters" {
  count                 = local.alerts
  project               = var.project_id
  display_name          = "${var.name_prefix}: notifications dead-lettered"
  combiner              = "OR"
  notification_channels = var.notification_channels
  user_labels           = local.labels

  conditions {
    display_name = "dead-letter subscription backlog above ${var.dead_letter_backlog_threshold}"
    condition_threshold {
      filter          = "resource.type=\"pubsub_subscription\" AND resource.labels.subscription_id=\"${google_pubsub_subscription.dead_letter.name}\" AND metric.type=\"pubsub.googleapis.com/subscription/num_undelivered_messages\""
      comparison      = "COMPARISON_GT"
      threshold_value = var.dead_letter_backlog_threshold
      duration        = "300s"
      aggregations {
        alignment_period   = "300s"
        per_series_aligner = "ALIGN_MAX"
      }
    }
  }

  documentation {
    content   = "The function failed some notifications ${var.max_delivery_attempts} times. See docs/operations-runbook.md#dead-lettered-notifications."
    mime_type = "text/markdown"
  }
}

resource "google_monitoring_alert_policy" "function_errors" {
  count                 = local.alerts
  project               = var.project_id
  display_name          = "${var.name_prefix}: function errors"
  combiner              = "OR"
  notification_channels = var.notification_channels
  user_labels           = local.labels

  conditions {
    display_name = "the function answered 5xx"
    condition_threshold {
      filter          = "${local.function_log_filter} AND metric.type=\"run.googleapis.com/request_count\" AND metric.labels.response_code_class=\"5xx\""
      comparison      = "COMPARISON_GT"
      threshold_value = var.function_error_threshold
      duration        = "0s"
      aggregations {
        alignment_period     = "300s"
        per_series_aligner   = "ALIGN_SUM"
        cross_series_reducer = "REDUCE_SUM"
      }
    }
  }

  documentation {
    content   = "Refreshes fail and Pub/Sub redelivers. See docs/operations-runbook.md#function-errors-and-retries."
    mime_type = "text/markdown"
  }
}

resource "google_monitoring_alert_policy" "retries" {
  count                 = local.alerts
  project               = var.project_id
  display_name          = "${var.name_prefix}: notifications retried"
  combiner              = "OR"
  notification_channels = var.notification_channels
  user_labels           = local.labels

  conditions {
    display_name = "push deliveries not acknowledged"
    condition_threshold {
      filter          = "resource.type=\"pubsub_subscription\" AND resource.labels.subscription_id=\"${google_pubsub_subscription.function_push.name}\" AND metric.type=\"pubsub.googleapis.com/subscription/push_request_count\" AND metric.labels.response_class!=\"ack\""
      comparison      = "COMPARISON_GT"
      threshold_value = var.retry_threshold
      duration        = "0s"
      aggregations {
        alignment_period     = "900s"
        per_series_aligner   = "ALIGN_SUM"
        cross_series_reducer = "REDUCE_SUM"
      }
    }
  }

  documentation {
    content   = "The function did not acknowledge notifications; they come back with backoff. See docs/operations-runbook.md#function-errors-and-retries."
    mime_type = "text/markdown"
  }
}

resource "google_monitoring_alert_policy" "limit_warnings" {
  count                 = local.alerts
  project               = var.project_id
  display_name          = "${var.name_prefix}: a family nears BigQuery's limits"
  combiner              = "OR"
  notification_channels = var.notification_channels
  user_labels           = local.labels

  conditions {
    display_name = "limit warnings in the function's log"
    condition_threshold {
      filter          = "resource.type=\"cloud_run_revision\" AND metric.type=\"logging.googleapis.com/user/${google_logging_metric.limit_warnings[0].name}\""
      comparison      = "COMPARISON_GT"
      threshold_value = 0
      duration        = "0s"
      aggregations {
        alignment_period     = "3600s"
        per_series_aligner   = "ALIGN_SUM"
        cross_series_reducer = "REDUCE_SUM"
        group_by_fields      = ["metric.label.family"]
      }
    }
  }

  documentation {
    content   = "A family's queries use more than 80% of a per-query limit. See docs/operations-runbook.md#a-family-nears-bigquerys-limits."
    mime_type = "text/markdown"
  }
}

resource "google_monitoring_alert_policy" "stale_families" {
  count                 = local.status_job
  project               = var.project_id
  display_name          = "${var.name_prefix}: families stale, pending or near a limit"
  combiner              = "OR"
  notification_channels = var.notification_channels
  user_labels           = local.labels

  conditions {
    display_name = "uniview status names a family over --fail-on"
    condition_threshold {
      filter          = "resource.type=\"cloud_run_job\" AND metric.type=\"logging.googleapis.com/user/${google_logging_metric.status_crossings[0].name}\""
      comparison      = "COMPARISON_GT"
      threshold_value = 0
      duration        = "0s"
      aggregations {
        alignment_period     = "3600s"
        per_series_aligner   = "ALIGN_SUM"
        cross_series_reducer = "REDUCE_SUM"
        group_by_fields      = ["metric.label.family"]
      }
    }
  }

  conditions {
    display_name = "the status job failed for another reason"
    condition_threshold {
      filter          = "resource.type=\"cloud_run_job\" AND resource.labels.job_name=\"${local.status_job_name}\" AND metric.type=\"run.googleapis.com/job/completed_execution_count\" AND metric.labels.result=\"failed\""
      comparison      = "COMPARISON_GT"
      threshold_value = 0
      duration        = "0s"
      aggregations {
        alignment_period     = "3600s"
        per_series_aligner   = "ALIGN_SUM"
        cross_series_reducer = "REDUCE_SUM"
      }
    }
  }

  documentation {
    content   = "`uniview status --fail-on ${local.status_fail_on}` crossed a threshold. See docs/operations-runbook.md#stale-families."
    mime_type = "text/markdown"
  }
}

# ---------------------------------------------------------------------------
# The dashboard: events, latency, jobs per event, quarantine
# ---------------------------------------------------------------------------

resource "google_monitoring_dashboard" "uniview" {
  count   = local.alerts
  project = var.project_id
  dashboard_json = jsonencode({
    displayName = "${var.name_prefix}: unified views"
    mosaicLayout = {
      columns = 12
      tiles = [
        for index, tile in [
          {
            title   = "Events delivered to the function, by answer"
            filter  = "resource.type=\"pubsub_subscription\" AND resource.labels.subscription_id=\"${google_pubsub_subscription.function_push.name}\" AND metric.type=\"pubsub.googleapis.com/subscription/push_request_count\""
            aligner = "ALIGN_RATE", reducer = "REDUCE_SUM", group_by = ["metric.label.response_class"]
          },
          {
            title   = "Function latency (p95)"
            filter  = "resource.type=\"cloud_run_revision\" AND resource.labels.service_name=\"${local.function_service}\" AND metric.type=\"run.googleapis.com/request_latencies\""
            aligner = "ALIGN_PERCENTILE_95", reducer = "REDUCE_MAX", group_by = []
          },
          {
            title   = "BigQuery jobs per event (mean)"
            filter  = "metric.type=\"logging.googleapis.com/user/${google_logging_metric.refresh_jobs[0].name}\""
            aligner = "ALIGN_DELTA", reducer = "REDUCE_MEAN", group_by = ["metric.label.outcome"]
          },
          {
            title   = "Records quarantined by the sink"
            filter  = "metric.type=\"logging.googleapis.com/user/${google_logging_metric.quarantined[0].name}\""
            aligner = "ALIGN_DELTA", reducer = "REDUCE_SUM", group_by = []
          },
          {
            title   = "Dead-lettered notifications waiting"
            filter  = "resource.type=\"pubsub_subscription\" AND resource.labels.subscription_id=\"${google_pubsub_subscription.dead_letter.name}\" AND metric.type=\"pubsub.googleapis.com/subscription/num_undelivered_messages\""
            aligner = "ALIGN_MAX", reducer = "REDUCE_SUM", group_by = []
          },
          {
            title   = "Limit warnings, by family"
            filter  = "metric.type=\"logging.googleapis.com/user/${google_logging_metric.limit_warnings[0].name}\""
            aligner = "ALIGN_DELTA", reducer = "REDUCE_SUM", group_by = ["metric.label.family"]
          },
          ] : {
          xPos   = (index % 2) * 6
          yPos   = floor(index / 2) * 4
          width  = 6
          height = 4
          widget = {
            title = tile.title
            xyChart = {
              dataSets = [{
                plotType = "LINE"
                timeSeriesQuery = {
                  timeSeriesFilter = {
                    filter = tile.filter
                    aggregation = {
                      alignmentPeriod    = "300s"
                      perSeriesAligner   = tile.aligner
                      crossSeriesReducer = tile.reducer
                      groupByFields      = tile.group_by
                    }
                  }
                }
              }]
            }
          }
        }
      ]
    }
  })
}

# ---------------------------------------------------------------------------
# The status job: `uniview status --fail-on` on a schedule (status_job_image)
# ---------------------------------------------------------------------------

resource "google_service_account" "status" {
  count        = local.status_job
  project      = var.project_id
  account_id   = "${var.name_prefix}-status"
  display_name = "uniview status (scheduled --fail-on check)"
}

resource "google_cloud_run_v2_job" "status" {
  count    = local.status_job
  project  = var.project_id
  location = var.region
  name     = local.status_job_name
  labels   = local.labels

  template {
    task_count = length(var.source_datasets)
    template {
      service_account = google_service_account.status[0].email
      max_retries     = 0
      timeout         = "900s"
      containers {
        image   = var.status_job_image
        command = ["/bin/sh", "-c"]
        # Task N checks source dataset N; --json keeps stdout machine-readable in the job's log.
        args = [join(" ", [
          "set -- ${join(" ", var.source_datasets)}; shift $CLOUD_RUN_TASK_INDEX; dataset=$1;",
          "set -- ${join(" ", [for ds in var.source_datasets : local.target_datasets[ds]])}; shift $CLOUD_RUN_TASK_INDEX;",
          "exec uniview status --warehouse bigquery://${var.project_id} --dataset $dataset --target-dataset $1",
          "--all --json --fail-on ${local.status_fail_on}",
        ])]
      }
    }
  }

  depends_on = [google_project_service.enabled]
}

resource "google_cloud_scheduler_job" "status" {
  count       = local.status_job
  project     = var.project_id
  region      = var.region
  name        = "${var.name_prefix}-status"
  description = "Runs the ${local.status_job_name} Cloud Run job: uniview status --fail-on ${local.status_fail_on}."
  schedule    = var.status_schedule
  time_zone   = var.self_healing_time_zone

  http_target {
    http_method = "POST"
    uri         = "https://run.googleapis.com/v2/projects/${var.project_id}/locations/${var.region}/jobs/${local.status_job_name}:run"
    oauth_token {
      service_account_email = google_service_account.status[0].email
    }
  }

  depends_on = [google_cloud_run_v2_job.status]
}

# Scheduler starts the job as the status account: it may run this job and no other.
resource "google_cloud_run_v2_job_iam_member" "status_runner" {
  count    = local.status_job
  project  = var.project_id
  location = var.region
  name     = google_cloud_run_v2_job.status[0].name
  role     = "roles/run.invoker"
  member   = local.members.status
}

# Its query jobs run in the project: local.project_roles ("status-jobuser") grants roles/bigquery.jobUser.

# Reads the version tables' metadata and their _cdc_ingested_at and _cdc_database, and the quarantine.
# A dataset access entry, not an IAM member: that would drop the source dataset's authorized entries.
resource "google_bigquery_dataset_access" "status_source_reader" {
  for_each = local.status_job == 1 ? toset(var.source_datasets) : toset([])

  project       = var.project_id
  dataset_id    = each.key
  role          = "READER"
  user_by_email = google_service_account.status[0].email

  depends_on = [google_bigquery_dataset.source]
}

# Lists the unified views and reads their definitions and modification times.
resource "google_bigquery_dataset_iam_member" "status_target_metadata" {
  for_each   = local.status_job == 1 ? toset(var.source_datasets) : toset([])
  project    = var.project_id
  dataset_id = google_bigquery_dataset.target[each.key].dataset_id
  role       = "roles/bigquery.metadataViewer"
  member     = local.members.status
}
