#!/bin/bash
# smx sparsemax, entmax15, entmax --alpha A: against the Python module (itself
# checked against sort-based oracles in tests/python/test_sparse.py), from .npy,
# CSV and stdin, along another axis, with the refusals.
# Usage: tests/cli/sparse_test.sh SMX_BINARY
SMX=$1
. "$(dirname "$0")/lib.sh"

numpy_in_tmp <<'PY'
x = np.random.default_rng(5).standard_normal((6, 33)) * 2
x[0, :3] = [-np.inf, 0.5, -np.inf]
x[1, :2] = [np.inf, np.inf]
np.save(d + "/x64.npy", x)
np.save(d + "/x32.npy", x.astype(np.float32))
np.save(d + "/x16.npy", x.astype(np.float16))
np.savetxt(d + "/x.csv", x[2:], delimiter=",")
PY

expect "sparsemax f64" 0 "" "" -- sparsemax "$tmp/x64.npy" -o "$tmp/s64.npy"
expect "sparsemax f32 axis 0" 0 "" "" -- sparsemax "$tmp/x32.npy" -o "$tmp/s32a.npy" -a 0 --threads 2
expect "sparsemax f16" 0 "" "" -- sparsemax "$tmp/x16.npy" -o "$tmp/s16.npy"
expect "entmax15 f32" 0 "" "" -- entmax15 "$tmp/x32.npy" -o "$tmp/e32.npy"
expect "entmax15 csv" 0 "" "" -- entmax15 "$tmp/x.csv" -o "$tmp/ec.csv"
expect "entmax 1.7 f64" 0 "" "" -- entmax "$tmp/x64.npy" -o "$tmp/a64.npy" --alpha 1.7
expect "entmax default alpha" 0 "" "" -- entmax "$tmp/x32.npy" -o "$tmp/a32.npy"
"$SMX" sparsemax - -o - --in-format npy --format npy < "$tmp/x32.npy" > "$tmp/ss.npy"
check "stdin to stdout" test $? -eq 0

check "values against smx" env PYTHONPATH="${PYTHONPATH:-}" $PY - "$tmp" <<'PY'
import sys, numpy as np
import smx
d = sys.argv[1]
x = np.load(d + "/x64.npy")
x32 = x.astype(np.float32)
assert np.array_equal(np.load(d + "/s64.npy"), smx.sparsemax(x))
assert np.array_equal(np.load(d + "/s32a.npy"), smx.sparsemax(x32, axis=0))
assert np.array_equal(np.load(d + "/s16.npy"), smx.sparsemax(x.astype(np.float16)))
assert np.array_equal(np.load(d + "/e32.npy"), smx.entmax15(x32))
np.testing.assert_allclose(np.loadtxt(d + "/ec.csv", delimiter=","), smx.entmax15(x[2:]), rtol=0, atol=1e-16)
assert np.array_equal(np.load(d + "/a64.npy"), smx.entmax(x, 1.7))
assert np.array_equal(np.load(d + "/a32.npy"), smx.entmax(x32, 1.5))
assert np.array_equal(np.load(d + "/ss.npy"), smx.sparsemax(x32))
s = np.load(d + "/s64.npy")
assert s[0, 0] == 0 and s[0, 2] == 0 and s[1, 0] == 0.5 and s[1, 1] == 0.5
assert np.allclose(s.sum(-1), 1)
PY

expect "alpha 1 refused" 1 "" "*" -- entmax "$tmp/x32.npy" -o "$tmp/bad.npy" --alpha 1
expect "alpha on sparsemax" 1 "" "*" -- sparsemax "$tmp/x32.npy" -o "$tmp/bad.npy" --alpha 1.5
expect "temperature refused" 1 "" "*" -- sparsemax "$tmp/x32.npy" -o "$tmp/bad.npy" -t 2
check "nothing written on a refusal" test ! -e "$tmp/bad.npy"
for c in sparsemax entmax15 entmax; do
  check "help $c" sh -c "'$SMX' $c --help | grep -q 'usage: smx $c'"
done

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
