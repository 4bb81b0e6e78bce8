# The refresh function: functions/main.py (entry point `handler`) plus the uniview package,
# zipped from the checkout, uploaded under a content-addressed name, built on python311.

data "archive_file" "function_source" {
  type             = "zip"
  output_path      = "${path.root}/.terraform/uniview-function-source.zip"
  output_file_mode = "0644"

  dynamic "source" {
    for_each = local.function_files
    content {
      filename = source.key
      content  = file(source.value)
    }
  }

  lifecycle {
    precondition {
      condition     = fileexists("${local.source_root}/uniview/__init__.py")
      error_message = "source_root does not point at a uniview checkout (uniview/__init__.py is missing)."
    }
    precondition {
      condition     = contains(keys(local.function_files), "uniview/sql_templates/union_view.sql.j2")
      error_message = "sql_templates/union_view.sql.j2 is missing from the checkout; the function could not render views."
    }
  }
}

resource "google_storage_bucket" "function_source" {
  #checkov:skip=CKV_GCP_62:Holds only the function's source zips, written by Terraform; Cloud Audit Logs record access, a second access-log bucket adds nothing.
  project  = var.project_id
  name     = "${var.project_id}-${var.name_prefix}-fn-src"
  location = var.region
  labels   = local.labels

  uniform_bucket_level_access = true
  public_access_prevention    = "enforced"
  # Holds only build inputs that Terraform re-creates from the checkout.
  force_destroy = true

  versioning {
    enabled = true
  }

  lifecycle_rule {
    condition {
      days_since_noncurrent_time = 30
    }
    action {
      type = "Delete"
    }
  }

  depends_on = [google_project_service.enabled]
}

resource "google_storage_bucket_object" "function_source" {
  # Content-addressed: a changed checkout yields a new object and therefore a new build.
  name         = "function-source/${data.archive_file.function_source.output_md5}.zip"
  bucket       = google_storage_bucket.function_source.name
  source       = data.archive_file.function_source.output_path
  content_type = "application/zip"
}

resource "google_cloudfunctions2_function" "refresh" {
  project     = var.project_id
  location    = var.region
  name        = "${var.name_prefix}-refresh"
  description = "Creates or replaces the *_unified views of the tables named in a table-created notification."
  labels      = local.labels

  build_config {
    runtime         = "python311"
    entry_point     = "handler"
    service_account = google_service_account.build.id

    source {
      storage_source {
        bucket = google_storage_bucket.function_source.name
        object = google_storage_bucket_object.function_source.name
      }
    }
  }

  # No event_trigger: a push subscription (pubsub.tf) delivers the notifications.
  service_config {
    available_memory                 = var.function_memory
    timeout_seconds                  = var.function_timeout_seconds
    min_instance_count               = 0
    max_instance_count               = var.function_max_instances
    max_instance_request_concurrency = 1
    ingress_settings                 = var.function_ingress_settings
    all_traffic_on_latest_revision   = true
    service_account_email            = google_service_account.function.email
    environment_variables            = local.function_env
  }

  depends_on = [google_project_iam_member.project_roles]
}

# The push identity may invoke this function's Cloud Run service and nothing else.
resource "google_cloud_run_v2_service_iam_member" "push_invoker" {
  project  = var.project_id
  location = var.region
  name     = google_cloudfunctions2_function.refresh.service_config[0].service
  role     = "roles/run.invoker"
  member   = local.members.push
}

# The build reads the function's source archive from this bucket, and nothing else of the module's.
resource "google_storage_bucket_iam_member" "build_source_reader" {
  bucket = google_storage_bucket.function_source.name
  role   = "roles/storage.objectViewer"
  member = local.members.build
}
