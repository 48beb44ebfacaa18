#!/bin/bash
# `smx topk` and `smx sample`: exact stdout, stderr and exit codes, no output
# left behind on error, exact values where every ISA computes them exactly
# (ties, masks, +inf, NaN), reproducible tokens across thread counts, and the
# numbers of random rows against SciPy.
# Usage: tests/cli/lm_topk_test.sh SMX_BINARY
SMX=$1
. "$(dirname "$0")/lib.sh"
# show FILE: the array as Python prints its list (exact for these values)
show() { $PY -c 'import sys, numpy as np; a = np.load(sys.argv[1]); print(a.dtype, a.shape, a.tolist())' "$1"; }

numpy_in_tmp <<'PY'
inf, nan = np.inf, np.nan
# rows whose answers are exact on every ISA: ties, masks, +inf, NaN, all -inf
np.save(d + "/s.npy", np.array([[-inf, 3, -inf, 3, -inf, -inf],
                                [1, nan, 2, 3, 4, 5],
                                [-inf] * 6,
                                [0, inf, 2, inf, 4, -inf]], dtype=np.float32))
rng = np.random.default_rng(5)
np.save(d + "/r.npy", (3 * rng.standard_normal((3, 4, 1000))).astype(np.float32))
np.save(d + "/h.npy", (2 * rng.standard_normal((7, 300))).astype(np.float16))
PY

s="$tmp/s.npy"
expect "topk values" 0 "" "" -- topk "$s" -k 3 -o "$tmp/v.npy" --indices "$tmp/i.npy"
show "$tmp/v.npy" > "$tmp/got"; echo "float32 (4, 3) [[0.5, 0.5, 0.0], [nan, nan, nan], [0.0, 0.0, 0.0], [0.5, 0.5, 0.0]]" > "$tmp/want"
check "topk values exact" cmp -s "$tmp/got" "$tmp/want"
show "$tmp/i.npy" > "$tmp/got"; echo "int64 (4, 3) [[1, 3, 0], [-1, -1, -1], [0, 1, 2], [1, 3, 4]]" > "$tmp/want"
check "topk indices exact (ties: lowest index; NaN row: -1)" cmp -s "$tmp/got" "$tmp/want"
expect "topk --log" 0 "" "" -- topk "$s" -k 2 -o "$tmp/l.npy" --log --masked-row nan
show "$tmp/l.npy" > "$tmp/got"; echo "float32 (4, 2) [[-0.6931471824645996, -0.6931471824645996], [nan, nan], [nan, nan], [-0.6931471824645996, -0.6931471824645996]]" > "$tmp/want"
check "topk --log exact (masked row NaN)" cmp -s "$tmp/got" "$tmp/want"
expect "topk --raw" 0 "" "" -- topk "$s" -k 4 -o "$tmp/w.npy" --raw
show "$tmp/w.npy" > "$tmp/got"; echo "float32 (4, 4) [[3.0, 3.0, -inf, -inf], [nan, nan, nan, nan], [-inf, -inf, -inf, -inf], [inf, inf, 4.0, 2.0]]" > "$tmp/want"
check "topk --raw exact" cmp -s "$tmp/got" "$tmp/want"
expect "topk -k 0" 0 "" "" -- topk "$s" -k 0 -o "$tmp/z.npy"
show "$tmp/z.npy" > "$tmp/got"; echo "float32 (4, 0) [[], [], [], []]" > "$tmp/want"
check "topk -k 0 shape" cmp -s "$tmp/got" "$tmp/want"

# usage errors: exact messages, nothing written
expect "topk no k" 1 "" "smx: topk needs -k K
smx: try 'smx topk --help'" -- topk "$s" -o "$tmp/o.npy"
expect "topk bad k" 1 "" "smx: -k must be a whole number >= 0, not '-2'
smx: try 'smx topk --help'" -- topk "$s" -k -2 -o "$tmp/o.npy"
expect "topk no output" 1 "" "smx: topk needs -o VALUES.npy (or -o - for stdout)
smx: try 'smx topk --help'" -- topk "$s" -k 2
expect "topk log and raw" 1 "" "smx: --log and --raw exclude each other
smx: try 'smx topk --help'" -- topk "$s" -k 2 -o "$tmp/o.npy" --log --raw
expect "topk unknown option" 1 "" "smx: unknown option '--fast' for topk
smx: try 'smx topk --help'" -- topk "$s" -k 2 -o "$tmp/o.npy" --fast
expect "topk bad temperature" 1 "" "smx: --temperature must be a positive finite number, not '0'
smx: try 'smx topk --help'" -- topk "$s" -k 2 -o "$tmp/o.npy" -t 0
echo "precious" > "$tmp/keep.npy"
expect "topk k > n" 4 "" "smx: $s: -k 7 is more than the 6 entries of a row" -- topk "$s" -k 7 -o "$tmp/keep.npy" --indices "$tmp/o.npy"
check "topk k > n: output untouched" grep -q precious "$tmp/keep.npy"
expect "topk missing input" 2 "" "*" -- topk "$tmp/missing.npy" -k 1 -o "$tmp/o.npy"
check "no output after errors" test ! -e "$tmp/o.npy"

# random rows (3-d, f32) and an f16 file against SciPy, threads 1 and 2 identical
expect "topk random" 0 "" "" -- topk "$tmp/r.npy" -k 5 -o "$tmp/rv.npy" --indices "$tmp/ri.npy" -t 0.7
expect "topk random, 2 threads" 0 "" "" -- topk "$tmp/r.npy" -k 5 -o "$tmp/rv2.npy" --indices "$tmp/ri2.npy" -t 0.7 --threads 2
check "topk: threads give the same bytes" cmp -s "$tmp/rv.npy" "$tmp/rv2.npy"
check "topk: threads give the same indices" cmp -s "$tmp/ri.npy" "$tmp/ri2.npy"
expect "topk f16" 0 "" "" -- topk "$tmp/h.npy" -k 50 -o "$tmp/hv.npy" --indices "$tmp/hi.npy" --log
if $PY - "$tmp" <<'PY'
import sys, numpy as np
from scipy.special import softmax, log_softmax
d = sys.argv[1]
def ref(x, k, f):
    p = f(x.astype(np.float64))
    order = np.lexsort((np.broadcast_to(np.arange(x.shape[-1]), x.shape), -x.astype(np.float64)), axis=-1)[..., :k]
    return np.take_along_axis(p, order, -1), order
x = np.load(d + "/r.npy")
p, o = ref(x / 0.7, 5, lambda a: softmax(a, axis=-1))
v, i = np.load(d + "/rv.npy"), np.load(d + "/ri.npy")
assert v.shape == (3, 4, 5) and i.dtype == np.int64 and (i == o).all(), "r indices"
assert np.allclose(v, p, rtol=1e-5, atol=0), "r values"
h = np.load(d + "/h.npy").astype(np.float32)
p, o = ref(h, 50, lambda a: log_softmax(a, axis=-1))
v, i = np.load(d + "/hv.npy"), np.load(d + "/hi.npy")
assert (i == o).all(), "f16 indices"
assert np.allclose(v, p, rtol=1e-5, atol=1e-6), "f16 values"
PY
then pass=$((pass + 1)); else echo "FAIL topk against SciPy"; fail=$((fail + 1)); fi

# ---- sample
expect "sample greedy" 0 "" "" -- sample "$s" -o "$tmp/g.npy" --greedy
show "$tmp/g.npy" > "$tmp/got"; echo "int64 (4,) [1, -1, -1, 1]" > "$tmp/want"
check "sample greedy exact (NaN / masked rows: -1)" cmp -s "$tmp/got" "$tmp/want"
expect "sample -t 0" 0 "" "" -- sample "$s" -o "$tmp/g0.npy" -t 0
check "sample -t 0 is greedy" cmp -s "$tmp/g.npy" "$tmp/g0.npy"
expect "sample seed" 0 "" "" -- sample "$tmp/r.npy" -o "$tmp/t1.npy" --seed 7 --top-p 0.9 --top-k 40
expect "sample seed, 2 threads" 0 "" "" -- sample "$tmp/r.npy" -o "$tmp/t2.npy" --seed 7 --top-p 0.9 --top-k 40 --threads 2
check "sample: threads give the same tokens" cmp -s "$tmp/t1.npy" "$tmp/t2.npy"
expect "sample gumbel min-p" 0 "" "" -- sample "$tmp/r.npy" -o "$tmp/t3.npy" --seed 7 --min-p 0.2 --gumbel -t 1.5
if numpy_in_tmp <<'PY'
x = np.load(d + "/r.npy").astype(np.float64)
t = np.load(d + "/t1.npy")
assert t.shape == (3, 4) and t.dtype == np.int64
top = np.argsort(-x, axis=-1, kind="stable")[..., :40]
assert all(t[a, b] in top[a, b] for a in range(3) for b in range(4)), "top-k"
t3 = np.load(d + "/t3.npy")
w = np.exp((x - x.max(-1, keepdims=True)) / 1.5)
assert all(w[a, b, t3[a, b]] >= 0.2 for a in range(3) for b in range(4)), "min-p"
PY
then pass=$((pass + 1)); else echo "FAIL sample tokens inside their filters"; fail=$((fail + 1)); fi
expect "sample +inf row" 0 "" "" -- sample "$s" -o "$tmp/pi.npy" --seed 1
$PY -c 'import sys, numpy as np; t = np.load(sys.argv[1]); sys.exit(0 if t[1] == -1 and t[2] == -1 and t[3] in (1, 3) else 1)' "$tmp/pi.npy"
check "sample: +inf row draws a +inf entry" test $? = 0
expect "sample no seed" 1 "" "smx: sample needs --seed S (or --greedy)
smx: try 'smx sample --help'" -- sample "$s" -o "$tmp/o.npy"
expect "sample bad top-p" 1 "" "smx: --top-p must be a number in (0, 1] (1: off), not '1.5'
smx: try 'smx sample --help'" -- sample "$s" -o "$tmp/o.npy" --seed 1 --top-p 1.5
expect "sample bad min-p" 1 "" "smx: --min-p must be a number in [0, 1] (0: off), not '-1'
smx: try 'smx sample --help'" -- sample "$s" -o "$tmp/o.npy" --seed 1 --min-p -1
expect "sample bad temperature" 1 "" "smx: --temperature must be a finite number >= 0 (0: greedy), not 'x'
smx: try 'smx sample --help'" -- sample "$s" -o "$tmp/o.npy" --seed 1 -t x
expect "sample bad seed" 1 "" "smx: --seed must be a whole number from 0 to 2^64-1, not '-1'
smx: try 'smx sample --help'" -- sample "$s" -o "$tmp/o.npy" --seed -1
expect "sample unknown option" 1 "" "smx: unknown option '--nucleus' for sample
smx: try 'smx sample --help'" -- sample "$s" -o "$tmp/o.npy" --seed 1 --nucleus 0.9
check "sample: no output after errors" test ! -e "$tmp/o.npy"

echo "lm_topk_test: $pass passed, $fail failed"
[ $fail = 0 ]
