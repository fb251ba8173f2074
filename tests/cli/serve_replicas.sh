#!/usr/bin/env bash
# Several replicas, one history: two `headroom serve` processes against one PostgreSQL started
# here (as history_postgres.sh starts it). A run recorded through one replica is used by a check
# through the other; neither keeps state of its own beyond caches.
# Skips (exit 0 with "SKIP: ...") only when the PostgreSQL server binaries are not installed.
set -u
bin="${HEADROOM_BIN:?}"
logs="$HEADROOM_SOURCE_DIR/tests/data/logs"
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

pg_bin=$(ls -d /usr/lib/postgresql/*/bin 2> /dev/null | sort -V | tail -1)
if [ -z "$pg_bin" ] || [ ! -x "$pg_bin/initdb" ] || [ ! -x "$pg_bin/pg_ctl" ]; then
  echo "SKIP: PostgreSQL server binaries not found under /usr/lib/postgresql/*/bin (install Debian's postgresql package)"
  exit 0
fi
pg=$(mktemp -d)
tmp=$(mktemp -d)
servers=()
source "$(dirname "${BASH_SOURCE[0]}")/lib/serve.sh"
as_pg() { "$@"; }
if [ "$(id -u)" -eq 0 ]; then
  chown postgres "$pg"
  chmod 755 "$pg"
  as_pg() { runuser -u postgres -- "$@"; }
fi
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
cleanup() {
  stop_servers
  as_pg "$pg_bin/pg_ctl" -D "$pg/data" -m immediate stop > /dev/null 2>&1
  rm -rf "$pg" "$tmp"
}
trap cleanup EXIT
as_pg "$pg_bin/initdb" -D "$pg/data" -U headroom --auth=trust > "$pg/initdb.log" 2>&1 || {
  echo "FAIL: initdb: $(tail -5 "$pg/initdb.log")"; exit 1; }
as_pg "$pg_bin/pg_ctl" -D "$pg/data" -l "$pg/server.log" -w -t 30 \
  -o "-p $port -k $pg -c listen_addresses=127.0.0.1 -c fsync=off" start > /dev/null || {
  echo "FAIL: pg_ctl start: $(tail -5 "$pg/server.log")"; exit 1; }
as_pg "$pg_bin/createdb" -h 127.0.0.1 -p "$port" -U headroom replicas_test || { echo "FAIL: createdb"; exit 1; }
db="postgresql://headroom@127.0.0.1:$port/replicas_test"
export NO_COLOR=1 HF_HUB_CACHE="$tmp/hf" HEADROOM_NVML_LIBRARY=/nonexistent/libnvidia-ml.so.1 \
  HEADROOM_NVIDIA_SMI=/nonexistent/nvidia-smi HEADROOM_DB="$tmp/unused.db"

# Replica a records; replica b only reads (and rereads the history on every request).
start_server a --db "$db" --allow-record
start_server b --db "$db" --history-refresh-ms 0

# The setup of tests/data/logs/v1_startup_ok.log (vLLM 0.19.0, CodeLlama-7b on a 79.19 GiB GPU).
setup='{"model": "codellama/CodeLlama-7b-hf", "gpu_memory_gib": 79.19, "vllm_version": "0.19.0",
  "flags": {"max_model_len": 8192, "gpu_memory_utilization": 0.9, "max_num_seqs": 256}}'
check_b() { curl -s -H 'Content-Type: application/json' -d "$setup" "$b_url/v1/check" > "$tmp/$1.json"; }

check_b before
python3 -c 'import json,sys; d = json.load(open(sys.argv[1])); assert "history" not in d, d.get("history")' "$tmp/before.json" ||
  fail "before recording, b should see no history"

status=$(curl -s -o "$tmp/record.json" -w '%{http_code}' --data-binary "@$logs/v1_startup_ok.log" "$a_url/v1/record")
[ "$status" = 200 ] || fail "record through a: status $status: $(cat "$tmp/record.json")"
[ "$(json_get records.0.inserted < "$tmp/record.json")" = True ] || fail "record: inserted"
[ "$(json_get records.0.model < "$tmp/record.json")" = codellama/CodeLlama-7b-hf ] || fail "record: model"
status=$(curl -s -o "$tmp/record2.json" -w '%{http_code}' --data-binary "@$logs/v1_startup_ok.log" "$a_url/v1/record")
[ "$(json_get records.0.inserted < "$tmp/record2.json")" = False ] || fail "the same log is stored once"
[ "$(curl -s -o /dev/null -w '%{http_code}' --data-binary "@$logs/v1_startup_ok.log" "$b_url/v1/record")" = 404 ] ||
  fail "b was not started with --allow-record"

check_b after
python3 - "$tmp/after.json" <<'PY' || fail "b's check should use the run recorded through a: $(head -c 600 "$tmp/after.json")"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["history"]["records"] == 1, d.get("history")
assert "history #1" in d["sources"]["activation_peak"], d["sources"]
# The log's own terms at its utilization (tests/data/logs/v1_startup_ok.log, vLLM 0.19.0):
# 79.19 × 0.9 − (12.56 weights + 0.77 activation + 0.25 non-torch) GiB.
expected = 79.19 * 0.9 - 13.58
assert abs(d["memory"]["kv_cache_gib"] - expected) / expected < 0.005, d["memory"]
assert "hunter" not in json.dumps(d)
PY
# The history through a lists the record; the database URL is shown as the store describes it.
curl -s "$a_url/v1/history" > "$tmp/history.json"
[ "$(json_get records.0.model < "$tmp/history.json")" = codellama/CodeLlama-7b-hf ] || fail "history through a"

[ $failures -eq 0 ] && echo "serve_replicas: all passed"
exit $((failures > 0))
