# Self-healing: a periodic "refresh every family" message per source dataset, delivered through
# the same topic and subscription as the sink's notifications. If a notification was lost, the
# next run brings the views up to date; when nothing changed, the function replaces nothing.
# Cloud Scheduler publishes as its own service agent, whose role includes pubsub.topics.publish.

resource "google_cloud_scheduler_job" "full_refresh" {
  for_each = var.self_healing_enabled ? toset(var.source_datasets) : toset([])

  project     = var.project_id
  region      = var.region
  name        = "${var.name_prefix}-full-refresh-${each.key}"
  description = "Publishes {\"dataset\": \"${each.key}\", \"all\": true}: refresh every unified view of ${each.key}."
  schedule    = var.self_healing_schedule
  time_zone   = var.self_healing_time_zone

  pubsub_target {
    topic_name = google_pubsub_topic.table_created.id
    data       = base64encode(local.full_refresh_messages[each.key])
  }

  depends_on = [google_project_service.enabled]
}
