"""The refusal of complex values where a derivative rule is stated for real numbers alone.

autotrace differentiates complex values where the function is holomorphic (np.exp, matmul,
np.linalg.inv, ...): the tangent is f'(z) dz, the gradient g f'(z), as JAX's are for
holomorphic functions. A function that is not holomorphic in a complex argument (its value
reads |z|, conj(z) or the real part: np.linalg.norm, np.var, np.vdot's first argument) has no
such derivative, and its rules, written for real arrays, would give a wrong one silently; it is
refused where it runs with one, by `refuse_complex`.
"""
from __future__ import annotations

import numbers


def is_complex(value) -> bool:
    """Whether `value` (an array of any array library, a traced value, a number) is complex."""
    dtype = getattr(value, "dtype", None)
    if dtype is not None:
        return "complex" in str(dtype)
    if isinstance(value, (list, tuple)):
        return any(is_complex(item) for item in value)
    return isinstance(value, numbers.Complex) and not isinstance(value, numbers.Real)


def refuse_complex(value, function: str, why: str = "", values: str = "complex values") -> None:
    """Raise NotImplementedError where `value`, an argument of `function` whose rules are for
    real numbers, is complex. `why`: what its derivative would need (default: conjugates);
    `values`: what it is not differentiated at."""
    if is_complex(value):
        raise NotImplementedError(
            f"autotrace does not differentiate {function} of {values}: "
            f"{why or 'it is not holomorphic (its derivative needs conjugates)'}, and "
            "autotrace's complex derivatives are those of holomorphic functions alone: keep "
            "the real and imaginary parts as real arrays of their own, re and im, and write "
            "it with them")


def refuse_real_part(value, result, function: str) -> None:
    """Raise where a complex `value` became the real `result` (a cast, a fill of a real
    array), which keeps its real part alone: not holomorphic, and its gradient would be
    complex where the value lost its imaginary part."""
    if is_complex(value) and not is_complex(result):
        refuse_complex(value, function, "a real result keeps its real part alone, which is "
                       "not holomorphic", "complex values into a real array")
