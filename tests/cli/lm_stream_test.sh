#!/bin/bash
# smx topk, sample, xent and score through the streaming engine: any axis, C and
# Fortran order, CSV/TSV input and output, stdin and stdout, and every
# engine mode (small SMX_CLI_BLOCK_BYTES), against NumPy.
# Usage: tests/cli/lm_stream_test.sh SMX_BINARY
SMX=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
. "$(dirname "$0")/lib.sh"
cd "$tmp" || exit 1

$PY - <<'PY' || { echo "FAIL: NumPy fixtures"; exit 1; }
import numpy as np
rng = np.random.default_rng(11)
x = (2 * rng.standard_normal((3, 7, 5))).astype(np.float32)   # (batch, classes, positions)
np.save('x3.npy', x)
np.save('x3f.npy', np.asfortranarray(x))
np.save('x3t.npy', np.ascontiguousarray(np.moveaxis(x, 1, -1)))  # the same rows on the last axis
m = (2 * rng.standard_normal((6, 9))).astype(np.float32)
np.save('m.npy', m)
np.savetxt('m.csv', m.astype(np.float64), delimiter=',', fmt='%.17g')
np.savetxt('m.tsv', m.astype(np.float64), delimiter='\t', fmt='%.17g')
np.save('mT.npy', np.ascontiguousarray(m.T))
t = rng.integers(0, 7, (3, 5))
t[1, 2] = -100
np.save('t35.npy', t)
np.save('t35f.npy', np.asfortranarray(t))
tm = rng.integers(0, 9, 6)
np.save('tm.npy', tm)
np.savetxt('tm.csv', tm, fmt='%d')
np.savetxt('thalf.csv', np.array([0.5, 1, 2, 3, 4, 5]))
PY

# --- topk: the axis replaced by K
expect "topk --axis 1" 0 "" "" -- topk x3.npy -k 3 --axis 1 -o v.npy --indices i.npy
expect "topk Fortran input" 0 "" "" -- topk x3f.npy -k 3 -a 1 -o vf.npy --indices if.npy
SMX_CLI_BLOCK_BYTES=64 expect "topk, column blocks" 0 "" "" -- topk x3.npy -k 3 -a 1 -o vb.npy --indices ib.npy
SMX_CLI_BLOCK_BYTES=512 expect "topk, slabs" 0 "" "" -- topk x3.npy -k 3 -a 1 -o vs.npy --indices is.npy
expect "topk CSV from stdin to CSV stdout" 0 "*" "" -- topk - --in-format csv -k 2 -o - < m.csv
cp out topk_stdout.csv
expect "topk TSV in, TSV values and CSV indices" 0 "" "" -- topk m.tsv -k 4 --log -o v.tsv --indices i.csv
expect "topk --axis 0 of the transpose" 0 "" "" -- topk mT.npy -k 4 --log -a 0 -o vT.npy --indices iT.npy
expect "topk axis out of range" 1 "" "smx: --axis 3 is out of range for x3.npy, which has 3 dimensions
smx: try 'smx topk --help'" -- topk x3.npy -k 1 -a 3 -o no.npy
expect "topk k > axis" 4 "" "smx: x3.npy: -k 6 is more than the 5 entries of a row" -- topk x3.npy -k 6 -o no.npy
check "topk errors write nothing" test ! -e no.npy
check "topk against NumPy" $PY - <<'PY'
import numpy as np
x = np.load('x3.npy').astype(np.float64)
p = np.exp(x - x.max(axis=1, keepdims=True)); p /= p.sum(axis=1, keepdims=True)
idx = np.argsort(-p, axis=1, kind='stable')[:, :3, :]
val = np.take_along_axis(p, idx, axis=1)
ok = True
for v, i in (('v', 'i'), ('vf', 'if'), ('vb', 'ib'), ('vs', 'is')):
    gv, gi = np.load(v + '.npy'), np.load(i + '.npy')
    ok &= gv.dtype == np.float32 and gi.dtype == np.int64 and gv.shape == (3, 3, 5)
    ok &= np.array_equal(gi, idx) and np.allclose(gv, val, rtol=1e-5, atol=0)
ok &= np.load('vf.npy').flags.f_contiguous   # the output keeps the input's order
m = np.load('m.npy').astype(np.float64)
lp = m - m.max(axis=1, keepdims=True); lp -= np.log(np.exp(lp).sum(axis=1, keepdims=True))
i4 = np.argsort(-lp, axis=1, kind='stable')[:, :4]
ok &= np.array_equal(np.loadtxt('i.csv', delimiter=',').astype(np.int64), i4)
ok &= np.allclose(np.loadtxt('v.tsv', delimiter='\t'), np.take_along_axis(lp, i4, axis=1), rtol=1e-5, atol=1e-6)
ok &= np.array_equal(np.load('iT.npy'), i4.T) and np.allclose(np.load('vT.npy'), np.take_along_axis(lp, i4, axis=1).T, rtol=1e-5, atol=1e-6)
p2 = np.exp(m - m.max(axis=1, keepdims=True)); p2 /= p2.sum(axis=1, keepdims=True)
ok &= np.allclose(np.loadtxt('topk_stdout.csv', delimiter=','), -np.sort(-p2, axis=1)[:, :2], rtol=1e-5)
raise SystemExit(0 if ok else 1)
PY

# --- sample: the axis removed; rows numbered in C order of the rest
expect "sample last axis" 0 "" "" -- sample x3t.npy --seed 9 --top-p 0.9 -o s_last.npy
expect "sample --axis 1" 0 "" "" -- sample x3.npy --seed 9 --top-p 0.9 -a 1 -o s_ax.npy
expect "sample Fortran --axis 1" 0 "" "" -- sample x3f.npy --seed 9 --top-p 0.9 -a 1 -o s_f.npy
SMX_CLI_BLOCK_BYTES=64 expect "sample, column blocks" 0 "" "" -- sample x3.npy --seed 9 --top-p 0.9 -a 1 -o s_b.npy
check "sample: the same tokens for any axis, order and block" $PY - <<'PY'
import numpy as np
a = np.load('s_last.npy')
ok = a.dtype == np.int64 and a.shape == (3, 5)
for f in ('s_ax', 's_f', 's_b'):
    ok &= np.array_equal(np.load(f + '.npy'), a)
raise SystemExit(0 if ok else 1)
PY
expect "sample greedy, CSV stdin to stdout" 0 "*" "" -- sample - --in-format csv --greedy -o - < m.csv
cp out greedy.csv
expect "sample greedy --axis 0 to TSV" 0 "" "" -- sample mT.npy --greedy -a 0 -o g.tsv
check "sample greedy is the argmax" $PY - <<'PY'
import numpy as np
m = np.load('m.npy')
want = m.argmax(axis=1)
ok = np.array_equal(np.loadtxt('greedy.csv', dtype=np.int64), want)
ok &= np.array_equal(np.loadtxt('g.tsv', dtype=np.int64), want)
raise SystemExit(0 if ok else 1)
PY

# --- xent: the class axis anywhere (PyTorch's (N, C, d1...) with --axis 1)
expect "xent --axis 1, none" 0 "" "" -- xent x3.npy --targets t35.npy -a 1 --reduction none -o l.npy --grad g.npy
expect "xent Fortran logits and targets" 0 "" "" -- xent x3f.npy --targets t35f.npy -a 1 --reduction none -o lf.npy --grad gf.npy
SMX_CLI_BLOCK_BYTES=64 expect "xent, column blocks" 0 "" "" -- xent x3.npy --targets t35.npy -a 1 --reduction none -o lb.npy --grad gb.npy
expect "xent --axis 1, mean printed" 0 "*" "" -- xent x3.npy --targets t35.npy -a 1 --label-smoothing 0.1
cp out mean.txt
expect "xent CSV logits on stdin, CSV targets, sum to CSV" 0 "" "" -- xent - --in-format csv --targets tm.csv --reduction sum -o sum.csv < m.csv
expect "xent TSV grad" 0 "" "" -- xent m.npy --targets tm.npy -o mloss.npy --grad mg.tsv
expect "xent CSV target not whole" 2 "" "smx: thalf.csv: target 0.5 of row 0 is not a whole number" -- xent m.npy --targets thalf.csv
check "xent against NumPy" $PY - <<'PY'
import numpy as np
def ref(x, t, eps=0.0):
    x = x.astype(np.float64)
    lse = np.log(np.exp(x - x.max(-1, keepdims=True)).sum(-1)) + x.max(-1)
    tt = np.where(t == -100, 0, t)
    nll = lse - np.take_along_axis(x, tt[..., None], -1)[..., 0]
    smooth = lse - x.mean(-1)
    loss = np.where(t == -100, 0.0, (1 - eps) * nll + eps * smooth)
    p = np.exp(x - lse[..., None])
    oh = np.zeros_like(x); np.put_along_axis(oh, tt[..., None], 1.0, -1)
    grad = np.where((t == -100)[..., None], 0.0, p - oh)
    return loss, grad, (t != -100).sum()
x = np.moveaxis(np.load('x3.npy'), 1, -1)
t = np.load('t35.npy')
loss, grad, cnt = ref(x, t)
ok = True
for l, g in (('l', 'g'), ('lf', 'gf'), ('lb', 'gb')):
    gl, gg = np.load(l + '.npy'), np.load(g + '.npy')
    ok &= gl.shape == (3, 5) and gg.shape == (3, 7, 5)
    ok &= np.allclose(gl, loss, rtol=1e-5, atol=1e-6) and np.allclose(np.moveaxis(gg, 1, -1), grad, rtol=1e-4, atol=1e-6)
l2, _, cnt = ref(x, t, 0.1)
ok &= abs(float(open('mean.txt').read()) - l2.sum() / cnt) < 1e-5
m = np.load('m.npy'); tm = np.load('tm.npy')
lm, gm, c = ref(m, tm)
ok &= abs(np.loadtxt('sum.csv') - lm.sum()) < 1e-4
ok &= abs(float(np.load('mloss.npy')) - lm.mean()) < 1e-5
ok &= np.allclose(np.loadtxt('mg.tsv', delimiter='\t'), gm / c, rtol=1e-4, atol=1e-6)
raise SystemExit(0 if ok else 1)
PY

# --- score: the class axis removed
expect "score msp last axis" 0 "" "" -- score msp x3t.npy -o sc_last.npy
expect "score msp --axis 1" 0 "" "" -- score msp x3.npy -a 1 -o sc_ax.npy
expect "score msp Fortran --axis 1" 0 "" "" -- score msp x3f.npy -a 1 -o sc_f.npy
SMX_CLI_BLOCK_BYTES=64 expect "score, column blocks" 0 "" "" -- score msp x3.npy -a 1 -o sc_b.npy
expect "score energy, CSV stdin to stdout" 0 "*" "" -- score energy - --in-format csv -o - < m.csv
cp out energy.csv
expect "score 1-d" 2 "" "smx: tm.npy: logits must have shape (N, K) with K >= 1 classes; this array has one axis" -- \
  score msp tm.npy -o no.npy
check "score against NumPy" $PY - <<'PY'
import numpy as np
x = np.moveaxis(np.load('x3.npy'), 1, -1).astype(np.float64)
p = np.exp(x - x.max(-1, keepdims=True)); p /= p.sum(-1, keepdims=True)
ok = True
for f in ('sc_last', 'sc_ax', 'sc_f', 'sc_b'):
    g = np.load(f + '.npy')
    ok &= g.dtype == np.float64 and g.shape == (3, 5) and np.allclose(g, p.max(-1), rtol=1e-5)
m = np.load('m.npy').astype(np.float64)
lse = np.log(np.exp(m - m.max(1, keepdims=True)).sum(1)) + m.max(1)
ok &= np.allclose(np.loadtxt('energy.csv'), lse, rtol=1e-5)
raise SystemExit(0 if ok else 1)
PY

echo "lm_stream_test: $pass passed, $fail failed"
[ $fail = 0 ]
