#!/usr/bin/python3
"""Writes the seed corpus of fuzz_npy_header into corpus/npy_header/.

Run from this directory with the system python3 (python3-numpy):
    /usr/bin/python3 make_corpus.py
Valid files of each format version and several dtypes (with their data, so
the target's file round trip runs), and a few malformed headers.
"""
import io
import os

import numpy as np
from numpy.lib import format as npf

OUT = "corpus/npy_header"


def npy(a, version=None):
    b = io.BytesIO()
    npf.write_array(b, a, version=version, allow_pickle=False)
    return b.getvalue()


def raw(text, major=1):
    t = text.encode("utf-8")
    n = len(t).to_bytes(2 if major == 1 else 4, "little")
    return b"\x93NUMPY" + bytes([major, 0]) + n + t


seeds = {
    "v1-f32-2d": npy(np.arange(6, dtype="<f4").reshape(2, 3)),
    "v1-f64-be-fortran": npy(np.asfortranarray(np.arange(6, dtype=">f8").reshape(2, 3))),
    "v1-i16-be-3d-fortran": npy(np.asfortranarray(np.arange(12, dtype=">i2").reshape(2, 3, 2))),
    "v1-bool": npy(np.array([True, False, True])),
    "v1-u8-scalar": npy(np.array(7, dtype="u1")),
    "v1-i64-empty": npy(np.zeros((0, 5), dtype="<i8")),
    "v1-u64-extremes": npy(np.array([0, 2**64 - 1], dtype="<u8")),
    "v2-f16-specials": npy(np.array([0, -0.0, np.inf, np.nan, 65504, 6e-8], dtype="<f2"), version=(2, 0)),
    "v3-u32": npy(np.arange(4, dtype="<u4"), version=(3, 0)),
    "v1-i32-header-only": raw("{'descr': '<i4', 'fortran_order': False, 'shape': (3, 1), }\n"),
    "bad-duplicate-key": raw("{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': (1,), }\n"),
    "bad-shape-not-tuple": raw("{'descr': '<f4', 'fortran_order': False, 'shape': (5), }\n"),
    "bad-complex-dtype": raw("{'descr': '<c8', 'fortran_order': False, 'shape': (1,), }\n"),
    "bad-no-newline": raw("{'descr': '<f4', 'fortran_order': False, 'shape': (1,), }"),
    "bad-magic": b"\x93NUMPX\x01\x00\x04\x00{}\n\n",
    "bad-huge-shape": raw("{'descr': '<f8', 'fortran_order': True, 'shape': (4294967296, 4294967296), }\n", 2),
}
os.makedirs(OUT, exist_ok=True)
for name, data in seeds.items():
    with open(os.path.join(OUT, name), "wb") as f:
        f.write(data)
