variable "project_id" {
  description = "Google Cloud project to deploy into."
  type        = string
}

variable "region" {
  description = "Region of the function, scheduler jobs, buckets and Dataproc."
  type        = string
  default     = "us-central1"
}

variable "bigquery_location" {
  description = "BigQuery location of the cdc and cdc_unified datasets."
  type        = string
  default     = "US"
}

variable "source_datasets" {
  description = "Datasets the sink writes version tables into."
  type        = list(string)
  default     = ["cdc"]
}

variable "view_readers" {
  description = "Principals that may query the *_unified views, e.g. [\"group:analysts@example.com\"]."
  type        = list(string)
  default     = []
}

variable "sink_code_files" {
  description = "Sink files to upload to gs://<sink bucket>/code/ (object name => local path), e.g. the sink script and the uniview wheel."
  type        = map(string)
  default     = {}
}

variable "sink_input_buckets" {
  description = "Buckets holding the CDC input the sink reads."
  type        = list(string)
  default     = []
}

variable "self_healing_enabled" {
  description = "Publish a full refresh of every dataset once an hour."
  type        = bool
  default     = true
}

variable "dataproc_mode" {
  description = "How the sink runs: serverless (Dataproc Serverless batches), cluster (a Dataproc cluster) or none."
  type        = string
  default     = "serverless"
}

variable "create_sink_bucket" {
  description = "Create the sink's bucket (code, checkpoints, staging)."
  type        = bool
  default     = true
}

variable "consolidate_idle_for" {
  description = "Fold versions idle this long on each scheduled refresh (e.g. 30d); null = off."
  type        = string
  default     = null
}

variable "current_views" {
  description = "<table>_current for every family: \"off\", \"view\" or \"table\"."
  type        = string
  default     = "off"
}
