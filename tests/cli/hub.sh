#!/usr/bin/env bash
# Models from the Hugging Face Hub, against the loopback Hub (headroom_fake_hub): the model source
# and revision in the output, requests of a second run, --offline, `headroom cache list|clear`,
# errors with exact messages, a token that never shows up in outputs or the cache, and the fast
# fallback to the catalogue when the Hub cannot be reached.
set -uo pipefail
bin="${HEADROOM_BIN:?}"
src="${HEADROOM_SOURCE_DIR:?}"
fake_hub="${HEADROOM_BINARY_DIR:?}/tests/support/fake_hub/headroom_fake_hub"
tmp="$(mktemp -d)"
failures=0
source "$(dirname "${BASH_SOURCE[0]}")/lib/golden.sh"
servers=()
source "$(dirname "${BASH_SOURCE[0]}")/lib/serve.sh"

exec 3> >("$fake_hub" --models "$src/tests/data/models" --port-file "$tmp/ports" >"$tmp/fake_hub.log" 2>&1)
hub_pid=$!
trap 'stop_servers; exec 3>&-; kill "$hub_pid" 2>/dev/null; rm -rf "$tmp"' EXIT
for _ in $(seq 1 200); do [ -s "$tmp/ports" ] && break; sleep 0.05; done
[ -s "$tmp/ports" ] || { echo "FAIL: the fake Hub did not start: $(cat "$tmp/fake_hub.log")"; exit 1; }
read -r hub_port _ <"$tmp/ports"

token=hf_cli_test_secret_token_0000
export NO_COLOR=1 HF_HUB_CACHE="$tmp/hf" HF_HOME="$tmp/hf-home" XDG_CACHE_HOME="$tmp/cache" \
  HF_ENDPOINT="http://127.0.0.1:$hub_port" HEADROOM_NVML_LIBRARY=/nonexistent/libnvidia-ml.so.1 \
  HEADROOM_NVIDIA_SMI=/nonexistent/nvidia-smi
unset HF_HUB_OFFLINE HF_TOKEN HUGGING_FACE_HUB_TOKEN

# Requests the fake Hub has answered so far (its /__stats route).
requests() {
  python3 -c 'import json,sys,urllib.request; d=json.load(urllib.request.urlopen(sys.argv[1])); print(d["hub_requests"]+d["storage_requests"])' \
    "http://127.0.0.1:$hub_port/__stats"
}

# run NAME EXPECTED_EXIT ARGS...
run() {
  local name="$1" expected="$2"
  shift 2
  "$bin" "$@" >"$tmp/$name.out" 2>"$tmp/$name.err"
  local rc=$?
  [ "$rc" -eq "$expected" ] || fail "$name: exit $rc, expected $expected; stderr: $(cat "$tmp/$name.err")"
}

# ---- a sharded repo read from the Hub: source and revision in text and JSON ----
run sharded 0 check headroom-test/llama-sharded --gpu H100 --format json --no-history
python3 - "$tmp/sharded.out" <<'PY' || fail "sharded: JSON model source"
import json, sys
m = json.load(open(sys.argv[1]))["model"]
assert m["source"] == "Hugging Face Hub", m
assert m["location"].startswith("headroom-test/llama-sharded@") and len(m["location"].split("@")[1]) == 40, m
PY
[ -s "$tmp/sharded.err" ] && fail "sharded: stderr is not empty when it is not a terminal: $(cat "$tmp/sharded.err")"

before=$(requests)
run sharded_again 0 check headroom-test/llama-sharded --gpu H100 --no-history
grep -q "Hugging Face Hub: headroom-test/llama-sharded@" "$tmp/sharded_again.out" || fail "sharded_again: no Hub source line"
[ $(( $(requests) - before )) -eq 1 ] || fail "second run: $(( $(requests) - before )) requests, expected 1"
before=$(requests)
run offline 0 check headroom-test/llama-sharded --gpu H100 --offline --no-history
HF_HUB_OFFLINE=1 run offline_env 0 check headroom-test/llama-sharded --gpu H100 --no-history
[ $(( $(requests) - before )) -eq 0 ] || fail "offline: $(( $(requests) - before )) requests, expected 0"

# --revision as in vLLM (a branch), --tokenizer and --trust-remote-code accepted silently.
run revision 0 check headroom-test/w4a16 --gpu H100 --revision main --tokenizer x/y --trust-remote-code --no-history
[ -s "$tmp/revision.err" ] && fail "revision: stderr: $(cat "$tmp/revision.err")"
run plan_hub 0 plan headroom-test/w4a16 --gpu H100 --revision main --quiet --no-history

# ---- headroom cache list|clear ----
run cache_list 0 cache list
grep -q "headroom-test/llama-sharded" "$tmp/cache_list.out" || fail "cache list: repo missing"
grep -q " main " "$tmp/cache_list.out" || fail "cache list: revision missing"
run cache_json 0 cache list --format json
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert len(d["entries"]) == 2, d' "$tmp/cache_json.out" ||
  fail "cache list --format json: expected 2 entries"
run cache_clear_one 0 cache clear headroom-test/w4a16
grep -q "removed 1 cached commit of headroom-test/w4a16" "$tmp/cache_clear_one.out" || fail "cache clear REPO: $(cat "$tmp/cache_clear_one.out")"
run cache_bad 2 cache purge
check_stderr cache_bad "headroom: error: cache: unknown action 'purge': expected list or clear"

# ---- errors ----
run unknown 1 check headroom-test/llama-sharde --gpu H100 --no-history
check_stderr unknown "headroom: error: unknown model 'headroom-test/llama-sharde': the Hub has no such repo (HTTP 401; if it is private, set HF_TOKEN); did you mean headroom-test/llama-sharded?"
run bad_revision 1 check headroom-test/w4a16 --gpu H100 --revision v2 --no-history
check_stderr bad_revision "headroom: error: unknown revision 'v2' of headroom-test/w4a16: expected a branch, tag or commit sha of the repo (HTTP 404)"
run gated 1 check headroom-test/gated-llama --gpu H100 --no-history
check_stderr gated "headroom: error: headroom-test/gated-llama is a gated model and no Hugging Face token was given (HTTP 401): accept its license on http://127.0.0.1:$hub_port/headroom-test/gated-llama and set HF_TOKEN to a token of that account"
run timeout_flag 2 check headroom-test/w4a16 --gpu H100 --hub-timeout -1 --no-history
check_stderr timeout_flag "headroom: error: --hub-timeout: expected a positive number of seconds"

# ---- the token: used, never printed, never cached ----
HF_TOKEN="$token" run gated_refused 1 check headroom-test/gated-llama --gpu H100 --no-history
grep -q "the Hub refused the token (HTTP 403)" "$tmp/gated_refused.err" || fail "gated_refused: $(cat "$tmp/gated_refused.err")"
mkdir -p "$tmp/hf-home" && printf '%s\n' hf_fake_accepted_token >"$tmp/hf-home/token"
run gated_file_token 0 check headroom-test/gated-llama --gpu H100 --format json --no-history
HF_TOKEN="$token" run token_json 0 check headroom-test/llama-sharded --gpu H100 --format json --no-history
if grep -rq -e "$token" -e hf_fake_accepted_token "$tmp"/*.out "$tmp"/*.err "$tmp/cache"; then
  fail "a token shows up in an output or in the cache"
fi

# ---- headroom serve: Hub ids through the API, the same answer as the CLI's ----
run serve_cli 0 check headroom-test/llama-sharded --gpu H100 --vllm-version 0.19.0 --format json --no-history
HEADROOM_DB="$tmp/serve-history.db" start_server hubserve --no-history
curl -s -o "$tmp/serve_check.json" -w '%{http_code}' -H 'Content-Type: application/json' \
  --data-binary '{"model": "headroom-test/llama-sharded", "gpu": "H100", "vllm_version": "0.19.0"}' \
  "$hubserve_url/v1/check" >"$tmp/serve_check.status"
[ "$(cat "$tmp/serve_check.status")" = 200 ] || fail "serve check: status $(cat "$tmp/serve_check.status"): $(head -c 300 "$tmp/serve_check.json")"
cmp -s "$tmp/serve_check.json" "$tmp/serve_cli.out" ||
  fail "serve check: the API's answer differs from the CLI's: $(diff "$tmp/serve_cli.out" "$tmp/serve_check.json" | head -5)"
curl -s -o "$tmp/serve_unknown.json" -w '%{http_code}' -H 'Content-Type: application/json' \
  --data-binary '{"model": "headroom-test/llama-sharde", "gpu": "H100"}' "$hubserve_url/v1/check" >"$tmp/serve_unknown.status"
[ "$(cat "$tmp/serve_unknown.status")" = 404 ] || fail "serve unknown: status $(cat "$tmp/serve_unknown.status"): $(cat "$tmp/serve_unknown.json")"
# The token file written above is sent, so the Hub answers 404 (not 401 as to anonymous requests).
[ "$(json_get error.message <"$tmp/serve_unknown.json")" = "unknown model 'headroom-test/llama-sharde': the Hub has no such repo (HTTP 404); did you mean headroom-test/llama-sharded?" ] ||
  fail "serve unknown: $(cat "$tmp/serve_unknown.json")"
stop_servers
grep -q hf_fake_accepted_token "$tmp/hubserve.log" "$tmp"/serve_*.json && fail "serve: the token shows up in its log or answers"

# ---- no Hub: falls back to the catalogue at once with one note ----
HF_ENDPOINT=http://127.0.0.1:1 run no_network 0 check meta-llama/Llama-3.1-8B-Instruct --gpu H100 --no-history
check_stderr no_network "headroom: note: no network: cannot reach the Hub at http://127.0.0.1:1 (cannot connect); using the built-in catalogue (--offline skips the Hub)"
HF_ENDPOINT=http://127.0.0.1:1 run no_network_quiet 0 check meta-llama/Llama-3.1-8B-Instruct --gpu H100 --quiet --no-history
[ -s "$tmp/no_network_quiet.err" ] && fail "--quiet still printed: $(cat "$tmp/no_network_quiet.err")"
HF_ENDPOINT=http://127.0.0.1:1 HEADROOM_HUB_RETRY_AFTER_S=0 run no_network_unknown 1 check headroom-test/not-cached --gpu H100 --no-history
check_stderr no_network_unknown "headroom: error: no network: cannot reach the Hub at http://127.0.0.1:1 (cannot connect); use --offline (headroom's Hub cache), an id from the built-in catalogue, or a local folder with config.json"
# The unreachable Hub is remembered for a minute: the next command does not try it, and says when it was tried.
HF_ENDPOINT=http://127.0.0.1:1 run no_network_remembered 1 check headroom-test/not-cached --gpu H100 --no-history
grep -Eq "^headroom: error: no network: cannot reach the Hub at http://127.0.0.1:1 \(cannot connect, [0-9]+ s ago; headroom asks again [0-9]+ s after that \(HEADROOM_HUB_RETRY_AFTER_S=0 asks every time\)\); use --offline" \
  "$tmp/no_network_remembered.err" || fail "no_network_remembered: $(cat "$tmp/no_network_remembered.err")"

if [ "$failures" -gt 0 ]; then
  echo "$failures failure(s)"
  exit 1
fi
echo "hub: all passed"
