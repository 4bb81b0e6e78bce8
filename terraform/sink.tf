# Optional pieces for the PySpark sink: a bucket for its code, checkpoints and Dataproc staging
# files, and either a Dataproc cluster or the settings for Dataproc Serverless batches.

resource "google_storage_bucket" "sink" {
  #checkov:skip=CKV_GCP_62:Cloud Audit Logs record access to the sink's code and checkpoints; a separate access-log bucket is left to the deployment's own logging policy.
  count = var.create_sink_bucket ? 1 : 0

  project  = var.project_id
  name     = coalesce(var.sink_bucket_name, "${var.project_id}-${var.name_prefix}-sink")
  location = var.region
  labels   = local.labels

  uniform_bucket_level_access = true
  public_access_prevention    = "enforced"
  # Checkpoints are state: terraform destroy fails instead of deleting them.
  force_destroy = false

  versioning {
    enabled = true
  }

  # Checkpoint files are rewritten constantly; keep replaced versions only briefly.
  lifecycle_rule {
    condition {
      days_since_noncurrent_time = var.sink_bucket_noncurrent_days
    }
    action {
      type = "Delete"
    }
  }

  depends_on = [google_project_service.enabled]
}

resource "google_storage_bucket_iam_member" "sink_object_admin" {
  count = local.has_sink_bucket ? 1 : 0

  bucket = local.sink_bucket_name
  role   = "roles/storage.objectAdmin"
  member = local.members.sink
}

resource "google_storage_bucket_iam_member" "sink_input_reader" {
  for_each = toset(var.sink_input_buckets)

  bucket = each.key
  role   = "roles/storage.objectViewer"
  member = local.members.sink
}

resource "google_storage_bucket_object" "sink_code" {
  for_each = var.sink_code_files

  name   = "code/${each.key}"
  bucket = local.sink_bucket_name
  source = each.value

  lifecycle {
    precondition {
      condition     = local.has_sink_bucket
      error_message = "sink_code_files needs a sink bucket: set create_sink_bucket = true or sink_bucket_name."
    }
  }
}

resource "google_dataproc_cluster" "sink" {
  #checkov:skip=CKV_GCP_91:Disks hold only Spark shuffle and scratch data of the running job; Google-managed encryption applies. Set a CMEK through your own cluster definition if policy requires it.
  count = var.dataproc_mode == "cluster" ? 1 : 0

  project = var.project_id
  region  = var.region
  name    = "${var.name_prefix}-sink"
  labels  = local.labels

  cluster_config {
    staging_bucket = local.sink_bucket_name
    temp_bucket    = local.sink_bucket_name

    gce_cluster_config {
      service_account        = google_service_account.sink.email
      service_account_scopes = ["cloud-platform"]
      subnetwork             = var.dataproc_subnetwork
      internal_ip_only       = true

      shielded_instance_config {
        enable_secure_boot          = true
        enable_vtpm                 = true
        enable_integrity_monitoring = true
      }
    }

    master_config {
      num_instances = 1
      machine_type  = var.dataproc_cluster.master_machine_type
      disk_config {
        boot_disk_size_gb = var.dataproc_cluster.boot_disk_size_gb
      }
    }

    worker_config {
      num_instances = var.dataproc_cluster.num_workers
      machine_type  = var.dataproc_cluster.worker_machine_type
      disk_config {
        boot_disk_size_gb = var.dataproc_cluster.boot_disk_size_gb
      }
    }

    software_config {
      image_version = var.dataproc_cluster.image_version
      override_properties = merge(
        { for key, value in local.sink_spark_properties : "spark:${key}" => value },
        var.dataproc_cluster.num_workers == 0 ? { "dataproc:dataproc.allow.zero.workers" = "true" } : {},
      )
    }

    lifecycle_config {
      idle_delete_ttl = "${var.dataproc_cluster.idle_delete_ttl_seconds}s"
    }
  }

  lifecycle {
    precondition {
      condition     = local.has_sink_bucket
      error_message = "dataproc_mode = cluster needs a sink bucket for staging: set create_sink_bucket = true or sink_bucket_name."
    }
  }

  depends_on = [
    google_project_iam_member.project_roles,
    google_storage_bucket_iam_member.sink_object_admin,
  ]
}
