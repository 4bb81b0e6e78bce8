# Values derived from the variables alone (no resource or data source): the tests evaluate
# this file offline, together with variables.tf, with `terraform console`.

locals {
  labels = merge({ "managed-by" = "terraform", "app" = "uniview" }, var.labels)

  # Source dataset name => target dataset name (the function's UNIVIEW_TARGET_DATASET template).
  target_datasets = {
    for ds in var.source_datasets : ds => replace(var.target_dataset_template, "{dataset}", ds)
  }

  has_sink_bucket = var.create_sink_bucket || var.sink_bucket_name != null

  # Spark properties of every sink job (uniview.sink.job.JVM_PROPERTIES holds the same, and a test
  # compares them): Spark's generated code for a batch (Debezium's conversion above all) may pass
  # HotSpot's 8,000-byte limit for JIT compilation, which this JVM option lifts.
  sink_spark_properties = {
    "spark.driver.extraJavaOptions"   = "-XX:-DontCompileHugeMethods"
    "spark.executor.extraJavaOptions" = "-XX:-DontCompileHugeMethods"
  }

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
    var.self_healing_enabled || (var.alerts_enabled && var.status_job_image != null) ? ["cloudscheduler.googleapis.com"] : [],
    var.alerts_enabled ? ["monitoring.googleapis.com"] : [],
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
    UNIVIEW_WAREHOUSE                   = "bigquery://${var.project_id}"
    UNIVIEW_TARGET_DATASET              = var.target_dataset_template
    UNIVIEW_POLICY                      = var.policy
    UNIVIEW_MAX_VIEW_CHARS              = tostring(var.max_view_chars)
    UNIVIEW_DATETIME_TIMEZONE           = var.datetime_timezone
    UNIVIEW_SOURCE_COLUMN               = var.source_column
    UNIVIEW_CURRENT                     = lookup({ "true" = "view", "false" = "off" }, lower(var.current_views), lower(var.current_views))
    UNIVIEW_RENAMES                     = length(var.renames) == 0 ? null : jsonencode({ uniview_renames = 1, renames = var.renames })
    UNIVIEW_MAX_EVENT_AGE_SECONDS       = tostring(var.max_event_age_seconds)
    UNIVIEW_MAX_STALENESS               = "${var.max_staleness_seconds}s"
    UNIVIEW_CONSOLIDATE_IDLE_FOR        = var.consolidate_idle_for
    UNIVIEW_CONSOLIDATE_MAX_VERSIONS    = tostring(var.consolidate_max_versions)
    UNIVIEW_CONSOLIDATE_SETTLE          = var.consolidate_settle
    UNIVIEW_CONSOLIDATE_CONTROL_DATASET = var.sink_control_dataset
    # Where the function reads the sink's batch ledger for current_views = "table" (null: each source dataset).
    UNIVIEW_CONTROL_DATASET = var.sink_control_dataset
  }
  # current_views = "table": the function reads the sink's batch ledger (which batches landed, with
  # their ingestion ranges) in the sink's control dataset, or in each source dataset when that is null,
  # where function_source_reader already grants READER: one access entry per dataset and role, since two
  # resources managing the same entry would remove it for both when either is destroyed.
  ledger_datasets = (lower(var.current_views) != "table" || var.sink_control_dataset == null ? toset([]) :
  setsubtract(toset([var.sink_control_dataset]), toset(var.source_datasets)))
  # Scheduled consolidation writes the source datasets (and the sink's control dataset) it folds.
  consolidated_datasets = var.consolidate_idle_for == null ? toset([]) : setunion(
  toset(var.source_datasets), var.sink_control_dataset == null ? toset([]) : toset([var.sink_control_dataset]))
  function_env = { for key, value in local.function_env_all : key => value if value != null }

  # The only project-level grants (iam.tf binds them): roles BigQuery, Dataproc, Cloud Build and
  # Cloud Logging offer on nothing narrower than the project.
  project_roles = merge(
    {
      # Query jobs (INFORMATION_SCHEMA reads, CREATE OR REPLACE VIEW) are created in a project;
      # bigquery.jobs.create has no dataset-level form.
      "function-jobuser" = { role = "roles/bigquery.jobUser", account = "function", condition = null }
      # The sink's load/query jobs, same reason.
      "sink-jobuser" = { role = "roles/bigquery.jobUser", account = "sink", condition = null }
      # Google's documented minimum for a custom Cloud Functions build identity: logs, image push,
      # source read. Cloud Functions creates the image repository (gcf-artifacts) and its source
      # bucket (gcf-v2-sources-<project number>-<region>) on first deploy, so the two grants are
      # project-level with an IAM condition naming exactly those resources.
      "build-logwriter" = { role = "roles/logging.logWriter", account = "build", condition = null }
      "build-artifacts" = {
        role = "roles/artifactregistry.writer", account = "build",
        condition = {
          title      = "gcf-artifacts repository only"
          expression = "resource.name.startsWith(\"projects/${var.project_id}/locations/${var.region}/repositories/gcf-artifacts\")"
        }
      }
      "build-source-reader" = {
        role = "roles/storage.objectViewer", account = "build",
        condition = {
          title      = "Cloud Functions source bucket only"
          expression = "resource.name.startsWith(\"projects/_/buckets/gcf-v2-sources-\")"
        }
      }
    },
    var.dataproc_mode == "none" ? {} : {
      # Dataproc VMs and Serverless batches must run as an account holding the Dataproc worker
      # permissions on the project (agent heartbeats, task leasing, metrics, logs). roles/dataproc.worker
      # also carries storage.objects.*, project-wide; this custom role has its permissions without
      # storage (iam.tf), and the sink reaches storage only through bucket-level grants (sink.tf).
      "sink-dataproc-worker" = { role = local.dataproc_worker_role, account = "sink", condition = null }
    },
    var.alerts_enabled && var.status_job_image != null ? {
      # The scheduled `uniview status` (monitoring.tf) reads metadata and CDC columns with query jobs.
      "status-jobuser" = { role = "roles/bigquery.jobUser", account = "status", condition = null }
    } : {},
  )
  dataproc_worker_permissions = [
    "compute.machineTypes.get", "compute.machineTypes.list", "compute.networks.get", "compute.networks.list",
    "compute.projects.get", "compute.regions.get", "compute.regions.list", "compute.zones.get", "compute.zones.list",
    "dataproc.agents.create", "dataproc.agents.delete", "dataproc.agents.get", "dataproc.agents.list",
    "dataproc.agents.update", "dataproc.tasks.lease", "dataproc.tasks.listInvalidatedLeases",
    "dataproc.tasks.reportStatus", "logging.logEntries.create", "monitoring.metricDescriptors.create",
    "monitoring.metricDescriptors.get", "monitoring.metricDescriptors.list",
    "monitoring.monitoredResourceDescriptors.get", "monitoring.monitoredResourceDescriptors.list",
    "monitoring.timeSeries.create",
  ]
  dataproc_worker_role = "projects/${var.project_id}/roles/${replace(var.name_prefix, "-", "_")}_dataproc_worker"

  # Self-healing message per source dataset (Cloud Scheduler publishes it to the topic).
  full_refresh_messages = {
    for ds in var.source_datasets : ds => jsonencode({ dataset = ds, all = true })
  }
}
