#!/usr/bin/env bash
# Numbers a user or client names reach no arithmetic unchecked: sizes beyond headroom's limits
# (engine_limits.h) are refused at once with the bound, versions that overflow are refused, and
# the printed numbers of check and plan agree with the flags given.
set -uo pipefail
bin="${HEADROOM_BIN:?}"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
export NO_COLOR=1 HF_HUB_OFFLINE=1 HF_HUB_CACHE="$tmp/hf" HEADROOM_NVML_LIBRARY=/nonexistent/libnvidia-ml.so.1 \
  HEADROOM_NVIDIA_SMI=/nonexistent/nvidia-smi HEADROOM_DB="$tmp/history.db"

# expect NAME EXIT STDERR_LINE ARGS...: the exit code and the exact first line of stderr.
expect() {
  local name="$1" want_rc="$2" want_err="$3"
  shift 3
  "$bin" "$@" </dev/null >"$tmp/$name.out" 2>"$tmp/$name.err"
  local rc=$?
  [ "$rc" -eq "$want_rc" ] || fail "$name: exit $rc, expected $want_rc; stderr: $(head -c 400 "$tmp/$name.err")"
  local first
  first="$(head -n 1 "$tmp/$name.err")"
  [ "$first" = "$want_err" ] || fail "$name: stderr '$first', expected '$want_err'"
}

expect tp_huge 2 "headroom: error: --tensor-parallel-size: must be between 1 and 1,024, got 65,536" \
  check Qwen/Qwen2.5-7B-Instruct --gpu H100 -tp 65536
expect pp_huge 2 "headroom: error: --pipeline-parallel-size: must be between 1 and 1,024, got 8,192" \
  check Qwen/Qwen2.5-7B-Instruct --gpu H100 -pp 8192
expect version_wraps 2 \
  "headroom: error: --vllm-version: version component 4294967296 in '4294967296.0' is out of range (each part is at most 99999); expected a vLLM version like 0.19.0" \
  check Qwen/Qwen2.5-7B-Instruct --gpu H100 --vllm-version 4294967296.0
expect plan_concurrency_huge 2 \
  "headroom: error: --concurrency: the number of requests must be between 1 and 1,048,576, got 1,000,000,000" \
  plan Qwen/Qwen2.5-7B-Instruct --gpu H100 --concurrency 1000000000
expect gpus_huge 2 "headroom: error: --gpus: the GPU count must be between 1 and 4,096, got 100,000" \
  check Qwen/Qwen2.5-7B-Instruct --gpu H100 --gpus 100000

# A number read from a config is checked before arithmetic: rope_scaling.factor 1e300 made
# max_model_len -9223372036854775808; now an error with the key's line and column.
mkdir -p "$tmp/rope" "$tmp/heads"
cat >"$tmp/rope/config.json" <<'JSON'
{"architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": 4096, "intermediate_size": 14336,
 "num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": 8, "vocab_size": 128256,
 "max_position_embeddings": 8192, "torch_dtype": "bfloat16", "rope_scaling": {"rope_type": "yarn", "factor": 1e300}}
JSON
expect rope_factor 1 \
  "headroom: error: $tmp/rope/config.json:3:100: expected \"rope_scaling.factor\" between 0 and 1024, got 1e+300" \
  check "$tmp/rope" --gpu H100

# More KV heads than query heads: vLLM refuses it (Attention's assert).
cat >"$tmp/heads/config.json" <<'JSON'
{"architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": 4096, "intermediate_size": 14336,
 "num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": 64, "vocab_size": 128256,
 "max_position_embeddings": 8192, "torch_dtype": "bfloat16"}
JSON
"$bin" check "$tmp/heads" --gpu H100 >"$tmp/heads.out" 2>"$tmp/heads.err"
rc=$?
[ "$rc" -eq 3 ] || fail "heads: exit $rc, expected 3"
grep -q "vLLM would say: num_heads (32) is not divisible by num_kv_heads (64)" "$tmp/heads.out" || fail "heads: no attention-heads failure"

# An architecture that neither vLLM's registry nor transformers has, with no remote code: vLLM refuses
# it up to the release the registry was read at (v0.12.0); a later release may have added it, so
# there headroom warns and gives no verdict from it.
mkdir -p "$tmp/evil"
sed 's/LlamaForCausalLM/EvilForCausalLM/; s/"num_key_value_heads": 64/"num_key_value_heads": 8/' "$tmp/heads/config.json" >"$tmp/evil/config.json"
"$bin" check "$tmp/evil" --gpu H100 --vllm-version 0.12.0 >"$tmp/evil.out" 2>"$tmp/evil.err"
rc=$?
[ "$rc" -eq 3 ] || fail "evil: exit $rc, expected 3"
grep -q "vLLM would say: Model architectures \['EvilForCausalLM'\] are not supported for now" "$tmp/evil.out" ||
  fail "evil: $(cat "$tmp/evil.out")"
"$bin" check "$tmp/evil" --gpu H100 --vllm-version 0.19.0 >"$tmp/evil19.out" 2>"$tmp/evil19.err"
rc=$?
[ "$rc" -eq 0 ] || fail "evil at 0.19: exit $rc, expected 0"
grep -q "vLLM 0.19.0 is newer and may have added it" "$tmp/evil19.err" "$tmp/evil19.out" || fail "evil at 0.19: no warning"

# A mistyped flag is vLLM's argparse failure, and the flag it meant is named.
"$bin" check Qwen/Qwen2.5-7B-Instruct --gpu H100 --max-modle-len 5 >"$tmp/typo.out" 2>"$tmp/typo.err"
[ $? = 3 ] || fail "typo: not a predicted failure: $(cat "$tmp/typo.out")"
grep -qF "vllm serve: error: unrecognized arguments: --max-modle-len 5" "$tmp/typo.out" || fail "typo: $(cat "$tmp/typo.out")"
grep -qF "did you mean --max-model-len?" "$tmp/typo.err" || fail "typo: $(cat "$tmp/typo.err")"

# --max-model-len 16384: the longest request served is 16,384, not the 32,768 a max_model_len could reach.
"$bin" check Qwen/Qwen2.5-7B-Instruct --gpu H100 --max-model-len 16384 >"$tmp/len.out" 2>/dev/null
grep -q "longest request served: 16,384 tokens (max_model_len); a max_model_len up to 32,768 would fit" "$tmp/len.out" ||
  fail "len: $(grep longest "$tmp/len.out")"

# --concurrency 10000 on one H100, no --context (32,768 tokens): the fewer-requests change is at most what the
# reason says the KV cache holds, at the same length (before: 4218 requests "fit" in room for 33.98).
"$bin" plan Qwen/Qwen2.5-7B-Instruct --gpu H100 --concurrency 10000 >"$tmp/conc.out" 2>/dev/null
held="$(sed -n 's/.*tokens (\([0-9.]*\) requests); the workload needs.*/\1/p' "$tmp/conc.out" | head -n 1)"
offered="$(sed -n 's/.*- \([0-9]*\) request(s) of 32,768 tokens at once fit.*/\1/p' "$tmp/conc.out" | head -n 1)"
[ -n "$held" ] && [ -n "$offered" ] || fail "concurrency: no reason or no fewer-requests change: $(cat "$tmp/conc.out")"
awk -v h="${held:-0}" -v o="${offered:-0}" 'BEGIN { exit !(o >= 1 && o <= h) }' ||
  fail "concurrency: offers $offered requests where the KV cache holds $held"

# No --context: the plan serves several requests (4), and the longest context is an alternative.
"$bin" plan meta-llama/Llama-3.1-8B-Instruct --gpu 4090 >"$tmp/ctx.out" 2>/dev/null
grep -q "no --context given: the longest that holds 4 requests at once" "$tmp/ctx.out" || fail "ctx: no reason for the context"
rec_len="$(sed -n 's/^  max_model_len *\([0-9]*\) .*/\1/p' "$tmp/ctx.out" | head -n 1)"
alt_len="$(sed -n 's/.*longer context: requests up to \([0-9,]*\) tokens.*/\1/p' "$tmp/ctx.out" | tr -d , | head -n 1)"
[ -n "$rec_len" ] && [ -n "$alt_len" ] && [ "$alt_len" -gt "$rec_len" ] ||
  fail "ctx: recommended $rec_len, longer-context alternative '$alt_len'"

if [ "$failures" -gt 0 ]; then
  echo "$failures failure(s)"
  exit 1
fi
echo "numbers: all passed"
