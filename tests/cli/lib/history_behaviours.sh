# The history behaviours both stores must show, sourced by tests/cli/history_sqlite.sh and
# tests/cli/history_postgres.sh with HEADROOM_DB pointing at an empty database, $bin, $logs, $tmp,
# $fail and check() defined. Defines history_behaviours(); `integrity` is a command printing "ok"
# when the database is consistent (SQLite's PRAGMA integrity_check; "ok" for PostgreSQL).

count_records() {
  "$bin" history list --format json | python3 -c 'import json,sys; print(len(json.load(sys.stdin)["records"]))'
}

# A copy of a log that differs only by a trailing line, so it is a different recording.
variant() {  # source, n
  local out="$tmp/logs/$(basename "$1" .log)-$2.log"
  mkdir -p "$tmp/logs"
  { cat "$1"; echo "INFO test run marker $2"; } > "$out"
  echo "$out"
}

history_behaviours() {
  local integrity="$1" data="$HEADROOM_SOURCE_DIR/tests/data/history"

  # record, and the same log once only
  out=$("$bin" record "$logs/v1_startup_ok.log"); check "record exits 0" 0 $?
  check "record says the id" "recorded $logs/v1_startup_ok.log as history #1: ok; codellama/CodeLlama-7b-hf, vLLM 0.19.0, tp=1" "$out"
  out=$("$bin" record "$logs/v1_startup_ok.log"); check "second record exits 0" 0 $?
  check "same log stored once" "already recorded: $logs/v1_startup_ok.log is history #1" "$out"
  check "one record" 1 "$(count_records)"
  "$bin" record "$logs/v1_kv_insufficient.log" > /dev/null
  check "failure class stored" kv_cache_insufficient \
    "$("$bin" history show 2 --format json | python3 -c 'import json,sys; print(json.load(sys.stdin)["failure_class"])')"

  # check uses the measured terms of the same setup, and says so
  local setup="codellama/CodeLlama-7b-hf --gpu-memory-gib 79.19 --vllm-version 0.19.0 --max-model-len 8192 --gpu-memory-utilization 0.9 --max-num-seqs 256"
  out=$("$bin" check $setup); check "check with history exits 0" 0 $?
  echo "$out" | grep -q "note: activation peak measured on .* (history #1): 0.77 GiB" || { echo "FAIL: check cites the measured activation: $out"; fail=1; }
  echo "$out" | grep -Eq "activation peak +0.77 +measured on .* \(history #1\)" || { echo "FAIL: source column: $out"; fail=1; }
  out=$("$bin" check $setup --no-history)
  echo "$out" | grep -q "measured on" && { echo "FAIL: --no-history still uses the history"; fail=1; }
  kv=$("$bin" check $setup --format json | python3 -c 'import json,sys; print(json.load(sys.stdin)["memory"]["kv_cache_gib"])')
  # The fixture's own terms at its utilization: 79.19 × 0.9 − (12.56 + 0.77 + 0.25) GiB.
  check "kv cache from measured terms" "True" "$(python3 -c "e = 79.19 * 0.9 - 13.58; print(abs($kv - e) / e < 0.005)")"

  # a configuration recorded as failing is cited, and with the same version it is the verdict
  "$bin" record --outcome failed "$(variant "$logs/v1_startup_ok.log" failed)" > /dev/null
  out=$("$bin" check $setup); check "recorded failure makes check negative" 3 $?
  echo "$out" | grep -q "startup failed with gpu_memory_utilization=0.90, max_model_len=8192, max_num_seqs=256" \
    || { echo "FAIL: failure cited: $out"; fail=1; }

  # import, export, import again, forget
  out=$("$bin" history import "$data/startup_sample.jsonl"); check "import exits 0" 0 $?
  check "import summary" "imported 4 rows from $data/startup_sample.jsonl: 4 added, 0 already recorded" "$out"
  kv=$("$bin" check Qwen/Qwen2.5-7B-Instruct --gpu H100 --vllm-version 0.19.0 --max-model-len 8192 \
        --gpu-memory-utilization 0.95 --max-num-batched-tokens 8192 --format json |
       python3 -c 'import json,sys; print(json.load(sys.stdin)["memory"]["kv_cache_gib"])')
  check "imported setup within 0.5% of its recorded KV cache" "True" "$(python3 -c "print(abs($kv - 58.53) / 58.53 < 0.005)")"
  "$bin" history export --format jsonl -o "$tmp/export.jsonl"; check "export exits 0" 0 $?
  check "export has every record" "$(count_records)" "$(wc -l < "$tmp/export.jsonl" | tr -d ' ')"
  before=$(count_records)
  out=$("$bin" history import "$tmp/export.jsonl")
  check "export imports as duplicates" "imported $before rows from $tmp/export.jsonl: 0 added, $before already recorded" "$out"
  out=$("$bin" history forget 2); check "forget exits 0" 0 $?
  check "forget message" "forgot history #2" "$out"
  check "one fewer" $((before - 1)) "$(count_records)"
  err=$("$bin" history show 2 2>&1 >/dev/null); check "show forgotten exits 1" 1 $?
  case "$err" in *"no history record #2"*) ;; *) echo "FAIL: show forgotten: $err"; fail=1 ;; esac
  err=$("$bin" history frobnicate 2>&1); check "unknown action exits 2" 2 $?

  # concurrent record processes lose nothing
  before=$(count_records)
  local pids=() p i
  for p in 1 2 3 4 5 6 7 8; do
    files=()
    for i in 1 2 3; do files+=("$(variant "$logs/v1_startup_ok.log" "c$p-$i")"); done
    "$bin" record "${files[@]}" > "$tmp/concurrent-$p.out" 2>&1 &
    pids+=($!)
  done
  local failed_runs=0
  for p in "${pids[@]}"; do wait "$p" || failed_runs=$((failed_runs + 1)); done
  check "concurrent records all succeed" 0 "$failed_runs"
  check "concurrent records all stored" $((before + 24)) "$(count_records)"

  # record killed with SIGKILL at random moments: earlier records intact, database consistent
  "$bin" history export > "$tmp/before-kill.jsonl"
  local deadline=$((SECONDS + 8)) n=0
  while [ $SECONDS -lt $deadline ]; do
    n=$((n + 1))
    "$bin" record "$(variant "$logs/v1_startup_ok.log" "k$n")" > /dev/null 2>&1 &
    local pid=$!
    sleep "0.0$((RANDOM % 10))$((RANDOM % 10))"
    kill -9 "$pid" 2> /dev/null
    wait "$pid" 2> /dev/null
  done
  check "database consistent after kill loop" ok "$($integrity)"
  "$bin" history export > "$tmp/after-kill.jsonl"; check "export after kill loop" 0 $?
  check "earlier records intact after $n kills" "True" "$(python3 - "$tmp/before-kill.jsonl" "$tmp/after-kill.jsonl" <<'EOF'
import json, sys
before = [json.loads(l) for l in open(sys.argv[1])]
after = {r["history_id"]: r for r in map(json.loads, open(sys.argv[2]))}
print(all(after.get(r["history_id"]) == r for r in before))
EOF
)"
  out=$("$bin" record "$(variant "$logs/v1_startup_ok.log" after-kill)"); check "record works after the kill loop" 0 $?
}
