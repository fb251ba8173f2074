#!/usr/bin/env bash
# `headroom serve`'s safety: loopback unless a token is given, the bearer token (401, never
# shown), local model paths only below --models-dir (no `..`, no symlink out, nothing from the
# working folder), CORS only when asked, connection and time limits, no password in any answer.
set -uo pipefail
bin="${HEADROOM_BIN:?}"
tmp="$(mktemp -d)"
servers=()
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
source "$(dirname "${BASH_SOURCE[0]}")/lib/serve.sh"
trap 'stop_servers; rm -rf "$tmp"' EXIT
export NO_COLOR=1 HF_HUB_CACHE="$tmp/hf" HEADROOM_NVML_LIBRARY=/nonexistent/libnvidia-ml.so.1 \
  HEADROOM_NVIDIA_SMI=/nonexistent/nvidia-smi HEADROOM_DB="$tmp/no-history.db"
code_of() { curl -s -o "$tmp/last.json" -w '%{http_code}' "$@"; }

# ---- a server others can reach needs a token ----
err=$("$bin" serve --host 0.0.0.0 --port 0 2>&1)
[ $? -eq 2 ] || fail "non-loopback host without a token should exit 2"
[ "$err" = "headroom: error: --host: '0.0.0.0' is not a loopback address: a server others can reach needs a bearer token (--token-file FILE)" ] ||
  fail "non-loopback message: $err"
printf '\n' > "$tmp/empty-token"
"$bin" serve --token-file "$tmp/empty-token" --port 0 > /dev/null 2>&1
[ $? -eq 2 ] || fail "an empty token file should exit 2"

token="tok-$(od -An -N12 -tx1 /dev/urandom | tr -d ' \n')"
printf '%s\n' "$token" > "$tmp/token"
chmod 600 "$tmp/token"
start_server t --host 0.0.0.0 --token-file "$tmp/token"
u="http://127.0.0.1:$t_port"
[ "$(code_of "$u/v1/gpus")" = 401 ] || fail "no token: expected 401"
[ "$(json_get error.code < "$tmp/last.json")" = unauthorized ] || fail "no token: error code"
[ "$(code_of -H "Authorization: Bearer wrong" "$u/v1/gpus")" = 401 ] || fail "wrong token: expected 401"
[ "$(code_of -H "Authorization: Bearer ${token}x" "$u/v1/gpus")" = 401 ] || fail "longer token: expected 401"
[ "$(code_of -H "Authorization: Bearer $token" "$u/v1/gpus")" = 200 ] || fail "right token: expected 200"
[ "$(code_of -X POST -H "Authorization: Bearer $token" -d '{"model":"codellama/CodeLlama-7b-hf","gpu":"H100"}' "$u/v1/check")" = 200 ] ||
  fail "right token: check"
[ "$(code_of "$u/metrics")" = 401 ] || fail "metrics need the token"
[ "$(code_of "$u/healthz")" = 200 ] || fail "healthz is open to probes"
[ "$(code_of "$u/")" = 200 ] || fail "the page itself is open (it asks for the token)"
curl -s -H "Authorization: Bearer $token" "$u/metrics" > "$tmp/metrics.txt"
grep -rq "$token" "$tmp/t.log" "$tmp/metrics.txt" "$tmp/last.json" && fail "the token appears in a log, /metrics or an answer"

# ---- local model paths ----
mkdir -p "$tmp/models/tiny" "$tmp/outside/secret" "$tmp/cwd/acme/local"
cat > "$tmp/models/tiny/config.json" <<'JSON'
{"architectures": ["LlamaForCausalLM"], "model_type": "llama", "num_hidden_layers": 2, "hidden_size": 256,
 "intermediate_size": 512, "num_attention_heads": 4, "num_key_value_heads": 2, "vocab_size": 1024,
 "max_position_embeddings": 4096, "torch_dtype": "bfloat16"}
JSON
cp "$tmp/models/tiny/config.json" "$tmp/outside/secret/"
cp "$tmp/models/tiny/config.json" "$tmp/cwd/acme/local/"
ln -s "$tmp/outside/secret" "$tmp/models/escape"
start_server m --models-dir "$tmp/models"
check_model() {  # server url, model, expected status
  local got
  got=$(code_of -X POST -d "{\"model\": \"$2\", \"gpu\": \"H100\"}" "$1/v1/check")
  [ "$got" = "$3" ] || fail "model '$2': status $got, expected $3: $(cat "$tmp/last.json")"
}
check_model "$m_url" tiny 200
check_model "$m_url" "$tmp/models/tiny" 200
check_model "$m_url" "./tiny" 200
check_model "$m_url" "../outside/secret" 403
check_model "$m_url" "tiny/../../outside/secret" 403
check_model "$m_url" escape 403
check_model "$m_url" "$tmp/outside/secret" 403
check_model "$m_url" /etc 403
check_model "$m_url" codellama/CodeLlama-7b-hf 200
# Without --models-dir no path is read, not even one that looks like a Hub id in the working folder.
(cd "$tmp/cwd" && start_server c && echo "$c_url" > "$tmp/c_url" && echo "$c_pid" > "$tmp/c_pid" && wait "$c_pid") &
for _ in $(seq 1 100); do [ -s "$tmp/c_url" ] && break; sleep 0.05; done
check_model "$(cat "$tmp/c_url")" acme/local 403
check_model "$(cat "$tmp/c_url")" "$tmp/models/tiny" 403
[ "$(json_get error.where < "$tmp/last.json")" = model ] || fail "forbidden: where"
kill "$(cat "$tmp/c_pid")"

# ---- CORS only with --cors-origin ----
curl -s -D "$tmp/h1" -o /dev/null -H 'Origin: https://evil.example' "$m_url/v1/gpus"
grep -qi '^access-control-allow-origin' "$tmp/h1" && fail "CORS header without --cors-origin"
start_server o --cors-origin https://tools.example.com
curl -s -D "$tmp/h2" -o /dev/null -H 'Origin: https://tools.example.com' "$o_url/v1/gpus"
grep -qi '^access-control-allow-origin: https://tools.example.com' "$tmp/h2" || fail "CORS header with --cors-origin: $(cat "$tmp/h2")"
[ "$(curl -s -o /dev/null -w '%{http_code}' -X OPTIONS -H 'Origin: https://tools.example.com' \
  -H 'Access-Control-Request-Method: POST' "$o_url/v1/check")" = 204 ] || fail "CORS preflight"

# ---- connection and time limits ----
start_server l --threads 1 --max-connections 1 --read-timeout 3 --request-timeout 1
"$py" - "$l_port" > "$tmp/limits.out" 2>&1 <<'PY' || fail "limits: $(cat "$tmp/limits.out")"
import socket, sys, time, urllib.request, urllib.error
port = int(sys.argv[1])
# An idle connection holds the one slot: the next is answered 503 at once.
idle = socket.create_connection(("127.0.0.1", port))
time.sleep(0.3)
try:
    urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=5)
    sys.exit("expected 503 while the only connection slot is taken")
except urllib.error.HTTPError as e:
    assert e.code == 503, e.code
    assert b'"overloaded"' in e.read()
idle.close()
time.sleep(0.5)
# A body that trickles in past --request-timeout is refused with 408 (by the reception, which may
# answer and stop reading before the client has sent all of it).
s = socket.create_connection(("127.0.0.1", port))
s.sendall(b"POST /v1/check HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 40\r\n\r\n{")
try:
    for _ in range(4):
        time.sleep(0.5)
        s.sendall(b" ")
    s.sendall(b" " * 35)
except OSError:
    pass
answer = s.recv(4096)
assert answer.startswith(b"HTTP/1.1 408"), answer[:200]
assert b'"timeout"' in answer, answer
PY

# ---- passwords never leave the server ----
start_server p --db 'postgresql://user:hunter2@127.0.0.1:1/none'
code_of -X POST -d '{"model": "codellama/CodeLlama-7b-hf", "gpu": "H100"}' "$p_url/v1/check" > /dev/null
[ "$(json_get outcome < "$tmp/last.json")" = ok ] || fail "an unreachable history still answers: $(head -c 200 "$tmp/last.json")"
grep -q hunter2 "$tmp/p.log" "$tmp/last.json" && fail "the database password appears: $(grep hunter2 "$tmp/p.log")"
grep -q 'postgresql://user:\*\*\*@127.0.0.1:1/none' "$tmp/p.log" || fail "the history warning should name the database: $(cat "$tmp/p.log")"
start_server r --allow-record --db 'postgresql://user:hunter2@127.0.0.1:1/none'
code_of "$r_url/v1/history" > /dev/null
grep -q hunter2 "$tmp/last.json" && fail "the history error shows the password: $(cat "$tmp/last.json")"

[ $failures -eq 0 ] && echo "serve_security: all passed"
exit $((failures > 0))
