"""Iterators kept in a name and read again: Python resumes them where a break left them, or
finds them used up. autotrace.function follows that where the break is a Python value, and
refuses a loop whose break is traced where the iterator may be read again
(runtime/tracing/control_loops.py), and a traced `if` or loop whose body reads an iterator
(runtime/tracing/control_held.py); the derivative transforms, which read an iterator as a
list, refuse the second read (transforms/front/used_up_iterators.py)."""
import numpy as np
import pytest

import autotrace
from autotrace import TransformError
from autotrace.runtime.tracing.control import ControlFlowError
from tests.numeric import central_difference

W = np.array([1.5, 0.5, -2.0, 0.25])
X = np.array([0.3, -0.7, 1.1, 0.4])


def zip_listed_then_reread(x):
    pairs = zip(W, x)
    pairs = list(pairs)
    s = 0.0
    for a, b in pairs:
        s = s + a * b
    for a, b in pairs:
        s = s + b * b
    return s


def zip_name_rebound(x):
    z = zip(W, x)
    s = sum(a * b for a, b in z)
    z = s * 2.0
    return z * z


def zip_in_helper_of_same_name(x):
    def dot(u, v):
        z = zip(u, v)
        return sum(a * b for a, b in z)
    z = x * 2.0
    return dot(W, z) + np.sum(z * z)


def zip_read_once_per_branch(x):
    z = zip(W, x)
    if len(x) > 5:
        return sum(b for a, b in z)
    s = 0.0
    for k in range(2):
        pairs = enumerate(x)
        for i, b in pairs:
            s = s + (i + k) * b * b
    return s + sum(a * b for a, b in z)


def zips_consumed_where_made(x):
    named = dict(zip(["a", "b", "c", "d"], x))
    ranked = sorted(zip(W, x), key=lambda pair: pair[0])
    firsts, seconds = zip(*[(1.0, x[0]), (2.0, x[1])])
    products = np.array(list(map(lambda a, b: a * b, W, x)))
    return (named["a"] * named["c"] + sum(a * b for a, b in ranked) + [*zip(W, x)][1][1] * 3.0
            + firsts[1] * seconds[0] + np.sum(products))


@pytest.mark.parametrize("f", [zip_listed_then_reread, zip_name_rebound,
                               zip_in_helper_of_same_name, zip_read_once_per_branch,
                               zips_consumed_where_made])
def test_iterators_read_once_in_every_mode(f):
    expected = central_difference(f, X)
    np.testing.assert_allclose(autotrace.grad(f)(X), expected, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(autotrace.function(autotrace.grad(f))(X), expected,
                               rtol=1e-6, atol=1e-8)
    value, tangent = autotrace.jvp(f, (X,), (np.ones(4),))
    np.testing.assert_allclose(value, f(X), rtol=1e-12)
    np.testing.assert_allclose(tangent, expected.sum(), rtol=1e-6)
    np.testing.assert_allclose(autotrace.function(f)(X), f(X), rtol=1e-12)


def traced_breaks(x):
    """Traced breaks in loops over iterators made in the header: nothing reads them after."""
    s = 0.0
    for i, v in enumerate(x):
        s = s + i * v * v
        if v < 0:
            break
    for a, b in zip(x[1:], x[:-1]):
        s = s + a * b
        if a < 0:
            break
    for v in (u * u for u in x):
        s = s + v
        if v > 0.2:
            break
    for v in map(np.sin, x):
        s = s + v
        if v < 0:
            break
    for v in {"a": x[0], "b": x[1] * 2.0}.values():  # (a view: each loop takes items afresh)
        s = s + v
        if v < 0:
            break
    return s


def resumed_after_python_breaks(x):
    """Python's breaks: a later loop goes on from the item a break left."""
    s = 0.0
    items = iter([x[0], x[1], x[2], x[3]])
    for k, v in enumerate(items):
        s = s + v * v
        if k == 1:
            break
    for v in items:
        s = s + 3.0 * v
    positions = iter(range(4))
    for k in positions:
        s = s + x[k] * x[k]
        if k == 1:
            break
    for k in positions:
        s = s + 3.0 * x[k]
    squares = map(lambda v: v * v, x)
    s = s + next(squares) + next(squares)
    for v in squares:
        s = s + 3.0 * v
    return s


@pytest.mark.parametrize("f", [traced_breaks, resumed_after_python_breaks])
def test_loops_over_iterators_traced(f):
    traced = autotrace.function(f)
    np.testing.assert_allclose(traced(X), f(X), rtol=1e-12)
    np.testing.assert_allclose(traced(-X), f(-X), rtol=1e-12)


def test_traced_break_in_loop_over_iterator_kept_is_refused():
    def resumed(x):
        it = iter(x)
        s = 0.0
        for v in it:
            s = s + v * v
            if v < 0:
                break
        for v in it:
            s = s + 3.0 * v * v
        return s

    with pytest.raises(ControlFlowError) as caught:
        autotrace.function(resumed)(X)
    line = resumed.__code__.co_firstlineno + 3
    assert str(caught.value).split("\n  File ")[0] == (
        f"{__file__}:{line}: for v in it:\n  this loop over an iterator breaks on a traced "
        "value, so the item it stops at is known only at run time, and the iterator may be "
        "read again after it (Python goes on from that item): loop over a list, a tuple or an "
        "array (list(...) of the iterator) and keep the position the break leaves as a traced "
        "index")


class _Holder:
    pass


def iterator_in_list_resumed(x):
    holder = [iter(x)]
    s = 0.0
    for v in holder[0]:
        s = s + v
        if v < 0:
            break
    return s + sum(10.0 * v for v in holder[0])


def iterator_in_attribute_resumed(x):
    held = _Holder()
    held.items = zip(W, x)
    s = 0.0
    for a, b in held.items:
        s = s + a * b
        if b < 0:
            break
    return s + sum(10.0 * b for a, b in held.items)


@pytest.mark.parametrize("f, header", [
    (iterator_in_list_resumed, "for v in holder[0]:"),
    (iterator_in_attribute_resumed, "for (a, b) in held.items:"),
])
def test_traced_break_in_loop_over_iterator_in_container_is_refused(f, header):
    with pytest.raises(ControlFlowError) as caught:
        autotrace.function(f)(X)
    assert str(caught.value).split("\n  this loop")[0] == (
        f"{__file__}:{f.__code__.co_firstlineno + 3 + (f is iterator_in_attribute_resumed)}: "
        f"{header}")


def branch_takes_items(x):
    z = zip(W, x)
    if x[0] > 5.0:
        s = sum(b for a, b in z)
    else:
        s = 1.0
    return s + sum(a * b for a, b in z)


def graph_loop_takes_items(x):
    it = iter([1.0, 2.0, 3.0, 4.0])
    s = 0.0
    for i in range((x[0] > 0) * 3):
        s = s + next(it) * x[i]
    return s


@pytest.mark.parametrize("f, line, header, name, kind, statement", [
    (branch_takes_items, 2, "if x[0] > 5.0:", "z", "zip", "an `if`"),
    (graph_loop_takes_items, 3, "for i in range((x[0] > 0) * 3):", "it", "list_iterator",
     "a `for` loop"),
])
def test_traced_body_reading_an_iterator_is_refused(f, line, header, name, kind, statement):
    with pytest.raises(ControlFlowError) as caught:
        autotrace.function(f)(X)
    assert str(caught.value).split("\n  File ")[0] == (
        f"{__file__}:{f.__code__.co_firstlineno + line}: {header}\n  this body reads the "
        f"iterator {name!r} (a {kind}) made before it: {statement} on a traced value is traced "
        "once as a graph op, so the items it takes from it would be taken once, while tracing, "
        "not on each iteration or only on the path taken. Make it a list before the statement "
        "(list(...)) and index that")


def zip_read_twice(x):
    z = zip(W, x)
    s = 0.0
    for a, b in z:
        s = s + a * b * b
    for a, b in z:
        s = s + 10.0 * b
    return s


def zip_read_in_loop(x):
    z = zip(W, x)
    s = 0.0
    for k in range(2):
        s = s + sum(a * b * k for a, b in z)
    return s


def squares_resumed(x):
    squares = (v * v for v in x)
    s = next(squares)
    return s + sum(squares)


@pytest.mark.parametrize("f, line, name, made, listed", [
    (zip_read_twice, 5, "z", "zip(...)", "list(zip(...))"),
    (zip_read_in_loop, 4, "z", "zip(...)", "list(zip(...))"),
    (squares_resumed, 3, "squares", "(... for ...)", "[... for ...]"),
])
def test_iterator_read_again_is_refused_in_derivatives(f, line, name, made, listed):
    first = f.__code__.co_firstlineno
    for derivative in (lambda: autotrace.grad(f)(X),
                       lambda: autotrace.jvp(f, (X,), (np.ones(4),))):
        with pytest.raises(TransformError) as caught:
            derivative()
        assert caught.value.lineno == first + line
        assert caught.value.message == (
            f"{name} holds the iterator {made} made on line {first + 1}, which an earlier read "
            "(or this one, run before in a loop or a function defined here) has taken items "
            "from: Python's iterator gives this read only the items left (none after a loop "
            f"over it), where autotrace would give all of them again; write {name} = {listed} "
            "to read its items more than once")
    np.testing.assert_allclose(autotrace.function(f)(X), f(X), rtol=1e-12)


class _EarlyExit:
    """Layers applied until the activation is small: a traced break in a loop over an
    iterator made in the header from an attribute, which nothing reads after the loop."""

    def __init__(self):
        self.weights = [np.eye(4) * 0.5, np.eye(4) * 0.9, np.eye(4) * 1.1]

    def __call__(self, h):
        for i, w in enumerate(self.weights):
            h = np.tanh(w @ h)
            if np.sum(h ** 2) < 0.05:
                break
        return h


def _batches(x, size):
    for start in range(0, len(x), size):
        yield x[start:start + size]


def generator_loop_breaks(x):
    s = 0.0
    for batch in _batches(x, 2):
        s = s + np.sum(batch ** 2)
        if s > 1.0:
            break
    return s


@pytest.mark.parametrize("f", [_EarlyExit().__call__, generator_loop_breaks])
def test_traced_break_over_an_iterator_made_in_the_header_is_traced(f):
    traced = autotrace.function(f)
    for x in (X, 0.1 * X, 3.0 * X):
        np.testing.assert_allclose(traced(x), f(x), rtol=1e-12)
