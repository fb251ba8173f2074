#!/usr/bin/env bash
# `headroom check` on the live GPUs (--gpu auto, the default) through the NVML stand-in library:
# the GPU's total and free memory feed the prediction, a process holding memory is named in the
# verdict with what to do, and a host without GPUs gets a clear error.
set -uo pipefail
bin="${HEADROOM_BIN:?}"
lib="${HEADROOM_BINARY_DIR:?}/tests/support/fake_nvml/libfake_nvml.so"
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
export NO_COLOR=1 HEADROOM_NVIDIA_SMI=/nonexistent/nvidia-smi

out="$(HEADROOM_NVML_LIBRARY="$lib" HEADROOM_FAKE_NVML_SCENARIO=one_gpu \
  "$bin" check Qwen/Qwen3-8B --gpu-memory-utilization 0.97 --max-model-len 8192 2>&1)"
rc=$?
[ "$rc" -eq 3 ] || fail "live GPU at 0.97: exit $rc, expected 3"
grep -q "startup_free_memory_insufficient" <<<"$out" || fail "live GPU: no startup-check failure: $out"
grep -q "PID 4242 python3 holds 3.10 GiB on GPU 0" <<<"$out" || fail "live GPU: the process holding memory is not named: $out"
grep -q "lower --gpu-memory-utilization to at most 0.95" <<<"$out" || fail "live GPU: no advice: $out"

out="$(HEADROOM_NVML_LIBRARY="$lib" HEADROOM_FAKE_NVML_SCENARIO=one_gpu \
  "$bin" check Qwen/Qwen3-8B --max-model-len 8192 --format json 2>&1)"
python3 -c '
import json, sys
j = json.loads(sys.argv[1])
assert j["outcome"] == "ok", j["failure"]
assert j["gpu"]["free_gib"] is not None and j["gpu"]["free_gib"] < j["gpu"]["total_gib"], j["gpu"]
' "$out" || fail "live GPU JSON: $out"

out="$(HEADROOM_NVML_LIBRARY=/nonexistent/libnvidia-ml.so.1 "$bin" check Qwen/Qwen3-8B 2>&1)"
rc=$?
[ "$rc" -eq 2 ] || fail "no GPU: exit $rc, expected 2"
grep -q -- "name one with --gpu NAME" <<<"$out" || fail "no GPU: message does not say to use --gpu: $out"

[ "$failures" -eq 0 ] && echo "check on live GPUs: all checks passed"
exit "$failures"
