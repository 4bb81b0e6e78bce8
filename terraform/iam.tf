# Service accounts, the project-level grants listed in local.project_roles (locals.tf), and the
# custom role for authorized-dataset view writing. Dataset-, topic-, subscription-, bucket- and
# service-scoped grants live next to the resource they are scoped to (bigquery.tf, pubsub.tf,
# function.tf, sink.tf).

resource "google_service_account" "function" {
  project      = var.project_id
  account_id   = "${var.name_prefix}-fn"
  display_name = "uniview refresh function"
  description  = "Runs the Cloud Function that creates and replaces the *_unified views."

  depends_on = [google_project_service.enabled]
}

resource "google_service_account" "sink" {
  project      = var.project_id
  account_id   = "${var.name_prefix}-sink"
  display_name = "uniview sink"
  description  = "Runs the Dataproc sink: writes version tables into the source datasets and publishes table-created notifications."

  depends_on = [google_project_service.enabled]
}

resource "google_service_account" "push" {
  project      = var.project_id
  account_id   = "${var.name_prefix}-push"
  display_name = "uniview Pub/Sub push identity"
  description  = "Identity in the OIDC token Pub/Sub attaches when it pushes a notification to the function. May only invoke that function."

  depends_on = [google_project_service.enabled]
}

resource "google_service_account" "build" {
  project      = var.project_id
  account_id   = "${var.name_prefix}-build"
  display_name = "uniview function build"
  description  = "Cloud Build identity that turns the function source into a container image."

  depends_on = [google_project_service.enabled]
}

locals {
  members = {
    function = "serviceAccount:${google_service_account.function.email}"
    sink     = "serviceAccount:${google_service_account.sink.email}"
    push     = "serviceAccount:${google_service_account.push.email}"
    build    = "serviceAccount:${google_service_account.build.email}"
    # The scheduled `uniview status` (monitoring.tf), when there is one.
    status = one([for account in google_service_account.status : "serviceAccount:${account.email}"])
  }
}

resource "google_project_iam_member" "project_roles" {
  for_each = local.project_roles

  project = var.project_id
  role    = each.value.role
  member  = local.members[each.value.account]

  dynamic "condition" {
    for_each = each.value.condition == null ? [] : [each.value.condition]
    content {
      title      = condition.value.title
      expression = condition.value.expression
    }
  }

  depends_on = [time_sleep.custom_roles_propagated]
}

# roles/dataproc.worker without its storage.* permissions (see local.project_roles). The list is
# the predefined role's (https://cloud.google.com/iam/docs/understanding-roles#dataproc.worker)
# less storage.buckets.get and storage.objects.create/delete/get/list/update.
resource "google_project_iam_custom_role" "dataproc_worker" {
  count = var.dataproc_mode == "none" ? 0 : 1

  project     = var.project_id
  role_id     = "${replace(var.name_prefix, "-", "_")}_dataproc_worker"
  title       = "uniview Dataproc worker without storage"
  description = "roles/dataproc.worker without storage permissions; the sink reaches only its own buckets, through bucket-level grants."
  permissions = local.dataproc_worker_permissions

  depends_on = [google_project_service.enabled]
}

# A custom role can be refused for a short while after it is created (IAM is eventually
# consistent), so grants and dataset access entries that name one wait for this.
resource "time_sleep" "custom_roles_propagated" {
  create_duration = "60s"

  triggers = {
    authorized_view_writer = google_project_iam_custom_role.authorized_view_writer.id
    dataproc_worker        = join(",", google_project_iam_custom_role.dataproc_worker[*].id)
    consolidator           = join(",", google_project_iam_custom_role.consolidator[*].id)
  }
}

# BigQuery lets only principals holding bigquery.datasets.update on a shared dataset create or
# replace views inside a dataset authorized on it. No predefined role grants that without also
# granting table deletion (roles/bigquery.dataOwner), so the function gets exactly these two
# permissions, bound on each source dataset only (bigquery.tf).
resource "google_project_iam_custom_role" "authorized_view_writer" {
  project     = var.project_id
  role_id     = "${replace(var.name_prefix, "-", "_")}_authorized_view_writer"
  title       = "uniview authorized view writer"
  description = "Create or replace views in a dataset authorized on this dataset (bigquery.datasets.get and bigquery.datasets.update)."
  permissions = ["bigquery.datasets.get", "bigquery.datasets.update"]

  depends_on = [google_project_service.enabled]
}

# Scheduled consolidation (consolidate_idle_for) moves rows between the version tables of a source
# dataset: it creates the consolidated table, inserts and deletes rows, labels folded tables, and
# keeps its registry in the sink's control dataset. Exactly those permissions, bound on those
# datasets only (bigquery.tf); dropping folded tables stays a manual `uniview consolidate --drop-folded`.
resource "google_project_iam_custom_role" "consolidator" {
  count = var.consolidate_idle_for == null ? 0 : 1

  project     = var.project_id
  role_id     = "${replace(var.name_prefix, "-", "_")}_consolidator"
  title       = "uniview consolidator"
  description = "Fold old version tables into a consolidated table: create it, move rows, label folded tables."
  permissions = ["bigquery.tables.create", "bigquery.tables.get", "bigquery.tables.getData",
  "bigquery.tables.update", "bigquery.tables.updateData"]

  depends_on = [google_project_service.enabled]
}
