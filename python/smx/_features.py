"""smx.FeatureOOD: the feature-based OOD scores of include/smx/smx_features.h
(Mahalanobis, deep kNN, ViM, the ViM residual, ReAct; OpenOOD v1.5's
definitions, docs/scores.md section 8). Higher = more in-distribution."""
import numpy as np

from . import _smx

METHODS = ("mahalanobis", "knn", "vim", "residual", "react")
_COV = {"error": 0, "pinv": 1, "shrink": 2}
_INDEX = {"flat": 0, "ivf": 1}


def _finite_rows(name, a):
    bad = ~np.isfinite(a).all(axis=1) if a.size else np.zeros(0, bool)
    if bad.any():
        raise ValueError(f"smx.FeatureOOD: {name} holds NaN or infinity (row {int(np.argmax(bad))})")


def _features(name, x, width=None):
    a = np.asarray(x)
    if a.dtype not in (np.float32, np.float64):
        if a.dtype.kind not in "fiu":
            raise TypeError(f"smx.FeatureOOD: {name} must hold numbers, not {a.dtype}")
        a = a.astype(np.float64)
    if a.ndim != 2:
        raise ValueError(f"smx.FeatureOOD: {name} must be 2-d (rows, features), not shape {a.shape}")
    if width is not None and a.shape[1] != width:
        raise ValueError(f"smx.FeatureOOD: {name} has {a.shape[1]} features, the model {width}")
    _finite_rows(name, a)
    return a


class FeatureOOD:
    """Fits the feature OOD scores on training features, then scores batches.

    FeatureOOD(train_features, train_labels=None, weight=None, bias=None, *, k=50, vim_dim=None,
               react_percentile=90, cov="error", shrinkage=None, knn_index="flat", ivf_lists=0,
               ivf_probe=0, methods=None, threads=0)

    train_features: (N, F) float32 or float64 (any row stride). train_labels: N class indices
    (mahalanobis needs them). weight (C, F) and bias (C,): the last layer as torch.nn.Linear
    stores it (logits = f @ weight.T + bias); vim, residual and react need them.
    k: kNN's neighbour (k > N is refused). vim_dim: ViM's principal dimension D (None: 1000 for
    F >= 2048, 512 for F >= 768, else F // 2). react_percentile: p in (0, 100].
    cov: what a singular Mahalanobis covariance does: "error" (ValueError), "pinv" (the
    pseudo-inverse, as OpenOOD through sklearn), or "shrink" ((1 - a) S + a tr(S)/F I, a = shrinkage).
    knn_index: "flat" (exact) or "ivf" (FAISS IndexIVFFlat, approximate).
    methods: the scores to fit (default: every one the inputs and this build allow).
    threads: 0 (default) every core, 1 the calling thread, n up to n; results never depend on it.
    A method this build lacks (no LAPACK or FAISS when smx was built) raises RuntimeError naming
    the Debian package.
    """

    def __init__(self, train_features, train_labels=None, weight=None, bias=None, *, k=50, vim_dim=None,
                 react_percentile=90, cov="error", shrinkage=None, knn_index="flat", ivf_lists=0, ivf_probe=0,
                 methods=None, threads=0):
        X = _features("train_features", train_features)
        N, F = X.shape
        if N == 0:
            raise ValueError("smx.FeatureOOD: train_features has no rows")
        classes = 0
        y = None
        if weight is not None:
            W = np.asarray(weight, np.float64)
            if W.ndim != 2 or W.shape[1] != F:
                hint = " (a (features, classes) matrix such as sklearn's coefs_ must be transposed)" \
                    if W.ndim == 2 and W.shape[0] == F else ""
                raise ValueError(f"smx.FeatureOOD: weight must be (classes, {F}) as torch.nn.Linear stores it, "
                                 f"not shape {W.shape}{hint}")
            if not np.isfinite(W).all():
                raise ValueError("smx.FeatureOOD: weight holds NaN or infinity")
            classes = W.shape[0]
            if bias is not None:
                b = np.asarray(bias, np.float64).reshape(-1)
                if b.shape != (classes,):
                    raise ValueError(f"smx.FeatureOOD: bias must hold {classes} values (one per row of weight), "
                                     f"not {b.size}")
                if not np.isfinite(b).all():
                    raise ValueError("smx.FeatureOOD: bias holds NaN or infinity")
            else:
                b = None
        else:
            W = b = None
            if bias is not None:
                raise ValueError("smx.FeatureOOD: bias needs weight")
        if train_labels is not None:
            y = np.asarray(train_labels)
            if y.shape != (N,) or (y.size and y.dtype.kind not in "iu" and not np.all(y == np.floor(y))):
                raise ValueError(f"smx.FeatureOOD: train_labels must be {N} class indices, not shape {y.shape}")
            y = y.astype(np.int64)
            top = int(y.max()) + 1 if y.size else 0
            if y.size and y.min() < 0:
                raise ValueError(f"smx.FeatureOOD: train_labels holds {int(y.min())}, below 0")
            if classes and top > classes:
                raise ValueError(f"smx.FeatureOOD: train_labels holds {top - 1}, but weight has {classes} classes")
            classes = classes or top
        if cov not in _COV:
            raise ValueError(f"smx.FeatureOOD: cov must be 'error', 'pinv' or 'shrink', not {cov!r}")
        if cov == "shrink" and not (shrinkage is not None and 0 < shrinkage <= 1):
            raise ValueError("smx.FeatureOOD: cov='shrink' needs shrinkage in (0, 1]")
        if knn_index not in _INDEX:
            raise ValueError(f"smx.FeatureOOD: knn_index must be 'flat' or 'ivf', not {knn_index!r}")
        if not 0 < react_percentile <= 100:
            raise ValueError(f"smx.FeatureOOD: react_percentile must be in (0, 100], not {react_percentile}")
        if vim_dim is not None and not 1 <= vim_dim < F:
            raise ValueError(f"smx.FeatureOOD: vim_dim must be in [1, {F}), not {vim_dim}")
        mask = 0
        for m in methods or ():
            if m not in METHODS:
                raise ValueError(f"smx.FeatureOOD: unknown method {m!r} (one of {', '.join(METHODS)})")
            if m == "mahalanobis" and y is None:
                raise ValueError("smx.FeatureOOD: mahalanobis needs train_labels")
            if m in ("vim", "residual", "react") and W is None:
                raise ValueError(f"smx.FeatureOOD: {m} needs weight (and bias)")
            mask |= 1 << (METHODS.index(m) + 1)
        want_knn = methods is None or "knn" in methods
        if want_knn and k > N and _smx._feature_requires("knn") is None:
            raise ValueError(f"smx.FeatureOOD: k = {k} exceeds the {N} training rows")
        if y is not None and (methods is None or "mahalanobis" in methods):
            empty = np.setdiff1d(np.arange(classes), y)
            if empty.size and (methods is not None or _smx._feature_requires("mahalanobis") is None):
                raise ValueError(f"smx.FeatureOOD: class {int(empty[0])} has no training rows (mahalanobis needs "
                                 "every class)")
        self._m = _smx._feature_fit(X, y, W, b, classes, k, vim_dim or 0, float(react_percentile), _COV[cov],
                                    float(shrinkage or 0.0), _INDEX[knn_index], ivf_lists, ivf_probe, mask, threads)
        self.threads = threads

    @classmethod
    def load(cls, path, *, threads=0):
        """A model saved by .save (or smx fit-features). ValueError for a file of another version,
        truncated or corrupted; OSError when it cannot be read."""
        self = cls.__new__(cls)
        self._m = _smx._feature_load(path)
        self.threads = threads
        return self

    def save(self, path):
        """Writes the fitted model (docs/feature-model.md) through a temporary file renamed over path."""
        _smx._feature_save(self._m, path)

    @property
    def info(self):
        """features, classes, rows, k, vim_dim, methods, react_percentile, react_threshold, vim_alpha,
        cov_rank."""
        return _smx._feature_info(self._m)

    @property
    def methods(self):
        return tuple(self.info["methods"])

    def score(self, features, method, logits=None, *, threads=None):
        """Scores of each row of features (n, F), float64, higher = more in-distribution.
        method: mahalanobis, knn, vim, residual or react. logits (vim only): the classifier's
        logits of these rows; default features @ weight.T + bias."""
        if method not in METHODS:
            raise ValueError(f"smx.FeatureOOD.score: unknown method {method!r} (one of {', '.join(METHODS)})")
        info = self.info
        if method not in info["methods"]:
            why = _smx._feature_requires(method)
            if why:
                raise RuntimeError(f"smx.FeatureOOD.score: {why}")
            raise ValueError(f"smx.FeatureOOD.score: the model was not fitted for {method} (its inputs lacked "
                             "labels or the last layer, or methods= left it out)")
        X = _features("features", features, info["features"])
        if logits is not None:
            if method != "vim":
                raise ValueError("smx.FeatureOOD.score: logits are for method='vim' only")
            L = np.asarray(logits, X.dtype)
            if L.ndim != 2 or L.shape[0] != X.shape[0] or (info["classes"] and L.shape[1] != info["classes"]):
                raise ValueError(f"smx.FeatureOOD.score: logits must be ({X.shape[0]}, classes), not {L.shape}")
            _finite_rows("logits", L)
            logits = L
        return _smx._feature_score(self._m, X, method, logits, self.threads if threads is None else threads)
