# Table-created notifications: sink (and Cloud Scheduler) -> topic -> push subscription -> function.
#
# The function is invoked by a push subscription this module owns rather than by an Eventarc
# trigger: Eventarc creates and manages its own subscription, whose dead-letter policy Terraform
# cannot set. Here the subscription, its retry backoff, its bounded delivery attempts and its
# dead-letter topic are all declared below.

resource "google_pubsub_topic" "table_created" {
  #checkov:skip=CKV_GCP_83:Messages carry only dataset, table and version names (no row data); Google-managed encryption applies.
  project = var.project_id
  name    = "${var.name_prefix}-table-created"
  labels  = local.labels

  depends_on = [google_project_service.enabled]
}

resource "google_pubsub_topic" "dead_letter" {
  #checkov:skip=CKV_GCP_83:Holds the same name-only notifications as the main topic; Google-managed encryption applies.
  project = var.project_id
  name    = "${var.name_prefix}-table-created-dead-letter"
  labels  = local.labels

  depends_on = [google_project_service.enabled]
}

resource "google_pubsub_subscription" "function_push" {
  project = var.project_id
  name    = "${var.name_prefix}-refresh-push"
  topic   = google_pubsub_topic.table_created.id
  labels  = local.labels

  # A push request is outstanding until the function answers or this deadline passes.
  ack_deadline_seconds       = var.function_timeout_seconds
  message_retention_duration = "604800s"

  expiration_policy {
    ttl = "" # never expires while idle
  }

  # Any non-2xx answer (the function raising) is redelivered with exponential backoff ...
  retry_policy {
    minimum_backoff = "${var.retry_minimum_backoff_seconds}s"
    maximum_backoff = "${var.retry_maximum_backoff_seconds}s"
  }

  # ... at most max_delivery_attempts times, then parked on the dead-letter topic.
  dead_letter_policy {
    dead_letter_topic     = google_pubsub_topic.dead_letter.id
    max_delivery_attempts = var.max_delivery_attempts
  }

  push_config {
    push_endpoint = google_cloudfunctions2_function.refresh.service_config[0].uri

    oidc_token {
      service_account_email = google_service_account.push.email
      audience              = google_cloudfunctions2_function.refresh.service_config[0].uri
    }
  }

  depends_on = [
    google_cloud_run_v2_service_iam_member.push_invoker,
    google_service_account_iam_member.pubsub_push_token_creator,
  ]
}

# Dead-lettered notifications are kept for a week for inspection and replay; without a
# subscription a topic drops what it receives.
resource "google_pubsub_subscription" "dead_letter" {
  project = var.project_id
  name    = "${var.name_prefix}-table-created-dead-letter"
  topic   = google_pubsub_topic.dead_letter.id
  labels  = local.labels

  ack_deadline_seconds       = 60
  message_retention_duration = "604800s"

  expiration_policy {
    ttl = ""
  }
}

# The Pub/Sub service agent forwards undeliverable messages: it must publish to the dead-letter
# topic and acknowledge on the source subscription.
resource "google_pubsub_topic_iam_member" "dead_letter_publisher" {
  project = var.project_id
  topic   = google_pubsub_topic.dead_letter.name
  role    = "roles/pubsub.publisher"
  member  = local.pubsub_service_agent
}

resource "google_pubsub_subscription_iam_member" "dead_letter_source_subscriber" {
  project      = var.project_id
  subscription = google_pubsub_subscription.function_push.name
  role         = "roles/pubsub.subscriber"
  member       = local.pubsub_service_agent
}

# The Pub/Sub service agent signs the push request's OIDC token as the push identity.
resource "google_service_account_iam_member" "pubsub_push_token_creator" {
  service_account_id = google_service_account.push.name
  role               = "roles/iam.serviceAccountTokenCreator"
  member             = local.pubsub_service_agent
}

# The sink publishes table-created notifications to this topic only.
resource "google_pubsub_topic_iam_member" "sink_publisher" {
  project = var.project_id
  topic   = google_pubsub_topic.table_created.name
  role    = "roles/pubsub.publisher"
  member  = local.members.sink
}
