#!/usr/bin/env bash
# The history behaviours of history_sqlite.sh against a real PostgreSQL server started here:
# initdb into a temporary folder, pg_ctl on a free loopback port (as the postgres user when run as
# root, since PostgreSQL refuses to run as root), HEADROOM_DB=postgresql://..., stopped at exit.
# Skips (exit 0 with "SKIP: ...") only when the PostgreSQL server binaries are not installed.
set -u
bin="$HEADROOM_BIN"
logs="$HEADROOM_SOURCE_DIR/tests/data/logs"
fail=0
check() {  # description, expected, actual
  if [ "$2" != "$3" ]; then echo "FAIL: $1: expected [$2], got [$3]"; fail=1; fi
}

pg_bin=$(ls -d /usr/lib/postgresql/*/bin 2> /dev/null | sort -V | tail -1)
if [ -z "$pg_bin" ] || [ ! -x "$pg_bin/initdb" ] || [ ! -x "$pg_bin/pg_ctl" ]; then
  echo "SKIP: PostgreSQL server binaries not found under /usr/lib/postgresql/*/bin (install Debian's postgresql package)"
  exit 0
fi

tmp=$(mktemp -d)
as_pg() { "$@"; }
if [ "$(id -u)" -eq 0 ]; then
  chown postgres "$tmp"
  chmod 755 "$tmp"
  as_pg() { runuser -u postgres -- "$@"; }
fi
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
cleanup() {
  as_pg "$pg_bin/pg_ctl" -D "$tmp/data" -m immediate stop > /dev/null 2>&1
  rm -rf "$tmp"
}
trap cleanup EXIT
as_pg "$pg_bin/initdb" -D "$tmp/data" -U headroom --auth=trust > "$tmp/initdb.log" 2>&1 || {
  echo "FAIL: initdb: $(tail -5 "$tmp/initdb.log")"; exit 1; }
as_pg "$pg_bin/pg_ctl" -D "$tmp/data" -l "$tmp/server.log" -w -t 30 \
  -o "-p $port -k $tmp -c listen_addresses=127.0.0.1 -c fsync=off" start > /dev/null || {
  echo "FAIL: pg_ctl start: $(tail -5 "$tmp/server.log")"; exit 1; }
as_pg "$pg_bin/createdb" -h 127.0.0.1 -p "$port" -U headroom history_test || { echo "FAIL: createdb"; exit 1; }

# The test's own files live in a folder the current user owns.
work=$(mktemp -d)
trap 'rm -rf "$work"; cleanup' EXIT
export HEADROOM_DB="postgresql://headroom@127.0.0.1:$port/history_test"
tmp_pg="$tmp"
tmp="$work"
. "$HEADROOM_SOURCE_DIR/tests/cli/lib/history_behaviours.sh"
pg_integrity() {
  # A killed client's transaction is rolled back by the server; the table must still be readable
  # and every stored body valid JSON.
  "$pg_bin/psql" -h 127.0.0.1 -p "$port" -U headroom -d history_test -Atc \
    "SELECT CASE WHEN count(*) = count(body::jsonb) THEN 'ok' ELSE 'bad' END FROM headroom_runs" 2>&1
}
history_behaviours pg_integrity
check "schema version" 2 "$("$pg_bin/psql" -h 127.0.0.1 -p "$port" -U headroom -d history_test -Atc "SELECT value FROM headroom_meta WHERE key = 'schema_version'")"

err=$(HEADROOM_DB="postgresql://headroom@127.0.0.1:1/none" "$bin" history list 2>&1 >/dev/null); check "unreachable server exits 1" 1 $?
case "$err" in *"headroom: error: postgresql://headroom@127.0.0.1:1/none: cannot connect to PostgreSQL"*) ;; *) echo "FAIL: unreachable message: $err"; fail=1 ;; esac
HEADROOM_DB="postgresql://headroom@127.0.0.1:1/none" "$bin" check codellama/CodeLlama-7b-hf --gpu H100 > /dev/null 2>&1
check "check with an unreachable history exits 0" 0 $?

# headroom run records into the shared PostgreSQL as replicas would: two starts at once, both kept.
mkdir -p "$work/bin"
printf '#!/bin/sh\nexec /usr/bin/python3 %s "$@"\n' "$HEADROOM_SOURCE_DIR/tests/support/fake_vllm/fake_vllm.py" > "$work/bin/vllm"
chmod +x "$work/bin/vllm"
echo '[{"log": "'"$logs"'/v1_startup_ok.log", "line_delay": 0.005, "then": "serve", "serve_seconds": 0.1}]' > "$work/scenario.json"
before=$(count_records)
for i in 1 2; do
  FAKE_VLLM_SCENARIO="$work/scenario.json" PATH="$work/bin:$PATH" "$bin" run --gpu-memory-gib 79.19 --vllm-version 0.19.0 \
    -- vllm serve codellama/CodeLlama-7b-hf --max-model-len 8192 > /dev/null 2> "$work/run$i.err" &
done
wait
check "two concurrent runs recorded in PostgreSQL" $((before + 2)) "$(count_records)"

tmp="$tmp_pg"
[ $fail -eq 0 ] && echo "history_postgres: all passed"
exit $fail
