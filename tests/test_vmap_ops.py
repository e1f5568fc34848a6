"""autotrace.vmap, op by op: each batching rule against a Python loop over the examples, and
a walk of the op registry so that no op is without a rule or a deliberate refusal."""
import importlib

import numpy as np
import pytest

import autotrace
from autotrace.runtime.primitives.primitive import primitives

rng = np.random.default_rng(0)
B = 3  # the batch size


def values(*shape):
    return rng.standard_normal(shape)


def check(f, in_axes, *args, exact=False):
    """vmap(f) equals np.stack of f on each example (NumPy running f eagerly)."""
    axes = in_axes if isinstance(in_axes, tuple) else (in_axes,) * len(args)
    examples = [f(*[arg if axis is None else np.take(arg, i, axis)
                    for arg, axis in zip(args, axes)]) for i in range(B)]
    expected = np.stack(examples)
    got = autotrace.vmap(f, in_axes=in_axes)(*args)
    assert got.shape == expected.shape and got.dtype == expected.dtype
    if exact:
        np.testing.assert_array_equal(got, expected)
    else:
        np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-12)


POSITIVE = np.abs(values(B, 4)) + 0.5
SQUARE = values(B, 3, 3) + 3 * np.eye(3)

# (name, function, in_axes, arguments)
CASES = [
    ("sin", np.sin, 0, [values(B, 4)]),
    ("add of vector and row", lambda x, y: x + y, (0, None), [values(B, 4), values(2, 4)]),
    ("multiply of scalars by a matrix", lambda s, m: s * m, (0, None), [values(B), values(2, 3)]),
    ("divmod", lambda x: np.divmod(x, 0.7)[1], 0, [values(B, 4)]),
    ("scalar power", lambda x: np.sum(x) ** 0.5, 0, [POSITIVE]),
    ("where", lambda c, x: np.where(c > 0, x, -x), (0, None), [values(B, 4), values(4)]),
    ("clip", lambda x, lo: np.clip(x, lo, 1.0), (0, 0), [values(B, 4), values(B) - 1]),
    ("astype", lambda x: (x * 10).astype(np.int32), 0, [values(B, 4)]),
    ("erf", lambda x: autotrace.nn.erf(x) if hasattr(autotrace.nn, "erf") else np.tanh(x), 0,
     [values(B, 3)]),
    ("sum of axis 1", lambda x: np.sum(x, axis=1), 0, [values(B, 2, 3)]),
    ("mean keepdims", lambda x: np.mean(x, axis=0, keepdims=True), 0, [values(B, 2, 3)]),
    ("var over all", lambda x: np.var(x, ddof=1), 0, [values(B, 2, 3)]),
    ("max negative axis", lambda x: np.max(x, axis=-1), 1, [values(2, B, 3)]),
    ("argmax flat", lambda x: np.argmax(x), 0, [values(B, 2, 3)]),
    ("argmin keepdims", lambda x: np.argmin(x, keepdims=True), 0, [values(B, 2, 3)]),
    ("argmax axis", lambda x: np.argmax(x, axis=1), 0, [values(B, 2, 3)]),
    ("cumsum flat", np.cumsum, 0, [values(B, 2, 3)]),
    ("cumprod axis", lambda x: np.cumprod(x, axis=1), 0, [values(B, 2, 3)]),
    ("reshape", lambda x: x.reshape(3, 2), 0, [values(B, 2, 3)]),
    ("transpose", lambda x: x.T, 0, [values(B, 2, 3, 4)]),
    ("swapaxes", lambda x: np.swapaxes(x, 0, 2), 2, [values(2, 3, B, 4)]),
    ("broadcast_to", lambda x: np.broadcast_to(x, (2, 3)), 0, [values(B, 3)]),
    ("concatenate", lambda x, y: np.concatenate([x, y], axis=1), (0, None),
     [values(B, 2, 3), values(2, 1)]),
    ("stack", lambda x, y: np.stack([x, y], axis=-1), (0, 0), [values(B, 4), values(B, 4)]),
    ("roll flat", lambda x: np.roll(x, 2), 0, [values(B, 2, 3)]),
    ("roll axis", lambda x: np.roll(x, 1, axis=0), 0, [values(B, 2, 3)]),
    ("tril", lambda x: np.tril(x, -1), 0, [values(B, 3, 3)]),
    ("tile", lambda x: np.tile(x, (2, 1, 2)), 0, [values(B, 2, 3)]),
    ("repeat flat", lambda x: np.repeat(x, 2), 0, [values(B, 2, 3)]),
    ("repeat axis", lambda x: np.repeat(x, 2, axis=1), 0, [values(B, 2, 3)]),
    ("trace", np.trace, 0, [values(B, 3, 3)]),
    ("sort", np.sort, 0, [values(B, 2, 4)]),
    ("sort flat", lambda x: np.sort(x, axis=None), 0, [values(B, 2, 4)]),
    ("argsort axis 0", lambda x: np.argsort(x, axis=0), 0, [values(B, 2, 4)]),
    ("diagonal", lambda x: np.diagonal(x, 1), 0, [values(B, 3, 4)]),
    ("diag of a matrix", np.diag, 0, [values(B, 3, 3)]),
    ("diff", lambda x: np.diff(x, axis=0, prepend=0.0), 0, [values(B, 3, 2)]),
    ("pad", lambda x: np.pad(x, 1, constant_values=2.0), 0, [values(B, 2, 3)]),
    ("take axis", lambda x, i: np.take(x, i, axis=1), (0, 0),
     [values(B, 2, 5), rng.integers(0, 5, (B, 3))]),
    ("take flat of a shared array", lambda x, i: np.take(x, i), (None, 0),
     [values(2, 5), rng.integers(-10, 10, (B, 2, 2))]),
    ("take_along_axis", lambda x, i: np.take_along_axis(x, i, axis=1), (0, None),
     [values(B, 2, 5), rng.integers(0, 5, (2, 3))]),
    ("matmul", lambda a, b: a @ b, (0, None), [values(B, 2, 3), values(3, 4)]),
    ("matmul of vectors", lambda a, b: a @ b, (0, 0), [values(B, 3), values(B, 3)]),
    ("matmul vector by matrices", lambda a, b: a @ b, (0, 0), [values(B, 3), values(B, 2, 3, 4)]),
    ("matmul matrix by vector", lambda a, b: a @ b, (None, 0), [values(2, 3), values(B, 3)]),
    ("dot", np.dot, (0, 0), [values(B, 2, 3), values(B, 4, 3, 2)]),
    ("dot of vector", np.dot, (None, 0), [values(3), values(B, 3)]),
    ("dot by scalar", np.dot, (0, None), [values(B, 3), 2.0]),
    ("tensordot", lambda a, b: np.tensordot(a, b, axes=([0, 2], [1, 0])), (0, 0),
     [values(B, 2, 3, 4), values(B, 4, 2)]),
    ("outer", np.outer, (0, None), [values(B, 2, 2), values(3)]),
    ("inner", np.inner, (0, 0), [values(B, 2, 3), values(B, 3)]),
    ("vdot", np.vdot, (0, None), [values(B, 2, 3), values(3, 2)]),
    ("einsum", lambda a, b: np.einsum("ij,jk", a, b), (0, None), [values(B, 2, 3), values(3, 2)]),
    ("einsum ellipsis", lambda a: np.einsum("...ii->...i", a), 0, [values(B, 2, 3, 3)]),
    ("vecdot", np.vecdot, (0, None), [values(B, 2, 3), values(3)]),
    ("cross", np.cross, (0, None), [values(B, 3), values(3)]),
    ("inv", np.linalg.inv, 0, [SQUARE]),
    ("det", np.linalg.det, 0, [SQUARE]),
    ("solve of a vector", np.linalg.solve, (None, 0), [SQUARE[0], values(B, 3)]),
    ("solve of matrices", np.linalg.solve, (0, 0), [SQUARE, values(B, 3, 2)]),
    ("norm flat", np.linalg.norm, 0, [values(B, 2, 3)]),
    ("norm of a matrix", lambda x: np.linalg.norm(x, ord=1), 0, [values(B, 2, 3)]),
    ("norm axis", lambda x: np.linalg.norm(x, axis=0), 0, [values(B, 2, 3)]),
    ("vector_norm keepdims", lambda x: np.linalg.vector_norm(x, keepdims=True), 0,
     [values(B, 2, 3)]),
    ("eigvalsh", np.linalg.eigvalsh, 0, [SQUARE + SQUARE.transpose(0, 2, 1)]),
    # ops without a batched form run once per example
    ("kron", np.kron, (0, None), [values(B, 2), values(2, 2)]),
    ("tril of a vector", np.tril, 0, [values(B, 3)]),
    ("diag of a vector", lambda v: np.diag(v, 1), 0, [values(B, 3)]),
    ("diff with an array prepended", lambda x: np.diff(x, prepend=[[1.0], [2.0]]), 0,
     [values(B, 2, 3)]),
    ("take clipped", lambda x, i: np.take(x, i, mode="clip"), (0, 0),
     [values(B, 4), rng.integers(-3, 7, (B, 5))]),
    ("pad per axis", lambda x: np.pad(x, ((1, 0), (0, 2)), constant_values=((1, 2), (3, 4))),
     0, [values(B, 2, 3)]),
    ("cross on axis 0", lambda a, b: np.cross(a, b, axis=0), (0, 0),
     [values(B, 3, 2), values(B, 3, 2)]),
]


@pytest.mark.parametrize("name, f, in_axes, args", CASES, ids=[case[0] for case in CASES])
def test_op_matches_a_loop(name, f, in_axes, args):
    check(f, in_axes, *args, exact=name in ("sort", "argsort axis 0", "take axis", "roll flat"))


INDEX_CASES = [
    ("basic", lambda x: x[1, ::2], 0, [values(B, 3, 4)]),
    ("ellipsis and new axis", lambda x: x[..., None, 1], 0, [values(B, 3, 4)]),
    ("shared array, mapped index", lambda x, i: x[i], (None, 0),
     [values(5, 2), rng.integers(0, 5, (B, 3))]),
    ("mapped array, shared index", lambda x, i: x[:, i], (0, None),
     [values(B, 2, 5), rng.integers(0, 5, (4,))]),
    ("both mapped", lambda x, i: x[i, 1], (0, 0), [values(B, 5, 2), rng.integers(0, 5, (B,))]),
    ("indices apart", lambda x, i: x[i, :, 0], (0, 0),
     [values(B, 5, 2, 3), rng.integers(0, 5, (B, 4))]),
    ("indices after a slice", lambda x, i, j: x[:, i, j], (0, 0, None),
     [values(B, 2, 5, 3), rng.integers(0, 5, (B, 4)), rng.integers(0, 3, (4,))]),
    ("traced loop counter", lambda x, i: x[i], (0, 0), [values(B, 5), np.array([0, 4, 2])]),
    ("ellipsis between index arrays", lambda x, i: x[i, ..., 1], (0, 0),
     [values(B, 4, 2, 3), rng.integers(0, 4, (B, 2))]),
]


@pytest.mark.parametrize("name, f, in_axes, args", INDEX_CASES,
                         ids=[case[0] for case in INDEX_CASES])
def test_indexing_matches_a_loop(name, f, in_axes, args):
    check(f, in_axes, *args, exact=True)


def _set(x, index, value):
    x = x.copy()
    x[index] = value
    return x


def _add_at(x, index, value):
    x = x.copy()
    np.add.at(x, index, value)
    return x


WRITE_CASES = [
    ("basic", lambda x, v: _set(x, (1, slice(None, 2)), v), (0, 0),
     [values(B, 3, 4), values(B, 2)]),
    ("shared value", lambda x, v: _set(x, 0, v), (0, None), [values(B, 3, 4), values(4)]),
    ("shared array", lambda x, v: _set(x, 0, v), (None, 0), [values(3, 4), values(B, 4)]),
    ("index mapped", lambda x, i: _set(x, i, 7.0), (None, 0),
     [values(5, 2), rng.integers(0, 5, (B, 2))]),
    ("index and value mapped apart", lambda x, i, v: _set(x, (i, slice(None), 1), v), (0, 0, 0),
     [values(B, 5, 2, 3), rng.integers(0, 5, (B, 3)), values(B, 3, 2)]),
    ("after a slice", lambda x, i, v: _set(x, (slice(None), i), v), (0, 0, 0),
     [values(B, 2, 5), rng.integers(0, 5, (B, 3)), values(B, 2, 3)]),
    ("value with a leading unit axis", lambda x, v: _set(x, 1, v), (0, 0),
     [values(B, 3, 4), values(B, 1, 4)]),
    ("add.at repeated", lambda x, i, v: _add_at(x, i, v), (0, 0, 0),
     [values(B, 5), np.array([[0, 0, 1], [2, 2, 2], [4, 3, 4]]), values(B, 3)]),
]


@pytest.mark.parametrize("name, f, in_axes, args", WRITE_CASES,
                         ids=[case[0] for case in WRITE_CASES])
def test_writes_match_a_loop(name, f, in_axes, args):
    check(f, in_axes, *args)


def test_per_example_gradients_of_a_convolutional_net():
    def loss(kernel, image, target):
        h = autotrace.nn.relu(autotrace.nn.conv2d(image[None], kernel, padding="same"))
        h = autotrace.nn.max_pool2d(h, 2)
        return np.mean((np.mean(h, axis=(1, 2)) - target) ** 2)
    kernel, images, targets = values(3, 3, 2, 4), values(B, 4, 4, 2), values(B, 4)
    for wrt in (0, 1):  # kernel: conv2d_backprop_kernel once per example; image: batched
        check(autotrace.grad(loss, wrt=wrt), (None, 0, 0), kernel, images, targets)


def test_a_kernel_for_each_example():
    kernels, image = values(B, 3, 3, 2, 4), values(1, 5, 5, 2)
    check(lambda k, x: autotrace.nn.conv2d(x, k, padding="same"), (0, None), kernels, image)


def test_random_draws_from_a_batch_of_keys():
    from autotrace.runtime.primitives.keyed_random import draw
    check(lambda key: draw(key, (2,), distribution="normal"), 0, np.array([1, 2, 3]),
          exact=True)


def test_a_traced_while_loop_runs_as_long_as_each_example_needs():
    def doubles_until_large(x):
        while np.sum(x) < 10.0:
            x = x * 2.0
        return x
    check(doubles_until_large, 0, np.abs(values(B, 3)) + np.array([[0.1], [1.0], [20.0]]),
          exact=True)


def counts_to(x, n):
    i = 0
    while i < n:
        x = x * 2.0
        i = i + 1
    return x, i


def test_a_batch_of_loops_is_one_masked_loop_of_any_size():
    xs, limits = np.ones((300, 2)), np.arange(300) % 7  # past UNROLL_LIMIT
    batched = autotrace.vmap(counts_to)
    doubled, counts = batched(xs, limits)
    np.testing.assert_array_equal(doubled, 2.0 ** limits[:, None] * xs)
    np.testing.assert_array_equal(counts, limits)
    graph = str(batched.graph(xs, limits))
    assert graph.count("while[") == 1 and "reduce_any" in graph and "where" in graph


def test_unrolled_ops_are_refused_past_the_limit():
    from autotrace.runtime.primitives.batching import UNROLL_LIMIT
    from autotrace.runtime.tracing.tracer_batching import BatchingError
    with pytest.raises(BatchingError) as error:
        autotrace.vmap(np.kron, in_axes=(0, None))(np.ones((UNROLL_LIMIT + 1, 2)), np.ones(2))
    assert str(error.value).splitlines()[0] == (
        f"autotrace.vmap(kron) cannot batch the op 'kron': it has no batched form, so it runs "
        f"once per example, for batches of at most {UNROLL_LIMIT} examples (this one has "
        f"{UNROLL_LIMIT + 1}); split the batch")


def test_every_op_has_a_batching_rule_or_refuses_with_a_reason():
    for module in ("backends.llvm.cpu_fusion", "backends.llvm.cpu_outer",
                   "backends.llvm.cpu_pooling", "backends.outer_products",
                   "backends.row_products", "tracing.stacks"):
        importlib.import_module(f"autotrace.runtime.{module}")  # their ops: fused_cpu, ...
    importlib.import_module("autotrace.distributed")  # allreduce
    missing = sorted(name for name, primitive in primitives.items() if primitive.batching is None)
    assert missing == []
    refused = {name: primitive.batching.refuses for name, primitive in primitives.items()
               if hasattr(primitive.batching, "refuses")}
    assert all(len(reason) > 20 for reason in refused.values())
    # the ops that are refused on purpose, each with its reason
    assert sorted(refused) == ["allreduce", "full", "fused_cpu", "mask_select", "matmul_outer",
                               "matmul_rows", "matmul_transposed", "max_pool_cpu",
                               "max_pool_scatter_cpu", "outer_cpu", "stack_batch_pop",
                               "stack_batch_push", "stack_new", "stack_select",
                               "stack_to_batch"]


def test_an_op_without_a_rule_is_refused_by_name():
    from autotrace.runtime.abstract import AbstractArray
    from autotrace.runtime.graph import Equation, Graph, Var
    from autotrace.runtime.primitives.primitive import Primitive
    from autotrace.runtime.tracing.tracer_batching import BatchingError, batch_graph
    new_op = Primitive("new_op", np.negative, lambda aval: aval)  # no batching rule yet
    x, y = Var(AbstractArray((3,), np.float64)), Var(AbstractArray((3,), np.float64))
    graph = Graph([x], [Equation(new_op, [x], {}, [y])], [y])
    assert batch_graph(graph, (False,), 4)[1] == (False,)  # not batched: copied as it is
    with pytest.raises(BatchingError) as error:
        batch_graph(graph, (True,), 4)
    assert str(error.value) == (
        "has no batching rule for the op 'new_op', which the function applies to a batched "
        "value; compute it outside vmap, or loop over the examples in Python")


def test_a_rule_that_gets_the_shape_wrong_is_an_error_not_a_wrong_value():
    from autotrace.runtime.abstract import AbstractArray
    from autotrace.runtime.graph import Equation, Graph, Var
    from autotrace.runtime.primitives.primitive import Primitive
    from autotrace.runtime.tracing.tracer_batching import batch_graph
    total = primitives["reduce_sum"]
    wrong = Primitive("reduce_sum", total.impl, total.abstract_eval, source=total.source,
                      batching=lambda call: call.bind(call.args[0]))  # axes not moved
    x, y = Var(AbstractArray((2, 3), np.float64)), Var(AbstractArray((3,), np.float64))
    graph = Graph([x], [Equation(wrong, [x], {"axis": (0,)}, [y])], [y])
    with pytest.raises(AssertionError, match=r"the batching rule of 'reduce_sum' gave a "
                                             r"float64 array of shape \(2, 3\) where the batch "
                                             r"of 4 examples of f64\[3\] is float64\[4, 3\]"):
        batch_graph(graph, (True,), 4)


def random_index(draw: np.random.Generator, shape: tuple) -> list:
    """A random index for an array of `shape`: ints, slices, None, `...` and index arrays,
    each array ("array", its shape, whether it is mapped)."""
    items, axis = [], 0
    while axis < len(shape) and (not items or draw.random() < 0.7):
        kind = draw.choice(["int", "slice", "none", "array", "array"])
        if kind == "int":
            items.append(int(draw.integers(-shape[axis], shape[axis])))
        elif kind == "slice":
            items.append(slice(draw.choice([None, 1]), None, draw.choice([None, 2])))
        elif kind == "none":
            items.append(None)
            continue
        else:
            index_shape = [(), (2,), (2, 1), (1, 2)][draw.integers(4)]  # they broadcast
            items.append(("array", shape[axis], index_shape, bool(draw.random() < 0.5)))
        axis += 1
    if draw.random() < 0.3:  # anywhere where it stands for no axis, else last
        items.insert(int(draw.integers(len(items) + 1)) if axis == len(shape) else len(items),
                     Ellipsis)
    return items


@pytest.mark.parametrize("seed", range(2))
def test_random_indices_read_and_write_as_a_loop(seed):
    draw = np.random.default_rng(seed)
    checked = 0
    for _ in range(25):
        shape = tuple(int(n) for n in draw.integers(2, 5, draw.integers(1, 4)))
        items = random_index(draw, shape)
        arrays = [draw.integers(0, item[1], (B, *item[2]) if item[3] else item[2])
                  for item in items if isinstance(item, tuple)]
        mapped = [item[3] for item in items if isinstance(item, tuple)]

        def index(arrays):
            given = iter(arrays)
            return tuple(next(given) if isinstance(item, tuple) else item for item in items)

        def read(x, *arrays):
            return x[index(arrays)]

        def write(x, value, *arrays):
            x = x.copy()
            x[index(arrays)] = value
            return x
        x = values(B, *shape)
        example = x[0][index([a[0] if m else a for a, m in zip(arrays, mapped)])]
        in_axes = (0, *[0 if m else None for m in mapped])
        check(read, in_axes, x, *arrays, exact=True)
        value = values(B, *np.shape(example)[1:])  # broadcast along the selection's first axis
        check(write, (0, 0, *in_axes[1:]), x, value, *arrays, exact=True)
        checked += 1
    assert checked == 25


def test_branches_and_loop_bodies_that_write_into_dying_buffers():
    # A traced cond's branches and a loop's body are optimized when traced: an op writes its
    # result into an input no later op reads (`out=`). Batched, each example keeps its values.
    def branches(x):
        if np.sum(x) < 0.5:
            x = np.tanh(x) * (x / (1.5 + x ** 2))
        else:
            x = x * (0.01 + x)
        return np.sin(x)

    def grows(x):
        while np.sum(x) < 4.0:
            y = np.exp(x) * 0.5
            y[0] = y[1] * 2.0
            x = x + np.abs(y) * (1.0 + x ** 2)
        return x
    xs = np.array([[0.1, 0.2], [1.0, 2.0], [-1.0, 0.3]])
    check(branches, 0, xs, exact=True)
    check(grows, 0, np.abs(xs), exact=True)
