"""What a traced function or a derivative hands back shares memory only where NumPy's would.

Each traced function is compared with the same Python function run by NumPy: for every output,
whether it shares memory with each input and with each earlier output (np.shares_memory) must
be what NumPy's results give, on the NumPy backend and on the llvm backend with every region
fused. A write into an output must not reach the caller's arrays, another output, or the next
call (a graph constant). Gradients: never the caller's `dy`, never one array for two arguments.
"""
from __future__ import annotations

import numpy as np
import pytest

import autotrace
from autotrace.runtime.backends.selection import backend_named, cpu_backend

CONSTANT = np.array([1.0, 2.0, 3.0])


def scale(x, s=1.0):
    return x * s


def one_value_under_two_names_in_branches(x):
    # the passes make v x (x * 1.0 / 1.0 is x bit for bit): the branches' operands x and v
    # become one array, which the branch returns twice
    v = (1.0 * x) / 1.0
    if np.dot(x, x) > 1.0:
        if np.sum(x) > 0.0:
            return x, v
        return x * 2.0, v
    return x, x * 3.0


def one_value_under_two_names_in_a_loop(x):
    v = x * 1.0
    w = x
    while np.sum(w) < 10.0:
        w = w * 2.0
    return v, w


FUNCTIONS = {  # name -> (function, its arguments)
    "x and x * 1.0 / 1.0 through nested branches": (one_value_under_two_names_in_branches,
                                                   (np.array([0.9, -0.8, 0.85, 0.66]),)),
    "x and x * 1.0 / 1.0, the other branch": (one_value_under_two_names_in_branches,
                                             (np.array([-0.9, -0.8, 0.5, 0.66]),)),
    "x returned by a loop that does not run": (one_value_under_two_names_in_a_loop,
                                               (np.array([6.0, 5.0]),)),
    "a loop that runs": (one_value_under_two_names_in_a_loop, (np.array([1.0, 2.0]),)),
    "x * s with s=1.0": (scale, (np.array([1.0, -2.0, 3.0]),)),
    "x / 1.0": (lambda x: x / 1.0, (np.array([1.0, -2.0, 3.0]),)),
    "x + -0.0": (lambda x: x + -0.0, (np.array([1.0, -2.0, 3.0]),)),
    "x - 0.0": (lambda x: x - 0.0, (np.array([1.0, -2.0, 3.0]),)),
    "x ** 1": (lambda x: x ** 1, (np.array([1.0, -2.0, 3.0]),)),
    "-(-x)": (lambda x: -(-x), (np.array([1.0, -2.0, 3.0]),)),
    "+x": (lambda x: +x, (np.array([1.0, -2.0, 3.0]),)),
    "(x * 1.0).T": (lambda x: (x * 1.0).T, (np.ones((2, 3)),)),
    "x * 1.0 on a 0-d array": (lambda x: x * 1.0, (np.array(2.5),)),
    "x * 1.0 and y * 1.0 (scalars)": (lambda x, y: (x * 1.0, y * 1.0 + 0.5),
                                      (np.array(2.5), np.array(1.5))),
    "two equal results": (lambda x: (x * 2.0, x * 2.0), (np.array([1.0, 2.0]),)),
    "a result and its view": (lambda x: (x * 2.0, (x * 2.0).T), (np.ones((2, 3)),)),
    "x returned": (lambda x: x, (np.array([1.0, 2.0]),)),
    "x.T returned": (lambda x: x.T, (np.ones((2, 3)),)),
    "x and x * 1.0": (lambda x: (x, x * 1.0), (np.array([1.0, 2.0]),)),
    "y * 1.0, y twice": (lambda x, y: (y * 1.0, y), (np.ones(2), np.ones(2))),
    "a folded constant": (lambda x: (x + 1.0, CONSTANT * 2.0), (np.array([1.0, 2.0]),)),
    "a constant times one": (lambda x: (x + 1.0, CONSTANT * 1.0), (np.array([1.0, 2.0]),)),
}


def _leaves(result) -> list:
    return list(result) if isinstance(result, tuple) else [result]


def _sharing(outputs, inputs) -> list:
    """For each output: whether it shares memory with each input, then each earlier output."""
    return [[bool(np.shares_memory(output, other)) for other in
             [*inputs, *outputs[:index]]] for index, output in enumerate(outputs)]


def _traced(backend: str, function):
    """A fresh traced `function` for `backend` ("numpy", or "llvm" with every region fused),
    and a way to call it on that backend."""
    llvm = backend_named("llvm")

    def call(*args):
        before, threshold = cpu_backend(), llvm.min_elements
        try:
            cpu_backend(backend)
            llvm.min_elements = 1
            return traced(*args)
        finally:
            llvm.min_elements = threshold
            cpu_backend(before)

    traced = autotrace.function(function)
    return call


BACKENDS = ["numpy"] + (["llvm"] if backend_named("llvm").available() is None else [])


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("name", list(FUNCTIONS))
def test_outputs_share_memory_as_numpys_do(name, backend):
    function, args = FUNCTIONS[name]
    expected = _leaves(function(*[np.copy(a) for a in args]))
    call = _traced(backend, function)
    got = _leaves(call(*args))
    for value, reference in zip(got, expected):
        np.testing.assert_array_equal(value, reference)
    assert _sharing(got, args) == _sharing(_leaves(function(*args)), args), name


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("name", [name for name in FUNCTIONS if "returned" not in name
                                  and "y twice" not in name and "x and" not in name])
def test_a_write_into_an_output_reaches_nothing_else(name, backend):
    """Writing into every output leaves the arguments, the other outputs and the next call's
    results as they were."""
    function, args = FUNCTIONS[name]
    call = _traced(backend, function)
    kept = [np.copy(a) for a in args]
    first = _leaves(call(*args))
    others = [np.copy(output) for output in first]
    for index, output in enumerate(first):
        if isinstance(output, np.ndarray):
            output[...] = -7.0
            for position, other in enumerate(first):
                if position != index:
                    np.testing.assert_array_equal(other, others[position], err_msg=name)
            output[...] = others[index]
    for output in first:
        if isinstance(output, np.ndarray):
            output[...] = 99.0
    for argument, copy in zip(args, kept):
        np.testing.assert_array_equal(argument, copy, err_msg=name)
    for again, reference in zip(_leaves(call(*args)), others):
        np.testing.assert_array_equal(again, reference, err_msg=name)
    np.testing.assert_array_equal(CONSTANT, [1.0, 2.0, 3.0])


def test_scale_by_default_one_gives_a_new_array():
    """The example of a user: a traced function scaling by a default of 1.0 gave back the
    caller's array, and writing into the result changed the caller's."""
    traced = autotrace.function(scale)
    x = np.array([1.0, 2.0, 3.0])
    result = traced(x)
    result[0] = 100.0
    np.testing.assert_array_equal(x, [1.0, 2.0, 3.0])
    assert not np.shares_memory(result, x)


def test_a_fresh_result_is_not_copied():
    """Only outputs that share memory get a copy: a result the graph computes is returned
    as it is (no copy equation in the graph)."""
    traced = autotrace.function(lambda x: (x * 2.0, np.sin(x)))
    x = np.ones(3)
    traced(x)
    assert "np.copy" not in traced.source(x)
    assert "np.copy" in autotrace.function(scale).source(x)


# --- derivatives --------------------------------------------------------------------------

def sum_of_sum(x, y):
    return np.sum(x + y)


def identity(x):
    return x


def transposed(x):
    return x.T


def sum_of_sines(x):
    return np.sum(np.sin(x))


def test_gradients_of_two_arguments_are_two_arrays():
    x, y = np.array([1.0, 2.0]), np.array([3.0, 4.0])
    gradient_x, gradient_y = autotrace.grad(sum_of_sum, wrt=(0, 1))(x, y)
    np.testing.assert_array_equal(gradient_x, [1.0, 1.0])
    np.testing.assert_array_equal(gradient_y, [1.0, 1.0])
    assert not np.shares_memory(gradient_x, gradient_y)
    gradient_x[0] = 5.0
    assert gradient_y[0] == 1.0


def test_traced_gradients_of_two_arguments_are_two_arrays():
    x, y = np.array([1.0, 2.0]), np.array([3.0, 4.0])
    gradient_x, gradient_y = autotrace.function(autotrace.grad(sum_of_sum, wrt=(0, 1)))(x, y)
    np.testing.assert_array_equal(gradient_x, [1.0, 1.0])
    assert not np.shares_memory(gradient_x, gradient_y)


@pytest.mark.parametrize("function, shape", [(identity, (2,)), (transposed, (2, 3))])
def test_a_gradient_is_not_the_callers_dy(function, shape):
    x = np.arange(float(np.prod(shape))).reshape(shape)
    dy = np.arange(1.0, 1.0 + x.size).reshape(shape[::-1] if function is transposed else shape)
    kept = dy.copy()
    gradient = autotrace.grad(function)(x, dy=dy)
    np.testing.assert_array_equal(gradient, kept.T if function is transposed else kept)
    assert not np.shares_memory(gradient, dy)
    gradient[...] = 0.0
    np.testing.assert_array_equal(dy, kept)


def test_a_gradient_of_one_argument_is_handed_back_without_a_copy():
    """A gradient that shares nothing is not copied: the generated code of one argument's
    gradient returns match(...) alone, and the array the adjoint sweep made is returned."""
    derivative = autotrace.grad(sum_of_sines)
    source = autotrace.source(derivative)
    assert "fresh_gradients" not in source
    np.testing.assert_allclose(derivative(np.array([0.5, 1.0])), np.cos([0.5, 1.0]), rtol=1e-15)
    assert "fresh_gradients((match(" in autotrace.source(autotrace.grad(sum_of_sum, wrt=(0, 1)))


def test_second_derivative_through_two_gradients():
    """fresh_gradients is differentiated again as the identity it is."""
    def both(x, y):
        gradient_x, gradient_y = autotrace.grad(sum_of_sum_of_squares, wrt=(0, 1))(x, y)
        return np.sum(gradient_x * gradient_y)
    x, y = np.array([1.0, 2.0]), np.array([3.0, 5.0])
    # d/dx sum(2x * 2y) = 4y
    np.testing.assert_allclose(autotrace.grad(both)(x, y), 4.0 * y, rtol=1e-15)


def sum_of_sum_of_squares(x, y):
    return np.sum(x * x + y * y)


def sum_of_items(parameters):
    return np.sum(parameters["a"] + parameters["b"])


def test_gradients_of_the_arrays_of_one_dict_are_two_arrays():
    parameters = {"a": np.array([1.0, 2.0]), "b": np.array([3.0, 4.0])}
    gradient = autotrace.grad(sum_of_items)(parameters)
    np.testing.assert_array_equal(gradient["a"], [1.0, 1.0])
    np.testing.assert_array_equal(gradient["b"], [1.0, 1.0])
    assert not np.shares_memory(gradient["a"], gradient["b"])


def test_a_traced_gradient_is_not_a_view_of_the_callers_dy():
    """`x.T`'s gradient is `dy.T`, a view of the caller's dy inside the trace too."""
    x = np.arange(6.0).reshape(2, 3)
    dy = np.arange(1.0, 7.0).reshape(3, 2)
    kept = dy.copy()
    gradient = autotrace.function(autotrace.grad(transposed))(x, dy=dy)
    np.testing.assert_array_equal(gradient, kept.T)
    assert not np.shares_memory(gradient, dy)


# --- forward mode: the tangents handed back are never the caller's -----------------------------

def every_other(x):
    return x[::2]


def both_and_tail(x, y):
    return x, y[1:]


def _forward_modes():
    """The ways to call a forward derivative of `function` with `primals` and `tangents`."""
    def eager(function, primals, tangents):
        return autotrace.jvp(function, primals, tangents)

    def traced(function, primals, tangents):
        derivative = autotrace.forward(function, wrt=tuple(range(len(primals))))
        return autotrace.function(derivative)(*primals, tangent=tangents)
    return [eager, traced]


@pytest.mark.parametrize("mode", _forward_modes(), ids=["eager", "traced"])
@pytest.mark.parametrize("function", [identity, every_other, transposed])
def test_an_output_tangent_is_not_the_callers_tangent(mode, function):
    x = np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    t = np.array([[0.5, -1.0, 2.0], [3.0, -4.0, 0.25]])
    kept = t.copy()
    value, tangent = mode(function, (x,), (t,))
    np.testing.assert_array_equal(tangent, function(kept))  # the function is linear
    assert not np.shares_memory(tangent, t)
    tangent[...] = 0.0
    np.testing.assert_array_equal(t, kept)


@pytest.mark.parametrize("mode", _forward_modes(), ids=["eager", "traced"])
def test_output_tangents_of_two_arguments_are_not_the_callers(mode):
    x, y = np.array([1.0, 2.0]), np.array([3.0, 4.0, 5.0])
    tx, ty = np.array([0.5, 0.25]), np.array([1.0, 2.0, 3.0])
    value, (dx, dy) = mode(both_and_tail, (x, y), (tx, ty))
    np.testing.assert_array_equal(dx, [0.5, 0.25])
    np.testing.assert_array_equal(dy, [2.0, 3.0])
    assert not np.shares_memory(dx, tx) and not np.shares_memory(dy, ty)


def double(x):
    return 2.0 * x


def test_the_tangent_of_the_users_function_passes_through_fresh_tangent():
    """The derivative of the user's function hands its tangent to fresh_tangent, which copies
    only one that may share memory with an argument (`2 x`'s is new)."""
    derivative = autotrace.forward(double)
    x, t = np.array([1.0, 2.0]), np.array([3.0, -1.0])
    value, tangent = derivative(x, tangent=t)
    np.testing.assert_array_equal(tangent, [6.0, -2.0])
    assert "fresh_tangent(" in autotrace.source(derivative)


def test_gradient_through_a_returned_tangent():
    """fresh_tangent is differentiated as the identity it is, and the tangent's gradient goes
    to the tangent given, not to the point: d/dx sum(sin x) along ones is sum(cos x), whose
    gradient is -sin(x); along t it is t . cos(x), whose gradient in t is cos(x)."""
    x = np.array([0.5, 1.0])

    def directional(point):
        return autotrace.forward(sum_of_sines)(point, tangent=np.ones_like(point))[1]

    def along(t):
        return autotrace.forward(sum_of_sines)(x, tangent=t)[1]
    np.testing.assert_allclose(autotrace.grad(directional)(x), -np.sin(x), rtol=1e-15)
    np.testing.assert_allclose(autotrace.grad(along)(np.array([1.0, 2.0])), np.cos(x),
                               rtol=1e-15)
