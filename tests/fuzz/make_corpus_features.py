#!/usr/bin/python3
"""Seed corpus of fuzz_feature_model: small models written by smx fit-features,
each without its last 8 bytes (the checksum, which the target appends).
Usage: make_corpus_features.py path/to/smx OUTDIR"""
import os
import subprocess
import sys
import tempfile

import numpy as np

smx, out = sys.argv[1], sys.argv[2]
os.makedirs(out, exist_ok=True)
rng = np.random.default_rng(5)
tmp = tempfile.mkdtemp()
X = np.maximum(rng.normal(0.5, 1, (12, 4)), 0).astype(np.float32)
y = (np.arange(12) % 3).astype(np.int32)
W, b = rng.normal(0, 1, (3, 4)), rng.normal(0, 1, 3)
for name, a in (("x", X), ("y", y), ("w", W), ("b", b)):
    np.save(os.path.join(tmp, name + ".npy"), a)
p = lambda n: os.path.join(tmp, n + ".npy")
cases = {
    "all": ["--train-labels", p("y"), "--weight", p("w"), "--bias", p("b"), "--knn-k", "3", "--vim-dim", "2",
            "--cov", "pinv"],
    "knn_ivf": ["--knn-k", "2", "--knn-index", "ivf"],
    "react": ["--weight", p("w"), "--feature-scores", "react", "--react-percentile", "50"],
    "mahalanobis_shrink": ["--train-labels", p("y"), "--feature-scores", "mahalanobis", "--cov", "shrink=0.5"],
}
for name, args in cases.items():
    m = os.path.join(tmp, name + ".smxf")
    subprocess.run([smx, "fit-features", "--train-features", p("x"), *args, "-o", m, "-q"], check=True)
    with open(m, "rb") as fh:
        blob = fh.read()
    with open(os.path.join(out, name), "wb") as fh:
        fh.write(blob[:-8])
