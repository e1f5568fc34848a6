"""A derivative of a function that writes into a read-only argument raises NumPy's error, eagerly
and traced (runtime/tracing/arguments.py, runtime/derivatives/snapshots.py).

NumPy refuses a write into a read-only array (np.broadcast_to's, a read-only memory map). A
derivative writes into a copy of an argument it changes, or gives it a new value (`y += x`);
eagerly the copy stays read-only, and `y += x` checks first. A trace cannot see flags: it
notes which arguments its derivatives write into, and a call passing one read-only raises.
"""
import re

import numpy as np
import pytest

import autotrace as at
from autotrace import Spec

X = np.array([1.0, 2.0, 3.0])


def read_only(values=(1.0, 1.0, 1.0)):
    return np.broadcast_to(np.array(values), (3,))


def writes_an_item(x, y):
    y[0] = x[0] * 2.0
    return np.sum(y * x)


def writes_a_slice_with_out(x, y):
    np.multiply(y, x, out=y)
    return np.sum(y * x)


def adds_in_place(x, y):
    y += x
    return np.sum(y * x)


def helper_writes(y, x):
    y[1:] = x[1:] ** 2
    return np.sum(y)


def calls_a_helper_that_writes(x, y):
    return helper_writes(y, x) + np.sum(x)


def writes_in_a_traced_if(x, y):
    if np.sum(x) > 100.0:
        y[0] = x[0]
    return np.sum(y * x)


def only_reads(x, y):
    return np.sum(np.sin(y) * x)


# d/dx of each at y = ones (the writeable call), by hand
GRADIENTS = {
    writes_an_item: lambda x: np.array([4.0 * x[0], 1.0, 1.0]),  # 2 x0^2 + x1 + x2
    writes_a_slice_with_out: lambda x: 2.0 * x,                 # sum x^2
    adds_in_place: lambda x: 1.0 + 2.0 * x,                     # sum (1 + x) x
    calls_a_helper_that_writes: lambda x: np.array([1.0, 1.0 + 2 * x[1], 1.0 + 2 * x[2]]),
    writes_in_a_traced_if: lambda x: np.ones(3),                # the branch is not taken
}

MESSAGE = ("assignment destination is read-only: argument 'y' is a read-only array "
           "(np.broadcast_to's, a read-only memory map), and the function writes into it in "
           "place, which NumPy refuses. Its derivative writes into a copy of it or gives it a "
           "new value, and keeps NumPy's error. Pass a writeable array (y.copy())")


@pytest.mark.parametrize("function", list(GRADIENTS), ids=lambda f: f.__name__)
def test_a_traced_gradient_refuses_a_read_only_argument_it_writes_into(function):
    traced = at.function(at.grad(function))
    np.testing.assert_allclose(traced(X, np.ones(3)), GRADIENTS[function](X))
    with pytest.raises(ValueError) as raised:
        traced(X, read_only())
    if function is writes_in_a_traced_if:
        assert str(raised.value) == MESSAGE.replace(
            "in place,", "in place in a traced `if` or loop (a trace takes every path, so also "
            "one this call may not),")
    else:
        assert str(raised.value) == MESSAGE
    # the same trace serves writeable calls after, and the caller's arrays never change
    y = np.ones(3)
    np.testing.assert_allclose(traced(X, y), GRADIENTS[function](X))
    np.testing.assert_array_equal(y, np.ones(3))
    assert traced.trace_count == 1


@pytest.mark.parametrize("function", [f for f in GRADIENTS if f is not writes_in_a_traced_if],
                         ids=lambda f: f.__name__)
def test_eager_derivatives_raise_where_numpy_does(function):
    with pytest.raises(ValueError, match="read-only"):
        function(X, read_only())
    with pytest.raises(ValueError, match="read-only"):
        at.grad(function)(X, read_only())
    with pytest.raises(ValueError, match="read-only"):
        at.jvp(function, (X, read_only()), (np.ones(3), np.ones(3)))
    np.testing.assert_allclose(at.grad(function)(X, np.ones(3)), GRADIENTS[function](X))


def test_eager_in_place_operator_on_a_read_only_parameter_names_the_line():
    line = adds_in_place.__code__.co_firstlineno + 1
    with pytest.raises(ValueError, match=re.escape(
            f'output array is read-only (File "{__file__}", line {line}: the array changed '
            f'in place there is read-only)')):
        at.grad(adds_in_place)(X, read_only())


def test_a_read_only_argument_only_read_is_taken():
    traced = at.function(at.grad(only_reads))
    np.testing.assert_allclose(traced(X, read_only((0.5, 1.0, 2.0))),
                               np.sin([0.5, 1.0, 2.0]))


def test_one_argument_calls_and_read_only_memory_maps(tmp_path):
    def doubles_first(y):
        y[0] = y[0] * 2.0
        return np.sum(y * y)
    traced = at.function(at.grad(doubles_first))
    np.testing.assert_allclose(traced(X.copy()), [8.0 * X[0], 2 * X[1], 2 * X[2]])
    path = tmp_path / "values.bin"
    X.tofile(path)
    mapped = np.memmap(path, dtype=X.dtype, mode="r", shape=(3,))
    with pytest.raises(ValueError, match="argument 'y' is a read-only array"):
        traced(mapped)
    with pytest.raises(ValueError, match="assignment destination is read-only"):
        at.grad(doubles_first)(mapped)


def test_a_read_only_value_made_inside_stays_read_only_in_its_copy():
    def broadcasts_then_writes(x):
        return helper_writes(np.broadcast_to(x[0], (3,)), x)
    with pytest.raises(ValueError, match="assignment destination is read-only"):
        at.grad(broadcasts_then_writes)(X)
    with pytest.raises(ValueError, match="assignment destination is read-only"):
        at.function(at.grad(broadcasts_then_writes))(X)


def test_vmap_concrete_and_signature_functions_refuse_too():
    batched = at.vmap(at.grad(writes_an_item))
    xs = np.stack([X, 2 * X])
    expected = np.stack([GRADIENTS[writes_an_item](row) for row in xs])
    np.testing.assert_allclose(batched(xs, np.ones((2, 3))), expected)
    with pytest.raises(ValueError, match="argument 'y' is a read-only array"):
        batched(xs, np.broadcast_to(np.ones(3), (2, 3)))

    traced = at.function(at.grad(writes_an_item))
    concrete = traced.get_concrete_function(Spec((3,)), Spec((3,)))
    np.testing.assert_allclose(concrete(X, np.ones(3)), GRADIENTS[writes_an_item](X))
    with pytest.raises(ValueError, match="argument 'y' is a read-only array"):
        concrete(X, read_only())

    signed = at.function(at.grad(writes_an_item), input_signature=[Spec((None,)),
                                                                   Spec((None,))])
    np.testing.assert_allclose(signed(X, np.ones(3)), GRADIENTS[writes_an_item](X))
    with pytest.raises(ValueError, match="argument 'y' is a read-only array"):
        signed(X, read_only())


def adds_through_another_name(x, y):
    z = y
    z += x
    return np.sum(z * x)


def test_an_in_place_operator_through_another_name_raises_as_numpy_does():
    with pytest.raises(ValueError, match="output array is read-only"):
        adds_through_another_name(X, read_only())
    with pytest.raises(ValueError, match="output array is read-only"):
        at.grad(adds_through_another_name)(X, read_only())
    with pytest.raises(ValueError, match="argument 'y' is a read-only array"):
        at.function(at.grad(adds_through_another_name))(X, read_only())
    np.testing.assert_allclose(at.function(at.grad(adds_through_another_name))(X, np.ones(3)),
                               1.0 + 2.0 * X)


def test_a_batched_gradient_inside_a_traced_function_and_general_traces_refuse():
    traced = at.function(at.vmap(at.grad(writes_an_item)))
    xs = np.stack([X, 2 * X])
    np.testing.assert_allclose(traced(xs, np.ones((2, 3))),
                               np.stack([GRADIENTS[writes_an_item](row) for row in xs]))
    with pytest.raises(ValueError, match="is a read-only array"):
        traced(xs, np.broadcast_to(np.ones(3), (2, 3)))
    # a trace for many sizes refuses without tracing again
    general = at.function(at.grad(writes_an_item), reduce_retracing=True)
    for size in (3, 4, 5):
        general(np.ones(size), np.ones(size))
    count = general.trace_count
    with pytest.raises(ValueError, match="argument 'y' is a read-only array"):
        general(np.ones(4), np.broadcast_to(np.ones(1), (4,)))
    assert general.trace_count == count


def squares_its_first_item(x):
    x[0] = x[0] ** 2
    return np.sum(x ** 3)


def test_forward_over_reverse_refuses_a_read_only_argument_and_takes_a_read_only_tangent():
    # The derivative of a derivative copies the copy of its argument: its writes were not
    # noted, and jacfwd(grad(f)) gave a Hessian where NumPy raises. A tangent is no array of
    # the caller's: a read-only one (np.broadcast_to's) was copied read-only, and raised.
    hessian = np.diag([30.0, 12.0, 18.0])  # of x0**6 + x1**3 + x2**3 at (1, 2, 3)
    for derivative in (at.hessian, lambda f: at.jacfwd(at.grad(f))):
        np.testing.assert_allclose(derivative(squares_its_first_item)(X.copy()), hessian)
        for run in (derivative(squares_its_first_item),
                    at.function(derivative(squares_its_first_item))):
            with pytest.raises(ValueError, match="assignment destination is read-only"):
                run(read_only(X))
    ones = np.broadcast_to(np.array(1.0), (3,))
    x = X.copy()
    for jvp in (at.jvp, at.function(lambda x, t: at.jvp(squares_its_first_item, (x,), (t,)))):
        if jvp is at.jvp:
            value, tangent = jvp(squares_its_first_item, (x,), (ones,))
        else:
            value, tangent = jvp(x, ones)
        assert (value, tangent) == (36.0, 6.0 + 12.0 + 27.0)
    np.testing.assert_array_equal(x, X)
