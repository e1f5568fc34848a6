"""The error function, which NumPy lacks (and scipy is not a dependency): `erf`, for the exact
GELU. It is elementwise NumPy (or CuPy) code after fdlibm's s_erf.c (Sun Microsystems, 1993):
rational approximations on [0, 0.84375), [0.84375, 1.25), [1.25, 1/0.35) and [1/0.35, 6), and
+-1 beyond; it agrees with `math.erf` to a few units in the last place. Its rules are in
transforms/rules/nn_functions.py; in a traced graph it is one op, `erf`.
"""
from __future__ import annotations

import numpy as np

from ..abstract import AbstractArray
from ..devices import array_module
from .batching import elementwise_batching
from .registry import bind, define_runtime_function

# erf(x) = x + x P(x^2) / Q(x^2) on [0, 0.84375).
_SMALL_P = (1.28379167095512558561e-01, -3.25042107247001499370e-01,
            -2.84817495755985104766e-02, -5.77027029648944159157e-03,
            -2.37630166566501626084e-05)
_SMALL_Q = (1.0, 3.97917223959155352819e-01, 6.50222499887672944485e-02,
            5.08130628187576562776e-03, 1.32494738004321644526e-04,
            -3.96022827877536812320e-06)
# erf(x) = erf(1) + P(x - 1) / Q(x - 1) on [0.84375, 1.25); _ERF_ONE is erf(1) to single
# precision, the rest is in P / Q.
_ERF_ONE = 8.45062911510467529297e-01
_NEAR_ONE_P = (-2.36211856075265944077e-03, 4.14856118683748331666e-01,
               -3.72207876035701323847e-01, 3.18346619901161753674e-01,
               -1.10894694282396677476e-01, 3.54783043256182359371e-02,
               -2.16637559486879084300e-03)
_NEAR_ONE_Q = (1.0, 1.06420880400844228286e-01, 5.40397917702171048937e-01,
               7.18286544141962662868e-02, 1.26171219808761642112e-01,
               1.36370839120290507362e-02, 1.19844998467991074170e-02)
# erfc(x) = exp(-x^2 - 0.5625 + P(1/x^2) / Q(1/x^2)) / x on [1.25, 1/0.35) and [1/0.35, 6).
_MIDDLE_P = (-9.86494403484714822705e-03, -6.93858572707181764372e-01,
             -1.05586262253232909814e+01, -6.23753324503260060396e+01,
             -1.62396669462573470355e+02, -1.84605092906711035994e+02,
             -8.12874355063065934246e+01, -9.81432934416914548592e+00)
_MIDDLE_Q = (1.0, 1.96512716674392571292e+01, 1.37657754143519042600e+02,
             4.34565877475229228821e+02, 6.45387271733267880336e+02,
             4.29008140027567833386e+02, 1.08635005541779435134e+02,
             6.57024977031928170135e+00, -6.04244152148580987438e-02)
_TAIL_P = (-9.86494292470009928597e-03, -7.99283237680523006574e-01,
           -1.77579549177547519889e+01, -1.60636384855821916062e+02,
           -6.37566443368389627722e+02, -1.02509513161107724954e+03,
           -4.83519191608651397019e+02)
_TAIL_Q = (1.0, 3.03380607434824582924e+01, 3.25792512996573918826e+02,
           1.53672958608443695994e+03, 3.19985821950859553908e+03,
           2.55305040643316442583e+03, 4.74528541206955367215e+02,
           -2.24409524465858183362e+01)


def erf(x):
    """The error function, 2/sqrt(pi) times the integral of exp(-t^2) from 0 to x, elementwise.

    Arguments:
        x: an array or a number.

    Returns:
        An array of x's shape, floating point (float64 for integer x).

    Examples:
        >>> erf(np.array([0.0, 0.5, 3.0]))
        array([0.        , 0.52049988, 0.99997791])
    """
    return bind("erf", x)


def _polynomial(coefficients, t):
    result = coefficients[-1]
    for coefficient in coefficients[-2::-1]:
        result = result * t + coefficient
    return result


def _erf(x):
    xp = array_module(x)
    x = xp.asarray(x)
    if x.dtype.kind == "c":  # (the approximation below is of a real erf)
        raise TypeError("autotrace's erf takes real values, not complex ones: keep the real "
                        "and imaginary parts as real arrays of their own")
    if x.dtype.kind not in "fc":
        x = x.astype(np.float64)
    size = xp.abs(x)
    square = x * x
    # Every branch is computed everywhere and the right one picked: the others may overflow.
    with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
        small = x + x * (_polynomial(_SMALL_P, square) / _polynomial(_SMALL_Q, square))
        near_one = _ERF_ONE + (_polynomial(_NEAR_ONE_P, size - 1.0)
                               / _polynomial(_NEAR_ONE_Q, size - 1.0))
        inverse_square = 1.0 / square
        middle = _polynomial(_MIDDLE_P, inverse_square) / _polynomial(_MIDDLE_Q, inverse_square)
        tail = _polynomial(_TAIL_P, inverse_square) / _polynomial(_TAIL_Q, inverse_square)
        ratio = xp.where(size < 1.0 / 0.35, middle, tail)
        far = 1.0 - xp.exp(-square - 0.5625 + ratio) / size
    magnitude = xp.where(size < 1.25, near_one, xp.where(size < 6.0, far, 1.0))
    result = xp.where(size < 0.84375, small, xp.sign(x) * magnitude)
    return result.astype(x.dtype, copy=False)[()]  # a NumPy scalar for a 0-d x


def _erf_shape(x):
    if not isinstance(x, AbstractArray):
        return AbstractArray((), np.dtype(np.float64))
    dtype = x.dtype if x.dtype.kind in "fc" else np.dtype(np.float64)
    return AbstractArray(x.shape, dtype, x.device)


define_runtime_function("erf", _erf, _erf_shape, dispatcher=erf, batching=elementwise_batching)
