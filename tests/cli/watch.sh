#!/usr/bin/env bash
# `headroom watch` against a real HTTP server on loopback (python3 http.server serving the recorded
# /metrics pages of tests/data/metrics/): --once --format json per vLLM version compared with golden
# files in tests/golden/watch/ (HEADROOM_UPDATE_GOLDEN=1 rewrites them; the time and port are
# masked), exit codes for alerts and a dead server, and the plain line-per-sample view.
set -uo pipefail
bin="${HEADROOM_BIN:?}"
src="${HEADROOM_SOURCE_DIR:?}"
golden="$src/tests/golden/watch"
tmp="$(mktemp -d)"
server_pid=""
cleanup() {
  [ -n "$server_pid" ] && kill "$server_pid" 2>/dev/null
  rm -rf "$tmp"
}
trap cleanup EXIT
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
export NO_COLOR=1
mkdir -p "$golden"

# One folder per version, each with a file named "metrics", served from one server.
for f in "$src"/tests/data/metrics/*.txt; do
  v="$(basename "$f" .txt)"
  mkdir -p "$tmp/www/$v"
  cp "$f" "$tmp/www/$v/metrics"
done
python3 -u -m http.server 0 --bind 127.0.0.1 --directory "$tmp/www" >"$tmp/server.log" 2>&1 &
server_pid=$!
port=""
for _ in $(seq 1 100); do
  port="$(grep -o 'port [0-9]*' "$tmp/server.log" | awk '{print $2}')"
  [ -n "$port" ] && break
  sleep 0.1
done
[ -n "$port" ] || { echo "FAIL: the loopback server did not start: $(cat "$tmp/server.log")"; exit 1; }
base="http://127.0.0.1:$port"

mask() { python3 -c '
import json, sys
j = json.load(sys.stdin)
j["time"] = 0
print(json.dumps(j, indent=2, sort_keys=True).replace(sys.argv[1], "http://SERVER"))' "$base"; }

for v in vllm-0.4.3 vllm-0.6.3 vllm-0.8.5 vllm-0.11.0 vllm-malformed; do
  timeout 30 "$bin" watch "$base/$v/metrics" --once --interval 0 --timeout 5 --format json >"$tmp/$v.raw" 2>"$tmp/$v.err"
  rc=$?
  [ "$rc" -eq 0 ] || [ "$rc" -eq 3 ] || fail "$v: exit $rc; stderr: $(cat "$tmp/$v.err")"
  mask <"$tmp/$v.raw" >"$tmp/$v.json" || fail "$v: output is not JSON"
  if [ "${HEADROOM_UPDATE_GOLDEN:-}" = 1 ]; then
    cp "$tmp/$v.json" "$golden/$v.json"
  elif ! diff -u "$golden/$v.json" "$tmp/$v.json"; then
    fail "$v: JSON differs from $golden/$v.json"
  fi
done

# --from-log: the KV cache a startup log recorded (126,256 tokens = 7,891 blocks of 16) against the
# live cache_config_info of the 0.6.3 page (29,067 blocks): a mismatch alert.
timeout 30 "$bin" watch "$base/vllm-0.6.3/metrics" --once --interval 0 --format json \
  --from-log "$src/tests/data/logs/v1_startup_ok.log" >"$tmp/fromlog.json" 2>"$tmp/fromlog.err"
python3 - "$tmp/fromlog.json" <<'PY' || fail "--from-log: $(cat "$tmp/fromlog.err")"
import json, sys
j = json.load(open(sys.argv[1]))
kv = j.get("kv_capacity") or {}
assert kv.get("predicted_blocks") == 7891, kv
assert kv.get("live_blocks") == 29067, kv
assert kv.get("mismatch") is True, kv
assert any("kv" in (a.get("id", "") + a.get("name", "")).lower() for a in j.get("alerts", [])), j.get("alerts")
PY
"$bin" watch "$base/vllm-0.6.3/metrics" --once --interval 0 --from-log "$tmp/no-such.log" >/dev/null 2>"$tmp/nolog.err"
[ "$?" -eq 1 ] || fail "--from-log with a missing file should exit 1"
grep -q "cannot open the vLLM log" "$tmp/nolog.err" || fail "--from-log missing file message: $(cat "$tmp/nolog.err")"

# Alerts make --once exit 3: the 0.8.5 page has 64 requests waiting and a 97% full KV cache.
timeout 30 "$bin" watch "$base/vllm-0.8.5/metrics" --once --interval 0 >"$tmp/alerts.out" 2>&1
rc=$?
[ "$rc" -eq 3 ] || fail "alerts: exit $rc, expected 3"
grep -q "64 requests waiting (threshold 50)" "$tmp/alerts.out" || fail "alerts: waiting alert missing: $(cat "$tmp/alerts.out")"
# ... and raising the thresholds silences them.
timeout 30 "$bin" watch "$base/vllm-0.8.5/metrics" --once --interval 0 --max-waiting 100 --max-kv-usage 0.99 \
  --max-ttft-p99 100 --max-tpot-p99 10 >/dev/null 2>&1
rc=$?
[ "$rc" -eq 0 ] || fail "raised thresholds: exit $rc, expected 0"

# Two scrapes --interval apart give rates (the page does not change, so they are 0).
timeout 30 "$bin" watch "$base/vllm-0.6.3/metrics" --once --interval 0.2 --format json >"$tmp/two.json" 2>/dev/null
python3 -c 'import json,sys; d=json.load(open(sys.argv[1]))["derived"]; sys.exit(0 if d["samples"]==2 and d["prompt_tokens_per_s"]==0 else 1)' \
  "$tmp/two.json" || fail "two scrapes: expected 2 samples and a prompt rate of 0: $(cat "$tmp/two.json")"

# Not a terminal: one line per sample.
timeout 30 "$bin" watch "$base/vllm-0.6.3/metrics" --interval 0.2 --count 3 >"$tmp/lines.out" 2>"$tmp/lines.err"
[ "$(wc -l <"$tmp/lines.out")" -eq 3 ] || fail "lines: expected 3 lines, got: $(cat "$tmp/lines.out")"
grep -q "kv=43.8% running=12 waiting=3" "$tmp/lines.out" || fail "lines: unexpected line: $(head -1 "$tmp/lines.out")"

# Regression: a server's model_name label reached the terminal raw (window title, clear screen, a
# new line in the frame). Labels, errors and alerts are printed with escapes instead.
mkdir -p "$tmp/www/hostile"
printf '%s\n' '# TYPE vllm:num_requests_running gauge' \
  "vllm:num_requests_running{model_name=\"evil$(printf '\033')]0;owned$(printf '\007')$(printf '\033')[2Jx\\nFAKE LINE\"} 1.0" \
  "vllm:num_requests_waiting{model_name=\"evil\"} 0.0" >"$tmp/www/hostile/metrics"
for args in "--once --interval 0"; do
  # shellcheck disable=SC2086
  timeout 30 "$bin" watch "$base/hostile/metrics" $args >"$tmp/hostile.out" 2>"$tmp/hostile.err"
  if LC_ALL=C grep -q "$(printf '[\033\007]')" "$tmp/hostile.out" "$tmp/hostile.err"; then
    fail "hostile label ($args): a control character reached the output: $(od -c "$tmp/hostile.out" | head -5)"
  fi
  grep -q 'FAKE LINE' "$tmp/hostile.out" || fail "hostile label ($args): the model name is missing: $(cat "$tmp/hostile.out" "$tmp/hostile.err")"
  if grep -q '^FAKE LINE' "$tmp/hostile.out"; then fail "hostile label ($args): the label started a line of its own"; fi
  grep -qF 'evil\x1b]0;owned\x07\x1b[2Jx\nFAKE LINE' "$tmp/hostile.out" ||
    fail "hostile label ($args): expected the label written with escapes: $(cat "$tmp/hostile.out")"
done

# A dead server: --once retries, then exits 1 naming the URL and the reason.
kill "$server_pid"
wait "$server_pid" 2>/dev/null
server_pid=""
timeout 30 "$bin" watch "$base/vllm-0.6.3/metrics" --once --interval 0 --retries 1 --max-backoff 0.1 >/dev/null 2>"$tmp/dead.err"
rc=$?
[ "$rc" -eq 1 ] || fail "dead server: exit $rc, expected 1"
expected="headroom: error: $base/vllm-0.6.3/metrics: cannot connect: Connection refused"
[ "$(tail -1 "$tmp/dead.err")" = "$expected" ] || fail "dead server: stderr '$(cat "$tmp/dead.err")'"
grep -q "headroom: warning: scrape failed: $base/vllm-0.6.3/metrics: cannot connect: Connection refused; retrying in 0.1 s" \
  "$tmp/dead.err" || fail "dead server: no retry warning: $(cat "$tmp/dead.err")"

# Usage errors.
"$bin" watch ftp://h/metrics --once >/dev/null 2>"$tmp/usage.err"
rc=$?
[ "$rc" -eq 2 ] || fail "usage: exit $rc, expected 2"
[ "$(cat "$tmp/usage.err")" = "headroom: error: URL: expected an http:// or https:// URL, got 'ftp://h/metrics'" ] ||
  fail "usage: stderr '$(cat "$tmp/usage.err")'"

[ "$failures" -eq 0 ] && echo "watch: all checks passed"
exit $((failures > 0))
