#!/usr/bin/env bash
# The headroom binary loads only what a command uses: libcurl, libpqxx/libpq and cpp-httplib with
# OpenSSL are not among the libraries it starts with (they live in headroom_curl.so,
# headroom_postgres.so and headroom-serve beside it), `serve` runs through headroom-serve, and the
# Hub is reached through the plugin.
set -uo pipefail
bin="${HEADROOM_BIN:?}"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
dir="$(dirname "$bin")"

# What the dynamic loader maps for --help, and for an offline check from the catalogue.
for args in "--help" "check meta-llama/Llama-3.1-8B-Instruct --gpu H100 --offline"; do
  # shellcheck disable=SC2086
  LD_DEBUG=files "$bin" $args >/dev/null 2>"$tmp/ld.txt" || fail "'$args' failed: $(tail -3 "$tmp/ld.txt")"
  for lib in libcurl libpq libpqxx libcpp-httplib libssl libcrypto libgnutls libldap libhs libre2 libsqlite3 libyaml-cpp; do
    grep -q "file=$lib[.-]" "$tmp/ld.txt" && fail "'$args' loads $lib"
  done
done

for part in headroom-serve headroom_curl.so headroom_postgres.so; do
  [ -e "$dir/$part" ] || fail "$part is not beside $bin"
done

# serve goes through headroom-serve: its help, and its errors, come from there.
"$bin" serve --help >"$tmp/serve_help.out" 2>&1 || fail "serve --help failed: $(cat "$tmp/serve_help.out")"
grep -q -- "--port" "$tmp/serve_help.out" || fail "serve --help: no --port in: $(head -5 "$tmp/serve_help.out")"
"$bin" help serve >"$tmp/help_serve.out" 2>&1 || fail "help serve failed"
cmp -s "$tmp/serve_help.out" "$tmp/help_serve.out" || fail "help serve differs from serve --help"

# A binary copied away from its optional parts says what is missing for serve.
cp "$bin" "$tmp/headroom"
"$tmp/headroom" serve --port 0 >"$tmp/lone.out" 2>"$tmp/lone.err"
rc=$?
[ "$rc" -eq 1 ] || fail "serve without headroom-serve: exit $rc, expected 1"
grep -q "headroom: error: cannot start $tmp/headroom-serve: No such file or directory" "$tmp/lone.err" ||
  fail "serve without headroom-serve: $(cat "$tmp/lone.err")"

# The Hub through headroom_curl.so: a Hub address that refuses connections is a note, and the
# catalogue answers (the loopback Hub tests cover real transfers).
HF_HUB_OFFLINE=0 HF_ENDPOINT=http://127.0.0.1:1 XDG_CACHE_HOME="$tmp/cache" LD_DEBUG=files "$bin" check meta-llama/Llama-3.1-8B-Instruct --gpu H100 \
  >"$tmp/hub.out" 2>"$tmp/hub.err" || fail "check with an unreachable Hub failed: $(grep -v '^ *[0-9]*:' "$tmp/hub.err" | tail -3)"
grep -q "file=.*headroom_curl.so" "$tmp/hub.err" || fail "check with the Hub asked did not load headroom_curl.so"
grep -q "no network: cannot reach the Hub" "$tmp/hub.err" || fail "check with an unreachable Hub: $(grep -v '^ *[0-9]*:' "$tmp/hub.err" | tail -3)"
grep -q "built-in catalogue" "$tmp/hub.out" || fail "check with an unreachable Hub did not use the catalogue"

if [ "$failures" -ne 0 ]; then
  echo "$failures failure(s)"
  exit 1
fi
echo "all optional-parts checks passed"
