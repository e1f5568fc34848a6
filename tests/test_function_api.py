"""autotrace.function as users call it: decorator forms, input_signature with autotrace.Spec,
reduce_retracing, the signature rules one a test, the LRU bound, threads, golden graphs and the
errors people meet.

The goldens are tests/golden_graphs/<name>.txt, each `str(f.graph(...))` before (`_traced`)
or after (`_optimized`) the passes. When graphs change on purpose, rewrite them with

    AUTOTRACE_UPDATE_GOLDENS=1 python -m pytest tests/test_function_api.py

and review the diff of tests/golden_graphs/ like any other change.
"""
import gc
import inspect
import os
import re
import threading
import weakref
from pathlib import Path

import numpy as np
import pytest

import autotrace
from autotrace import Spec
from autotrace.runtime.abstract import UnknownDimensionError
from autotrace.runtime.execution.graph_dot import graph_dot
from autotrace.runtime.ops import UntraceableError

GOLDEN_DIR = Path(__file__).resolve().parent / "golden_graphs"
UPDATE = os.environ.get("AUTOTRACE_UPDATE_GOLDENS") == "1"


def traced_count(python_function, calls, **options):
    """A fresh autotrace.function of `python_function`, called with each argument tuple in
    `calls`; its trace count after each call."""
    traced = autotrace.function(python_function, **options)
    counts = []
    for args in calls:
        traced(*args)
        counts.append(traced.trace_count)
    return traced, counts


def total(x):
    return np.sum(x)


# --- decorator forms ----------------------------------------------------------------------------

def test_plain_decorator():
    @autotrace.function
    def square(x):
        return x * x
    assert isinstance(square, autotrace.Function) and square.__name__ == "square"
    np.testing.assert_array_equal(square(np.array([2.0, 3.0])), [4.0, 9.0])
    assert square.trace_count == 1


def test_decorator_with_options():
    @autotrace.function(input_signature=[Spec((None,))], reduce_retracing=False, max_traces=2)
    def square(x):
        return x * x
    assert isinstance(square, autotrace.Function) and square.__name__ == "square"
    np.testing.assert_array_equal(square(np.array([2.0, 3.0])), [4.0, 9.0])
    assert square.input_signature.specs == (Spec((None,)),) and not square.reduce_retracing


def test_decorator_called_without_options():
    @autotrace.function()
    def square(x):
        return x * x
    np.testing.assert_array_equal(square(np.array([2.0])), [4.0])


def test_called_on_a_function():
    traced = autotrace.function(total, input_signature=None, reduce_retracing=True)
    assert traced(np.ones(3)) == 3.0 and traced.reduce_retracing
    assert traced.input_signature is None


def test_a_non_function_is_refused():
    with pytest.raises(TypeError, match="^autotrace.function expects a function, got int$"):
        autotrace.function(3)


# --- Spec ---------------------------------------------------------------------------------------

def test_spec_shape_dtype_and_repr():
    spec = Spec([None, 3])
    assert spec.shape == (None, 3) and spec.dtype == np.float64
    assert repr(spec) == "Spec(shape=(None, 3), dtype=float64)"
    assert Spec((2,), "float32") == Spec((2,), np.float32) != Spec((2,))
    assert Spec.from_array(np.zeros((2, 3), np.int32)) == Spec((2, 3), np.int32)
    assert spec.accepts_shape((7, 3)) and not spec.accepts_shape((7, 4))
    assert not spec.accepts_shape((3,))


@pytest.mark.parametrize("shape", [3, (None, -1), (2.0,), (True,), None])
def test_spec_refuses_a_bad_shape(shape):
    with pytest.raises(TypeError, match=re.escape(
            f"Spec: shape must be a tuple of sizes (ints >= 0) and None, like (None, 3), but "
            f"it is {shape!r}")):
        Spec(shape)


# --- input_signature ----------------------------------------------------------------------------

@autotrace.function(input_signature=[Spec((None, 3))])
def double(x):
    return x + x


def layer_norm_rows(x, w):
    centered = x - np.mean(x, axis=1, keepdims=True)
    scaled = centered / np.sqrt(np.mean(centered ** 2, axis=1, keepdims=True) + 1e-5)
    return np.tanh(scaled @ w), scaled.T.reshape(-1), np.max(x, axis=0), x[1:, ::2]


def test_input_signature_traces_once_for_every_size():
    traced = autotrace.function(layer_norm_rows,
                                input_signature=[Spec((None, 3)), Spec((3, 2))])
    rng = np.random.default_rng(0)
    w = rng.normal(size=(3, 2))
    for rows in (4, 1, 7, 2):
        x = rng.normal(size=(rows, 3))
        for got, expected in zip(traced(x, w), layer_norm_rows(x, w)):
            assert got.shape == expected.shape
            np.testing.assert_allclose(got, expected, rtol=1e-12)
    assert traced.trace_count == 1
    assert "x:f64[?,3] w:f64[3,2]" in str(traced.graph(x, w))  # named after the parameters


def test_input_signature_trace_bakes_no_unknown_size_into_the_source():
    traced = autotrace.function(lambda x: (np.zeros_like(x) + x[::-1]).reshape(-1),
                                input_signature=[Spec((None, 3))])
    source = traced.source(np.ones((5, 3)))
    assert "np.zeros_like(a, np.float64)" in source and "np.reshape(d, (-1,))" in source
    assert not re.search(r"\b5\b", source), source
    for rows in (2, 5):
        x = np.arange(rows * 3.0).reshape(rows, 3)
        np.testing.assert_array_equal(traced(x), x[::-1].reshape(-1))


@pytest.mark.parametrize("argument, passed", [
    (np.ones((2, 4)), "an array of shape (2, 4) and dtype float64"),          # shape
    (np.ones((2, 3), np.float32), "an array of shape (2, 3) and dtype float32"),  # dtype
    (np.ones(3), "an array of shape (3,) and dtype float64"),                 # rank
    (1.5, "1.5 (a float)"),
    ("rows", "'rows' (a str)"),
])
def test_a_call_that_does_not_fit_the_signature_names_the_argument(argument, passed):
    with pytest.raises(TypeError) as error:
        double(argument)
    assert str(error.value) == (
        f"double(x): argument 'x' expected Spec(shape=(None, 3), dtype=float64), got {passed}")


def test_wrong_number_of_arguments():
    with pytest.raises(TypeError) as error:
        double(np.ones((2, 3)), np.ones((2, 3)))
    assert str(error.value) == (
        "double(x): input_signature has 1 entry, but 2 positional arguments were passed")
    with pytest.raises(TypeError) as error:
        double()
    assert str(error.value) == (
        "double(x): missing argument 'x' (expected Spec(shape=(None, 3), dtype=float64))")
    with pytest.raises(TypeError) as error:
        double(np.ones((2, 3)), scale=2.0)
    assert str(error.value) == ("double(x): unexpected argument 'scale': only the parameters "
                                "in input_signature can be passed")


def test_keyword_arguments_fill_their_parameters():
    traced = autotrace.function(lambda x, y: x - y, input_signature=[Spec(()), Spec(())])
    assert traced(y=1.0, x=3.0) == 2.0 and traced(3.0, y=1.0) == 2.0
    with pytest.raises(TypeError, match=r"^<lambda>\(x, y\): got multiple values for "
                                        r"argument 'x'$"):
        traced(1.0, x=3.0)


def test_python_numbers_become_arrays_of_the_spec_dtype():
    traced = autotrace.function(lambda x: x * 2, input_signature=[Spec((), np.float32)])
    result = traced(3)
    assert result == 6.0 and result.dtype == np.float32
    assert traced(1.5).dtype == np.float32 and traced.trace_count == 1
    ints = autotrace.function(lambda x: x + 1, input_signature=[Spec((None,), np.int64)])
    np.testing.assert_array_equal(ints([1, 2, 3]), [2, 3, 4])
    for bad, shown in ((1.5, "1.5 (a float)"), (True, "True (a bool)"),
                       (2 ** 70, f"{2 ** 70} (a int)"), ([[1]], "a list of 1")):
        with pytest.raises(TypeError) as error:
            ints(bad)
        assert str(error.value) == ("<lambda>(x): argument 'x' expected Spec(shape=(None,), "
                                    f"dtype=int64), got {shown}")


def affine(params, x):
    return x @ params["w"] + params["b"], params["scales"][1] * x


AFFINE_SIGNATURE = [{"w": Spec((3, 2)), "b": Spec((2,)), "scales": (Spec(()), Spec(()))},
                    Spec((None, 3))]


def test_nested_specs():
    traced = autotrace.function(affine, input_signature=AFFINE_SIGNATURE)
    params = {"scales": [1.0, 2.0], "b": np.ones(2), "w": np.ones((3, 2))}
    for rows in (1, 4):
        x = np.ones((rows, 3))
        out, scaled = traced(params, x)
        np.testing.assert_array_equal(out, np.full((rows, 2), 4.0))
        np.testing.assert_array_equal(scaled, 2.0 * x)
    assert traced.trace_count == 1


@pytest.mark.parametrize("params, message", [
    ({"w": np.ones((3, 2)), "b": np.ones(3), "scales": (1.0, 2.0)},
     "argument 'params'['b'] expected Spec(shape=(2,), dtype=float64), got an array of shape "
     "(3,) and dtype float64"),
    ({"w": np.ones((3, 2)), "b": np.ones(2)},
     "argument 'params' expected a dict with keys ['b', 'scales', 'w'], got a dict with keys "
     "['b', 'w']"),
    ({"w": np.ones((3, 2)), "b": np.ones(2), "scales": (1.0,)},
     "argument 'params'['scales'] expected a tuple of 2, got a tuple of 1"),
    ({"w": np.ones((3, 2)), "b": np.ones(2), "scales": (1.0, "2")},
     "argument 'params'['scales'][1] expected Spec(shape=(), dtype=float64), got '2' (a str)"),
])
def test_nested_mismatches_name_the_path(params, message):
    traced = autotrace.function(affine, input_signature=AFFINE_SIGNATURE)
    with pytest.raises(TypeError) as error:
        traced(params, np.ones((2, 3)))
    assert str(error.value) == f"affine(params, x): {message}"


class RowScaler:
    def __init__(self, weights):
        self.weights = weights

    @autotrace.function(input_signature=[Spec((None, 3))])
    def __call__(self, x):
        return x * self.weights


def test_input_signature_of_a_method_leaves_self_out():
    # One trace per instance (keyed by identity, held weakly), each for every number of rows.
    small, large = RowScaler(np.array([1.0, 2.0, 3.0])), RowScaler(np.full(3, 10.0))
    for rows in (1, 4, 2):
        x = np.arange(rows * 3.0).reshape(rows, 3)
        np.testing.assert_array_equal(small(x), x * small.weights)
        np.testing.assert_array_equal(large(x), x * 10.0)
    assert RowScaler.__call__.trace_count == 2
    with pytest.raises(TypeError) as error:
        small(np.ones((2, 4)))
    assert str(error.value) == ("__call__(x): argument 'x' expected Spec(shape=(None, 3), "
                                "dtype=float64), got an array of shape (2, 4) and dtype float64")


def test_a_bad_input_signature_is_refused_when_the_function_is_made():
    with pytest.raises(TypeError, match=r"^input_signature holds autotrace.Spec values \(in "
                                        r"tuples, lists and dicts\), but it holds 3 \(a int\)$"):
        autotrace.function(total, input_signature=[3])
    with pytest.raises(TypeError, match="^input_signature has 2 entries, but total takes 1 "
                                        "positional parameters$"):
        autotrace.function(total, input_signature=[Spec(()), Spec(())])
    with pytest.raises(TypeError, match="^input_signature covers x of <lambda>, but 'y' has no "
                                        "default: give it a Spec or a default$"):
        autotrace.function(lambda x, y: x, input_signature=[Spec(())])


def test_unknown_dimensions_that_meet_must_be_equal_when_the_graph_runs():
    traced = autotrace.function(lambda x, y: x * y,
                                input_signature=[Spec((None, 3)), Spec((None, 3))])
    np.testing.assert_array_equal(traced(np.ones((4, 3)), np.full((4, 3), 2.0)),
                                  np.full((4, 3), 2.0))
    assert "same_sizes[axes=((0, 0),) op='multiply'] x y" in str(traced.graph(
        np.ones((4, 3)), np.ones((4, 3))))
    with pytest.raises(ValueError) as error:
        traced(np.ones((1, 3)), np.ones((4, 3)))
    assert str(error.value) == (
        "multiply: shapes (1, 3) and (4, 3) differ in dimensions of unknown size (None in a "
        "Spec) that the trace takes to be equal; give them the same size")


W = np.arange(6.0).reshape(3, 2)


def set_rows(x):
    y = x.copy()
    y[:, 0] = 1.0
    y[0] = x[1]
    return y


# Functions of an (n, 3) array whose trace with Spec((None, 3)) serves every n.
UNKNOWN_ROWS = {
    "elementwise": lambda x: (np.exp(x) * 2 - 1, x > 0.5, np.maximum(x, 0.5) ** 2),
    "where_and_clip": lambda x: (np.where(x > 0.5, x, -x), np.clip(x, 0.2, 0.8)),
    "reductions": lambda x: (x.sum(0), x.mean(1), x.max(), np.argmax(x, axis=0), x.std(0)),
    "keepdims": lambda x: x - x.mean(axis=0, keepdims=True) / x.sum(axis=1, keepdims=True),
    "cumsum": lambda x: (np.cumsum(x, axis=0), np.cumsum(x)),
    "products": lambda x: (x @ W, x.T @ x, np.dot(x, W), W.T @ x.T),
    "transposes": lambda x: (x.T, np.swapaxes(x[None], 0, 2), np.moveaxis(x, 0, 1)),
    "reshapes": lambda x: (x.reshape(-1), x.reshape(-1, 1, 3), np.expand_dims(x, 0),
                           x[:, None, :].squeeze(1), x.ravel(), x.reshape(x.shape)),
    "indexing": lambda x: (x[0], x[-1, 1:], x[1:], x[::2, 0], x[..., 1], x[[0, 1]],
                           x[:, [2, 0]]),
    "setitem": set_rows,
    "creation": lambda x: (np.zeros_like(x), np.ones_like(x, dtype=np.int32),
                           np.full_like(x, 3.5)),
    "joining": lambda x: (np.concatenate([x, x]), np.concatenate([x, x], axis=1),
                          np.stack([x, x], axis=1), np.vstack([x, x]), np.hstack([x, x])),
    "split_and_flip": lambda x: (*np.split(x, [1], axis=0), np.flip(x, 0)),
    "astype": lambda x: x.astype(np.float32) * 2.0,
    "broadcast_arrays": lambda x: np.broadcast_arrays(x, x[::-1] * 2.0),
}


@pytest.mark.parametrize("name", list(UNKNOWN_ROWS))
def test_ops_trace_with_an_unknown_number_of_rows(name):
    python_function = UNKNOWN_ROWS[name]
    traced = autotrace.function(python_function, input_signature=[Spec((None, 3))])
    rng = np.random.default_rng(0)
    for rows in (2, 5):
        x = rng.random((rows, 3))
        results, expected = traced(x), python_function(x)
        if not isinstance(expected, tuple):
            results, expected = (results,), (expected,)
        assert len(results) == len(expected)
        for result, value in zip(results, expected):
            assert np.shape(result) == np.shape(value) and result.dtype == value.dtype
            np.testing.assert_allclose(result, value, rtol=1e-12)
    assert traced.trace_count == 1


@pytest.mark.parametrize("python_function, what", [
    (lambda x: np.sort(x, axis=0), "numpy.sort"),
    (lambda x: np.einsum("ij->j", x), "numpy.einsum"),
    (lambda x: x.size, "the size (.size, np.size)"),
    (lambda x: np.broadcast_to(x[:, :1], x.shape),
     "numpy.broadcast_to to shape (None, 3) on an array with a dimension of unknown size "
     "(f64[?,1]"),
    (lambda x: np.squeeze(x), "numpy.squeeze without axis="),
    (lambda x: np.zeros_like(x, shape=(x.shape[0], 2)), "numpy.full_like with shape=(None, 2)"),
    (lambda x: x.reshape(x.shape[0], x.shape[0], -1),
     "numpy.reshape to shape (None, None, -1) (one dimension must be -1 or unknown)"),
])
def test_ops_that_need_an_unknown_size_say_so(python_function, what):
    traced = autotrace.function(python_function, input_signature=[Spec((None, 3))])
    with pytest.raises(UnknownDimensionError) as error:
        traced(np.ones((2, 3)))
    if "(f64[" not in what:
        what += " on an array with a dimension of unknown size (f64[?,3]"
    assert str(error.value).startswith(
        f"autotrace cannot trace {what}; ? is None in the Spec): give that dimension a size in "
        f"the Spec\n  File ")


def test_an_op_that_needs_an_unknown_size_says_which():
    def rolled(x):
        return np.roll(x, 1)
    traced = autotrace.function(rolled, input_signature=[Spec((None,))])
    line = inspect.getsourcelines(rolled)[1] + 1
    with pytest.raises(UnknownDimensionError) as error:
        traced(np.ones(3))
    assert str(error.value) == (
        "autotrace cannot trace numpy.roll on an array with a dimension of unknown size (f64[?]; "
        "? is None in the Spec): give that dimension a size in the Spec\n"
        f'  File "{__file__}", line {line}, in rolled\n'
        "    return np.roll(x, 1)")


def scaled_by_length(x):
    return x * len(x)


def test_python_code_that_needs_an_unknown_size_gets_a_hint():
    traced = autotrace.function(scaled_by_length, input_signature=[Spec((None,))])
    line = inspect.getsourcelines(scaled_by_length)[1] + 1
    with pytest.raises(TypeError) as error:
        traced(np.ones(3))
    assert str(error.value) == unknown_size_message("len()", "f64[?]", line, "scaled_by_length",
                                                    "return x * len(x)")


def unknown_size_message(what, aval, line, function, statement):
    return (f"{what} needs the size of a traced array's dimension that is known only when the "
            f"graph runs ({aval}: the elements a traced boolean mask selects, x[mask], or a "
            "dimension None in the Spec); count a mask's elements as a traced value with "
            "np.sum(mask), keep the shape with np.where(mask, x, 0.0), or give the dimension a "
            f'size in the Spec\n  File "{__file__}", line {line}, in {function}\n'
            f"    {statement}")


def doubled_plus_negatives(p):
    return np.sum(p) + len(p[p < 0])


def test_len_of_values_a_traced_mask_selects_is_refused_naming_the_line():
    traced = autotrace.function(doubled_plus_negatives)
    line = inspect.getsourcelines(doubled_plus_negatives)[1] + 1
    with pytest.raises(TypeError) as error:
        traced(np.array([1.0, -2.0, 3.0]))
    assert str(error.value) == unknown_size_message(
        "len()", "f64[?]", line, "doubled_plus_negatives", "return np.sum(p) + len(p[p < 0])")


def sum_of_negatives(x):
    total = 0.0
    for value in x[x < 0]:
        total = total + value * value
    return total


def test_a_loop_over_values_a_traced_mask_selects_runs_as_many_times_as_they_are():
    traced = autotrace.function(sum_of_negatives)
    for x in (np.array([1.0, -2.0, 3.0, -0.5]), np.array([1.0, 2.0, 0.0, 4.0]),
              np.array([-1.0, -3.0, -0.5, -2.0])):
        assert traced(x) == sum_of_negatives(x) == np.sum(x[x < 0] ** 2)
    assert traced.trace_count == 1


def noisy(x):
    return x + autotrace.random.normal(np.shape(x))


def test_autotrace_code_that_needs_an_unknown_size_is_not_blamed_on_the_user():
    traced = autotrace.function(noisy, input_signature=[Spec((None, 3))])
    line = inspect.getsourcelines(noisy)[1] + 1
    with pytest.raises(TypeError) as error:
        traced(np.ones((2, 3)))
    random = autotrace.runtime.primitives.keyed_random
    failing_line = inspect.getsource(random).splitlines().index(
        "    shape = (int(shape),) if np.ndim(shape) == 0 else tuple(int(size) for size in "
        "shape)") + 1
    assert str(error.value) == (
        "making a size a Python number needs the size of axis 0 of a traced array (f64[?,3]), "
        "which is known only when the graph runs (a dimension None in the Spec, or one "
        "reduce_retracing traces for every size): a Python test or number made of it would "
        "hold for one size only. Give that dimension a size in the Spec, or compute with "
        "array operations (x.mean(axis=0), np.where) instead\n"
        f"  (autotrace's own draw ({random.__file__}, line {failing_line}) asked for it)\n"
        f'  File "{__file__}", line {line}, in noisy\n'
        "    return x + autotrace.random.normal(np.shape(x))")


def sparse_loss(logits, labels):
    return autotrace.losses.sparse_softmax_cross_entropy(labels, logits)


def test_a_training_loss_traces_with_an_unknown_batch_size():
    """Class indices are chosen by comparison with each class, which needs no batch size; a
    label outside the classes is an IndexError when known and a NaN loss when traced."""
    signature = [Spec((None, 3)), Spec((None,), np.int64)]
    logits = np.array([[0.5, -1.0, 2.0], [1.5, 0.0, -0.5]])
    labels = np.array([2, 0])
    by_hand = -np.mean([logits[n, labels[n]] - np.log(np.sum(np.exp(logits[n])))
                        for n in range(2)])
    softmax = np.exp(logits) / np.sum(np.exp(logits), axis=1, keepdims=True)
    gradient_by_hand = (softmax - np.eye(3)[labels]) / 2
    traced = autotrace.function(sparse_loss, input_signature=signature)
    traced_grad = autotrace.function(autotrace.grad(sparse_loss), input_signature=signature)
    np.testing.assert_allclose(traced(logits, labels), by_hand, rtol=1e-14)
    np.testing.assert_allclose(traced_grad(logits, labels), gradient_by_hand, rtol=1e-13)
    np.testing.assert_allclose(traced_grad(np.tile(logits, (3, 1)), np.tile(labels, 3)),
                               np.tile(gradient_by_hand, (3, 1)) / 3, rtol=1e-13)
    assert traced_grad.trace_count == 1
    assert np.isnan(traced(logits, np.array([2, 3])))
    with pytest.raises(IndexError) as error:
        sparse_loss(logits, np.array([2, 3]))
    assert str(error.value) == ("sparse_softmax_cross_entropy: labels must be class indices "
                                "in [0, 3) for logits of 3 classes; got [3]")


def squares(x):
    return x * x


def test_gradient_of_a_non_scalar_output_traces_with_unknown_sizes():
    traced = autotrace.function(autotrace.grad(squares), input_signature=[Spec((None,))])
    np.testing.assert_array_equal(traced(np.arange(3.0)), [0.0, 2.0, 4.0])
    np.testing.assert_array_equal(traced(np.arange(5.0)), [0.0, 2.0, 4.0, 6.0, 8.0])
    assert traced.trace_count == 1
    # reduce_retracing: the gradient's trace with an unknown size serves every later size.
    calls = [(np.ones((rows, 3)),) for rows in (2, 3, 4, 9)]
    traced, counts = traced_count(autotrace.grad(column_means), calls, reduce_retracing=True)
    assert counts == [1, 2, 2, 2]
    np.testing.assert_array_equal(traced(np.ones((7, 3))), np.full((7, 3), 2.0 / 7))


# --- reduce_retracing ---------------------------------------------------------------------------

def column_means(x):
    return np.mean(x * 2.0, axis=0)


def test_reduce_retracing_makes_a_dimension_seen_with_two_sizes_unknown():
    calls = [(np.ones((rows, 3)),) for rows in (2, 3, 4, 9, 2, 3)]
    traced, counts = traced_count(column_means, calls, reduce_retracing=True)
    assert counts == [1, 2, 2, 2, 2, 2]
    assert "x:f64[?,3]" in str(traced.graph(np.ones((5, 3))))
    np.testing.assert_array_equal(traced(np.ones((6, 3))), np.full(3, 2.0))
    # A second dimension that changes is generalized too: one more trace.
    assert [traced(np.ones((rows, cols))).shape for rows, cols in ((5, 4), (6, 7))] == [
        (4,), (7,)]
    assert traced.trace_count == 3


def test_without_reduce_retracing_each_size_traces():
    _, counts = traced_count(column_means, [(np.ones((rows, 3)),) for rows in (2, 3, 4)])
    assert counts == [1, 2, 3]


def test_reduce_retracing_traces_per_size_where_an_unknown_size_cannot_trace():
    calls = [(np.arange(float(n)),) for n in (2, 3, 4, 4)]
    traced, counts = traced_count(lambda x: x * len(x), calls, reduce_retracing=True)
    assert counts == [1, 2, 3, 3]
    np.testing.assert_array_equal(traced(np.arange(5.0)), np.arange(5.0) * 5)


def test_reduce_retracing_traces_per_size_where_unknown_sizes_broadcast():
    traced = autotrace.function(lambda x, y: x + y, reduce_retracing=True)
    for rows in (2, 3):
        traced(np.ones((rows, 3)), np.ones((rows, 3)))
    assert traced.trace_count == 2
    np.testing.assert_array_equal(traced(np.ones((1, 3)), np.ones((4, 3))), np.full((4, 3), 2.0))
    assert traced.trace_count == 3


# --- the signature rules, one a test ------------------------------------------------------------

def test_arrays_by_shape_and_dtype_not_value():
    calls = [(np.zeros(3),), (np.ones(3),), (np.zeros(4),), (np.zeros(3, np.float32),),
             (np.float64(2.0),), (np.float64(5.0),)]
    _, counts = traced_count(total, calls)
    assert counts == [1, 1, 2, 3, 4, 4]


def test_arrays_by_device():
    # Only NumPy arrays are at hand here: the device is part of every array's key, and a
    # different device is a different signature (tests/gpu calls with CuPy arrays).
    from autotrace.runtime.tracing.signature import signature_of
    key = signature_of((np.zeros(3),))
    assert key[0][0] == ("array", (3,), np.dtype("float64"), "cpu")
    assert signature_of((np.zeros(3),)) != (((("array", (3,), np.dtype("float64"), "gpu:0"),),
                                               ()))


def scaled(x, s=1.0, *extra, shift=0.0, **more):
    return x * s + shift + sum(extra) + sum(more.values())


def test_arguments_are_bound_to_parameters_with_their_defaults_first():
    traced = autotrace.function(scaled)
    x = np.ones(2)
    equivalent_calls = [
        [((x,), {}), ((x, 1.0), {}), ((x,), {"s": 1.0}), ((), {"x": x, "s": 1.0}),
         ((x,), {"shift": 0.0})],
        [((x, 2.0), {}), ((x,), {"s": 2.0}), ((x, 2.0), {"shift": 0.0})],
        [((x, 2.0, 1.0), {}), ((x, 2.0, 1.0), {"shift": 0.0})],
        [((x,), {"shift": 3.0, "z": 1.0}), ((x, 1.0), {"z": 1.0, "shift": 3.0})],
    ]
    for traces, calls in enumerate(equivalent_calls, start=1):
        for args, kwargs in calls:
            np.testing.assert_array_equal(traced(*args, **kwargs), scaled(*args, **kwargs))
            assert traced.trace_count == traces, (args, kwargs)
    assert str(traced.graph(x, s=2.0)) == str(traced.graph(x, 2.0))
    with pytest.raises(TypeError, match=r"^scaled\(\) missing 1 required positional argument: "
                                        r"'x'$"):
        traced(s=1.0)


def test_keyword_only_defaults_bind_without_being_passed():
    gradient = autotrace.function(autotrace.grad(lambda x: np.sum(x ** 2)))
    x = np.array([1.0, -2.0])
    for kwargs in ({}, {"dy": None}, {}):
        np.testing.assert_array_equal(gradient(x, **kwargs), 2 * x)
    assert gradient.trace_count == 1
    np.testing.assert_array_equal(gradient(x, dy=3.0), 6 * x)
    assert gradient.trace_count == 2


def test_python_scalars_by_type_and_value():
    calls = [(np.ones(2), 1), (np.ones(2), 1.0), (np.ones(2), True), (np.ones(2), 2),
             (np.ones(2), 1)]
    traced, counts = traced_count(lambda x, n: x * n, calls)
    assert counts == [1, 2, 3, 4, 4]
    assert traced(np.ones(2), 2)[0] == 2.0


def test_strings_and_none_by_value():
    def activation(x, name, bias):
        y = np.tanh(x) if name == "tanh" else np.maximum(x, 0.0)
        return y if bias is None else y + bias
    calls = [(np.ones(2), "tanh", None), (np.ones(2), "ta" + "nh", None),
             (np.ones(2), "relu", None), (np.ones(2), "relu", 1.0), (np.ones(2), "relu", None)]
    traced, counts = traced_count(activation, calls)
    assert counts == [1, 1, 2, 3, 3]
    np.testing.assert_array_equal(traced(-np.ones(2), "relu", None), [0.0, 0.0])


def test_containers_recursively():
    def weighted(parts):
        return parts[0] * parts[1]["scale"]
    calls = [((np.ones(2), {"scale": 2.0}),), ((np.zeros(2), {"scale": 2.0}),),
             ([np.ones(2), {"scale": 2.0}],), ((np.ones(3), {"scale": 2.0}),),
             ((np.ones(2), {"scale": 3.0}),)]
    _, counts = traced_count(weighted, calls)
    assert counts == [1, 1, 2, 3, 4]


def test_dicts_by_keys_and_their_order():
    # iterating a dict reads its order (`list(params.values())`): another order, another trace
    def combine(params):
        return params["w"] * 2.0 + params["b"]
    calls = [({"w": np.ones(2), "b": np.ones(2)},), ({"w": np.ones(2), "b": np.ones(2)},),
             ({"b": np.ones(2), "w": np.ones(2)},)]
    traced, counts = traced_count(combine, calls)
    assert counts == [1, 1, 2]
    np.testing.assert_array_equal(traced({"b": np.zeros(2), "w": np.ones(2)}), [2.0, 2.0])


class Scale:
    """Any object: keyed by identity."""

    def __init__(self, factor):
        self.factor = factor


def test_other_objects_by_identity_held_weakly():
    traced = autotrace.function(lambda scale, x: x * scale.factor)
    first, second = Scale(2.0), Scale(2.0)
    assert traced(first, np.ones(2))[0] == 2.0
    assert traced(first, np.ones(2))[0] == 2.0 and traced.trace_count == 1
    assert traced(second, np.ones(2))[0] == 2.0 and traced.trace_count == 2
    assert traced.cache_size == 2
    released = weakref.ref(first)
    del first
    gc.collect()
    assert released() is None          # the cache did not keep the object alive
    assert traced.cache_size == 1      # and its entry went with it
    assert traced(second, np.ones(2))[0] == 2.0 and traced.trace_count == 2


def test_at_most_max_traces_are_kept():
    traced = autotrace.function(total, max_traces=3)
    traced._warned = True  # the retracing warning is tested in tests/test_function.py
    graphs = [weakref.ref(traced.graph(np.ones(n))) for n in range(1, 11)]
    assert traced.trace_count == 10 and traced.cache_size == 3
    gc.collect()
    assert [graph() is None for graph in graphs] == [True] * 7 + [False] * 3
    traced(np.ones(10))                # still kept: no trace
    assert traced.trace_count == 10
    traced(np.ones(1))                 # evicted: traced again
    assert traced.trace_count == 11 and traced.cache_size == 3


def test_max_traces_must_be_positive():
    with pytest.raises(ValueError, match="^autotrace.function: max_traces must be a positive "
                                         "int, not 0$"):
        autotrace.function(total, max_traces=0)


# --- threads ------------------------------------------------------------------------------------

def run_in_threads(calls):
    """Call each of `calls` (functions of no arguments) in a thread of its own, all at once;
    their results, in order."""
    start, results = threading.Barrier(len(calls)), [None] * len(calls)

    def run(index):
        start.wait()
        results[index] = calls[index]()
    threads = [threading.Thread(target=run, args=(i,)) for i in range(len(calls))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return results


def slow_trace(x):
    threading.Event().wait(0.02)  # while tracing only: gives the other threads time to arrive
    return np.sin(x) * 2.0


def test_threads_calling_with_one_new_signature_trace_once():
    traced = autotrace.function(slow_trace)
    inputs = [np.full(4, float(i)) for i in range(8)]
    results = run_in_threads([lambda x=x: traced(x) for x in inputs])
    assert traced.trace_count == 1
    for x, result in zip(inputs, results):
        np.testing.assert_allclose(result, np.sin(x) * 2.0)


def test_threads_calling_with_several_signatures_trace_once_each():
    traced = autotrace.function(slow_trace)
    inputs = [np.full(n, float(i)) for i in range(3) for n in (1, 2, 3, 4)]
    results = run_in_threads([lambda x=x: traced(x) for x in inputs])
    assert traced.trace_count == 4 and traced.cache_size == 4
    for x, result in zip(inputs, results):
        assert result.shape == x.shape
        np.testing.assert_allclose(result, np.sin(x) * 2.0)
    for n in (1, 2, 3, 4):  # each entry is its own signature's
        assert f"x:f64[{n}]" in str(traced.graph(np.ones(n)))
    assert traced.trace_count == 4


def test_threads_calling_with_an_input_signature_trace_once():
    traced = autotrace.function(slow_trace, input_signature=[Spec((None,))])
    inputs = [np.full(n, 0.5) for n in range(1, 9)]
    results = run_in_threads([lambda x=x: traced(x) for x in inputs])
    assert traced.trace_count == 1
    for x, result in zip(inputs, results):
        np.testing.assert_allclose(result, np.sin(x) * 2.0)


# --- golden graphs ------------------------------------------------------------------------------

def mlp_loss(params, x, y):
    hidden = np.tanh(x @ params["w1"] + params["b1"])
    out = hidden @ params["w2"] + params["b2"]
    return np.mean((out - y) ** 2)


def simplifiable(x):
    shift = np.ones(3) * 2.0                         # NumPy computes it: a constant
    twice = np.exp(x) + np.exp(x)                    # the same exp twice: once after CSE
    return -(-(twice * 1.0)).T.T + shift             # x*1, --x, transpose of transpose go


def printing(x):
    autotrace.print("total:", np.sum(x))
    return x * 2.0


def rows_normalized(x):
    return x / np.sum(x, axis=1, keepdims=True)      # one origin: no check


def squared_error(prediction, target):
    return np.mean((prediction - target) ** 2, axis=1)  # two inputs' rows: checked


def golden_cases():
    rng = np.random.default_rng(0)
    params = {"w1": rng.normal(size=(3, 4)), "b1": np.zeros(4), "w2": rng.normal(size=(4, 2)),
              "b2": np.zeros(2)}
    return [
        ("mlp_loss", autotrace.function(mlp_loss), (params, np.ones((5, 3)), np.ones((5, 2)))),
        ("simplifiable", autotrace.function(simplifiable), (np.ones((2, 3)),)),
        ("printing", autotrace.function(printing), (np.ones(3),)),
        ("rows_normalized", autotrace.function(
            rows_normalized, input_signature=[Spec((None, 3))]), (np.ones((2, 3)),)),
        ("squared_error", autotrace.function(
            squared_error, input_signature=[Spec((None, 3)), Spec((None, 3))]),
         (np.ones((2, 3)), np.zeros((2, 3)))),
    ]


GOLDEN_CASES = golden_cases()


def assert_matches_golden(name: str, text: str):
    path = GOLDEN_DIR / f"{name}.txt"
    if UPDATE:
        GOLDEN_DIR.mkdir(exist_ok=True)
        path.write_text(text + "\n")
    assert path.exists(), f"no golden {path}; run with AUTOTRACE_UPDATE_GOLDENS=1 to write it"
    assert text + "\n" == path.read_text()


@pytest.mark.parametrize("name, traced, args", GOLDEN_CASES, ids=[c[0] for c in GOLDEN_CASES])
@pytest.mark.parametrize("optimized", [False, True], ids=["traced", "optimized"])
def test_graph_matches_golden(name, traced, args, optimized):
    suffix = "optimized" if optimized else "traced"
    assert_matches_golden(f"{name}_{suffix}", str(traced.graph(*args, optimized=optimized)))


def test_every_golden_is_tested():
    names = {f"{case[0]}_{suffix}" for case in GOLDEN_CASES for suffix in ("traced", "optimized")}
    assert {path.stem for path in GOLDEN_DIR.glob("*.txt")} == names


@pytest.mark.parametrize("name, traced, args", GOLDEN_CASES, ids=[c[0] for c in GOLDEN_CASES])
def test_golden_functions_compute_what_numpy_does(name, traced, args, capsys):
    """A golden is only worth freezing if the graph it shows is right."""
    np.testing.assert_allclose(traced(*args), traced.python_function(*args), rtol=1e-12)



def named_inputs(params, batch, k, *rest, scale, **options):
    y = np.tanh(batch[0] @ params["w"]) * k
    return np.sum(y + rest[0]) * scale + options["my shift"]


def test_graph_inputs_are_named_after_the_parameters_they_come_from():
    """An input prints as the argument it stands for, written as Python writes it; a name
    that would not read as one (a key with a space) falls back to a short name, and a short
    name a parameter took (k) is skipped."""
    args = ({"w": np.ones((3, 2))}, (np.ones((4, 3)), np.ones(1)), np.ones(2), np.ones(2))
    kwargs = {"scale": np.float64(2.0), "my shift": np.ones(())}
    traced = autotrace.function(named_inputs)
    assert str(traced.graph(*args, **kwargs, optimized=False)) == (
        "{ lambda params['w']:f64[3,2] batch[0]:f64[4,3] batch[1]:f64[1] k:f64[2] "
        "rest[0]:f64[2] f:f64[] scale:f64[] ;\n"
        "  h:f64[4,2] = matmul batch[0] params['w']\n"
        "  i:f64[4,2] = tanh h\n"
        "  j:f64[4,2] = multiply i k\n"
        "  l:f64[4,2] = add j rest[0]\n"
        "  m:f64[] = reduce_sum[axis=(0, 1)] l\n"
        "  n:f64[] = multiply m scale\n"
        "  o:f64[] = add n f\n"
        "  in (o) }")
    np.testing.assert_allclose(traced(*args, **kwargs), named_inputs(*args, **kwargs))
    # the same names in the DOT picture
    labels = re.findall(r'\[label="([^\\"]*)\\n', graph_dot(traced.graph(*args, **kwargs)))
    assert labels[:7] == ["params['w']", "batch[0]", "batch[1]", "k", "rest[0]", "f", "scale"]


def test_the_passes_fire_on_the_simplifiable_function():
    traced, args = GOLDEN_CASES[1][1], GOLDEN_CASES[1][2]
    before = str(traced.graph(*args, optimized=False))
    after = str(traced.graph(*args))
    for removed in ("negative", "transpose", "multiply"):
        assert removed in before and removed not in after
    assert before.count("exp") == 2 and after.count("exp") == 1


def test_print_prints_without_a_stray_equals_sign():
    text = str(GOLDEN_CASES[2][1].graph(np.ones(3)))
    assert "\n  print[end='\\n' sep=' ' texts=('total:', None)] b\n" in text


# --- NumPy functions without an op --------------------------------------------------------------

def spectrum(x):
    return np.abs(np.fft.hfft(x))


def unwrapped(a):
    return np.unwrap(a)


@pytest.mark.parametrize("function, numpy_name, code", [
    (spectrum, "numpy.fft.hfft", "return np.abs(np.fft.hfft(x))"),
    (unwrapped, "numpy.unwrap", "return np.unwrap(a)"),
])
def test_a_numpy_function_without_an_op_names_itself_and_the_line(function, numpy_name, code):
    line = inspect.getsourcelines(function)[1] + 1
    with pytest.raises(UntraceableError) as error:
        autotrace.function(function)(np.eye(3))
    assert str(error.value) == (
        f"autotrace cannot trace {numpy_name} yet: it has no op; call it outside the traced "
        f"function\n"
        f'  File "{__file__}", line {line}, in {function.__name__}\n'
        f"    {code}")


def calls_spectrum(x):
    return spectrum(x) * 2.0


def test_the_line_is_the_innermost_line_of_user_code():
    line = inspect.getsourcelines(spectrum)[1] + 1
    with pytest.raises(UntraceableError, match=re.escape(
            f'function\n  File "{__file__}", line {line}, in spectrum\n')):
        autotrace.function(calls_spectrum)(np.ones(4))
