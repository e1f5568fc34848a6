"""Python as people write it, differentiated: namedtuple classes made inside the function or
passed in, classes and builtins called through a variable, a class defined in the function;
against finite differences, or the refusal that says what to write instead."""
import collections
import functools
import os
import typing

import numpy as np
import pytest

import autotrace
from autotrace import TransformError
from autotrace.runtime.tracing.control import ControlFlowError
from tests.numeric import central_difference

THIS_FILE = os.path.abspath(__file__)
X = np.array([0.3, -1.2, 0.7, 1.1])


class Pair(typing.NamedTuple):
    a: np.ndarray
    b: float = 2.0


def _local_namedtuple(x):
    State = collections.namedtuple("State", "a b")
    s = State(x[0], x[1])
    for _ in range(2):
        s = State(s.a * s.b, s.a + np.sin(s.b))
    return s.a + 3 * s.b


def _namedtuple_by_keyword(x):
    State = collections.namedtuple("State", "a b", defaults=(0.5,))
    s = State(a=x * 3)
    return np.sum(s.a * s.b)


def _built_by(x, cls):
    p = cls(x ** 2)
    return np.sum(p.a * p.b)


@pytest.mark.parametrize("f, cls", [
    (_local_namedtuple, None), (_namedtuple_by_keyword, None), (_built_by, Pair),
    (_built_by, collections.namedtuple("Pair", "a b", defaults=(3.0,)))],
    ids=["local", "keyword", "typing", "collections"])
def test_namedtuple_class_called_through_a_variable(f, cls):
    """A namedtuple class made in the function, or passed to it, is built from its fields in
    every mode (reverse mode gave None for the gradient: the class was taken for a
    constant)."""
    args = () if cls is None else (cls,)
    expected = central_difference(lambda x: f(x, *args), X)
    np.testing.assert_allclose(autotrace.grad(f)(X, *args), expected, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(autotrace.vjp(f, X, *args)[1](1.0)[0], expected,
                               rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(autotrace.function(autotrace.grad(f))(X, *args), expected,
                               rtol=1e-6, atol=1e-8)
    direction = np.array([0.5, -1.0, 2.0, 0.25])
    value, tangent = autotrace.forward(f)(X, *args, tangent=direction)
    assert value == pytest.approx(f(X, *args))
    assert tangent == pytest.approx(np.sum(expected * direction), rel=1e-6)


class _Record(dict):
    pass


def _record_through(x, make):
    held = make(a=x * 3)
    return np.sum(held["a"])


def _sorted_through(x, make):
    held = make([x[0] * 3, x[1]])
    return held[0] + 2 * held[1]


@pytest.mark.parametrize("f, make, message", [
    (_record_through, _Record, "autotrace cannot differentiate building a _Record from "
                               "values that carry gradient: it derives from dict"),
    (_sorted_through, sorted, "autotrace differentiates sorted(...) called by its name, not "
                              "through a variable that holds it: call sorted itself")])
def test_callee_taken_for_a_constant_that_holds_its_arguments_is_refused(f, make, message):
    """A class autotrace cannot build from its fields, or sorted, called through a variable
    with values that carry gradient is refused at the user's line (it gave None)."""
    with pytest.raises(TransformError) as error:
        autotrace.grad(f)(X, make)
    assert str(error.value).startswith(message)
    assert "held = make(" in str(error.value)


def _defines_a_class(x):
    class Scale:
        factor: float = 2.0
    return np.sum(x * Scale.factor)


def test_class_with_annotations_defined_in_the_function_is_not_taken_for_an_edited_file():
    """The source check compiles the function under the user's `from __future__` imports,
    not autotrace's: an annotated class body compiled to other code, and the function was
    refused as if its file had been edited."""
    with pytest.raises(TransformError) as error:
        autotrace.grad(_defines_a_class)(X)
    assert "autotrace cannot differentiate a class definition inside the function; define " \
           "it at module level" in str(error.value)
    assert THIS_FILE in str(error.value)


def _closures_made_in_a_loop(x):
    scales = []
    for i in range(3):
        scales.append(lambda v: v * i)  # Python's late binding: each reads the last i
    return scales[0](x[0]) + scales[1](x[1])


def _closure_over_a_loop_variable(x):
    scale = 1.0

    def act(v):
        return np.tanh(v) * scale
    for _ in range(3):
        x = act(x)
        scale = scale * 2.0
    return np.sum(x)


@pytest.mark.parametrize("f", [_closures_made_in_a_loop, _closure_over_a_loop_variable])
def test_traced_closures_read_the_variables_python_assigns(f):
    """A function or lambda that reads a variable a loop assigns sees each value the loop
    assigns, as in Python (converted, the loop assigned it in a function of its own: the
    closures read the value from before the loop, or the one of the iteration that made
    them)."""
    assert autotrace.function(f)(X) == f(X)


def _closure_over_a_traced_branch(x):
    k = 1.0
    scaled = lambda v: v * k  # noqa: E731
    if np.sum(x) > 0:
        k = 2.0
    return scaled(x[1])


def _closure_made_after_a_traced_loop(x):
    a = 1.0
    while np.sum(x) < 10.0:
        x = x * 2.0
        a = a + 1.0
    scaled = lambda v: v * a  # noqa: E731
    return np.sum(scaled(x))


def _closure_called_before_a_traced_loop(x):
    a = 1.0
    shifted = lambda v: v * a + 1.0  # noqa: E731
    y = shifted(x)
    while np.sum(y) < 10.0:
        y = y * 2.0
        a = a + 1.0
    return np.sum(y) * a


@pytest.mark.parametrize("f", [_closure_made_after_a_traced_loop,
                               _closure_called_before_a_traced_loop])
def test_traced_loop_whose_variable_no_closure_reads_meanwhile_is_converted(f):
    """A closure made after the loop reads the value the loop leaves, and one called only
    before it never sees the loop's values: the loop on a traced condition is converted as
    any other."""
    traced = autotrace.function(f)
    for x in (np.abs(X), np.abs(X) * 4.0):
        assert traced(x) == f(x)


def test_traced_branch_assigning_a_closure_variable_is_refused():
    with pytest.raises(ControlFlowError) as error:
        autotrace.function(_closure_over_a_traced_branch)(X)
    assert "this if statement assigns the variable 'k', which a function or lambda defined in " \
           "this function reads, and cannot be converted to a graph cond when its condition " \
           "is traced; pass k to that function as an argument instead" in str(error.value)
    assert "if np.sum(x) > 0:" in str(error.value)


def _weighted_by_position(x, **weights):
    return sum(w * i for i, w in enumerate(weights.values())) * x


def test_traced_function_of_kwargs_keyed_by_their_order():
    """**kwargs iterates in the order the call gives them: a call with the same keywords in
    another order traces again (it ran the first trace: x * 2.0 for x * 1.0)."""
    traced = autotrace.function(_weighted_by_position)
    for weights in ({"a": 1.0, "b": 2.0}, {"b": 2.0, "a": 1.0}, {"a": 1.0, "b": 2.0}):
        np.testing.assert_array_equal(traced(X, **weights), _weighted_by_position(X, **weights))
    assert traced.trace_count == 2


PARAMS = {"w": np.array([[0.5, -0.2, 0.1, 0.4], [0.3, 0.8, -0.6, 0.2]]),
          "b": np.array([0.1, -0.2])}


def _weighted_items(p):
    return sum(np.sum(value ** 2) * (i + 1) for i, (key, value) in enumerate(p.items()))


def test_tangent_dict_in_another_key_order_is_read_by_key():
    """A tangent (or cotangent) dict given in another key order than its argument's is read by
    key: iterating the argument's items paired them by position (forward gave the derivative
    along the tangent of the other key)."""
    p = {"a": np.array([1.0, 2.0]), "b": np.array([3.0, 4.0])}
    tangent = {"b": np.zeros(2), "a": np.array([1.0, 0.0])}
    assert autotrace.forward(_weighted_items)(p, tangent=tangent)[1] == 2.0
    assert autotrace.jvp(_weighted_items, (p,), (tangent,))[1] == 2.0
    squares = autotrace.vjp(lambda q: {k: v ** 2 for k, v in q.items()}, p)[1]
    np.testing.assert_array_equal(squares(tangent)[0]["a"], [2.0, 0.0])


def _unpacked_into_a_dict(p, x):
    extra = {"c": x[0] ** 2}
    for i in range(2):
        p = {**p, "b": p["b"] * x[i]}
    q = {"a": x[1], **p, **extra, "w": p["w"] * 2}
    return np.sum(np.tanh(q["w"] @ x + q["b"])) * q["c"] + q["a"] * len(q)


def test_dict_literal_unpacking_a_dict():
    """`{**p, "w": w}`, the way parameters are updated, is differentiated in every mode as
    the dict it builds (it was refused), later keys over earlier ones."""
    def of_b(b):
        return _unpacked_into_a_dict({**PARAMS, "b": b}, X)
    expected = central_difference(of_b, PARAMS["b"])
    gradient = autotrace.grad(_unpacked_into_a_dict)(PARAMS, X)
    np.testing.assert_allclose(gradient["b"], expected, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(autotrace.function(autotrace.grad(_unpacked_into_a_dict))(
        PARAMS, X)["b"], expected, rtol=1e-6, atol=1e-8)
    tangent = {"w": np.zeros((2, 4)), "b": np.array([1.0, -0.5])}
    value, derivative = autotrace.forward(_unpacked_into_a_dict)(PARAMS, X, tangent=tangent)
    assert value == pytest.approx(_unpacked_into_a_dict(PARAMS, X))
    assert derivative == pytest.approx(np.sum(expected * tangent["b"]), rel=1e-6)


def _starred_targets(x):
    first, *rest = x
    a, *middle, b = (x[0] * 2, x[1], x[2] ** 2, x[3])
    (c, d), *others = [(x[0], x[1]), x[2]]
    return first * sum(rest) + a * b + sum(middle) * len(middle) + c * d * others[0]


def _first_times_last(x):
    first, *_, last = x
    return first * last


def test_starred_assignment():
    """`first, *rest = x` is written out as indexing a list of the value's items (it was
    refused); a value too short raises ValueError, as Python does."""
    expected = central_difference(_starred_targets, X)
    np.testing.assert_allclose(autotrace.grad(_starred_targets)(X), expected, rtol=1e-6,
                               atol=1e-8)
    direction = np.array([0.5, -1.0, 2.0, 0.25])
    value, tangent = autotrace.forward(_starred_targets)(X, tangent=direction)
    assert value == pytest.approx(_starred_targets(X))
    assert tangent == pytest.approx(np.sum(expected * direction), rel=1e-6)
    with pytest.raises(ValueError, match="not enough values to unpack"):
        autotrace.grad(_first_times_last)(X[:1])


def _builtin_pow(x):
    return pow(x[3], 2) + pow(2.0, x[0]) + np.sum(pow(x, 2)) + pow(x[3], x[2]) \
        + pow(3, 4, 5) * x[1]


def test_builtin_pow():
    """pow(a, b) is differentiated as a ** b (it had no rule); pow(a, b, mod) of integers
    still runs."""
    expected = central_difference(_builtin_pow, X)
    np.testing.assert_allclose(autotrace.grad(_builtin_pow)(X), expected, rtol=1e-6, atol=1e-8)
    value, tangent = autotrace.forward(_builtin_pow)(X, tangent=np.ones(4))
    assert value == pytest.approx(_builtin_pow(X))
    assert tangent == pytest.approx(np.sum(expected), rel=1e-6)


def _extrema_by_key(x):
    nearest = min(x, key=lambda v: (v - 0.45) ** 2)
    largest = max(x, key=abs)
    rows = [x[:2], x[2:] * 3]
    first_of_ties = max([x[0], 2 * x[1], 3 * x[2]], key=lambda v: 0)
    return nearest * 3 + largest + np.sum(max(rows, key=np.sum) ** 2) + first_of_ties \
        + min(x[0], x[1] * 2, key=lambda v: -v)


def test_min_and_max_with_a_key():
    """min and max with `key=` are differentiated as the first item of sorted(items, key=k)
    (their rule took no key: refused); of equal keys, the first item, as Python chooses."""
    expected = central_difference(_extrema_by_key, X)
    np.testing.assert_allclose(autotrace.grad(_extrema_by_key)(X), expected, rtol=1e-6,
                               atol=1e-8)
    value, tangent = autotrace.forward(_extrema_by_key)(X, tangent=np.ones(4))
    assert value == pytest.approx(_extrema_by_key(X))
    assert tangent == pytest.approx(np.sum(expected), rel=1e-6)


def _sorted_in_place_by_key(x):
    values = list(x)
    values.sort(key=abs, reverse=True)
    return values[0]


def test_sort_by_key_in_place_is_refused_with_advice_that_runs():
    """The refusal of `values.sort(key=...)` says `sorted(values, key=...)`, not np.sort,
    which takes no key."""
    with pytest.raises(TransformError) as error:
        autotrace.grad(_sorted_in_place_by_key)(X)
    assert str(error.value).endswith(
        "autotrace cannot differentiate .sort(), which changes 'values' in place; compute a "
        "new value instead: values = sorted(values, key=abs, reverse=True)")


class _Vector:
    def __init__(self, data):
        self.data = data

    def __add__(self, other):
        return _Vector(self.data + other.data)

    def __matmul__(self, other):
        return np.dot(self.data, other.data)


def _vectors_summed_by_reduce(x):
    total = functools.reduce(lambda a, b: a + b, [_Vector(x ** 2), _Vector(np.sin(x))])
    return total @ _Vector(x)


def test_product_operator_of_an_object_taken_for_arrays_is_refused():
    """`v @ w` of objects of a class of the user's that the source does not show (made by
    functools.reduce) is refused as `v + w` is, saying what to write (an AxisError from the
    product's adjoint, reading the object as a 0-d array)."""
    with pytest.raises(TypeError, match="autotrace differentiated an arithmetic operator as "
                                        "array arithmetic, but an operand is an object of a "
                                        r"class of yours, which Python hands the operator to "
                                        r"\(an operand of the product is a _Vector\)"):
        autotrace.grad(_vectors_summed_by_reduce)(X)
