# Starting and stopping `headroom serve` in the serve tests, sourced after $bin and $tmp are set.
# start_server NAME ARGS...: starts a server on a free loopback port (--port 0), waits for its
# "listening on" line and sets ${NAME}_port, ${NAME}_pid and ${NAME}_url; its stderr is $tmp/NAME.log.
start_server() {
  local name="$1"
  shift
  "$bin" serve --port 0 "$@" 2> "$tmp/$name.log" &
  local pid=$!
  local port=""
  for _ in $(seq 1 100); do
    port=$(sed -n 's|^headroom serve: listening on http://[^ ]*:\([0-9]*\) .*|\1|p' "$tmp/$name.log" | head -1)
    [ -n "$port" ] && break
    kill -0 "$pid" 2> /dev/null || break
    sleep 0.05
  done
  if [ -z "$port" ]; then
    echo "FAIL: $name did not start: $(cat "$tmp/$name.log")"
    exit 1
  fi
  printf -v "${name}_port" '%s' "$port"
  printf -v "${name}_pid" '%s' "$pid"
  printf -v "${name}_url" 'http://127.0.0.1:%s' "$port"
  servers+=("$pid")
}

stop_servers() {
  for pid in "${servers[@]:-}"; do
    [ -n "$pid" ] && kill "$pid" 2> /dev/null && wait "$pid" 2> /dev/null
  done
  servers=()
}

# http METHOD URL [curl args...]: prints "STATUS" on the first line and the body after it.
http() {
  local method="$1" url="$2"
  shift 2
  curl -s -o "$tmp/body" -w '%{http_code}\n' -X "$method" "$@" "$url"
  cat "$tmp/body"
}

# The value at a JSON path ("error.code", "gpu.used", "records.0.id") of a document on stdin.
json_get() {
  python3 -c '
import json, sys
v = json.load(sys.stdin)
for k in sys.argv[1].split("."):
    v = v[int(k)] if isinstance(v, list) else v[k]
print(json.dumps(v) if isinstance(v, (dict, list)) else v)' "$1"
}
