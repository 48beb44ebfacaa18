#!/usr/bin/python3
"""The C feature scores (libsmx through ctypes) against the float64
references of feature_ref.py: f64 and f32 input, every method, the three
covariance policies on a singular covariance, ViM with logits passed, kNN
with duplicates, IVF probing every list (then exact).
Usage: test_features_ref.py path/to/libsmx.so"""
import ctypes as ct
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import feature_ref as ref  # noqa: E402
from script_checks import check, finish  # noqa: E402

lib = ct.CDLL(sys.argv[1])
P = ct.c_void_p
SZ = ct.c_size_t


class Config(ct.Structure):
    _fields_ = [("features", SZ), ("classes", SZ), ("methods", ct.c_uint), ("k", SZ), ("vim_dim", SZ),
                ("react_percentile", ct.c_double), ("cov_policy", ct.c_int), ("shrinkage", ct.c_double),
                ("knn_index", ct.c_int), ("ivf_lists", SZ), ("ivf_probe", SZ), ("weight", P), ("bias", P),
                ("ldw", SZ), ("head_rows", SZ)]


lib.smx_feature_method_requires.restype = ct.c_char_p
lib.smx_status_string.restype = ct.c_char_p
METHODS = {"mahalanobis": 1, "knn": 2, "vim": 3, "residual": 4, "react": 5}


def built(name):
    why = lib.smx_feature_method_requires(METHODS[name])
    if why:
        print(f"skip {name}: {why.decode()}")
    return why is None


def ptr(a):
    return a.ctypes.data_as(P)


class Model:
    def __init__(self, X, y, W, b, dtype=np.float64, **kw):
        self.keep = []
        c = Config()
        c.features = X.shape[1]
        c.classes = 0 if y is None else W.shape[0] if W is not None else int(y.max()) + 1
        for k, v in kw.items():
            setattr(c, k, v)
        if W is not None:
            Wc, bc = np.ascontiguousarray(W, np.float64), np.ascontiguousarray(b, np.float64)
            self.keep += [Wc, bc]
            c.weight, c.bias, c.ldw = ptr(Wc), ptr(bc), X.shape[1]
            if y is None:
                c.head_rows = W.shape[0]
        self.m = P()
        s = lib.smx_feature_model_create(ct.byref(c), ct.byref(self.m))
        assert s == 0, lib.smx_status_string(s)
        Xc = np.ascontiguousarray(X, dtype)
        yc = None if y is None else np.ascontiguousarray(y, np.int64)
        fit = lib.smx_feature_model_fit_batch_f64 if dtype == np.float64 else lib.smx_feature_model_fit_batch_f32
        for i in range(0, len(X), 97):   # streamed in uneven batches
            n = min(97, len(X) - i)
            s = fit(self.m, ptr(Xc[i:]), SZ(X.shape[1]), None if yc is None else ptr(yc[i:]), SZ(n))
            assert s == 0, lib.smx_status_string(s)
        self.status = lib.smx_feature_model_finish(self.m, None)

    def score(self, name, T, dtype=np.float64, logits=None):
        Tc = np.ascontiguousarray(T, dtype)
        out = np.full(len(T), np.nan)
        f = lib.smx_feature_score_f64 if dtype == np.float64 else lib.smx_feature_score_f32
        L = None if logits is None else np.ascontiguousarray(logits, dtype)
        s = f(self.m, METHODS[name], ptr(Tc), SZ(T.shape[1]), None if L is None else ptr(L),
              SZ(0 if L is None else L.shape[1]), SZ(len(T)), ptr(out), None)
        assert s == 0, (name, lib.smx_status_string(s))
        return out

    def __del__(self):
        lib.smx_feature_model_destroy(self.m)


def close(name, got, want, tol):
    err = np.max(np.abs(got - want) / np.maximum(1.0, np.abs(want)))
    check(err <= tol, f"{name}: max relative error {err:.3g} > {tol:g}")
    print(f"{name:28s} max rel err {err:.2e}")


X, y, T, W, b = ref.toy()
F, C, D, k = X.shape[1], W.shape[0], 8, 10
for dt in (np.float64, np.float32):
    tag = "f64" if dt == np.float64 else "f32"
    M = Model(X, y, W, b, dtype=dt, k=k, vim_dim=D)
    check(M.status == 0, f"finish {tag}: {lib.smx_status_string(M.status)}")
    if built("mahalanobis"):
        close(f"mahalanobis {tag}", M.score("mahalanobis", T, dt), ref.mahalanobis(X, y, C, T), 1e-6)
    if built("knn"):
        # float32 bank: 2^-21 absolute (smx_features.h)
        got, want = M.score("knn", T, dt), ref.knn(X, T, k)
        check(np.max(np.abs(got - want)) <= 2.0 ** -21, f"knn {tag}: {np.max(np.abs(got - want))}")
        print(f"knn {tag:24s} max abs err {np.max(np.abs(got - want)):.2e}")
    if built("vim"):
        close(f"vim {tag}", M.score("vim", T, dt), ref.vim(X, W, b, D, T), 1e-6)
        L = T @ W.T + b + 0.25   # logits passed in are used as given
        close(f"vim logits {tag}", M.score("vim", T, dt, logits=L), ref.vim(X, W, b, D, T, logits=L.astype(dt).astype(np.float64)), 1e-6)
        close(f"residual {tag}", M.score("residual", T, dt), ref.residual(X, W, b, D, T), 1e-6)
    close(f"react {tag}", M.score("react", T, dt), ref.react(X, W, b, 90, T), 1e-6)
    for p in (50.0, 99.5, 100.0):
        Mp = Model(X, y, W, b, dtype=dt, methods=1 << 5, react_percentile=p)
        close(f"react p={p} {tag}", Mp.score("react", T, dt), ref.react(X, W, b, p, T), 1e-6)

# the default ViM dimension: F / 2 below 768 features
if built("vim"):
    M = Model(X, y, W, b, methods=1 << 3)
    close("vim default D = F/2", M.score("vim", T), ref.vim(X, W, b, F // 2, T), 1e-6)

# singular covariance: the last column is the sum of two others
if built("mahalanobis"):
    Z = X.copy()
    Z[:, -1] = Z[:, 0] + Z[:, 1]
    Zt = T.copy()
    Zt[:, -1] = Zt[:, 0] + Zt[:, 1]
    M = Model(Z, y, W, b, methods=1 << 1)
    check(M.status == 81, f"singular: SMX_E_SINGULAR, got {M.status}")
    M = Model(Z, y, W, b, methods=1 << 1, cov_policy=1)
    close("mahalanobis pinv", M.score("mahalanobis", Zt), ref.mahalanobis(Z, y, C, Zt, "pinv"), 1e-6)
    M = Model(Z, y, W, b, methods=1 << 1, cov_policy=2, shrinkage=0.2)
    close("mahalanobis shrink 0.2", M.score("mahalanobis", Zt), ref.mahalanobis(Z, y, C, Zt, "shrink", 0.2), 1e-6)

# kNN with duplicated training rows (ties among neighbours), IVF probing every list
if built("knn"):
    Xd = np.concatenate([X, X[:50], X[:50]])
    M = Model(Xd, None, None, None, methods=1 << 2, k=3)
    got, want = M.score("knn", X[:60]), ref.knn(Xd, X[:60], 3)
    check(np.max(np.abs(got - want)) <= 2.0 ** -21, f"knn duplicates {np.max(np.abs(got - want))}")
    check(np.all(np.abs(got[:50]) < 1e-12), "rows with 3 copies in the bank: 3rd nearest at distance 0 (f32 bank)")
    M = Model(X, None, None, None, methods=1 << 2, k=k, knn_index=1, ivf_lists=8, ivf_probe=8)
    got, want = M.score("knn", T), ref.knn(X, T, k)
    check(np.max(np.abs(got - want)) <= 2.0 ** -21, f"IVF probing all lists = exact: {np.max(np.abs(got - want))}")

finish("test_features_ref")
