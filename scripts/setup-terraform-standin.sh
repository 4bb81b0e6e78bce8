#!/usr/bin/env bash
# Schema-only stand-in providers (hashicorp/google, google-beta, time, archive) so that
# `terraform init -backend=false`, `validate` and `plan -refresh=false` run offline: the schemas are
# rebuilt from the @cdktf/provider-* npm bindings (cached under ~/.cache/uniview/terraform-standin)
# and served over the plugin protocol by scripts/terraform_standin/provider_server.py, run with
# the `tf` package in its own venv, .venv-terraform (it pins protobuf < 6).
# Afterwards: TF_CLI_CONFIG_FILE=.venv-terraform/terraformrc terraform init ...
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-python3}
CACHE=${UNIVIEW_CACHE:-$HOME/.cache/uniview}/terraform-standin
if [ ! -x .venv-terraform/bin/python ] || ! .venv-terraform/bin/python -c 'import tf.runner' 2>/dev/null; then
  "$PYTHON" -m venv .venv-terraform
  .venv-terraform/bin/python -m pip install --quiet --upgrade pip
  .venv-terraform/bin/python -m pip install --quiet 'tf==1.2.0' 'protobuf>=5.28,<6'
fi
.venv-terraform/bin/python scripts/terraform_standin/install.py "$CACHE" "$PWD/.venv-terraform" \
  "$PWD/.venv-terraform/bin/python"
