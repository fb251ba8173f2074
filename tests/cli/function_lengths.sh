#!/usr/bin/env bash
# Lists the functions in src/ longer than 120 lines (docs/ARCHITECTURE.md "Functions"; house style:
# a function fits on a screen) with scripts/function_lengths.py. The known ones are listed in
# tests/function_lengths_allowed.txt, which only shrinks (it is empty: every function in src/ fits).
# A function over the limit that the list does not name fails the test;
# HEADROOM_ENFORCE_FUNCTION_LENGTHS=0 only reports it (while a split is in progress on a branch).
set -uo pipefail
src="${HEADROOM_SOURCE_DIR:?}"
cd "$src" || exit 1
out="$(/usr/bin/python3 scripts/function_lengths.py --max 120 --allow tests/function_lengths_allowed.txt src)"
rc=$?
echo "$out"
if [ "$rc" -gt 1 ] || [ -z "$out" ]; then
  echo "FAIL: scripts/function_lengths.py did not run (exit $rc)"
  exit 1
fi
if [ "$rc" -eq 1 ] && [ "${HEADROOM_ENFORCE_FUNCTION_LENGTHS:-1}" = 1 ]; then
  echo "FAIL: a function in src/ is longer than 120 lines: split it into named steps"
  exit 1
fi
