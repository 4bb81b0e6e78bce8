output "topic_id" {
  description = "Topic for table-created notifications (projects/P/topics/T)."
  value       = google_pubsub_topic.table_created.id
}

output "notify_url" {
  description = "Value for the sink's --notify option."
  value       = "pubsub://${var.project_id}/${google_pubsub_topic.table_created.name}"
}

output "warehouse_url" {
  description = "Value for --warehouse / UNIVIEW_WAREHOUSE."
  value       = "bigquery://${var.project_id}"
}

output "dead_letter_topic_id" {
  description = "Topic receiving notifications the function failed max_delivery_attempts times."
  value       = google_pubsub_topic.dead_letter.id
}

output "dead_letter_subscription_id" {
  description = "Pull subscription that keeps dead-lettered notifications for 7 days."
  value       = google_pubsub_subscription.dead_letter.id
}

output "push_subscription_id" {
  description = "Push subscription that delivers notifications to the function."
  value       = google_pubsub_subscription.function_push.id
}

output "function_name" {
  description = "Name of the refresh Cloud Function."
  value       = google_cloudfunctions2_function.refresh.name
}

output "function_uri" {
  description = "URL of the function's Cloud Run service (reachable per function_ingress_settings, callers need run.invoker)."
  value       = google_cloudfunctions2_function.refresh.service_config[0].uri
}

output "function_service_account_email" {
  description = "Identity of the refresh function."
  value       = google_service_account.function.email
}

output "sink_service_account_email" {
  description = "Identity to run the Dataproc sink as (--service-account)."
  value       = google_service_account.sink.email
}

output "push_service_account_email" {
  description = "Identity in the OIDC token of push deliveries to the function."
  value       = google_service_account.push.email
}

output "build_service_account_email" {
  description = "Cloud Build identity of the function."
  value       = google_service_account.build.email
}

output "function_source_bucket" {
  description = "Bucket holding the function's source zips."
  value       = google_storage_bucket.function_source.name
}

output "sink_bucket" {
  description = "Bucket for the sink's code (code/), checkpoints and Dataproc staging; null when there is none."
  value       = local.has_sink_bucket ? local.sink_bucket_name : null
}

output "source_datasets" {
  description = "Datasets the sink writes version tables into."
  value       = var.source_datasets
}

output "target_datasets" {
  description = "Source dataset => dataset holding its *_unified views."
  value       = { for ds, target in local.target_datasets : ds => google_bigquery_dataset.target[ds].dataset_id }
}

output "scheduler_jobs" {
  description = "Source dataset => Cloud Scheduler job publishing its periodic full refresh."
  value       = { for ds, job in google_cloud_scheduler_job.full_refresh : ds => job.id }
}

output "dataproc_cluster_name" {
  description = "Dataproc cluster for the sink (dataproc_mode = cluster), else null."
  value       = var.dataproc_mode == "cluster" ? google_dataproc_cluster.sink[0].name : null
}

output "dataproc_serverless" {
  description = "Settings for `gcloud dataproc batches submit pyspark` (dataproc_mode = serverless), else null."
  value = var.dataproc_mode == "serverless" ? {
    region          = var.region
    service_account = google_service_account.sink.email
    subnet          = var.dataproc_subnetwork
    version         = var.dataproc_runtime_version
    deps_bucket     = local.has_sink_bucket ? "gs://${local.sink_bucket_name}" : null
    # For --properties: the sink's Spark properties as KEY=VALUE,KEY=VALUE.
    properties = join(",", [for key, value in local.sink_spark_properties : "${key}=${value}"])
  } : null
}

output "alert_policy_ids" {
  description = "The alert policies (alerts_enabled), by what they watch: dead_letters, function_errors, retries, limit_warnings, stale_families."
  value = var.alerts_enabled ? merge(
    {
      dead_letters    = google_monitoring_alert_policy.dead_letters[0].id
      function_errors = google_monitoring_alert_policy.function_errors[0].id
      retries         = google_monitoring_alert_policy.retries[0].id
      limit_warnings  = google_monitoring_alert_policy.limit_warnings[0].id
    },
    local.status_job == 1 ? { stale_families = google_monitoring_alert_policy.stale_families[0].id } : {}
  ) : {}
}

output "dashboard_id" {
  description = "The dashboard (alerts_enabled), or null."
  value       = var.alerts_enabled ? google_monitoring_dashboard.uniview[0].id : null
}
