#!/usr/bin/env bash
# `headroom serve` on loopback: each route's answer is byte for byte the CLI's --format json
# document; errors are {"error": {code, message, where}} with their statuses; the size limits,
# /metrics, the response cache and the access log.
set -uo pipefail
bin="${HEADROOM_BIN:?}"
src="${HEADROOM_SOURCE_DIR:?}"
logs="$src/tests/data/logs"
tmp="$(mktemp -d)"
servers=()
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
source "$(dirname "${BASH_SOURCE[0]}")/lib/serve.sh"
trap 'stop_servers; rm -rf "$tmp"' EXIT

# No live GPUs, no Hugging Face cache and no run history of the machine running the tests.
export NO_COLOR=1 HF_HUB_CACHE="$tmp/hf" HEADROOM_NVML_LIBRARY=/nonexistent/libnvidia-ml.so.1 \
  HEADROOM_NVIDIA_SMI=/nonexistent/nvidia-smi HEADROOM_DB="$tmp/no-history.db"

start_server s --max-body-bytes 2K --max-log-bytes 64K
url="$s_url"

# post NAME PATH BODY [curl args]: the answer in $tmp/NAME.json, the status in $tmp/NAME.status.
post() {
  local name="$1" path="$2" body="$3"
  shift 3
  curl -s -o "$tmp/$name.json" -w '%{http_code}' -H 'Content-Type: application/json' --data-binary "$body" "$@" "$url$path" \
    > "$tmp/$name.status"
}
status() { cat "$tmp/$1.status"; }
same_as_cli() {  # NAME, CLI output file
  cmp -s "$tmp/$1.json" "$2" || fail "$1: the API's answer differs from the CLI's: $(diff "$2" "$tmp/$1.json" | head -5)"
}
expect_error() {  # NAME STATUS CODE WHERE [MESSAGE]
  local name="$1"
  [ "$(status "$name")" = "$2" ] || fail "$name: status $(status "$name"), expected $2: $(cat "$tmp/$name.json")"
  local code where
  code=$(json_get error.code < "$tmp/$name.json")
  where=$(json_get error.where < "$tmp/$name.json")
  [ "$code" = "$3" ] || fail "$name: error code '$code', expected '$3'"
  [ "$where" = "$4" ] || fail "$name: where '$where', expected '$4'"
  if [ $# -ge 5 ]; then
    local message
    message=$(json_get error.message < "$tmp/$name.json")
    [ "$message" = "$5" ] || fail "$name: message
$message
expected
$5"
  fi
}

# ---- check: the CLI's document, from vLLM flag names or from a pasted command ----
"$bin" check codellama/CodeLlama-7b-hf --gpu H100 --vllm-version 0.19.0 --max-model-len 4096 --enforce-eager \
  --format json > "$tmp/cli_check.json"
post check_flags /v1/check '{"model": "codellama/CodeLlama-7b-hf", "gpu": "H100", "vllm_version": "0.19.0",
  "flags": {"max_model_len": 4096, "enforce_eager": true}}'
[ "$(status check_flags)" = 200 ] || fail "check_flags: status $(status check_flags)"
same_as_cli check_flags "$tmp/cli_check.json"
post check_command /v1/check '{"command": "vllm serve codellama/CodeLlama-7b-hf \\\n  --max-model-len=4096 --enforce-eager", "gpu": "H100", "vllm_version": "0.19.0"}'
same_as_cli check_command "$tmp/cli_check.json"

# A negative verdict is an answer (200), as the CLI's exit 3 is: a 70B model on one H100.
"$bin" check meta-llama/Llama-3.1-70B-Instruct --gpu H100 --vllm-version 0.19.0 --format json > "$tmp/cli_70b.json"
[ $? -eq 3 ] || fail "CLI check of 70B on one H100 should exit 3"
post check_70b /v1/check '{"model": "meta-llama/Llama-3.1-70B-Instruct", "gpu": "H100", "vllm_version": "0.19.0"}'
[ "$(status check_70b)" = 200 ] || fail "check_70b: status $(status check_70b)"
same_as_cli check_70b "$tmp/cli_70b.json"
[ "$(json_get outcome < "$tmp/check_70b.json")" = fails ] || fail "check_70b: outcome should be fails"

# Tensor parallel and a GPU count, the warnings of unmodelled flags.
"$bin" check meta-llama/Llama-3.1-8B-Instruct --gpu A100-40GB --gpus 2 --vllm-version 0.19.0 -tp 2 --max-model-len 8192 \
  --served-model-name x --seed 3 --format json > "$tmp/cli_tp2.json" 2> /dev/null
post check_tp2 /v1/check '{"model": "meta-llama/Llama-3.1-8B-Instruct", "gpu": "A100-40GB", "gpus": 2, "vllm_version": "0.19.0",
  "flags": {"tensor_parallel_size": 2, "max_model_len": 8192, "served_model_name": "x", "seed": 3}}'
same_as_cli check_tp2 "$tmp/cli_tp2.json"
# The count may come in the GPU's name, as the CLI's --gpu 2xA100-40GB.
post check_counted /v1/check '{"model": "meta-llama/Llama-3.1-8B-Instruct", "gpu": "2xA100-40GB", "vllm_version": "0.19.0",
  "flags": {"tensor_parallel_size": 2, "max_model_len": 8192, "served_model_name": "x", "seed": 3}}'
same_as_cli check_counted "$tmp/cli_tp2.json"

# ---- plan: workload options at the top level ----
"$bin" plan codellama/CodeLlama-7b-hf --gpu L4 --vllm-version 0.19.0 --context 4096 --concurrency 8 --format json \
  > "$tmp/cli_plan.json"
post plan /v1/plan '{"model": "codellama/CodeLlama-7b-hf", "gpu": "L4", "vllm_version": "0.19.0", "context": 4096, "concurrency": 8}'
[ "$(status plan)" = 200 ] || fail "plan: status $(status plan): $(head -c 300 "$tmp/plan.json")"
same_as_cli plan "$tmp/cli_plan.json"
post plan_goal /v1/plan '{"model": "codellama/CodeLlama-7b-hf", "gpu": "L4", "goal": "fastest"}'
expect_error plan_goal 422 invalid_argument goal
# A vllm serve command gives the model and what the body leaves open, as `plan -- vllm serve ...`.
post plan_command /v1/plan '{"command": "vllm serve codellama/CodeLlama-7b-hf --max-model-len 4096 -tp 2", "gpu": "L4", "vllm_version": "0.19.0"}'
[ "$(status plan_command)" = 200 ] || fail "plan_command: status $(status plan_command): $(head -c 300 "$tmp/plan_command.json")"
python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
assert d["model"]["id"] == "codellama/CodeLlama-7b-hf" and d["context_tokens"] == 4096 and d["gpu"]["count"] == 2, d["gpu"]
assert d["explanation"][0].startswith("from the command: requests up to 4096 tokens (--max-model-len); 2 GPUs"), d["explanation"][0]
' "$tmp/plan_command.json" || fail "plan_command: $(head -c 400 "$tmp/plan_command.json")"

# ---- diagnose: the log in the body, plain or gzip; "log" is the request ----
for log in v1_kv_insufficient v1_startup_ok; do
  "$bin" diagnose "$logs/$log.log" --format json | sed 's|^  "log": ".*"|  "log": "request"|' > "$tmp/cli_$log.json"
  post "diag_$log" /v1/diagnose "@$logs/$log.log" -H 'Content-Type: text/plain'
  [ "$(status "diag_$log")" = 200 ] || fail "diag_$log: status $(status "diag_$log")"
  same_as_cli "diag_$log" "$tmp/cli_$log.json"
done
gzip -c "$logs/v1_kv_insufficient.log" > "$tmp/kv.log.gz"
post diag_gzip /v1/diagnose "@$tmp/kv.log.gz" -H 'Content-Type: application/gzip'
same_as_cli diag_gzip "$tmp/cli_v1_kv_insufficient.json"
post diag_encoding /v1/diagnose "@$tmp/kv.log.gz" -H 'Content-Type: text/plain' -H 'Content-Encoding: gzip'
same_as_cli diag_encoding "$tmp/cli_v1_kv_insufficient.json"
# With GPUs to spare the fixes may raise tensor parallelism, as `diagnose --gpus 4` does.
"$bin" diagnose "$logs/v1_kv_insufficient.log" --gpus 4 --format json | sed 's|^  "log": ".*"|  "log": "request"|' \
  > "$tmp/cli_gpus4.json"
post diag_gpus4 '/v1/diagnose?gpus=4' "@$logs/v1_kv_insufficient.log"
same_as_cli diag_gpus4 "$tmp/cli_gpus4.json"
post diag_gpus_bad '/v1/diagnose?gpus=x' "x"
expect_error diag_gpus_bad 422 invalid_argument gpus
head -c 70000 /dev/zero | tr '\0' 'a' > "$tmp/big.log"
post diag_big /v1/diagnose "@$tmp/big.log"
expect_error diag_big 413 payload_too_large body "expected a log of at most 65536 bytes"
printf 'INFO start\n\0\0\0\1\2\3binary' > "$tmp/binary.log"
post diag_binary /v1/diagnose "@$tmp/binary.log"
case "$(status diag_binary)" in 4*) ;; *) fail "diag_binary: status $(status diag_binary), expected 4xx" ;; esac

# ---- GPUs and models ----
"$bin" gpus --catalog --format json > "$tmp/cli_gpus.json"
curl -s -o "$tmp/gpus.json" "$url/v1/gpus"
same_as_cli gpus "$tmp/cli_gpus.json"
curl -s -o "$tmp/gpus_live.json" -w '%{http_code}' "$url/v1/gpus?live=1" > "$tmp/gpus_live.status"
expect_error gpus_live 403 forbidden live
mkdir -p "$tmp/hf/models--acme--Tiny-Llama-Test/snapshots/abc"
curl -s -o "$tmp/models.json" "$url/v1/models?q=codellama%207b"
grep -q '"id": "codellama/CodeLlama-7b-hf"' "$tmp/models.json" || fail "models: catalogue id missing: $(head -c 300 "$tmp/models.json")"
curl -s -o "$tmp/models_cache.json" "$url/v1/models?q=tiny-llama"
[ "$(json_get models.0.id < "$tmp/models_cache.json")" = acme/Tiny-Llama-Test ] || fail "models: cache id missing: $(cat "$tmp/models_cache.json")"
[ "$(json_get models.0.source < "$tmp/models_cache.json")" = hf_cache ] || fail "models: cache source"

# ---- errors: shape (400), values (422), unknown things (404), limits (413) ----
post bad_json /v1/check '{"model": "x",'
expect_error bad_json 400 parse_error body:1:15
post not_object /v1/check '[1, 2]'
expect_error not_object 400 parse_error body "expected a JSON object, got an array"
post unknown_key /v1/check '{"modle": "codellama/CodeLlama-7b-hf", "gpu": "H100"}'
expect_error unknown_key 400 parse_error modle \
  "unknown key 'modle'; did you mean model? (expected model, flags, command, gpu, gpus, nodes, gpu_memory_gib, used_gib, free_gib or vllm_version)"
post wrong_type /v1/check '{"model": "codellama/CodeLlama-7b-hf", "gpu": "H100", "gpus": "two"}'
expect_error wrong_type 400 parse_error gpus "expected an integer, got a string"
post no_model /v1/check '{"gpu": "H100"}'
expect_error no_model 400 parse_error model
post bad_flag /v1/check '{"model": "codellama/CodeLlama-7b-hf", "gpu": "H100", "flags": {"max_model_len": "lots"}}'
expect_error bad_flag 422 invalid_argument flags.max_model_len
post bad_util /v1/check '{"model": "codellama/CodeLlama-7b-hf", "gpu": "H100", "flags": {"gpu_memory_utilization": 1.5}}'
expect_error bad_util 422 invalid_argument flags.gpu_memory_utilization
post bad_quote /v1/check '{"command": "vllm serve \"codellama/CodeLlama-7b-hf", "gpu": "H100"}'
expect_error bad_quote 400 parse_error command "unterminated double quote opened at byte 12"
post unknown_model /v1/check '{"model": "acme/no-such-model", "gpu": "H100"}'
expect_error unknown_model 404 not_found ""
post unknown_gpu /v1/check '{"model": "codellama/CodeLlama-7b-hf", "gpu": "H1000"}'
expect_error unknown_gpu 404 not_found gpu
post counted_conflict /v1/check '{"model": "codellama/CodeLlama-7b-hf", "gpu": "H100:2", "gpus": 4}'
expect_error counted_conflict 422 invalid_argument gpu
post no_gpu /v1/check '{"model": "codellama/CodeLlama-7b-hf"}'
expect_error no_gpu 422 invalid_argument gpu
post local_path /v1/check '{"model": "/etc", "gpu": "H100"}'
expect_error local_path 403 forbidden model
post big_body /v1/check "{\"model\": \"$(head -c 3000 /dev/zero | tr '\0' 'x')\"}"
expect_error big_body 413 payload_too_large body "expected a JSON body of at most 2048 bytes"
curl -s -o "$tmp/no_route.json" -w '%{http_code}' "$url/v1/nope" > "$tmp/no_route.status"
expect_error no_route 404 not_found "" "no such route: GET /v1/nope (GET /openapi.json lists them)"
post record_off /v1/record "x"
expect_error record_off 404 not_found "" "this server does not keep a run history (start it with --allow-record)"
# No answer carries a stack trace or a server path.
grep -l "$tmp\|/proc/self\|what()" "$tmp"/*.json > /dev/null 2>&1 && fail "an answer names a server path: $(grep -l "$tmp\|/proc/self" "$tmp"/*.json)"

# ---- health, metrics, the cache, the access log ----
[ "$(curl -s "$url/healthz")" = '{"status":"ok"}' ] || fail "healthz"
post check_again /v1/check '{"model": "codellama/CodeLlama-7b-hf", "gpu": "H100", "vllm_version": "0.19.0",
  "flags": {"max_model_len": 4096, "enforce_eager": true}}'
same_as_cli check_again "$tmp/cli_check.json"
curl -s "$url/metrics" > "$tmp/metrics.txt"
grep -q '^headroom_http_requests_total{route="/v1/check",code="200"} [1-9]' "$tmp/metrics.txt" || fail "metrics: check requests"
grep -q '^headroom_http_errors_total{code="payload_too_large"} 2$' "$tmp/metrics.txt" || fail "metrics: errors by code"
grep -q '^headroom_http_request_duration_seconds_bucket{route="/v1/plan",le="+Inf"} 3$' "$tmp/metrics.txt" || fail "metrics: histogram"
hits=$(sed -n 's/^headroom_response_cache_hits_total //p' "$tmp/metrics.txt")
[ "${hits:-0}" = 1 ] || fail "metrics: the repeated check (only it) should be a cache hit, got '$hits'"
if command -v promtool > /dev/null; then
  promtool check metrics < "$tmp/metrics.txt" > "$tmp/promtool.out" 2>&1 || fail "promtool: $(cat "$tmp/promtool.out")"
fi
grep -q '^headroom serve: 127.0.0.1 POST /v1/check 200 ' "$tmp/s.log" || fail "access log: $(head -3 "$tmp/s.log")"
grep -q 'codellama\|max_model_len' "$tmp/s.log" && fail "access log holds request bodies"

# ---- --help and usage ----
"$bin" serve --help | grep -q '^usage: headroom serve' || fail "serve --help"
"$bin" serve --port 70000 > /dev/null 2>&1
[ $? -eq 2 ] || fail "a bad port should exit 2"

[ $failures -eq 0 ] && echo "serve: all passed"
exit $((failures > 0))
