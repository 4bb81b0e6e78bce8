data "google_project" "this" {
  project_id = var.project_id
}

locals {
  # Google-managed service agent of Pub/Sub (dead-lettering, OIDC tokens of push deliveries).
  pubsub_service_agent = "serviceAccount:service-${data.google_project.this.number}@gcp-sa-pubsub.iam.gserviceaccount.com"

  sink_bucket_name = (
    var.create_sink_bucket
    ? google_storage_bucket.sink[0].name
    : var.sink_bucket_name
  )
}

resource "google_project_service" "enabled" {
  for_each = var.enable_apis ? toset(local.apis) : toset([])

  project            = var.project_id
  service            = each.key
  disable_on_destroy = false
}
