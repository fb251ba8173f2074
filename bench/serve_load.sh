#!/usr/bin/env bash
# Load on `headroom serve` over loopback with wrk (Debian's wrk): POST /v1/check and POST
# /v1/plan, 2 server threads, 2 connections, each phase bounded in time. Prints requests per
# second, p50/p99 latency, errors (non-2xx and socket errors; must be 0), and the server's RSS
# before and after at least 100k requests (it must stay within the caches' bounds).
#   bench/serve_load.sh [BUILD_DIR]          (default: build)
# Phases: the same check again and again (the response cache answers), checks that all differ
# (each one predicted; the cache fills to its bound and evicts), the same plan, plans that differ.
set -euo pipefail
build="${1:-build}"
bin="$build/headroom"
seconds="${HEADROOM_BENCH_SECONDS:-10}"
command -v wrk > /dev/null || { echo "serve_load: wrk not found (apt-get install wrk)"; exit 1; }
tmp=$(mktemp -d)
export HEADROOM_DB="$tmp/none.db" HF_HUB_CACHE="$tmp/hf" HEADROOM_NVML_LIBRARY=/nonexistent HEADROOM_NVIDIA_SMI=/nonexistent
"$bin" serve --port 0 --threads 2 --no-access-log 2> "$tmp/server.log" &
pid=$!
trap 'kill $pid 2> /dev/null; rm -rf "$tmp"' EXIT
for _ in $(seq 1 100); do
  port=$(sed -n 's|.*listening on http://[^ ]*:\([0-9]*\) .*|\1|p' "$tmp/server.log")
  [ -n "$port" ] && break
  sleep 0.05
done
url="http://127.0.0.1:$port"
rss() { awk '/^VmRSS/ {print $2 / 1024 " MiB"}' "/proc/$pid/status"; }

# One wrk script per phase: a fixed body, or a body that changes with every request.
# same_body NAME JSON: a wrk script that posts JSON with every request.
same_body() {
  printf 'wrk.method = "POST"\nwrk.headers["Content-Type"] = "application/json"\nwrk.body = [[%s]]\n' "$2" > "$tmp/$1.lua"
}
same_body check_same '{"model": "meta-llama/Llama-3.1-8B-Instruct", "gpu": "H100", "vllm_version": "0.19.0", "flags": {"max_model_len": 32768}}'
cat > "$tmp/check_vary.lua" <<'LUA'
local n = 0
request = function()
  n = n + 1
  local body = string.format('{"model": "meta-llama/Llama-3.1-8B-Instruct", "gpu": "H100", "flags": {"max_model_len": %d}}', 1024 + (n * 7919 + (wrk.thread_id or 0)) % 100000)
  return wrk.format("POST", "/v1/check", {["Content-Type"] = "application/json"}, body)
end
LUA
same_body plan_same '{"model": "meta-llama/Llama-3.1-8B-Instruct", "gpu": "L4", "vllm_version": "0.19.0", "context": 4096, "concurrency": 8}'
cat > "$tmp/plan_vary.lua" <<'LUA'
local n = 0
request = function()
  n = n + 1
  local body = string.format('{"model": "meta-llama/Llama-3.1-8B-Instruct", "gpu": "L4", "context": %d, "concurrency": 4}', 1024 + n % 4000)
  return wrk.format("POST", "/v1/plan", {["Content-Type"] = "application/json"}, body)
end
LUA

total=0
echo "headroom serve under wrk: 2 server threads, 2 connections, ${seconds} s per phase, $(nproc) cores"
echo "RSS before: $(rss)"
printf '%-28s %10s %10s %10s %10s %8s\n' phase requests req/s p50 p99 errors
for phase in check_same:/v1/check check_vary:/v1/check plan_same:/v1/plan plan_vary:/v1/plan; do
  name=${phase%%:*}
  path=${phase#*:}
  wrk -t2 -c2 -d"${seconds}s" --latency -s "$tmp/$name.lua" "$url$path" > "$tmp/$name.out" 2>&1
  requests=$(sed -n 's/^ *\([0-9]*\) requests in.*/\1/p' "$tmp/$name.out")
  rate=$(sed -n 's/^Requests\/sec: *\([0-9.]*\)/\1/p' "$tmp/$name.out")
  p50=$(awk '$1 == "50%" {print $2}' "$tmp/$name.out")
  p99=$(awk '$1 == "99%" {print $2}' "$tmp/$name.out")
  non2xx=$(sed -n 's/^ *Non-2xx or 3xx responses: *\([0-9]*\)/\1/p' "$tmp/$name.out")
  sock=$(sed -n 's/^ *Socket errors: connect \([0-9]*\), read \([0-9]*\), write \([0-9]*\), timeout \([0-9]*\)/\1+\2+\3+\4/p' "$tmp/$name.out")
  errors=$(( ${non2xx:-0} + ${sock:-0} ))
  total=$((total + requests))
  printf '%-28s %10s %10s %10s %10s %8s\n' "$name ($path)" "$requests" "$rate" "$p50" "$p99" "$errors"
done
echo "requests in all: $total"
# At least 100k requests before the RSS is read again.
while [ "$total" -lt 100000 ]; do
  wrk -t2 -c2 -d"${seconds}s" -s "$tmp/check_vary.lua" "$url/v1/check" > "$tmp/more.out" 2>&1
  total=$((total + $(sed -n 's/^ *\([0-9]*\) requests in.*/\1/p' "$tmp/more.out")))
done
echo "RSS after $total requests: $(rss)"
curl -s "$url/metrics" | grep -E '^headroom_response_cache_(hits_total|misses_total|entries|bytes) '
