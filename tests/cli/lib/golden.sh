# Assertions shared by the CLI tests, sourced after $tmp, $golden and failures=0 are set. A case
# writes its stdout to $tmp/NAME.out and its stderr to $tmp/NAME.err.

fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

# Compares $tmp/NAME.out with $golden/FILE; HEADROOM_UPDATE_GOLDEN=1 rewrites the golden file.
check_golden() {
  local name="$1" file="$2"
  if [ "${HEADROOM_UPDATE_GOLDEN:-}" = 1 ]; then
    cp "$tmp/$name.out" "$golden/$file"
  elif ! diff -u "$golden/$file" "$tmp/$name.out"; then
    fail "$name: stdout differs from $golden/$file"
  fi
}

# Asserts the exact stderr of a case.
check_stderr() {
  local name="$1" expected="$2"
  local got
  got="$(cat "$tmp/$name.err")"
  [ "$got" = "$expected" ] || fail "$name: stderr was
$got
expected
$expected"
}
