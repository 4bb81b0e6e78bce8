# Sourced by the setup scripts: `apt_install WHAT PACKAGE...` installs Debian packages for a tool that is
# missing.  Without apt-get or root (or sudo) it warns, naming WHAT, and returns 1, so the caller goes on
# and the tests that need WHAT skip.  `apt-get update` runs only when the first package has no candidate.
# APT_SUDO is "" or "sudo" after a call, for a caller's own privileged steps.

apt_privileges() {
  APT_SUDO=""
  if [ "$(id -u)" != 0 ]; then
    if ! command -v sudo >/dev/null 2>&1; then
      echo "warning: $1 is missing, and installing it needs root (or sudo)" >&2
      return 1
    fi
    APT_SUDO="sudo"
  fi
}

apt_install() {
  local what=$1
  shift
  if ! command -v apt-get >/dev/null 2>&1; then
    echo "warning: $what is missing and this machine has no apt-get: install Debian's $*" >&2
    return 1
  fi
  apt_privileges "$what" || return 1
  export DEBIAN_FRONTEND=noninteractive
  if ! apt-cache policy "$1" 2>/dev/null | grep -q 'Candidate: [0-9]'; then
    $APT_SUDO apt-get update -qq
  fi
  $APT_SUDO apt-get install -y -qq --no-install-recommends "$@" >/dev/null
}
