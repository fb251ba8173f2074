#!/usr/bin/env bash
# The web page in a real browser: headless Chromium from Debian (chromium, chromium-driver,
# python3-selenium; scripts/setup.sh --test installs them) against a server started here.
# Screenshots: $HEADROOM_BINARY_DIR/screenshots/. Skips (exit 0, "SKIP: ...") only when Chromium,
# its driver or Selenium is not installed.
set -uo pipefail
bin="${HEADROOM_BIN:?}"
src="${HEADROOM_SOURCE_DIR:?}"
py=/usr/bin/python3
for need in /usr/bin/chromium /usr/bin/chromedriver; do
  [ -x "$need" ] || { echo "SKIP: $need not found (install Debian's chromium and chromium-driver: scripts/setup.sh --test)"; exit 0; }
done
"$py" -c 'import selenium' 2> /dev/null || { echo "SKIP: python3-selenium not installed (scripts/setup.sh --test)"; exit 0; }
tmp="$(mktemp -d)"
servers=()
source "$(dirname "${BASH_SOURCE[0]}")/lib/serve.sh"
trap 'stop_servers; rm -rf "$tmp"' EXIT
export HF_HUB_CACHE="$tmp/hf" HEADROOM_NVML_LIBRARY=/nonexistent/libnvidia-ml.so.1 HEADROOM_NVIDIA_SMI=/nonexistent/nvidia-smi \
  HEADROOM_DB="$tmp/no-history.db"
start_server s --no-access-log
"$py" "$src/tests/browser/page_test.py" "$s_url" "${HEADROOM_BINARY_DIR:-$tmp}/screenshots" "$src/tests/data/logs/v1_kv_insufficient.log"
