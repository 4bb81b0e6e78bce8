# Everything uniview needs in one project: run `terraform apply` here, then submit the sink.
#
#   terraform init
#   terraform apply -var project_id=my-project

terraform {
  required_version = ">= 1.5"

  required_providers {
    google = {
      source  = "hashicorp/google"
      version = ">= 5.38, < 8.0"
    }
    google-beta = {
      source  = "hashicorp/google-beta"
      version = ">= 5.38, < 8.0"
    }
    time = {
      source  = "hashicorp/time"
      version = ">= 0.9"
    }
    archive = {
      source  = "hashicorp/archive"
      version = ">= 2.4"
    }
  }
}

provider "google" {
  project = var.project_id
  region  = var.region
}

provider "google-beta" {
  project = var.project_id
  region  = var.region
}

module "uniview" {
  source = "../"

  project_id        = var.project_id
  region            = var.region
  bigquery_location = var.bigquery_location
  source_datasets   = var.source_datasets
  view_readers      = var.view_readers

  # <table>_current: "off", "view" or "table" (kept incrementally by the function).
  current_views = var.current_views

  # Self-healing: a full refresh of every dataset once an hour.
  self_healing_enabled  = var.self_healing_enabled
  self_healing_schedule = "17 * * * *"

  # By default the sink runs as Dataproc Serverless batches; its code is uploaded to
  # gs://<sink bucket>/code/.
  dataproc_mode        = var.dataproc_mode
  create_sink_bucket   = var.create_sink_bucket
  consolidate_idle_for = var.consolidate_idle_for
  sink_code_files      = var.sink_code_files
  sink_input_buckets   = var.sink_input_buckets
}
