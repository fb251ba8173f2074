#!/usr/bin/env bash
# Builds every libFuzzer target (fuzz/*_fuzz.cc) with clang, ASan and UBSan, and runs each for
# SECONDS (default 60), seeded from fuzz/corpus/<target>/ (fuzz/model_config_fuzz.cc reads
# fuzz/corpus/model_config/). New inputs go to a scratch folder, so the kept corpus stays as it is.
# fuzz/<target>.options, when present, holds extra libFuzzer flags for that target, one per line
# (# starts a comment).
#   scripts/fuzz.sh [SECONDS]
# Environment:
#   HEADROOM_FUZZ_BUILD_DIR  build folder (default build-asan/, the sanitizer tree scripts/test.sh uses)
#   HEADROOM_FUZZ_ONLY       run only the targets whose name matches this extended regex
# Prints executions per second per target; exits 1 when any target finds a crash, a leak, a
# timeout or undefined behaviour (the reproducer is kept in <build>/fuzz-artifacts/).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
seconds="${1:-60}"
if ! [[ "$seconds" =~ ^[0-9]+$ ]] || [ "$seconds" -lt 1 ]; then
  echo "usage: scripts/fuzz.sh [SECONDS]  (SECONDS: a whole number of seconds per target, got '$seconds')" >&2
  exit 2
fi
build="${HEADROOM_FUZZ_BUILD_DIR:-$root/build-asan}"
only="${HEADROOM_FUZZ_ONLY:-}"

if [ ! -f "$build/CMakeCache.txt" ]; then
  cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ -DHEADROOM_FUZZ=ON -DHEADROOM_BENCH=OFF >&2
fi
cmake --build "$build" -j2 --target fuzz_all >&2

# A 64 MiB quarantine (ASan's default is 256 MiB) still holds thousands of inputs' worth of freed
# memory for use-after-free checks, and keeps the allocator's pages warm between runs.
export ASAN_OPTIONS="${ASAN_OPTIONS:-halt_on_error=1:detect_leaks=1:quarantine_size_mb=64}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}"
artifacts="$build/fuzz-artifacts"
scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT
mkdir -p "$artifacts"

failed=()
summary=()
for src in "$root"/fuzz/*_fuzz.cc; do
  name="$(basename "$src" _fuzz.cc)"
  [ -n "$only" ] && ! [[ "$name" =~ $only ]] && continue
  exe="$build/fuzz_$name"
  corpus="$root/fuzz/corpus/$name"
  seeds=()
  if [ -d "$corpus" ]; then seeds=("$corpus"); else echo "fuzz.sh: $name has no corpus in fuzz/corpus/$name/" >&2; fi
  dict=()
  [ -f "$root/fuzz/$name.dict" ] && dict=("-dict=$root/fuzz/$name.dict")
  extra=()
  [ -f "$root/fuzz/$name.options" ] && mapfile -t extra < <(sed -e 's/#.*//' -e 's/[[:space:]]*$//' -e '/^$/d' "$root/fuzz/$name.options")
  mkdir -p "$scratch/$name"
  log="$scratch/$name.log"
  echo "fuzz.sh: $name for ${seconds}s" >&2
  status=0
  "$exe" "$scratch/$name" "${seeds[@]}" "${dict[@]}" "${extra[@]}" -max_total_time="$seconds" -timeout=30 -seed="${HEADROOM_FUZZ_SEED:-0}" \
    -rss_limit_mb=2048 -print_final_stats=1 -artifact_prefix="$artifacts/$name-" >"$log" 2>&1 || status=$?
  runs="$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)"
  rate="$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)"
  rss="$(sed -n 's/^stat::peak_rss_mb: *//p' "$log" | tail -1)"
  if [ "$status" -ne 0 ]; then
    tail -60 "$log" >&2
    failed+=("$name")
    summary+=("$(printf '%-24s FAILED (exit %s), reproducer in %s' "$name" "$status" "$artifacts/")")
  else
    note=""
    [ -n "$rate" ] && [ "$rate" -lt 1000 ] && note="  (below 1,000 exec/s)"
    summary+=("$(printf '%-24s %10s runs %8s exec/s %6s MB peak RSS%s' "$name" "${runs:-?}" "${rate:-?}" "${rss:-?}" "$note")")
  fi
done

printf '%s\n' "${summary[@]}"
if [ ${#failed[@]} -gt 0 ]; then
  echo "fuzz.sh: findings in: ${failed[*]}" >&2
  exit 1
fi
