#!/bin/bash
# The smx command, in the manner of zstd's cli-tests: exact stdout, stderr and
# exit code for good and bad invocations, no output file left behind on error,
# and the numbers checked against SciPy.
# Usage: tests/cli/cli_test.sh SMX_BINARY DATA_DIR
set -u
SMX=$1
DATA=$2
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
check() {  # check NAME CONDITION...
  local name=$1
  shift
  if "$@"; then pass=$((pass + 1)); else echo "FAIL $name"; fail=$((fail + 1)); fi
}

x="$DATA/f32_c_2d.npy"
expect "version" 0 "smx 0.1.0" "" -- --version
expect "help" 0 "*" "" -- --help
check "help names the exit codes" grep -q "exit codes: 0 ok, 1 usage, 2 bad input" "$tmp/out"
expect "unknown command" 1 "" "smx: unknown command 'frobnicate'
smx: try 'smx --help'" -- frobnicate
expect "no input" 1 "" "smx: softmax needs an input .npy file (or - for stdin)
smx: try 'smx --help'" -- softmax
expect "no output" 1 "" "smx: softmax needs -o OUT.npy (or -o - for stdout)
smx: try 'smx --help'" -- softmax "$x"
expect "bad temperature" 1 "" "smx: --temperature must be a positive finite number, not '-1'
smx: try 'smx --help'" -- softmax "$x" -o "$tmp/o.npy" -t -1
expect "bad algo" 1 "" "smx: --algo must be auto, three-pass, two-pass or online
smx: try 'smx --help'" -- log-softmax "$x" -o "$tmp/o.npy" --algo fast
expect "unknown option" 1 "" "smx: unknown option '--frob' for logsumexp
smx: try 'smx --help'" -- logsumexp "$x" -o "$tmp/o.npy" --frob
expect "other axis" 1 "" "smx: only --axis -1 (the last axis) is supported in this version
smx: try 'smx --help'" -- softmax "$x" -o "$tmp/o.npy" --axis 0
check "no output after usage errors" test ! -e "$tmp/o.npy"

expect "missing input" 2 "" "*" -- softmax "$tmp/missing.npy" -o "$tmp/o.npy"
check "missing input: message names the file" grep -q "^smx: $tmp/missing.npy: " "$tmp/err"
check "missing input: no output" test ! -e "$tmp/o.npy"

# a truncated file must not clobber an existing output
head -c 100 "$x" > "$tmp/trunc.npy"
echo "precious" > "$tmp/keep.npy"
expect "truncated input" 2 "" "*" -- softmax "$tmp/trunc.npy" -o "$tmp/keep.npy"
check "truncated input: message names the file" grep -q "^smx: $tmp/trunc.npy: " "$tmp/err"
check "truncated input: existing output untouched" test "$(cat "$tmp/keep.npy")" = "precious"
check "truncated input: no temporary left" test -z "$(ls -A "$tmp" | grep tmp)"

expect "unwritable output" 3 "" "*" -- softmax "$x" -o "$tmp/no/such/dir/o.npy"

# the numbers, against SciPy in double precision
for f in f32_c_2d f32_fortran_3d f64_be_fortran_2d f16_specials_as_f32 i16_be_3d; do
  expect "softmax $f" 0 "" "*" -- softmax "$DATA/$f.npy" -o "$tmp/sm_$f.npy" -q
  expect "log-softmax $f" 0 "" "" -- log-softmax "$DATA/$f.npy" -o "$tmp/ls_$f.npy" -q -t 0.5
  expect "logsumexp $f" 0 "" "" -- logsumexp "$DATA/$f.npy" -o "$tmp/lse_$f.npy" -q --threads 2
done
expect "stdin to stdout" 0 "*" "" -- softmax - -o - < "$x"
cp "$tmp/out" "$tmp/piped.npy"
check "stdin to stdout equals the file path" cmp -s "$tmp/piped.npy" "$tmp/sm_f32_c_2d.npy"

if /usr/bin/python3 - "$DATA" "$tmp" <<'PY'
import sys, numpy as np
from scipy.special import softmax, log_softmax, logsumexp
data, tmp = sys.argv[1], sys.argv[2]
bad = 0
for f in ["f32_c_2d", "f32_fortran_3d", "f64_be_fortran_2d", "f16_specials_as_f32", "i16_be_3d"]:
    x = np.load(f"{data}/{f}.npy").astype(np.float64)
    x32 = x.astype(np.float32).astype(np.float64)   # smx computes in float32
    sm, ls, lse = (np.load(f"{tmp}/{p}_{f}.npy") for p in ("sm", "ls", "lse"))
    want_dtype = np.load(f"{data}/{f}.npy").dtype
    out_dtype = want_dtype if want_dtype.kind == "f" and want_dtype.itemsize != 4 else np.dtype("float32")
    with np.errstate(all="ignore"):
        r_sm, r_ls, r_lse = softmax(x32, axis=-1), log_softmax(x32 / 0.5, axis=-1), logsumexp(x32, axis=-1)
    for name, got, ref in (("softmax", sm, r_sm), ("log-softmax", ls, r_ls), ("logsumexp", lse, r_lse)):
        ok = got.shape == np.shape(ref) and got.dtype.newbyteorder("=") == out_dtype.newbyteorder("=")
        fin = np.isfinite(ref)
        ok = ok and np.array_equal(np.isnan(got), np.isnan(ref)) and np.array_equal(got[~fin & ~np.isnan(ref)], ref[~fin & ~np.isnan(ref)])
        ok = ok and np.allclose(got[fin], ref[fin], rtol=2e-6, atol=1e-7)
        if not ok:
            print(f"FAIL {f} {name}: shape {got.shape} dtype {got.dtype}, max err {np.nanmax(np.abs(got[fin] - ref[fin])) if fin.any() else 0}")
            bad += 1
sys.exit(1 if bad else 0)
PY
then pass=$((pass + 1)); else fail=$((fail + 1)); fi

echo "cli_test: $pass passed, $fail failed"
[ $fail = 0 ]
