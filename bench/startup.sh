#!/usr/bin/env bash
# Start-up cost of the headroom process (goals: `check MODEL --gpu H100` <= 5 ms median CPU,
# `--help` <= 3 ms), against /bin/true in the same run, with the largest resident set; then a
# sweep of 1,000 different checks from the shell (xargs -P2), timed as a whole.
#   bench/startup.sh [BUILD_DIR]        (default: build; builds headroom and the timer first)
#   HEADROOM_BENCH_RUNS=N               runs per case (default 200)
#   HEADROOM_BIN=PATH                   time another headroom binary (e.g. an older build), same timer
# The figures are CPU time (user + system) per process: on a shared machine, wall time mostly
# measures the other load. hyperfine (Debian package) adds a wall-clock view when installed.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${1:-$root/build}"
runs="${HEADROOM_BENCH_RUNS:-200}"
cmake --build "$build" --target headroom bench_startup_timer -j2 >/dev/null
bin="${HEADROOM_BIN:-$build/headroom}"
timer="$build/bench_startup_timer"
model=meta-llama/Llama-3.1-8B-Instruct

# No run history unless a case makes one: a check reads the history when there is one (an SQLite
# file under $XDG_DATA_HOME), and a history left by earlier use would change the figures.
history_dir=$(mktemp -d)
export HEADROOM_DB="$history_dir/history.db"
echo "== one process (median of $runs runs; CPU = user + system)"
"$timer" --runs "$runs" --label "/bin/true" -- /bin/true
"$timer" --runs "$runs" --label "headroom --help" -- "$bin" --help
# The catalogue path: what check does offline (HF_HUB_OFFLINE=1, --offline) or when the id is
# not on the Hub. A plain `check` first asks the Hub (a request, or a DNS failure without network).
HF_HUB_OFFLINE=1 "$timer" --runs "$runs" --label "check MODEL --gpu H100 (offline)" -- "$bin" check "$model" --gpu H100
# Without network the first check finds the Hub unreachable and remembers it for a minute
# (src/hub/no_network_memo.h): the checks after it fall back at once. HEADROOM_HUB_RETRY_AFTER_S=0
# asks every time, as every check did before.
hub_cache=$(mktemp -d)
XDG_CACHE_HOME="$hub_cache" "$bin" check "$model" --gpu H100 >/dev/null 2>&1 || true
XDG_CACHE_HOME="$hub_cache" "$timer" --runs "$runs" --label "check MODEL --gpu H100 (Hub unreachable, remembered)" -- \
  "$bin" check "$model" --gpu H100
XDG_CACHE_HOME="$hub_cache" HEADROOM_HUB_RETRY_AFTER_S=0 "$timer" --runs "$runs" \
  --label "check MODEL --gpu H100 (Hub asked every time)" -- "$bin" check "$model" --gpu H100
rm -rf "$hub_cache"
HF_HUB_OFFLINE=1 "$timer" --runs "$runs" --label "check MODEL --gpu H100 --format json" -- \
  "$bin" check "$model" --gpu H100 --format json
"$timer" --runs "$runs" --label "check tests/data/models/llama_gqa.json" -- \
  "$bin" check "$root/tests/data/models/llama_gqa.json" --gpu H100
# With a run history (one recorded startup log): the check reads it to correct its prediction.
"$bin" record --db "$HEADROOM_DB" "$root/tests/data/logs/v1_startup_ok.log" >/dev/null
HF_HUB_OFFLINE=1 "$timer" --runs "$runs" --label "check MODEL --gpu H100 (offline, a history of 1 run)" -- \
  "$bin" check "$model" --gpu H100
rm -rf "$history_dir"

echo "== libraries loaded at start (ldd)"
echo "headroom: $(ldd "$bin" | wc -l) objects: $(ldd "$bin" | awk '{print $1}' | tr '\n' ' ')"
echo "optional parts beside it: $(cd "$build" && ls headroom-serve headroom_*.so 2>/dev/null | tr '\n' ' ')"

echo "== sweep: 1,000 different checks, xargs -P2, offline"
# Every catalogue model x GPUs x context lengths, the first 1,000 combinations.
ids=$(grep -o '"hf_id": *"[^"]*"' "$root/data/models.jsonl" | sed 's/.*"\([^"]*\)"$/\1/')
cases=$(mktemp)
trap 'rm -f "$cases"' EXIT
for len in 4096 8192 32768 2048 16384; do
  for gpu in H100 A100-80GB L40S 4090 A10; do
    for id in $ids; do echo "check $id --gpu $gpu --max-model-len $len"; done
  done
done >"$cases.all"
# (head on the loop's pipe would end the loop with SIGPIPE, which pipefail makes the script's exit)
head -n 1000 "$cases.all" >"$cases"
rm -f "$cases.all"
n=$(wc -l <"$cases")
t0=$(date +%s%N)
# xargs answers 123 when some check exited 1 to 125: 3 (does not fit) and 1 (a catalogue line
# without architecture facts) are answers too; a crash (signal) gives 125 and fails the sweep.
rc=0
HF_HUB_OFFLINE=1 xargs -P2 -L1 -a "$cases" "$bin" >/dev/null 2>&1 || rc=$?
t1=$(date +%s%N)
[ "$rc" -eq 0 ] || [ "$rc" -eq 123 ] || { echo "sweep: xargs exited $rc" >&2; exit 1; }
ms=$(( (t1 - t0) / 1000000 ))
awk -v n="$n" -v ms="$ms" 'BEGIN { printf "sweep: %d checks in %.3f s (%.2f ms per check, wall, 2 at a time)\n", n, ms / 1000, ms / n }'

if command -v hyperfine >/dev/null 2>&1; then
  echo "== hyperfine (wall clock)"
  HF_HUB_OFFLINE=1 hyperfine -N --warmup 10 --runs "$runs" --style basic /bin/true "$bin --help" \
    "$bin check $model --gpu H100"
fi
