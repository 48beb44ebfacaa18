"""Float64 NumPy/SciPy references of the feature OOD scores, written from the
papers and OpenOOD v1.5's postprocessors (docs/scores.md section 8), not from
smx's C code. Every score is higher = more in-distribution.

Shared by tests/python/test_features_ref.py (the C library through ctypes)
and tests/python/test_features_py.py (the Python module).
"""
import numpy as np
from scipy.linalg import pinvh
from scipy.special import logsumexp


def mahalanobis(train, labels, classes, test, policy="error", shrinkage=0.0):
    """Lee et al. 2018 / OpenOOD mds: class means, one covariance of the
    class-centred features (maximum likelihood, / N), max over classes of
    -(f - mu_c)^T S^-1 (f - mu_c)."""
    mu = np.stack([train[labels == c].mean(0) for c in range(classes)])
    centred = train - mu[labels]
    S = centred.T @ centred / len(train)
    if policy == "pinv":
        P = pinvh(S)
    elif policy == "shrink":
        F = S.shape[0]
        P = np.linalg.inv((1 - shrinkage) * S + shrinkage * np.trace(S) / F * np.eye(F))
    else:
        P = np.linalg.inv(S)
    d = test[:, None, :] - mu[None, :, :]
    return -np.einsum("ncf,fg,ncg->nc", d, P, d).min(1)


def knn(train, test, k):
    """Sun et al. 2022 (deep kNN) / OpenOOD knn: unit rows, -(squared L2
    distance to the k-th nearest training row), brute force."""
    def unit(a):
        n = np.linalg.norm(a, axis=1, keepdims=True)
        return np.divide(a, n, out=np.zeros_like(a), where=n > 0)
    tr, te = unit(train), unit(test)
    d = ((te[:, None, :] - tr[None, :, :]) ** 2).sum(-1)
    return -np.sort(d, axis=1)[:, k - 1]


def vim_parts(train, W, b, D):
    """Wang et al. 2022 / OpenOOD vim: u = -pinv(W) b; principal space of
    EmpiricalCovariance(assume_centered=True) of train - u; alpha."""
    u = -np.linalg.pinv(W) @ b
    M = (train - u).T @ (train - u) / len(train)
    w, V = np.linalg.eigh(M)
    NS = V[:, np.argsort(-w)[D:]]
    r_train = np.linalg.norm((train - u) @ NS, axis=1)
    alpha = (train @ W.T + b).max(1).mean() / r_train.mean()
    return u, NS, alpha


def vim(train, W, b, D, test, logits=None):
    u, NS, alpha = vim_parts(train, W, b, D)
    lg = test @ W.T + b if logits is None else logits
    return -alpha * np.linalg.norm((test - u) @ NS, axis=1) + logsumexp(lg, axis=1)


def residual(train, W, b, D, test):
    u, NS, _ = vim_parts(train, W, b, D)
    return -np.linalg.norm((test - u) @ NS, axis=1)


def react(train, W, b, p, test):
    """Sun et al. 2021 / OpenOOD react: clip at the p-th percentile of all
    training values (np.percentile, linear), energy of the recomputed logits."""
    t = np.percentile(train.ravel(), p)
    return logsumexp(np.minimum(test, t) @ W.T + b, axis=1)


def toy(seed=0, n=400, F=16, C=4, m=100):
    """Structured ReLU-like features whose values are exact float32 (so the
    library's float32 bank holds them exactly), a random head, ID and shifted
    test rows."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, C, n)
    centres = rng.normal(0, 2, (C, F))
    A = rng.normal(0, 1, (F, F)) / np.sqrt(F)
    X = np.maximum(centres[y] + rng.normal(0, 1, (n, F)) @ A, 0).astype(np.float32).astype(np.float64)
    yt = rng.integers(0, C, m)
    T = np.maximum(centres[yt] + rng.normal(0, 1, (m, F)) @ A + (np.arange(m) % 2)[:, None] * rng.normal(0, 2, F), 0)
    T = T.astype(np.float32).astype(np.float64)
    W = rng.normal(0, 1, (C, F))
    b = rng.normal(0, 0.5, C)
    return X, y, T, W, b
