# The harness of the tests/cli/*.sh tests, sourced by each: a scratch folder
# removed on exit, pass/fail counters, and expect/check. The test sets SMX
# (the binary) and prints "$pass passed, $fail failed" at the end.
# A test that leaves SMX and PY unset gets the binary of its first argument, made absolute (the tests cd into
# $tmp), and the Python that has NumPy.
set -u
SMX=${SMX:-$(cd "$(dirname "$1")" && pwd)/$(basename "$1")}
PY=${PY:-/usr/bin/python3}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0
fail=0

# expect NAME EXIT STDOUT STDERR -- ARGS...   (STDOUT/STDERR: exact text, or '*' for any)
expect() {
  local name=$1 code=$2 out=$3 err=$4
  shift 5
  "$SMX" "$@" >"$tmp/out" 2>"$tmp/err"
  local got=$?
  local ok=1
  [ "$got" = "$code" ] || { echo "FAIL $name: exit $got, want $code"; ok=0; }
  if [ "$out" != "*" ] && [ "$(cat "$tmp/out")" != "$out" ]; then echo "FAIL $name: stdout:"; cat "$tmp/out"; ok=0; fi
  if [ "$err" != "*" ] && [ "$(cat "$tmp/err")" != "$err" ]; then echo "FAIL $name: stderr:"; cat "$tmp/err"; ok=0; fi
  if [ $ok = 1 ]; then pass=$((pass + 1)); else fail=$((fail + 1)); fi
}
# numpy_in_tmp [ARGS...] <<'PY' ... PY: the Python script on stdin, run with sys and NumPy (np) imported
# and d the scratch folder (argv[1]; ARGS follow it), the start that every fixture and check shares.
numpy_in_tmp() {
  { printf 'import sys, numpy as np\nd = sys.argv[1]\n'; cat; } | "$PY" - "$tmp" "$@"
}
check() {  # check NAME CONDITION...
  local name=$1
  shift
  if "$@"; then pass=$((pass + 1)); else echo "FAIL $name"; fail=$((fail + 1)); fi
}
