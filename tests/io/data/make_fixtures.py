#!/usr/bin/python3
"""Writes the NumPy-made .npy fixtures that tests/io/test_npy.c reads.

Run from this directory with the system python3 (python3-numpy):
    /usr/bin/python3 make_fixtures.py
The values follow formulas the C test recomputes, so no other sidecar is
needed; f16_specials_as_f32.npy is NumPy's own f16 -> f32 conversion of
f16_specials.npy, the reference for smx's.
"""
import numpy as np
from numpy.lib import format as npf


def save(name, a, version=None):
    with open(name, "wb") as f:
        npf.write_array(f, a, version=version, allow_pickle=False)


# value of C-order element i: i * 0.25 - 1
save("f32_c_2d.npy", (np.arange(12, dtype="<f4") * 0.25 - 1).reshape(3, 4))
# element (r, j): (4 r + j) * 1.5 - 4, big-endian, column-major in the file
save("f64_be_fortran_2d.npy", np.asfortranarray(((np.arange(12) * 1.5 - 4).reshape(3, 4)).astype(">f8")))
# element (a, b, c): C index i = 12 a + 4 b + c, value i, column-major
save("f32_fortran_3d.npy", np.asfortranarray(np.arange(24, dtype="<f4").reshape(2, 3, 4)))
# (i - 12) * 1000 as big-endian int16
save("i16_be_3d.npy", ((np.arange(24) - 12) * 1000).astype(">i2").reshape(2, 3, 4))
# i * 17
save("u8_1d.npy", (np.arange(16) * 17).astype("|u1"))
# i % 3 == 0
save("bool_2d.npy", (np.arange(6) % 3 == 0).reshape(2, 3))
save("i64_extremes.npy", np.array([-2**63, 2**63 - 1, 0, -1, 2**53 + 1, -(2**31) - 1], dtype="<i8"))
save("u64_extremes.npy", np.array([0, 2**64 - 1, 2**53 + 1, 2**32 + 3], dtype=">u8"))
save("u32_1d.npy", np.array([0, 1, 2**32 - 1, 2**31, 16777217], dtype="<u4"))
save("scalar_f8.npy", np.array(3.25, dtype="<f8"))
save("empty_f4.npy", np.zeros((0, 3), dtype="<f4"))
# i * 0.5 in format versions 2.0 and 3.0
save("v2_f4.npy", np.arange(6, dtype="<f4").reshape(2, 3) * 0.5, version=(2, 0))
save("v3_f4.npy", np.arange(6, dtype="<f4").reshape(2, 3) * 0.5, version=(3, 0))
sp = np.array([0.0, -0.0, 1.0, -2.5, 65504.0, 6e-8, 2.0**-24, 2.0**-14, np.inf, -np.inf, np.nan, 0.1,
               1.0 / 3, -65504.0, 5.96e-8, 1e-5], dtype="<f2")
save("f16_specials.npy", sp)
save("f16_specials_as_f32.npy", sp.astype("<f4"))
