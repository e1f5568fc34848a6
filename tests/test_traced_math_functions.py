"""Python's functions of numbers on traced values (runtime/tracing/math_functions.py): a math
function with a NumPy twin (math.exp and np.exp) computes as its twin under autotrace.function,
giving a traced value that stands for the Python float math gives; round(x, ndigits) of a
NumPy scalar rounds as NumPy does. Each function is checked against itself run eagerly, its
gradients in both orders against central differences. What has no twin (math.floor gives an
int, math.isnan a bool) is refused at the user's line, saying what to write; so are the calls
of math.log, math.hypot and x.item that autotrace does not differentiate."""
import inspect
import linecache
import math
import os

import numpy as np
import pytest

import autotrace
from autotrace.runtime.primitives.registry import UntraceableError
from autotrace.transforms.errors import TransformError
from tests.numeric import assert_gradients_in_both_orders

X = np.array([0.3, 0.7, 0.45])
THIS_FILE = os.path.abspath(__file__)


# --- functions that call math on traced numbers ----------------------------------------------

def trigonometry(x):
    return math.sin(x[0]) * math.cos(x[1]) + math.tan(x[2]) + math.atan2(x[0], x[1])


def inverse_trigonometry(x):
    return math.asin(x[0]) + math.acos(x[1]) * math.atan(x[2])


def hyperbolic(x):
    return (math.sinh(x[0]) + math.cosh(x[1]) * math.tanh(x[2]) + math.asinh(x[0])
            + math.acosh(1.0 + x[1]) + math.atanh(x[2]))


def exponentials(x):
    return (math.exp(x[0]) + math.expm1(x[1]) * math.log(x[2]) + math.log2(x[0])
            + math.log10(x[1]) + math.log1p(x[2]))


def roots_and_signs(x):
    return (math.sqrt(x[0]) + math.fabs(-x[1]) * math.copysign(x[2], -1.0)
            + math.hypot(x[0], x[1]))


def powers_and_remainders(x):
    return math.pow(x[0], x[1]) + math.fmod(x[2] * 7.0, x[1]) + math.pow(x[2], 2.0)


def angles(x):
    return math.degrees(x[0]) * math.radians(x[1] * 90.0)


def special_functions(x):  # (no NumPy twin: runtime/primitives/math_special.py, special.py)
    return (math.erf(x[0]) + math.erfc(x[1]) * math.gamma(x[2] + 1.0) + math.lgamma(x[0])
            + math.gamma(-x[1]) * math.lgamma(-x[2]))


def of_a_sum(x):
    s = np.sum(x * x)  # a NumPy scalar, as users write math on
    return math.exp(-s) * math.sqrt(s)


def in_a_loop(x):
    total = 0.0
    for v in x:
        total = total + math.exp(v) * math.sin(v)
    return total


def in_a_traced_branch(x):
    s = np.sum(x)
    if s > 1.0:
        s = math.log(s) * 2.0
    return s * x[0]


def a_rounded_number(x):
    return round(np.sum(x * x), 2) * x[0] + x[1]


MATH = [trigonometry, inverse_trigonometry, hyperbolic, exponentials, roots_and_signs,
        powers_and_remainders, angles, special_functions, of_a_sum, in_a_loop,
        in_a_traced_branch, a_rounded_number]


@pytest.mark.parametrize("f", MATH, ids=lambda f: f.__name__)
def test_traced_as_the_eager_function(f):
    traced = autotrace.function(f)
    for x in (X, 0.8 * X):
        assert traced(x) == pytest.approx(f(x), rel=1e-13)


@pytest.mark.parametrize("f", MATH, ids=lambda f: f.__name__)
def test_gradients_in_both_orders(f):
    assert_gradients_in_both_orders(f, X)


def test_the_graph_computes_the_twin():
    def f(x):
        return math.exp(x[0])
    graph = str(autotrace.function(f).graph(X))
    assert "exp" in graph and "astype" not in graph  # a float64 number is taken as it is


def scaled(x):
    return math.exp(x[0]) * x  # a Python float meets the array as a Python float does


def test_a_result_meets_arrays_as_a_python_float():
    x = X.astype(np.float32)
    expected = scaled(x)
    assert expected.dtype == np.float32
    result = autotrace.function(scaled)(x)
    assert result.dtype == np.float32
    np.testing.assert_allclose(result, expected, rtol=1e-6)
    np.testing.assert_allclose(autotrace.function(autotrace.jacobian(scaled))(x),
                               autotrace.jacobian(scaled)(x), rtol=1e-6)


def is_a_python_float(x):
    y = math.exp(x[0])
    if isinstance(y, float) and not isinstance(y, np.generic):
        return y * 2.0
    return y * 3.0


def test_a_result_answers_as_a_python_float():
    assert autotrace.function(is_a_python_float)(X) == pytest.approx(is_a_python_float(X))


def of_an_integer(n):
    return math.sqrt(n[0]) + math.exp(n[1] > 0)


def test_integers_and_bools_are_taken_as_floats():
    n = np.array([4, 1])
    assert autotrace.function(of_an_integer)(n) == pytest.approx(of_an_integer(n), rel=1e-15)


def log_with_a_base(x):
    return math.log(x[0], 2.0) + math.log(10.0, x[1])


def test_a_log_with_a_base_divides_logs_as_math_does():
    assert autotrace.function(log_with_a_base)(X) == pytest.approx(log_with_a_base(X),
                                                                   rel=1e-15)


def test_vmap_computes_the_twin_for_each_example():
    batch = np.stack([X, 1.5 * X, 0.5 * X])
    expected = np.stack([trigonometry(row) for row in batch])
    np.testing.assert_allclose(autotrace.vmap(trigonometry)(batch), expected, rtol=1e-13)


def test_python_numbers_are_math_own():
    def f(x):
        return x * math.exp(1.0) + math.floor(2.5)
    np.testing.assert_allclose(autotrace.function(f)(X), f(X), rtol=1e-15)


# --- refused: what has no twin -----------------------------------------------------------------

def floors(x):
    return math.floor(x[0]) + x[1]


def checks_nan(x):
    return x[1] * 2.0 if math.isnan(x[0]) else x[1]


def ieee_remainder(x):
    return math.remainder(x[0], x[1])


def hypot_of_three(x):
    return math.hypot(x[0], x[1], x[2])


def rounds_to_an_int(x):
    return round(x[0]) + x[1]


def item_at(x):
    return x.item(1) * 2.0


def line_of(function, marker: str) -> int:
    lines, first = inspect.getsourcelines(function)
    return first + next(i for i, line in enumerate(lines) if marker in line)


REFUSED = [
    (floors, UntraceableError,
     "math.floor gives a Python int, which a traced value has none of while tracing: write "
     "np.floor(x), which keeps x's dtype (np.floor(x).astype(int) for integers)",
     "math.floor(x[0])"),
    (checks_nan, UntraceableError,
     "math.isnan gives a Python bool, which a traced value has none of while tracing: write "
     "np.isnan(x), a traced bool (an `if` on it becomes a traced branch)",
     "math.isnan(x[0])"),
    (ieee_remainder, UntraceableError,
     "autotrace cannot trace math.remainder of a traced value: NumPy has no IEEE remainder; "
     "write x - y * np.round(x / y), which differs where x / y rounds to a half",
     "math.remainder(x[0], x[1])"),
    (hypot_of_three, UntraceableError,
     "autotrace traces math.hypot of two values (as np.hypot), not of 3: write "
     "math.hypot(math.hypot(a, b), c)", "math.hypot(x[0], x[1], x[2])"),
    (rounds_to_an_int, UntraceableError,
     "round(x) gives a Python int, which a traced value has none of while tracing: write "
     "np.round(x), which keeps x's dtype (round(x, ndigits) rounds as np.round does)",
     "round(x[0])"),
    (item_at, TypeError,
     "cannot convert a traced value to a Python scalar (.item()): a traced value has no Python "
     "value while tracing (it has one only when the graph runs). Index it instead, which keeps "
     "a traced NumPy scalar: x.ravel()[0] for x.item(), x.ravel()[i] for x.item(i), x[i, j] "
     "for x.item(i, j)", "x.item(1)"),
]


@pytest.mark.parametrize("f, kind, message, text", REFUSED,
                         ids=[f.__name__ for f, *_ in REFUSED])
def test_refused_at_the_users_line(f, kind, message, text):
    with pytest.raises(kind) as caught:
        autotrace.function(f)(X)
    assert str(caught.value) == (f'{message}\n  File "{THIS_FILE}", line {line_of(f, text)}, '
                                 f'in {f.__name__}\n    {_line_text(f, text)}')


def _line_text(function, marker: str) -> str:
    return linecache.getline(THIS_FILE, line_of(function, marker)).strip()


# --- round -----------------------------------------------------------------------------------

def rounded(x):
    return round(x[0] * 10.0, 2), round(np.sum(x) * 100.0, -1), round(x[2], 1)


def test_round_with_ndigits_rounds_as_numpy():
    x = np.array([0.2675, 5.5, 2.25])  # np.round gives 2.68 for 2.675, Python 2.67
    expected = rounded(x)
    result = autotrace.function(rounded)(x)
    for value, reference in zip(result, expected):
        assert type(value) is type(reference) is np.float64
        assert value == reference


def test_round_of_a_0d_array_is_numpys_error():
    def f(x):
        return round(np.array(x[0]), 2)
    with pytest.raises(TypeError, match="^type numpy.ndarray doesn't define __round__ method"):
        f(X)
    with pytest.raises(TypeError, match="^type numpy.ndarray doesn't define __round__ method"):
        autotrace.function(f)(X)


def rounds_a_python_float(x):
    return round(math.exp(x[0]), 2)


def test_round_of_a_python_float_is_refused():
    with pytest.raises(UntraceableError, match=(
            r"^autotrace cannot trace round\(\) of a Python float: Python rounds its exact "
            r"decimal value, NumPy's np.round does not; write np.round\(x, ndigits\)\n  File")):
        autotrace.function(rounds_a_python_float)(X)


# --- refused: what autotrace does not differentiate ------------------------------------------

def log_base(x):
    return math.log(x[0], 2.0) * x[1]


def item_at_index(x):
    return x.item(1) * x[0]


@pytest.mark.parametrize("f, text, message", [
    (log_base, "math.log(x[0], 2.0)",
     "autotrace differentiates math.log(x), not math.log(x, base): write "
     "math.log(x) / math.log(base)"),
    (hypot_of_three, "math.hypot(x[0], x[1], x[2])",
     "autotrace differentiates math.hypot of two values, not of one or of three or more: "
     "write math.hypot(math.hypot(a, b), c), or math.fabs(a) for one"),
    (item_at_index, "x.item(1)",
     "autotrace differentiates x.item(), not x.item(i) with an index: write x.ravel()[i] "
     "(x[i, j] for x.item(i, j)), a NumPy scalar"),
], ids=["log_base", "hypot_of_three", "item_at_index"])
def test_calls_without_a_rule_say_what_to_write(f, text, message):
    for transform in (autotrace.grad, autotrace.forward):
        with pytest.raises(TransformError) as caught:
            transform(f)
        error = caught.value
        assert error.message == message
        assert os.path.abspath(error.filename) == THIS_FILE
        assert error.lineno == line_of(f, text)
