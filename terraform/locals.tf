# Values derived from the variables alone (no resource or data source): the tests evaluate
# this file offline, together with variables.tf, with `terraform console`.

locals {
  labels = merge({ "managed-by" = "terraform", "app" = "uniview" }, var.labels)

  # Source dataset name => target dataset name (the function's UNIVIEW_TARGET_DATASET template).
  target_datasets = {
    for ds in var.source_datasets : ds => replace(var.target_dataset_template, "{dataset}", ds)
  }

  has_sink_bucket = var.create_sink_bucket || var.sink_bucket_name != null

  apis = concat(
    [
      "artifactregistry.googleapis.com",
      "bigquery.googleapis.com",
      "cloudbuild.googleapis.com",
      "cloudfunctions.googleapis.com",
      "cloudresourcemanager.googleapis.com",
      "iam.googleapis.com",
      "logging.googleapis.com",
      "pubsub.googleapis.com",
      "run.googleapis.com",
      "storage.googleapis.com",
    ],
    var.self_healing_enabled ? ["cloudscheduler.googleapis.com"] : [],
    var.dataproc_mode == "none" ? [] : ["compute.googleapis.com", "dataproc.googleapis.com"],
  )

  # The checkout the function's zip is built from.
  source_root = coalesce(var.source_root, "${path.module}/..")

  # Path inside the zip => path on disk.
  function_files = merge(
    {
      for name in ["main.py", "requirements.txt"] :
      name => "${local.source_root}/functions/${name}"
    },
    {
      for path in fileset(local.source_root, "uniview/**/*.py") :
      path => "${local.source_root}/${path}"
    },
    {
      for path in fileset("${local.source_root}/sql_templates", "**") :
      "uniview/sql_templates/${path}" => "${local.source_root}/sql_templates/${path}"
      if !startswith(basename(path), ".")
    },
  )

  # The function's configuration (uniview.cloudfn.config.ENV_VARS). Values with a default in the
  # code are always set, so the deployed configuration states what it runs with; the optional
  # ones are set only when their variable is not null (never as an empty string).
  function_env_all = {
    UNIVIEW_WAREHOUSE             = "bigquery://${var.project_id}"
    UNIVIEW_TARGET_DATASET        = var.target_dataset_template
    UNIVIEW_POLICY                = var.policy
    UNIVIEW_MAX_VIEW_CHARS        = tostring(var.max_view_chars)
    UNIVIEW_DATETIME_TIMEZONE     = var.datetime_timezone
    UNIVIEW_SOURCE_COLUMN         = var.source_column
    UNIVIEW_CURRENT               = tostring(var.current_views)
    UNIVIEW_MAX_EVENT_AGE_SECONDS = tostring(var.max_event_age_seconds)
  }
  function_env = { for key, value in local.function_env_all : key => value if value != null }

  # The only project-level grants (iam.tf binds them): roles BigQuery, Dataproc, Cloud Build and
  # Cloud Logging offer on nothing narrower than the project.
  project_roles = merge(
    {
      # Query jobs (INFORMATION_SCHEMA reads, CREATE OR REPLACE VIEW) are created in a project;
      # bigquery.jobs.create has no dataset-level form.
      "function-jobuser" = { role = "roles/bigquery.jobUser", account = "function" }
      # The sink's load/query jobs, same reason.
      "sink-jobuser" = { role = "roles/bigquery.jobUser", account = "sink" }
      # Google's documented minimum for a custom Cloud Functions build identity (logs, image push,
      # source read). The image repository (gcf-artifacts) and the service's own source buckets
      # are created by Cloud Functions on first deploy, so no narrower binding can name them.
      "build-logwriter"     = { role = "roles/logging.logWriter", account = "build" }
      "build-artifacts"     = { role = "roles/artifactregistry.writer", account = "build" }
      "build-source-reader" = { role = "roles/storage.objectViewer", account = "build" }
    },
    var.dataproc_mode == "none" ? {} : {
      # Dataproc VMs and Serverless batches must run as an account holding roles/dataproc.worker
      # on the project (agent heartbeats, task leasing, driver output); it cannot be granted lower.
      "sink-dataproc-worker" = { role = "roles/dataproc.worker", account = "sink" }
    },
  )

  # Self-healing message per source dataset (Cloud Scheduler publishes it to the topic).
  full_refresh_messages = {
    for ds in var.source_datasets : ds => jsonencode({ dataset = ds, all = true })
  }
}
