"""The graph passes fold only what is NumPy's result bit for bit: signed zeros, infinities,
nans and subnormal numbers through every identity and power rewrite, on the NumPy backend and
on the llvm backend (every region fused, graphs of scalars compiled whole), as arrays and as
0-d arrays (the float path of graphs of scalars).

Each function is run by NumPy on the same values; the traced result must have the same bits
where it is a number (np.signbit tells -0.0 from 0.0) and be nan where NumPy's is. The one
exception is the C library's arctan2 in llvm's compiled code: NumPy's AVX-512 builds compute
it with SVML, which rounds differently in the last bit (runtime/backends/llvm/cpu_scalar.py),
so there the value may be one ulp from NumPy's, its sign still NumPy's.
"""
from __future__ import annotations

import math

import numpy as np
import pytest

import autotrace
from autotrace.runtime.backends.selection import backend_named, cpu_backend

SPECIAL = [-0.0, 0.0, math.inf, -math.inf, math.nan, 1e-320, -1.5, 2.0]

IDENTITIES = {  # what a pass may fold, and the neighbours it may not
    "x * 1.0": lambda x: x * 1.0,
    "1.0 * x": lambda x: 1.0 * x,
    "x / 1.0": lambda x: x / 1.0,
    "x + 0.0": lambda x: x + 0.0,
    "0.0 + x": lambda x: 0.0 + x,
    "x + 0": lambda x: x + 0,
    "x + -0.0": lambda x: x + -0.0,
    "-0.0 + x": lambda x: -0.0 + x,
    "x - 0.0": lambda x: x - 0.0,
    "x - -0.0": lambda x: x - -0.0,
    "x + zeros": lambda x: x + np.zeros(x.shape),
    "x - zeros": lambda x: x - np.zeros(x.shape),
    "x + ones * -0.0": lambda x: x + np.ones(x.shape) * -0.0,
    "-(-x)": lambda x: -(-x),
    "+x": lambda x: +x,
    "x ** 1": lambda x: x ** 1,
    "x ** 1.0": lambda x: x ** 1.0,
    "x ** 0": lambda x: x ** 0,
    "x ** 2": lambda x: x ** 2,
    "x ** 3": lambda x: x ** 3,
    "x ** -1": lambda x: x ** -1,
    "x ** -2": lambda x: x ** -2,
    "x ** 0.5": lambda x: x ** 0.5,
    "np.power(x, 0.5)": lambda x: np.power(x, 0.5),
    "(x * 1.0) ** 0.5": lambda x: (x * 1.0) ** 0.5,   # on a 0-d x: a NumPy scalar, C's pow
    "np.copy(x) ** 0.5": lambda x: np.copy(x) ** 0.5,  # an array, the power ufunc
    "np.where(x > 0, x, x) ** 0.5": lambda x: np.where(x > 0, x, x) ** 0.5,
    "2.0 ** (x * 1.0)": lambda x: 2.0 ** (x * 1.0),
    "np.power(x, ones * 0.5)": lambda x: np.power(x, np.ones(x.shape) * 0.5),
    "np.sqrt(x)": lambda x: np.sqrt(x),
    "1 / (x + 0.0)": lambda x: 1.0 / (x + 0.0),
    "arctan2(x + 0.0, -1)": lambda x: np.arctan2(x + 0.0, -1.0),
    "arctan2(x * 1.0 + 0.0, -1)": lambda x: np.arctan2(x * 1.0 + 0.0, -1.0),
    "(x + 0.0) * 2.0 - 1.0": lambda x: (x + 0.0) * 2.0 - 1.0,
    "1 / -(-x)": lambda x: 1.0 / -(-x),
}

BACKENDS = ["numpy"] + (["llvm"] if backend_named("llvm").available() is None else [])
# computed by the C library on the llvm backend: within an ulp of NumPy's (see above)
C_LIBRARY = {"arctan2(x + 0.0, -1)", "arctan2(x * 1.0 + 0.0, -1)"}


def _traced_call(backend: str, function, args):
    llvm = backend_named("llvm")
    before, threshold = cpu_backend(), llvm.min_elements
    try:
        cpu_backend(backend)
        llvm.min_elements = 1
        with np.errstate(all="ignore"):
            return autotrace.function(function)(*args)
    finally:
        llvm.min_elements = threshold
        cpu_backend(before)


def _traced_result(backend: str, function, argument):
    return _traced_call(backend, function, (argument,))


def assert_same_bits(got, expected, where: str, ulps: int = 0):
    """`got` is NumPy's `expected` bit for bit, or, with `ulps`, of its sign and within that
    many units in the last place."""
    got, expected = np.asarray(got), np.asarray(expected)
    assert got.shape == expected.shape and got.dtype == expected.dtype, where
    nan = np.isnan(expected)
    assert np.array_equal(np.isnan(got), nan), f"{where}: {got} for NumPy's {expected}"
    close = np.array_equal(got[~nan], expected[~nan]) or np.all(
        np.abs(got[~nan] - expected[~nan]) <= ulps * np.spacing(np.abs(expected[~nan])))
    assert close and np.array_equal(np.signbit(got[~nan]), np.signbit(expected[~nan])), \
        f"{where}: {got!r} for NumPy's {expected!r}"


def _ulps(name: str, backend: str) -> int:
    return 1 if backend == "llvm" and name in C_LIBRARY else 0


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("name", list(IDENTITIES))
def test_special_values_in_an_array(name, backend):
    function = IDENTITIES[name]
    x = np.array(SPECIAL)
    with np.errstate(all="ignore"):
        expected = function(x.copy())
    assert_same_bits(_traced_result(backend, function, x), expected, f"{name} on {backend}",
                     _ulps(name, backend))


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("name", list(IDENTITIES))
def test_special_values_one_at_a_time(name, backend):
    """0-d arrays: the graph of scalars runs as Python floats (or compiled whole by llvm); `**`
    on a 0-d array is the power ufunc, on the NumPy scalars computed from it C's pow."""
    function = IDENTITIES[name]
    for value in SPECIAL:
        x = np.array(value)
        with np.errstate(all="ignore"):
            expected = function(x.copy())
        assert_same_bits(_traced_result(backend, function, x), expected,
                         f"{name} for {value!r} on {backend}", _ulps(name, backend))


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("name", list(IDENTITIES))
def test_special_values_of_numpy_scalars(name, backend):
    """NumPy scalars (np.sum's results): `**` on them is NumPy's scalar arithmetic, C's pow,
    where 0-d arrays take the power ufunc ((-inf) ** 0.5 is inf here, nan there)."""
    function = IDENTITIES[name]
    for value in SPECIAL:
        x = np.float64(value)
        with np.errstate(all="ignore"):
            expected = function(x)
            then_more = function(x) * 2.0 + x  # a longer graph: the float version of scalars
        assert_same_bits(_traced_result(backend, function, x), expected,
                         f"{name} for np.float64({value!r}) on {backend}", _ulps(name, backend))
        assert_same_bits(_traced_result(backend, lambda x: function(x) * 2.0 + x, x),
                         then_more, f"{name}, then more, for np.float64({value!r}) on {backend}",
                         _ulps(name, backend))


def test_a_numpy_scalar_and_a_0d_array_are_traced_apart():
    """`**` on a NumPy scalar is C's pow, on a 0-d array the power ufunc: one traced function
    gives each NumPy's result, from a trace of its own."""
    traced = autotrace.function(lambda x: x ** 0.5)
    with np.errstate(invalid="ignore"):
        assert traced(np.float64(-np.inf)) == np.inf == np.float64(-np.inf) ** 0.5
        assert np.isnan(traced(np.array(-np.inf))) and np.isnan(np.array(-np.inf) ** 0.5)
        assert not np.signbit(traced(np.float64(-0.0))) and np.signbit(traced(np.array(-0.0)))
    assert traced.trace_count == 2


def test_arctan2_of_a_signed_zero_plus_zero_is_pi():
    """-0.0 + 0.0 is +0.0, so arctan2 of it and -1 is pi, as in NumPy."""
    traced = autotrace.function(lambda y: np.arctan2(y + 0.0, -1.0))
    assert traced(np.array([-0.0]))[0] == math.pi
    assert traced(np.array(-0.0)) == math.pi


HALF = np.array(0.5)

EXPONENT_VALUES = {  # name -> (function, its arguments): exponents NumPy reads with stride 0
    # (a 0-d one, or one element written in place) are computed apart (0.5 as sqrt)
    "x ** (0-d 0.5)": (lambda x, p: x ** p, (np.array(SPECIAL), HALF)),
    "x ** (array of 0.5)": (lambda x, p: x ** p, (np.array(SPECIAL), np.full(8, 0.5))),
    "0-d x ** (0-d 0.5), then more": (lambda x, p: x ** p * 2.0 + x, (np.array(-0.0), HALF)),
    "0-d -inf ** (0-d 0.5), then more": (lambda x, p: x ** p * 2.0 + x,
                                         (np.array(-np.inf), HALF)),
    "NumPy scalars: x ** 0.5, then more": (lambda x, p: x ** p * 2.0 + x,
                                           (np.float64(-0.0), np.float64(0.5))),
    "NumPy scalars: -inf ** 0.5, then more": (lambda x, p: x ** p * 2.0 + x,
                                              (np.float64(-np.inf), np.float64(0.5))),
    "one element ** (a computed 0.5)": (lambda x: x ** (x * 0.0 + 0.5), (np.array([-0.0]),)),
    "one -inf ** (a computed 0.5)": (lambda x: x ** (np.abs(x) * 0.0 + 0.5),
                                     (np.array([-np.inf]),)),
    "float_power of one element": (lambda x: np.float_power(x, x * 0.0 + 0.5),
                                   (np.array([-0.0]),)),
}


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("name", list(EXPONENT_VALUES))
def test_powers_of_traced_exponents_are_numpys(name, backend):
    function, args = EXPONENT_VALUES[name]
    with np.errstate(all="ignore"):  # (np.copy of a NumPy scalar would be a 0-d array)
        expected = function(*[np.copy(a) if isinstance(a, np.ndarray) else a for a in args])
    assert_same_bits(_traced_call(backend, function, args), expected, f"{name} on {backend}")


@pytest.mark.parametrize("exponent", [2.0, -1.0])
def test_an_array_of_one_exponent_is_not_read_as_a_scalar_where_numpy_computes_that_apart(
        exponent):
    """NumPy's power loop computes x ** 2 and x ** -1 for one scalar exponent as x * x and
    1 / x, which round differently from its pow in about one element in a thousand: x to the
    power of an array of 2.0 must stay pow, bit for bit (NumPy backend)."""
    x = np.random.default_rng(1).standard_normal(20_000) * 10.0
    function = lambda x: np.power(x, np.full(x.shape, exponent))  # noqa: E731
    expected = function(x)
    assert not np.array_equal(expected, np.power(x, exponent))  # the two roundings differ
    assert_same_bits(_traced_call("numpy", function, (x,)), expected, f"x ** full({exponent})")
