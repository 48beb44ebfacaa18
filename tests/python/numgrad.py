"""The reference gradient of the loss tests: central differences in float64."""
import numpy as np


def numgrad(f, x, h=1e-6):
    """central differences of sum(f(x)) in float64 (f may return one float or an array of losses)"""
    g = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        xp, xm = x.copy(), x.copy()
        xp[i] += h
        xm[i] -= h
        g[i] = (np.sum(f(xp)) - np.sum(f(xm))) / (2 * h)
    return g
