"""Rules of NumPy's signal and polynomial functions: np.convolve, np.correlate.

np.convolve and np.correlate are bilinear, so `bilinear` gives their tangents (one call per
argument), and their gradients are convolutions again (runtime/derivatives/signals.py says
which): these rules are closed, to any order. np.correlate conjugates v, so it is not
holomorphic in a complex v, which reverse mode refuses; its tangent, R-linear, is right.
"""
import numpy as np

from ...runtime.derivatives.real_only import refuse_complex
from ...runtime.derivatives.signals import full_padding
from .core import constant, d
from .declarations import bilinear

constant(full_padding)


@bilinear(np.convolve)
def convolve_rule(y, a, v, mode="full"):
    # y = full[before:-after], full[k] = sum_j a[j] v[k - j]: the full cotangent, convolved
    # "valid" with the other argument reversed.
    g_full = np.pad(d[y], full_padding("convolve", np.size(a), np.size(v), mode))
    d[a] = np.reshape(np.convolve(g_full, np.flip(np.ravel(v)), "valid"), np.shape(a))
    d[v] = np.reshape(np.convolve(g_full, np.flip(np.ravel(a)), "valid"), np.shape(v))


@bilinear(np.correlate)
def correlate_rule(y, a, v, mode="valid"):
    refuse_complex(v, "numpy.correlate", "it correlates with the conjugate of v, which is not "
                   "holomorphic")
    # As np.convolve(a, w) with w = v reversed (v real).
    g_full = np.pad(d[y], full_padding("correlate", np.size(a), np.size(v), mode))
    d[a] = np.reshape(np.convolve(g_full, np.ravel(v), "valid"), np.shape(a))
    d[v] = np.reshape(np.flip(np.convolve(g_full, np.flip(np.ravel(a)), "valid")), np.shape(v))
