#!/usr/bin/env bash
# headroom plan with the 2026 choices, through the binary: an NVFP4 checkpoint on a GPU without
# FP4 tensor cores is planned with the Marlin kernel named (text and JSON), refused below compute
# capability 7.5 with vLLM's message and exit 3; a sparse-MLA plan sets no --kv-cache-dtype.
set -u
bin="${HEADROOM_BIN:?}"
export HEADROOM_DB=/nonexistent/headroom-test.db
failures=0
fail() { echo "FAIL $*"; failures=$((failures + 1)); }
nvfp4=nvidia/NVIDIA-Nemotron-3-Nano-30B-A3B-NVFP4

out="$("$bin" plan "$nvfp4" --gpu H100 --context 8192 --offline --no-history --color never 2>&1)"
rc=$?
[ "$rc" -eq 0 ] || fail "nvfp4 on H100: exit $rc"
grep -q "(compute capability 9.0) through vLLM's Marlin weight-only FP4 kernel" <<<"$out" || fail "nvfp4 on H100: no Marlin line"

json="$("$bin" plan "$nvfp4" --gpu H100 --context 8192 --offline --no-history --format json 2>/dev/null)"
python3 - "$json" <<'PY' || fail "nvfp4 on H100 JSON"
import json, sys
d = json.loads(sys.argv[1])
assert d["recommended"], "no recommendation"
assert any("Marlin weight-only FP4" in line for line in d["explanation"]), d["explanation"]
PY

out="$("$bin" plan "$nvfp4" --gpu B200 --context 8192 --offline --no-history --color never 2>&1)"
rc=$?
[ "$rc" -eq 0 ] || fail "nvfp4 on B200: exit $rc"
if grep -q "Marlin" <<<"$out"; then fail "nvfp4 on B200 mentions Marlin"; fi

out="$("$bin" plan "$nvfp4" --gpu "V100 32GB" --context 8192 --offline --no-history --color never 2>&1)"
rc=$?
[ "$rc" -eq 3 ] || fail "nvfp4 on V100: exit $rc, expected 3"
grep -q "The quantization method modelopt_fp4 is not supported for the current GPU. Minimum capability: 75. Current capability: 70." <<<"$out" ||
  fail "nvfp4 on V100: no vLLM message"

out="$("$bin" plan deepseek-ai/DeepSeek-V3.2 --gpu H200 --gpus 8 --context 32768 --allow-fp8-kv --offline --no-history --color never 2>&1)"
rc=$?
[ "$rc" -eq 0 ] || fail "DeepSeek-V3.2: exit $rc"
grep -q "kv_cache_dtype  *fp8_ds_mla" <<<"$out" || fail "DeepSeek-V3.2: kv_cache_dtype is not fp8_ds_mla"
if grep -E -q -- "^ +--kv-cache-dtype|vllm serve .*--kv-cache-dtype" <<<"$out"; then fail "DeepSeek-V3.2: the plan sets --kv-cache-dtype"; fi

if [ "$failures" -ne 0 ]; then echo "$failures failure(s)"; exit 1; fi
echo "plan_2026: ok"
