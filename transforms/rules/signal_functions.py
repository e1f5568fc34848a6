"""Rules of NumPy's signal and polynomial functions: np.convolve, np.correlate, np.trapezoid,
np.polyval and np.vander.

np.convolve and np.correlate are bilinear, so `bilinear` gives their tangents (one call per
argument), and their gradients are convolutions again (runtime/derivatives/signals.py says
which): these rules are closed, to any order. np.correlate conjugates v, so it is not
holomorphic in a complex v, which reverse mode refuses; its tangent, R-linear, is right.
np.polyval's and np.vander's slopes are polynomials and powers again, and p's gradient a
reverse scan (runtime/derivatives/polynomials.py): closed too.
"""
import numpy as np

from ...runtime.derivatives.adjoint_ops import unbroadcast
from ...runtime.derivatives.polynomials import (polynomial_exponents, vander_exponents,
                                                vander_step)
from ...runtime.derivatives.real_only import refuse_complex
from ...runtime.derivatives.scans import reverse_scan, shift
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


constant(polynomial_exponents, vander_exponents, vander_step)


@adjoint(np.polyval)
def polyval_rule(y, p, x):
    # y = sum_k p[k] x^(n-1-k). p[k]'s gradient is g x^(n-1-k): the reverse scan, by x, of the
    # rows holding g in the last (the padding's first row, dropped, keeps none for no p).
    g_rows = np.pad(np.expand_dims(d[y], 0), side_padding(np.ndim(d[y]) + 1, 0, len(p), 0))[1:]
    g_powers = reverse_scan(g_rows, np.broadcast_to(x, np.shape(g_rows)), 0)
    d[p] = np.moveaxis(unbroadcast(np.moveaxis(g_powers, 0, -1), np.moveaxis(p, 0, -1)), -1, 0)
    # x's is g times the slope, the polynomial of coefficients p[k] (n-1-k), k < n-1.
    coefficients = np.asarray(p)
    d[x] = unbroadcast(d[y] * np.polyval(
        coefficients[:-1] * polynomial_exponents(coefficients), x), x)


@tangent(np.polyval)
def polyval_tangent(y, p, x):
    coefficients = np.asarray(p)
    d[y] = np.polyval(d[p], x) + d[x] * np.polyval(
        coefficients[:-1] * polynomial_exponents(coefficients), x)


@adjoint(np.vander)
def vander_rule(y, x, N=None, increasing=False):
    # Column j is x^e[j]: its slope e[j] x^(e[j]-1) is e[j] times the column beside it.
    d[x] = np.sum(d[y] * shift(y, 1, vander_step(increasing))
                  * vander_exponents(y, increasing), axis=1)


@tangent(np.vander)
def vander_tangent(y, x, N=None, increasing=False):
    d[y] = np.expand_dims(d[x], 1) * (shift(y, 1, vander_step(increasing))
                                      * vander_exponents(y, increasing))
