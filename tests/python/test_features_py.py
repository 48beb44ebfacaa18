"""smx.FeatureOOD against the float64 references of feature_ref.py (written
from the papers, not from smx), on synthetic float32-exact data and on the
shipped digits MLP features (data/digits-ood/mlp, expected_features.json),
plus the edge cases: tied/duplicate training rows, k > bank, a class of one
sample, a singular covariance (error, pinv, shrinkage), W of the wrong shape,
NaN features, an empty set, save/load and corrupted files, threads 1/2/7.
Methods this build lacks are skipped (and must raise RuntimeError naming the
Debian package)."""
import json
import os
import tempfile
import unittest

import numpy as np

import feature_ref as ref
import smx
from smx import _smx

HERE = os.path.dirname(os.path.abspath(__file__))
MLP = os.path.join(HERE, "..", "..", "data", "digits-ood", "mlp")


def built(m):
    return _smx._feature_requires(m) is None


def close(t, got, want, tol=1e-6, absolute=False):
    err = np.abs(got - want) if absolute else np.abs(got - want) / np.maximum(1.0, np.abs(want))
    t.assertLessEqual(float(np.max(err, initial=0.0)), tol)


class ToyReference(unittest.TestCase):
    def setUp(self):
        self.X, self.y, self.T, self.W, self.b = ref.toy(seed=3)

    def test_every_method_f64_and_f32(self):
        X, y, T, W, b = self.X, self.y, self.T, self.W, self.b
        for dt in (np.float64, np.float32):
            m = smx.FeatureOOD(X.astype(dt), y, W, b, k=7, vim_dim=6)
            Td = T.astype(dt)
            if built("mahalanobis"):
                close(self, m.score(Td, "mahalanobis"), ref.mahalanobis(X, y, W.shape[0], T))
            if built("knn"):
                close(self, m.score(Td, "knn"), ref.knn(X, T, 7), 2.0 ** -21, absolute=True)
            if built("vim"):
                close(self, m.score(Td, "vim"), ref.vim(X, W, b, 6, T))
                close(self, m.score(Td, "residual"), ref.residual(X, W, b, 6, T))
            close(self, m.score(Td, "react"), ref.react(X, W, b, 90, T))

    def test_strided_rows_and_threads(self):
        X, y, T, W, b = self.X, self.y, self.T, self.W, self.b
        big = np.zeros((2 * len(X), X.shape[1] + 3))
        big[::2, :X.shape[1]] = X
        m = smx.FeatureOOD(big[::2, :X.shape[1]], y, W, b, k=5)   # any row stride
        TT = np.concatenate([T] * 26)                               # 2600 rows: several blocks (kNN: 1024)
        for method in m.methods:
            a = m.score(TT, method, threads=1)
            for t in (2, 7):
                self.assertTrue(np.array_equal(a, m.score(TT, method, threads=t)), f"{method} threads {t}")

    def test_vim_logits_given(self):
        if not built("vim"):
            self.skipTest(_smx._feature_requires("vim"))
        X, y, T, W, b = self.X, self.y, self.T, self.W, self.b
        m = smx.FeatureOOD(X, y, W, b, vim_dim=6)
        L = T @ W.T + b - 0.5
        close(self, m.score(T, "vim", logits=L), ref.vim(X, W, b, 6, T, logits=L))

    def test_save_load_and_corrupt_files(self):
        X, y, T, W, b = self.X, self.y, self.T, self.W, self.b
        m = smx.FeatureOOD(X, y, W, b, k=5, cov="pinv")
        with tempfile.TemporaryDirectory() as d:
            p = os.path.join(d, "m.smxf")
            m.save(p)
            l2 = smx.FeatureOOD.load(p, threads=2)
            self.assertEqual(l2.methods, m.methods)
            for method in m.methods:
                self.assertTrue(np.array_equal(m.score(T, method), l2.score(T, method)))
            with open(p, "rb") as fh:
                blob = fh.read()
            for bad in (blob[:-1], blob[:50], blob[:8] + b"\x07" + blob[9:],
                        blob[:200] + bytes([blob[200] ^ 1]) + blob[201:]):
                with open(p, "wb") as fh:
                    fh.write(bad)
                with self.assertRaisesRegex(ValueError, "not a feature model of this version"):
                    smx.FeatureOOD.load(p)
            with self.assertRaises(OSError):
                smx.FeatureOOD.load(os.path.join(d, "missing.smxf"))
            self.assertEqual(sorted(os.listdir(d)), ["m.smxf"])   # no temporary left

    def test_bad_inputs(self):
        X, y, T, W, b = self.X, self.y, self.T, self.W, self.b
        with self.assertRaisesRegex(ValueError, "transposed"):
            smx.FeatureOOD(X, y, W.T, b)
        with self.assertRaisesRegex(ValueError, "bias must hold"):
            smx.FeatureOOD(X, y, W, b[:-1])
        Xn = X.copy()
        Xn[5, 2] = np.nan
        with self.assertRaisesRegex(ValueError, "NaN or infinity .row 5"):
            smx.FeatureOOD(Xn, y, W, b)
        with self.assertRaisesRegex(ValueError, "weight has 4 classes"):
            smx.FeatureOOD(X, np.where(y == 0, 9, y), W, b)
        m = smx.FeatureOOD(X, y, W, b, k=5)
        Tn = T.copy()
        Tn[3, 0] = np.inf
        with self.assertRaisesRegex(ValueError, "row 3"):
            m.score(Tn, "react")
        with self.assertRaisesRegex(ValueError, "has 15 features"):
            m.score(T[:, 1:], "react")
        with self.assertRaisesRegex(ValueError, "unknown method"):
            m.score(T, "mds")
        self.assertEqual(m.score(T[:0], "react").shape, (0,))   # an empty set is fine
        if built("mahalanobis"):
            with self.assertRaisesRegex(ValueError, "not fitted for mahalanobis"):
                smx.FeatureOOD(X, None, W, b).score(T, "mahalanobis")
        else:   # this build lacks LAPACK: the message names the package instead
            with self.assertRaisesRegex(RuntimeError, "liblapacke-dev"):
                smx.FeatureOOD(X, None, W, b).score(T, "mahalanobis")

    def test_knn_duplicates_and_k_beyond_bank(self):
        if not built("knn"):
            with self.assertRaisesRegex(RuntimeError, "libfaiss-dev"):
                smx.FeatureOOD(self.X, methods=["knn"])
            return
        X = self.X[:30]
        Xd = np.concatenate([X, X, X])                # every row three times: ties
        m = smx.FeatureOOD(Xd, k=3, methods=["knn"])
        self.assertLess(float(np.max(np.abs(m.score(X, "knn")))), 1e-12)
        close(self, smx.FeatureOOD(Xd, k=4, methods=["knn"]).score(self.T, "knn"), ref.knn(Xd, self.T, 4),
              2.0 ** -21, absolute=True)
        with self.assertRaisesRegex(ValueError, "k = 91 exceeds the 90 training rows"):
            smx.FeatureOOD(Xd, k=91, methods=["knn"])

    def test_covariance_edges(self):
        if not built("mahalanobis"):
            with self.assertRaisesRegex(RuntimeError, "liblapacke-dev"):
                smx.FeatureOOD(self.X, self.y, methods=["mahalanobis"])
            return
        X, y, T, W = self.X, self.y.copy(), self.T, self.W
        y[y == 3] = 2
        y[11] = 3                                     # class 3: one sample
        m = smx.FeatureOOD(X, y, W, methods=["mahalanobis"])
        close(self, m.score(T, "mahalanobis"), ref.mahalanobis(X, y, 4, T))
        Z, Zt = X.copy(), T.copy()
        Z[:, 4] = 2 * Z[:, 1] - Z[:, 2]               # singular
        Zt[:, 4] = 2 * Zt[:, 1] - Zt[:, 2]
        with self.assertRaisesRegex(ValueError, "singular"):
            smx.FeatureOOD(Z, self.y, methods=["mahalanobis"])
        close(self, smx.FeatureOOD(Z, self.y, methods=["mahalanobis"], cov="pinv").score(Zt, "mahalanobis"),
              ref.mahalanobis(Z, self.y, 4, Zt, "pinv"))
        close(self, smx.FeatureOOD(Z, self.y, methods=["mahalanobis"], cov="shrink", shrinkage=0.05)
              .score(Zt, "mahalanobis"), ref.mahalanobis(Z, self.y, 4, Zt, "shrink", 0.05))
        y2 = self.y.copy()
        y2[y2 == 1] = 0                               # class 1 empty
        with self.assertRaisesRegex(ValueError, "class 1 has no training rows"):
            smx.FeatureOOD(X, y2, W, methods=["mahalanobis"])


class DigitsMLP(unittest.TestCase):
    def test_against_expected_features(self):
        ld = lambda n: np.load(os.path.join(MLP, n))
        with open(os.path.join(MLP, "expected_features.json")) as fh:
            exp = json.load(fh)
        m = smx.FeatureOOD(ld("train_features.npy"), ld("train_labels.npy"), ld("weight.npy"), ld("bias.npy"),
                           cov="pinv")
        ids = ld("id_features.npy")
        names = {"mahalanobis": "mahalanobis", "knn": "knn_k50", "vim": "vim_D16", "residual": "residual_D16",
                 "react": "react_p90"}
        for method in m.methods:
            close(self, m.score(ids[:5], method), np.array(exp["id_scores_first5"][names[method]]),
                  2.0 ** -21 if method == "knn" else 1e-6, absolute=method == "knn")
            s_id, s_ood = m.score(ids, method), m.score(ld("ood_features.npy"), method)
            got = smx.ood_metrics(s_id, s_ood)
            for key, want in exp["ood"][names[method]].items():
                self.assertAlmostEqual(got[key], want, delta=1e-6, msg=f"{method} {key}")


if __name__ == "__main__":
    unittest.main()
