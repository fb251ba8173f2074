#!/usr/bin/env bash
# `check --format json` and `plan --format json` validate against docs/check.schema.json and
# docs/plan.schema.json (python3-jsonschema from Debian): models of each kind, several GPUs and
# vLLM eras, outcomes that start and fail, plans that fit, span nodes, and do not fit.
set -uo pipefail
bin="${HEADROOM_BIN:?}"
src="${HEADROOM_SOURCE_DIR:?}"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
validate=(/usr/bin/python3 "$src/tests/cli/lib/validate_json.py")

export NO_COLOR=1 HF_HUB_CACHE="$tmp/hf" HEADROOM_NVML_LIBRARY=/nonexistent/libnvidia-ml.so.1 \
  HEADROOM_NVIDIA_SMI=/nonexistent/nvidia-smi HEADROOM_DB="$tmp/none.db"

# json KIND NAME EXPECTED_EXIT ARGS...: runs `headroom KIND ARGS --format json` into $tmp/KIND/NAME.json.
json() {
  local kind="$1" name="$2" expected="$3"
  shift 3
  mkdir -p "$tmp/$kind"
  "$bin" "$kind" "$@" --format json >"$tmp/$kind/$name.json" 2>"$tmp/$kind/$name.err"
  local rc=$?
  [ "$rc" -eq "$expected" ] || fail "$kind $name: exit $rc, expected $expected: $(cat "$tmp/$kind/$name.err")"
}

json check dense_ok 0 meta-llama/Llama-3.1-8B-Instruct --gpu H100 --max-model-len 8192 --vllm-version 0.19.0
json check dense_kv_insufficient 3 meta-llama/Llama-3.1-8B-Instruct --gpu "RTX 4090" --vllm-version 0.21.0
json check weights_oom 3 meta-llama/Llama-3.1-70B-Instruct --gpu "A100 80GB" --vllm-version 0.11.0
json check tp_not_divisible 3 meta-llama/Llama-3.1-8B-Instruct --gpu H100 --gpus 8 -tp 3 --vllm-version 0.19.0
json check quant_mismatch 3 Qwen/Qwen2.5-7B-Instruct-AWQ --gpu H100 --quantization fp8 --vllm-version 0.19.0
json check fp8_block_shape 3 Qwen/Qwen3-30B-A3B-FP8 --gpu H100 --gpus 8 -tp 8 --max-model-len 8192 --vllm-version 0.19.0
json check mamba_blocks 3 Qwen/Qwen3-Next-80B-A3B-Instruct --gpu H200 --gpus 2 -tp 2 --max-model-len 262144 --max-num-seqs 1024 --gpu-memory-utilization 0.6
json check moe_tp 0 Qwen/Qwen3-30B-A3B --gpu L40S --gpus 2 -tp 2 --max-model-len 16384 --vllm-version 0.10.1
json check mla_fp8_kv 0 deepseek-ai/DeepSeek-V2-Lite --gpu H100 --kv-cache-dtype fp8 --max-model-len 8192 --vllm-version 0.19.0
json check sliding_window 0 google/gemma-3-27b-it --gpu "A100 80GB" --max-model-len 8192 --vllm-version 0.8.5
json check hybrid 0 Qwen/Qwen3-Next-80B-A3B-Instruct --gpu H200 --gpus 2 -tp 2 --max-model-len 32768
json check v0_era_used 0 mistralai/Mistral-7B-Instruct-v0.3 --gpu "A100 80GB" --used-gib 2 --max-model-len 4096 --vllm-version 0.6.3
json check pp_partition 3 meta-llama/Llama-3.1-70B-Instruct --gpu H100 --gpus 2 -pp 2 --max-model-len 8192 --env VLLM_PP_LAYER_PARTITION=40,39
json check pipeline_nodes 0 meta-llama/Meta-Llama-3.1-405B-Instruct-FP8 --gpu H100 --nodes 2 --gpus 8 -tp 8 -pp 2 --max-model-len 16384
json check config_file 0 "$src/tests/data/models/llama_gqa.json" --gpu L4 --max-model-len 2048 --vllm-version 0.7.3
json check custom_gpu 0 Qwen/Qwen3-8B --gpu-memory-gib 40 --max-model-len 8192 --gpu-memory-utilization 0.8

# An Ultravox release config that names its language model and Whisper checkpoint by repo id: both
# read from the Hugging Face cache and listed in model.linked_repos.
for repo in fixie-test--ultravox test-org--llama test-org--whisper; do mkdir -p "$tmp/hf/models--$repo/snapshots/0123abcd"; done
printf '%s' '{"architectures": ["UltravoxModel"], "model_type": "ultravox", "hidden_size": 4096, "stack_factor": 8,
  "text_model_id": "test-org/llama", "audio_model_id": "test-org/whisper"}' >"$tmp/hf/models--fixie-test--ultravox/snapshots/0123abcd/config.json"
cp "$src/tests/data/models/llama_gqa.json" "$tmp/hf/models--test-org--llama/snapshots/0123abcd/config.json"
printf '%s' '{"architectures": ["WhisperForConditionalGeneration"], "model_type": "whisper", "d_model": 1280, "encoder_layers": 32,
  "encoder_attention_heads": 20, "encoder_ffn_dim": 5120, "num_mel_bins": 128, "max_source_positions": 1500}' \
  >"$tmp/hf/models--test-org--whisper/snapshots/0123abcd/config.json"
json check ultravox_linked 0 fixie-test/ultravox --gpu L4 --max-model-len 8192 --vllm-version 0.19.0 --offline
/usr/bin/python3 - "$tmp/check/ultravox_linked.json" <<'PY' || fail "check ultravox_linked: model.linked_repos"
import json, sys
m = json.load(open(sys.argv[1]))["model"]
assert m["architecture"] == "UltravoxModel", m
assert [(r["key"], r["repo"], r["source"]) for r in m["linked_repos"]] == [
    ("text_model_id", "test-org/llama", "the Hugging Face cache"),
    ("audio_model_id", "test-org/whisper", "the Hugging Face cache")], m["linked_repos"]
PY

json plan fits 0 Qwen/Qwen3-8B --gpu "RTX 4090" --context 8192 --concurrency 4 --vllm-version 0.19.0
json plan context_goal 0 meta-llama/Llama-3.1-8B-Instruct --gpu "A100 80GB" --goal context --vllm-version 0.11.0
json plan alternatives 0 meta-llama/Llama-3.1-70B-Instruct --gpu H100 --gpus 8 --context 8192 --concurrency 16 --allow-fp8-kv --allow-eager
json plan two_nodes 0 meta-llama/Meta-Llama-3.1-405B-Instruct-FP8 --gpu H100 --nodes 2 --gpus-per-node 8 --context 16384
json plan no_fit 3 meta-llama/Llama-3.1-70B-Instruct --gpu "RTX 4080" --context 4096 --vllm-version 0.19.0
json plan latency_used 0 microsoft/Phi-3-mini-4k-instruct --gpu "RTX 3080 12GB" --used-gib 0.6 --goal latency

for kind in check plan; do
  out="$("${validate[@]}" "$src/docs/$kind.schema.json" "$tmp/$kind"/*.json 2>&1)" || fail "$kind JSON does not match docs/$kind.schema.json:
$out"
done

# The schemas reject what breaks them: a renamed key, a wrong type, an outcome without its failure.
/usr/bin/python3 - "$tmp" <<'PY'
import json, sys
tmp = sys.argv[1]
doc = json.load(open(f"{tmp}/check/dense_ok.json"))
doc["kv_cache_token"] = doc.pop("kv_cache_tokens")
json.dump(doc, open(f"{tmp}/renamed.json", "w"))
doc = json.load(open(f"{tmp}/check/dense_ok.json"))
doc["outcome"] = "fails"
json.dump(doc, open(f"{tmp}/no_failure.json", "w"))
doc = json.load(open(f"{tmp}/plan/fits.json"))
doc["recommended"]["prediction"]["memory"]["weights_gib"] = "16 GiB"
json.dump(doc, open(f"{tmp}/nested_type.json", "w"))
PY
for bad in renamed no_failure; do
  "${validate[@]}" "$src/docs/check.schema.json" "$tmp/$bad.json" >/dev/null && fail "check.schema.json accepts $bad.json"
done
"${validate[@]}" "$src/docs/plan.schema.json" "$tmp/nested_type.json" >/dev/null && fail "plan.schema.json accepts nested_type.json"

[ "$failures" -eq 0 ] && echo "json_schema: all passed"
exit $((failures > 0))
