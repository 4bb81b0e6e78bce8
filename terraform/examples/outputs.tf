output "notify_url" {
  description = "Pass to the sink as --notify."
  value       = module.uniview.notify_url
}

output "warehouse_url" {
  description = "Pass to the sink and the CLI as --warehouse."
  value       = module.uniview.warehouse_url
}

output "topic_id" {
  description = "Table-created topic."
  value       = module.uniview.topic_id
}

output "dead_letter_subscription_id" {
  description = "Where notifications the function kept failing on are kept."
  value       = module.uniview.dead_letter_subscription_id
}

output "function_name" {
  description = "Refresh function."
  value       = module.uniview.function_name
}

output "sink_bucket" {
  description = "Bucket for the sink's code and checkpoints."
  value       = module.uniview.sink_bucket
}

output "sink_service_account_email" {
  description = "Run the sink as this service account."
  value       = module.uniview.sink_service_account_email
}

output "function_service_account_email" {
  description = "Identity of the refresh function."
  value       = module.uniview.function_service_account_email
}

output "target_datasets" {
  description = "Source dataset => dataset of its *_unified views."
  value       = module.uniview.target_datasets
}

output "dataproc_serverless" {
  description = "Settings for gcloud dataproc batches submit."
  value       = module.uniview.dataproc_serverless
}
