#!/usr/bin/env bash
# Installs the Debian packages headroom needs when they are missing (with sudo when not root).
#   scripts/setup.sh          build dependencies (the Python package's too: pybind11, python3-dev, pip)
#   scripts/setup.sh --test   also what the test suite runs against (promtool, PostgreSQL, a JSON
#                             Schema validator, headless Chromium with Selenium for the web page,
#                             wrk for bench/) and clang with its sanitizer and libFuzzer runtimes
set -euo pipefail

packages=(
  g++ cmake make pkg-config ccache
  nlohmann-json3-dev libcli11-dev libfmt-dev libexpected-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  libhyperscan-dev libre2-dev libsqlite3-dev libpqxx-dev libpq-dev
  libcpp-httplib-dev libcurl4-openssl-dev zlib1g-dev libyaml-cpp-dev
  time
  python3-dev python3-pybind11 pybind11-dev python3-pip python3-setuptools python3-wheel python3-venv
)
if [ "${1:-}" = "--test" ]; then
  packages+=(prometheus postgresql sqlite3 python3 gzip curl python3-jsonschema clang libclang-rt-dev
    chromium chromium-driver python3-selenium wrk python3-pytest)
fi

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
[ ${#missing[@]} -eq 0 ] && exit 0

echo "headroom setup: installing ${missing[*]}" >&2
sudo_cmd=()
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null 2>&1; then sudo_cmd=(sudo); else
    echo "headroom setup: need root or sudo to install: ${missing[*]}" >&2
    exit 1
  fi
fi
export DEBIAN_FRONTEND=noninteractive
"${sudo_cmd[@]}" apt-get update -qq >&2
"${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
