terraform {
  # 1.5: startswith() in the function-source file filter.
  required_version = ">= 1.5"

  required_providers {
    google = {
      source = "hashicorp/google"
      # 5.38: no permanent diff on the function's service_config.environment_variables
      # (LOG_EXECUTION_ID); 5.26: build_config.service_account.
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
