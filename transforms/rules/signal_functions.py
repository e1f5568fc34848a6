"""Rules of NumPy's signal and polynomial functions: np.convolve, np.correlate, np.trapezoid.

np.convolve and np.correlate are bilinear, so `bilinear` gives their tangents (one call per
argument), and their gradients are convolutions again (runtime/derivatives/signals.py says
which): these rules are closed, to any order. np.correlate conjugates v, so it is not
holomorphic in a complex v, which reverse mode refuses; its tangent, R-linear, is right.
"""
import numpy as np

from ...runtime.derivatives.adjoint_ops import unbroadcast
from ...runtime.derivatives.real_only import refuse_complex
from ...runtime.derivatives.signals import (difference_shape, full_padding, product_shape,
                                            side_padding, width_axis)
from ...runtime.derivatives.structure import zeros_like
from ...runtime.primitives.trapezoid import along, width_shape
from .core import adjoint, constant, d, tangent
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


constant(along, side_padding, product_shape, width_axis, width_shape, difference_shape)


@adjoint(np.trapezoid)
def trapezoid_rule(z, y, x=None, dx=1.0, axis=-1):
    # z = sum(widths * (y[1:] + y[:-1]) / 2) along the axis, widths dx or np.diff(x) (a 1-d
    # x's set along the axis): y's gradient reaches each sample from its two pairs, the
    # widths' goes to dx, or to x as np.diff's does.
    half = np.expand_dims(d[z], axis) / 2.0
    head = y[along(np.ndim(y), axis, None, -1)]
    pairs = y[along(np.ndim(y), axis, 1, None)] + head
    widths = dx if x is None else np.reshape(np.diff(x, axis=width_axis(x, axis)),
                                             width_shape(np.ndim(y), x, axis))
    g_terms = np.broadcast_to(half, product_shape(widths, pairs))  # the products' gradient
    g_pairs = unbroadcast(widths * g_terms, head)
    d[y] = (np.pad(g_pairs, side_padding(np.ndim(y), axis, 1, 0))
            + np.pad(g_pairs, side_padding(np.ndim(y), axis, 0, 1)))
    g_widths = unbroadcast(g_terms * pairs, widths)
    d[dx] = g_widths if x is None else zeros_like(dx)
    g_differences = 0.0 if x is None else np.reshape(g_widths, difference_shape(x, axis))
    d[x] = 0.0 if x is None else (
        np.pad(g_differences, side_padding(np.ndim(x), width_axis(x, axis), 1, 0))
        - np.pad(g_differences, side_padding(np.ndim(x), width_axis(x, axis), 0, 1)))


@tangent(np.trapezoid)
def trapezoid_tangent(z, y, x=None, dx=1.0, axis=-1):
    # Linear in y, and in the widths, so in (x, dx) together.
    d[z] = np.trapezoid(d[y], x, dx, axis) + (
        np.trapezoid(y, dx=d[dx], axis=axis) if x is None
        else np.trapezoid(y, d[x], axis=axis))
