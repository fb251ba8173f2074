#!/usr/bin/env bash
# Builds the Python package against the regular build's library (pip install ./python into a venv
# with the system site packages: Debian's pybind11, pytest, selenium) and runs tests/python.
#   scripts/test_python.sh [BUILD_DIR] [PYTEST ARGS...]
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="$(cd "${1:-${HEADROOM_BUILD_DIR:-$root/build}}" && pwd)"
shift || true
venv="$build/python-venv"
[ -x "$venv/bin/python" ] || /usr/bin/python3 -m venv --system-site-packages "$venv"
HEADROOM_BUILD_DIR="$build" "$venv/bin/python" -m pip install --quiet --no-build-isolation --no-index --no-deps \
  --force-reinstall "$root/python"
cd "$root/tests/python"
HEADROOM_BIN="$build/headroom" HEADROOM_BINARY_DIR="$build" "$venv/bin/python" -m pytest -q -p no:cacheprovider "$@"
