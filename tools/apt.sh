# Sourced by the setup scripts: install missing Debian packages when we can (root + apt-get).
# Usage: ensure_apt_packages LABEL PACKAGE...

ensure_apt_packages() {
  local label=$1
  shift
  local missing=()
  local p
  for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  ((${#missing[@]})) || return 0
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    echo "$label: installing system packages: ${missing[*]}"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
  else
    echo "$label: warning: missing system packages (${missing[*]}); install them with apt-get as root" >&2
  fi
}
