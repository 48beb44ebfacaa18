#!/bin/bash
# smx multimax: softmax of the MultiMax-modulated scores against NumPy, in
# float64 and float32, along an axis, from .npy and CSV, with its refusals.
# Usage: tests/cli/multimax_test.sh SMX_BINARY
SMX=$1
. "$(dirname "$0")/lib.sh"

numpy_in_tmp <<'PY'
x = np.random.default_rng(5).standard_normal((6, 33)) * 3
x[0, :2] = [-np.inf, -np.inf]
np.save(d + "/x64.npy", x)
np.save(d + "/x32.npy", x.astype(np.float32))
np.save(d + "/x3.npy", x.reshape(3, 2, 33).transpose(2, 0, 1))
np.savetxt(d + "/x.csv", x[1:], delimiter=",")
PY

P="--ranges 0.3,-0.2,1,0.5 --ts 0.7,1.3,-0.4,0.9"
expect "f64" 0 "" "" -- multimax "$tmp/x64.npy" -o "$tmp/y64.npy" $P -t 0.5
expect "f32" 0 "" "" -- multimax "$tmp/x32.npy" -o "$tmp/y32.npy" $P -t 0.5 --threads 2
expect "axis 0" 0 "" "" -- multimax "$tmp/x3.npy" -o "$tmp/y3.npy" $P -a 0
expect "csv" 0 "" "" -- multimax "$tmp/x.csv" -o "$tmp/yc.csv" $P -t 0.5
expect "no parameters" 0 "" "" -- multimax "$tmp/x64.npy" -o "$tmp/y0.npy"

check "values against numpy" numpy_in_tmp <<'PY'
r, t = [0.3, -0.2, 1.0, 0.5], [0.7, 1.3, -0.4, 0.9]
def ref(x, T=1.0, axis=-1, r=r, t=t):
    x = np.asarray(x, dtype=np.float64)
    relu = lambda v: np.maximum(v, 0)
    with np.errstate(invalid="ignore"):
        s = x + t[0] * relu(r[0] - x) + t[1] * relu(x - r[1]) + t[2] * relu(r[2] - x) ** 2 + t[3] * relu(x - r[3]) ** 2
    s = np.where(np.isinf(x), x, s) / T
    e = np.exp(s - s.max(axis, keepdims=True))
    return e / e.sum(axis, keepdims=True)
x = np.load(d + "/x64.npy")
y = np.load(d + "/y64.npy"); assert y.dtype == np.float64
assert np.allclose(y, ref(x, 0.5), rtol=1e-13, atol=1e-300)
y = np.load(d + "/y32.npy"); assert y.dtype == np.float32
# s rounded to float32 moves y_i by up to eps |s_i| / T relatively (|s| / T up to 200 here)
assert np.allclose(y, ref(np.load(d + "/x32.npy"), 0.5), rtol=4e-5, atol=1e-37)
x3 = np.load(d + "/x3.npy")
assert np.allclose(np.load(d + "/y3.npy"), ref(x3, axis=0), rtol=1e-13)
assert np.allclose(np.loadtxt(d + "/yc.csv", delimiter=","), ref(x[1:], 0.5), rtol=1e-13)
e = np.exp(x - x.max(-1, keepdims=True))
assert np.allclose(np.load(d + "/y0.npy"), e / e.sum(-1, keepdims=True), rtol=1e-13)
PY

expect "three ranges" 1 "" "*" -- multimax "$tmp/x64.npy" -o "$tmp/n.npy" --ranges 1,2,3
check "three ranges: message" grep -q "four finite numbers" "$tmp/err"
expect "infinite scale" 1 "" "*" -- multimax "$tmp/x64.npy" -o "$tmp/n.npy" --ts 1,2,3,inf
check "infinite scale: message" grep -q "four finite numbers" "$tmp/err"
expect "no output" 1 "" "*" -- multimax "$tmp/x64.npy"
check "no output: message" grep -q "needs -o" "$tmp/err"
check "refusals write nothing" test ! -e "$tmp/n.npy"
check "help" sh -c "'$SMX' multimax --help | grep -q 'usage: smx multimax'"

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
