"""Edge cases whose errors did not name the user's line or say what to write: each now computes
what NumPy computes or is refused naming the user's file and line and what to write instead."""
import inspect

import numpy as np
import pytest

import autotrace
from autotrace.transforms.errors import TransformError

X = np.array([0.3, 0.1, 0.5, 0.2, 0.9, 0.4])
HERE = __file__


def line_of(function, text: str) -> int:
    """The line of this file where `function`'s source has `text`."""
    lines, start = inspect.getsourcelines(function)
    return start + next(i for i, line in enumerate(lines) if text in line)


# ---- `a.shape = ...` ---------------------------------------------------------------------------

def reshaped_by_assignment(x):
    a = x * 2.0
    a.shape = (2, 3)
    return np.sum(a[0] * a[1])


def test_assigning_shape_is_refused_saying_to_reshape():
    line = line_of(reshaped_by_assignment, "a.shape =")
    with pytest.raises(AttributeError) as traced:
        autotrace.function(reshaped_by_assignment)(X)
    assert str(traced.value) == (
        "autotrace cannot trace an assignment to .shape of a traced array (a.shape = (2, 3)): "
        "it reshapes the array in place. Write the reshape as a new value instead: "
        f"a = a.reshape(2, 3)\n  File \"{HERE}\", line {line}, in reshaped_by_assignment\n"
        "    a.shape = (2, 3)")
    with pytest.raises(TransformError) as differentiated:
        autotrace.grad(reshaped_by_assignment)(X)
    assert str(differentiated.value) == (
        f'File "{HERE}", line {line}: autotrace cannot differentiate a.shape = ...: it reshapes '
        "a in place; write the reshape as a new value instead: a = a.reshape(2, 3)")


# ---- methods called through np.ndarray ----------------------------------------------------------

def sorted_through_the_class(x):
    a = x * 1.0
    np.ndarray.sort(a)
    return a * np.arange(6.0)


def filled_through_the_class(x):
    a = x * 1.0
    np.ndarray.fill(a, 2.0)
    return a + x


@pytest.mark.parametrize("f, method, instead", [
    (sorted_through_the_class, "sort", "a = np.sort(a) for an array, a = sorted(a) for a list"),
    (filled_through_the_class, "fill", "a = np.full_like(a, 2.0)")])
def test_a_method_called_through_the_class_is_the_method(f, method, instead):
    np.testing.assert_allclose(autotrace.function(f)(X), f(X))
    line = line_of(f, f"np.ndarray.{method}(")
    with pytest.raises(TransformError) as raised:
        autotrace.grad(lambda x: np.sum(f(x)))(X)
    assert str(raised.value) == (
        f'File "{HERE}", line {line}: autotrace cannot differentiate .{method}(), which changes '
        f"'a' in place; compute a new value instead: {instead}")


# ---- an in-place method of a view made by a method ----------------------------------------------

def sorted_rows_of_a_reshape(x):
    a = x * 1.0
    a.reshape(2, 3).sort()
    return np.sum(a * np.arange(6.0))


def sorted_through_np_reshape(x):
    a = x * 1.0
    np.reshape(a, (2, 3)).sort()
    return np.sum(a * np.arange(6.0))


def test_a_method_changing_a_view_made_by_a_method_names_it():
    line = line_of(sorted_rows_of_a_reshape, ".sort()")
    with pytest.raises(TransformError) as raised:
        autotrace.grad(sorted_rows_of_a_reshape)(X)
    assert str(raised.value) == (
        f'File "{HERE}", line {line}: autotrace cannot differentiate a.reshape(2, 3).sort(), '
        "which changes 'a' in place (through a.reshape(2, 3), a view of its memory); "
        "write its new value into 'a' itself instead: "
        "a[...] = np.sort(a.reshape(2, 3)).reshape(a.shape)")

    # The advice computes what NumPy's in-place sort does.
    def advised(x):
        a = x * 1.0
        a[...] = np.sort(a.reshape(2, 3)).reshape(a.shape)
        return np.sum(a * np.arange(6.0))
    assert advised(X) == pytest.approx(sorted_rows_of_a_reshape(X))
    line = line_of(sorted_through_np_reshape, ".sort()")
    with pytest.raises(TransformError) as raised:
        autotrace.grad(sorted_through_np_reshape)(X)
    assert str(raised.value) == (
        f'File "{HERE}", line {line}: np.reshape(a, (2, 3)).sort(...) changes '
        "np.reshape(a, (2, 3)) in place, and 'a' shares its memory (a = x * 1.0, line "
        f"{line - 1}), read after it on line {line + 1}: the write changes 'a' too, which "
        "autotrace does not follow. Compute the new value and write it into 'a' itself "
        "(a[...] = ...), or, if 'a' should keep its old values, work on a copy "
        "(np.reshape(a, (2, 3)).copy())")


# ---- out= of a dtype NumPy does not write into --------------------------------------------------

def taken_into_float64(x):
    b = np.zeros(2)
    x.take(np.array([0, 1]), out=b)
    return np.sum(b)


def taken_by_function_into_float64(x):
    b = np.zeros(2)
    np.take(x, np.array([0, 1]), out=b)
    return np.sum(b)


@pytest.mark.parametrize("f", [taken_into_float64, taken_by_function_into_float64])
def test_take_into_an_out_numpy_does_not_cast_is_refused(f):
    x = X.astype(np.float32)
    message = ("Cannot cast array data from dtype('float64') to dtype('float32') according "
               "to the rule 'safe'")
    with pytest.raises(TypeError, match=message.replace("(", r"\(").replace(")", r"\)")):
        f(x)
    line = line_of(f, "out=b")
    for transform in (autotrace.function, autotrace.grad, autotrace.forward):
        with pytest.raises(TypeError) as raised:
            transform(f)(x)
        assert str(raised.value) == (
            f"{message} (numpy.take with out=: give out the dtype float32)\n"
            f'  File "{HERE}", line {line}')
    assert autotrace.function(f)(X) == pytest.approx(f(X))  # float64 into float64


# ---- a nested function writing into an array of the function around it -------------------------

def put_by_a_nested_function(x):
    buf = np.zeros(3)

    def put(i, v):
        buf[i] = v
    put(0, x[0])
    return buf * 2.0


def put_into_a_traced_buffer(x):
    buf = np.zeros_like(x, shape=(3,))

    def put(i, v):
        buf[i] = v
    put(0, x[0])
    return buf * 2.0


def test_a_nested_write_into_an_array_made_by_numpy_says_to_make_it_traced():
    line = line_of(put_by_a_nested_function, "buf[i] = v")
    with pytest.raises(ValueError) as raised:
        autotrace.function(put_by_a_nested_function)(X)
    assert str(raised.value) == (
        "setting an array element with a sequence. (a traced value is written into 'buf', a "
        "NumPy array of the function around put, made there by NumPy and not from a traced "
        "value, which NumPy cannot hold a traced value in. Make it from a traced value so it is "
        "traced too, where it is made: buf = np.zeros_like(x, shape=...) for buf = "
        "np.zeros(...), x a traced array; or return the value from put and write it there)\n"
        f'  File "{HERE}", line {line}, in put\n    buf[i] = v')
    np.testing.assert_allclose(autotrace.function(put_into_a_traced_buffer)(X),
                               put_by_a_nested_function(X))


# ---- a ufunc with where= ------------------------------------------------------------------------

def logs_where_selected(x):
    o = np.zeros(6)
    m = x > 0.25
    np.log(x, out=o, where=m)
    return np.sum(o * np.arange(6.0))


def logs_as_advised(x):
    o = np.zeros(6)
    m = x > 0.25
    o[...] = np.where(m, np.log(np.where(m, x, 1)), o)
    return np.sum(o * np.arange(6.0))


def test_a_ufunc_with_where_is_the_write_it_stands_for():
    # out keeps its old values where m is False, and the gradient there has no NaN.
    assert logs_as_advised(X) == pytest.approx(logs_where_selected(X))
    expected = np.where(X > 0.25, np.arange(6.0) / X, 0.0)
    for transform in (autotrace.grad, lambda f: autotrace.function(autotrace.grad(f))):
        np.testing.assert_allclose(transform(logs_as_advised)(X), expected)
        np.testing.assert_allclose(transform(logs_where_selected)(X), expected)
    assert autotrace.function(logs_where_selected)(X) == pytest.approx(logs_where_selected(X))
