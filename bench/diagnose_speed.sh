#!/usr/bin/env bash
# Speed and memory of `headroom diagnose` on a 1 GB log of realistic vLLM lines, against GNU
# `grep -E -f` over the same patterns (the scanner's full pattern set, converted to ERE), in the
# same run. Peak RSS from /usr/bin/time -v.
#   bench/diagnose_speed.sh [BUILD_DIR] [SIZE_MB]
set -euo pipefail
build="${1:-build}"
size_mb="${2:-1024}"
bin="$build/headroom"
log=/tmp/headroom_bench_${size_mb}mb.log
pat=/tmp/headroom_bench_patterns.ere

if [ ! -s "$log" ]; then
  python3 - "$log" "$size_mb" <<'PY'
import random, sys
path, size = sys.argv[1], int(sys.argv[2]) * 1024 * 1024
random.seed(7)
startup = open(sys.argv[0]).read() if False else None
head = [
 "(APIServer pid=1) INFO 04-22 15:12:01 [utils.py:233] non-default args: {'model': 'meta-llama/Llama-3.1-8B-Instruct', 'max_model_len': 32768, 'gpu_memory_utilization': 0.95}",
 "(EngineCore pid=283) INFO 04-22 15:12:10 [core.py:77] Initializing a V1 LLM engine (v0.19.0) with config: model='meta-llama/Llama-3.1-8B-Instruct', dtype=torch.bfloat16, max_seq_len=32768, tensor_parallel_size=1, quantization=None, enforce_eager=False, kv_cache_dtype=auto",
 "(EngineCore pid=283) INFO 04-22 15:13:03 [v1/worker/gpu_model_runner.py:4820] Model loading took 14.99 GiB memory and 7.0 seconds",
 "(EngineCore pid=283) INFO 04-22 15:13:20 [v1/worker/gpu_worker.py:436] Available KV cache memory: 58.11 GiB",
 "(EngineCore pid=283) INFO 04-22 15:13:20 [v1/core/kv_cache_utils.py:1319] GPU KV cache size: 476,016 tokens",
 "(EngineCore pid=283) INFO 04-22 15:13:24 [v1/worker/gpu_model_runner.py:6046] Graph capturing finished in 3 secs, took 0.91 GiB",
 "(APIServer pid=1) INFO 04-22 15:13:30 [launcher.py:44] Application startup complete.",
]
body = [
 '(APIServer pid=1) INFO:     10.0.{a}.{b}:{p} - "POST /v1/chat/completions HTTP/1.1" 200 OK',
 '(APIServer pid=1) INFO 04-22 16:{m:02d}:{s:02d} [loggers.py:123] Engine 000: Avg prompt throughput: {x:.1f} tokens/s, Avg generation throughput: {y:.1f} tokens/s, Running: {r} reqs, Waiting: 0 reqs, GPU KV cache usage: {u:.1f}%, Prefix cache hit rate: {h:.1f}%',
 '(APIServer pid=1) DEBUG 04-22 16:{m:02d}:{s:02d} [async_llm.py:400] Request chatcmpl-{id:032x} finished, prompt tokens {p}, output tokens {r}',
 '(APIServer pid=1) INFO 04-22 16:{m:02d}:{s:02d} [logger.py:41] Received request chatcmpl-{id:032x}: prompt: \'<|begin_of_text|><|start_header_id|>user<|end_header_id|> Summarise the quarterly report for region {a} and list the top {b} risks.\', params: SamplingParams(n=1, temperature=0.7, top_p=0.95, max_tokens={p}), lora_request: None.',
 '(EngineCore pid=283) DEBUG 04-22 16:{m:02d}:{s:02d} [core.py:800] EngineCore loop active, scheduled {r} requests, {p} tokens',
]
tail = [
 "(EngineCore pid=283) ERROR 04-22 17:00:00 [core.py:700] Traceback (most recent call last):",
 "(EngineCore pid=283) ERROR 04-22 17:00:00 [core.py:700]   File \"/usr/lib/python3.12/site-packages/vllm/v1/worker/gpu_model_runner.py\", line 2000, in execute_model",
 "(EngineCore pid=283) ERROR 04-22 17:00:00 [core.py:700] torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.27 GiB. GPU 0 has a total capacity of 79.19 GiB of which 109.81 MiB is free. Including non-PyTorch memory, this process has 79.06 GiB memory in use. Of the allocated memory 67.68 GiB is allocated by PyTorch, with 76.00 MiB allocated in private pools (e.g., CUDA Graphs), and 1.47 GiB is reserved by PyTorch but unallocated.",
]
written = 0
with open(path, "w") as f:
    for l in head:
        f.write(l + "\n"); written += len(l) + 1
    while written < size:
        buf = []
        for _ in range(2000):
            t = random.choice(body)
            l = t.format(a=random.randint(0,255), b=random.randint(1,254), p=random.randint(1,60000), m=random.randint(0,59),
                         s=random.randint(0,59), x=random.random()*5000, y=random.random()*3000, r=random.randint(1,256),
                         u=random.random()*100, h=random.random()*100, id=random.getrandbits(128))
            buf.append(l)
        chunk = "\n".join(buf) + "\n"
        f.write(chunk); written += len(chunk)
    for l in tail:
        f.write(l + "\n")
PY
fi

# The scanner's patterns as POSIX ERE for GNU grep: named and non-capturing groups become plain
# groups, \d becomes [0-9].
"$bin" kb patterns | sed -E 's/\(\?P<[a-z_]+>/(/g; s/\(\?:/(/g; s/\(\?i\)//g; s/\\d/[0-9]/g' > "$pat"
echo "log: $log ($(du -m "$log" | cut -f1) MiB, $(wc -l < "$log") lines); patterns: $(wc -l < "$pat")"

measure() {  # name, command...
  local name=$1; shift
  sync; cat "$log" > /dev/null  # same page-cache state for both
  /usr/bin/time -v "$@" > /tmp/headroom_bench_out.txt 2> /tmp/headroom_bench_time.txt || true
  local wall rss
  wall=$(grep 'Elapsed (wall clock)' /tmp/headroom_bench_time.txt | awk '{print $NF}')
  rss=$(grep 'Maximum resident set size' /tmp/headroom_bench_time.txt | awk '{print $NF}')
  printf '%-34s wall %-10s peak RSS %6d MiB\n' "$name" "$wall" $((rss / 1024))
}
measure "headroom diagnose" "$bin" diagnose --format json "$log"
python3 -c "import json;d=json.load(open('/tmp/headroom_bench_out.txt'));p=d['primary'];print('  primary:',p['class'],p['phase'],'line',p['line'])"
measure "grep -E -f (same patterns)" grep -E -c -f "$pat" "$log"
echo "  grep matching lines: $(cat /tmp/headroom_bench_out.txt)"
