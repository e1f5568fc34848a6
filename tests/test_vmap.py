"""autotrace.vmap: in_axes and out_axes as JAX reads them, nesting, composition with the
derivative transforms and autotrace.function, what users read (graph, source) and the errors.
Every value is compared with a Python loop over the examples."""
import dataclasses
import re

import numpy as np
import pytest

import autotrace
from autotrace.runtime.tracing.tracer_batching import BatchingError
from tests.markdown_blocks import DOCS, block_after

rng = np.random.default_rng(1)


def loop(f, in_axes, args, size):
    """np.stack of f on each example: what vmap(f, in_axes) must give with out_axes=0."""
    def example(arg, axis, i):
        if axis is None:
            return arg
        if isinstance(axis, dict):
            return {key: example(arg[key], axis[key], i) for key in arg}
        if isinstance(axis, (tuple, list)):
            return type(arg)(example(a, x, i) for a, x in zip(arg, axis))
        return np.take(arg, i, axis)
    results = [f(*[example(arg, axis, i) for arg, axis in zip(args, in_axes)])
               for i in range(size)]
    if isinstance(results[0], tuple):
        return tuple(np.stack(parts) for parts in zip(*results))
    return np.stack(results)


def loss(w, x, y):
    return np.mean((np.tanh(x @ w) - y) ** 2)


W = rng.standard_normal(3)
X = rng.standard_normal((5, 4, 3))
Y = rng.standard_normal((5, 4))


def test_in_axes_int_maps_every_argument():
    def f(x, y):
        return np.sin(x) * y + np.sum(x)
    x, y = rng.standard_normal((4, 3)), rng.standard_normal((4, 3))
    np.testing.assert_allclose(autotrace.vmap(f)(x, y), loop(f, (0, 0), (x, y), 4), rtol=1e-14)


def test_in_axes_none_and_negative_axes():
    def f(x, y):
        return x @ y
    x, y = rng.standard_normal((3, 2, 5)), rng.standard_normal((2, 4))
    got = autotrace.vmap(f, in_axes=(-1, None))(x, y)
    np.testing.assert_allclose(got, loop(f, (2, None), (x, y), 5), rtol=1e-14)


def test_in_axes_nested_in_tuples_lists_and_dicts():
    def f(pair, params):
        return pair[0] * params["scale"] + pair[1] - params["shift"]
    pair = (rng.standard_normal((2, 6)), rng.standard_normal(2))
    params = {"scale": rng.standard_normal(6), "shift": rng.standard_normal((2, 6))}
    in_axes = ((1, None), {"scale": 0, "shift": 1})
    got = autotrace.vmap(f, in_axes=in_axes)(pair, params)
    np.testing.assert_allclose(got, loop(f, in_axes, (pair, params), 6), rtol=1e-14)
    got = autotrace.vmap(f, in_axes=[[1, None], {"scale": 0, "shift": 1}])(pair, params)
    np.testing.assert_allclose(got, loop(f, in_axes, (pair, params), 6), rtol=1e-14)


def test_keyword_arguments_are_mapped_over_axis_0():
    def f(x, *, scale):
        return x * scale
    x, scale = rng.standard_normal((3, 2)), rng.standard_normal(3)
    np.testing.assert_allclose(autotrace.vmap(f)(x, scale=scale), x * scale[:, None])


def test_out_axes_int_none_and_nested():
    def f(x, w):
        return x * w, np.sum(w)
    x, w = rng.standard_normal((4, 3)), rng.standard_normal(3)
    products, total = autotrace.vmap(f, in_axes=(0, None), out_axes=(1, None))(x, w)
    np.testing.assert_allclose(products, (x * w).T)
    assert total == pytest.approx(np.sum(w))
    products, totals = autotrace.vmap(f, in_axes=(0, None), out_axes=-1)(x, w)
    np.testing.assert_allclose(products, (x * w).T)
    np.testing.assert_allclose(totals, np.full(4, np.sum(w)))  # repeated along the batch
    got = autotrace.vmap(lambda x: {"a": x, "b": 2 * x}, out_axes={"a": 0, "b": 1})(x)
    np.testing.assert_allclose(got["a"], x)
    np.testing.assert_allclose(got["b"], 2 * x.T)


def test_python_numbers_in_the_result_are_repeated_along_the_batch():
    # grad with respect to a Python float the result does not depend on is 0.0 for every
    # example: the batch of it is np.stack's, an array of zeros, as for any other output
    def f(x, a):
        return np.sum(np.sin(x))
    x = rng.standard_normal((3, 4))
    per_example = autotrace.vmap(autotrace.grad(f, wrt=(0, 1)), in_axes=(0, None))
    d_x, d_a = per_example(x, 0.5)
    np.testing.assert_allclose(d_x, np.cos(x))
    np.testing.assert_array_equal(d_a, np.zeros(3))
    assert d_a.dtype == np.float64
    flags, count = autotrace.vmap(lambda x: (True, 2), out_axes=(0, -1))(x)
    np.testing.assert_array_equal(flags, np.stack([True] * 3))
    np.testing.assert_array_equal(count, [2, 2, 2])
    np.testing.assert_array_equal(autotrace.vmap(lambda x: 1.5)(x), [1.5, 1.5, 1.5])


def test_axis_size_without_mapped_arguments():
    got = autotrace.vmap(lambda x: x + 1.0, in_axes=None, axis_size=3)(np.arange(2.0))
    np.testing.assert_array_equal(got, [[1.0, 2.0]] * 3)


def test_nested_vmap_is_a_table_of_pairs():
    def dot(a, b):
        return np.sum(a * b)
    a, b = rng.standard_normal((2, 3)), rng.standard_normal((4, 3))
    table = autotrace.vmap(autotrace.vmap(dot, in_axes=(0, None)), in_axes=(None, 0))(a, b)
    np.testing.assert_allclose(table, b @ a.T, rtol=1e-14, atol=1e-15)  # (sums may cancel)
    assert table.shape == (4, 2)


def test_per_example_gradients_of_grad():
    per_example = autotrace.vmap(autotrace.grad(loss), in_axes=(None, 0, 0))
    got = per_example(W, X, Y)
    expected = np.stack([autotrace.grad(loss)(W, X[i], Y[i]) for i in range(5)])
    np.testing.assert_allclose(got, expected, rtol=1e-13)
    # and the gradient itself, by central differences on one example
    step = 1e-6
    for j in range(3):
        shift = np.eye(3)[j] * step
        numeric = (loss(W + shift, X[2], Y[2]) - loss(W - shift, X[2], Y[2])) / (2 * step)
        assert got[2, j] == pytest.approx(numeric, rel=1e-6, abs=1e-9)


def test_value_and_grad_per_example():
    values, grads = autotrace.vmap(autotrace.value_and_grad(loss), in_axes=(None, 0, 0))(W, X, Y)
    expected_values, expected_grads = loop(autotrace.value_and_grad(loss), (None, 0, 0),
                                           (W, X, Y), 5)
    np.testing.assert_allclose(values, expected_values, rtol=1e-14)
    np.testing.assert_allclose(grads, expected_grads, rtol=1e-13)


def f_for_tangents(x):
    return np.sin(x) * np.sum(x ** 2)


def test_forward_jvp_and_vjp_per_example():
    xs, ts = rng.standard_normal((4, 3)), rng.standard_normal((4, 3))
    tangent_of = autotrace.forward(f_for_tangents)
    values, tangents = autotrace.vmap(lambda x, t: tangent_of(x, tangent=t))(xs, ts)
    expected = loop(lambda x, t: tangent_of(x, tangent=t), (0, 0), (xs, ts), 4)
    np.testing.assert_allclose(values, expected[0], rtol=1e-14)
    np.testing.assert_allclose(tangents, expected[1], rtol=1e-14)

    def jvp(x, t):
        return autotrace.jvp(f_for_tangents, (x,), (t,))
    got = autotrace.vmap(jvp)(xs, ts)
    np.testing.assert_allclose(got[1], expected[1], rtol=1e-14)

    def vjp(x, cotangent):
        _, gradient_of = autotrace.vjp(f_for_tangents, x)
        return gradient_of(cotangent)[0]
    np.testing.assert_allclose(autotrace.vmap(vjp)(xs, ts), loop(vjp, (0, 0), (xs, ts), 4),
                               rtol=1e-14)


def test_function_of_vmap_traces_once_and_caches():
    calls = []

    def f(x, w):
        calls.append(1)  # a Python side effect: runs while tracing only
        return np.tanh(x @ w)
    traced = autotrace.function(autotrace.vmap(f, in_axes=(0, None)))
    xs, w = rng.standard_normal((5, 3)), rng.standard_normal(3)
    first = traced(xs, w)
    second = traced(xs + 1.0, w)
    assert traced.trace_count == 1 and len(calls) == 1
    np.testing.assert_allclose(first, np.tanh(xs @ w), rtol=1e-14)
    np.testing.assert_allclose(second, np.tanh((xs + 1.0) @ w), rtol=1e-14)
    assert "= tanh" in str(traced.graph(xs, w))


def test_vmap_caches_per_signature():
    vmapped = autotrace.vmap(np.cumsum, in_axes=1)
    vmapped(np.ones((2, 3)))
    again = rng.standard_normal((2, 3))
    np.testing.assert_allclose(vmapped(again), np.cumsum(again, axis=0).T, rtol=1e-14)
    assert vmapped.trace_count == 1
    np.testing.assert_allclose(vmapped(np.ones((4, 3))), np.cumsum(np.ones((3, 4)), axis=1))
    assert vmapped.trace_count == 2
    with pytest.raises(ValueError, match="maps argument 'a' over axis 1, but it has 1 axes"):
        vmapped(np.ones(3))


def test_traced_branches_become_a_select_or_stay_a_cond():
    def f(x, limit):
        if np.sum(x) > limit:
            y = x * 2.0
        else:
            y = -x
        return y
    xs = rng.standard_normal((6, 3))
    np.testing.assert_array_equal(autotrace.vmap(f, in_axes=(0, None))(xs, 0.0),
                                  loop(f, (0, None), (xs, 0.0), 6))
    limits = np.array([-10.0, 10.0])
    vmapped = autotrace.vmap(f, in_axes=(None, 0))
    np.testing.assert_array_equal(vmapped(xs[0], limits), loop(f, (None, 0), (xs[0], limits), 2))
    assert "where" in str(vmapped.graph(xs[0], limits))


def test_graph_and_source_show_the_batch():
    vmapped = autotrace.vmap(lambda x, y: np.sum(x * y, axis=0), in_axes=(0, None))
    x, y = np.ones((4, 2, 3)), np.ones((2, 3))
    assert str(vmapped.graph(x, y, optimized=False)) == (
        "{ lambda a:f64[4,2,3] b:f64[2,3] ;\n"
        "  c:f64[4,2,3] = multiply a b\n"
        "  d:f64[4,3] = reduce_sum[axis=(1,)] c\n"
        "  in (d) }")
    assert str(vmapped.graph(x, y, batched=False)) == (
        "{ lambda x:f64[2,3] y:f64[2,3] ;\n"
        "  c:f64[2,3] = multiply x y\n"
        "  d:f64[3] = reduce_sum[axis=(0,)] c\n"
        "  in (d) }")
    with pytest.raises(TypeError, match="has not been called yet"):
        autotrace.source(autotrace.vmap(np.sin))
    np.testing.assert_array_equal(vmapped(x, y), np.full((4, 3), 2.0))
    text = autotrace.source(vmapped)
    assert "np.add.reduce(" in text and "axis=(1,)" in text and text == vmapped.source(x, y)


def shout(x):
    autotrace.print("x is", x)
    return x * 2.0


def test_printing_prints_the_batch_once_a_call(capsys):
    xs = np.arange(4.0).reshape(2, 2)
    np.testing.assert_array_equal(autotrace.vmap(shout)(xs), 2.0 * xs)
    traced = autotrace.function(autotrace.vmap(shout))
    traced(xs)
    traced(xs + 1.0)
    assert capsys.readouterr().out == (
        f"x is {xs}\nx is {xs}\nx is {xs + 1.0}\n")


def test_reading_a_variable_and_refusing_to_write_one():
    v = autotrace.Variable(np.arange(3.0))
    xs = np.ones((4, 3))
    np.testing.assert_array_equal(autotrace.vmap(lambda x: x * v)(xs), np.tile(np.arange(3.0),
                                                                            (4, 1)))

    def assigns(x):
        v.assign(x)
        return x
    with pytest.raises(NotImplementedError, match=r"writes the state of objects or "
                                                  r"autotrace.Variables \(Variable\)"):
        autotrace.vmap(assigns)(xs)


@dataclasses.dataclass
class Dense:
    w: np.ndarray
    b: np.ndarray


def dense(layer, x):
    return x @ layer.w + layer.b


def test_dataclass_arguments_shared_or_mapped():
    layer, xs = Dense(rng.standard_normal((3, 2)), rng.standard_normal(2)), np.ones((4, 3))
    np.testing.assert_allclose(autotrace.vmap(dense, in_axes=(None, 0))(layer, xs),
                               xs @ layer.w + layer.b)
    layers = Dense(rng.standard_normal((5, 3, 2)), rng.standard_normal((5, 2)))
    got = autotrace.vmap(dense, in_axes=(0, None))(layers, xs[0])
    np.testing.assert_allclose(got, [xs[0] @ layers.w[i] + layers.b[i] for i in range(5)])


def test_a_vmapped_method():
    class Scaler:
        def __init__(self):
            self.scale = np.array([1.0, 10.0])

        @autotrace.vmap
        def apply(self, x):
            return x * self.scale
    xs = np.ones((3, 2))
    np.testing.assert_array_equal(Scaler().apply(xs), [[1.0, 10.0]] * 3)


def test_writing_the_state_of_an_object_is_refused():
    class Cache:
        def remember(self, x):
            self.last = x
            return x
    with pytest.raises(NotImplementedError, match=r"writes the state of objects or "
                                                  r"autotrace.Variables \(self.last\)"):
        autotrace.vmap(Cache().remember)(np.ones((2, 3)))


# --- errors --------------------------------------------------------------------------------------

def add(x, y):
    return x + y


def test_mapped_sizes_that_differ():
    # (the line of the call ends each message here: tests/test_vmap_errors.py)
    with pytest.raises(ValueError) as error:
        autotrace.vmap(add)(np.ones((5, 2)), np.ones((3, 2)))
    assert str(error.value).splitlines()[0] == (
        "autotrace.vmap(add) got mapped axes of different sizes: argument 'x' has size 5, "
        "argument 'y' has size 3; every mapped axis must have the batch size")


def test_in_axes_that_do_not_match_the_arguments():
    with pytest.raises(ValueError) as error:
        autotrace.vmap(add, in_axes=(0, 0, 0))(np.ones(2), np.ones(2))
    assert str(error.value).splitlines()[0] == (
        "autotrace.vmap: in_axes has 3 entries but the call has 2 positional arguments; give "
        "one axis (or None) per positional argument, or one int for all")
    with pytest.raises(ValueError) as error:
        autotrace.vmap(add, in_axes=(0, (0, 0)))(np.ones(2), np.ones(2))
    assert str(error.value).splitlines()[0] == (
        "autotrace.vmap: in_axes gives a tuple of 2 for argument 'y', which is an array; give "
        "an int, None, or a tuple or list of the same length")
    with pytest.raises(ValueError, match=r"maps argument 'x' over axis 2, but it has 1 axes"):
        autotrace.vmap(add, in_axes=2)(np.ones(2), np.ones(2))
    with pytest.raises(TypeError, match="in_axes must be an int, None"):
        autotrace.vmap(add, in_axes="0")
    with pytest.raises(ValueError, match="no argument is mapped"):
        autotrace.vmap(add, in_axes=None)(np.ones(2), np.ones(2))


def test_an_output_mapped_with_out_axes_none():
    with pytest.raises(ValueError, match="out_axes is None for an output that differs"):
        autotrace.vmap(np.sin, out_axes=None)(np.ones((2, 3)))


def test_ops_without_a_rule_are_refused_by_name():
    def positives(x):
        return np.sum(x[x > 0])
    with pytest.raises(BatchingError) as error:
        autotrace.vmap(positives)(np.ones((2, 3)))
    assert str(error.value).splitlines()[0] == (
        "autotrace.vmap(positives) cannot batch the op 'mask_select': x[mask] with a traced "
        "mask has as "
        "many rows as the mask has true elements, which differs between examples; use "
        "np.where(mask, x, 0)")


def test_a_batch_is_never_a_view_of_the_arguments():
    xs = np.ones((2, 3))
    batch = autotrace.vmap(lambda x: x)(xs)
    np.testing.assert_array_equal(batch, xs)
    assert not np.shares_memory(batch, xs)


def test_gradient_through_a_vmapped_call():
    # derived from the vmap's batched trace (tests/test_vmap_derivatives.py has more)
    per_row = autotrace.vmap(lambda w, x: np.tanh(x @ w), in_axes=(None, 0))

    def total(w, x):
        return np.sum(per_row(w, x))
    x = X[0]
    want = [(np.sum(np.tanh(x @ (W + step))) - np.sum(np.tanh(x @ (W - step)))) / 2e-6
            for step in 1e-6 * np.eye(W.size).reshape((W.size,) + W.shape)]
    np.testing.assert_allclose(autotrace.grad(total)(W, x), np.reshape(want, W.shape),
                               rtol=1e-6, atol=1e-9)


# --- jacrev and jacfwd: vmap over the gradient's seeds and over tangents ------------------------

def layer(x, w):
    return np.tanh(w @ x) * np.sum(x ** 2)


def central_differences(f, args, wrt, step=1e-6):
    point = np.array(args[wrt], dtype=float)
    columns = []
    for index in np.ndindex(point.shape):
        shift = np.zeros_like(point)
        shift[index] = step
        up = f(*[point + shift if i == wrt else a for i, a in enumerate(args)])
        down = f(*[point - shift if i == wrt else a for i, a in enumerate(args)])
        columns.append((up - down) / (2 * step))
    return np.moveaxis(np.array(columns), 0, -1).reshape(np.shape(up) + point.shape)


@pytest.mark.parametrize("jacobian", [autotrace.jacrev, autotrace.jacfwd])
@pytest.mark.parametrize("wrt", [0, 1])
def test_jacobians_match_central_differences(jacobian, wrt):
    x, w = rng.standard_normal(3), rng.standard_normal((2, 3))
    got = jacobian(layer, wrt)(x, w)
    expected = central_differences(layer, (x, w), wrt)
    assert got.shape == expected.shape == (2, *(x, w)[wrt].shape)
    np.testing.assert_allclose(got, expected, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(got, autotrace.jacobian(layer, wrt)(x, w), rtol=1e-13,
                               atol=1e-15)


def test_jacobians_traced_by_function():
    x, w = rng.standard_normal(3), rng.standard_normal((2, 3))
    for jacobian in (autotrace.jacrev, autotrace.jacfwd):
        traced = autotrace.function(jacobian(layer))
        np.testing.assert_allclose(traced(x, w), autotrace.jacobian(layer)(x, w), rtol=1e-13)
        traced(x + 1.0, w)
        assert traced.trace_count == 1


def test_jacobians_of_a_scalar_and_their_errors():
    x = np.array([1.0, 2.0])
    np.testing.assert_allclose(autotrace.jacrev(lambda x: np.sum(x ** 2))(x), [2.0, 4.0])
    np.testing.assert_allclose(autotrace.jacfwd(lambda x: np.sum(x ** 2))(x), [2.0, 4.0])
    with pytest.raises(TypeError, match="wrt must be the position of one argument"):
        autotrace.jacrev(layer, wrt=(0, 1))
    with pytest.raises(TypeError, match="returns a tuple: it takes functions of one array"):
        autotrace.jacrev(lambda x: (x, x))(x)


class Params:
    """A registered pytree (autotrace.tree_util) of two weight arrays."""

    def __init__(self, w, b):
        self.w, self.b = w, b


autotrace.tree_util.register_pytree_node(Params, lambda p: ((p.w, p.b), None),
                                         lambda aux, children: Params(*children))


def test_a_registered_pytree_argument_is_mapped_leaf_by_leaf():
    def affine(p, x):
        return np.tanh(x @ p.w + p.b)

    mapped = Params(rng.standard_normal((5, 3, 2)), rng.standard_normal((5, 2)))
    x = rng.standard_normal((5, 4, 3))
    expected = np.stack([affine(Params(mapped.w[i], mapped.b[i]), x[i]) for i in range(5)])
    np.testing.assert_allclose(autotrace.vmap(affine)(mapped, x), expected, rtol=1e-12)
    shared = Params(mapped.w[0], mapped.b[0])
    np.testing.assert_allclose(autotrace.vmap(affine, in_axes=(None, 0))(shared, x),
                               np.stack([affine(shared, x[i]) for i in range(5)]), rtol=1e-12)
    with pytest.raises(ValueError, match=r"autotrace.vmap: in_axes for argument 'p' \(a "
                                         r"registered Params\) must be an int or None, not "
                                         r"\(0, 0\)"):
        autotrace.vmap(affine, in_axes=((0, 0), 0))(mapped, x)


def test_per_example_gradients_of_a_registered_pytree_are_that_type():
    def pytree_loss(p, x, y):
        return np.sum((np.tanh(x @ p.w + p.b) - y) ** 2)

    p = Params(rng.standard_normal((3, 2)), rng.standard_normal(2))
    x, y = rng.standard_normal((5, 3)), rng.standard_normal((5, 2))
    per_example = autotrace.vmap(autotrace.grad(pytree_loss), in_axes=(None, 0, 0))(p, x, y)
    looped = [autotrace.grad(pytree_loss)(p, x[i], y[i]) for i in range(5)]
    assert isinstance(per_example, Params)
    np.testing.assert_allclose(per_example.w, np.stack([g.w for g in looped]), rtol=1e-12)
    np.testing.assert_allclose(per_example.b, np.stack([g.b for g in looped]), rtol=1e-12)


def per_example_loss(w, x, y):
    return (np.tanh(x @ w) - y) ** 2


def test_vmap_guide_shows_the_real_batched_source():
    shown = block_after(DOCS / "guides" / "vmap.md",
                        "`autotrace.source` of `vmap(grad(per_example_loss)")
    per_example = autotrace.vmap(autotrace.grad(per_example_loss), in_axes=(None, 0, 0))
    per_example(np.ones(3), np.ones((8, 3)), np.zeros(8))
    generated = autotrace.source(per_example)
    def numbered_alike(text):  # the graph's number counts the graphs made before it
        return re.sub(r"loss_\d+", "loss_N", text).strip()
    assert numbered_alike(shown.text) == numbered_alike(generated), (
        f"{shown.where}: the batched-source example is out of date; paste in this:\n" + generated)
