"""The parts of complex values in derivatives: np.real, np.imag, np.conj and np.abs of a
complex z, which are not holomorphic, differentiated as JAX differentiates them.

autotrace pairs a gradient g with a tangent t by Re(g t), without a conjugate, as JAX does: the
gradient of a holomorphic f is g f'(z) (real_only.py), and that of a function that is not
holomorphic is the transpose of its tangent map for this pairing:

    np.real(z)    tangent Re(t)                gradient Re(g), complex (z's dtype)
    np.imag(z)    tangent Im(t)                gradient -1j Re(g)
    np.conj(z)    tangent conj(t)              gradient conj(g)
    np.abs(z)     tangent Re(t s)              gradient Re(g) s,  s = conj(z) / |z|, 0 at 0

Of a real x these are NumPy's real functions: np.real and np.conj pass the gradient on, np.imag
gives none, and the slope s of |x| is sign(x). A real value's gradient is the real part of what
reaches it: inside a derivative it may be complex (`1j * x` gives x the gradient 1j g), and only
its real part means anything, so the rules above read Re(g), and a real argument gets the real
part (structure.match), as in JAX, where a real value's gradient is real.

A complex value's gradient is complex from its first term on, whatever reaches it: np.real's
gives Re(g) in z's complex dtype (`real_gradient`), not a real array, which a later complex term
(`np.imag(z[0])`'s -1j Re(g)) added into an item of it would lose its imaginary part in, and
which would make the gradient's dtype depend on the order of the terms (one branch of a traced
`if` real, the other complex).
"""
from __future__ import annotations

import numpy as np

from ..containers import zeros_like
from ..devices import array_module
from .real_only import is_complex, real_part


def real_gradient(g, z):
    """The gradient of `z` of np.real(z), given the result's gradient `g`: Re(g) in a complex
    z's dtype (the imaginary parts 0j), as a complex value's gradient is; Re(g) for a real z,
    whose np.real is z (a real value's gradient may be complex inside a derivative)."""
    if not is_complex(z):
        return real_part(g)
    return real_part(g) + 0j


def imag_gradient(g, z):
    """The gradient of `z` of np.imag(z), given the result's gradient `g`: -1j Re(g) for a
    complex z (Im(t) is Re(-1j t)); zeros for a real z, whose np.imag is 0."""
    if not is_complex(z):
        return zeros_like(z)
    return -1j * real_part(g)


def imag_of(h, z):
    """Im(h) for a complex `z`, zeros of z's shape for a real one: the transpose of
    `imag_gradient(., z)`, which is this one's (Re(h (-1j g)) = g Im(h) for a real g)."""
    if not is_complex(z):
        return zeros_like(z)
    return h.imag if isinstance(h, complex) else array_module(h).imag(h)


def abs_slope(x):
    """The slope s of |x|, which its gradient g s and its tangent Re(t s) read: sign(x) for a
    real x; conj(z) / |z| for a complex z, 0 at 0 (the subgradient sign(0) is too)."""
    if not is_complex(x):
        return array_module(x).sign(x) if hasattr(x, "dtype") else float(np.sign(x))
    if not hasattr(x, "dtype"):  # a Python complex number
        return x.conjugate() / abs(x) if x else 0j
    xp = array_module(x)
    size = xp.abs(x)
    return xp.where(size == 0, 0, xp.conj(x) / xp.where(size == 0, 1, size))


def real_if_real(g, value):
    """`g`, the gradient of a gradient that `match` handed back for `value`: its real part
    where `value` is real (a real argument's gradient is the real part of a complex one, whose
    gradient, the transpose, is Re(g)); `g` itself where `value` is complex."""
    return g if is_complex(value) else real_part(g)
