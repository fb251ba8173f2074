#!/usr/bin/env bash
# Builds headroom and runs the whole test suite (unit, CLI, golden). GPU tests are skipped.
#   scripts/test.sh
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${HEADROOM_BUILD_DIR:-$root/build}"
"$root/scripts/setup.sh" --test
if [ ! -f "$build/CMakeCache.txt" ]; then
  cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo
fi
cmake --build "$build" -j2
cd "$build"
ctest --output-on-failure -j2 -LE gpu "$@"
