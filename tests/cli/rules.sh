#!/usr/bin/env bash
# `headroom rules`: the rule file passes `promtool check rules` (Debian's prometheus package,
# installed by scripts/setup.sh --test) with default and custom thresholds, thresholds reach the
# expressions, and bad options fail with exact messages.
set -uo pipefail
bin="${HEADROOM_BIN:?}"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

if ! command -v promtool >/dev/null 2>&1; then
  echo "FAIL: promtool not found; run scripts/setup.sh --test (it installs Debian's prometheus package)"
  exit 1
fi

check_rules() {  # NAME ARGS...
  local name="$1"
  shift
  if ! "$bin" rules "$@" >"$tmp/$name.yml" 2>"$tmp/$name.err"; then
    fail "$name: headroom rules failed: $(cat "$tmp/$name.err")"
    return
  fi
  if ! promtool check rules "$tmp/$name.yml" >"$tmp/$name.promtool" 2>&1; then
    fail "$name: promtool rejected the rules: $(cat "$tmp/$name.promtool")"
  elif ! grep -q "SUCCESS: 5 rules found" "$tmp/$name.promtool"; then
    fail "$name: expected 5 rules, promtool said: $(cat "$tmp/$name.promtool")"
  fi
}

check_rules default
check_rules custom --max-waiting 80 --max-kv-usage 0.9 --max-ttft-p99 2.5 --max-tpot-p99 0.05 \
  --max-preemption-rate 0.1 --for 10m --window 2m --selector 'job="vllm",namespace=~"prod-.*"' --group serving
grep -q 'vllm:num_requests_waiting{job=\\"vllm\\",namespace=~\\"prod-.*\\"}) > 80"' "$tmp/custom.yml" ||
  fail "custom: selector and threshold missing from the waiting rule"
grep -q 'for: 10m' "$tmp/custom.yml" || fail "custom: --for 10m missing"

echo '{"max_waiting": 120}' >"$tmp/thresholds.json"
check_rules from_file --thresholds "$tmp/thresholds.json"
grep -q '(vllm:num_requests_waiting) > 120"' "$tmp/from_file.yml" || fail "from_file: threshold file not applied"

# Bad input: exit 2 and one exact line on stderr.
expect_usage() {  # EXPECTED_STDERR ARGS...
  local expected="$1"
  shift
  "$bin" rules "$@" >/dev/null 2>"$tmp/err"
  local rc=$?
  [ "$rc" -eq 2 ] || fail "rules $*: exit $rc, expected 2"
  [ "$(cat "$tmp/err")" = "$expected" ] || fail "rules $*: stderr '$(cat "$tmp/err")', expected '$expected'"
}
expect_usage "headroom: error: --for: expected a Prometheus duration such as 5m or 1h30m, got '5 min'" --for "5 min"
expect_usage "headroom: error: --max-kv-usage: expected a fraction in (0, 1], got 95" --max-kv-usage 95

[ "$failures" -eq 0 ] && echo "rules: all checks passed"
exit $((failures > 0))
