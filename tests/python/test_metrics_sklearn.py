#!/usr/bin/python3
"""smx_ood_metrics_f64 / _f32 against scikit-learn (Debian python3-sklearn) on random data with heavy ties.

AUROC = roc_auc_score and AUPR = average_precision_score to 1e-12; OpenOOD's trapezoid AUPR
(precision_recall_curve + auc) to 1e-12; every FPR rule exactly (they are ratios of counts):
first ROC point with TPR >= target on the full curve (both conventions), OpenOOD's on the curve
after roc_curve(drop_intermediate=True), and hendrycks' nearest-recall rule.
Usage: test_metrics_sklearn.py METRICS_DRIVER
"""
import subprocess
import sys

import numpy as np
from sklearn import metrics

TOL = 1e-12


def run(driver, kind, a, b, tpr):
    vals = " ".join(float(x).hex() for x in np.r_[a, b])
    out = subprocess.run([driver], input=f"{kind} {len(a)} {len(b)} {tpr!r} {vals}", capture_output=True,
                         text=True, check=True).stdout
    return {k: float(v) for k, v in (line.split() for line in out.splitlines())}


def nearest(y_true, y_score, level):
    """hendrycks/outlier-exposure fpr_and_fdr_at_recall (as in the digits-ood make_fixture.py)."""
    y_true = y_true == 1
    idx = np.argsort(y_score, kind="mergesort")[::-1]
    y_score, y_true = y_score[idx], y_true[idx]
    distinct = np.where(np.diff(y_score))[0]
    thr_idx = np.r_[distinct, y_true.size - 1]
    tps = np.cumsum(y_true, dtype=np.float64)[thr_idx]
    fps = 1 + thr_idx - tps
    recall = tps / tps[-1]
    last = tps.searchsorted(tps[-1])
    sl = slice(last, None, -1)
    recall, fps = np.r_[recall[sl], 1], np.r_[fps[sl], 0]
    cutoff = np.argmin(np.abs(recall - level))
    return fps[cutoff] / np.sum(np.logical_not(y_true))


def reference(a, b, tpr):
    s = np.r_[a, b]
    lab = np.r_[np.ones(len(a)), np.zeros(len(b))]
    r = {"auroc": metrics.roc_auc_score(lab, s),
         "ap_in": metrics.average_precision_score(lab, s),
         "ap_out": metrics.average_precision_score(1 - lab, -s)}
    p, rc, _ = metrics.precision_recall_curve(lab, s)
    r["aupr_in_trapz"] = metrics.auc(rc, p)
    p, rc, _ = metrics.precision_recall_curve(1 - lab, -s)
    r["aupr_out_trapz"] = metrics.auc(rc, p)
    f, t, _ = metrics.roc_curve(lab, s, drop_intermediate=False)
    r["fpr_idpos_exact"] = f[np.argmax(t >= tpr)]
    f, t, _ = metrics.roc_curve(1 - lab, -s, drop_intermediate=False)
    r["fpr_oodpos_exact"] = f[np.argmax(t >= tpr)]
    f, t, _ = metrics.roc_curve(1 - lab, -s)   # OpenOOD v1.5: default drop_intermediate=True
    r["fpr_oodpos_openood"] = f[np.argmax(t >= tpr)]
    r["fpr_idpos_nearest"] = nearest(lab, s, tpr)
    r["fpr_oodpos_nearest"] = nearest(1 - lab, -s, tpr)
    r["n_tied_values"] = len(s) - len(np.unique(s))
    return r


def main():
    driver = sys.argv[1]
    rng = np.random.default_rng(12345)
    fails, checked, worst = [], 0, 0.0
    cases = []
    for trial in range(60):
        n_id, n_ood = int(rng.integers(1, 400)), int(rng.integers(1, 400))
        levels = int(rng.choice([2, 3, 5, 10, 50, 1000]))         # heavy ties: few distinct values
        a = rng.integers(0, levels, n_id) / levels + 0.3 * rng.integers(0, 2, n_id) / levels
        b = rng.integers(0, levels, n_ood) / levels - 0.2
        if trial % 4 == 0:
            b = rng.integers(0, levels, n_ood) / levels           # identical supports
        if trial % 7 == 0:
            a = a.astype(np.float32).astype(np.float64)
            a[:3] = -0.0                                          # -0 and +0 are the same score
            b[:2] = 0.0
        if trial % 11 == 0:
            a = rng.normal(size=n_id)                             # no ties
            b = rng.normal(size=n_ood) - 0.5
        tpr = [0.95, 0.9, 0.5, 1.0, 0.8][trial % 5]
        cases.append((a, b, tpr))
    cases.append((np.array([1.0]), np.array([1.0]), 0.95))        # one sample each, tied
    cases.append((np.full(50, 0.5), np.full(70, 0.5), 0.95))     # everything tied: AUROC 0.5
    cases.append((np.array([3e38, -3e38, 3.0]), np.array([-3e38, 0.0]), 0.95))  # extremes (sklearn refuses inf)
    for i, (a, b, tpr) in enumerate(cases):
        for kind in ("f64", "f32"):
            if kind == "f32":
                a32, b32 = a.astype(np.float32).astype(np.float64), b.astype(np.float32).astype(np.float64)
            else:
                a32, b32 = a, b
            ref = reference(a32, b32, tpr)
            got = run(driver, kind, a32, b32, tpr)
            for k, e in ref.items():
                checked += 1
                g = got.get(k)
                exact = k.startswith("fpr") or k == "n_tied_values"
                if g is None or (g != e if exact else abs(g - e) > TOL):
                    fails.append(f"case {i} {kind} {k}: sklearn {e!r}, smx {g!r}")
                elif not exact:
                    worst = max(worst, abs(g - e))
    # refused inputs
    for a, b in ((np.array([]), np.array([1.0])), (np.array([1.0]), np.array([])), (np.array([np.nan]), np.array([1.0]))):
        checked += 1
        got = run(driver, "f64", a, b, 0.95)
        if got.get("status") != 10:
            fails.append(f"refusal {a} {b}: {got}")
    for msg in fails[:40]:
        print("FAIL", msg)
    print(f"test_metrics_sklearn: {checked - len(fails)} passed, {len(fails)} failed; largest difference {worst:.3g}")
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
