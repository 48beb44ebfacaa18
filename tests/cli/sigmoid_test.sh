#!/bin/bash
# smx sigmoid: elementwise 1 / (1 + exp(-x / T)) against SciPy, in every
# dtype it computes in, from .npy, CSV and stdin, with its refusals.
# Usage: tests/cli/sigmoid_test.sh SMX_BINARY
SMX=$1
. "$(dirname "$0")/lib.sh"

numpy_in_tmp <<'PY'
x = np.random.default_rng(3).standard_normal((6, 33)) * 12
x[0, :4] = [np.nan, np.inf, -np.inf, 0.0]
np.save(d + "/x64.npy", x)
np.save(d + "/x32.npy", x.astype(np.float32))
np.save(d + "/x16.npy", x.astype(np.float16))
np.save(d + "/xi.npy", np.arange(-5, 5, dtype=np.int32).reshape(2, 5))
np.save(d + "/x3.npy", x.astype(np.float32).reshape(3, 2, 33).transpose(2, 0, 1))
np.savetxt(d + "/x.csv", x[1:], delimiter=",")
PY

expect "f64" 0 "" "" -- sigmoid "$tmp/x64.npy" -o "$tmp/y64.npy" -t 0.5
expect "f32" 0 "" "" -- sigmoid "$tmp/x32.npy" -o "$tmp/y32.npy" -t 0.5
expect "f32 to f64" 0 "" "" -- sigmoid "$tmp/x32.npy" -o "$tmp/y32d.npy" -t 0.5 --dtype f64
expect "f16" 0 "" "" -- sigmoid "$tmp/x16.npy" -o "$tmp/y16.npy" -t 0.5
expect "int32" 0 "" "" -- sigmoid "$tmp/xi.npy" -o "$tmp/yi.npy"
expect "3-d Fortran view, axis 0" 0 "" "" -- sigmoid "$tmp/x3.npy" -o "$tmp/y3.npy" -a 0 --threads 2
expect "csv" 0 "" "" -- sigmoid "$tmp/x.csv" -o "$tmp/yc.csv" -t 0.5
"$SMX" sigmoid - -o - --in-format npy --format npy -t 0.5 < "$tmp/x32.npy" > "$tmp/ys.npy"
check "stdin to stdout" test $? -eq 0

check "values against scipy" $PY - "$tmp" <<'PY'
import sys, numpy as np, scipy.special as sp
d = sys.argv[1]
x = np.load(d + "/x64.npy")
def exact(a, t=0.5):
    return sp.expit(np.asarray(a, dtype=np.longdouble) / t)
def close(y, ref, rel, dtype):
    y = np.asarray(y, dtype=np.longdouble)
    nan = np.isnan(ref)
    assert np.array_equal(np.isnan(y), nan)
    tiny = np.finfo(dtype).tiny
    err = np.abs(y[~nan] - ref[~nan])
    assert np.all(err <= rel * ref[~nan] + tiny), float(np.max(err))
y64 = np.load(d + "/y64.npy"); assert y64.dtype == np.float64
close(y64, exact(x), 4e-16, np.float64)
x32 = np.load(d + "/x32.npy")
y32 = np.load(d + "/y32.npy"); assert y32.dtype == np.float32
close(y32, exact(x32), 4e-7, np.float32)
y32d = np.load(d + "/y32d.npy"); assert y32d.dtype == np.float64
close(y32d, exact(x32), 4e-16, np.float64)     # computed with the float64 kernels
x16 = np.load(d + "/x16.npy")
y16 = np.load(d + "/y16.npy"); assert y16.dtype == np.float16
close(y16, exact(x16), 2 ** -11 + 4e-7, np.float16)
yi = np.load(d + "/yi.npy"); assert yi.dtype == np.float32
close(yi, sp.expit(np.arange(-5, 5, dtype=np.longdouble).reshape(2, 5)), 4e-7, np.float32)
x3 = np.load(d + "/x3.npy")
y3 = np.load(d + "/y3.npy"); assert y3.shape == x3.shape and np.isfortran(y3) == np.isfortran(x3)
close(y3, exact(x3, 1.0), 4e-7, np.float32)
yc = np.loadtxt(d + "/yc.csv", delimiter=",")
close(yc, exact(x[1:]), 4e-16, np.float64)
assert np.array_equal(np.load(d + "/ys.npy"), y32, equal_nan=True)
assert y64[0, 1] == 1.0 and y64[0, 2] == 0.0 and y64[0, 3] == 0.5
PY

expect "no output" 1 "" "smx: sigmoid needs -o OUT (.npy, .csv or .tsv; - for stdout)
smx: try 'smx sigmoid --help'" -- sigmoid "$tmp/x32.npy"
expect "bad temperature" 1 "" "*" -- sigmoid "$tmp/x32.npy" -o "$tmp/bad.npy" -t -1
check "nothing written on a refusal" test ! -e "$tmp/bad.npy"
expect "missing input" 2 "" "*" -- sigmoid "$tmp/nope.npy" -o "$tmp/bad.npy"
check "help" sh -c "'$SMX' sigmoid --help | grep -q 'usage: smx sigmoid'"

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
