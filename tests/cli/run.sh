#!/usr/bin/env bash
# headroom run against a stand-in vLLM (tests/support/fake_vllm/fake_vllm.py, installed as `vllm`
# and `docker` on PATH) that replays real startup and failure logs with a worker process: a clean
# start recorded that then corrects check, a predicted failure (refused, --fix), a failure fixed by
# --retry, failures that are not retried, signals, orphans, and the bad cases.
set -u
bin="$HEADROOM_BIN"
logs="$HEADROOM_SOURCE_DIR/tests/data/logs"
runlogs="$HEADROOM_SOURCE_DIR/tests/data/run"
fake="$HEADROOM_SOURCE_DIR/tests/support/fake_vllm/fake_vllm.py"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
check() {  # description, expected, actual
  if [ "$2" != "$3" ]; then echo "FAIL: $1: expected [$2], got [$3]"; fail=1; fi
}
contains() {  # description, file, extended regex
  grep -Eq -- "$3" "$2" || { echo "FAIL: $1: no line matching [$3] in $2:"; cat "$2"; fail=1; }
}
alive() { kill -0 "$1" 2>/dev/null && echo alive || echo gone; }
records() { "$bin" history list --format json | python3 -c 'import json,sys; print(len(json.load(sys.stdin)["records"]))'; }
# Waits (at most 10 s) until FILE has a line matching REGEX.
wait_for() { for _ in $(seq 200); do grep -Eq -- "$2" "$1" 2>/dev/null && return 0; sleep 0.05; done; echo "FAIL: timed out waiting for [$2] in $1"; fail=1; }

mkdir -p "$tmp/bin"
for name in vllm docker; do printf '#!/bin/sh\nexec /usr/bin/python3 %s "$@"\n' "$fake" > "$tmp/bin/$name"; chmod +x "$tmp/bin/$name"; done
export PATH="$tmp/bin:$PATH"
export HEADROOM_DB="$tmp/history.db"
export FAKE_VLLM_ARGV_LOG="$tmp/argv.log"
scenario() { echo "$1" > "$tmp/scenario.json"; export FAKE_VLLM_SCENARIO="$tmp/scenario.json"; rm -f "$tmp/argv.log" "$tmp/pids"; }
launches() { [ -e "$tmp/argv.log" ] && wc -l < "$tmp/argv.log" | tr -d ' ' || echo 0; }

codellama="codellama/CodeLlama-7b-hf --max-model-len 8192 --gpu-memory-utilization 0.9 --max-num-seqs 256"
gpu="--gpu-memory-gib 79.19 --vllm-version 0.19.0"

# 1. A clean start: passed through, recorded, compared with the prediction; check then uses it.
scenario '[{"log": "'"$logs"'/v1_startup_ok.log", "then": "serve", "serve_seconds": 0.2, "pid_file": "'"$tmp"'/pids"}]'
"$bin" run $gpu -- vllm serve $codellama > "$tmp/ok.out" 2> "$tmp/ok.err"; check "clean start exits with vLLM's status" 0 $?
check "output passed through, line for line" "$(wc -l < "$logs/v1_startup_ok.log")" "$(wc -l < "$tmp/ok.out")"
read -r server worker < "$tmp/pids"
check "the worker's pid is in its lines" 1 "$(grep -c "(EngineCore pid=$worker) INFO 04-22 15:13:20 \[v1/core/kv_cache_utils.py:1319\] GPU KV cache size: 126,256 tokens" "$tmp/ok.out")"
contains "the start is recorded with the measured KV cache" "$tmp/ok.err" '^headroom: KV cache 126,256 tokens \(predicted [0-9,]+, [+-][0-9]+\.[0-9] %\); recorded as run #1$'
check "one record" 1 "$(records)"
check "recorded as ok" "ok 126256" "$("$bin" history show 1 --format json | python3 -c 'import json,sys; r=json.load(sys.stdin); print(r["outcome"], r["measured"]["kv_tokens"])')"
"$bin" check $codellama $gpu > "$tmp/after.txt"
contains "check uses the measured activation peak" "$tmp/after.txt" 'activation peak +0.77 +measured on .* \(history #1\)'

# 2. Predicted to fail: not launched (exit 3, check's report and changes); --fix launches the first change.
scenario '[{"log": "'"$logs"'/v1_startup_ok.log", "then": "serve", "serve_seconds": 0.1}]'
low="codellama/CodeLlama-7b-hf --max-model-len 8192 --gpu-memory-utilization 0.15"
"$bin" run --no-history $gpu -- vllm serve $low > "$tmp/pred.out" 2> "$tmp/pred.err"; check "predicted failure exits 3" 3 $?
check "not launched" 0 "$(launches)"
contains "check's changes are shown" "$tmp/pred.out" '^to start, change one of'
contains "says why it did not launch" "$tmp/pred.err" '^headroom: not launched: vLLM is predicted to fail; --fix launches the first change above, --force the command as it is$'
"$bin" run --no-history --fix $gpu -- vllm serve $low > /dev/null 2> "$tmp/fix.err"; check "--fix exits with vLLM's status" 0 $?
contains "--fix prints the command it runs" "$tmp/fix.err" '^headroom:   vllm serve codellama/CodeLlama-7b-hf --max-model-len [0-9]+ --gpu-memory-utilization [0-9.]+$'
check "--fix launched the printed command" "$(sed -n 's/^headroom:   vllm //p' "$tmp/fix.err")" "$(cat "$tmp/argv.log")"
rm -f "$tmp/argv.log"
"$bin" run --no-history --force $gpu -- vllm serve $low > /dev/null 2> "$tmp/force.err"; check "--force launches" 0 $?
check "--force launched the command unchanged" "serve $low" "$(cat "$tmp/argv.log")"

# 3. A failure fixed by --retry: the KV cache failure's computed --max-model-len, relaunched once.
rm -f "$HEADROOM_DB"
scenario '[{"when": {"max_model_len_above": 100000}, "log": "'"$logs"'/v1_kv_insufficient.log", "then": "exit", "exit_code": 1},
           {"log": "'"$runlogs"'/qwen3_8b_h100_ok.log", "then": "serve", "serve_seconds": 0.1}]'
"$bin" run --retry 2 --no-check -- vllm serve Qwen/Qwen3-8B --max-model-len 250000 > /dev/null 2> "$tmp/retry.err"
check "the retried start exits 0" 0 $?
contains "the failure is named" "$tmp/retry.err" '^headroom: the command exited with status 1 before vLLM was ready: kv_cache_insufficient in phase [a-z-]+; recorded as run #1$'
contains "the fix is vLLM's own estimate" "$tmp/retry.err" '^headroom: fix: --max-model-len 856'
contains "the new command is printed" "$tmp/retry.err" '^headroom: retry 1 of 2: vllm serve Qwen/Qwen3-8B --max-model-len 856$'
check "launched twice" "serve Qwen/Qwen3-8B --max-model-len 250000
serve Qwen/Qwen3-8B --max-model-len 856" "$(cat "$tmp/argv.log")"
contains "the second start is recorded" "$tmp/retry.err" '^headroom: KV cache 418,688 tokens; recorded as run #2$'
check "both attempts recorded" "failed kv_cache_insufficient,ok " "$("$bin" history list --format json | python3 -c 'import json,sys; print(",".join(r["outcome"]+" "+r.get("failure_class","") for r in json.load(sys.stdin)["records"]))')"

# 4. Never retried: a failure no flag fixes, and the same command twice.
scenario '[{"log": "'"$runlogs"'/driver_mismatch.log", "then": "exit", "exit_code": 1}]'
"$bin" run --retry 3 --no-check -- vllm serve codellama/CodeLlama-7b-hf > /dev/null 2> "$tmp/driver.err"; check "driver failure exits 1" 1 $?
contains "driver failure named" "$tmp/driver.err" 'cuda_driver_mismatch in phase'
contains "driver failure not retried" "$tmp/driver.err" "^headroom: not retried: cuda_driver_mismatch \(environment\) is not fixed by changing vLLM's flags$"
check "launched once" 1 "$(launches)"
scenario '[{"log": "'"$logs"'/v1_kv_insufficient.log", "then": "exit", "exit_code": 1}]'
"$bin" run --retry 3 --no-check -- vllm serve Qwen/Qwen3-8B --max-model-len 250000 > /dev/null 2> "$tmp/same.err"; check "repeated failure exits 1" 1 $?
contains "the same command is not run twice" "$tmp/same.err" '^headroom: not retried: the computed fix gives a command already tried$'
check "launched twice, not four times" 2 "$(launches)"

# 5. Signals: SIGTERM and SIGINT reach vLLM's process group; it shuts down its own way.
for sig in TERM INT; do
  scenario '[{"log": "'"$logs"'/v1_startup_ok.log", "line_delay": 0, "then": "serve", "pid_file": "'"$tmp"'/pids"}]'
  "$bin" run --no-history $gpu -- vllm serve $codellama > "$tmp/sig.out" 2> "$tmp/sig.err" &
  run_pid=$!
  wait_for "$tmp/sig.out" 'Application startup complete'
  read -r server worker < "$tmp/pids"
  kill -$sig $run_pid
  wait $run_pid; check "SIG$sig: exits with vLLM's status" 0 $?
  contains "SIG$sig reached vLLM" "$tmp/sig.out" "Shutting down \(signal $(kill -l $sig)\)"
  contains "SIG$sig: run says so" "$tmp/sig.err" "^headroom: passed SIG$sig on to the command; interrupt again to stop it at once$"
  check "SIG$sig: the server is gone" gone "$(alive "$server")"
  check "SIG$sig: the worker is gone" gone "$(alive "$worker")"
done

# 6. Interrupted twice: the second SIGINT kills the process group.
scenario '[{"log": "'"$logs"'/v1_startup_ok.log", "line_delay": 0, "then": "serve", "ignore_sigint": true, "pid_file": "'"$tmp"'/pids"}]'
"$bin" run --no-history $gpu -- vllm serve $codellama > "$tmp/twice.out" 2> "$tmp/twice.err" &
run_pid=$!
wait_for "$tmp/twice.out" 'Application startup complete'
read -r server worker < "$tmp/pids"
kill -INT $run_pid
wait_for "$tmp/twice.out" 'caught SIGINT'
kill -INT $run_pid
wait $run_pid; check "interrupted twice: killed (128+9)" 137 $?
contains "second interrupt explained" "$tmp/twice.err" '^headroom: interrupted again: stopping the command now \(SIGKILL to its process group\)$'
check "interrupted twice: the worker is gone" gone "$(alive "$worker")"

# 7. No orphans: the server dies by SIGKILL mid-start; its worker (in its group, or in a session of its own) is ended.
for leaves in false true; do
  head -8 "$runlogs/qwen3_8b_h100_ok.log" > "$tmp/partial.log"
  scenario '[{"log": "'"$tmp"'/partial.log", "line_delay": 0, "then": "kill_self", "worker_leaves_group": '$leaves', "pid_file": "'"$tmp"'/pids"}]'
  "$bin" run --no-history --no-check -- vllm serve Qwen/Qwen3-8B > /dev/null 2> "$tmp/orphan.err"; check "killed server (leaves group: $leaves): 137" 137 $?
  read -r server worker < "$tmp/pids"
  check "worker not orphaned (leaves group: $leaves)" gone "$(alive "$worker")"
  contains "killed by a signal, said plainly" "$tmp/orphan.err" '^headroom: the command was killed by signal 9 \(status 137\) before vLLM was ready'
done

# 8. Bad cases.
"$bin" run --no-history -- /bin/echo hello > "$tmp/echo.out" 2> "$tmp/echo.err"; check "not vLLM: runs" 0 $?
check "not vLLM: output" hello "$(cat "$tmp/echo.out")"
contains "not vLLM: warned" "$tmp/echo.err" "^headroom: warning: '/bin/echo' is not a vLLM command: running it without a prediction \(--strict refuses\)$"
"$bin" run --no-history --strict -- /bin/echo hello > "$tmp/strict.out" 2> "$tmp/strict.err"; check "--strict refuses" 2 $?
check "--strict: nothing ran" "" "$(cat "$tmp/strict.out")"
"$bin" run --no-history --no-check -- "$tmp/no/such/vllm" serve x > /dev/null 2> "$tmp/nf.err"; check "no such executable: 127" 127 $?
check "no such executable: message" "headroom: error: cannot run $tmp/no/such/vllm: no such executable" "$(cat "$tmp/nf.err")"
"$bin" run --no-history --no-check -- vllm-missing-xyz serve x > /dev/null 2> "$tmp/nf2.err"; check "not on PATH: 127" 127 $?
contains "not on PATH: message" "$tmp/nf2.err" '^headroom: error: cannot run vllm-missing-xyz: no such executable on PATH$'
touch "$tmp/not-exec"
"$bin" run --no-history -- "$tmp/not-exec" > /dev/null 2> "$tmp/ne.err"; check "not executable: 126" 126 $?

scenario '[{"then": "binary", "exit_code": 1}]'
"$bin" run --no-history --no-check -- vllm serve x > "$tmp/bin.out" 2> "$tmp/bin.err"; check "binary output: vLLM's status" 1 $?
check "binary output passed through byte for byte" 16384 "$(wc -c < "$tmp/bin.out")"
contains "binary output: said plainly" "$tmp/bin.err" 'its output could not be diagnosed: '
scenario '[{"then": "long_line", "exit_code": 0}]'
"$bin" run --no-history --no-check -- vllm serve x > "$tmp/long.out" 2> "$tmp/long.err"; check "100 MB line: vLLM's status" 0 $?
check "100 MB line passed through whole" $((100 * 1048576 + 1)) "$(wc -c < "$tmp/long.out")"
contains "100 MB line: said plainly" "$tmp/long.err" '^headroom: 1 output lines longer than 65,536 bytes were passed on whole but read only in part$'

head -3 "$logs/v1_startup_ok.log" > "$tmp/numberless.log"
scenario '[{"log": "'"$tmp"'/numberless.log", "then": "exit", "exit_code": 1}]'
rm -f "$HEADROOM_DB"
"$bin" run --no-check -- vllm serve codellama/CodeLlama-7b-hf > /dev/null 2> "$tmp/nonum.err"; check "no startup numbers: vLLM's status" 1 $?
contains "no startup numbers: said plainly" "$tmp/nonum.err" '^headroom: the command exited with status 1 before vLLM was ready; its output names no failure headroom knows; recorded as run #1$'

head -c 8192 /dev/urandom > "$tmp/corrupt.db"; cp "$tmp/corrupt.db" "$tmp/corrupt.orig"
scenario '[{"log": "'"$logs"'/v1_startup_ok.log", "line_delay": 0, "then": "serve", "serve_seconds": 0.1}]'
"$bin" run --db "$tmp/corrupt.db" $gpu -- vllm serve $codellama > /dev/null 2> "$tmp/baddb.err"; check "unopenable history: launched anyway" 0 $?
check "unopenable history: said once" 1 "$(grep -c 'cannot open the run history' "$tmp/baddb.err")"
contains "unopenable history: the warning" "$tmp/baddb.err" "^headroom: warning: cannot open the run history at $tmp/corrupt.db: .*; launching anyway, nothing will be recorded$"
cmp -s "$tmp/corrupt.db" "$tmp/corrupt.orig"; check "unopenable history: untouched" 0 $?

# 9. Containers: check reads `docker run ... vllm/vllm-openai ... ARGS` as the vllm serve it runs; run launches it unchanged.
docker_cmd="docker run --gpus all -p 8000:8000 -v /models:/models -e VLLM_USE_V1=1 --ipc=host vllm/vllm-openai:latest --model $codellama"
"$bin" check $gpu -- $docker_cmd > "$tmp/docker.txt"; check "check -- docker run exits 0" 0 $?
"$bin" check $gpu -- vllm serve $codellama > "$tmp/serve.txt"
diff "$tmp/serve.txt" "$tmp/docker.txt" > /dev/null; check "docker run predicted as vllm serve" 0 $?
scenario '[{"log": "'"$logs"'/v1_startup_ok.log", "line_delay": 0, "then": "serve", "serve_seconds": 0.1}]'
"$bin" run --no-history $gpu -- $docker_cmd > /dev/null 2> "$tmp/docker.err"; check "run -- docker run exits 0" 0 $?
check "docker launched with its arguments unchanged" "${docker_cmd#docker }" "$(cat "$tmp/argv.log")"

# 10. Two runs recording at once into one SQLite history lose nothing.
rm -f "$HEADROOM_DB"
scenario '[{"log": "'"$logs"'/v1_startup_ok.log", "line_delay": 0.005, "then": "serve", "serve_seconds": 0.1}]'
"$bin" run $gpu -- vllm serve $codellama > /dev/null 2> "$tmp/c1.err" &
p1=$!
"$bin" run $gpu -- vllm serve $codellama > /dev/null 2> "$tmp/c2.err" &
p2=$!
wait $p1; check "concurrent run 1" 0 $?
wait $p2; check "concurrent run 2" 0 $?
check "both concurrent starts recorded" 2 "$(records)"

exit $fail
