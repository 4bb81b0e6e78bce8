locals {
  # Google-managed service agent of Pub/Sub (dead-lettering, OIDC tokens of push deliveries),
  # created explicitly below so that a first apply on a new project does not grant roles to an
  # agent that does not exist yet.
  pubsub_service_agent = "serviceAccount:${google_project_service_identity.pubsub.email}"

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

# Makes sure the Pub/Sub service agent exists before it is granted anything (on a new project it
# is provisioned asynchronously after the API is enabled). Only the google-beta provider has it.
resource "google_project_service_identity" "pubsub" {
  provider = google-beta

  project = var.project_id
  service = "pubsub.googleapis.com"

  depends_on = [google_project_service.enabled]
}
