#!/usr/bin/env bash
# Builds headroom and runs the whole test suite (unit, CLI, golden), then installs the Python package
# into a venv and runs its pytest tests. GPU tests are skipped.
# Then builds the suite again with clang, AddressSanitizer and UndefinedBehaviorSanitizer (build-asan/,
# which also holds the libFuzzer targets), runs the unit and CLI tests there with halt_on_error, and
# runs every fuzz target briefly from its corpus.
#   scripts/test.sh [CTEST ARGS...]
# Environment:
#   HEADROOM_BUILD_DIR         the regular build folder (default build/)
#   HEADROOM_ASAN_BUILD_DIR    the sanitizer build folder (default build-asan/)
#   HEADROOM_TEST_SANITIZE=0   skip the sanitizer build and the fuzz run
#   HEADROOM_FUZZ_SECONDS      seconds per fuzz target (default 10; 0 skips fuzzing)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${HEADROOM_BUILD_DIR:-$root/build}"
asan_build="${HEADROOM_ASAN_BUILD_DIR:-$root/build-asan}"
"$root/scripts/setup.sh" --test

step() { echo "== test.sh: $1 ($(date -u +%H:%M:%S))" >&2; }

step "regular build"
if [ ! -f "$build/CMakeCache.txt" ]; then
  cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo
fi
# With the Python extension (python/), so the library is compiled once, position-independent, for both.
cmake -S "$root" -B "$build" -DHEADROOM_PYTHON=ON -DPython_EXECUTABLE=/usr/bin/python3 > /dev/null
cmake --build "$build" -j2
step "regular tests"
(cd "$build" && ctest --output-on-failure -j2 -LE gpu "$@")

step "python package (pip install ./python into a venv, pytest tests/python)"
"$root/scripts/test_python.sh" "$build"

[ "${HEADROOM_TEST_SANITIZE:-1}" = 0 ] && exit 0

step "sanitizer build (clang, ASan + UBSan + libFuzzer instrumentation)"
if [ ! -f "$asan_build/CMakeCache.txt" ]; then
  cmake -S "$root" -B "$asan_build" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ -DHEADROOM_FUZZ=ON -DHEADROOM_BENCH=OFF
fi
cmake --build "$asan_build" -j2 --target headroom headroom_tests fuzz_all
step "sanitizer tests"
# Any report stops the process with a non-zero status, so the test that ran it fails.
(cd "$asan_build" &&
  ASAN_OPTIONS="halt_on_error=1:detect_leaks=1:abort_on_error=0" \
  UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1" \
  ctest --output-on-failure -j2 -LE 'gpu|no_sanitize' "$@")

fuzz_seconds="${HEADROOM_FUZZ_SECONDS:-10}"
if [ "$fuzz_seconds" != 0 ]; then
  step "fuzz targets, ${fuzz_seconds}s each"
  # A fixed seed keeps the short run in CI reproducible (0, libFuzzer's random seed, is fuzz.sh's default).
  HEADROOM_FUZZ_SEED="${HEADROOM_FUZZ_SEED:-1}" HEADROOM_FUZZ_BUILD_DIR="$asan_build" "$root/scripts/fuzz.sh" "$fuzz_seconds"
fi
step "done"
