#!/usr/bin/env bash
# `headroom serve` against hostile clients on loopback (tests/cli/hostile/client.py): long strings
# in every field, huge sizes, slowloris and silent connections, one client with too many
# connections, header floods, a FIFO as config.json, escape sequences, and all of it at once mixed
# with normal requests. Normal requests keep answering within the client's stated latency, the
# server's RSS stays under its bound, and the server never exits. docs/serve.md has the figures.
set -uo pipefail
bin="${HEADROOM_BIN:?}"
tmp="$(mktemp -d)"
servers=()
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
source "$(dirname "${BASH_SOURCE[0]}")/lib/serve.sh"
fifo_writer=""
trap 'stop_servers; [ -n "$fifo_writer" ] && kill "$fifo_writer" 2>/dev/null; rm -rf "$tmp"' EXIT
export NO_COLOR=1 HF_HUB_CACHE="$tmp/hf" HEADROOM_NVML_LIBRARY=/nonexistent/libnvidia-ml.so.1 \
  HEADROOM_NVIDIA_SMI=/nonexistent/nvidia-smi HEADROOM_DB="$tmp/no-history.db"

# Under AddressSanitizer (the sanitizer half of scripts/test.sh) a server's memory is not a release
# build's: freed memory waits in ASan's quarantine (256 MiB by default) and every allocation carries
# redzones, so there the bound on the server's RSS is 1 GiB instead of 400 MiB (the six diagnose
# uploads alone took it from 110 to 420 MiB under ASan; 28 MiB in a release build).
export HEADROOM_HOSTILE_RSS_MIB=400
if [ -n "$(nm -D "$bin" 2>/dev/null | grep " __asan_init")" ]; then HEADROOM_HOSTILE_RSS_MIB=1024; fi

mkdir -p "$tmp/models/fifo"
mkfifo "$tmp/models/fifo/config.json"
start_server h --threads 4 --max-connections 96 --max-client-connections 16 --read-timeout 2 --request-timeout 4 \
  --models-dir "$tmp/models" --offline
"$py" "$(dirname "${BASH_SOURCE[0]}")/hostile/client.py" "$h_port" "$h_pid" "$tmp/models" || fail "hostile clients (above)"
kill -0 "$h_pid" 2>/dev/null || fail "the server exited: $(tail -5 "$tmp/h.log")"
if LC_ALL=C grep -q "$(printf '[\033\007]')" "$tmp/h.log"; then fail "a control character reached the server's log"; fi

# `check` given a FIFO as its config.json refuses it at once instead of waiting for a writer.
start=$(date +%s)
err=$(timeout 10 "$bin" check "$tmp/models/fifo/config.json" --gpu H100 2>&1 >/dev/null)
rc=$?
[ "$rc" -ne 124 ] || fail "check blocked on a FIFO config.json"
[ $(( $(date +%s) - start )) -lt 5 ] || fail "check took $(( $(date +%s) - start )) s on a FIFO"
case "$err" in *"expected a regular file, found a FIFO (named pipe)"*) ;; *) fail "check on a FIFO: '$err' (exit $rc)" ;; esac

[ $failures -eq 0 ] && echo "serve_hostile: all passed"
exit $((failures > 0))
