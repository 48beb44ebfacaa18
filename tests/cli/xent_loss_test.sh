#!/bin/bash
# smx xent --loss NAME: the op table's target losses (class TLOSS, cli "xent --loss NAME") through the CLI.
# S-DPO and the spherical Z-loss against independent float64 NumPy forms of their papers' formulas (loss and
# gradient, every reduction, float64 / float32 / float16 logits, threads, the ignore index); refusals (a
# parameter out of range, an option the loss does not take, an unknown loss, a parameter of another loss)
# with exact messages and nothing written; and, from `smx ops`, every loss the table gives to xent is in
# `smx xent --help` with its parameters and runs with its defaults.
# Usage: tests/cli/xent_loss_test.sh SMX_BINARY
. "$(dirname "$0")/lib.sh"   # SMX, PY, $tmp, expect and check
cd "$tmp" || exit 1
$PY - <<'PY' || { echo "FAIL: fixtures"; exit 1; }
import numpy as np
rng = np.random.default_rng(23)
m = rng.standard_normal((257, 9)) * 2          # log-ratio margins: 1 preferred + 8 rejected items per row
m[3, 4] = -np.inf                               # a rejected item padded out
t = rng.integers(0, 9, 257)
t[5] = t[77] = -100                             # ignored rows
np.save("m64.npy", m)
np.save("m32.npy", m.astype(np.float32))
np.save("m16.npy", m.astype(np.float16))
np.save("t.npy", t)
np.save("t7.npy", np.where(t == -100, 7, t))   # for --ignore-index 7 tests: no -100 left
PY

# S-DPO: float64 logits computed in float64, every reduction
expect "sdpo f64 none" 0 "" "" -- xent m64.npy --targets t.npy --loss sdpo_loss --beta 0.5 --reduction none -o l64.npy --grad g64.npy
expect "sdpo f64 mean" 0 "" "" -- xent m64.npy --targets t.npy --loss sdpo_loss --beta 0.5 -o lmean.npy --grad gmean.npy --threads 2
expect "sdpo f64 sum printed" 0 "*" "" -- xent m64.npy --targets t.npy --loss sdpo-loss --beta=0.5 --reduction sum
cp out sum_printed.txt
expect "sdpo f32 sum" 0 "" "" -- xent m32.npy --targets t.npy --loss sdpo_loss --beta 2 --reduction sum -o l32.npy --grad g32.npy
expect "sdpo f16 none" 0 "" "" -- xent m16.npy --targets t.npy --loss sdpo_loss --reduction none -o l16.npy --grad g16.npy
expect "sdpo ignore index 7" 0 "" "" -- xent m32.npy --targets t7.npy --loss sdpo_loss --ignore-index 7 -o l7.npy
expect "sdpo -t 1 is no temperature" 0 "*" "" -- xent m32.npy --targets t.npy --loss sdpo_loss -t 1
# the spherical Z-loss with its parameters (--a: -a stays --axis)
expect "spherical z f64 --a --b" 0 "" "" -- xent m64.npy --targets t.npy --loss spherical_z_loss --a 2 --b 0.5 -a -1 \
  --reduction none -o lz.npy --grad gz.npy
expect "spherical z f32 mean" 0 "" "" -- xent m32.npy --targets t.npy --loss spherical_z_loss --a 3 -b -1 -o lz32.npy

if $PY - <<'PY'
import numpy as np
np.seterr(all="ignore")
bad = 0
def close(name, a, b, tol, dtype=None):
    global bad
    a = np.asarray(a); b = np.asarray(b, dtype=np.float64)
    if dtype is not None and a.dtype != dtype:
        print("FAIL", name, "dtype", a.dtype, "want", dtype); bad += 1; return
    a = a.astype(np.float64)
    ok = a.shape == b.shape and np.all((a == b) | (np.abs(a - b) <= tol * np.maximum(1, np.abs(b))))
    if not ok:
        print("FAIL", name, np.nanmax(np.abs(a - b)) if a.shape == b.shape else (a.shape, b.shape)); bad += 1

def sdpo(m, t, beta, ign=-100):
    """-log sigmoid(-log sum_{j != w} exp(beta (m_j - m_w))) as the paper writes it, in float64, and its
    gradient from that form: with s_j = exp(beta (m_j - m_w)), S = sum_{j != w} s_j,
    dL/dm_j = beta s_j / (1 + S) (j != w), dL/dm_w = -beta S / (1 + S)."""
    m = m.astype(np.float64)
    l = np.zeros(len(t)); g = np.zeros(m.shape)
    for r in range(len(t)):
        if t[r] == ign: continue
        w = t[r]
        s = np.exp(beta * (m[r] - m[r, w])); s[w] = 0.0
        S = s.sum()
        sig = 1.0 / (1.0 + np.exp(np.log(S)))            # sigmoid(-log S)
        l[r] = -np.log(sig)
        g[r] = beta * s / (1 + S); g[r, w] = -beta * S / (1 + S)
    return l, g

def spherical_z(x, t, a, b):
    """de Brebisson & Vincent's Z-loss: z_t = (x_t - mu) / sigma, loss softplus(a (b - z_t)) / a, and its
    gradient -sigmoid(a (b - z_t)) / sigma * ([k == t] - 1/D - z_t z_k / D)."""
    x = x.astype(np.float64); D = x.shape[1]
    l = np.zeros(len(t)); g = np.zeros(x.shape)
    for r in range(len(t)):
        if t[r] == -100: continue
        mu = x[r].mean(); sd = np.sqrt((x[r] ** 2).mean() - mu ** 2)
        z = (x[r] - mu) / sd; zt = z[t[r]]
        l[r] = np.log1p(np.exp(a * (b - zt))) / a
        e = -np.eye(D)[t[r]] + 1.0 / D + zt * z / D
        g[r] = e / sd / (1 + np.exp(-a * (b - zt)))
    return l, g

m64 = np.load("m64.npy"); t = np.load("t.npy"); keep = t != -100
l, g = sdpo(m64, t, 0.5)
close("sdpo f64 none loss", np.load("l64.npy"), l, 1e-13, np.float64)
close("sdpo f64 none grad", np.load("g64.npy"), g, 1e-13, np.float64)
lm = np.load("lmean.npy")
if lm.shape != (): print("FAIL sdpo mean shape", lm.shape); bad += 1
close("sdpo f64 mean loss", lm, l.sum() / keep.sum(), 1e-13, np.float64)
close("sdpo f64 mean grad", np.load("gmean.npy"), g / keep.sum(), 1e-13, np.float64)
close("sdpo f64 sum printed", float(open("sum_printed.txt").read()), l.sum(), 1e-13)
l, g = sdpo(np.load("m32.npy"), t, 2.0)
close("sdpo f32 sum loss", np.load("l32.npy"), l.sum(), 1e-5, np.float32)
close("sdpo f32 sum grad", np.load("g32.npy"), g, 1e-5, np.float32)
l, g = sdpo(np.load("m16.npy"), t, 1.0)
close("sdpo f16 none loss", np.load("l16.npy"), l, 1e-5, np.float32)
close("sdpo f16 none grad", np.load("g16.npy"), g, 2 ** -10, np.float16)
t7 = np.load("t7.npy")
l, _ = sdpo(np.load("m32.npy"), t7, 1.0, ign=7)
close("sdpo ignore index 7", np.load("l7.npy"), l.sum() / (t7 != 7).sum(), 1e-5, np.float32)
l, g = spherical_z(m64[:, :], t, 2.0, 0.5)
# row 3 has a -inf entry: sigma is not finite, loss and gradient NaN (the header's special-value rule)
lz, gz = np.load("lz.npy"), np.load("gz.npy")
if not (np.isnan(lz[3]) and np.isnan(gz[3]).all()): print("FAIL spherical z: the -inf row is not NaN"); bad += 1
ok = np.arange(len(t)) != 3
close("spherical z f64 loss", lz[ok], l[ok], 1e-12, np.float64)
close("spherical z f64 grad", gz[ok], g[ok], 1e-12, np.float64)

lz32 = float(np.load("lz32.npy"))
if not np.isnan(lz32): print("FAIL spherical z mean with a NaN row is not NaN", lz32); bad += 1
raise SystemExit(1 if bad else 0)
PY
then pass=$((pass + 1)); else echo "FAIL numbers against NumPy"; fail=$((fail + 1)); fi

# refusals: exit 1, the message names the option, nothing written
for b in 0 -1 1e-310 inf nan; do
  expect "sdpo --beta $b refused" 1 "" "smx: --beta must be a number >= 2.2250738585072014e-308, not '$b'
smx: try 'smx xent --help'" -- xent m32.npy --targets t.npy --loss sdpo_loss --beta "$b" -o no.npy --grad nog.npy
done
for o in "--z-loss 1e-4:--z-loss" "--label-smoothing 0.1:--label-smoothing" "-t 2:--temperature" \
         "--temperature 0.5:--temperature" "--masked-row nan:"; do
  args=${o%%:*} name=${o#*:}
  [ -n "$name" ] || continue   # S-DPO takes --masked-row nan (cross-entropy's rule)
  expect "sdpo refuses $args" 1 "" "smx: $name does not apply to --loss sdpo_loss; leave it out
smx: try 'smx xent --help'" -- xent m32.npy --targets t.npy --loss sdpo_loss $args -o no.npy --grad nog.npy
done
expect "spherical z refuses --masked-row nan" 1 "" "smx: --masked-row nan does not apply to --loss spherical_z_loss; leave it out
smx: try 'smx xent --help'" -- xent m32.npy --targets t.npy --loss spherical_z_loss --masked-row nan -o no.npy
expect "refused before the input is read" 1 "" "smx: --z-loss does not apply to --loss sdpo_loss; leave it out
smx: try 'smx xent --help'" -- xent missing.npy --targets missing_t.npy --loss sdpo_loss --z-loss 1 -o no.npy
expect "unknown loss, with the nearest" 1 "" "smx: --loss must be cross_entropy, spherical_z_loss or sdpo_loss, not 'sdpo_los'; did you mean 'sdpo_loss'?
smx: try 'smx xent --help'" -- xent m32.npy --targets t.npy --loss sdpo_los -o no.npy
expect "unknown loss, far from any" 1 "" "smx: --loss must be cross_entropy, spherical_z_loss or sdpo_loss, not 'hinge'
smx: try 'smx xent --help'" -- xent m32.npy --targets t.npy --loss hinge -o no.npy
expect "a parameter of another loss" 1 "" "smx: --beta is an option of --loss sdpo_loss, not of cross_entropy
smx: try 'smx xent --help'" -- xent m32.npy --targets t.npy --beta 0.5 -o no.npy
expect "a parameter of another loss, with --loss" 1 "" "smx: --a is an option of --loss spherical_z_loss, not of sdpo_loss
smx: try 'smx xent --help'" -- xent m32.npy --targets t.npy --loss sdpo_loss --a 2 -o no.npy
expect "a mistyped parameter" 1 "" "smx: unknown option '--bta' for xent; did you mean '--beta'?
smx: try 'smx xent --help'" -- xent m32.npy --targets t.npy --loss sdpo_loss --bta 0.5 -o no.npy
expect "--loss twice" 1 "" "smx: --loss given twice
smx: try 'smx xent --help'" -- xent m32.npy --targets t.npy --loss sdpo_loss --loss sdpo_loss -o no.npy
check "refusals wrote nothing" test ! -e no.npy -a ! -e nog.npy

# every loss the op table gives to xent: listed in its help with its parameters, and computed with its defaults
"$SMX" xent --help > help.txt
nloss=0
for op in $("$SMX" ops | awk 'NR > 1 {print $1}'); do
  "$SMX" ops "$op" > op.txt
  word=$(awk '$1 == "cli:" && $2 == "xent" && $3 == "--loss" {print $4}' op.txt)
  [ -n "$word" ] || continue
  nloss=$((nloss + 1))
  check "xent --help lists --loss $word" grep -qE "^  $word +" help.txt
  for p in $(awk '$1 == "param:" {print $2}' op.txt); do
    o=$(echo "$p" | tr _ -)
    check "xent --help lists $word's parameter $p" grep -qE "^    (-$o, )?--$o " help.txt
  done
  expect "xent --loss $word with its defaults" 0 "*" "" -- xent m32.npy --targets t.npy --loss "$word" -o "d_$word.npy"
done
check "the table gives xent two losses or more" test "$nloss" -ge 2

echo "xent_loss_test: $pass passed, $fail failed"
[ "$fail" = 0 ]
