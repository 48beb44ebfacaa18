#!/usr/bin/python3
"""Writes the seed corpus of fuzz_npy_pipe into corpus/npy_pipe/.

Run from this directory with the system python3 (python3-numpy):
    /usr/bin/python3 make_corpus_pipe.py
Whole .npy files of several dtypes, byte orders and both orders (the
target streams them through a pipe), and the same cut short or followed
by stray bytes, which only the sequential reader can notice late.
"""
import io
import os

import numpy as np
from numpy.lib import format as npf

OUT = "corpus/npy_pipe"


def npy(a, version=None):
    b = io.BytesIO()
    npf.write_array(b, a, version=version, allow_pickle=False)
    return b.getvalue()


def header_only(text):
    """A v1 header for text, padded to 64 bytes as NumPy does, with no data after it."""
    t = text.encode("latin-1")
    pad = -(10 + len(t) + 1) % 64
    t += b" " * pad + b"\n"
    return b"\x93NUMPY\x01\x00" + len(t).to_bytes(2, "little") + t


rng = np.random.default_rng(7)
f32 = rng.standard_normal((5, 7)).astype("<f4")
seeds = {
    "f32-5x7": npy(f32),
    "f64-be-3x4-fortran": npy(np.asfortranarray(rng.standard_normal((3, 4)).astype(">f8"))),
    "f16-specials": npy(np.array([[0, -0.0, np.inf], [np.nan, 65504, 6e-8]], dtype="<f2")),
    "i16-be-2x3x2-fortran": npy(np.asfortranarray(np.arange(12, dtype=">i2").reshape(2, 3, 2))),
    "u8-1d": npy(np.arange(40, dtype="u1")),
    "bool-4x1": npy(np.array([[True], [False], [True], [True]])),
    "i64-extremes": npy(np.array([-2**63, 2**63 - 1, 0], dtype="<i8")),
    "u32-v3": npy(np.arange(6, dtype="<u4").reshape(3, 2), version=(3, 0)),
    "f64-scalar": npy(np.array(2.5, dtype="<f8")),
    "f32-empty-0x5": npy(np.zeros((0, 5), dtype="<f4")),
    "f32-empty-4x0": npy(np.zeros((4, 0), dtype="<f4")),
    "f32-600x3": npy(rng.standard_normal((600, 3)).astype("<f4")),
    "truncated-f32-5x7": npy(f32)[:-5],
    "truncated-header": npy(f32)[:40],
    "trailing-f32-5x7": npy(f32) + b"\0",
    "trailing-empty-0x5": npy(np.zeros((0, 5), dtype="<f4")) + b"x",
    "huge-fortran-no-data": header_only("{'descr': '<f8', 'fortran_order': True, 'shape': (1024, 1024), }"),
    "truncated-fortran": npy(np.asfortranarray(np.arange(12, dtype="<f8").reshape(3, 4)))[:-1],
    "huge-shape-no-data": header_only("{'descr': '<f4', 'fortran_order': False, 'shape': (9999999999, 1), }"),
}
os.makedirs(OUT, exist_ok=True)
for name, data in seeds.items():
    with open(os.path.join(OUT, name), "wb") as f:
        f.write(data)
