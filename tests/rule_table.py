"""The derivative-rule table as data: one `Entry` per call worth checking.

    Entry(name, func, make_args, kwargs, note, wrt, direction, align, make_kwargs, order)

name: the test id ("matmul/batched").
func: the function whose adjoint rule is checked (a NumPy function or a runtime helper).
make_args(rng): the positional arguments, drawn from a numpy Generator; deterministic for a
    seeded rng. Inputs stay away from points where the function is not differentiable (ties,
    kinks, the clip bounds, integer ratios of mod) and from domain edges.
kwargs: fixed keyword arguments; make_kwargs(rng), when given, draws more (arrays passed by
    keyword, like np.clip(a, min=lo)).
wrt: the positions (ints) and keywords (strs) of the differentiable arguments; None means every
    float argument (a Python float, a float array, or a list/tuple of those).
direction(v): maps a random direction to an admissible one (None: any direction).
align(y_perturbed, y): makes a perturbed output comparable to y before differencing
    (eigenvectors are defined up to sign).
order: the highest derivative order the rules get right at these inputs (1 where a second
    derivative is not defined by the rule bodies, e.g. prod at an exact zero).

tests/test_rules.py checks each entry's rule against central differences; the same table can
run through autotrace.grad to second order, as f(*args, **kwargs) contracted with a fixed dy.
"""
from __future__ import annotations

from typing import Any, Callable, NamedTuple

import math

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from autotrace.runtime.derivatives import adjoint_ops as ops
from autotrace.runtime.derivatives.copies import copied, deep_copied
from autotrace.runtime.derivatives.snapshots import in_place_result
from autotrace.runtime.derivatives import adjoint_products as products
from autotrace.runtime.derivatives import matrix_chains as chains
from autotrace.runtime.derivatives import (complex_parts, degenerate_matrices, exponent_logs,
                                           scans, structural_adjoints, triangles,
                                           weighted_pads)
from autotrace.runtime.primitives import adjugates
from autotrace.runtime.primitives.diagonal_fill import diagonal_values
from autotrace.runtime.primitives.out_writes import kept_where, masked_operand
from autotrace.runtime.primitives.linalg import lstsq_of_full_rank
from autotrace.runtime.primitives.math_special import erfc, gamma, lgamma, polygamma, polygamma_of
from tests.rule_table_fft import fft_table
from tests.rule_table_nn import nn_table
from tests.rule_table_signal import signal_table
from tests.rule_table_statistics import statistics_table


class Entry(NamedTuple):
    name: str
    func: Callable
    make_args: Callable[[np.random.Generator], tuple]
    kwargs: dict = {}
    note: str = ""
    wrt: Any = None
    direction: Callable | None = None
    align: Callable | None = None
    make_kwargs: Callable | None = None
    order: int = 2

    def arguments(self, rng):
        """(args, kwargs) for one call, drawn from `rng`."""
        kwargs = dict(self.kwargs)
        args = self.make_args(rng)
        if self.make_kwargs is not None:
            kwargs.update(self.make_kwargs(rng))
        return args, kwargs


# Argument makers.

def normal(*shapes):
    """make_args: one standard-normal array per shape (a Python float for shape None)."""
    return lambda rng: tuple(float(rng.standard_normal()) if s is None
                             else rng.standard_normal(s) for s in shapes)


def uniform(low, high, *shapes):
    """make_args: one uniform array per shape (a Python float for shape None)."""
    return lambda rng: tuple(float(rng.uniform(low, high)) if s is None
                             else rng.uniform(low, high, s) for s in shapes)


def away_from_zero(rng, shape):
    return rng.choice([-1.0, 1.0], shape) * rng.uniform(0.3, 2.0, shape)


def with_zeros(rng, shape):
    """Values away from zero, but with zeros at the first and a middle place of the last axis
    (two zeros in each line along it) and, in 1-d, the last place too."""
    a = away_from_zero(rng, shape)
    a[..., 0] = 0.0
    a[..., shape[-1] // 2] = 0.0
    if len(shape) == 1:
        a[-1] = 0.0
    return a


def one_and_two_zeros(rng):
    """A (2, 3, 2) array whose lines a[:, j, :] hold one zero (j = 0), two (j = 1) and none."""
    a = away_from_zero(rng, (2, 3, 2))
    a[1, 0, 0] = a[0, 1, 1] = a[1, 1, 0] = 0.0
    return a


def distinct(rng, shape):
    """Values at least 0.1 apart: no ties for max, min and sort."""
    size = int(np.prod(shape))
    return (rng.permutation(size) * 0.3 + rng.uniform(0.0, 0.1, size) - 0.15 * size).reshape(shape)


def rank_deficient(rng, n, batch=()):
    """A matrix of rank n - 1: singular, with cofactors that are not all 0."""
    return rng.standard_normal(batch + (n, n - 1)) @ rng.standard_normal(batch + (n - 1, n))


def spd(rng, n, batch=()):
    a = rng.standard_normal(batch + (n, n))
    return a @ np.swapaxes(a, -1, -2) + n * np.eye(n)


def well_conditioned(rng, n, batch=()):
    return rng.standard_normal(batch + (n, n)) + 2.0 * n * np.eye(n)


def near_identity(rng, n, batch=()):
    """A matrix near the identity, whose powers stay of moderate size."""
    return np.eye(n) + 0.3 * rng.standard_normal(batch + (n, n))


def symmetric_spread(rng, n):
    """A symmetric matrix with eigenvalues at least 1 apart."""
    q, _ = np.linalg.qr(rng.standard_normal((n, n)))
    return (q * (np.arange(n) * 1.5 + rng.uniform(0, 0.5, n))) @ q.T


def align_eigenvectors(y, reference):
    w, v = y
    signs = np.sign(np.sum(v * reference[1], axis=-2, keepdims=True))
    return (w, v * signs)


def align_general_eigenvectors(y, reference):
    """np.linalg.eig's eigenvectors, each turned to the sign of the reference's (a real one's
    sign is arbitrary; a complex one's largest component is real, of either sign)."""
    w, v = y
    signs = np.sign(np.real(np.sum(v * np.conj(reference[1]), axis=-2, keepdims=True)))
    return (w, v * signs)


def general_matrix(rng, shape):
    """A general real matrix (a stack of them) with a complex pair of eigenvalues and real
    ones, all at least 0.5 apart."""
    n = shape[-1]
    values = np.diag(1.0 + 0.75 * np.arange(n) + rng.uniform(0, 0.25, n))
    values[:2, :2] = [[0.5, -1.5], [1.5, 0.5]]  # eigenvalues 0.5 +- 1.5i
    basis = rng.standard_normal(shape) + 2.0 * np.eye(n)
    return basis @ values @ np.linalg.inv(basis)


def spread_singular_values(rng, shape):
    """A matrix (a stack of them) whose singular values are at least 0.5 apart and 1 from 0."""
    m, n = shape[-2:]
    k = min(m, n)
    u, _ = np.linalg.qr(rng.standard_normal(shape[:-2] + (m, k)))
    v, _ = np.linalg.qr(rng.standard_normal(shape[:-2] + (n, k)))
    s = 1.0 + np.arange(k)[::-1] * 0.75 + rng.uniform(0, 0.25, shape[:-2] + (k,))
    return (u * s[..., None, :]) @ np.swapaxes(v, -1, -2)


def align_singular_vectors(y, reference):
    u, s, vh = y
    signs = np.sign(np.sum(u * reference[0], axis=-2, keepdims=True))
    return (u * signs, s, vh * np.swapaxes(signs, -1, -2))


def ratio_args(rng, shape1=(3, 4), shape2=(4,)):
    """(x1, x2) for mod/fmod: x2 > 0 and x1 / x2 away from integers."""
    x2 = rng.uniform(0.5, 2.0, shape2)
    quotient = rng.integers(-3, 3, np.broadcast_shapes(shape1, shape2))
    return (x2 * (quotient + rng.uniform(0.2, 0.8, quotient.shape)), x2)


def clip_args(rng, shape=(3, 4), bound_shape=None):
    """(a, lower, upper) with every element of a clearly inside, below or above its bounds."""
    lower = -0.5 if bound_shape is None else rng.uniform(-1.0, -0.4, bound_shape)
    upper = 0.5 if bound_shape is None else rng.uniform(0.4, 1.0, bound_shape)
    low, high = np.broadcast_to(lower, shape), np.broadcast_to(upper, shape)
    where = rng.integers(0, 3, shape)
    a = np.choose(where, [low - rng.uniform(0.1, 1.0, shape), (low + high) / 2
                          + rng.uniform(-0.2, 0.2, shape), high + rng.uniform(0.1, 1.0, shape)])
    return a, lower, upper


E = Entry
TABLE: list[Entry] = []

# --- Elementwise: unary ---------------------------------------------------------------------

_UNARY = [
    (np.negative, normal((3, 4))), (np.positive, normal((3, 4))),
    (np.exp, normal((3, 4))), (np.exp2, normal((3, 4))), (np.expm1, normal((3, 4))),
    (np.log, uniform(0.3, 3.0, (3, 4))), (np.log2, uniform(0.3, 3.0, (3, 4))),
    (np.log10, uniform(0.3, 3.0, (3, 4))), (np.log1p, uniform(-0.5, 3.0, (3, 4))),
    (np.sqrt, uniform(0.3, 3.0, (3, 4))), (np.cbrt, uniform(0.3, 3.0, (3, 4))),
    (np.square, normal((3, 4))), (np.reciprocal, uniform(0.3, 3.0, (3, 4))),
    (np.sin, normal((3, 4))), (np.cos, normal((3, 4))), (np.tan, uniform(-1.2, 1.2, (3, 4))),
    (np.arcsin, uniform(-0.8, 0.8, (3, 4))), (np.arccos, uniform(-0.8, 0.8, (3, 4))),
    (np.arctan, normal((3, 4))), (np.sinh, normal((3, 4))), (np.cosh, normal((3, 4))),
    (np.tanh, normal((3, 4))), (np.arcsinh, normal((3, 4))),
    (np.arccosh, uniform(1.3, 3.0, (3, 4))), (np.arctanh, uniform(-0.8, 0.8, (3, 4))),
    (np.sinc, normal((3, 4))), (np.deg2rad, normal((3, 4))), (np.rad2deg, normal((3, 4))),
    (np.radians, normal((3, 4))), (np.degrees, normal((3, 4))),
    (np.abs, lambda rng: (away_from_zero(rng, (3, 4)),)),
    (np.fabs, lambda rng: (away_from_zero(rng, (3, 4)),)),
    (np.real, normal((3, 4))), (np.imag, normal((3, 4))), (np.conjugate, normal((3, 4))),
]
# np.abs is np.absolute, np.true_divide is np.divide: one entry each.
TABLE += [E(f.__name__, f, make) for f, make in _UNARY]
TABLE += [
    E("sin/float", np.sin, normal(None), note="a Python float gets a float"),
    E("exp/0d", np.exp, normal(())),
    E("sqrt/float", np.sqrt, uniform(0.5, 2.0, None)),
    E("sinc/at-zero", np.sinc, lambda rng: (np.array([0.0, 0.5, -1.5]),),
      note="sinc'(0) = 0 and sinc''(0) = -pi**2 / 3 (exact to third order)"),
]

# --- Elementwise: binary, with broadcasting ---------------------------------------------------

for _f in (np.add, np.subtract, np.multiply, np.divide, np.maximum, np.minimum,
           np.fmax, np.fmin, np.arctan2, np.hypot, np.logaddexp, np.logaddexp2):
    _make = normal if _f is not np.divide else (
        lambda *shapes: lambda rng: tuple(
            float(away_from_zero(rng, ())) if s is None else away_from_zero(rng, s)
            for s in shapes))
    TABLE += [
        E(f"{_f.__name__}/same", _f, _make((3, 4), (3, 4))),
        E(f"{_f.__name__}/broadcast", _f, _make((3, 1, 4), (2, 1))),
        E(f"{_f.__name__}/float-array", _f, _make(None, (3,))),
        E(f"{_f.__name__}/array-float", _f, _make((3,), None)),
    ]
TABLE += [
    E("power/broadcast", np.power, lambda rng: (rng.uniform(0.5, 2.0, (3, 4)),
                                                rng.standard_normal(4))),
    E("power/int-exponent", np.power, lambda rng: (rng.standard_normal((3, 4)), 3),
      note="x ** 3: the exponent is an int, not differentiated"),
    E("power/float-base", np.power, lambda rng: (1.7, rng.standard_normal(3))),
    E("nan_to_num", np.nan_to_num,
      lambda rng: (np.array([1.5, np.nan, -np.inf, np.inf, -0.5]) * rng.uniform(1, 2, 5),),
      make_kwargs=lambda rng: dict(nan=float(rng.standard_normal()),
                                   posinf=float(rng.standard_normal()),
                                   neginf=float(rng.standard_normal()))),
    E("nan_to_num/defaults", np.nan_to_num, lambda rng: (np.array([[2.0, np.nan], [-3.0, 1.0]])
                                                         * rng.uniform(1, 2, (2, 2)),),
      note="no infinity: NumPy's largest float in the result swamps finite differences"),
    E("float_power", np.float_power, lambda rng: (rng.uniform(0.5, 2.0, (3, 4)),
                                                  rng.standard_normal(4))),
    E("power/square", np.power, lambda rng: (rng.standard_normal(5), 2.0), wrt=(0,),
      note="a negative base: the exponent is not differentiable there"),
    E("mod", np.mod, ratio_args), E("remainder", np.remainder, ratio_args),
    E("fmod", np.fmod, ratio_args),
    E("copysign", np.copysign, lambda rng: (away_from_zero(rng, (3, 4)),
                                            away_from_zero(rng, (4,))),
      wrt=(0,), note="x2 gets no gradient: its sign bit is a step"),
    E("floor_divide", np.floor_divide, ratio_args, note="piecewise constant: zero derivative"),
    E("sign", np.sign, lambda rng: (away_from_zero(rng, (3, 4)),),
      note="a step: zero derivative (of complex values, z / |z|, refused)"),
    E("multiply/int-argument", np.multiply, lambda rng: (rng.standard_normal((2, 3)),
                                                         np.arange(3)),
      note="an integer array gets a zero gradient"),
    E("where", np.where, lambda rng: (rng.standard_normal((3, 4)) > 0,
                                      rng.standard_normal((3, 4)), rng.standard_normal(4))),
    E("where/floats", np.where, lambda rng: (rng.standard_normal(5) > 0, 2.5,
                                             rng.standard_normal(5))),
    E("clip/float-bounds", np.clip, clip_args),
    E("clip/array-bounds", np.clip, lambda rng: clip_args(rng, (3, 4), (4,))),
    E("clip/keywords", np.clip, lambda rng: clip_args(rng, (3, 4), (4,))[:1],
      make_kwargs=lambda rng: dict(zip(("min", "max"), clip_args(rng, (3, 4), (4,))[1:]))),
]

# --- The math module: functions of floats, with the rules of their NumPy twins ---------------

_MATH = [
    (math.exp, normal(None)), (math.expm1, normal(None)), (math.log, uniform(0.3, 3.0, None)),
    (math.log2, uniform(0.3, 3.0, None)), (math.log10, uniform(0.3, 3.0, None)),
    (math.log1p, uniform(-0.5, 3.0, None)), (math.sqrt, uniform(0.3, 3.0, None)),
    (math.sin, normal(None)), (math.cos, normal(None)), (math.tan, uniform(-1.2, 1.2, None)),
    (math.asin, uniform(-0.8, 0.8, None)), (math.acos, uniform(-0.8, 0.8, None)),
    (math.atan, normal(None)), (math.sinh, normal(None)), (math.cosh, normal(None)),
    (math.tanh, normal(None)), (math.asinh, normal(None)), (math.acosh, uniform(1.3, 3.0, None)),
    (math.atanh, uniform(-0.8, 0.8, None)), (math.radians, normal(None)),
    (math.degrees, normal(None)), (math.fabs, lambda rng: (float(away_from_zero(rng, ())),)),
    (math.atan2, normal(None, None)), (math.hypot, normal(None, None)),
    (math.pow, uniform(0.5, 2.0, None, None)), (math.erf, normal(None)),
    (math.fmod, lambda rng: tuple(float(v) for v in ratio_args(rng, (), ()))),
    (math.erfc, normal(None)), (math.lgamma, uniform(0.3, 4.0, None)),
    (math.gamma, uniform(0.3, 4.0, None)),
    *[(function, make) for function, make in (
        (getattr(math, "cbrt", None), lambda rng: (float(away_from_zero(rng, ())),)),
        (getattr(math, "exp2", None), normal(None))) if function is not None],  # (3.11's)
]
TABLE += [E(f"math.{f.__name__}", f, make, note="a float gets a float") for f, make in _MATH]
TABLE += [  # between the poles 0, -1, -2, ...: gamma changes sign, lgamma is of |gamma|
    E("math.lgamma/negative", math.lgamma, uniform(-2.9, -2.1, None)),
    E("math.gamma/negative", math.gamma, uniform(-1.9, -1.1, None)),
    E("helper:polygamma/digamma", polygamma, lambda rng: (0, rng.uniform(0.3, 12.0, 4)),
      wrt=(1,)),
    E("helper:polygamma/negative", polygamma, lambda rng: (2, rng.uniform(-3.9, -3.1, 3)),
      wrt=(1,)),
    # the functions graphs call these ops by
    E("helper:polygamma_of", polygamma_of, lambda rng: (rng.uniform(-3.9, -3.1, 3), 1),
      wrt=(0,)),
    E("helper:erfc", erfc, uniform(-2.0, 2.0, (3,))),
    E("helper:gamma", gamma, uniform(0.3, 3.0, (4,))),
    E("helper:lgamma", lgamma, uniform(0.2, 5.0, (4,))),
]
TABLE.append(E("math.copysign", math.copysign, lambda rng: tuple(
    float(v) for v in (away_from_zero(rng, ()), away_from_zero(rng, ()))), wrt=(0,),
    note="y gets no gradient: its sign is a step"))

# --- Reductions -------------------------------------------------------------------------------

for _f in (np.sum, np.mean):
    TABLE += [
        E(f"{_f.__name__}/all", _f, normal((3, 4))),
        E(f"{_f.__name__}/axis0", _f, normal((3, 4)), dict(axis=0)),
        E(f"{_f.__name__}/axis-neg-keepdims", _f, normal((2, 3, 4)), dict(axis=-1, keepdims=True)),
        E(f"{_f.__name__}/axes-tuple", _f, normal((2, 3, 4)), dict(axis=(0, 2))),
        E(f"{_f.__name__}/float", _f, normal(None)),
        E(f"{_f.__name__}/list", _f, lambda rng: ([float(v) for v in rng.standard_normal(3)],),
          note="a list of floats gets a list of floats"),
    ]
for _f in (np.max, np.min, np.amax, np.amin):
    TABLE += [
        E(f"{_f.__name__}/all", _f, lambda rng: (distinct(rng, (3, 4)),)),
        E(f"{_f.__name__}/axis1", _f, lambda rng: (distinct(rng, (3, 4)),), dict(axis=1)),
        E(f"{_f.__name__}/axes-keepdims", _f, lambda rng: (distinct(rng, (2, 3, 4)),),
          dict(axis=(0, 2), keepdims=True)),
    ]
for _f in (np.var, np.std):
    TABLE += [
        E(f"{_f.__name__}/all", _f, normal((3, 4))),
        E(f"{_f.__name__}/axis0-ddof1", _f, normal((3, 4)), dict(axis=0, ddof=1)),
        E(f"{_f.__name__}/axes-keepdims", _f, normal((2, 3, 4)), dict(axis=(1, 2), keepdims=True)),
    ]
TABLE += [
    E("prod/all", np.prod, uniform(0.5, 1.5, (3, 4))),
    E("prod/axis1-negative", np.prod, normal((3, 4)), dict(axis=1)),
    E("prod/with-zero", np.prod, lambda rng: (np.array([[0.0, 1.5, -2.0], [0.7, 0.0, 0.0]]),),
      dict(axis=1, keepdims=True), note="one zero and two zeros in a row: exact to any order"),
    E("prod/zero-flat", np.prod, lambda rng: (np.array([[0.5, 0.0, -1.2], [0.8, 1.3, -0.7]]),)),
    E("prod/zeros-axes", np.prod, lambda rng: (one_and_two_zeros(rng),), dict(axis=(0, 2))),
    E("prod/axes", np.prod, normal((2, 3, 4)), dict(axis=(0, 2))),
    E("sum/initial", np.sum, normal((3, 4)), dict(axis=1),
      make_kwargs=lambda rng: dict(initial=float(rng.standard_normal()))),
    E("prod/initial", np.prod, normal((3, 4)), dict(axis=0),
      make_kwargs=lambda rng: dict(initial=float(rng.standard_normal()))),
    E("max/initial", np.max, lambda rng: (distinct(rng, (4, 3)),), dict(axis=1, initial=0.25),
      note="the initial value is the maximum of some rows"),
    E("min/initial-keepdims", np.min, lambda rng: (distinct(rng, (4, 3)),),
      dict(axis=1, keepdims=True, initial=-0.25)),
    E("logaddexp.reduce", np.logaddexp.reduce, normal((3, 4))),
    E("logaddexp.reduce/axis1", np.logaddexp.reduce, normal((3, 4)), dict(axis=1)),
    E("logaddexp.reduce/all-keepdims", np.logaddexp.reduce, normal((2, 3)),
      dict(axis=None, keepdims=True)),
    E("logaddexp.reduce/initial-where", np.logaddexp.reduce, normal((3, 4)),
      dict(axis=1, initial=0.5, where=np.array([True, False, True, True]))),
    E("logaddexp2.reduce/axis0", np.logaddexp2.reduce, normal((3, 4)), dict(axis=0)),
    E("cumsum/flat", np.cumsum, normal((3, 4))),
    E("cumsum/axis1", np.cumsum, normal((3, 4)), dict(axis=1)),
    # bins that hold several weights, one, none, and bins past max(x) (minlength)
    E("bincount", np.bincount, lambda rng: (np.array([0, 2, 1, 0, 4, 2, 2]),
                                            rng.standard_normal(7))),
    E("bincount/minlength", np.bincount, lambda rng: (np.array([3, 1, 3]),
                                                      rng.standard_normal(3)), dict(minlength=6)),
    E("cumprod/flat", np.cumprod, uniform(0.5, 1.5, (3, 4))),
    E("cumprod/axis0", np.cumprod, lambda rng: (away_from_zero(rng, (3, 4)),), dict(axis=0)),
    E("cumprod/zeros", np.cumprod, lambda rng: (with_zeros(rng, (7,)),),
      note="exact at zeros: no division"),
    E("cumprod/zeros-axis1", np.cumprod, lambda rng: (with_zeros(rng, (3, 5)),), dict(axis=1)),
    E("cumprod/zeros-axis0", np.cumprod, lambda rng: (with_zeros(rng, (2, 5)).T,), dict(axis=0)),
    E("cumprod/zeros-flat", np.cumprod, lambda rng: (with_zeros(rng, (2, 3)),)),
    E("sum/where", np.sum, normal((3, 4)), dict(axis=1, where=np.array([True, False, True, True]))),
    E("sum/initial-where", np.sum, normal((3, 4)),
      dict(where=np.array([[True], [False], [True]])),
      make_kwargs=lambda rng: dict(initial=float(rng.standard_normal()))),
    E("mean/where", np.mean, normal((3, 4)), dict(where=np.arange(12).reshape(3, 4) % 3 > 0)),
    E("mean/where-axis0-keepdims", np.mean, normal((3, 4)),
      dict(axis=0, keepdims=True, where=np.array([[True, False, True, True],
                                                   [False, True, True, False],
                                                   [True, True, False, False]]))),
    E("diff/last", np.diff, normal((3, 5))),
    E("diff/n2-axis0", np.diff, normal((5, 3)), dict(n=2, axis=0)),
    E("diff/prepend-append", np.diff, normal((3, 5)),
      make_kwargs=lambda rng: dict(prepend=float(rng.standard_normal()),
                                   append=rng.standard_normal((3, 2)))),
    E("diff/n2-axis0-prepend", np.diff, normal((4, 3)), dict(n=2, axis=0),
      make_kwargs=lambda rng: dict(prepend=rng.standard_normal((2, 3)))),
    E("diff/append", np.diff, normal((6,)),
      make_kwargs=lambda rng: dict(append=float(rng.standard_normal()))),
    E("sort/last", np.sort, lambda rng: (distinct(rng, (3, 5)),)),
    E("sort/axis0", np.sort, lambda rng: (distinct(rng, (4, 3)),), dict(axis=0)),
    E("sort/flat", np.sort, lambda rng: (distinct(rng, (3, 4)),), dict(axis=None)),
]

# --- Products and linear algebra --------------------------------------------------------------

TABLE += [
    E("matmul/2d", np.matmul, normal((3, 4), (4, 5))),
    E("matmul/batched", np.matmul, normal((2, 3, 4), (4, 5))),
    E("matmul/broadcast-batch", np.matmul, normal((2, 1, 3, 4), (5, 4, 2))),
    E("matmul/vector-matrix", np.matmul, normal((4,), (2, 4, 3))),
    E("matmul/matrix-vector", np.matmul, normal((2, 3, 4), (4,))),
    E("matmul/vector-vector", np.matmul, normal((4,), (4,))),
    E("dot/2d", np.dot, normal((3, 4), (4, 2))),
    E("dot/matrix-vector", np.dot, normal((3, 4), (4,))),
    E("dot/vector-matrix", np.dot, normal((4,), (4, 3))),
    E("dot/vector-vector", np.dot, normal((4,), (4,))),
    E("dot/nd", np.dot, normal((2, 3, 4), (5, 4, 2))),
    E("dot/float-array", np.dot, normal(None, (3, 2))),
    E("dot/array-0d", np.dot, normal((3,), ())),
    E("inner/2d", np.inner, normal((3, 4), (2, 4))),
    E("inner/vectors", np.inner, normal((4,), (4,))),
    E("inner/nd", np.inner, normal((2, 3, 4), (4,))),
    E("inner/float", np.inner, normal(None, (2, 3))),
    E("outer", np.outer, normal((3,), (4,))),
    E("outer/flattens", np.outer, normal((2, 2), (3,))),
    E("tensordot/default", np.tensordot, normal((2, 3, 4), (3, 4, 5))),
    E("tensordot/axes1", np.tensordot, normal((2, 3), (3, 4)), dict(axes=1)),
    E("tensordot/pairs", np.tensordot, normal((3, 2, 4), (2, 5, 3)),
      dict(axes=([1, 0], [0, 2]))),
    E("tensordot/outer", np.tensordot, normal((2,), (3,)), dict(axes=0)),
    E("einsum/matmul", np.einsum, lambda rng: ("ij,jk->ik",) + normal((3, 4), (4, 2))(rng)),
    E("einsum/trace", np.einsum, lambda rng: ("ii->", rng.standard_normal((3, 3)))),
    E("einsum/diagonal", np.einsum, lambda rng: ("ii->i", rng.standard_normal((3, 3)))),
    E("einsum/sum", np.einsum, lambda rng: ("ij->", rng.standard_normal((3, 4)))),
    E("einsum/implicit", np.einsum, lambda rng: ("bij,bjk",) + normal((2, 3, 4), (2, 4, 2))(rng)),
    E("einsum/ellipsis-broadcast", np.einsum,
      lambda rng: ("...ij,...jk->...ik",) + normal((1, 3, 4), (2, 4, 2))(rng)),
    E("einsum/three", np.einsum, lambda rng: ("ij,jk,kl->il",) + normal((2, 3), (3, 4),
                                                                        (4, 2))(rng)),
    E("einsum/repeated-operand-letter", np.einsum,
      lambda rng: ("iij,j->i",) + normal((3, 3, 2), (2,))(rng)),
    E("einsum/optimize", np.einsum, lambda rng: ("ij,j->i",) + normal((3, 4), (4,))(rng),
      dict(optimize=True)),
    E("kron/2d", np.kron, normal((2, 3), (3, 2))),
    E("kron/mixed-ndim", np.kron, normal((3,), (2, 2))),
    E("cross/broadcast", np.cross, normal((4, 3), (3,))),
    E("cross/axis0", np.cross, normal((3, 4), (3, 4)), dict(axis=0)),
    E("cross/2-vectors", np.cross, normal((4, 2), (2,)), note="one number per pair"),
    E("cross/2-and-3-vectors", np.cross, normal((4, 2), (4, 3))),
    E("cross/3-and-2-vectors-axes", np.cross, normal((3, 4), (2, 4)),
      dict(axisa=0, axisb=0, axisc=0)),
    E("trace/2d", np.trace, normal((3, 4))),
    E("trace/3d-offset", np.trace, normal((2, 4, 3)), dict(offset=-1, axis1=1, axis2=2)),
    E("diagonal/offset", np.diagonal, normal((3, 4)), dict(offset=1)),
    E("diagonal/axes", np.diagonal, normal((3, 2, 4)), dict(axis1=2, axis2=0)),
    E("linalg.inv", np.linalg.inv, lambda rng: (well_conditioned(rng, 3),)),
    E("linalg.inv/batched", np.linalg.inv, lambda rng: (well_conditioned(rng, 3, (2,)),)),
    E("linalg.det", np.linalg.det, lambda rng: (well_conditioned(rng, 3),)),
    E("linalg.det/batched", np.linalg.det, lambda rng: (well_conditioned(rng, 2, (3,)),)),
    E("linalg.det/singular", np.linalg.det, lambda rng: (rank_deficient(rng, 3),),
      note="the cofactors from the SVD"),
    E("linalg.det/batched-singular", np.linalg.det,
      lambda rng: (np.stack([rank_deficient(rng, 3), well_conditioned(rng, 3)]),)),
    E("linalg.slogdet", np.linalg.slogdet, lambda rng: (well_conditioned(rng, 3),)),
    E("linalg.slogdet/negative", np.linalg.slogdet,
      lambda rng: (-well_conditioned(rng, 3, (2,)),)),
    E("linalg.solve/vector", np.linalg.solve,
      lambda rng: (well_conditioned(rng, 3), rng.standard_normal(3))),
    E("linalg.solve/matrix", np.linalg.solve,
      lambda rng: (well_conditioned(rng, 3), rng.standard_normal((3, 2)))),
    E("linalg.solve/batched-a-vector", np.linalg.solve,
      lambda rng: (well_conditioned(rng, 3, (2,)), rng.standard_normal(3))),
    E("linalg.solve/broadcast-b", np.linalg.solve,
      lambda rng: (well_conditioned(rng, 3), rng.standard_normal((2, 3, 2)))),
    # cholesky, eigh and eigvalsh read one triangle: perturbed in any direction (the other
    # triangle not at all), and their inputs filled on the lower triangle alone too (NumPy's
    # and the array API's default; which triangle the array API's upper=True reads is the
    # library's choice, so that input is symmetric).
    E("linalg.cholesky", np.linalg.cholesky, lambda rng: (spd(rng, 4),),
      note="reads the lower triangle"),
    E("linalg.cholesky/lower-filled", np.linalg.cholesky, lambda rng: (np.tril(spd(rng, 3)),)),
    E("linalg.cholesky/batched", np.linalg.cholesky, lambda rng: (spd(rng, 3, (2,)),)),
    E("linalg.cholesky/upper", np.linalg.cholesky, lambda rng: (spd(rng, 3, (2,)),),
      dict(upper=True), note="the upper factor, from the upper triangle"),
    E("linalg.eigh", np.linalg.eigh, lambda rng: (symmetric_spread(rng, 4),),
      align=align_eigenvectors, note="reads the lower triangle; eigenvector signs aligned"),
    E("linalg.eigh/lower-filled", np.linalg.eigh, lambda rng: (np.tril(symmetric_spread(rng, 3)),),
      align=align_eigenvectors),
    E("linalg.eigh/batched", np.linalg.eigh,
      lambda rng: (np.stack([symmetric_spread(rng, 3), symmetric_spread(rng, 3)]),),
      align=align_eigenvectors),
    E("linalg.svd/tall", np.linalg.svd, lambda rng: (spread_singular_values(rng, (4, 3)),),
      dict(full_matrices=False), align=align_singular_vectors,
      note="singular vector signs aligned"),
    E("linalg.svd/wide-batched", np.linalg.svd,
      lambda rng: (spread_singular_values(rng, (2, 2, 4)),), dict(full_matrices=False),
      align=align_singular_vectors),
    E("linalg.svd/square-full", np.linalg.svd,
      lambda rng: (spread_singular_values(rng, (3, 3)),), align=align_singular_vectors),
    E("linalg.svdvals", np.linalg.svdvals, lambda rng: (spread_singular_values(rng, (3, 5)),)),
    E("linalg.svdvals/batched", np.linalg.svdvals,
      lambda rng: (spread_singular_values(rng, (2, 4, 3)),)),
    # qr of a of full rank, m >= n; Q and R move continuously where R's diagonal is not 0.
    E("linalg.qr/tall", np.linalg.qr, normal((4, 3)), note="the reduced factors"),
    E("linalg.qr/r-batched", np.linalg.qr, normal((2, 4, 3)), dict(mode="r")),
    E("linalg.qr/complete-square", np.linalg.qr, normal((3, 3)), dict(mode="complete")),
    E("linalg.cond", np.linalg.cond, lambda rng: (spread_singular_values(rng, (3, 3)),),
      note="the largest singular value over the smallest"),
    E("linalg.cond/-2-batched", np.linalg.cond,
      lambda rng: (spread_singular_values(rng, (2, 3, 3)),), dict(p=-2)),
    E("linalg.cond/tall", np.linalg.cond, lambda rng: (spread_singular_values(rng, (4, 3)),),
      dict(p=2)),
    E("linalg.tensorinv", np.linalg.tensorinv,
      lambda rng: (well_conditioned(rng, 6).reshape(2, 3, 6),), dict(ind=2)),
    E("linalg.tensorinv/ind1", np.linalg.tensorinv,
      lambda rng: (well_conditioned(rng, 4).reshape(4, 2, 2),), dict(ind=1)),
    E("linalg.tensorsolve", np.linalg.tensorsolve,
      lambda rng: (well_conditioned(rng, 6).reshape(2, 3, 3, 2), rng.standard_normal((2, 3)))),
    E("linalg.tensorsolve/axes", np.linalg.tensorsolve,
      lambda rng: (well_conditioned(rng, 6).reshape(3, 2, 6), rng.standard_normal(6)),
      dict(axes=(1, 0))),
    E("linalg.pinv/tall", np.linalg.pinv, normal((5, 3))),
    E("linalg.pinv/wide", np.linalg.pinv, normal((2, 4))),
    E("linalg.multi_dot/three", np.linalg.multi_dot,
      lambda rng: ([rng.standard_normal(s) for s in ((4, 3), (3, 5), (5, 2))],)),
    E("linalg.multi_dot/wide", np.linalg.multi_dot,
      lambda rng: ([rng.standard_normal(s) for s in ((2, 3), (3, 4), (4, 5), (5, 6))],),
      note="fewer rows than columns: the gradients carry g from the right"),
    E("linalg.multi_dot/vector-ends", np.linalg.multi_dot,
      lambda rng: ([rng.standard_normal(s) for s in ((3,), (3, 4), (4, 5), (5, 2), (2,))],)),
    E("linalg.multi_dot/row-first", np.linalg.multi_dot,
      lambda rng: ([rng.standard_normal(s) for s in ((3,), (3, 4), (4, 2))],)),
    E("linalg.multi_dot/two", np.linalg.multi_dot,
      lambda rng: ([rng.standard_normal(s) for s in ((2, 3, 4), (4, 2))],),
      note="two arrays: np.dot of any"),
    E("linalg.matrix_power/3", np.linalg.matrix_power, lambda rng: (near_identity(rng, 3), 3)),
    E("linalg.matrix_power/batched-4", np.linalg.matrix_power,
      lambda rng: (near_identity(rng, 3, (2,)), 4)),
    E("linalg.matrix_power/1", np.linalg.matrix_power, lambda rng: (near_identity(rng, 2), 1)),
    E("linalg.matrix_power/0", np.linalg.matrix_power, lambda rng: (near_identity(rng, 2), 0)),
    E("linalg.matrix_power/-1", np.linalg.matrix_power, lambda rng: (near_identity(rng, 3), -1)),
    E("linalg.matrix_power/-3", np.linalg.matrix_power,
      lambda rng: (near_identity(rng, 3, (2,)), -3)),
    # lstsq of a of full rank, whose singular values are apart (s has svd's rule).
    E("linalg.lstsq/tall-vector", np.linalg.lstsq,
      lambda rng: (spread_singular_values(rng, (6, 3)), rng.standard_normal(6))),
    E("linalg.lstsq/tall-matrix", np.linalg.lstsq,
      lambda rng: (spread_singular_values(rng, (5, 3)), rng.standard_normal((5, 2)))),
    E("linalg.lstsq/wide-vector", np.linalg.lstsq,
      lambda rng: (spread_singular_values(rng, (3, 5)), rng.standard_normal(3)),
      note="the minimum-norm solution; no residuals"),
    E("linalg.lstsq/wide-matrix", np.linalg.lstsq,
      lambda rng: (spread_singular_values(rng, (2, 4)), rng.standard_normal((2, 3)))),
    E("linalg.lstsq/square", np.linalg.lstsq,
      lambda rng: (spread_singular_values(rng, (3, 3)), rng.standard_normal((3, 2)))),
    E("helper:lstsq_of_full_rank", lstsq_of_full_rank,
      lambda rng: (spread_singular_values(rng, (5, 3)), rng.standard_normal((5, 2)))),
    E("linalg.norm/vector", np.linalg.norm, normal((5,))),
    E("linalg.norm/matrix", np.linalg.norm, normal((3, 4))),
    E("linalg.norm/fro", np.linalg.norm, normal((3, 4)), dict(ord="fro")),
    E("linalg.norm/axis-keepdims", np.linalg.norm, normal((3, 4)), dict(axis=1, keepdims=True)),
    E("linalg.norm/ord2-vector", np.linalg.norm, normal((3, 4)), dict(ord=2, axis=0)),
    E("linalg.norm/ord1", np.linalg.norm, lambda rng: (away_from_zero(rng, (5,)),), dict(ord=1)),
    E("linalg.norm/ord3", np.linalg.norm, normal((5,)), dict(ord=3)),
    E("linalg.norm/matrix-axes", np.linalg.norm, normal((2, 3, 4)), dict(axis=(0, 2))),
    E("linalg.norm/inf-vector", np.linalg.norm, normal((5,)), dict(ord=np.inf), wrt=(0,)),
    E("linalg.norm/-inf-vector", np.linalg.norm, normal((5,)), dict(ord=-np.inf), wrt=(0,)),
    E("linalg.norm/0-vector", np.linalg.norm, normal((5,)), dict(ord=0)),
    E("linalg.norm/inf-rows-keepdims", np.linalg.norm, normal((3, 4)),
      dict(ord=np.inf, axis=1, keepdims=True), wrt=(0,)),
    E("linalg.norm/1-matrix", np.linalg.norm, normal((3, 4)), dict(ord=1)),
    E("linalg.norm/-1-matrix", np.linalg.norm, normal((3, 4)), dict(ord=-1)),
    E("linalg.norm/inf-matrix", np.linalg.norm, normal((3, 4)), dict(ord=np.inf), wrt=(0,)),
    E("linalg.norm/-inf-matrix-axes", np.linalg.norm, normal((2, 3, 4)),
      dict(ord=-np.inf, axis=(2, 0)), wrt=(0,)),
    E("linalg.norm/1-matrix-batched-keepdims", np.linalg.norm, normal((2, 3, 4)),
      dict(ord=1, axis=(-2, -1), keepdims=True)),
    E("linalg.norm/2-matrix", np.linalg.norm,
      lambda rng: (spread_singular_values(rng, (3, 4)),), dict(ord=2),
      note="the largest singular value"),
    E("linalg.norm/-2-matrix-axes", np.linalg.norm,
      lambda rng: (np.moveaxis(spread_singular_values(rng, (2, 4, 3)), 0, 2),),
      dict(ord=-2, axis=(1, 0), keepdims=True)),
    E("linalg.norm/nuc-matrix", np.linalg.norm,
      lambda rng: (spread_singular_values(rng, (4, 3)),), dict(ord="nuc")),
    E("linalg.matrix_norm", np.linalg.matrix_norm, normal((2, 3, 4))),
    E("linalg.matrix_norm/nuc-keepdims", np.linalg.matrix_norm,
      lambda rng: (spread_singular_values(rng, (2, 3, 4)),), dict(ord="nuc", keepdims=True)),
    E("linalg.matrix_norm/2", np.linalg.matrix_norm,
      lambda rng: (spread_singular_values(rng, (4, 3)),), dict(ord=2)),
    E("linalg.matrix_norm/-inf", np.linalg.matrix_norm, normal((2, 3, 4)),
      dict(ord=-np.inf), wrt=(0,)),
    E("linalg.vector_norm", np.linalg.vector_norm, normal((2, 3))),
    E("linalg.vector_norm/axis-ord", np.linalg.vector_norm, normal((2, 3, 4)),
      dict(axis=(0, 2), keepdims=True, ord=3)),
    E("linalg.vector_norm/inf-axes", np.linalg.vector_norm, normal((2, 3, 4)),
      dict(axis=(0, 2), ord=np.inf), wrt=(0,)),
    E("linalg.vector_norm/-inf", np.linalg.vector_norm, normal((2, 3)), dict(ord=-np.inf),
      wrt=(0,)),
    E("linalg.vector_norm/0", np.linalg.vector_norm, normal((2, 3)), dict(ord=0)),
    E("linalg.eigvalsh", np.linalg.eigvalsh, lambda rng: (symmetric_spread(rng, 3),)),
    E("linalg.eigvals", np.linalg.eigvals, lambda rng: (general_matrix(rng, (4, 4)),),
      note="complex: a pair, and real eigenvalues"),
    E("linalg.eigvals/real-spectrum", np.linalg.eigvals, lambda rng: (
        symmetric_spread(rng, 3) + np.triu(rng.uniform(0, 0.1, (3, 3)), 1),)),
    E("linalg.eigvals/batched", np.linalg.eigvals, lambda rng: (general_matrix(rng, (2, 3, 3)),)),
    E("linalg.eig", np.linalg.eig, lambda rng: (general_matrix(rng, (4, 4)),),
      align=align_general_eigenvectors, order=1,
      note="eigenvectors of unit norm, the largest component real; signs aligned"),
    E("linalg.eig/real-spectrum", np.linalg.eig, lambda rng: (
        symmetric_spread(rng, 3) + np.triu(rng.uniform(0, 0.1, (3, 3)), 1),),
      align=align_general_eigenvectors, order=1),
    E("linalg.matmul", np.linalg.matmul, normal((2, 3, 4), (4, 2))),
    E("linalg.outer", np.linalg.outer, normal((3,), (2,))),
    E("linalg.tensordot", np.linalg.tensordot, normal((3, 2, 4), (2, 4, 5)), dict(axes=2)),
    E("linalg.cross", np.linalg.cross, normal((3, 2), (3, 2)), dict(axis=0)),
    E("linalg.trace", np.linalg.trace, normal((2, 3, 4)), dict(offset=1)),
    E("linalg.diagonal", np.linalg.diagonal, normal((2, 4, 3)), dict(offset=-1)),
    E("vecdot", np.vecdot, normal((2, 3), (3,))),
    E("vecdot/axis", np.vecdot, normal((3, 2), (3, 2)), dict(axis=0)),
    E("linalg.vecdot", np.linalg.vecdot, normal((4,), (2, 4))),
    E("vdot", np.vdot, normal((2, 3), (6,))),
]

# --- Shapes, joins, copies and selections -----------------------------------------------------

# Indices for np.take_along_axis: repeated along rows (their gradients add up), and (2, 4)
# indices into a (3, 1) array along axis 0.
_ALONG_ROWS = np.array([[0, 3, 3], [1, 1, 0], [2, 0, 2]])
_ALONG_COLUMNS = np.array([[0, 2, 2, 1], [1, 0, 2, 2]])

TABLE += [
    E("reshape", np.reshape, lambda rng: (rng.standard_normal((3, 4)), (2, 6))),
    E("reshape/order-F", np.reshape, lambda rng: (rng.standard_normal((3, 4)), (6, -1)),
      dict(order="F")),
    E("ravel", np.ravel, normal((3, 4))),
    E("ravel/order-F", np.ravel, normal((3, 4, 2)), dict(order="F")),
    E("expand_dims", np.expand_dims, normal((3, 4)), dict(axis=1)),
    E("expand_dims/axes", np.expand_dims, normal((3,)), dict(axis=(0, 2))),
    E("squeeze", np.squeeze, normal((1, 3, 1))),
    E("squeeze/axis", np.squeeze, normal((1, 3, 1)), dict(axis=0)),
    E("transpose", np.transpose, normal((2, 3, 4))),
    E("transpose/axes", np.transpose, normal((2, 3, 4)), dict(axes=(1, -1, 0))),
    E("swapaxes", np.swapaxes, normal((2, 3, 4)), dict(axis1=0, axis2=2)),
    E("moveaxis", np.moveaxis, normal((2, 3, 4)), dict(source=0, destination=-1)),
    E("moveaxis/several", np.moveaxis, normal((2, 3, 4)), dict(source=(0, 1), destination=(2, 0))),
    E("flip/all", np.flip, normal((2, 3))),
    E("flip/axis", np.flip, normal((2, 3)), dict(axis=1)),
    E("fliplr", np.fliplr, normal((2, 3, 2))),
    E("flipud", np.flipud, normal((3,))),
    E("matrix_transpose", np.matrix_transpose, normal((2, 3, 4))),
    E("linalg.matrix_transpose", np.linalg.matrix_transpose, normal((3, 4))),
    E("rot90", np.rot90, normal((3, 4))),
    E("rot90/k-negative", np.rot90, normal((3, 4)), dict(k=-1)),
    E("rot90/k-half", np.rot90, normal((2, 3)), dict(k=2)),
    E("rot90/k-beyond-4-axes", np.rot90, normal((2, 3, 4)), dict(k=7, axes=(2, 0))),
    E("rot90/k-zero", np.rot90, normal((2, 3, 2)), dict(k=4, axes=(1, -1))),
    E("fft.fftshift", np.fft.fftshift, normal((3, 4))),
    E("fft.ifftshift/axes", np.fft.ifftshift, normal((3, 5, 2)), dict(axes=(1, -1))),
    E("roll/flat", np.roll, normal((3, 4)), dict(shift=5)),
    E("roll/axes", np.roll, normal((3, 4)), dict(shift=(1, -2), axis=(0, 1))),
    E("broadcast_to", np.broadcast_to, lambda rng: (rng.standard_normal((3, 1)), (2, 3, 4))),
    E("broadcast_arrays", np.broadcast_arrays, normal((3, 1), (4,), None)),
    E("meshgrid", np.meshgrid, normal((3,), (2, 2), (4,))),
    E("meshgrid/ij-sparse", np.meshgrid, normal((3,), (2,)), dict(indexing="ij", sparse=True)),
    E("meshgrid/one", np.meshgrid, normal((3,))),
    E("atleast_1d/float", np.atleast_1d, normal(None)),
    E("atleast_1d/several", np.atleast_1d, normal(None, (2, 3))),
    E("atleast_2d", np.atleast_2d, normal((3,))),
    E("atleast_3d", np.atleast_3d, normal((2, 3))),
    E("array/list-of-floats", np.array, lambda rng: ([float(v) for v in rng.standard_normal(3)],)),
    E("array/list-of-arrays", np.array, lambda rng: (list(rng.standard_normal((2, 3))),)),
    E("array/ndmin", np.array, normal((3,)), dict(ndmin=2)),
    E("asarray", np.asarray, normal((3, 4))),
    E("asarray/tuple", np.asarray, lambda rng: (tuple(float(v) for v in rng.standard_normal(2)),)),
    E("copy", np.copy, normal((3, 4))),
    *([E("np.astype", np.astype, lambda rng: (rng.standard_normal((2, 3)), "float64"))]
      if hasattr(np, "astype") else []),  # np.astype: NumPy 2.1
    E("concatenate/axis0", np.concatenate, lambda rng: ([rng.standard_normal((2, 3)),
                                                         rng.standard_normal((1, 3))],)),
    E("concatenate/axis1", np.concatenate, lambda rng: ((rng.standard_normal((2, 3)),
                                                         rng.standard_normal((2, 2))),),
      dict(axis=1)),
    E("concatenate/flat", np.concatenate, lambda rng: ([rng.standard_normal((2, 3)),
                                                        rng.standard_normal(4)],),
      dict(axis=None)),
    E("hstack/1d", np.hstack, lambda rng: ([rng.standard_normal(2), 0.5,
                                            rng.standard_normal(3)],)),
    E("hstack/2d", np.hstack, lambda rng: ([rng.standard_normal((2, 3)),
                                            rng.standard_normal((2, 1))],)),
    E("vstack", np.vstack, lambda rng: ([rng.standard_normal(3), rng.standard_normal((2, 3))],)),
    E("dstack", np.dstack, lambda rng: ([rng.standard_normal(3), rng.standard_normal((1, 3)),
                                         rng.standard_normal((1, 3, 2))],)),
    E("dstack/2d", np.dstack, lambda rng: ([rng.standard_normal((2, 3)), 0.5 * np.ones((2, 3))],)),
    E("stack/axis1", np.stack, lambda rng: ([rng.standard_normal((2, 3)) for _ in range(3)],),
      dict(axis=1)),
    E("stack/floats", np.stack, lambda rng: ([1.5, -0.5],)),
    E("column_stack", np.column_stack, lambda rng: ([rng.standard_normal(3),
                                                     rng.standard_normal((3, 2))],)),
    E("column_stack/floats", np.column_stack, lambda rng: ([1.5, -0.5],)),
    E("split/sections", np.split, normal((6, 2)), dict(indices_or_sections=3)),
    E("split/indices", np.split, normal((2, 5)), dict(indices_or_sections=[1, 3], axis=1)),
    E("array_split", np.array_split, normal((7,)), dict(indices_or_sections=3)),
    E("insert/int-flat", np.insert, lambda rng: (rng.standard_normal((2, 3)), 4,
                                                 rng.standard_normal(2))),
    E("insert/int-axis-broadcast", np.insert, lambda rng: (rng.standard_normal((3, 4)), 1,
                                                           float(rng.standard_normal())),
      dict(axis=1), note="one float fills a whole column"),
    E("insert/int-axis-column", np.insert, lambda rng: (rng.standard_normal((3, 4)), -1,
                                                        rng.standard_normal(3)), dict(axis=1),
      note="values (3,) go in as a column: NumPy moves the scalar index's axis"),
    E("insert/list-of-one", np.insert, lambda rng: (rng.standard_normal((3, 4)), [2],
                                                    rng.standard_normal((2, 1))), dict(axis=0),
      note="a list index broadcasts values (2, 1) against one row: two rows, each repeated"),
    E("insert/slice", np.insert, lambda rng: (rng.standard_normal((2, 5)), slice(0, 5, 2),
                                              rng.standard_normal((2, 1))), dict(axis=1)),
    E("insert/list", np.insert, lambda rng: (rng.standard_normal((3, 2)), [3, 0, 3],
                                             rng.standard_normal((1, 2))), dict(axis=0),
      note="unsorted and repeated places; one row of values broadcast to three"),
    E("insert/list-flat", np.insert, lambda rng: (rng.standard_normal((2, 2)), [1, -1],
                                                  rng.standard_normal(2))),
    E("delete/int", np.delete, lambda rng: (rng.standard_normal((3, 4)), 1), dict(axis=1)),
    E("delete/slice-flat", np.delete, lambda rng: (rng.standard_normal((2, 3)), slice(1, 5, 2))),
    E("delete/list", np.delete, lambda rng: (rng.standard_normal((4, 2)), [3, 0, 3]),
      dict(axis=0), note="a repeated place is deleted once"),
    E("delete/mask", np.delete, lambda rng: (rng.standard_normal(4), [True, False, False, True])),
    E("append/flat", np.append, normal((2, 3), (2,))),
    E("append/axis", np.append, normal((2, 3), (2, 1)), dict(axis=1)),
    E("append/float", np.append, normal((3,), None)),
    E("hsplit/1d", np.hsplit, normal((6,)), dict(indices_or_sections=3)),
    E("hsplit/2d", np.hsplit, normal((2, 5)), dict(indices_or_sections=[1, 3])),
    E("vsplit", np.vsplit, normal((4, 2)), dict(indices_or_sections=2)),
    E("dsplit", np.dsplit, normal((2, 1, 5)), dict(indices_or_sections=[2])),
    E("sliding_window_view", sliding_window_view, lambda rng: (rng.standard_normal(6), 3)),
    E("sliding_window_view/2d", sliding_window_view,
      lambda rng: (rng.standard_normal((3, 5)), (2, 3))),
    E("sliding_window_view/axis-twice", sliding_window_view,
      lambda rng: (rng.standard_normal((2, 8)), (2, 3)), dict(axis=(1, 1)),
      note="two windows along one axis: every item is read by up to six windows"),
    E("tile", np.tile, lambda rng: (rng.standard_normal((2, 3)), (2, 1, 2))),
    E("tile/int", np.tile, lambda rng: (rng.standard_normal(2), 3)),
    E("repeat/flat", np.repeat, lambda rng: (rng.standard_normal((2, 3)), 2)),
    E("repeat/counts", np.repeat, lambda rng: (rng.standard_normal((3, 2)), [1, 0, 2]),
      dict(axis=0)),
    E("pad", np.pad, lambda rng: (rng.standard_normal((2, 3)), ((1, 2), (0, 1)))),
    E("pad/fill", np.pad, lambda rng: (rng.standard_normal((2, 3)), 1),
      make_kwargs=lambda rng: dict(constant_values=float(rng.standard_normal()))),
    E("pad/fill-pair", np.pad, lambda rng: (rng.standard_normal((2, 3)), ((1, 2), (2, 1))),
      make_kwargs=lambda rng: dict(constant_values=tuple(rng.standard_normal(2).tolist())),
      note="(before, after) for every axis"),
    E("pad/fill-per-axis", np.pad, lambda rng: (rng.standard_normal((2, 3)), ((1, 2), (2, 1))),
      make_kwargs=lambda rng: dict(constant_values=rng.standard_normal((2, 2))),
      note="a pair per axis; a corner holds the later axis's value"),
    *[E(f"pad/{mode}", np.pad, lambda rng: (rng.standard_normal((3, 4)), ((2, 1), (1, 3))),
        dict(mode=mode)) for mode in ("edge", "reflect", "symmetric", "wrap")],
    E("pad/linear_ramp", np.pad, lambda rng: (rng.standard_normal((3, 4)), ((2, 1), (1, 3))),
      dict(mode="linear_ramp"), note="ramps to ends of 0"),
    E("pad/linear_ramp-ends-per-axis", np.pad,
      lambda rng: (rng.standard_normal((2, 3, 2)), ((1, 2), (0, 2), (3, 1))),
      dict(mode="linear_ramp"),
      make_kwargs=lambda rng: dict(end_values=rng.standard_normal((3, 2))),
      note="each ramp from the edges the earlier axes' padding left"),
    E("pad/linear_ramp-end", np.pad, lambda rng: (rng.standard_normal((4,)), 3),
      dict(mode="linear_ramp"), make_kwargs=lambda rng: dict(end_values=float(
          rng.standard_normal()))),
    *[E(f"pad/{mode}", np.pad, lambda rng: (rng.standard_normal((3, 4)), ((2, 1), (1, 3))),
        dict(mode=mode), note="no ties: one item attains each statistic")
      for mode in ("maximum", "minimum", "median", "mean")],
    E("pad/minimum-stat_length", np.pad,
      lambda rng: (rng.standard_normal((3, 4)), ((2, 1), (1, 3))),
      dict(mode="minimum", stat_length=((1, 2), (2, 3))),
      note="corners: the minimum along axis 1 of the minima padded along axis 0"),
    E("pad/median-even", np.pad, lambda rng: (rng.standard_normal((5,)), (2, 1)),
      dict(mode="median", stat_length=4), note="1/2 to each of the middle two"),
    E("pad/mean-stat_length", np.pad, lambda rng: (rng.standard_normal((2, 5)), 2),
      dict(mode="mean", stat_length=(1, 3))),
    *[E(f"pad/{mode}-odd", np.pad, lambda rng: (rng.standard_normal((3, 2)), ((1, 4), (2, 1))),
        dict(mode=mode, reflect_type="odd"), note="wider than the axis: reflected again")
      for mode in ("reflect", "symmetric")],
    E("helper:unpad/linear_ramp", ops.unpad, lambda rng: (rng.standard_normal((5, 7)),
                                                          ((2, 1), (1, 3))),
      dict(mode="linear_ramp"), wrt=(0,)),
    E("helper:unpad_values/linear_ramp", ops.unpad_values,
      lambda rng: (rng.standard_normal((5, 7)), ((2, 1), (1, 3)), np.ones((2, 2))),
      dict(mode="linear_ramp"), wrt=(0,)),
    E("diag/embed", np.diag, normal((3,)), dict(k=1)),
    E("diag/extract", np.diag, normal((3, 4)), dict(k=-1)),
    E("tril", np.tril, normal((3, 4))),
    E("triu/k", np.triu, normal((2, 3, 3)), dict(k=1)),
    E("take/flat", np.take, lambda rng: (rng.standard_normal((3, 4)), [[0, 5], [5, 11]])),
    E("take/axis", np.take, lambda rng: (rng.standard_normal((3, 4)), [2, 0, 2]), dict(axis=1)),
    E("take/wrap", np.take, lambda rng: (rng.standard_normal(4), [5, -1]), dict(mode="wrap")),
    # np.fill_diagonal's values: val repeated to the diagonal's length, or cut to it
    E("helper:diagonal_values/repeated", diagonal_values, lambda rng: (
        rng.standard_normal(2), np.zeros((5, 5))), wrt=(0,)),
    E("helper:diagonal_values/cut", diagonal_values, lambda rng: (
        rng.standard_normal((2, 3)), np.zeros((7, 3))), dict(wrap=True), wrt=(0,)),
    E("take/clip", np.take, lambda rng: (rng.standard_normal((4, 2)), [7, 0]),
      dict(axis=0, mode="clip")),
    E("take_along_axis/repeats", np.take_along_axis,
      lambda rng: (rng.standard_normal((3, 4)), _ALONG_ROWS), dict(axis=1)),
    E("take_along_axis/broadcast", np.take_along_axis,
      lambda rng: (rng.standard_normal((3, 1)), _ALONG_COLUMNS), dict(axis=0),
      note="a's second dimension has length 1 and broadcasts against the indices'"),
    E("take_along_axis/flat", np.take_along_axis,
      lambda rng: (rng.standard_normal((3, 4)), np.array([0, 5, 5, 11, -1])), dict(axis=None)),
    E("take_along_axis/last", np.take_along_axis,
      lambda rng: (rng.standard_normal((2, 3, 4)), np.array([[[3], [0], [1]], [[2], [2], [0]]])),
      dict(axis=-1)),
]

# --- Helpers that rule bodies call (their rules make second derivatives work) -----------------

_G = 0  # the differentiated argument of a helper that is linear in its first argument
_MASK = np.array([True, False, True, True])  # a where= mask


def _with(*makers):
    return lambda rng: tuple(m(rng) if callable(m) else m for m in makers)


def _n(*shape):
    return lambda rng: rng.standard_normal(shape)


TABLE += [
    E("helper:unbroadcast", ops.unbroadcast, normal((3, 4), (4,)), wrt=(_G,)),
    E("helper:unbroadcast/float", ops.unbroadcast, normal((3,), None), wrt=(_G,)),
    E("helper:unbroadcast/int", ops.unbroadcast, _with(_n(3, 2), np.arange(2)), wrt=(_G,)),
    E("helper:broadcast_like", ops.broadcast_like, normal((1, 4), (3, 4)), wrt=(_G,)),
    # `x op= v`'s value (x's dtype where x is an array): linear in `x op v`
    E("helper:in_place_result", in_place_result, normal((3, 4), (3, 4)), wrt=(_G,)),
    # a ufunc's operand under where= (runtime/primitives/out_writes.py): x where the mask is
    # True (broadcast against it), the safe value elsewhere; a Python number passed through
    E("helper:masked_operand", masked_operand, _with(_n(4), _MASK, 1), wrt=(0,)),
    E("helper:masked_operand/broadcast", masked_operand, _with(_n(3, 1), _MASK, 0), wrt=(0,)),
    E("helper:masked_operand/python-float", masked_operand,
      _with(lambda rng: float(rng.standard_normal()), _MASK, 1), wrt=(0,)),
    E("helper:kept_where", kept_where, _with(_n(3, 4), _n(4), _MASK), wrt=(_G,)),
    E("helper:kept_where/python-float", kept_where, _with(_n(), 2.0, _MASK), wrt=(_G,)),
    # copy.copy and copy.deepcopy of a value (runtime/derivatives/copies.py): the identity
    E("helper:copied", copied, normal((3, 4))),
    E("helper:deep_copied", deep_copied, normal((3, 4))),
    E("helper:unbroadcast_each", ops.unbroadcast_each,
      _with(lambda rng: [rng.standard_normal((2, 3)), rng.standard_normal((2, 3))],
            lambda rng: (rng.standard_normal(3), rng.standard_normal((2, 1)))), wrt=(_G,)),
    E("helper:broadcast_each_like", ops.broadcast_each_like,
      _with(lambda rng: [rng.standard_normal(3), rng.standard_normal((2, 1))],
            lambda rng: [rng.standard_normal((2, 3)), rng.standard_normal((2, 3))]), wrt=(_G,)),
    E("helper:meshgrid_adjoint", structural_adjoints.meshgrid_adjoint,
      _with(lambda rng: [rng.standard_normal((2, 3)), rng.standard_normal((2, 3))],
            lambda rng: (rng.standard_normal(3), rng.standard_normal((1, 2)))), wrt=(_G,)),
    E("helper:meshgrid_adjoint/ij-sparse", structural_adjoints.meshgrid_adjoint,
      _with(lambda rng: [rng.standard_normal((3, 1)), rng.standard_normal((1, 2))],
            lambda rng: (rng.standard_normal(3), rng.standard_normal(2))), dict(indexing="ij"),
      wrt=(_G,)),
    E("helper:meshgrid_tangent", structural_adjoints.meshgrid_tangent,
      lambda rng: ([rng.standard_normal(3), rng.standard_normal(2)],), wrt=(_G,)),
    E("helper:meshgrid_tangent/sparse", structural_adjoints.meshgrid_tangent,
      lambda rng: ([rng.standard_normal(3), rng.standard_normal(2), rng.standard_normal(4)],),
      dict(sparse=True, indexing="ij"), wrt=(_G,)),
    E("helper:unreduce", ops.unreduce, normal((3,), (3, 4)), dict(axis=1), wrt=(_G,)),
    E("helper:unreduce/keepdims", ops.unreduce, normal((1, 4), (3, 4)),
      dict(axis=0, keepdims=True), wrt=(_G,)),
    E("helper:unreduce/all", ops.unreduce, normal((), (3, 4)), wrt=(_G,)),
    E("helper:reduced_last", ops.reduced_last, normal((2, 3, 4)), dict(axis=(0, 2))),
    E("helper:reduced_last/all", ops.reduced_last, normal((2, 3))),
    E("helper:reduced_last_back", ops.reduced_last_back, normal((3, 8), (2, 3, 4)),
      dict(axis=(2, 0)), wrt=(0,)),
    E("helper:products_before", scans.products_before, normal((3, 5))),
    E("helper:products_before/zeros", scans.products_before, lambda rng: (with_zeros(rng, (3, 5)),)),
    E("helper:products_after", scans.products_after, normal((3, 5))),
    E("helper:products_after/zeros", scans.products_after, lambda rng: (with_zeros(rng, (6,)),)),
    E("helper:norm_direction/p2", ops.norm_direction, normal((4,)), dict(p=2.0, ties=None),
      wrt=(0,)),
    E("helper:norm_direction/p3", ops.norm_direction, lambda rng: (away_from_zero(rng, (4,)),),
      dict(p=3.0, ties=None), wrt=(0,)),
    E("helper:norm_slope/p2.5", ops.norm_slope, lambda rng: (away_from_zero(rng, (4,)),),
      dict(p=2.5), wrt=(0,)),
    E("helper:norm_slope/p3", ops.norm_slope, lambda rng: (away_from_zero(rng, (4,)),),
      dict(p=3.0), wrt=(0,)),
    E("helper:sinc_slope", ops.sinc_slope, lambda rng: (np.array([0.0, 0.3, -1.7, 2.5]),)),
    E("helper:abs_slope", complex_parts.abs_slope, lambda rng: (away_from_zero(rng, (3, 4)),),
      note="sign(x) of a real x: constant; of complex values, conj(z) / |z|"),
    E("helper:imag_gradient", complex_parts.imag_gradient, normal((3, 4), (3, 4)), wrt=(0,),
      note="zeros for a real z; -1j Re(g) for a complex one"),
    E("helper:imag_of", complex_parts.imag_of, normal((3, 4), (3, 4)), wrt=(0,),
      note="zeros for a real z; Im(h) for a complex one"),
    E("helper:real_gradient", complex_parts.real_gradient, normal((3, 4), (3, 4)), wrt=(0,),
      note="Re(g); in a complex z's dtype for a complex one"),
    E("helper:real_if_real", complex_parts.real_if_real, normal((3, 4), (3, 4)), wrt=(0,)),
    E("helper:log_of_base", exponent_logs.log_of_base,
      lambda rng: (np.array([0.4, 1.5, -0.8, 2.5, -1.2]) * rng.uniform(1.0, 1.5, 5),),
      dict(power=None), note="0 where x is not positive: constant there"),
    E("helper:log_of_base/float", exponent_logs.log_of_base, uniform(0.5, 2.0, None),
      dict(power=None)),
    E("helper:slope_base", exponent_logs.slope_base,
      lambda rng: (rng.normal(size=(3, 4)), np.array([0.0, 1.0, 2.5, 0.0])), wrt=(0,),
      note="x where x != 0: the identity"),
    E("helper:slope_base/float", exponent_logs.slope_base,
      lambda rng: (float(rng.uniform(0.5, 2.0)), 0.0), wrt=(0,)),
    E("helper:tril_half_diagonal", ops.tril_half_diagonal, normal((2, 3, 3))),
    E("helper:symmetric_read", triangles.symmetric_read, normal((2, 3, 3))),
    E("helper:symmetric_read/upper", triangles.symmetric_read, normal((3, 3)), dict(triangle="U")),
    E("helper:symmetric_read_adjoint", triangles.symmetric_read_adjoint, normal((2, 3, 3))),
    E("helper:symmetric_read_adjoint/upper", triangles.symmetric_read_adjoint, normal((3, 3)),
      dict(triangle=True)),
    E("helper:cholesky_lower", triangles.cholesky_lower, normal((2, 3, 3))),
    E("helper:cholesky_lower/upper", triangles.cholesky_lower, normal((3, 3)), dict(upper=True)),
    E("helper:eigh_gap_inverse", ops.eigh_gap_inverse, lambda rng: (distinct(rng, (2, 4)),)),
    E("helper:gap_weighted", degenerate_matrices.gap_weighted, normal((2, 4, 4), (2, 4, 4))),
    E("helper:cofactors", adjugates.cofactors,
      lambda rng: (well_conditioned(rng, 3, (2,)),)),
    E("helper:cofactors/singular", adjugates.cofactors,
      lambda rng: (rank_deficient(rng, 4, (2,)),)),
    E("helper:cofactors_jvp", adjugates.cofactors_jvp,
      lambda rng: (rank_deficient(rng, 3), rng.standard_normal((3, 3))), order=1),
    E("helper:cofactors_jvp/broadcast", adjugates.cofactors_jvp,
      lambda rng: (rank_deficient(rng, 3), rng.standard_normal((2, 3, 3))), order=1),
    E("helper:svd_gap_inverse", ops.svd_gap_inverse,
      lambda rng: (1.0 + np.abs(distinct(rng, (2, 4))), np.ones((2, 4, 4))), wrt=(0,)),
    E("helper:real_singular_values", ops.real_singular_values,
      lambda rng: (rng.standard_normal((2, 3)), np.ones((2, 4, 3))), wrt=(0,)),
    E("helper:solve_as_matrix", ops.solve_as_matrix, normal((3,), (3, 3), (3,)), wrt=(_G,)),
    E("helper:sort_like", ops.sort_like, _with(_n(3, 4), lambda rng: distinct(rng, (3, 4))),
      wrt=(_G,)),
    E("helper:sort_like/flat", ops.sort_like, _with(_n(3, 4), lambda rng: distinct(rng, (3, 4))),
      dict(axis=None), wrt=(_G,)),
    E("helper:unsort", ops.unsort, _with(_n(3, 4), lambda rng: distinct(rng, (3, 4))),
      dict(axis=0), wrt=(_G,)),
    E("helper:split_like", ops.split_like,
      _with(_n(2, 5), lambda rng: [rng.standard_normal((2, 2)), rng.standard_normal((2, 3))]),
      dict(axis=1), wrt=(_G,)),
    E("helper:split_like/vstack", ops.split_like,
      _with(_n(3, 2), lambda rng: [rng.standard_normal(2), rng.standard_normal((2, 2))]),
      dict(axis=0, ndmin=2), wrt=(_G,)),
    E("helper:split_like/column_stack", ops.split_like,
      _with(_n(3, 3), lambda rng: [rng.standard_normal(3), rng.standard_normal((3, 2))]),
      dict(axis=1, ndmin=-2), wrt=(_G,)),
    E("helper:join", ops.join, lambda rng: ([rng.standard_normal(2), rng.standard_normal(3)],)),
    E("helper:join/column_stack", ops.join,
      lambda rng: ([rng.standard_normal(2), rng.standard_normal((2, 3))],), dict(axis=1, ndmin=-2)),
    E("helper:join/hstack", ops.join, lambda rng: ([rng.standard_normal(2), 0.5],),
      dict(ndmin=1)),
    E("helper:unstack", ops.unstack, normal((2, 3)), dict(axis=1)),
    E("helper:reshape_each", ops.reshape_each, _with(_n(1, 3), lambda rng: (np.ones(3),)),
      wrt=(_G,)),
    E("helper:reshape_each/several", ops.reshape_each,
      _with(lambda rng: [rng.standard_normal(1), rng.standard_normal((1, 2))],
            lambda rng: (1.0, rng.standard_normal(2))), wrt=(_G,)),
    E("helper:reshape_each_back", ops.reshape_each_back,
      _with(lambda rng: [rng.standard_normal(3)], _n(1, 3)), wrt=(_G,)),
    E("helper:reshape_each_back/several", ops.reshape_each_back,
      _with(lambda rng: [rng.standard_normal(1), rng.standard_normal(2)],
            lambda rng: [rng.standard_normal((1, 1)), rng.standard_normal((1, 2))]), wrt=(_G,)),
    E("helper:unarray", ops.unarray, _with(_n(3), [1.0, 2.0, 3.0]), wrt=(_G,)),
    E("helper:unarray/array", ops.unarray, normal((1, 3), (3,)), wrt=(_G,)),
    E("helper:array_like", ops.array_like, normal((6,), (2, 3)), wrt=(_G,)),
    E("helper:untile", ops.untile, _with(_n(2, 2, 6), _n(2, 3), (2, 1, 2)), wrt=(_G,)),
    E("helper:unwindow", ops.unwindow, _with(_n(4, 3), _n(6), 3), wrt=(_G,)),
    E("helper:unwindow/axis0", ops.unwindow, _with(_n(2, 3, 2), _n(3, 3), 2), dict(axis=0),
      wrt=(_G,)),
    E("helper:unrepeat", ops.unrepeat, _with(_n(3, 4), _n(3, 2), 2), dict(axis=1), wrt=(_G,)),
    E("helper:unrepeat/counts", ops.unrepeat, _with(_n(3), _n(3), [2, 0, 1]), wrt=(_G,)),
    E("helper:unpad", ops.unpad, _with(_n(4, 5), ((1, 1), (2, 0))), wrt=(_G,)),
    E("helper:unpad/reflect", ops.unpad, _with(_n(6, 7), ((2, 1), (1, 3)), "reflect"),
      wrt=(_G,)),
    E("helper:unpad_values", ops.unpad_values, _with(_n(4, 6), ((1, 1), (2, 1)), (0.5, -1.0)),
      wrt=(_G,)),
    E("helper:unpad_values/per-axis", ops.unpad_values, _with(_n(4, 6), 1, np.ones((2, 1))),
      wrt=(_G,)),
    E("helper:weighted_pad", weighted_pads.weighted_pad,
      _with(_n(3, 4), _n(3, 4), ((2, 1), (1, 3)), "maximum"), wrt=(_G,)),
    E("helper:weighted_pad/odd", weighted_pads.weighted_pad,
      _with(_n(3, 4), _n(3, 4), 2, "reflect"), dict(reflect_type="odd"), wrt=(_G,)),
    E("helper:weighted_unpad", weighted_pads.weighted_unpad,
      _with(_n(6, 8), _n(3, 4), ((2, 1), (1, 3)), "median"), dict(stat_length=3), wrt=(_G,)),
    E("helper:weighted_unpad/odd", weighted_pads.weighted_unpad,
      _with(_n(7, 8), _n(3, 4), 2, "symmetric"), dict(reflect_type="odd"), wrt=(_G,)),
    E("helper:diagonal_adjoint", ops.diagonal_adjoint, normal((2, 2), (2, 4, 3)),
      dict(offset=1, axis1=1, axis2=2), wrt=(_G,)),
    E("helper:diagonal_adjoint/broadcast", ops.diagonal_adjoint, normal((1,), (3, 3)), wrt=(_G,)),
    E("helper:diag_adjoint/extract", ops.diag_adjoint, normal((4, 4), (3,)), dict(k=1),
      wrt=(_G,)),
    E("helper:diag_adjoint/embed", ops.diag_adjoint, normal((2,), (3, 2)), dict(k=-1),
      wrt=(_G,)),
    E("helper:shift", scans.shift, normal((3, 4)), dict(axis=1, step=1, fill=1.0), wrt=(_G,),
      note="the fill value is a constant (1.0 in cumprod's rules)"),
    E("helper:shift/back", scans.shift, normal((3, 4)), dict(axis=0, step=-1)),
    E("helper:forward_scan", scans.forward_scan, normal((3, 5), (3, 5)), dict(axis=1)),
    E("helper:forward_scan/zeros", scans.forward_scan,
      lambda rng: (rng.standard_normal((5, 3)), with_zeros(rng, (3, 5)).T), dict(axis=0)),
    E("helper:reverse_scan", scans.reverse_scan, normal((3, 5), (3, 5)), dict(axis=-1)),
    E("helper:reverse_scan/zeros", scans.reverse_scan,
      lambda rng: (rng.standard_normal(6), with_zeros(rng, (6,))), dict(axis=0)),
    E("helper:untake", ops.untake, _with(_n(2, 2), _n(3, 4), [[0, 5], [5, 11]]), wrt=(_G,)),
    E("helper:take_at", ops.take_at, _with(_n(3, 4), [[0, 5], [-1, 11]])),
    E("helper:take_at/axis-clip", ops.take_at, _with(_n(3, 4), [0, 7, 2]),
      dict(axis=1, mode="clip")),
    E("helper:untake/axis", ops.untake, _with(_n(3, 3), _n(3, 4), [2, 0, 2]), dict(axis=1),
      wrt=(_G,)),
    E("helper:untake_along", ops.untake_along, _with(_n(3, 3), _n(3, 4), _ALONG_ROWS),
      dict(axis=1), wrt=(_G,)),
    E("helper:untake_along/broadcast", ops.untake_along,
      _with(_n(2, 4), _n(3, 1), _ALONG_COLUMNS), dict(axis=0), wrt=(_G,)),
]

# Arrays filled from values (transforms/rules/filled_arrays.py). arange's bounds stay away
# from the points where its length changes.
TABLE += [
    E("full", np.full, lambda rng: ((2, 3), float(rng.standard_normal()))),
    E("full/array-fill", np.full, lambda rng: ((2, 3), rng.standard_normal(3)),
      note="a row of fill values broadcast to every row"),
    E("full_like", np.full_like, normal((2, 3), None), wrt=(1,),
      note="`a` gives only its shape and dtype: no gradient"),
    E("full_like/array-fill", np.full_like, normal((2, 3), (2, 1)), wrt=(1,)),
    E("linspace", np.linspace, normal(None, None), dict(num=5)),
    E("linspace/no-endpoint", np.linspace, normal(None, None), dict(num=4, endpoint=False)),
    E("linspace/one", np.linspace, normal(None, None), dict(num=1),
      note="one sample: start"),
    E("linspace/arrays-axis", np.linspace, normal((2, 3), (3,)), dict(num=4, axis=1),
      note="a start of shape (2, 3), a stop broadcast against it, samples along axis 1"),
    E("linspace/arrays-last", np.linspace, normal((2,), None), dict(num=3, axis=-1)),
    E("arange", np.arange, lambda rng: (float(rng.uniform(0.1, 0.4)), 3.05), wrt=(0,),
      note="three elements, 0.1 < start < 0.4: stop, which only sets the length, gets none"),
    E("arange/step", np.arange, lambda rng: (0.3, 2.0, float(rng.uniform(0.35, 0.4))),
      wrt=(0, 2), note="five elements"),
    E("arange/stop-alone", np.arange, lambda rng: (float(rng.uniform(3.1, 3.9)),),
      note="y_i = i: no gradient"),
]

_BILINEAR = [
    ("matmul", products.matmul_adjoint_a, products.matmul_adjoint_b, [
        ("2d", (3, 4), (4, 5), (3, 5)), ("batched", (2, 3, 4), (4, 5), (2, 3, 5)),
        ("vector-matrix", (4,), (2, 4, 3), (2, 3)), ("matrix-vector", (2, 3, 4), (4,), (2, 3)),
        ("vectors", (4,), (4,), ())], {}),
    ("dot", products.dot_adjoint_a, products.dot_adjoint_b, [
        ("2d", (3, 4), (4, 2), (3, 2)), ("nd", (2, 3, 4), (5, 4, 2), (2, 3, 5, 2)),
        ("vector-matrix", (4,), (4, 3), (3,)), ("scalar", (), (3,), (3,))], {}),
    ("inner", products.inner_adjoint_a, products.inner_adjoint_b, [
        ("2d", (3, 4), (2, 4), (3, 2)), ("nd", (2, 3, 4), (4,), (2, 3))], {}),
    ("tensordot", products.tensordot_adjoint_a, products.tensordot_adjoint_b, [
        ("pairs", (3, 2, 4), (2, 5, 3), (4, 5))], dict(axes=([1, 0], [0, 2]))),
    ("kron", products.kron_adjoint_a, products.kron_adjoint_b, [
        ("2d", (2, 3), (3, 2), (6, 6)), ("mixed", (3,), (2, 2), (2, 6))], {}),
    ("cross", products.cross_adjoint_a, products.cross_adjoint_b, [
        ("3-vectors", (4, 3), (3,), (4, 3)), ("2-vectors", (4, 2), (2,), (4,)),
        ("2-and-3-vectors", (4, 2), (4, 3), (4, 3))], {}),
]
for _name, _adjoint_a, _adjoint_b, _cases, _kwargs in _BILINEAR:
    for _case, _a, _b, _y in _cases:
        TABLE += [
            E(f"helper:{_name}_adjoint_a/{_case}", _adjoint_a, normal(_y, _a, _b), _kwargs,
              wrt=(0, 2)),
            E(f"helper:{_name}_adjoint_b/{_case}", _adjoint_b, normal(_y, _a, _b), _kwargs,
              wrt=(0, 1)),
        ]
TABLE += [
    E("helper:einsum_adjoint", products.einsum_adjoint,
      lambda rng: (rng.standard_normal((3, 2)), "ij,jk->ik",
                   (rng.standard_normal((3, 4)), rng.standard_normal((4, 2)))), wrt=(0, 2)),
    E("helper:einsum_adjoint/three", products.einsum_adjoint,
      lambda rng: (rng.standard_normal(2), "ij,jk,k->i",
                   (rng.standard_normal((2, 3)), rng.standard_normal((3, 4)),
                    rng.standard_normal(4))), wrt=(0, 2)),
    E("helper:einsum_jvp", products.einsum_jvp,
      lambda rng: ("ii,ij->j", [rng.standard_normal((3, 3)), rng.standard_normal((3, 2))],
                   (rng.standard_normal((3, 3)), rng.standard_normal((3, 2)))), wrt=(1, 2)),
]

_chain = lambda *shapes: lambda rng: [rng.standard_normal(s) for s in shapes]  # noqa: E731
TABLE += [
    E("helper:multi_dot_adjoint", chains.multi_dot_adjoint,
      lambda rng: (rng.standard_normal(5), _chain((3,), (3, 4), (4, 2), (2, 5))(rng)),
      wrt=(0, 1)),
    E("helper:multi_dot_adjoint/two", chains.multi_dot_adjoint,
      lambda rng: (rng.standard_normal((3, 2)), _chain((3, 4), (4, 2))(rng)), wrt=(0, 1)),
    E("helper:multi_dot_jvp", chains.multi_dot_jvp,
      lambda rng: (_chain((2, 3), (3, 4), (4,))(rng), _chain((2, 3), (3, 4), (4,))(rng))),
    E("helper:matrix_power_adjoint", chains.matrix_power_adjoint,
      lambda rng: (rng.standard_normal((3, 3)), near_identity(rng, 3), 3)),
    E("helper:matrix_power_adjoint/negative", chains.matrix_power_adjoint,
      lambda rng: (rng.standard_normal((3, 3)), near_identity(rng, 3), -2)),
    E("helper:matrix_power_jvp", chains.matrix_power_jvp,
      lambda rng: (rng.standard_normal((2, 3, 3)), near_identity(rng, 3, (2,)), 3)),
    E("helper:matrix_power_jvp/negative", chains.matrix_power_jvp,
      lambda rng: (rng.standard_normal((3, 3)), near_identity(rng, 3), -2)),
]

TABLE += nn_table(E)  # convolution, pooling and erf: tests/rule_table_nn.py
TABLE += signal_table(E)  # np.convolve, np.correlate: tests/rule_table_signal.py
TABLE += statistics_table(E)  # nan reductions, quantiles: tests/rule_table_statistics.py
TABLE += fft_table(E)  # np.fft's transforms: tests/rule_table_fft.py

# Every entry's test id is unique.
_names = [entry.name for entry in TABLE]
assert len(set(_names)) == len(_names), sorted({n for n in _names if _names.count(n) > 1})
