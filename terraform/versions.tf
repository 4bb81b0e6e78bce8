terraform {
  # 1.5: startswith() in the function-source file filter.
  required_version = ">= 1.5"

  required_providers {
    google = {
      source = "hashicorp/google"
      # 5.26: build_config.service_account on google_cloudfunctions2_function.
      version = ">= 5.26, < 8.0"
    }
    archive = {
      source  = "hashicorp/archive"
      version = ">= 2.4"
    }
  }
}
