"""isinstance and type of traced values (runtime/tracing/type_checks.py): converted code asks
them of the NumPy value a traced one stands for, so a traced function takes the branch the
eager one takes; a 0-d value that may be a NumPy scalar or a 0-d array is refused where the two
would answer differently. Each function is checked against itself run eagerly, under
autotrace.function, its gradients in both orders against central differences, and vmap against
a loop over the examples."""
import collections.abc
import numbers

import numpy as np
import pytest

import autotrace
from autotrace.runtime.primitives.registry import UntraceableError
from autotrace.runtime.tracing.tracer import Tracer, trace
from autotrace.runtime.tracing.type_checks import ARRAY, SCALAR, isinstance_, stands_for, type_
from tests.numeric import assert_gradients_in_both_orders

X = np.array([0.3, -0.7, 1.2])
M = np.array([[1.5, 0.2], [-0.4, 0.9]])
BATCH = np.stack([X, 2.0 * X, -X])


# --- functions whose branch a type check chooses --------------------------------------------------

def is_array(x):
    if isinstance(x, np.ndarray):
        return np.sum(x ** 2)
    return np.sum(x ** 3)


def type_is_array(x):
    if type(x) is np.ndarray:
        return np.sum(x ** 2)
    return np.sum(x ** 3)


def element_is_float(x):
    if isinstance(x[0], float):
        return np.sum(x ** 2)
    return np.sum(x ** 3)


def element_is_number(x):
    if isinstance(x[0], numbers.Number):
        return np.sum(x ** 2)
    return np.sum(x ** 3)


def sum_is_floating(x):
    if isinstance(np.sum(x), np.floating):
        return np.sum(x ** 2)
    return np.sum(x ** 3)


def checks_with_tuples_and_abstract_classes(x):
    total = np.sum(x)
    if isinstance(x, (list, tuple)):  # an array is neither
        total = total * 100.0
    if isinstance(x, collections.abc.Sequence):
        total = total * 10.0
    if isinstance(x, collections.abc.Iterable) and not isinstance(x, collections.abc.Hashable):
        total = total + np.sum(x ** 2)
    if isinstance(x[1], (int, numbers.Real)) and isinstance(x[1], np.generic):
        total = total + x[1] ** 2
    if isinstance(np.mean(x), np.integer):
        total = total * 0.0
    return total


def type_of_an_element(x):
    if type(x[0]) is np.float64 and type(np.max(x)).__name__ == "float64":
        return np.sum(np.sin(x))
    return np.sum(np.cos(x))


def array_of_a_number(x):
    s = np.asarray(np.sum(x * x))  # np.asarray of a NumPy scalar is a 0-d array
    if isinstance(s, np.ndarray) and not isinstance(s, float):
        return s * 2.0
    return s * 3.0


def zero_d_views(x):
    a = x[:1].reshape(())  # a view of an array: an array
    b = a[...]
    c = a[()]  # one element: a NumPy scalar
    if isinstance(a, np.ndarray) and isinstance(b, np.ndarray) and isinstance(c, float):
        return np.sum(x * b)
    return np.sum(x)


def python_number_of_a_loop(x):
    step = 1.0  # a Python number the traced loop keeps one (weak)
    y = x
    while np.sum(y * y) < 10.0:
        y = y * 1.5
        step = step * 0.5
    if isinstance(step, float) and not isinstance(step, np.generic):
        return np.sum(y) * step
    return np.sum(y)


def array_of_a_python_number(x):
    step = 1.0
    y = x
    while np.sum(y * y) < 10.0:
        y = y * 1.5
        step = step * 0.5
    a = np.asarray(step)  # a 0-d array, as np.asarray makes of a Python number
    if isinstance(a, np.ndarray) and not isinstance(a, float):
        return np.sum(y) * a
    return np.sum(y)


BRANCHING = [is_array, type_is_array, element_is_float, element_is_number, sum_is_floating,
             checks_with_tuples_and_abstract_classes, type_of_an_element, array_of_a_number,
             zero_d_views, python_number_of_a_loop, array_of_a_python_number]


@pytest.mark.parametrize("f", BRANCHING, ids=lambda f: f.__name__)
def test_traced_function_takes_the_eager_branch(f):
    expected = f(X)
    assert autotrace.function(f)(X) == pytest.approx(expected, rel=1e-12)
    assert autotrace.function(f)(2.0 * X) == pytest.approx(f(2.0 * X), rel=1e-12)


@pytest.mark.parametrize("f", BRANCHING, ids=lambda f: f.__name__)
def test_gradients_in_both_orders(f):
    assert_gradients_in_both_orders(f, X)


@pytest.mark.parametrize("f", BRANCHING, ids=lambda f: f.__name__)
def test_vmap_answers_for_each_example(f):
    expected = np.stack([f(row) for row in BATCH])
    np.testing.assert_allclose(autotrace.vmap(f)(BATCH), expected, rtol=1e-12)


def test_converted_code_calls_the_replacements():
    def fresh(x):  # converted here for the first time
        if isinstance(x, np.ndarray):
            return np.sum(x ** 2)
        return np.sum(x ** 3)
    assert autotrace.function(fresh)(X) == pytest.approx(fresh(X))


# --- 0-d values: a NumPy scalar, a 0-d array, or either -------------------------------------------

def is_float(x):
    if isinstance(x, float):
        return x * 2.0
    return x * 3.0


def type_of(x):
    return x * 2.0 if type(x) is np.float64 else x * 3.0


def is_an_array_or_a_number(x):  # a NumPy scalar and a 0-d array answer alike
    if isinstance(x, (np.ndarray, np.generic)) and not isinstance(x, str):
        return x * 2.0
    return x * 3.0


@pytest.mark.parametrize("argument", [np.float64(2.0), np.array(2.0)], ids=["scalar", "0-d"])
@pytest.mark.parametrize("f", [is_float, type_of], ids=["isinstance", "type"])
def test_a_0d_argument_answers_as_what_it_is(argument, f):
    # A NumPy scalar and a 0-d array are keyed apart (signature.py): each trace knows which.
    want = f(argument)
    got = autotrace.function(f)(argument)
    assert type(got) is type(want) and got == want


@pytest.mark.parametrize("argument", [np.float64(2.0), np.array(2.0)], ids=["scalar", "0-d"])
@pytest.mark.parametrize("f, call", [(is_float, "isinstance(x, float)"),
                                     (type_of, "type(x)")], ids=["isinstance", "type"])
def test_a_0d_spec_argument_is_refused_where_scalar_and_array_differ(argument, f, call):
    # One trace of a 0-d Spec serves both kinds.
    traced = autotrace.function(f, input_signature=[autotrace.Spec((), np.float64)])
    with pytest.raises(UntraceableError, match=(
            rf"autotrace cannot trace {call.replace('(', '[(]').replace(')', '[)]')} of this "
            r"0-d float64 value: it may stand for a NumPy scalar .* Test np.ndim\(x\) == 0 "
            r"instead, or make it an array first \(x = np.array\(x\)\)")):
        traced(argument)


@pytest.mark.parametrize("argument", [np.float64(2.0), np.array(2.0)], ids=["scalar", "0-d"])
def test_a_0d_argument_is_answered_where_both_agree(argument):
    assert autotrace.function(is_an_array_or_a_number)(argument) == 4.0


def carried_through_a_traced_if(x):
    s = np.sum(x)
    if s > 0.0:  # a traced `if`: its result is a NumPy scalar on both paths
        s = s * 2.0
    return s * 2.0 if isinstance(s, float) else s * 3.0


def made_an_array_in_a_traced_if(x):
    s = np.sum(x)
    if s > 0.0:  # an array on one path, a NumPy scalar on the other
        s = np.asarray(s * 2.0)
    return s * 2.0 if isinstance(s, float) else s * 3.0


def test_a_value_a_traced_branch_carries_answers_as_numpys_or_is_refused():
    assert carried_through_a_traced_if(X) == pytest.approx(np.sum(X) * 4.0)
    assert autotrace.function(carried_through_a_traced_if)(X) == pytest.approx(np.sum(X) * 4.0)
    assert autotrace.function(carried_through_a_traced_if)(-X) == pytest.approx(-np.sum(X) * 2.0)
    assert made_an_array_in_a_traced_if(X) == pytest.approx(np.sum(X) * 6.0)
    with pytest.raises(UntraceableError, match=r"isinstance\(x, float\) of this 0-d float64"):
        autotrace.function(made_an_array_in_a_traced_if)(X)


def test_vmap_over_numbers_answers_as_for_each_number():
    # An example of a vector is a NumPy scalar, as NumPy's x[k]: isinstance(x, float) holds.
    np.testing.assert_array_equal(autotrace.vmap(is_float)(X), [is_float(v) for v in X])
    np.testing.assert_array_equal(autotrace.vmap(type_of)(X), [type_of(v) for v in X])
    np.testing.assert_allclose(autotrace.vmap(is_an_array_or_a_number)(X), 2.0 * X)


# What a 0-d value made each way stands for, and NumPy's own type for it: the trace must answer
# as NumPy's value (SCALAR, ARRAY), or refuse where it cannot tell (None) and the two differ.
ZERO_D = [
    ("x[0]", lambda x: x[0], SCALAR),
    ("np.sum(x)", np.sum, SCALAR),
    ("x.mean()", lambda x: x.mean(), SCALAR),
    ("np.max(x)", np.max, SCALAR),
    ("np.argmax(x)", np.argmax, SCALAR),
    ("np.all(x > 0)", lambda x: np.all(x > 0), SCALAR),
    ("x @ x", lambda x: x @ x, SCALAR),
    ("np.dot(x, x)", lambda x: np.dot(x, x), SCALAR),
    ("np.inner(x, x)", lambda x: np.inner(x, x), SCALAR),
    ("np.einsum", lambda x: np.einsum("i,i", x, x), SCALAR),
    ("np.tensordot", lambda x: np.tensordot(x, x, 1), ARRAY),
    ("np.linalg.norm(x)", np.linalg.norm, SCALAR),
    ("np.std(x)", np.std, SCALAR),
    ("x[0] * 2.0", lambda x: x[0] * 2.0, SCALAR),
    ("x[0] ** 2", lambda x: x[0] ** 2, SCALAR),
    ("np.sin(x[0])", lambda x: np.sin(x[0]), SCALAR),
    ("np.maximum(x[0], 0)", lambda x: np.maximum(x[0], 0), SCALAR),
    ("np.clip(x[0], 0, 1)", lambda x: np.clip(x[0], 0, 1), SCALAR),
    ("x[0] > 0", lambda x: x[0] > 0, SCALAR),
    ("np.take(x, 0)", lambda x: np.take(x, 0), SCALAR),
    ("np.sort(x)[0]", lambda x: np.sort(x)[0], SCALAR),
    ("x[0].astype(f32)", lambda x: x[0].astype(np.float32), SCALAR),
    ("np.reshape(x[0], ())", lambda x: np.reshape(x[0], ()), SCALAR),
    ("np.squeeze(x[0])", lambda x: np.squeeze(x[0]), SCALAR),
    ("np.transpose(x[0])", lambda x: np.transpose(x[0]), SCALAR),
    ("np.real(x[0] + 1j)", lambda x: np.real(x[0] + 1j), SCALAR),
    ("x[0][()]", lambda x: x[0][()], SCALAR),
    ("x[0][...]", lambda x: x[0][...], ARRAY),
    ("x[0, ...]", lambda x: x[0, ...], ARRAY),
    ("np.reshape(x[:1], ())", lambda x: np.reshape(x[:1], ()), ARRAY),
    ("np.squeeze(x[:1])", lambda x: np.squeeze(x[:1]), ARRAY),
    ("0-d array.astype(f32)", lambda x: x[:1].reshape(()).astype(np.float32), ARRAY),
    ("0-d array[()]", lambda x: x[:1].reshape(())[()], SCALAR),
    ("np.sum(0-d array)", lambda x: np.sum(x[:1].reshape(())), SCALAR),
    ("np.copy(x[0])", lambda x: np.copy(x[0]), ARRAY),
    ("x[0].copy()", lambda x: x[0].copy(), SCALAR),
    ("x[:1].reshape(()).copy()", lambda x: x[:1].reshape(()).copy(), ARRAY),
    ("np.zeros_like(x[0])", lambda x: np.zeros_like(x[0]), ARRAY),
    ("np.full_like(x[0], 2.0)", lambda x: np.full_like(x[0], 2.0), ARRAY),
    ("np.where(x[0] > 0, x[0], x[1])", lambda x: np.where(x[0] > 0, x[0], x[1]), ARRAY),
    ("np.broadcast_to(x[0], ())", lambda x: np.broadcast_to(x[0], ()), ARRAY),
    ("0-d array written", lambda x: _written(x), ARRAY),
    # `a += 1.0` on a value known for a 0-d array writes into it (an array); `a + 1.0` of one
    # is a scalar
    ("np.copy(x[0]) + 1.0", lambda x: np.copy(x[0]) + 1.0, SCALAR),
    ("a += 1.0 on a copy", lambda x: _added(np.copy(x[0])), ARRAY),
    ("a += 1.0 on a scalar", lambda x: _added(x[0] * 1.0), SCALAR),
    ("a += 1.0 on a view", lambda x: _added(x[:1].reshape(())), ARRAY),
]


def _written(x):
    a = np.zeros_like(x[0])
    a[...] = x[1]
    return a


def _added(a):
    a += 1.0
    return a


CLASSES = [np.ndarray, np.generic, np.floating, np.float64, np.integer, np.bool_, float, int,
           bool, complex, numbers.Number, numbers.Real, numbers.Integral, object, Tracer,
           collections.abc.Sequence, collections.abc.Hashable, collections.abc.Iterable,
           (np.ndarray, float), (list, tuple), (np.generic, np.ndarray)]


@pytest.mark.parametrize("made, expected", [(make, kind) for _, make, kind in ZERO_D],
                         ids=[name for name, _, _ in ZERO_D])
def test_what_a_0d_value_stands_for(made, expected):
    value = made(X)
    if expected is not None:  # the table says what NumPy makes
        assert isinstance(value, np.generic) == (expected == SCALAR)
    answers = []

    def check(x):
        traced = made(x)
        assert stands_for(traced) == expected
        for classinfo in CLASSES:
            try:
                answers.append((classinfo, isinstance_(traced, classinfo)))
            except UntraceableError:
                answers.append((classinfo, None))
        try:
            answers.append(("type", type_(traced)))
        except UntraceableError:
            answers.append(("type", None))
        return x
    trace(check, (X,))
    for classinfo, answer in answers:
        if classinfo == "type":
            assert answer is (type(value) if expected is not None else None)
        elif expected is not None:
            assert answer == isinstance(value, classinfo), classinfo
        else:  # refused exactly where a NumPy scalar and a 0-d array differ
            scalar, array = value.dtype.type(0), np.zeros((), value.dtype)
            agree = isinstance(scalar, classinfo) == isinstance(array, classinfo)
            assert answer == (isinstance(value, classinfo) if agree else None), classinfo


@pytest.mark.parametrize("shape", [(3,), (2, 2), (1, 1, 1)])
@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int64, np.bool_, np.complex128])
def test_an_array_is_an_ndarray_of_its_dtype(shape, dtype):
    value = np.zeros(shape, dtype)

    def check(x):
        assert type_(x) is np.ndarray
        for classinfo in CLASSES:
            assert isinstance_(x, classinfo) == isinstance(value, classinfo), classinfo
        return x
    trace(check, (value,))


class _Array(np.ndarray):
    pass


def test_subclasses_of_ndarray_are_not_matched():
    def check(x):
        assert not isinstance_(x, _Array) and not isinstance_(x, np.matrix)
        assert isinstance_(x, Tracer) is False  # NumPy's value is no Tracer
        assert isinstance(x, Tracer)  # autotrace's own code sees the Tracer
        return x
    trace(check, (X,))


# --- anything but a traced value: the builtins' answers -------------------------------------------

@pytest.mark.parametrize("value", [X, np.float64(1.5), np.array(2.0), 1.5, 3, True, "text", None,
                                   [X], (1, 2), {"a": 1}, np.int32(4), range(3)],
                         ids=lambda value: type(value).__name__)
def test_eager_values_answer_as_the_builtins(value):
    for classinfo in CLASSES:
        assert isinstance_(value, classinfo) == isinstance(value, classinfo)
    assert type_(value) is type(value)


def test_type_with_three_arguments_makes_a_class():
    made = type_("Made", (object,), {"answer": 42})
    assert isinstance(made, type) and made.__name__ == "Made" and made().answer == 42
    with pytest.raises(TypeError):
        isinstance_(X, 5)  # the builtin's error, as eagerly


def test_a_0d_array_the_function_makes_and_writes_is_returned_as_one():
    # (the graph computes `a += 1` of a 0-d array as `add`, whose NumPy result is a scalar:
    # it came back immutable, where NumPy gives a 0-d array)
    def counter(s):
        a = np.zeros_like(s)
        a += 1
        b = np.zeros(())
        b[...] = 4.0
        return a, np.array(s), np.sum(s) * 2.0, b
    s = np.array(2.5)
    for got, expected in zip(autotrace.function(counter)(s), counter(s)):
        assert type(got) is type(expected) and got == expected
    got = autotrace.function(counter)(s)
    got[0][...] = 5.0  # (writable, as NumPy's)
    assert got[0] == 5.0


@pytest.mark.parametrize("start", [lambda x: x[0], np.sum, lambda x: x.astype(np.float32)[1]])
def test_a_long_chain_of_ops_on_a_number_is_followed_without_recursion(start):
    # (what a 0-d result stands for was found by a recursion per op: RecursionError past a
    # thousand steps of a scalar loop started from a NumPy scalar)
    def iterate(x):
        s = start(x)
        for _ in range(1500):
            s = np.sin(s) * 1.5
        return s
    x = np.array([0.7, 0.2])
    expected = iterate(x)
    result = autotrace.function(iterate)(x)
    assert type(result) is type(expected) and result == expected
