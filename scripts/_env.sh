# Shared by scripts/run and scripts/test: one virtual environment, created on first use.
# Sourced, not executed. Re-installs only when pyproject.toml changes.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENV="${OFP_GATEWAY_VENV:-$ROOT/.venv}"
PY="${PYTHON:-python3}"

need_apt=()
for pkg in "$@"; do
  case "$pkg" in
    chromium) [ -x /usr/bin/chromium ] || need_apt+=(chromium) ;;
    # a library (libjemalloc2): is libjemalloc.so known to the dynamic loader?
    lib*) [[ "$(PATH="$PATH:/sbin:/usr/sbin" ldconfig -p 2>/dev/null)" == *"${pkg%[0-9]}.so"* ]] \
            || need_apt+=("$pkg") ;;
    *) command -v "$pkg" >/dev/null 2>&1 || need_apt+=("$pkg") ;;
  esac
done
if [ ${#need_apt[@]} -gt 0 ]; then
  echo "==> installing system packages: ${need_apt[*]}"
  SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${need_apt[@]}" >/dev/null
fi

if [ ! -x "$VENV/bin/python" ]; then
  echo "==> creating virtual environment in $VENV"
  "$PY" -m venv "$VENV"
fi
stamp="$VENV/.ofp-installed"
want="$(cat "$ROOT/pyproject.toml" | sha256sum | cut -c1-16)-${OFP_EXTRAS:-}"
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ]; then
  echo "==> installing Python packages (first run takes a few minutes)"
  "$VENV/bin/python" -m pip install -q --upgrade pip
  "$VENV/bin/python" -m pip install -q -e "$ROOT${OFP_EXTRAS:+[$OFP_EXTRAS]}"
  echo "$want" > "$stamp"
fi
