#!/bin/bash
# smx xent: exact stdout, stderr and exit code for good and bad invocations,
# no output file left behind on error, and the numbers against a NumPy
# reference in double (tests/python/test_xent_torch.py compares with PyTorch).
# Usage: tests/cli/lm_xent_test.sh SMX_BINARY
SMX=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
. "$(dirname "$0")/lib.sh"

cd "$tmp" || exit 1
$PY - <<'PY' || { echo "FAIL: NumPy fixtures"; exit 1; }
import numpy as np
np.save('x.npy', np.array([[1, 2, 3], [1, 2, 3]], dtype=np.float32))
np.save('t.npy', np.array([2, -100], dtype=np.int64))
np.save('t32.npy', np.array([0, 1], dtype=np.int32))
np.save('tbad.npy', np.array([0, 3], dtype=np.int64))
np.save('tneg.npy', np.array([-1, 0], dtype=np.int16))
np.save('tf.npy', np.array([0.0, 1.0]))
np.save('t3.npy', np.array([0, 1, 2], dtype=np.int64))
np.save('tall.npy', np.array([-100, -100], dtype=np.int8))
rng = np.random.default_rng(7)
big = (rng.standard_normal((3, 4, 1000)) * 3).astype(np.float32)
big[0, 1, 5] = -np.inf
np.save('big.npy', big)
tb = rng.integers(0, 1000, (3, 4))
tb[1, 2] = -100
tb[0, 1] = 7
np.save('tb.npy', tb)
np.save('big16.npy', big.astype(np.float16))
PY

expect "mean printed" 0 "0.407605976" "" -- xent x.npy --targets t.npy
expect "sum, int32, smoothing" 0 "3.71521187" "" -- xent x.npy --targets t32.npy --reduction sum --label-smoothing 0.1
expect "ignore index 0" 0 "1.40760601" "" -- xent x.npy --targets t32.npy --ignore-index 0 --reduction sum --threads 2
expect "all ignored: mean is nan (PyTorch)" 0 "nan" "" -- xent x.npy --targets tall.npy
expect "no targets" 1 "" "smx: xent needs --targets TARGETS.npy
smx: try 'smx xent --help'" -- xent x.npy
expect "no input" 1 "" "smx: xent needs a logits file (.npy, .csv or .tsv; - for stdin)
smx: try 'smx xent --help'" -- xent
expect "none needs -o" 1 "" "smx: --reduction none needs -o LOSS.npy
smx: try 'smx xent --help'" -- xent x.npy --targets t.npy --reduction none
expect "bad reduction" 1 "" "smx: --reduction must be none, mean or sum, not 'avg'
smx: try 'smx xent --help'" -- xent x.npy --targets t.npy --reduction avg
expect "bad smoothing" 1 "" "smx: --label-smoothing must be a number in [0, 1], not '1.5'
smx: try 'smx xent --help'" -- xent x.npy --targets t.npy --label-smoothing 1.5
expect "bad z-loss" 1 "" "smx: --z-loss must be a number >= 0, not '-1'
smx: try 'smx xent --help'" -- xent x.npy --targets t.npy --z-loss -1
expect "bad ignore index" 1 "" "smx: --ignore-index must be a whole number, not '1.5'
smx: try 'smx xent --help'" -- xent x.npy --targets t.npy --ignore-index 1.5
expect "unknown option" 1 "" "smx: unknown option '--frob' for xent
smx: try 'smx xent --help'" -- xent x.npy --targets t.npy --frob
expect "same output twice" 1 "" "smx: -o and --grad name the same file
smx: try 'smx xent --help'" -- xent x.npy --targets t.npy -o a.npy --grad a.npy
expect "bad target" 2 "" "smx: tbad.npy: target 3 of row 1 is outside [0, 3) and not the ignore index (-100)" -- \
  xent x.npy --targets tbad.npy -o l.npy --grad g.npy
check "bad target: no outputs" test ! -e l.npy -a ! -e g.npy
expect "negative target" 2 "" "smx: tneg.npy: target -1 of row 0 is outside [0, 3) and not the ignore index (-100)" -- \
  xent x.npy --targets tneg.npy
expect "float targets" 2 "" "smx: tf.npy: targets must be integers, not float64" -- xent x.npy --targets tf.npy
expect "target count" 2 "" "smx: t3.npy has 3 targets; the logits have 2 rows" -- xent x.npy --targets t3.npy
expect "missing logits" 2 "" "*" -- xent missing.npy --targets t.npy
check "missing logits: names the file" grep -q "^smx: missing.npy: " err
expect "unwritable grad" 3 "" "*" -- xent x.npy --targets t.npy --grad no/such/dir/g.npy
expect "none with grad" 0 "" "" -- xent x.npy --targets t.npy --reduction none -o l.npy --grad g.npy
expect "none on 3-d logits" 0 "" "" -- xent big.npy --targets tb.npy --reduction none -o lb.npy --grad gb.npy \
  --label-smoothing 0.2 --z-loss 0.001 -t 0.8 --threads 2
expect "mean on 3-d logits" 0 "" "" -- xent big.npy --targets tb.npy -o lm.npy --grad gm.npy
expect "f16 logits" 0 "" "" -- xent big16.npy --targets tb.npy -o l16.npy --grad g16.npy --reduction sum

# the numbers, against NumPy in double
if $PY - <<'PY'
import numpy as np
np.seterr(all='ignore')
bad = 0
def ref(x, t, red, ign=-100, eps=0.0, z=0.0, T=1.0):
    x = x.astype(np.float64).reshape(-1, x.shape[-1]) / T
    t = t.reshape(-1)
    m = x.max(axis=1, keepdims=True)
    lse = (m + np.log(np.exp(x - m).sum(axis=1, keepdims=True)))[:, 0]
    keep = t != ign
    tt = np.where(keep, t, 0)
    V = x.shape[1]
    l = (1 - eps) * (lse - x[np.arange(len(t)), tt])
    if eps > 0: l = l + eps * (lse - x.mean(axis=1))   # terms with a zero coefficient are left out (no 0 * inf)
    if z > 0: l = l + z * lse ** 2
    l = np.where(keep, l, 0.0)
    p = np.exp(x - lse[:, None])
    g = p * (1 + 2 * z * lse)[:, None] - eps / V
    g[np.arange(len(t)), tt] -= (1 - eps)
    g = np.where(keep[:, None], g, 0.0) / T
    if red == 'mean':
        return l.sum() / keep.sum(), g / keep.sum()
    if red == 'sum':
        return l.sum(), g
    return l, g
def close(name, a, b, tol):
    global bad
    a = np.asarray(a, dtype=np.float64); b = np.asarray(b, dtype=np.float64)
    ok = a.shape == b.shape and np.all((a == b) | (np.abs(a - b) <= tol * np.maximum(1, np.abs(b))))
    if not ok:
        print("FAIL", name, np.max(np.abs(a - b)) if a.shape == b.shape else (a.shape, b.shape)); bad += 1
x = np.load('x.npy'); t = np.load('t.npy')
l, g = ref(x, t, 'none')
close('small none loss', np.load('l.npy'), l, 1e-6); close('small none grad', np.load('g.npy'), g, 1e-6)
big = np.load('big.npy'); tb = np.load('tb.npy')
l, g = ref(big, tb, 'none', eps=0.2, z=0.001, T=0.8)
close('3-d none loss', np.load('lb.npy'), l.reshape(3, 4), 1e-6); close('3-d none grad', np.load('gb.npy'), g.reshape(big.shape), 1e-6)
l, g = ref(big, tb, 'mean')
assert np.load('lm.npy').shape == ()
close('3-d mean loss', np.load('lm.npy'), l, 1e-6); close('3-d mean grad', np.load('gm.npy'), g.reshape(big.shape), 1e-6)
b16 = np.load('big16.npy'); l, g = ref(b16, tb, 'sum')
g16 = np.load('g16.npy')
if g16.dtype != np.float16: print("FAIL f16 grad dtype", g16.dtype); bad += 1
close('f16 sum loss', np.load('l16.npy'), l, 1e-6); close('f16 sum grad', g16, g.reshape(big.shape), 2 ** -10)
raise SystemExit(1 if bad else 0)
PY
then pass=$((pass + 1)); else echo "FAIL numbers against NumPy"; fail=$((fail + 1)); fi

echo "lm_xent_test: $pass passed, $fail failed"
[ "$fail" = 0 ]
