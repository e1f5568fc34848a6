"""Traced control flow where tf.function's rules and Python's meet: Python ints a traced loop
carries (runtime/tracing/weak_ints.py), and what vmap, branches and indexing give beside plain
NumPy. Each value is compared with the function run eagerly."""
from __future__ import annotations

import os

import numpy as np
import pytest

import autotrace

HERE = os.path.abspath(__file__)


def factorial(n):
    r = 1
    for i in range(n):
        r *= i + 1
    return r


def inv_pow2(x):
    k = 0
    while np.sum(x) > 1:
        x = x / 2
        k -= 1
    return 2 ** k


def first_power_above(limit):
    p = 1
    while p < limit:
        p = p * 10
    return p


def countdown(n):
    k = 0
    while k > -n:
        k = k - 7
    return -k


def debt(n):
    k = 0
    for i in range(n):
        k = k - 2 ** 62
    return k


def squared_steps(x):
    k = 1
    while np.sum(x) > 1:
        x = x / 2
        k += 1
    return k ** 3


def _line(function, text: str) -> int:
    import inspect
    lines, start = inspect.getsourcelines(function)
    return start + next(i for i, line in enumerate(lines) if text in line)


@pytest.mark.parametrize("function, argument", [
    (factorial, np.int64(5)), (factorial, np.int64(20)), (factorial, np.int64(0)),
    (inv_pow2, np.array([5.0])), (inv_pow2, np.array([1e6])),
    (first_power_above, np.float64(1e5)), (first_power_above, np.float64(1e18)),
    (countdown, np.int64(100)), (debt, np.int64(2)), (squared_steps, np.array([40.0])),
])
def test_python_ints_in_loops_give_pythons_values(function, argument):
    expected = function(argument)
    result = autotrace.function(function)(argument)
    assert result == expected
    assert isinstance(expected, float) == (np.asarray(result).dtype.kind == "f")


@pytest.mark.parametrize("function, argument, text", [
    (factorial, np.int64(25), "r *= i + 1"),
    (factorial, np.int64(21), "r *= i + 1"),
    (first_power_above, np.float64(1e20), "p = p * 10"),
    (debt, np.int64(3), "k = k - 2 ** 62"),
])
def test_python_int_past_int64_is_refused_at_its_line(function, argument, text):
    assert abs(function(argument)) >= 2 ** 63 - 7  # Python's int grows past int64
    with pytest.raises(OverflowError) as error:
        autotrace.function(function)(argument)
    assert str(error.value).startswith(
        f'File "{HERE}", line {_line(function, text)}: a Python int that this traced loop or '
        f"if carries left the range of int64 (-2**63 to 2**63 - 1)")


def doubling(n):
    k = 3
    for i in range(n):
        k = k << 1
    return k


@pytest.mark.parametrize("backend", ["numpy", "llvm"])
def test_python_int_checks_run_on_each_cpu_backend(backend):
    from tests.test_backend_agreement import run_traced
    for function, argument in [(factorial, 20), (debt, 2), (doubling, 61)]:
        result, _ = run_traced(backend, lambda: autotrace.function(function),
                               (np.int64(argument),))
        assert result == function(argument)
    for function, argument, text in [(factorial, 21, "r *= i + 1"),
                                     (debt, 3, "k = k - 2 ** 62"), (doubling, 62, "k << 1")]:
        assert function(argument) >= 2 ** 63 or function(argument) < -2 ** 63
        with pytest.raises(OverflowError) as error:
            run_traced(backend, lambda: autotrace.function(function), (np.int64(argument),))
        assert str(error.value).startswith(
            f'File "{HERE}", line {_line(function, text)}: a Python int that this traced loop')


def test_python_int_past_int64_is_refused_under_vmap():
    limits = np.array([1e5, 1e20])
    with pytest.raises(OverflowError, match="left the range of int64"):
        autotrace.vmap(first_power_above)(limits)
    np.testing.assert_array_equal(autotrace.vmap(first_power_above)(np.array([1e5, 1e9])),
                                  [10 ** 5, 10 ** 9])


def test_power_of_a_traced_int_is_a_float():
    # Python's 2 ** 0 is the int 1; the graph's `2 ** k` of a traced k is one float for
    # every k (a negative one gives a float in Python), equal to Python's int
    result = autotrace.function(inv_pow2)(np.array([0.5]))
    assert result == inv_pow2(np.array([0.5])) == 1 and np.asarray(result).dtype == np.float64


def test_power_of_a_traced_int_past_two_to_the_53_is_refused():
    def power_of_three(x):
        k = 0
        while np.sum(x) > 1:
            x = x / 2
            k += 1
        return 3 ** k
    assert autotrace.function(power_of_three)(np.array([1000.0])) == 3 ** 10
    with pytest.raises(OverflowError, match=r"passed 2\*\*53"):
        autotrace.function(power_of_three)(np.array([2.0 ** 40]))


def inverted(x):
    try:
        y = np.linalg.inv(x)
    except np.linalg.LinAlgError:
        y = x
    return y


def configured(x, cfg):
    try:
        n = cfg["n"]
    except KeyError:
        n = 2.0
    return x * n


def test_a_handler_does_not_catch_what_the_graph_raises_when_called():
    # (np.linalg.inv runs when the graph is called: its LinAlgError is the call's)
    with pytest.raises(np.linalg.LinAlgError, match="Singular matrix"):
        autotrace.function(inverted)(np.ones((2, 2)))
    np.testing.assert_allclose(autotrace.function(inverted)(np.eye(2) * 2.0), np.eye(2) / 2.0)


def first_items(x):
    items, i = [], 0
    while True:
        try:
            items.append(x[i])
        except IndexError:
            break
        i += 1
    return np.sum(np.stack(items) * 2.0)


def counted_in_a_try(x, cfg):
    k = 0
    try:
        for i in range(3):
            k = k + 1
        if "scale" in cfg:
            s = cfg["scale"]
            x = x * s
    except KeyError:
        k = -1
    return x * k


def inverted_or_typed(x):
    try:
        y = np.linalg.inv(x)
    except (TypeError, (KeyError, ValueError)):
        y = x
    return y


def inverted_bare(x):
    try:
        y = np.linalg.inv(x)
    except:  # noqa: E722
        y = x
    return y


def scaled_or_shifted(x, s):
    try:
        y = x * float(s)
    except (TypeError, AttributeError):
        y = x + 1.0
    return y


def test_a_try_around_traced_values_runs_as_python_while_tracing():
    x = np.array([1.0, 2.0, 3.0])
    assert autotrace.function(first_items)(x) == pytest.approx(first_items(x))
    for cfg in ({}, {"scale": 2.0}):
        np.testing.assert_array_equal(autotrace.function(counted_in_a_try)(x, cfg),
                                      counted_in_a_try(x, cfg))
    for function in (inverted_or_typed, inverted_bare):
        np.testing.assert_allclose(autotrace.function(function)(np.eye(2) * 4.0),
                                   np.eye(2) / 4.0)


def test_try_catching_only_what_tracing_raises_runs_as_python():
    x = np.array([1.0, 2.0])
    for s in (3.0, None):  # float(None): a TypeError while tracing
        np.testing.assert_array_equal(autotrace.function(scaled_or_shifted)(x, s),
                                      scaled_or_shifted(x, s))
    np.testing.assert_array_equal(autotrace.function(scaled_or_shifted)(x, None), [2.0, 3.0])


def test_try_around_python_values_runs_as_python():
    x = np.array([1.0, 2.0])
    for cfg in ({}, {"n": 3.0}):
        np.testing.assert_array_equal(autotrace.function(configured)(x, cfg), configured(x, cfg))
    batched = autotrace.vmap(configured, in_axes=(0, None))
    np.testing.assert_array_equal(batched(np.ones((2, 2)), {}), np.full((2, 2), 2.0))


def positive_or_zero(x):
    return x[0] if x[0] > 0 else 0


def positive_or_zero_statement(x):
    if x[0] > 0:
        return x[0]
    return 0


@pytest.mark.parametrize("first", [1.5, -1.5])
def test_conditional_expression_joins_a_python_number_as_the_if_statement(first):
    x = np.array([first, 2.0], np.float32)
    expected = positive_or_zero(x)  # np.float32(1.5), or the Python int 0
    result = autotrace.function(positive_or_zero)(x)
    assert result == expected and type(result) is type(expected)
    statement = autotrace.function(positive_or_zero_statement)(x)
    assert statement == expected and type(statement) is type(expected)


def test_asanyarray_traces_as_asarray():
    x = np.arange(3.0)
    np.testing.assert_array_equal(autotrace.function(lambda x: np.asanyarray(x) * 2.0)(x),
                                  np.asanyarray(x) * 2.0)
