#!/usr/bin/env bash
# headroom plan: golden text/JSON plans for model × GPU pairs (some that do not fit), and the
# errors for bad requests. HEADROOM_UPDATE_GOLDEN=1 rewrites the golden files.
set -u
bin="${HEADROOM_BIN:?}"
golden="${HEADROOM_SOURCE_DIR:?}/tests/golden/plan"
failures=0

check_golden() {  # name expected_exit args...
  local name="$1" expected="$2"
  shift 2
  local out rc
  out="$("$bin" plan "$@" --vllm-version 0.19.0 --color never 2>&1)"
  rc=$?
  if [ "$rc" -ne "$expected" ]; then
    echo "FAIL $name: exit $rc, expected $expected"; failures=$((failures + 1))
  fi
  if [ "${HEADROOM_UPDATE_GOLDEN:-0}" = 1 ]; then
    printf '%s\n' "$out" >"$golden/$name"
  elif ! diff -u "$golden/$name" <(printf '%s\n' "$out"); then
    echo "FAIL $name: output differs from $golden/$name"; failures=$((failures + 1))
  fi
}

check_error() {  # name expected_stderr args...
  local name="$1" expected="$2"
  shift 2
  local err rc
  err="$("$bin" plan "$@" 2>&1 >/dev/null)"
  rc=$?
  if [ "$rc" -ne 2 ] || [ "$err" != "$expected" ]; then
    echo "FAIL $name: exit $rc, stderr: $err"; echo "  expected: $expected"; failures=$((failures + 1))
  fi
}

check_golden qwen3-4b-rtx4080-desktop.txt 0 Qwen/Qwen3-4B-Instruct-2507 --gpu "RTX 4080" --used-gib 0.5 --context 4096
check_golden qwen3-4b-rtx4080-desktop.json 0 Qwen/Qwen3-4B-Instruct-2507 --gpu "RTX 4080" --used-gib 0.5 --context 4096 --format json
check_golden qwen3-4b-4xh100-throughput.txt 0 Qwen/Qwen3-4B-Instruct-2507 --gpu H100 --gpus 4 --context 8192
check_golden qwen3-8b-rtx4090-longest.txt 0 Qwen/Qwen3-8B --gpu "RTX 4090" --concurrency 2
check_golden llama31-8b-a100-context.txt 0 meta-llama/Llama-3.1-8B-Instruct --gpu "A100 80GB" --goal context --allow-fp8-kv
check_golden llama31-70b-8xh100.txt 0 meta-llama/Llama-3.1-70B-Instruct --gpu H100 --gpus 8 --context 8192 --concurrency 16
check_golden llama31-70b-4xh100-latency.txt 0 meta-llama/Llama-3.1-70B-Instruct --gpu H100 --gpus 4 --context 32768 --goal latency
check_golden llama31-70b-rtx4090-nofit.txt 3 meta-llama/Llama-3.1-70B-Instruct --gpu "RTX 4090" --context 8192
check_golden llama31-405b-fp8-2nodes.txt 0 meta-llama/Meta-Llama-3.1-405B-Instruct-FP8 --gpu H100 --nodes 2 --gpus-per-node 8 --context 16384
check_golden llama31-405b-fp8-2nodes.json 0 meta-llama/Meta-Llama-3.1-405B-Instruct-FP8 --gpu H100 --nodes 2 --gpus-per-node 8 --context 16384 --format json
check_golden deepseek-r1-8xh100-nofit.txt 3 deepseek-ai/DeepSeek-R1 --gpu H100 --gpus 8 --context 8192
check_golden qwen3-30b-a3b-2xl40s.txt 0 Qwen/Qwen3-30B-A3B --gpu L40S --gpus 2 --context 16384 --concurrency 8
check_golden gemma3-27b-a100.txt 0 google/gemma-3-27b-it --gpu "A100 80GB" --context 8192 --concurrency 4
check_golden mistral-7b-2xt4.txt 0 mistralai/Mistral-7B-Instruct-v0.3 --gpu T4 --gpus 2 --context 4096
check_golden gpt-oss-20b-rtx5090.txt 0 openai/gpt-oss-20b --gpu "RTX 5090" --used-gib 0.8 --context 16384 --concurrency 2
check_golden qwen25-7b-awq-rtx3060.txt 0 Qwen/Qwen2.5-7B-Instruct-AWQ --gpu "RTX 3060" --used-gib 0.4 --context 4096
check_golden phi3-mini-rtx3080-nofit.txt 3 microsoft/Phi-3-mini-4k-instruct --gpu "RTX 3080" --used-gib 0.6 --context 4096 --concurrency 2 --goal latency
check_golden qwen3-235b-rtx4090-nofit.txt 3 Qwen/Qwen3-235B-A22B --gpu "RTX 4090" --context 8192

check_error context-too-long "headroom: error: --context: 1000000 tokens is longer than Qwen/Qwen3-4B-Instruct-2507 supports: max_position_embeddings gives 262144 (vLLM refuses a longer max_model_len unless VLLM_ALLOW_LONG_MAX_MODEL_LEN=1)" \
  Qwen/Qwen3-4B-Instruct-2507 --gpu H100 --context 1000000
check_error used-and-free "headroom: error: --used-gib and --free-gib describe the same memory: give one of them" \
  Qwen/Qwen3-4B-Instruct-2507 --gpu H100 --used-gib 1 --free-gib 70
check_error max-gpus-above "headroom: error: --max-gpus: 8 GPUs allowed, but the setup has only 2 (1 node(s) × 2 GPUs); give more with --gpus or --nodes" \
  Qwen/Qwen3-4B-Instruct-2507 --gpu H100 --gpus 2 --max-gpus 8
check_error gpus-disagree "headroom: error: --gpus 4 and --gpus-per-node 8 disagree: with --nodes, --gpus is the count per node; give one of them" \
  Qwen/Qwen3-4B-Instruct-2507 --gpu H100 --nodes 2 --gpus 4 --gpus-per-node 8
check_error bad-goal "headroom: error: --goal: expected throughput, context or latency, got 'speed'" \
  Qwen/Qwen3-4B-Instruct-2507 --gpu H100 --goal speed
check_error no-model "headroom: error: no model given: headroom plan MODEL --gpu NAME (see 'headroom plan --help')" --gpu H100
check_error two-models "headroom: error: two models given: 'Qwen/Qwen3-4B' and the command's 'Qwen/Qwen3-8B'; give one of them" \
  Qwen/Qwen3-4B --gpu L4 -- vllm serve Qwen/Qwen3-8B

# A vllm serve command after --: its model, --max-model-len as the context, TP as the GPUs, an fp8
# KV cache allowed; what was taken is said on stderr.
cmd_err="$(mktemp)"
out="$("$bin" plan --gpu L4 --vllm-version 0.19.0 --format json -- vllm serve Qwen/Qwen3-8B --max-model-len 16384 -tp 2 \
  --kv-cache-dtype fp8 --gpu-memory-utilization 0.95 2>"$cmd_err")"
if ! printf '%s' "$out" | python3 -c '
import json, sys
d = json.load(sys.stdin)
assert d["model"]["id"] == "Qwen/Qwen3-8B", d["model"]
assert d["request"]["context"] == 16384 and d["request"]["allow_fp8_kv"] is True, d["request"]
assert d["gpu"]["count"] == 2, d["gpu"]
assert d["context_tokens"] == 16384
'; then echo "FAIL plan-from-command: $out"; failures=$((failures + 1)); fi
grep -q "from the command: requests up to 16384 tokens (--max-model-len); 2 GPUs" "$cmd_err" ||
  { echo "FAIL plan-from-command note: $(cat "$cmd_err")"; failures=$((failures + 1)); }
rm -f "$cmd_err"

# The flags every configuration keeps, given as plan's own options: each rendering carries them as
# given, and they win over a pasted command's.
limits='{"image": {"count": 2, "width": 1024, "height": 1024}, "video": 0}'
out="$("$bin" plan Qwen/Qwen2.5-VL-7B-Instruct --gpu L4 --vllm-version 0.19.0 --color never --offline \
  --limit-mm-per-prompt "$limits" --mm-encoder-tp-mode data 2>/dev/null)"
printf '%s\n' "$out" | grep -q -- "--limit-mm-per-prompt '{\"image\":{\"count\":2,\"height\":1024,\"width\":1024},\"video\":0}'" ||
  { echo "FAIL plan-kept-option: no limit in the command: $out"; failures=$((failures + 1)); }
printf '%s\n' "$out" | grep -q -- "--mm-encoder-tp-mode data" ||
  { echo "FAIL plan-kept-option: no encoder TP mode in the command"; failures=$((failures + 1)); }
out="$("$bin" plan --gpu L4 --vllm-version 0.19.0 --color never --offline --limit-mm-per-prompt '{"image": 1}' \
  -- vllm serve Qwen/Qwen2.5-VL-7B-Instruct --limit-mm-per-prompt '{"image": 0, "video": 0}' 2>/dev/null)"
printf '%s\n' "$out" | grep -q -- "--limit-mm-per-prompt '{\"image\":1}'" && ! printf '%s\n' "$out" | grep -q '"video":0' ||
  { echo "FAIL plan-kept-option-wins: $out"; failures=$((failures + 1)); }
out="$("$bin" plan meta-llama/Llama-3.1-8B-Instruct --gpu L4 --vllm-version 0.19.0 --color never --offline -q fp8 \
  --context 4096 2>/dev/null)"
printf '%s\n' "$out" | grep -q -- "--quantization fp8" ||
  { echo "FAIL plan-kept-quantization: $out"; failures=$((failures + 1)); }
# A T4 (compute capability 7.5) cannot run vLLM's fp8 method (Fp8Config.get_min_capability: 80).
out="$("$bin" plan meta-llama/Llama-3.1-8B-Instruct --gpu T4 --vllm-version 0.19.0 --color never --offline -q fp8 \
  --context 4096 2>/dev/null)"
rc=$?
[ "$rc" -eq 3 ] && printf '%s\n' "$out" | grep -q "The quantization method fp8 is not supported for the current GPU. Minimum capability: 80. Current capability: 75." ||
  { echo "FAIL plan-kept-quantization-t4: exit $rc: $out"; failures=$((failures + 1)); }
# Qwen3's YaRN recipe (32,768 x 4) lets the plan serve 131,072 tokens; without it vLLM refuses them.
yarn='{"rope_scaling": {"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 32768}}'
out="$("$bin" plan Qwen/Qwen3-8B --gpu H100 --vllm-version 0.19.0 --color never --offline --hf-overrides "$yarn" \
  --context 131072 2>/dev/null)"
printf '%s\n' "$out" | grep -q -- "--max-model-len 131072 .*--hf-overrides" ||
  { echo "FAIL plan-kept-hf-overrides: $out"; failures=$((failures + 1)); }
check_error chosen-flag "headroom: error: --max-model-len is the plan's to choose: give --context TOKENS, the longest request to serve; or paste the whole command after -- (headroom plan -- vllm serve MODEL --max-model-len ...), and the plan starts from it" \
  Qwen/Qwen3-4B-Instruct-2507 --gpu L4 --offline --max-model-len 4096
check_error kept-bad-json "headroom: error: --limit-mm-per-prompt: not a JSON object in '{bad' (expected e.g. '{\"image\": 0, \"video\": 0}')" \
  Qwen/Qwen2.5-VL-7B-Instruct --gpu L4 --offline --limit-mm-per-prompt '{bad'
check_error kept-bad-mode "headroom: error: --performance-mode: invalid choice: 'fast' (choose from 'balanced', 'interactivity', 'throughput')" \
  Qwen/Qwen3-4B-Instruct-2507 --gpu L4 --offline --performance-mode fast

if [ "$failures" -ne 0 ]; then echo "$failures failure(s)"; exit 1; fi
echo "plan: all checks passed"
