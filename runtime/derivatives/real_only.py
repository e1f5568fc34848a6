"""The refusal of complex values where a derivative rule is stated for real numbers alone.

autotrace differentiates complex values where the function is holomorphic (np.exp, matmul,
np.linalg.inv, ...): the tangent is f'(z) dz, the gradient g f'(z), as JAX's are for
holomorphic functions; and np.real, np.imag, np.conj and np.abs of them as JAX does
(complex_parts.py). Another function that is not holomorphic in a complex argument (its value
reads |z|, conj(z) or the real part: np.linalg.norm, np.var, np.vdot's first argument) has
rules written for real arrays, which would give a wrong derivative silently; it is refused
where it runs with one, by `refuse_complex`.
"""
from __future__ import annotations

import numbers

import numpy as np

from ..devices import array_module


def is_complex(value) -> bool:
    """Whether `value` (an array of any array library, a traced value, a number) is complex."""
    dtype = getattr(value, "dtype", None)
    if dtype is not None:
        # A NumPy dtype (CuPy's and a traced value's are) says so by its kind; another array
        # library's (torch.complex64) by its name. (str of a NumPy dtype takes microseconds:
        # this runs in every gradient's seed and match.)
        return dtype.kind == "c" if isinstance(dtype, np.dtype) else "complex" in str(dtype)
    if isinstance(value, (list, tuple)):
        return any(is_complex(item) for item in value)
    return isinstance(value, numbers.Complex) and not isinstance(value, numbers.Real)


def real_part(gradient):
    """The real part of a complex `gradient` of a real value, `gradient` itself where it is
    real: a real value's gradient is real, as JAX's is (the gradient of a real x of a complex
    f(x) given the cotangent u is Re(u f'(x))), a Python float or a real array alike."""
    if not is_complex(gradient):
        return gradient
    if isinstance(gradient, complex):
        return gradient.real
    return array_module(gradient).real(gradient)


def refuse_complex(value, function: str, why: str = "", values: str = "complex values") -> None:
    """Raise NotImplementedError where `value`, an argument of `function` whose rules are for
    real numbers, is complex. `why`: what its derivative would need (default: conjugates);
    `values`: what it is not differentiated at."""
    if is_complex(value):
        raise NotImplementedError(
            f"autotrace does not differentiate {function} of {values}: "
            f"{why or 'it is not holomorphic (its derivative needs conjugates)'}, and "
            "autotrace's complex derivatives are those of holomorphic functions and of "
            "np.real, np.imag, np.conj and np.abs: write it with those (or keep the real and "
            "imaginary parts as real arrays of their own, re and im)")


def refuse_real_part(value, result, function: str) -> None:
    """Raise where a complex `value` became the real `result` (a cast, a fill of a real
    array), which keeps its real part alone: not holomorphic, and its gradient would be
    complex where the value lost its imaginary part."""
    if is_complex(value) and not is_complex(result):
        refuse_complex(value, function, "a real result keeps its real part alone, which is "
                       "not holomorphic", "complex values into a real array")
