"""smx: exact, fast softmax, log-softmax and log-sum-exp over NumPy arrays.

A thin layer over the C library (libsmx, linked statically into smx._smx):
float16, float32 and float64 arrays of any layout, any axis (None: all
elements, as scipy), results in the input's dtype, the GIL released while
computing. See help(smx.softmax).

Deliberate differences from scipy.special and torch:
  * a row of all -inf gives softmax 0, log_softmax -inf and logsumexp -inf
    (scipy and torch give NaN); masked_row="nan" gives NaN like torch;
  * +inf entries give the limit: 1/k on the k entries equal to +inf, 0
    elsewhere (scipy and torch give NaN).
"""
from ._smx import __version__, isa, log_softmax, logsumexp, softmax

__all__ = ["softmax", "log_softmax", "logsumexp", "isa", "__version__"]
