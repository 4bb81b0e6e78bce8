# Source datasets hold the version tables; target datasets hold the generated views and are
# authorized on their source dataset, so readers of a *_unified view need no grant on the
# version tables.
#
# Every grant on a SOURCE dataset is a google_bigquery_dataset_access entry: the
# google_bigquery_dataset_iam_* resources rewrite the dataset's access list and drop
# authorized-dataset entries from it. Legacy role names (READER, WRITER) are written where a
# predefined role has one, because the API always answers with them (no permanent diff):
# READER = roles/bigquery.dataViewer, WRITER = roles/bigquery.dataEditor, both on that dataset only.

resource "google_bigquery_dataset" "source" {
  #checkov:skip=CKV_GCP_81:Customer-managed encryption is opt-in through var.bigquery_kms_key_name; without it Google-managed encryption applies.
  for_each = var.create_source_datasets ? toset(var.source_datasets) : toset([])

  project     = var.project_id
  dataset_id  = each.key
  location    = var.bigquery_location
  description = "CDC version tables (<table>_v_<version>) written by the uniview sink."
  labels      = local.labels

  # Raw CDC data: never dropped by terraform destroy while tables remain.
  delete_contents_on_destroy = false

  dynamic "default_encryption_configuration" {
    for_each = var.bigquery_kms_key_name == null ? [] : [var.bigquery_kms_key_name]
    content {
      kms_key_name = default_encryption_configuration.value
    }
  }

  depends_on = [google_project_service.enabled]
}

resource "google_bigquery_dataset" "target" {
  #checkov:skip=CKV_GCP_81:Customer-managed encryption is opt-in through var.bigquery_kms_key_name; without it Google-managed encryption applies.
  for_each = local.target_datasets

  project     = var.project_id
  dataset_id  = each.value
  location    = var.bigquery_location
  description = "UNION ALL views over every schema version of the tables in ${each.key}, maintained by uniview."
  labels      = local.labels

  # Only generated views live here, and with current_views = "table" the <table>_current tables and
  # their hidden state: the function recreates all of them from the source dataset.
  delete_contents_on_destroy = true

  # current_views = "table" stores rows here (copies of the source's): the same key as the source.
  dynamic "default_encryption_configuration" {
    for_each = var.bigquery_kms_key_name == null ? [] : [var.bigquery_kms_key_name]
    content {
      kms_key_name = default_encryption_configuration.value
    }
  }

  lifecycle {
    precondition {
      condition     = length(distinct(values(local.target_datasets))) == length(local.target_datasets)
      error_message = "target_dataset_template maps two source datasets to the same target dataset; include {dataset} in it."
    }
    precondition {
      condition     = length(setintersection(toset(values(local.target_datasets)), toset(var.source_datasets))) == 0
      error_message = "A target dataset must not be one of the source datasets."
    }
  }

  depends_on = [google_project_service.enabled]
}

# The target dataset's views may read the source dataset's tables.
resource "google_bigquery_dataset_access" "authorized_target" {
  for_each = local.target_datasets

  project    = var.project_id
  dataset_id = each.key

  dataset {
    dataset {
      project_id = var.project_id
      dataset_id = google_bigquery_dataset.target[each.key].dataset_id
    }
    target_types = ["VIEWS"]
  }

  depends_on = [google_bigquery_dataset.source]
}

# The function reads column metadata (INFORMATION_SCHEMA) and must be able to read the tables a
# view selects from: BigQuery refuses to create a view over tables its creator cannot read.
resource "google_bigquery_dataset_access" "function_source_reader" {
  for_each = toset(var.source_datasets)

  project       = var.project_id
  dataset_id    = each.key
  role          = "READER"
  user_by_email = google_service_account.function.email

  depends_on = [google_bigquery_dataset.source]
}

# Creating a view inside an authorized dataset needs bigquery.datasets.update on the shared
# (source) dataset; see google_project_iam_custom_role.authorized_view_writer.
resource "google_bigquery_dataset_access" "function_source_authorizer" {
  for_each = toset(var.source_datasets)

  project       = var.project_id
  dataset_id    = each.key
  role          = google_project_iam_custom_role.authorized_view_writer.name
  user_by_email = google_service_account.function.email

  depends_on = [google_bigquery_dataset.source, time_sleep.custom_roles_propagated]
}

# Scheduled consolidation (consolidate_idle_for only): see google_project_iam_custom_role.consolidator.
resource "google_bigquery_dataset_access" "function_consolidator" {
  for_each = local.consolidated_datasets

  project       = var.project_id
  dataset_id    = each.key
  role          = google_project_iam_custom_role.consolidator[0].name
  user_by_email = google_service_account.function.email

  depends_on = [google_bigquery_dataset.source, time_sleep.custom_roles_propagated]
}

# current_views = "table": the function reads the sink's batch ledger (_uniview_batches,
# _uniview_batch_steps) to maintain each <table>_current after every batch it is told of.
resource "google_bigquery_dataset_access" "function_ledger_reader" {
  for_each = local.ledger_datasets

  project       = var.project_id
  dataset_id    = each.key
  role          = "READER"
  user_by_email = google_service_account.function.email

  depends_on = [google_bigquery_dataset.source]
}

# The sink creates version tables and appends rows to them.
resource "google_bigquery_dataset_access" "sink_source_writer" {
  for_each = toset(var.source_datasets)

  project       = var.project_id
  dataset_id    = each.key
  role          = "WRITER"
  user_by_email = google_service_account.sink.email

  depends_on = [google_bigquery_dataset.source]
}

# Target datasets carry no authorized-resource entries, so IAM members are safe there.
# roles/bigquery.dataEditor on the target dataset only: create and replace views, and, for
# current_views = "table", create the <table>_current tables and their state, MERGE/INSERT/DELETE
# their rows in one transaction (tables.create, tables.get, tables.getData, tables.update,
# tables.updateData) and rebuild them (tables.delete); the narrowest predefined role that has them.
resource "google_bigquery_dataset_iam_member" "function_target_editor" {
  for_each = local.target_datasets

  project    = var.project_id
  dataset_id = google_bigquery_dataset.target[each.key].dataset_id
  role       = "roles/bigquery.dataEditor"
  member     = local.members.function
}

resource "google_bigquery_dataset_iam_member" "target_readers" {
  for_each = {
    for pair in setproduct(keys(local.target_datasets), var.view_readers) :
    "${pair[0]} ${pair[1]}" => { source = pair[0], member = pair[1] }
  }

  project    = var.project_id
  dataset_id = google_bigquery_dataset.target[each.value.source].dataset_id
  role       = "roles/bigquery.dataViewer"
  member     = each.value.member
}
