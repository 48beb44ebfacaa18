#!/usr/bin/python3
"""The feature part of the digits-ood fixture (issue 25): the MLP of the shared
fixture recipe (MLPClassifier((32,), alpha=1e-3, max_iter=3000, random_state=0)
on digits 0-4), its 32-unit hidden features (ReLU outputs) of the training,
validation, ID test and OOD rows, its last layer (W = coefs_[-1].T, C x F as
torch's Linear; b = intercepts_[-1]), its logits, and the reference values of
the five feature scores in expected_features.json, all into mlp/.

Run with Debian's interpreter and packages (no pip, no downloads):
    /usr/bin/python3 make_features.py [OUTDIR]      (default: this folder)

Made with python3-sklearn 1.2.1+dfsg-1, python3-numpy 1.24.2, python3-scipy
1.10.1. The MLP logits are byte-identical to the shared fixture's mlp/ files;
the LogisticRegression files one level up are not touched (rerunning their
recipe changes their last bits). References: float64, from the float32 files
as saved, by the formulas of docs/scores.md section 8 (OpenOOD v1.5), written
here without smx.
"""
import json
import os
import sys

import numpy as np
import sklearn
from scipy.linalg import pinvh
from scipy.special import logsumexp
from sklearn import metrics
from sklearn.datasets import load_digits
from sklearn.model_selection import train_test_split
from sklearn.neural_network import MLPClassifier

OUT = os.path.join(sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.abspath(__file__)), "mlp")
os.makedirs(OUT, exist_ok=True)

X, y = load_digits(return_X_y=True)
X = X / 16.0
Xi, yi = X[y < 5], y[y < 5]
Xo = X[y >= 5]
Xtr, Xrest, ytr, yrest = train_test_split(Xi, yi, train_size=450, stratify=yi, random_state=0)
Xva, Xte, yva, yte = train_test_split(Xrest, yrest, train_size=180, stratify=yrest, random_state=0)
mlp = MLPClassifier(hidden_layer_sizes=(32,), alpha=1e-3, max_iter=3000, random_state=0).fit(Xtr, ytr)


def hidden(Z):
    return np.maximum(Z @ mlp.coefs_[0] + mlp.intercepts_[0], 0.0)   # relu, MLPClassifier's default


W = mlp.coefs_[-1].T.copy()          # (5, 32): logits = h @ W.T + b
b = mlp.intercepts_[-1].copy()
save = lambda name, a: np.save(os.path.join(OUT, name), a)
for name, Z in (("train", Xtr), ("val", Xva), ("id", Xte), ("ood", Xo)):
    save(f"{name}_features.npy", hidden(Z).astype(np.float32))
for name, Z in (("id", Xte), ("ood", Xo), ("val", Xva)):
    save(f"{name}_logits.npy", (hidden(Z) @ W.T + b).astype(np.float32))   # = the shared fixture's mlp logits
save("train_labels.npy", ytr.astype(np.int32))
save("id_labels.npy", yte.astype(np.int32))
save("val_labels.npy", yva.astype(np.int32))
save("weight.npy", W)                # float64: the model's own weights
save("bias.npy", b)

# ------------------------------------------------------------ references (float64 from the saved files)
ld = lambda n: np.load(os.path.join(OUT, n)).astype(np.float64)
Ftr, Fid, Food = ld("train_features.npy"), ld("id_features.npy"), ld("ood_features.npy")
ytr = np.load(os.path.join(OUT, "train_labels.npy")).astype(np.int64)
C, F = W.shape
K, D, P = 50, F // 2, 90.0


def mahalanobis(T):
    """Lee et al. 2018 / OpenOOD mds; S is singular here (4 dead ReLU units): pinvh, as sklearn's precision_."""
    mu = np.stack([Ftr[ytr == c].mean(0) for c in range(C)])
    Z = Ftr - mu[ytr]
    Pm = pinvh(Z.T @ Z / len(Z))
    d = T[:, None, :] - mu[None]
    return -np.einsum("ncf,fg,ncg->nc", d, Pm, d).min(1)


def unit(A):
    n = np.linalg.norm(A, axis=1, keepdims=True)
    return np.divide(A, n, out=np.zeros_like(A), where=n > 0)


def knn(T):
    """Sun et al. 2022: -(squared distance to the K-th nearest unit training row)."""
    d = ((unit(T)[:, None, :] - unit(Ftr)[None]) ** 2).sum(-1)
    return -np.sort(d, 1)[:, K - 1]


u = -np.linalg.pinv(W) @ b
ev, V = np.linalg.eigh((Ftr - u).T @ (Ftr - u) / len(Ftr))
NS = V[:, np.argsort(-ev)[D:]]
alpha = (Ftr @ W.T + b).max(1).mean() / np.linalg.norm((Ftr - u) @ NS, axis=1).mean()
vim = lambda T: -alpha * np.linalg.norm((T - u) @ NS, axis=1) + logsumexp(T @ W.T + b, axis=1)
residual = lambda T: -np.linalg.norm((T - u) @ NS, axis=1)
thr = np.percentile(Ftr.ravel(), P)
react = lambda T: logsumexp(np.minimum(T, thr) @ W.T + b, axis=1)


def ood_metrics(s_id, s_ood):
    """OpenOOD v1.5 auc_and_fpr_recall (OOD positive, conf negated) and sklearn's AP, ID positive."""
    conf = np.r_[s_id, s_ood]
    ood = np.r_[np.zeros(len(s_id)), np.ones(len(s_ood))]
    fpr, tpr, _ = metrics.roc_curve(ood, -conf)
    p_in, r_in, _ = metrics.precision_recall_curve(1 - ood, conf)
    p_out, r_out, _ = metrics.precision_recall_curve(ood, -conf)
    t = np.sort(s_id)[::-1][int(np.ceil(0.95 * len(s_id))) - 1]
    return {"auroc": float(metrics.auc(fpr, tpr)), "aupr_in_trapz": float(metrics.auc(r_in, p_in)),
            "aupr_out_trapz": float(metrics.auc(r_out, p_out)), "fpr_oodpos_openood": float(fpr[np.argmax(tpr >= 0.95)]),
            "ap_in": float(metrics.average_precision_score(1 - ood, conf)),
            "fpr_idpos_exact": float(np.mean(s_ood >= t))}


scores = {"mahalanobis": mahalanobis, f"knn_k{K}": knn, f"vim_D{D}": vim, f"residual_D{D}": residual,
          f"react_p{P:g}": react}
expected = {
    "provenance": {"sklearn": sklearn.__version__, "numpy": np.__version__,
                   "model": "MLPClassifier(hidden_layer_sizes=(32,), alpha=1e-3, max_iter=3000, random_state=0)",
                   "features": "relu(x @ coefs_[0] + intercepts_[0]), float32", "computed_in": "float64"},
    "params": {"k": K, "vim_dim": D, "react_percentile": P, "vim_alpha": float(alpha), "react_threshold": float(thr),
               "mahalanobis_covariance": "pinv (4 dead units: the covariance is singular)"},
    "id_scores_first5": {n: f(Fid)[:5].tolist() for n, f in scores.items()},
    "ood": {n: ood_metrics(f(Fid), f(Food)) for n, f in scores.items()},
}
with open(os.path.join(OUT, "expected_features.json"), "w") as fh:
    json.dump(expected, fh, indent=1)
for n, m in expected["ood"].items():
    print(f"{n:16s} AUROC {m['auroc']:.4f}  FPR95(OOD pos) {m['fpr_oodpos_openood']:.4f}  AUPR-In {m['aupr_in_trapz']:.4f}")
print("alpha", alpha, "threshold", thr)
