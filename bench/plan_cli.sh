#!/usr/bin/env bash
# Whole-process timing of `headroom plan` (goal: ≤ 100 ms from process start to output).
# Uses hyperfine when installed, else a loop timed with date +%s%N.
#   bench/plan_cli.sh [path/to/headroom]
set -euo pipefail
bin="${1:-${HEADROOM_BIN:-build/headroom}}"
cases=(
  "Qwen/Qwen3-4B-Instruct-2507 --gpu 'RTX 4080' --used-gib 0.5 --context 4096"
  "meta-llama/Llama-3.1-70B-Instruct --gpu H100 --gpus 8 --context 8192 --format json"
  "meta-llama/Meta-Llama-3.1-405B-Instruct-FP8 --gpu H100 --nodes 2 --gpus-per-node 8 --context 16384"
  "meta-llama/Llama-3.1-70B-Instruct --gpu 'RTX 4090' --context 8192"
  "deepseek-ai/DeepSeek-R1 --gpu H100 --gpus 8 --context 8192"
)
for c in "${cases[@]}"; do
  cmd="$bin plan $c >/dev/null || true"
  if command -v hyperfine >/dev/null 2>&1; then
    hyperfine --warmup 3 --runs 20 --style basic -N "bash -c \"$cmd\"" 2>/dev/null || hyperfine --warmup 3 --runs 20 "$cmd"
  else
    runs=20
    eval "$cmd"  # warm-up
    best=999999999; total=0
    for _ in $(seq $runs); do
      t0=$(date +%s%N); eval "$cmd"; t1=$(date +%s%N)
      dt=$(( (t1 - t0) / 1000 )); total=$((total + dt)); [ $dt -lt $best ] && best=$dt
    done
    printf '%-100s mean %6.1f ms  min %6.1f ms\n' "plan $c" "$(echo "$total / $runs / 1000" | bc -l)" "$(echo "$best / 1000" | bc -l)"
  fi
done
