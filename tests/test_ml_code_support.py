"""Machine-learning code written from scratch with NumPy, differentiated in every mode: grad,
forward (jvp), the gradient traced (autotrace.function), the gradient per example
(autotrace.vmap) and second derivatives, each against central differences.

- an in-place masked ReLU, `h[h < 0] = 0.0`, per example under vmap, where each example's mask
  selects another number of elements;
- numpy.lib.stride_tricks.sliding_window_view (a read-only view: its adjoint adds each
  window's gradient back), and as_strided refused at the user's line;
- np.logaddexp.reduce (and logaddexp2's, and the ufunc reductions that are NumPy functions);
- functools.reduce over a list of layers (and operator.add and its kin as its function);
- np.einsum's sublist form;
- `np.tanh(..., out=H[t + 1])`, out= a view of a buffer, in a loop;

and the refusals that name the user's line: a traced seed of np.random.default_rng, and a
`break` under vmap whose loop cannot become a masked one.
"""
import functools
import inspect
import operator
from operator import iadd

import numpy as np
import pytest
from numpy.lib.stride_tricks import as_strided, sliding_window_view

import autotrace
from autotrace.runtime.primitives.registry import UntraceableError
from autotrace.runtime.tracing.control_scope import ControlFlowError
from autotrace.testing import check_grads
from tests.numeric import central_difference

RNG = np.random.default_rng(7)


def line_of(function, text: str) -> int:
    """The line of this file where `function`'s source holds `text`."""
    lines, first = inspect.getsourcelines(function)
    return first + next(i for i, line in enumerate(lines) if text in line)


def central_jacobian(f, x, eps=1e-6):
    """The derivative of the array function `f` at the array `x`: f(x).shape + x.shape."""
    columns = []
    for i in range(x.size):
        step = np.zeros_like(x)
        step.flat[i] = eps
        columns.append((f(x + step) - f(x - step)) / (2 * eps))
    return np.moveaxis(np.array(columns), 0, -1).reshape(np.shape(columns[0]) + x.shape)


def check_every_mode(f, args, batched=0):
    """f's derivatives at `args` against central differences: grad and forward mode, and the
    second derivatives (grad and forward of grad) with respect to each argument and all of
    them; the traced gradient; the gradient per example of autotrace.vmap over the argument
    `batched` (each example's against its own central differences)."""
    positions = tuple(range(len(args)))
    for wrt in positions + (positions,):
        check_grads(f, args, wrt=wrt, order=2, modes=("reverse", "forward"))
    traced = autotrace.function(autotrace.grad(f, wrt=positions))(*args)
    for gradient, expected in zip(traced, autotrace.grad(f, wrt=positions)(*args)):
        np.testing.assert_allclose(gradient, expected, rtol=1e-12, atol=1e-12)
    examples = [args[batched] * scale for scale in (1.0, -0.5, 2.0)]
    in_axes = tuple(0 if i == batched else None for i in positions)
    per_example = autotrace.vmap(autotrace.grad(f), in_axes=in_axes)(
        *[np.stack(examples) if i == batched else a for i, a in enumerate(args)])
    for example, gradient in zip(examples, per_example):
        given = [example if i == batched else a for i, a in enumerate(args)]
        expected = central_difference(lambda first: f(first, *given[1:]), given[0])
        np.testing.assert_allclose(gradient, expected, rtol=1e-6, atol=1e-7)


# --- 1. an in-place masked ReLU -----------------------------------------------------------------

def relu_layer(W, x):
    h = x @ W
    h[h < 0] = 0.0
    return np.sum(h ** 2)


def masked_fill(W, x, fill):
    h = np.tanh(np.outer(x, x) @ W)
    h[np.sum(h, axis=1) < 0] = fill  # whole rows where the row sums below zero
    return np.sum(np.sin(h) * np.arange(1.0, 5.0))


def test_a_masked_relu_per_example_where_each_mask_selects_another_number():
    W, X = RNG.standard_normal((3, 4)), RNG.standard_normal((6, 3))
    assert len({int(np.sum(x @ W < 0)) for x in X}) > 1  # the masks' counts differ
    per_example = autotrace.vmap(autotrace.grad(relu_layer), in_axes=(None, 0))(W, X)
    for x, gradient in zip(X, per_example):
        np.testing.assert_allclose(gradient, central_difference(lambda W: relu_layer(W, x), W),
                                   rtol=1e-6, atol=1e-7)
    check_every_mode(relu_layer, (W, X[0]), batched=1)


def test_a_masked_relu_per_example_second_derivatives_and_tangents():
    W, X = RNG.standard_normal((3, 4)), RNG.standard_normal((5, 3))
    hessians = autotrace.vmap(autotrace.hessian(relu_layer), in_axes=(None, 0))(W, X)
    for x, hessian in zip(X, hessians):
        expected = central_jacobian(lambda W: autotrace.grad(relu_layer)(W, x), W)
        np.testing.assert_allclose(hessian, expected, rtol=1e-6, atol=1e-6)
    direction = RNG.standard_normal(W.shape)
    tangents = autotrace.vmap(lambda W, x: autotrace.jvp(
        relu_layer, (W, x), (direction, np.zeros(3)))[1], in_axes=(None, 0))(W, X)
    for x, tangent in zip(X, tangents):
        gradient = central_difference(lambda W: relu_layer(W, x), W)
        np.testing.assert_allclose(tangent, np.sum(gradient * direction), rtol=1e-6)


def test_a_masked_write_batches_past_the_size_of_per_example_runs():
    # (a batch over 256 examples ran once per example before, and was refused)
    W, X = RNG.standard_normal((3, 4)), RNG.standard_normal((300, 3))
    np.testing.assert_allclose(autotrace.vmap(relu_layer, in_axes=(None, 0))(W, X),
                               [relu_layer(W, x) for x in X])
    gradients = autotrace.vmap(autotrace.grad(relu_layer), in_axes=(None, 0))(W, X)
    np.testing.assert_allclose(gradients, [autotrace.grad(relu_layer)(W, x) for x in X],
                               rtol=1e-12)


def test_a_masked_write_of_a_value_that_carries_gradient():
    W, X = RNG.standard_normal((4, 4)), RNG.standard_normal((5, 4))
    check_every_mode(masked_fill, (W, X[0], 0.7), batched=1)
    by_fill = autotrace.vmap(autotrace.grad(masked_fill, wrt=2), in_axes=(None, 0, None))(
        W, X, 0.7)
    for x, gradient in zip(X, by_fill):
        np.testing.assert_allclose(gradient, central_difference(
            lambda fill: masked_fill(W, x, fill[0]), np.array([0.7]))[0], rtol=1e-6, atol=1e-8)


# --- 2. sliding windows -------------------------------------------------------------------------

def weighted_windows(x):
    return np.sum(np.sin(sliding_window_view(x, 3)) * np.arange(1.0, 4.0))


def pooled_patches(x):
    return np.sum(sliding_window_view(x, (2, 2)).max(axis=(-1, -2)) ** 2)


def windows_on_one_axis(x):
    return np.sum(np.cos(sliding_window_view(x, 2, axis=0)) * np.arange(1.0, 3.0))


def windows_twice_on_one_axis(x):
    return np.sum(np.tanh(sliding_window_view(x, (2, 3), axis=(1, 1))) ** 2)


def convolution_1d(x, kernel):
    return np.sum((sliding_window_view(x, 3) @ kernel) ** 2)


@pytest.mark.parametrize("f, shapes", [
    (weighted_windows, [(7,)]), (pooled_patches, [(3, 4)]), (windows_on_one_axis, [(4, 3)]),
    (windows_twice_on_one_axis, [(2, 8)]), (convolution_1d, [(8,), (3,)])])
def test_sliding_windows_in_every_mode(f, shapes):
    args = tuple(RNG.standard_normal(shape) for shape in shapes)
    check_every_mode(f, args)
    np.testing.assert_allclose(autotrace.function(f)(*args), f(*args), rtol=1e-12)
    batch = np.stack([args[0], 2.0 * args[0]])
    np.testing.assert_allclose(autotrace.vmap(f, in_axes=(0,) + (None,) * (len(args) - 1))(
        batch, *args[1:]), [f(x, *args[1:]) for x in batch], rtol=1e-12)


def test_the_adjoint_of_sliding_windows_adds_each_window_back_by_hand():
    # windows of 3 over 5 items: item i is in min(i + 1, 3, 5 - i) windows
    gradient = autotrace.grad(lambda x: np.sum(sliding_window_view(x, 3)))(np.zeros(5))
    np.testing.assert_array_equal(gradient, [1.0, 2.0, 3.0, 2.0, 1.0])


def test_sliding_windows_traced_are_one_op():
    graph = str(autotrace.function(weighted_windows).graph(np.ones(7)))
    assert "b:f64[5,3] = sliding_window_view[axis=(0,) window_shape=(3,)] x" in graph


def writeable_windows(x):
    windows = sliding_window_view(x * 1.0, 3, writeable=True)
    return np.sum(windows ** 2)


def test_writeable_windows_are_refused_in_every_mode():
    reason = ("numpy.lib.stride_tricks.sliding_window_view with writeable=True: its windows "
              "overlap, so a write through one changes the others, which autotrace does not "
              "follow; leave the view read-only (the default) and write into the array it "
              "views, or into a copy of the view (sliding_window_view(x, n).copy())")
    x = np.ones(5)
    for derivative in (autotrace.grad(writeable_windows),
                       lambda x: autotrace.jvp(writeable_windows, (x,), (x,))):
        with pytest.raises(NotImplementedError) as refused:
            derivative(x)
        assert str(refused.value) == f"autotrace does not differentiate {reason}"
    with pytest.raises(UntraceableError) as refused:
        autotrace.function(writeable_windows)(x)
    assert str(refused.value).startswith(f"autotrace cannot trace {reason}\n  File \"{__file__}"
                                         f"\", line {line_of(writeable_windows, 'writeable=')}")


def strided_rows(x):
    rows = as_strided(x, shape=(3, 2), strides=(8, 8))
    return np.sum(rows)


def test_as_strided_is_refused_at_the_users_line():
    x = np.arange(4.0)
    line = line_of(strided_rows, "as_strided(")
    reason = ("it makes a view of strides in bytes, which may overlap or reach past the array, "
              "and autotrace follows no values through it: for sliding windows use np.lib."
              "stride_tricks.sliding_window_view(x, window_shape, axis), which is "
              "differentiated; for repeats np.broadcast_to")
    for derivative, kind in ((autotrace.grad, "derivative"), (autotrace.forward, "tangent")):
        with pytest.raises(autotrace.TransformError) as refused:
            derivative(strided_rows)(x)
        assert str(refused.value) == (f'File "{__file__}", line {line}: no {kind} rule for '
                                      f"numpy.lib.stride_tricks.as_strided: {reason}")
    for run in (lambda: autotrace.function(strided_rows)(x),
                lambda: autotrace.vmap(strided_rows)(np.stack([x, x]))):
        with pytest.raises(UntraceableError) as refused:
            run()
        assert str(refused.value).startswith(
            "autotrace cannot trace numpy.lib.stride_tricks.as_strided: it makes a view of "
            "strides in bytes, which may overlap or reach past the array, and autotrace follows "
            "no values through it. For sliding windows use numpy.lib.stride_tricks."
            "sliding_window_view(x, window_shape, axis), which is traced and differentiated; "
            f"for repeats np.broadcast_to; else indexing\n  File \"{__file__}\", line {line}")


# --- 3. reductions by ufuncs, functools.reduce, einsum's sublists, out= a view -----------------

@pytest.mark.parametrize("f", [
    lambda x: np.logaddexp.reduce(x * 2.0, axis=None),
    lambda x: np.sum(np.logaddexp.reduce(x, axis=1) ** 2),
    lambda x: np.sum(np.logaddexp.reduce(x) * np.arange(4.0)),
    lambda x: np.sum(np.logaddexp.reduce(x, axis=(0, 1), keepdims=True)),
    lambda x: np.sum(np.logaddexp.reduce(x, 1, initial=0.5)),
    lambda x: np.sum(np.logaddexp.reduce(x, axis=1, initial=0.5,
                                         where=np.array([True, False, True, True]))),
    lambda x: np.sum(np.sin(np.logaddexp2.reduce(x, axis=0))),
    lambda x: np.sum(np.logaddexp2.reduce(x, axis=-1, keepdims=True) * x),
    lambda x: np.sum(np.add.reduce(x ** 2, axis=0) * np.multiply.reduce(x, axis=1)[0]),
    lambda x: np.sum(np.maximum.reduce(x, axis=1) ** 2) + np.sum(np.minimum.reduce(x) ** 2),
])
def test_ufunc_reductions_in_every_mode(f):
    x = RNG.standard_normal((3, 4))
    check_every_mode(f, (x,))
    np.testing.assert_allclose(autotrace.function(f)(x), f(x), rtol=1e-12)


def test_the_gradient_of_logaddexp_reduce_by_hand():
    # log(e^0 + e^0 + e^log 2) = log 4: the terms' shares 1/4, 1/4, 1/2
    gradient = autotrace.grad(lambda x: np.logaddexp.reduce(x))(np.array([0.0, 0.0, np.log(2)]))
    np.testing.assert_allclose(gradient, [0.25, 0.25, 0.5], rtol=1e-15)


def layers(x, W1, W2):
    return np.sum(functools.reduce(lambda h, W: np.tanh(h @ W), [W1, W2], x) ** 2)


def chained_products(W1, W2):
    return np.sum(functools.reduce(np.matmul, [W1, W2, W1]))


def sum_without_initial(W1, W2):
    return np.sum(functools.reduce(operator.add, (W1 * W2, np.sin(W1), W2 ** 2)))


def reduce_held_in_a_variable(x, W1):
    fold = functools.reduce

    def layer(h, W):
        return np.maximum(h @ W, 0.1 * (h @ W))
    return np.sum(fold(layer, [W1, W1 * 0.5], x))


@pytest.mark.parametrize("f, count", [(layers, 3), (chained_products, 2),
                                      (sum_without_initial, 2), (reduce_held_in_a_variable, 2)])
def test_functools_reduce_in_every_mode(f, count):
    args = (RNG.standard_normal((2, 3)),) * (count == 3) + tuple(
        RNG.standard_normal((3, 3)) * 0.5 for _ in range(count - (count == 3)))
    check_every_mode(f, args)


def test_functools_reduce_of_nothing_raises_pythons_error():
    with pytest.raises(TypeError, match="^reduce\\(\\) of empty iterable with no initial value$"):
        autotrace.grad(lambda x: x * functools.reduce(operator.add, []))(1.0)


def reduce_multiplying_in_place(x):
    a = x * 1.0
    functools.reduce(operator.imul, [a, x])  # a *= x, as NumPy runs it: a is x ** 2
    return np.sum(a * x)


def multiplying_in_place_by_operator(x):
    a = x * 1.0
    _ = operator.imul(a, x)
    return np.sum(a * x)


def adding_in_place_imported(x):
    a = x * 1.0
    _ = iadd(a, x)
    return np.sum(a * x)


@pytest.mark.parametrize("f, call, name, symbol", [
    (reduce_multiplying_in_place, "functools.reduce(", "operator.imul", "*="),
    (multiplying_in_place_by_operator, "operator.imul(", "operator.imul", "*="),
    (adding_in_place_imported, "_ = iadd(", "operator.iadd", "+=")])
def test_the_operator_modules_in_place_functions_are_refused_at_the_users_line(
        f, call, name, symbol):
    x = np.array([0.3, 0.7, -1.1])
    message = (f'File "{__file__}", line {line_of(f, call)}: {name} changes its first argument '
               f"in place where that is an array or a list (it runs a {symbol} b), and autotrace "
               f"does not follow that write through {name}, called or handed to another function "
               f"(functools.reduce); write the augmented assignment instead: a {symbol} x for "
               f"{name}(a, x), a loop of them for functools.reduce")
    for run in (lambda: autotrace.grad(f)(x), lambda: autotrace.forward(f)(x),
                lambda: autotrace.jvp(f, (x,), (np.ones(3),)),
                lambda: autotrace.function(autotrace.grad(f))(x),
                lambda: autotrace.vmap(autotrace.grad(f))(np.stack([x, -x]))):
        with pytest.raises(TypeError) as refused:  # (when it runs: on an array)
            run()
        assert str(refused.value) == message
    # traced, the write is followed: NumPy's value
    np.testing.assert_allclose(autotrace.function(f)(x), f(x), rtol=1e-12)


def reduce_by_an_operator_given(x, op):
    a = x * 1.0
    s = functools.reduce(op, [a, x])
    return np.sum(s * a)  # a is s: NumPy's op changed it in place


def test_an_in_place_operator_handed_in_is_refused_where_the_call_runs():
    x = np.array([0.3, 0.7, -1.1])
    for run in (lambda: autotrace.grad(reduce_by_an_operator_given)(x, operator.imul),
                lambda: autotrace.jvp(reduce_by_an_operator_given, (x, operator.imul),
                                      (np.ones(3), None))):
        with pytest.raises(autotrace.TransformError) as refused:
            run()
        assert str(refused.value).startswith(
            "operator.imul changes its first argument in place where that is an array (it "
            "runs a *= b), and autotrace does not follow that write through operator.imul")
        # the user's line of the reduce, not the line of autotrace's reduce that calls it
        assert str(refused.value).endswith(
            f'functools.reduce\n  File "{__file__}", line '
            f'{line_of(reduce_by_an_operator_given, "s = ")}\n    s = functools.reduce(op, [a, x])')
    np.testing.assert_allclose(reduce_by_an_operator_given(x, operator.imul), np.sum(x ** 4))


def einsum_of_two(A, B):
    return np.sum(np.einsum(A, [0, 1], B, [1, 2], [0, 2]) ** 2)


def einsum_implicit_output(A, B):
    return np.sum(np.sin(np.einsum(A, [0, 1], B, [1, 2])))


def einsum_with_ellipsis(C, A):
    return np.sum(np.einsum(C, [Ellipsis, 1], A, [0, 1], [..., 0]) ** 2)


def einsum_transposed(A):
    return np.sum(np.einsum(A, (0, 1), (1, 0)) * np.arange(6.0).reshape(3, 2))


@pytest.mark.parametrize("f, shapes", [(einsum_of_two, [(2, 3), (3, 4)]),
                                       (einsum_implicit_output, [(2, 3), (3, 4)]),
                                       (einsum_with_ellipsis, [(4, 2, 3), (2, 3)]),
                                       (einsum_transposed, [(2, 3)])])
def test_einsum_sublists_in_every_mode(f, shapes):
    args = tuple(RNG.standard_normal(shape) for shape in shapes)
    check_every_mode(f, args)
    np.testing.assert_allclose(autotrace.function(f)(*args), f(*args), rtol=1e-12)
    np.testing.assert_allclose(autotrace.vmap(f)(*[np.stack([a, -a]) for a in args]),
                               [f(*args), f(*[-a for a in args])], rtol=1e-12)


def test_a_traced_einsum_sublist_view_is_written_through():
    def transpose_then_write(A):
        B = A * 1.0
        view = np.einsum(B, [0, 1], [1, 0])
        view[0, 1] = 7.0
        return np.sum(B * np.arange(6.0).reshape(2, 3))
    A = RNG.standard_normal((2, 3))
    np.testing.assert_allclose(autotrace.function(transpose_then_write)(A),
                               transpose_then_write(A), rtol=1e-12)


def einsum_of_named_sublists(A, B):
    rows = [0, 1]
    return np.sum(np.einsum(A, rows, B, [1, 2], [0, 2]))


def test_einsum_sublists_held_in_names_are_refused():
    with pytest.raises(NotImplementedError) as refused:
        autotrace.grad(einsum_of_named_sublists)(np.ones((2, 3)), np.ones((3, 4)))
    assert str(refused.value) == (
        "np.einsum's sublist form has derivative rules where each sublist is a list of ints "
        "written in the call, as in np.einsum(a, [0, 1], b, [1], [0]), and here one is not: "
        "write the sublists so, or the subscripts string (np.einsum('ij,j->i', a, b))")


def recurrent(x, Wh):
    H = np.zeros((4, 3))
    for t in range(3):
        np.tanh(H[t] @ Wh + x[t], out=H[t + 1])
    return np.sum(H ** 2)


def into_slices(x):
    y = np.zeros((2, 4))
    z = np.sin(x, out=y[0, 1:])
    partial = np.sum(y * z[0])
    np.multiply(x, 2.0, y[1, :3])
    return partial + np.sum(y ** 2)


@pytest.mark.parametrize("f, shapes", [(recurrent, [(3, 3), (3, 3)]), (into_slices, [(3,)])])
def test_out_into_a_view_of_a_buffer_in_every_mode(f, shapes):
    args = tuple(RNG.standard_normal(shape) for shape in shapes)
    check_every_mode(f, args)
    np.testing.assert_allclose(autotrace.function(f)(*args), f(*args), rtol=1e-12)


def out_into_a_copy(x, rows):
    y = np.zeros(4)
    np.sin(x, out=y[rows])
    return np.sum(y)


def out_into_one_element(x):
    y = np.zeros(4)
    np.sin(x[0], out=y[2])
    return np.sum(y)


def out_into_an_item_of_a_list(x, rows):
    np.tanh(x, out=rows[0])
    return np.sum(rows[0] * x)


def test_out_into_an_item_of_a_list_is_refused_at_the_users_line():
    x = np.array([0.3, -0.7])
    line = line_of(out_into_an_item_of_a_list, "out=rows[0]")
    for run in (autotrace.grad(out_into_an_item_of_a_list),
                autotrace.function(out_into_an_item_of_a_list)):
        with pytest.raises(NotImplementedError) as refused:
            run(x, [np.zeros(2)])
        assert str(refused.value) == (
            f'File "{__file__}", line {line}: numpy.tanh(..., out=y[index]) with y a list: '
            "autotrace follows out= into an array or a view of one only; write y[index] = "
            "numpy.tanh(...)")


def test_out_into_no_view_is_refused_as_numpy_would_drop_it():
    x, rows = np.ones(2), np.array([0, 2])
    assert out_into_a_copy(x, rows) == 0.0  # NumPy wrote into a copy
    line = line_of(out_into_a_copy, "out=y[rows]")
    for run, given in [(autotrace.grad(out_into_a_copy), x),
                       (autotrace.function(out_into_a_copy), x),
                       (autotrace.forward(out_into_a_copy), x),
                       (autotrace.vmap(out_into_a_copy, in_axes=(0, None)), np.ones((3, 2)))]:
        with pytest.raises(NotImplementedError) as refused:
            run(given, rows)
        assert str(refused.value) == (
            f'File "{__file__}", line {line}: numpy.sin(..., out=y[index]) with an index array '
            "or mask: y[index] is a copy, which out= fills and NumPy drops, leaving y as it was; "
            "autotrace refuses it: leave out= out, or write y[index] = numpy.sin(...) to change y")
    for run in (out_into_one_element, autotrace.grad(out_into_one_element)):
        with pytest.raises(TypeError, match="^return arrays must be of ArrayType$"):
            run(x)


# --- 4. refusals that say what to do, at the user's line ----------------------------------------

def noisy(x, seed):
    rng = np.random.default_rng(seed)
    return np.sum(x * rng.standard_normal(x.shape))


SEED_REFUSAL = (
    "autotrace cannot trace np.random.default_rng(seed) with a traced seed: NumPy seeds a "
    "generator with the seed's value, which a traced value has not while tracing "
    "(autotrace.function and vmap trace NumPy integers, and vmap its batched arguments). Pass "
    "the seed as a Python int (int(seed)), which is traced for each value, or make it static "
    "(autotrace.jit(f, static_argnames=('seed',))), or pass a np.random.Generator made outside "
    "the function; to draw new numbers on each call of a traced function, use "
    "autotrace.random.Generator(seed)")


def test_a_traced_seed_is_refused_saying_what_to_pass():
    x = np.arange(5.0)
    line = line_of(noisy, "default_rng")
    for run in (lambda: autotrace.function(noisy)(x, np.int64(3)),
                lambda: autotrace.function(autotrace.grad(noisy))(x, np.int64(3)),
                lambda: autotrace.vmap(noisy)(np.stack([x, x]), np.array([1, 2])),
                lambda: autotrace.vmap(noisy, in_axes=(0, None))(np.stack([x, x]), np.int64(2))):
        with pytest.raises(UntraceableError) as refused:
            run()
        assert str(refused.value).startswith(f'{SEED_REFUSAL}\n  File "{__file__}", line {line}')
    with pytest.warns(autotrace.FrozenRandomWarning):
        np.testing.assert_allclose(autotrace.function(noisy)(x, 3), noisy(x, 3))
    np.testing.assert_allclose(autotrace.jit(noisy, static_argnames=("seed",))(x, np.int64(3)),
                               noisy(x, 3))
    np.testing.assert_allclose(autotrace.grad(noisy)(x, np.int64(3)),
                               central_difference(lambda x: noisy(x, 3), x), rtol=1e-6)


def squares_until_large(x):
    kept = []
    for i in range(5):
        if x[i] > 1.0:
            break
        kept.append(x[i] ** 2)
    return sum(kept)


def test_a_break_under_vmap_is_refused_at_the_users_line():
    # (at the statement that may break, as errors after an early return name the `if` that
    # may return: tests/test_traced_aliasing.py)
    batch = np.stack([np.arange(5.0) * 0.3, np.arange(5.0) * 1.5])
    line = line_of(squares_until_large, "if x[i] > 1.0:")
    with pytest.raises(ControlFlowError) as refused:
        autotrace.vmap(squares_until_large)(batch)
    assert str(refused.value).startswith(
        f"{__file__}:{line}: if x[i] > 1.0: (the statements after it run only where it does not "
        f"break)\n  variable 'kept' is [f64[]] after the true branch and [] after the false "
        f"branch")
    with pytest.raises(ControlFlowError) as refused:  # the derivative's own refusal
        autotrace.vmap(autotrace.grad(squares_until_large))(batch)
    assert str(refused.value).startswith(
        f"{__file__}:{line}: if x[i] > 1.0: (derivative code <autotrace ")
    assert "\n  'kept' is a list whose length here depends on a traced value" in str(
        refused.value)
