"""Python statements as people write them, differentiated in every mode: `with` blocks of
np.errstate, warnings.catch_warnings and a manager of the user's, a loop's `else:`, `:=`
hoisted, a set of constants, and map/filter read whole (transforms/front/loop_else.py,
assignment_expressions.py, constant_sets.py, maps_and_filters.py, context_managers.py)."""
import contextlib
import warnings

import numpy as np
import pytest

import autotrace
from autotrace import TransformError
from tests.numeric import central_difference, check_every_mode


class Timer:
    """A user's context manager whose __exit__ returns a false value."""
    scale = 2.0

    def __enter__(self):
        return self

    def __exit__(self, *exception):
        return False


TIMER = Timer()


def with_errstate(x):
    with np.errstate(divide="ignore", invalid="ignore"):
        y = np.log(x) / x
    return np.sum(y)


def with_warnings(x):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        y = np.sqrt(x) * x
    return np.sum(y)


def with_user_manager(x):
    with TIMER:
        y = np.sin(x) ** 2
    with Timer() as timer, np.errstate(over="ignore"):
        z = np.sum(y * x) * timer.scale
    return z


def for_else_without_break(x):
    total = 0.0
    for v in x:
        total = total + v * v
    else:
        total = total * 2.0
    return total


def for_else_with_break(x):
    total = 0.0
    for v in x:
        if v > 1.0:
            total = total * v
            break
        total = total + np.sin(v)
    else:
        total = -total * 3.0
    return total


def while_else(x):
    i = 0
    while i < 3:
        x = x * np.cos(x)
        i += 1
    else:
        x = x + 1.0
    return np.sum(x ** 2)


def walrus(x):
    if (s := np.sum(x ** 2)) > 1.0:
        return s * (n := len(x)) + n
    y = (t := np.tanh(x)) * t
    return np.sum(y) + s


def sets_of_constants(x):
    keys = {"a", "b"}
    scale = 2.0 if 3 in {1, 3} else 1.0
    return np.sum(x) * len(keys) * scale * ("a" in keys)


def maps_and_filters(x):
    squares = sum(map(lambda v: v * v, x))
    sines = list(map(np.sin, x))
    kept = tuple(filter(lambda v: np.ndim(v) == 0, x))  # (a test of Python values)
    total = 0.0
    for a, b in zip(x, list(map(np.exp, x))):
        total = total + a * b
    return squares + np.sum(np.stack(sines)) + sum(kept) + total


FUNCTIONS = [with_errstate, with_warnings, with_user_manager, for_else_without_break,
             for_else_with_break, while_else, walrus, sets_of_constants, maps_and_filters]


@pytest.mark.parametrize("point", [[0.5, 1.5, 0.3], [0.2, 0.7, 0.3]])
@pytest.mark.parametrize("f", FUNCTIONS, ids=[f.__name__ for f in FUNCTIONS])
def test_statement_in_every_mode(f, point):
    x = np.array(point)
    check_every_mode(f, x)
    assert autotrace.function(f)(x) == pytest.approx(f(x), rel=1e-12)
    gradient = lambda p: autotrace.grad(f)(p)  # noqa: E731
    expected = np.stack([central_difference(lambda p: gradient(p)[i], x) for i in range(3)])
    np.testing.assert_allclose(autotrace.hessian(f)(x), expected, rtol=1e-5, atol=1e-6)
    batch = np.stack([x, x * 0.9])
    np.testing.assert_allclose(autotrace.vmap(autotrace.grad(f))(batch),
                               [autotrace.grad(f)(row) for row in batch], rtol=1e-12)


def test_generated_source_reads_as_written():
    source = autotrace.source(autotrace.grad(with_warnings))
    adjoint = source[source.index("# Adjoint sweep"):]
    # the adjoint statements run in the context again, after its warning filter
    assert "with warnings.catch_warnings():\n        warnings.simplefilter('ignore')" in adjoint
    source = autotrace.source(autotrace.grad(with_user_manager))
    assert source.count("with TIMER:") == 1 and source.count("with Timer() as timer:") == 1
    source = autotrace.source(autotrace.grad(maps_and_filters))
    assert ".append(v_1 * v_1)" in source  # the lambda inlined


def suppresses(x):
    with contextlib.suppress(ValueError):
        y = np.sum(x ** 3)
    return y


def walrus_under_or(x):
    if np.sum(x) > 5.0 or (s := np.sum(x ** 2)) > 1.0:
        return np.sum(x)
    return s


def walrus_read_before(x):
    s = np.sum(x)
    return s + (s := s * 2.0)


REFUSED = [
    (suppresses, 2, "autotrace cannot differentiate this with statement: "
     "contextlib.suppress(ValueError) may swallow an exception (its __exit__ is not known to "
     "return a false value), which decides which statements of the block run; autotrace "
     "differentiates a with statement of autotrace.name_scope, np.errstate, "
     "warnings.catch_warnings or a context manager whose __exit__ returns a false constant; "
     "call the function inside the with block instead"),
    (walrus_under_or, 2, "autotrace cannot differentiate an assignment expression (:=); "
     "assign on its own line"),
    (walrus_read_before, 3, "autotrace cannot differentiate an assignment expression (:=); "
     "assign on its own line"),
]


@pytest.mark.parametrize("f, line, message", REFUSED, ids=[case[0].__name__ for case in REFUSED])
@pytest.mark.parametrize("mode", ["grad", "jvp"])
def test_refused(f, line, message, mode):
    x = np.array([0.5, 1.5, 0.3])
    with pytest.raises(TransformError) as caught:
        if mode == "grad":
            autotrace.grad(f)(x)
        else:
            autotrace.jvp(f, (x,), (x,))
    assert caught.value.message == message
    assert caught.value.lineno == f.__code__.co_firstlineno + line - 1


def filters_by_value(x):
    return sum(filter(lambda v: v > 0.4, np.sin(x))) * np.sum(list(map(np.exp, x)))


def test_filter_by_value_eagerly():
    # (traced, the list's length would depend on a traced value: refused as for the
    # comprehension written out)
    x = np.array([0.5, 1.5, 0.3])
    expected = central_difference(filters_by_value, x)
    np.testing.assert_allclose(autotrace.grad(filters_by_value)(x), expected, rtol=1e-6)
    _, tangent = autotrace.jvp(filters_by_value, (x,), (np.ones(3),))
    assert tangent == pytest.approx(np.sum(expected), rel=1e-6)
    assert autotrace.function(suppresses)(x) == pytest.approx(suppresses(x))
    assert autotrace.function(walrus_read_before)(x) == pytest.approx(walrus_read_before(x))
