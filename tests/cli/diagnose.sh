#!/usr/bin/env bash
# headroom diagnose / kb at the binary level: exit codes, JSON keys, gzip and stdin, bad input.
set -u
bin="$HEADROOM_BIN"
logs="$HEADROOM_SOURCE_DIR/tests/data/logs"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
check() {  # description, expected, actual
  if [ "$2" != "$3" ]; then echo "FAIL: $1: expected [$2], got [$3]"; fail=1; fi
}

"$bin" diagnose "$logs/v1_startup_ok.log" > /dev/null; check "healthy log exits 0" 0 $?
"$bin" diagnose "$logs/v1_kv_insufficient.log" > /dev/null; check "failure exits 3" 3 $?
out=$("$bin" diagnose --format json "$logs/v1_kv_insufficient.log")
check "json primary class" kv_cache_insufficient "$(echo "$out" | python3 -c 'import json,sys; print(json.load(sys.stdin)["primary"]["class"])')"
check "json keys" "True" "$(echo "$out" | python3 -c 'import json,sys; d=json.load(sys.stdin); print(all(k in d for k in ["schema_version","primary","findings","run","fixes","dead_ends"]) and all(k in d["primary"] for k in ["class","phase","line","message","facts"]) and all(k in d["fixes"][0] for k in ["changes","command","why","confidence"]))')"
gzip -c "$logs/v1_kv_insufficient.log" > "$tmp/x.log.gz"
"$bin" diagnose "$tmp/x.log.gz" > /dev/null; check "gzip input" 3 $?
"$bin" diagnose < "$logs/startup_check.log" > /dev/null; check "stdin input" 3 $?
: > "$tmp/empty.log"
err=$("$bin" diagnose "$tmp/empty.log" 2>&1 >/dev/null); check "empty exits 4 (nothing shows vLLM ready)" 4 $?
check "empty warns" "headroom: warning: $tmp/empty.log: the log is empty; nothing to diagnose" "$err"
head -c 4096 /dev/urandom > "$tmp/garbage.bin"; printf '\0' >> "$tmp/garbage.bin"
"$bin" diagnose "$tmp/garbage.bin" > /dev/null 2> "$tmp/err"; check "binary exits 1" 1 $?
grep -q "expected a text log (plain or gzip), found binary data" "$tmp/err" || { echo "FAIL: binary message: $(cat "$tmp/err")"; fail=1; }
head -c 20000 "$tmp/x.log.gz" > /dev/null
python3 -c "import gzip,sys; sys.stdout.buffer.write(gzip.compress(b'torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB.\n' * 50000)[:3000])" > "$tmp/cut.gz"
"$bin" diagnose "$tmp/cut.gz" > /dev/null 2> "$tmp/err"; check "truncated gzip still diagnosed" 3 $?
grep -q "truncated gzip data" "$tmp/err" || { echo "FAIL: truncated gzip message: $(cat "$tmp/err")"; fail=1; }
python3 -c "import sys; sys.stdout.write('x' * (12 << 20) + '\nValueError: Total number of attention heads (52) must be divisible by tensor parallel size (3).\n')" > "$tmp/long.log"
"$bin" diagnose "$tmp/long.log" > /dev/null 2> "$tmp/err"; check "overlong line" 3 $?
grep -q "line 1 is longer than" "$tmp/err" || { echo "FAIL: long line warning: $(cat "$tmp/err")"; fail=1; }
"$bin" diagnose /nonexistent.log 2> "$tmp/err"; check "missing file exits 1" 1 $?

# The same logs as Docker's json-file driver stores them (/var/lib/docker/containers/ID/ID-json.log)
# and as journalctl -o json exports them: the same diagnosis, line for line.
for log in v1_kv_insufficient v1_profile_oom v1_sampler_oom illegal_access startup_check; do
  python3 -c '
import json, sys
for line in open(sys.argv[1], encoding="utf-8"):
    print(json.dumps({"log": line, "stream": "stderr", "time": "2026-03-20T23:26:06.123456789Z"}))' "$logs/$log.log" > "$tmp/$log-json.log"
  python3 -c '
import json, sys
for line in open(sys.argv[1], encoding="utf-8"):
    print(json.dumps({"__REALTIME_TIMESTAMP": "1", "MESSAGE": line.rstrip("\n"), "_PID": "7"}))' "$logs/$log.log" > "$tmp/$log-journal.log"
  "$bin" diagnose --format json "$logs/$log.log" | grep -v '^  "\(bytes\|log\)":' > "$tmp/$log-plain.out"
  for form in json journal; do
    "$bin" diagnose --format json "$tmp/$log-$form.log" | grep -v '^  "\(bytes\|log\)":' > "$tmp/$log-$form.out"
    cmp -s "$tmp/$log-plain.out" "$tmp/$log-$form.out" || { echo "FAIL: $log as $form records: $(diff "$tmp/$log-plain.out" "$tmp/$log-$form.out" | head -5)"; fail=1; }
  done
done

# Logs as pasted: docker compose prefixes, colour codes, the error wrapped at 100 columns.
out=$("$bin" diagnose --format json "$logs/compose_wrapped_startup_check.log")
check "wrapped compose log: class" startup_free_memory_insufficient "$(echo "$out" | python3 -c 'import json,sys; print(json.load(sys.stdin)["primary"]["class"])')"
check "wrapped compose log: line in the original file" 3 "$(echo "$out" | python3 -c 'import json,sys; print(json.load(sys.stdin)["primary"]["line"])')"
text=$("$bin" diagnose "$logs/compose_wrapped_startup_check.log")
echo "$text" | grep -q "(no flag change)" && { echo "FAIL: a fix line without a flag change or an action"; fail=1; }
echo "$text" | grep -q "free the GPU: nvidia-smi" || { echo "FAIL: the action of a fix without flags: $text"; fail=1; }
"$bin" kb show startup_free_memory_insufficient | grep -q "failed in 100%, error-taxonomy.md" || { echo "FAIL: kb show rate and source"; fail=1; }

"$bin" kb list > /dev/null; check "kb list" 0 $?
"$bin" kb show kv_cache_insufficient > /dev/null; check "kb show" 0 $?
"$bin" kb show kv_cache_insuficient 2> "$tmp/err"; check "kb show unknown" 2 $?
grep -q "did you mean kv_cache_insufficient" "$tmp/err" || { echo "FAIL: did you mean: $(cat "$tmp/err")"; fail=1; }
mkdir "$tmp/kb"; echo '{"id": "x", "signature": "s", "regex": "a(b"}' > "$tmp/kb/x.json"
"$bin" kb validate "$tmp/kb" 2> "$tmp/err" > /dev/null; check "kb validate broken" 1 $?
check "kb validate message" "headroom: error: $tmp/kb/x.json: field 'regex': expected a regular expression RE2 accepts, got \"a(b\" (missing ): a(b)" "$(cat "$tmp/err")"
"$bin" kb validate "$HEADROOM_SOURCE_DIR/data/kb" > /dev/null; check "built-in kb valid" 0 $?
echo '{"id": "my_failure", "signature": "s", "regex": "my special failure"}' > "$tmp/kb/x.json"
echo "my special failure" > "$tmp/mine.log"
check "user kb via --kb" my_failure "$("$bin" diagnose --kb "$tmp/kb" --format json "$tmp/mine.log" | python3 -c 'import json,sys; print(json.load(sys.stdin)["primary"]["class"])')"
check "user kb via HEADROOM_KB_PATH" my_failure "$(HEADROOM_KB_PATH="$tmp/kb" "$bin" diagnose --format json "$tmp/mine.log" | python3 -c 'import json,sys; print(json.load(sys.stdin)["primary"]["class"])')"

# "It started" and "it stopped before it was ready" differ: text, JSON outcome and exit status.
check "started: outcome" started "$("$bin" diagnose --format json "$logs/v1_startup_ok.log" | python3 -c 'import json,sys; print(json.load(sys.stdin)["outcome"])')"
"$bin" diagnose "$logs/v1_startup_ok.log" | grep -q "^no failure found: vLLM started" || { echo "FAIL: started text"; fail=1; }
grep -v -E "Starting vLLM API server|Application startup complete|init engine|Avg prompt throughput|Added request|GET /|POST /" \
  "$logs/v1_startup_ok.log" | head -n 12 > "$tmp/cut.log"
out=$("$bin" diagnose "$tmp/cut.log"); check "incomplete exits 4" 4 $?
echo "$out" | grep -q "no failure found, but the log ends before vLLM was ready" || { echo "FAIL: incomplete text: $out"; fail=1; }
check "incomplete: outcome" incomplete "$("$bin" diagnose --format json "$tmp/cut.log" | python3 -c 'import json,sys; print(json.load(sys.stdin)["outcome"])')"

# A log that PowerShell's '>' wrote (UTF-16LE with a byte-order mark) is read, with a warning.
python3 -c 'import sys; sys.stdout.buffer.write(open(sys.argv[1], encoding="utf-8").read().replace("\n", "\r\n").encode("utf-16"))' \
  "$logs/v1_kv_insufficient.log" > "$tmp/utf16.log"
out=$("$bin" diagnose --format json "$tmp/utf16.log" 2> "$tmp/err"); check "utf-16 log exits 3" 3 $?
check "utf-16 log class" kv_cache_insufficient "$(echo "$out" | python3 -c 'import json,sys; print(json.load(sys.stdin)["primary"]["class"])')"
grep -q "the log is UTF-16 (little-endian" "$tmp/err" || { echo "FAIL: utf-16 warning: $(cat "$tmp/err")"; fail=1; }

# The run's context on the command line: a bare OOM line sized as the sampler warm-up's logits
# (1,024 sequences × 128,256 vocabulary × 4 B = 501.00 MiB).
echo "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 501.00 MiB. GPU 0 has a total capacity of 79.19 GiB of which 300.00 MiB is free." > "$tmp/bare.log"
out=$("$bin" diagnose --format json "$tmp/bare.log" -- vllm serve meta-llama/Llama-3.1-8B-Instruct --max-num-seqs 1024)
check "context: class" sampler_warmup_oom "$(echo "$out" | python3 -c 'import json,sys; print(json.load(sys.stdin)["primary"]["class"])')"
check "context: evidence" allocation "$(echo "$out" | python3 -c 'import json,sys; print(json.load(sys.stdin)["primary"]["phase_evidence"])')"
"$bin" diagnose "$tmp/bare.log" --gpu H100 --model meta-llama/Llama-3.1-8B-Instruct > /dev/null; check "context: --gpu and --model" 3 $?
"$bin" diagnose "$tmp/bare.log" --gpu H10O 2> "$tmp/err"; check "context: unknown GPU is a usage error" 2 $?

# vLLM's wrapper alone names no class: a failure (exit 3) with class null; an error line cut short
# is read from what is left of it and says so.
echo "RuntimeError: Engine core initialization failed. See root cause above. Failed core proc(s): {}" > "$tmp/wrapper.log"
"$bin" diagnose "$tmp/wrapper.log" > "$tmp/out"; check "wrapper: exit" 3 $?
grep -q "^failure: no class (engine_failure_unexplained" "$tmp/out" || { echo "FAIL: wrapper text: $(cat "$tmp/out")"; fail=1; }
mkdir -p "$tmp/json"
"$bin" diagnose --format json "$tmp/wrapper.log" > "$tmp/json/wrapper.json"
check "wrapper: class null" None "$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["primary"]["class"])' "$tmp/json/wrapper.json")"
printf '  File "/x/vllm/v1/worker/gpu_model_runner.py", line 1595, in load_model\ntorch.OutOfMemoryError: CUDA out of memo\n' > "$tmp/cut_title.log"
"$bin" diagnose --format json "$tmp/cut_title.log" > "$tmp/json/cut_title.json"
check "cut title: class" "weights_load_oom True" "$(python3 -c 'import json,sys; p=json.load(open(sys.argv[1]))["primary"]; print(p["class"], p["title_cut"])' "$tmp/json/cut_title.json")"
"$bin" diagnose "$tmp/cut_title.log" | grep -q "the error line is cut short" || { echo "FAIL: cut title text"; fail=1; }

# Every form of output matches docs/diagnose.schema.json.
for log in v1_startup_ok v1_kv_insufficient v1_sampler_oom illegal_access startup_check; do
  "$bin" diagnose --format json "$logs/$log.log" > "$tmp/json/$log.json"
done
"$bin" diagnose --format json "$tmp/cut.log" > "$tmp/json/incomplete.json"
"$bin" diagnose --format json "$logs/v1_startup_ok.log" "$logs/v1_kv_insufficient.log" > "$tmp/json/several.json"
out=$(/usr/bin/python3 "$HEADROOM_SOURCE_DIR/tests/cli/lib/validate_json.py" "$HEADROOM_SOURCE_DIR/docs/diagnose.schema.json" "$tmp/json"/*.json 2>&1) \
  || { echo "FAIL: diagnose JSON does not match docs/diagnose.schema.json: $out"; fail=1; }

# A multimodal item larger than a step while chunked multimodal input is off (Gemma 4 from v0.20):
# a config look-alike; the fix is the item's size from vLLM's own message (2496 tokens).
out=$("$bin" diagnose --format json "$logs/v1_mm_item_too_large.log")
check "mm item: cause" "mm_item_exceeds_batched_tokens config" "$(echo "$out" | python3 -c 'import json,sys; p=json.load(sys.stdin)["primary"]; print(p["cause"], p["phase"])')"
check "mm item: fix" "2496" "$(echo "$out" | python3 -c 'import json,sys; print(json.load(sys.stdin)["fixes"][0]["changes"]["--max-num-batched-tokens"])')"

exit $fail
