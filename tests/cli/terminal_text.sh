#!/usr/bin/env bash
# Text from outside (a model's folder name and config, a log's lines) printed by the check and
# diagnose text renderers and in warnings: escape sequences and line breaks reach the terminal as
# visible escapes ("\x1b", "\n"), never as raw control bytes.
set -u
bin="$HEADROOM_BIN"
src="$HEADROOM_SOURCE_DIR"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
esc=$'\x1b'
bel=$'\a'

# No byte of ESC, BEL, CR or a C1 control in a file; any is a failure naming the case.
no_controls() {  # name, file
  if LC_ALL=C grep -q "[$esc$bel"$'\r'"]" "$2"; then
    echo "FAIL: $1: raw control bytes printed:"; od -c "$2" | head -20; fail=1
  fi
}

# check: a local model folder named with a title-setting sequence, an architecture with a
# clear-screen sequence in its config.json.
dir="$tmp/m${esc}]0;pwned${bel}x"
mkdir -p "$dir"
python3 - "$src/tests/data/models/llama_gqa.json" "$dir/config.json" <<'PY'
import json, sys
c = json.load(open(sys.argv[1]))
c["architectures"] = ["Llama\u001b[2JForCausalLM"]
json.dump(c, open(sys.argv[2], "w"))
PY
"$bin" check "$dir" --gpu H100 -- --max-model-len 4096 > "$tmp/check.out" 2> "$tmp/check.err"
rc=$?
[ "$rc" = 0 ] || [ "$rc" = 3 ] || [ "$rc" = 1 ] || { echo "FAIL: check exited $rc: $(cat "$tmp/check.err")"; fail=1; }
no_controls "check stdout" "$tmp/check.out"
no_controls "check stderr" "$tmp/check.err"
grep -qF 'm\x1b]0;pwned\x07x' "$tmp/check.out" || { echo "FAIL: check: the folder name is not shown escaped: $(head -3 "$tmp/check.out")"; fail=1; }
grep -qF 'Llama\x1b[2JForCausalLM' "$tmp/check.out" "$tmp/check.err" || { echo "FAIL: check: the architecture is not shown escaped"; fail=1; }

# diagnose: a failure line carrying escapes and a carriage return, a model name with a clear-screen
# sequence and a right-to-left override (U+202E, which reorders what follows on screen).
{
  printf "INFO 12-10 08:00:00 [core.py:93] Initializing a V1 LLM engine (v0.13.0) with config: model='Qwen/Qwen3-8B%s[2J\xe2\x80\xae', max_seq_len=32768, tensor_parallel_size=1, enforce_eager=False\n" "$esc"
  printf 'ValueError: Free memory on device cuda:0 (22.76/24.0 GiB) on startup is less than desired GPU memory utilization (0.97, 23.28 GiB). Decrease GPU memory utilization or reduce GPU memory used by other processes.%s]0;pwned%s\r\n' "$esc" "$bel"
} > "$tmp/escapes.log"
"$bin" diagnose --color never "$tmp/escapes.log" > "$tmp/diag.out" 2> "$tmp/diag.err"
[ $? = 3 ] || { echo "FAIL: diagnose did not find the failure: $(cat "$tmp/diag.out" "$tmp/diag.err")"; fail=1; }
no_controls "diagnose stdout" "$tmp/diag.out"
no_controls "diagnose stderr" "$tmp/diag.err"
grep -qF '\u202e' "$tmp/diag.out" || { echo "FAIL: diagnose: the model is not shown escaped: $(cat "$tmp/diag.out")"; fail=1; }
if grep -q $'\xe2\x80\xae' "$tmp/diag.out"; then echo "FAIL: diagnose printed a raw U+202E"; fail=1; fi

# An error message quoting a path with a clear-screen sequence.
"$bin" diagnose "$tmp/no${esc}[2Jsuch.log" > /dev/null 2> "$tmp/missing.err"
no_controls "missing file error" "$tmp/missing.err"
grep -qF 'no\x1b[2Jsuch.log' "$tmp/missing.err" || { echo "FAIL: the path is not shown escaped: $(cat "$tmp/missing.err")"; fail=1; }

[ "$fail" = 0 ] && echo "terminal_text: all passed"
exit "$fail"
