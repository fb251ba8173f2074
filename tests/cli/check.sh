#!/usr/bin/env bash
# `headroom check` text and JSON compared with golden files in tests/golden/check/
# (HEADROOM_UPDATE_GOLDEN=1 rewrites them), and bad input with exact stderr and exit codes.
set -uo pipefail
bin="${HEADROOM_BIN:?}"
src="${HEADROOM_SOURCE_DIR:?}"
golden="$src/tests/golden/check"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
failures=0
mkdir -p "$golden"

source "$(dirname "${BASH_SOURCE[0]}")/lib/golden.sh"

# No colour, no live GPUs, no Hugging Face cache of the machine running the tests.
export NO_COLOR=1 HF_HUB_OFFLINE=1 HF_HUB_CACHE="$tmp/hf" HEADROOM_NVML_LIBRARY=/nonexistent/libnvidia-ml.so.1 \
  HEADROOM_NVIDIA_SMI=/nonexistent/nvidia-smi

# run NAME EXPECTED_EXIT ARGS...: runs headroom check, keeps stdout/stderr (temp paths as TMP).
run() {
  local name="$1" expected="$2"
  shift 2
  "$bin" check "$@" >"$tmp/$name.out" 2>"$tmp/$name.raw_err"
  local rc=$?
  sed "s|$tmp|TMP|g" "$tmp/$name.raw_err" >"$tmp/$name.err"
  [ "$rc" -eq "$expected" ] || fail "$name: exit $rc, expected $expected; stderr: $(cat "$tmp/$name.err")"
}



check_no_stdout() { [ -s "$tmp/$1.out" ] && fail "$1: printed on stdout"; }

llama8b=meta-llama/Llama-3.1-8B-Instruct
v=(--vllm-version 0.19.0)

# ---- a local folder with safetensors: weights are exact, read from the headers ----
mkdir -p "$tmp/tiny"
cat >"$tmp/tiny/config.json" <<'JSON'
{"architectures": ["LlamaForCausalLM"], "model_type": "llama", "num_hidden_layers": 2, "hidden_size": 256,
 "intermediate_size": 512, "num_attention_heads": 4, "num_key_value_heads": 2, "vocab_size": 1024,
 "max_position_embeddings": 4096, "torch_dtype": "bfloat16", "tie_word_embeddings": false}
JSON
python3 - "$tmp/tiny/model.safetensors" <<'PY'
import json, struct, sys
shapes = {"model.embed_tokens.weight": [1024, 256], "lm_head.weight": [1024, 256], "model.norm.weight": [256]}
for i in range(2):
    p = f"model.layers.{i}."
    shapes.update({p + "self_attn.q_proj.weight": [256, 256], p + "self_attn.k_proj.weight": [128, 256],
                   p + "self_attn.v_proj.weight": [128, 256], p + "self_attn.o_proj.weight": [256, 256],
                   p + "mlp.gate_proj.weight": [512, 256], p + "mlp.up_proj.weight": [512, 256],
                   p + "mlp.down_proj.weight": [256, 512], p + "input_layernorm.weight": [256],
                   p + "post_attention_layernorm.weight": [256]})
header, offset = {}, 0
for name, shape in shapes.items():
    n = 2
    for d in shape: n *= d
    header[name] = {"dtype": "BF16", "shape": shape, "data_offsets": [offset, offset + n]}
    offset += n
blob = json.dumps(header).encode()
with open(sys.argv[1], "wb") as f:
    f.write(struct.pack("<Q", len(blob)) + blob + bytes(offset))
PY
run local_folder 0 "$tmp/tiny" --gpu-memory-gib 8 --format json "${v[@]}"
python3 -c '
import json, sys
j = json.load(open(sys.argv[1]))
assert j["model"]["source"] == "local folder", j["model"]
assert j["sources"]["weights"] == "exact (safetensors headers)", j["sources"]
# 2 × 1024 × 256 + 256 + 2 × (256² + 2·128·256 + 256² + 3·512·256 + 2·256) parameters, bf16
assert j["model"]["weights_bytes"] == 2 * (2*1024*256 + 256 + 2*(256*256 + 2*128*256 + 256*256 + 3*512*256 + 2*256)), j["model"]
assert j["outcome"] == "ok", j["failure"]
' "$tmp/local_folder.out" || fail "local_folder: $(head -c 400 "$tmp/local_folder.out")"

# ---- predictions (golden) ----
run dense_h100 0 "$llama8b" --gpu H100 --max-model-len 32768 --color never "${v[@]}"
check_golden dense_h100 dense_h100.txt
check_stderr dense_h100 ""

run dense_h100_json 0 "$llama8b" --gpu H100 --max-model-len 32768 --format json "${v[@]}"
check_golden dense_h100_json dense_h100.json

run tp2 0 "$llama8b" --gpu H100 -tp 2 --max-model-len 32768 --color never "${v[@]}"
check_golden tp2 tp2_h100.txt

run tp2_json 0 "$llama8b" --gpu H100 -tp 2 --max-model-len 32768 --format json "${v[@]}"
check_golden tp2_json tp2_h100.json

run no_fit 3 meta-llama/Llama-3.1-70B-Instruct --gpu H100 --color never "${v[@]}"
check_golden no_fit no_fit_70b_h100.txt

run no_fit_json 3 meta-llama/Llama-3.1-70B-Instruct --gpu H100 --format json "${v[@]}"
check_golden no_fit_json no_fit_70b_h100.json

run vllm_serve 0 --gpu H100 --color never "${v[@]}" -- vllm serve "$llama8b" --max-model-len 16384 \
  --gpu-memory-utilization 0.85 --host 0.0.0.0 --port 8000
check_golden vllm_serve vllm_serve.txt
check_stderr vllm_serve ""

run api_server 0 --gpu H100 --color never "${v[@]}" -- python -m vllm.entrypoints.openai.api_server \
  --model "$llama8b" --max-model-len 16384 --swap-space 8 --max-lora-rank 64
check_golden api_server api_server.txt
# --swap-space sizes CPU blocks only (host memory), so it is accepted silently.
check_stderr api_server "headroom: warning: vLLM flag --max-lora-rank 64 is not modelled; the prediction ignores it: the LoRA weight slots (max_loras x rank per adapted layer) and the LoRA CUDA graphs are not counted, so vLLM will find less KV cache than predicted"

# A mistyped flag: vLLM's argparse exits before anything starts; the verdict says so, a warning
# names the flag it most likely meant.
run typo 3 --gpu H100 --color never "${v[@]}" -- vllm serve "$llama8b" --max-modle-len 5
grep -qF "verdict: fails at config (unrecognized_arguments)" "$tmp/typo.out" || fail "typo: no failure verdict: $(cat "$tmp/typo.out")"
grep -qF "  vLLM would say: vllm serve: error: unrecognized arguments: --max-modle-len 5" "$tmp/typo.out" ||
  fail "typo: not vLLM's message: $(cat "$tmp/typo.out")"
check_stderr typo "headroom: warning: --max-modle-len is not a vLLM flag; did you mean --max-model-len?"
# A real vLLM flag headroom does not model, and argparse's --help, start as before.
run real_flag 0 --gpu H100 --color never "${v[@]}" -- vllm serve "$llama8b" --max-model-len 4096 --max-num-partial-prefills 2 --help
check_stderr real_flag "headroom: warning: vLLM flag --max-num-partial-prefills 2 is not modelled; the prediction ignores it
headroom: warning: vLLM flag --help is not modelled; the prediction ignores it"

run gpu_memory_gib 0 "$llama8b" --gpu-memory-gib 48 --max-model-len 16384 --color never "${v[@]}"
check_golden gpu_memory_gib gpu_memory_gib_48.txt

run old_version 0 "$llama8b" --gpu H100 --max-model-len 16384 --color never --vllm-version 0.10.1
check_golden old_version vllm_0_10_1.txt

run fp8_kv 0 "$llama8b" --gpu H100 --max-model-len 32768 --kv-cache-dtype fp8 --color never "${v[@]}"
check_golden fp8_kv fp8_kv.txt

run fp8_kv_json 0 "$llama8b" --gpu H100 --max-model-len 32768 --kv-cache-dtype fp8 --format json "${v[@]}"
check_golden fp8_kv_json fp8_kv.json

# ---- entry points: a pasted LLM(...) call, --entrypoint, VAR=value, --env, --config YAML ----
jq_py() { python3 -c "import json, sys; j = json.load(open(sys.argv[1])); $2" "$tmp/$1.out" || fail "$1: $(head -c 300 "$tmp/$1.out")"; }

run llm_call 0 --gpu H100 --format json "${v[@]}" -- "LLM(model=\"$llama8b\", max_model_len=16384, gpu_memory_utilization=0.85)"
# engine/arg_utils.py get_batch_defaults, LLM_CLASS on a >= 70 GiB GPU: 16384 batched tokens.
jq_py llm_call 'assert j["settings"]["usage_context"] == "llm_class" and j["settings"]["max_num_batched_tokens"] == 16384 and j["settings"]["gpu_memory_utilization"] == 0.85, j["settings"]'

run entrypoint_llm 0 "$llama8b" --gpu L4 --entrypoint llm --max-model-len 8192 --format json "${v[@]}"
jq_py entrypoint_llm 'assert j["settings"]["max_num_batched_tokens"] == 8192 and j["settings"]["max_num_seqs"] == 256, j["settings"]'

run env_prefix 0 --gpu H100 --format json --vllm-version 0.21.0 -- VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS=0 vllm serve "$llama8b" --max-model-len 8192
jq_py env_prefix 'assert j["settings"]["estimate_cuda_graphs"] is False, j["settings"]'
run env_option 0 "$llama8b" --gpu H100 --format json --vllm-version 0.21.0 --env VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS=0 --max-model-len 8192
jq_py env_option 'assert j["settings"]["estimate_cuda_graphs"] is False, j["settings"]'

# A whole command pasted as one quoted argument is split as the shell would split it.
run pasted_one_word 0 --gpu H100 --format json "${v[@]}" -- "VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS=1 vllm serve $llama8b --max-model-len 8192 --gpu-memory-utilization '0.85'"
jq_py pasted_one_word 'assert j["settings"]["max_model_len"] == 8192 and j["settings"]["gpu_memory_utilization"] == 0.85 and j["settings"]["estimate_cuda_graphs"] is True, j["settings"]'
run pasted_unbalanced 2 --gpu H100 "${v[@]}" -- "vllm serve $llama8b --max-model-len '8192"
grep -q "unterminated single quote" "$tmp/pasted_unbalanced.err" || fail "pasted_unbalanced: $(cat "$tmp/pasted_unbalanced.err")"

printf 'model: %s\ntensor-parallel-size: 2\nmax-model-len: 8192\nport: 8000\n' "$llama8b" >"$tmp/serve.yaml"
run config_yaml 0 --gpu H100 --format json "${v[@]}" -- vllm serve --config "$tmp/serve.yaml" --max-model-len 4096
jq_py config_yaml 'assert j["settings"]["tensor_parallel_size"] == 2 and j["settings"]["max_model_len"] == 4096, j["settings"]'

# ---- startup checks and the range outside the calibration ----
run vocab_tp5 3 Qwen/Qwen3-14B --gpu H100 --gpus 5 -tp 5 --max-model-len 8192 --format json "${v[@]}"
jq_py vocab_tp5 'assert j["failure"]["message"] == "151936 is not divisible by 5" and j["failure"]["phase"] == "model-construction", j["failure"]'

run range_4090 0 "$llama8b" --gpu "RTX 4090" --max-model-len 8192 --format json "${v[@]}"
jq_py range_4090 'r = j["kv_cache_range"]; assert r and r["kv_tokens_low"] < j["kv_cache_tokens"] < r["kv_tokens_high"] and "Hopper" in r["reasons"][0], r'
run range_h100 0 "$llama8b" --gpu H100 --max-model-len 8192 --format json "${v[@]}"
# Inside the calibrated region the range is the held-out error, 1.1 % either side, with no reason.
jq_py range_h100 'r = j["kv_cache_range"]; t = j["kv_cache_tokens"]; assert r["calibrated"] and not r["reasons"] and abs(r["kv_tokens_high"] - t * 1.011) <= 1 and abs(r["kv_tokens_low"] - t * 0.989) <= 1, r'
run range_h100_text 0 "$llama8b" --gpu H100 --max-model-len 8192 "${v[@]}"
grep -q "tokens: inside what the calibration covers, where 9 in 10 runs it had not seen came within 1.1 %" "$tmp/range_h100_text.out" ||
  fail "range_h100_text: no calibrated range: $(cat "$tmp/range_h100_text.out")"

# A count written into the GPU's name ("2xA100", "H100:8") is --gpus; --vllm is --vllm-version.
run counted_gpu 0 "$llama8b" --gpu 2xA100 -tp 2 --vllm 0.19 --format json --no-history
jq_py counted_gpu 'assert j["gpu"]["count"] == 2 and j["gpu"]["key"] == "a100-sxm4-40gb" and j["vllm_version"] == "0.19.0", (j["gpu"], j["vllm_version"])'
run counted_gpu_colon 0 "$llama8b" --gpu H100:4 -tp 4 --format json "${v[@]}"
jq_py counted_gpu_colon 'assert j["gpu"]["count"] == 4 and j["settings"]["tensor_parallel_size"] == 4, j["gpu"]'
run counted_gpu_conflict 2 "$llama8b" --gpu 2xA100 --gpus 4
check_stderr counted_gpu_conflict "headroom: error: --gpu: '2xA100' means 2 GPUs but --gpus says 4: give the count once"

run bad_env 2 "$llama8b" --gpu H100 --env NOEQUALS
check_stderr bad_env "headroom: error: --env: expected VAR=value, got 'NOEQUALS'"

# ---- 2026 families at the default version (v0.33 modelled with v0.31 rules) ----
run qwen35 0 Qwen/Qwen3.5-27B --gpu H100 --max-model-len 32768 --max-num-seqs 256 --color never
check_golden qwen35 qwen35_27b_h100.txt
grep -q '^rules   v0.33 modelled with v0.31 rules$' "$tmp/qwen35.out" || fail "qwen35: no rules line"

run deepseek_v32_json 0 deepseek-ai/DeepSeek-V3.2 --gpu H200 -tp 8 --max-model-len 65536 --format json
check_golden deepseek_v32_json deepseek_v32_h200_tp8.json

run deepseek_v4 0 deepseek-ai/DeepSeek-V4-Flash --gpu B200 -tp 4 --max-model-len 131072 --color never
check_golden deepseek_v4 deepseek_v4_flash_b200_tp4.txt

run glm52 0 zai-org/GLM-5.2-FP8 --gpu B200 -tp 8 --max-model-len 131072 --color never
check_golden glm52 glm52_fp8_b200_tp8.txt

run gemma4 0 nvidia/Gemma-4-31B-IT-NVFP4 --gpu B200 --max-model-len 65536 --color never
check_golden gemma4 gemma4_31b_nvfp4_b200.txt

# A catalogue line whose quantization config was not read: the method is a guess from the repo
# name, labelled as one in text and JSON, and the architecture's source names the base line.
run guessed_quant 0 Qwen/Qwen3-8B-FP8 --gpu "RTX 4090" --max-model-len 16384 --vllm-version 0.19.0 --color never
check_golden guessed_quant guessed_quant_qwen3_8b_fp8_4090.txt
run guessed_quant_json 0 Qwen/Qwen3-8B-FP8 --gpu "RTX 4090" --max-model-len 16384 --vllm-version 0.19.0 --format json
grep -q '"guessed_from": "the repo name"' "$tmp/guessed_quant_json.out" || fail "guessed_quant_json: no guessed_from"

# A repo the catalogue lacks and nothing read (offline): the catalogue model its name extends,
# named as assumed in text and JSON, with the quantization its name says as a guess.
run assumed 0 someone/Qwen3-30B-A3B-AWQ-4bit --gpu "RTX 3090" --max-model-len 2048 --vllm-version 0.10.0 --offline --color never
grep -q "architecture assumed from Qwen/Qwen3-30B-A3B" "$tmp/assumed.out" || fail "assumed: no assumed architecture in the model line"
grep -q "its architecture is assumed to be Qwen/Qwen3-30B-A3B's" "$tmp/assumed.err" || fail "assumed: no note on stderr"
grep -q "^quant   awq 4-bit  (a guess from the repo name" "$tmp/assumed.out" || fail "assumed: quantization not labelled a guess"
grep -q "^verdict: starts, if the repo is Qwen/Qwen3-30B-A3B underneath" "$tmp/assumed.out" || fail "assumed: verdict not conditional"
run assumed_json 0 someone/Qwen3-30B-A3B-AWQ-4bit --gpu "RTX 3090" --max-model-len 2048 --vllm-version 0.10.0 --offline --format json
grep -q '"architecture_assumed_from": "Qwen/Qwen3-30B-A3B"' "$tmp/assumed_json.out" || fail "assumed_json: no architecture_assumed_from"
# A name that extends a base by another modality is not assumed: the unknown-model error stands.
run not_assumed 1 someone/Qwen3-8B-Eagle3 --gpu H100 --offline
grep -q "unknown model 'someone/Qwen3-8B-Eagle3'" "$tmp/not_assumed.err" || fail "not_assumed: $(cat "$tmp/not_assumed.err")"

run nemotron3 0 nvidia/NVIDIA-Nemotron-3-Super-120B-A12B-FP8 --gpu H100 -tp 2 --max-model-len 65536 --max-num-seqs 128 --color never
check_golden nemotron3 nemotron3_super_fp8_h100_tp2.txt

run mimo_json 0 XiaomiMiMo/MiMo-V2-Flash --gpu H200 -tp 4 --max-model-len 65536 --format json
check_golden mimo_json mimo_v2_flash_h200_tp4.json

# ---- bad input: exact stderr and exit code ----
run missing_path 1 ./no/such/dir --gpu H100
check_stderr missing_path "headroom: error: ./no/such/dir: no such folder or file (a local model is a folder with config.json, or a .gguf file)"
check_no_stdout missing_path

mkdir -p "$tmp/malformed"
printf '{"num_hidden_layers": 32,\n  "hidden_size": }\n' >"$tmp/malformed/config.json"
run malformed_config 1 "$tmp/malformed" --gpu H100
check_stderr malformed_config "headroom: error: TMP/malformed/config.json:2:18: malformed JSON: syntax error while parsing value - unexpected '}'; expected '[', '{', or a literal"

mkdir -p "$tmp/absurd" "$tmp/short"
cp "$src/tests/data/models/llama_gqa.json" "$tmp/absurd/config.json"
cp "$src/tests/data/models/llama_gqa.json" "$tmp/short/config.json"
# An 8-byte little-endian header length of 2^60, then "{}".
printf '\x00\x00\x00\x00\x00\x00\x00\x10{}' >"$tmp/absurd/model.safetensors"
run safetensors_absurd 1 "$tmp/absurd" --gpu H100
check_stderr safetensors_absurd "headroom: error: TMP/absurd/model.safetensors: header length 1152921504606846976 bytes is absurd (limit 104857600); not a safetensors file?"
# A header length of 100 followed by 2 bytes.
printf '\x64\x00\x00\x00\x00\x00\x00\x00{}' >"$tmp/short/model.safetensors"
run safetensors_short 1 "$tmp/short" --gpu H100
check_stderr safetensors_short "headroom: error: TMP/short/model.safetensors: file cut short: the header claims 100 bytes but only 2 follow the length"

run unknown_model 1 llama-3.1-8b --gpu H100
check_stderr unknown_model "headroom: error: unknown model 'llama-3.1-8b': not a folder or file, not in the Hugging Face cache (TMP/hf), not in the built-in catalogue; did you mean meta-llama/Llama-3.1-8B, meta-llama/Meta-Llama-3.1-8B or meta-llama/Llama-3.1-8B-Instruct?"

run unknown_gpu 1 "$llama8b" --gpu H10
check_stderr unknown_gpu "headroom: error: --gpu: unknown GPU 'H10'; did you mean a10, H100 or H20? ('headroom gpus --catalog' lists the known GPUs; --gpu-memory-gib sets any size)"

run util_high 2 "$llama8b" --gpu H100 --gpu-memory-utilization 1.5
check_stderr util_high "headroom: error: --gpu-memory-utilization: must be in (0, 1], got 1.5000 (it is a fraction of the GPU's total memory, e.g. 0.9)"
check_no_stdout util_high

run util_zero 2 "$llama8b" --gpu H100 --gpu-memory-utilization 0
check_stderr util_zero "headroom: error: --gpu-memory-utilization: must be in (0, 1], got 0.0000 (it is a fraction of the GPU's total memory, e.g. 0.9)"

run negative_len 2 "$llama8b" --gpu H100 --max-model-len -5
check_stderr negative_len "headroom: error: --max-model-len: must be a positive number of tokens (or auto / -1), got -5"

run seqs_abc 2 "$llama8b" --gpu H100 --max-num-seqs abc
check_stderr seqs_abc "headroom: error: --max-num-seqs: expected an integer, got 'abc'"

run no_model 2 --gpu H100
check_stderr no_model "headroom: error: no model given: headroom check MODEL [vLLM flags] (see 'headroom check --help')"

"$bin" chekc >"$tmp/unknown_cmd.out" 2>"$tmp/unknown_cmd.err"
rc=$?
[ "$rc" -eq 2 ] || fail "unknown_cmd: exit $rc, expected 2"
[ "$(head -n 1 "$tmp/unknown_cmd.err")" = "headroom: error: unknown command 'chekc'; did you mean check?" ] ||
  fail "unknown_cmd: stderr was $(head -n 1 "$tmp/unknown_cmd.err")"

run help 0 --help
grep -q -- "--gpu-memory-gib" "$tmp/help.out" || fail "help: --gpu-memory-gib not in --help"

if [ "$failures" -ne 0 ]; then
  echo "$failures failure(s)"
  exit 1
fi
echo "all check CLI checks passed"
