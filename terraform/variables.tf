# ---------------------------------------------------------------------------
# Where
# ---------------------------------------------------------------------------

variable "project_id" {
  description = "Google Cloud project that holds every resource of this module (datasets, topic, function, buckets)."
  type        = string

  validation {
    condition     = can(regex("^[a-z][a-z0-9-]{4,28}[a-z0-9]$", var.project_id))
    error_message = "project_id must be a Google Cloud project id: 6-30 lowercase letters, digits or hyphens, starting with a letter."
  }
}

variable "region" {
  description = "Region of the Cloud Function, Cloud Scheduler jobs, buckets and Dataproc."
  type        = string
  default     = "us-central1"

  validation {
    condition     = can(regex("^[a-z]+-[a-z]+[0-9]+$", var.region))
    error_message = "region must be a Google Cloud region such as us-central1 or europe-west4."
  }
}

variable "bigquery_location" {
  description = "BigQuery location of the source and target datasets (a multi-region such as US or EU, or a region). Source and target datasets must share it: authorized datasets only work within one location."
  type        = string
  default     = "US"

  validation {
    condition     = can(regex("^(US|EU|[a-z]+-[a-z]+[0-9]+)$", var.bigquery_location))
    error_message = "bigquery_location must be US, EU or a region such as us-central1."
  }
}

variable "name_prefix" {
  description = "Prefix of every resource name (topic, function, service accounts, buckets, scheduler jobs). 3-24 characters."
  type        = string
  default     = "uniview"

  validation {
    condition     = can(regex("^[a-z][a-z0-9-]{1,22}[a-z0-9]$", var.name_prefix))
    error_message = "name_prefix must be 3-24 lowercase letters, digits or hyphens, start with a letter and not end with a hyphen (service account ids are limited to 30 characters)."
  }
}

variable "labels" {
  description = "Labels added to every resource that supports them."
  type        = map(string)
  default     = {}
}

variable "enable_apis" {
  description = "Enable the Google APIs this module needs with google_project_service (never disabled on destroy). Set false when APIs are managed elsewhere."
  type        = bool
  default     = true
}

variable "source_root" {
  description = "Path of the uniview checkout that holds functions/, uniview/ and sql_templates/. null = the directory above this module."
  type        = string
  default     = null
}

# ---------------------------------------------------------------------------
# BigQuery datasets
# ---------------------------------------------------------------------------

variable "source_datasets" {
  description = "Datasets the sink writes version tables (<table>_v_<version>) into. Each gets a target dataset for its unified views, authorized on it."
  type        = list(string)
  default     = ["cdc"]

  validation {
    condition     = length(var.source_datasets) > 0 && alltrue([for ds in var.source_datasets : can(regex("^[A-Za-z0-9_]+$", ds)) && length(ds) <= 1024])
    error_message = "source_datasets must list at least one dataset; each name is 1-1024 letters, digits or underscores."
  }

  validation {
    condition     = length(distinct(var.source_datasets)) == length(var.source_datasets)
    error_message = "source_datasets must not repeat a dataset."
  }
}

variable "create_source_datasets" {
  description = "Create the source datasets. false = they already exist (the module then only adds access entries to them)."
  type        = bool
  default     = true
}

variable "target_dataset_template" {
  description = "Name of the dataset that receives the unified views of a source dataset; {dataset} is replaced by the source dataset name. Passed to the function as UNIVIEW_TARGET_DATASET."
  type        = string
  default     = "{dataset}_unified"

  validation {
    condition     = can(regex("^[A-Za-z0-9_]+$", replace(var.target_dataset_template, "{dataset}", "x"))) && length(replace(var.target_dataset_template, "{dataset}", "x")) <= 1024
    error_message = "target_dataset_template must be letters, digits and underscores, with an optional {dataset} placeholder."
  }
}

variable "bigquery_kms_key_name" {
  description = "Cloud KMS key (projects/P/locations/L/keyRings/R/cryptoKeys/K) used as the default encryption of the source datasets the module creates and of the target datasets (which hold rows with current_views = \"table\"). null = Google-managed encryption. The BigQuery encryption service account needs roles/cloudkms.cryptoKeyEncrypterDecrypter on the key."
  type        = string
  default     = null

  validation {
    condition     = var.bigquery_kms_key_name == null || can(regex("^projects/[^/]+/locations/[^/]+/keyRings/[^/]+/cryptoKeys/[^/]+$", var.bigquery_kms_key_name))
    error_message = "bigquery_kms_key_name must be a full Cloud KMS key name, or null."
  }
}

variable "view_readers" {
  description = "Principals (user:, group:, serviceAccount:, domain:) granted roles/bigquery.dataViewer on every target dataset. Through the authorized dataset they can query the unified views without any access to the version tables."
  type        = list(string)
  default     = []

  validation {
    condition     = alltrue([for m in var.view_readers : can(regex("^(user|group|serviceAccount|domain):.+$", m))])
    error_message = "view_readers entries must start with user:, group:, serviceAccount: or domain:."
  }
}

# ---------------------------------------------------------------------------
# View generation (the function's UNIVIEW_* environment)
# ---------------------------------------------------------------------------

variable "policy" {
  description = "Cast policy of the generated views (UNIVIEW_POLICY): uniview (query-safe supertypes) or widen (peer-style type widening)."
  type        = string
  default     = "uniview"

  validation {
    condition     = contains(["uniview", "widen"], var.policy)
    error_message = "policy must be uniview or widen."
  }
}

variable "max_view_chars" {
  description = "Largest SQL text of one view before it is split into part views (UNIVIEW_MAX_VIEW_CHARS). BigQuery's limit is 256K characters."
  type        = number
  default     = 250000
  nullable    = false

  validation {
    condition     = var.max_view_chars >= 1000 && var.max_view_chars <= 256000 && floor(var.max_view_chars) == var.max_view_chars
    error_message = "max_view_chars must be a whole number between 1000 and 256000."
  }
}

variable "datetime_timezone" {
  description = "IANA time zone used when a DATETIME column meets a TIMESTAMP column (UNIVIEW_DATETIME_TIMEZONE). null = not set, the function's default (UTC) applies."
  type        = string
  default     = null

  validation {
    condition     = var.datetime_timezone == null || can(regex("^[A-Za-z][A-Za-z0-9_+-]*(/[A-Za-z0-9_+-]+)*$", var.datetime_timezone))
    error_message = "datetime_timezone must be an IANA zone name such as Europe/Berlin, or null."
  }
}

variable "current_views" {
  description = "<table>_current, the latest row per (_cdc_database, primary key), for every family (UNIVIEW_CURRENT): \"off\", \"view\" (computed at every query) or \"table\" (a table the function maintains after every sink batch, from the sink's per-batch announcements: fresh within the sink's trigger interval plus one function run; docs/current-state.md). true and false still mean \"view\" and \"off\"."
  type        = string
  default     = "off"

  validation {
    condition     = contains(["off", "view", "table", "true", "false"], lower(var.current_views))
    error_message = "current_views must be \"off\", \"view\" or \"table\" (or true / false)."
  }
}

variable "renames" {
  description = "Declared column renames, in order (UNIVIEW_RENAMES; docs/current-state.md#renames): versions written before a rename expose the old column under the new name. [] = none."
  type = list(object({
    table = string
    from  = string
    to    = string
  }))
  default = []

  validation {
    condition     = alltrue([for r in var.renames : can(regex("^[A-Za-z_][A-Za-z0-9_]{0,299}$", r.from)) && can(regex("^[A-Za-z_][A-Za-z0-9_]{0,299}$", r.to)) && lower(r.from) != lower(r.to)])
    error_message = "each rename needs from and to column names (letters, digits, underscores, not starting with a digit) that differ."
  }
}

variable "source_column" {
  description = "Name of an extra column in every unified view holding the version table a row came from (UNIVIEW_SOURCE_COLUMN). null = no such column."
  type        = string
  default     = null

  validation {
    condition     = var.source_column == null || can(regex("^[A-Za-z_][A-Za-z0-9_]{0,299}$", var.source_column))
    error_message = "source_column must be a column name (letters, digits, underscores, not starting with a digit), or null."
  }
}

variable "max_event_age_seconds" {
  description = "The function acknowledges, without acting, notifications older than this (UNIVIEW_MAX_EVENT_AGE_SECONDS), so a poisoned message cannot retry forever."
  type        = number
  default     = 86400
  nullable    = false

  validation {
    condition     = var.max_event_age_seconds >= 60 && floor(var.max_event_age_seconds) == var.max_event_age_seconds
    error_message = "max_event_age_seconds must be a whole number of at least 60."
  }
}

variable "max_staleness_seconds" {
  description = "current_views = \"table\": the function maintains a family's <table>_current at most once per this many seconds, coalescing the sink's announcements between (UNIVIEW_MAX_STALENESS); 0 maintains after every batch. The default is chosen from the cost table in docs/billing.md."
  type        = number
  default     = 900
  nullable    = false

  validation {
    condition     = var.max_staleness_seconds >= 0 && floor(var.max_staleness_seconds) == var.max_staleness_seconds
    error_message = "max_staleness_seconds must be a whole number of at least 0."
  }
}

# ---------------------------------------------------------------------------
# Scheduled consolidation (docs/consolidation.md): off unless consolidate_idle_for is set
# ---------------------------------------------------------------------------

variable "consolidate_idle_for" {
  description = "On each scheduled (dataset-wide) refresh, first fold versions not written for this long into a consolidated table (UNIVIEW_CONSOLIDATE_IDLE_FOR), e.g. 30d. null = off. Needs self_healing_enabled. Grants the function the consolidator role on the source datasets."
  type        = string
  default     = null

  validation {
    condition     = var.consolidate_idle_for == null || can(regex("^([0-9]+[smhdw])+$", var.consolidate_idle_for))
    error_message = "consolidate_idle_for must be a duration such as 30d, 12h or 1w2d, or null."
  }
}

variable "consolidate_max_versions" {
  description = "Fold until a family keeps at most this many version tables (UNIVIEW_CONSOLIDATE_MAX_VERSIONS)."
  type        = number
  default     = 500
  nullable    = false

  validation {
    condition     = var.consolidate_max_versions >= 2 && var.consolidate_max_versions <= 980 && floor(var.consolidate_max_versions) == var.consolidate_max_versions
    error_message = "consolidate_max_versions must be a whole number from 2 to 980."
  }
}

variable "consolidate_settle" {
  description = "How long a moved table stays in the view before it may leave it (UNIVIEW_CONSOLIDATE_SETTLE): longer than any sink promotion runs."
  type        = string
  default     = "1h"
  nullable    = false

  validation {
    condition     = can(regex("^([0-9]+[smhdw])+$", var.consolidate_settle))
    error_message = "consolidate_settle must be a duration such as 1h or 30m."
  }
}

variable "sink_control_dataset" {
  description = "The sink's control dataset (the dataset it lands in, cdc unless --dataset names another; with --dataset-per-database its --fallback-dataset), where the consolidation registry lives (UNIVIEW_CONSOLIDATE_CONTROL_DATASET). null = each source dataset is its own (a sink that lands in one dataset)."
  type        = string
  default     = null

  validation {
    condition     = var.sink_control_dataset == null || (can(regex("^[A-Za-z0-9_]+$", var.sink_control_dataset)) && length(coalesce(var.sink_control_dataset, "x")) <= 1024)
    error_message = "sink_control_dataset must be a dataset name, or null."
  }
}

# ---------------------------------------------------------------------------
# Cloud Function and its Pub/Sub delivery
# ---------------------------------------------------------------------------

variable "function_memory" {
  description = "Memory of one function instance (Cloud Run units, e.g. 512Mi, 1Gi)."
  type        = string
  default     = "512Mi"

  validation {
    condition     = can(regex("^[0-9]+(Mi|Gi)$", var.function_memory))
    error_message = "function_memory must look like 512Mi or 1Gi."
  }
}

variable "function_timeout_seconds" {
  description = "Request timeout of the function. Also the push subscription's ack deadline, so at most 600."
  type        = number
  default     = 300

  validation {
    condition     = var.function_timeout_seconds >= 10 && var.function_timeout_seconds <= 600
    error_message = "function_timeout_seconds must be between 10 and 600 (the Pub/Sub ack deadline limit)."
  }
}

variable "function_max_instances" {
  description = "Most function instances running at once. Each instance handles one notification at a time."
  type        = number
  default     = 10

  validation {
    condition     = var.function_max_instances >= 1 && var.function_max_instances <= 1000
    error_message = "function_max_instances must be between 1 and 1000."
  }
}

variable "function_ingress_settings" {
  description = "Who may reach the function's URL. ALLOW_INTERNAL_ONLY admits Pub/Sub push from this project and nothing from the internet."
  type        = string
  default     = "ALLOW_INTERNAL_ONLY"

  validation {
    condition     = contains(["ALLOW_INTERNAL_ONLY", "ALLOW_INTERNAL_AND_GCLB"], var.function_ingress_settings)
    error_message = "function_ingress_settings must be ALLOW_INTERNAL_ONLY or ALLOW_INTERNAL_AND_GCLB."
  }
}

variable "max_delivery_attempts" {
  description = "Deliveries of one notification before Pub/Sub moves it to the dead-letter topic."
  type        = number
  default     = 10

  validation {
    condition     = var.max_delivery_attempts >= 5 && var.max_delivery_attempts <= 100
    error_message = "max_delivery_attempts must be between 5 and 100 (Pub/Sub's limits)."
  }
}

variable "retry_minimum_backoff_seconds" {
  description = "First redelivery delay after the function fails a notification."
  type        = number
  default     = 10

  validation {
    condition     = var.retry_minimum_backoff_seconds >= 0 && var.retry_minimum_backoff_seconds <= 600
    error_message = "retry_minimum_backoff_seconds must be between 0 and 600."
  }
}

variable "retry_maximum_backoff_seconds" {
  description = "Longest redelivery delay (the backoff grows exponentially up to it)."
  type        = number
  default     = 600

  validation {
    condition     = var.retry_maximum_backoff_seconds >= 0 && var.retry_maximum_backoff_seconds <= 600
    error_message = "retry_maximum_backoff_seconds must be between 0 and 600."
  }
}

# ---------------------------------------------------------------------------
# Self-healing
# ---------------------------------------------------------------------------

variable "self_healing_enabled" {
  description = "Create one Cloud Scheduler job per source dataset that publishes {\"dataset\": \"<ds>\", \"all\": true} to the topic, so a lost notification heals at the next run."
  type        = bool
  default     = true
}

variable "self_healing_schedule" {
  description = "Cron schedule of the full-refresh jobs. A full refresh only replaces views whose SQL changed."
  type        = string
  default     = "17 * * * *"

  validation {
    condition     = can(regex("^\\S+(\\s+\\S+){4}$", trimspace(var.self_healing_schedule)))
    error_message = "self_healing_schedule must be a five-field cron expression such as \"17 * * * *\"."
  }
}

variable "self_healing_time_zone" {
  description = "Time zone of self_healing_schedule."
  type        = string
  default     = "Etc/UTC"
}

# ---------------------------------------------------------------------------
# Sink (Dataproc)
# ---------------------------------------------------------------------------

variable "create_sink_bucket" {
  description = "Create a bucket for the sink's code (code/), checkpoints and Dataproc staging files."
  type        = bool
  default     = true
}

variable "sink_bucket_name" {
  description = "Name of the sink bucket. null = <project_id>-<name_prefix>-sink. When create_sink_bucket is false, an existing bucket of this name is used (the sink service account gets object access on it)."
  type        = string
  default     = null

  validation {
    condition     = var.sink_bucket_name == null || can(regex("^[a-z0-9][a-z0-9_.-]{1,61}[a-z0-9]$", var.sink_bucket_name))
    error_message = "sink_bucket_name must be a valid Cloud Storage bucket name."
  }
}

variable "sink_bucket_noncurrent_days" {
  description = "Days a replaced or deleted object version (e.g. an overwritten checkpoint file) is kept in the sink bucket."
  type        = number
  default     = 7

  validation {
    condition     = var.sink_bucket_noncurrent_days >= 1
    error_message = "sink_bucket_noncurrent_days must be at least 1."
  }
}

variable "sink_code_files" {
  description = "Files uploaded to gs://<sink bucket>/code/<key>, e.g. { \"uniview_sink.py\" = \"../../dist/uniview_sink.py\", \"uniview-0.1.0-py3-none-any.whl\" = \"../../dist/uniview-0.1.0-py3-none-any.whl\" }. Needs a sink bucket."
  type        = map(string)
  default     = {}
}

variable "sink_input_buckets" {
  description = "Buckets the sink reads CDC input from; the sink service account gets roles/storage.objectViewer on each (bucket-scoped)."
  type        = list(string)
  default     = []
}

variable "dataproc_mode" {
  description = "How the sink runs: serverless (Dataproc Serverless batches; the module grants the roles and outputs the settings), cluster (the module creates a Dataproc cluster), or none (no Dataproc roles or resources)."
  type        = string
  default     = "serverless"

  validation {
    condition     = contains(["serverless", "cluster", "none"], var.dataproc_mode)
    error_message = "dataproc_mode must be serverless, cluster or none."
  }
}

variable "dataproc_subnetwork" {
  description = "Subnetwork (name or self link) for Dataproc, with Private Google Access on. null = the default network's subnetwork in the region."
  type        = string
  default     = null
}

variable "dataproc_runtime_version" {
  description = "Dataproc Serverless runtime version for the sink batches (2.2 = Spark 3.5)."
  type        = string
  default     = "2.2"
}

variable "dataproc_cluster" {
  description = "Shape of the Dataproc cluster when dataproc_mode = cluster. The cluster deletes itself after idle_delete_ttl_seconds without jobs."
  type = object({
    image_version           = optional(string, "2.2-debian12")
    master_machine_type     = optional(string, "n2-standard-4")
    worker_machine_type     = optional(string, "n2-standard-4")
    num_workers             = optional(number, 2)
    boot_disk_size_gb       = optional(number, 100)
    idle_delete_ttl_seconds = optional(number, 3600)
  })
  default  = {}
  nullable = false

  validation {
    condition     = var.dataproc_cluster.num_workers == 0 || var.dataproc_cluster.num_workers >= 2
    error_message = "dataproc_cluster.num_workers must be 0 (single node) or at least 2."
  }

  validation {
    condition     = var.dataproc_cluster.idle_delete_ttl_seconds >= 600
    error_message = "dataproc_cluster.idle_delete_ttl_seconds must be at least 600 (Dataproc's minimum)."
  }
}

# ---------------------------------------------------------------------------
# Alerts and dashboard (monitoring.tf, docs/operations-runbook.md)
# ---------------------------------------------------------------------------

variable "alerts_enabled" {
  description = "Create the alert policies, their log-based metrics and the dashboard (monitoring.tf)."
  type        = bool
  default     = false
}

variable "notification_channels" {
  description = "Cloud Monitoring notification channels (projects/P/notificationChannels/N) every alert notifies. Empty: the alerts only show in the console."
  type        = list(string)
  default     = []

  validation {
    condition     = alltrue([for channel in var.notification_channels : can(regex("^projects/[^/]+/notificationChannels/[^/]+$", channel))])
    error_message = "notification_channels must be ids such as projects/my-project/notificationChannels/123."
  }
}

variable "dead_letter_backlog_threshold" {
  description = "Alert when the dead-letter subscription holds more notifications than this for 5 minutes."
  type        = number
  default     = 0
}

variable "function_error_threshold" {
  description = "Alert when the function answers more 5xx than this in 5 minutes."
  type        = number
  default     = 0
}

variable "retry_threshold" {
  description = "Alert when more push deliveries than this are not acknowledged in 15 minutes (each comes back with backoff)."
  type        = number
  default     = 5
}

variable "status_job_image" {
  description = "A container image with uniview[gcp] installed (`uniview` on PATH). When set with alerts_enabled, a Cloud Run job runs `uniview status --fail-on` on status_schedule and the stale-families alert watches it. null: no status job."
  type        = string
  default     = null
}

variable "status_schedule" {
  description = "Cron schedule of the status job."
  type        = string
  default     = "*/30 * * * *"
}

variable "stale_after" {
  description = "The status job's --fail-on stale=: a family whose newest _cdc_ingested_at is older than this (e.g. 6h, 1d)."
  type        = string
  default     = "6h"

  validation {
    condition     = can(regex("^([0-9]+[smhdw])+$", var.stale_after))
    error_message = "stale_after must be a duration such as 30m, 6h or 1d."
  }
}

variable "pending_after" {
  description = "The status job's --fail-on pending=: a version table no view reads, or a notification not delivered, for longer than this."
  type        = string
  default     = "1h"

  validation {
    condition     = can(regex("^([0-9]+[smhdw])+$", var.pending_after))
    error_message = "pending_after must be a duration such as 30m or 1h."
  }
}

variable "headroom_below_percent" {
  description = "The status job's --fail-on headroom=: a family with less than this percent free to a BigQuery limit."
  type        = number
  default     = 20

  validation {
    condition     = var.headroom_below_percent >= 0 && var.headroom_below_percent <= 100
    error_message = "headroom_below_percent must be a percentage from 0 to 100."
  }
}
