#!/usr/bin/env bash
# headroom record / history / check on the SQLite history: the shared behaviours (duplicates,
# measured terms in check, failures cited, import/export/forget, concurrent records, a kill -9
# loop), plus what only a file can show: check never creates the database, and a corrupt or
# foreign file gets a clear error and keeps its bytes.
set -u
bin="$HEADROOM_BIN"
logs="$HEADROOM_SOURCE_DIR/tests/data/logs"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
check() {  # description, expected, actual
  if [ "$2" != "$3" ]; then echo "FAIL: $1: expected [$2], got [$3]"; fail=1; fi
}
. "$HEADROOM_SOURCE_DIR/tests/cli/lib/history_behaviours.sh"

# The default location is under XDG_DATA_HOME; check does not create it.
unset HEADROOM_DB
export XDG_DATA_HOME="$tmp/xdg"
"$bin" check codellama/CodeLlama-7b-hf --gpu H100 > /dev/null; check "check without a history exits 0" 0 $?
check "check creates no database" "no" "$([ -e "$tmp/xdg/headroom/history.db" ] && echo yes || echo no)"
"$bin" record "$logs/v1_startup_ok.log" > /dev/null; check "record creates the default database" 0 $?
check "default location" "yes" "$([ -e "$tmp/xdg/headroom/history.db" ] && echo yes || echo no)"

export HEADROOM_DB="$tmp/history.db"
sqlite_integrity() { sqlite3 "$HEADROOM_DB" 'PRAGMA integrity_check'; }
history_behaviours sqlite_integrity
check "schema version" 2 "$(sqlite3 "$HEADROOM_DB" 'PRAGMA user_version')"
check "journal mode" wal "$(sqlite3 "$HEADROOM_DB" 'PRAGMA journal_mode')"

# --db wins over HEADROOM_DB
"$bin" record --db "$tmp/other.db" "$logs/v1_startup_ok.log" > /dev/null
check "--db chooses the database" 1 "$("$bin" history list --db "$tmp/other.db" --format json | python3 -c 'import json,sys; print(len(json.load(sys.stdin)["records"]))')"

# Corrupt and foreign files: clear error, bytes untouched, check still works
head -c 8192 /dev/urandom > "$tmp/corrupt.db"
cp "$tmp/corrupt.db" "$tmp/corrupt.orig"
err=$("$bin" record --db "$tmp/corrupt.db" "$logs/v1_startup_ok.log" 2>&1 >/dev/null); check "corrupt file exits 1" 1 $?
check "corrupt file message" "headroom: error: $tmp/corrupt.db: expected a headroom history database (SQLite), found a file that is not a SQLite database (left untouched; move it away or choose another file with --db)" "$err"
cmp -s "$tmp/corrupt.db" "$tmp/corrupt.orig"; check "corrupt file untouched" 0 $?
err=$("$bin" check codellama/CodeLlama-7b-hf --gpu H100 --db "$tmp/corrupt.db" 2>&1 >/dev/null); check "check with a corrupt history exits 0" 0 $?
case "$err" in *"headroom: warning: run history not used: $tmp/corrupt.db: expected a headroom history database"*) ;; *) echo "FAIL: check warns: $err"; fail=1 ;; esac
sqlite3 "$tmp/foreign.db" "CREATE TABLE invoices (id INTEGER); INSERT INTO invoices VALUES (1);"
cp "$tmp/foreign.db" "$tmp/foreign.orig"
err=$("$bin" history import --db "$tmp/foreign.db" "$HEADROOM_SOURCE_DIR/tests/data/history/startup_sample.jsonl" 2>&1 >/dev/null); check "foreign file exits 1" 1 $?
check "foreign file message" "headroom: error: $tmp/foreign.db: expected a headroom history database, found a SQLite database of another program (tables invoices); left untouched, choose another file with --db" "$err"
cmp -s "$tmp/foreign.db" "$tmp/foreign.orig"; check "foreign file untouched" 0 $?

[ $fail -eq 0 ] && echo "history_sqlite: all passed"
exit $fail
