#!/bin/bash
# smx softpick | ssmax | sa-softmax | adaptive-softmax | topk-softmax |
# softplus-l1 | standardize-softmax, and sigmoid --bias: values against
# NumPy references (float64 and float32, another axis), and refusals.
# Usage: tests/cli/vnorm_test.sh SMX_BINARY
SMX=$1
. "$(dirname "$0")/lib.sh"

numpy_in_tmp <<'PY'
x = np.random.default_rng(7).standard_normal((5, 23)) * 3
x[0, 2] = -np.inf
np.save(d + "/x64.npy", x)
np.save(d + "/x32.npy", x.astype(np.float32))
np.save(d + "/x3.npy", np.random.default_rng(8).standard_normal((4, 6, 5)))
PY

for c in softpick ssmax sa-softmax adaptive-softmax softplus-l1 standardize-softmax; do
  expect "$c f64" 0 "" "" -- $c "$tmp/x64.npy" -o "$tmp/$c.64.npy"
  expect "$c f32" 0 "" "" -- $c "$tmp/x32.npy" -o "$tmp/$c.32.npy"
done
expect "softpick --eps" 0 "" "" -- softpick "$tmp/x64.npy" -o "$tmp/sp_eps.npy" --eps 0.5
expect "ssmax --s" 0 "" "" -- ssmax "$tmp/x64.npy" -o "$tmp/ss_s.npy" --s 0.3
expect "sa-softmax --normalized" 0 "" "" -- sa-softmax "$tmp/x64.npy" -o "$tmp/sa_n.npy" --normalized
expect "topk-softmax -k 4" 0 "" "" -- topk-softmax "$tmp/x64.npy" -o "$tmp/tk.npy" -k 4
expect "standardize-softmax -t 3" 0 "" "" -- standardize-softmax "$tmp/x64.npy" -o "$tmp/st3.npy" -t 3
expect "sigmoid --bias" 0 "" "" -- sigmoid "$tmp/x64.npy" -o "$tmp/sgb.npy" --bias -2 -t 2
expect "softpick axis 1" 0 "" "" -- softpick "$tmp/x3.npy" -o "$tmp/sp3.npy" -a 1 --threads 2
expect "topk-softmax without -k" 1 "" "*" -- topk-softmax "$tmp/x64.npy" -o "$tmp/bad.npy"
expect "softpick negative eps" 1 "" "*" -- softpick "$tmp/x64.npy" -o "$tmp/bad.npy" --eps -1
expect "--eps on ssmax" 1 "" "*" -- ssmax "$tmp/x64.npy" -o "$tmp/bad.npy" --eps 1
for c in softpick ssmax sa-softmax adaptive-softmax softplus-l1; do
  expect "$c -t 3 refused, not ignored" 1 "" "*" -- $c "$tmp/x64.npy" -o "$tmp/bad.npy" -t 3
done
expect "topk-softmax -t 3 refused" 1 "" "*" -- topk-softmax "$tmp/x64.npy" -o "$tmp/bad.npy" -k 2 -t 3
expect "ssmax -t 1 accepted" 0 "" "" -- ssmax "$tmp/x64.npy" -o "$tmp/ss_t1.npy" -t 1

check "values against numpy" numpy_in_tmp <<'PY'
x = np.load(d + "/x64.npy")
def sm(z):
    z = z - np.max(z, -1, keepdims=True); e = np.exp(z); return e / e.sum(-1, keepdims=True)
def softpick(x, eps=1e-6):
    f = np.isfinite(x); m = np.max(np.where(f, x, -np.inf), -1, keepdims=True)
    a = np.exp(x - m) - np.exp(-m)
    return np.maximum(a, 0) / (np.where(f, abs(a), 0).sum(-1, keepdims=True) + eps)
def sa(x, norm=False):
    p = sm(x); xf = np.where(np.isfinite(x), x, np.nan)
    if not norm:
        return np.where(p == 0, 0, np.where(np.isfinite(x), x, 0) * p)
    lo = np.minimum(np.nanmin(xf, -1, keepdims=True), 0); hi = np.maximum(np.nanmax(xf, -1, keepdims=True), 0)
    return np.where(p == 0, 0, (np.where(np.isfinite(x), x, 0) - lo) / (hi - lo) * p)
def adaptive(x):
    p = sm(x); h = -(p * np.log(p + 1e-9)).sum(-1, keepdims=True)
    b = np.where(h > 0.5, np.maximum(np.polyval([-0.037, 0.481, -2.3, 4.917, -1.791], h), 1), 1)
    return sm(b * x)
def spl1(x):
    s = np.logaddexp(0, x); return s / s.sum(-1, keepdims=True)
def std(x, t=1.0):
    out = np.zeros_like(x)
    for r in range(x.shape[0]):
        f = np.isfinite(x[r]); v = x[r][f]
        z = (v - v.mean()) / (v.std(ddof=1) + 1e-7); out[r][f] = sm(z / t)
    return out
def topk(x, k):
    y = np.zeros_like(x)
    for r in range(x.shape[0]):
        i = np.argsort(-x[r], kind="stable")[:k]; y[r, i] = sm(x[r, i])
    return y
refs = {"softpick": softpick(x), "ssmax": sm(np.log(x.shape[1]) * x), "sa-softmax": sa(x),
        "adaptive-softmax": adaptive(x), "softplus-l1": spl1(x), "standardize-softmax": std(x)}
for c, r in refs.items():
    np.testing.assert_allclose(np.load(d + "/%s.64.npy" % c), r, rtol=1e-12, atol=1e-15, err_msg=c)
    y32 = np.load(d + "/%s.32.npy" % c); assert y32.dtype == np.float32, c
    np.testing.assert_allclose(y32, r, rtol=2e-5, atol=1e-6, err_msg=c)
np.testing.assert_allclose(np.load(d + "/sp_eps.npy"), softpick(x, 0.5), rtol=1e-12, atol=1e-15)
np.testing.assert_allclose(np.load(d + "/ss_s.npy"), sm(0.3 * np.log(x.shape[1]) * x), rtol=1e-12, atol=1e-15)
np.testing.assert_allclose(np.load(d + "/sa_n.npy"), sa(x, True), rtol=1e-12, atol=1e-15)
np.testing.assert_allclose(np.load(d + "/tk.npy"), topk(x, 4), rtol=1e-12, atol=1e-15)
np.testing.assert_allclose(np.load(d + "/st3.npy"), std(x, 3.0), rtol=1e-12, atol=1e-15)
np.testing.assert_allclose(np.load(d + "/sgb.npy"), 1 / (1 + np.exp(-(x / 2 - 2))), rtol=1e-14, atol=1e-300)
x3 = np.load(d + "/x3.npy")
np.testing.assert_allclose(np.load(d + "/sp3.npy"), np.moveaxis(softpick(np.moveaxis(x3, 1, -1)), -1, 1),
                           rtol=1e-12, atol=1e-15)
PY
for c in softpick ssmax sa-softmax adaptive-softmax topk-softmax softplus-l1 standardize-softmax; do
  check "$c help" sh -c "'$SMX' $c --help | grep -q 'usage: smx $c'"
done

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
