"""Tracing: what a Tracer records, what it answers at once, and the errors people meet."""
import collections

import numpy as np
import pytest

import autotrace
from autotrace.runtime.execution.executor import compile_graph
from autotrace.runtime.ops import UntraceableError
from autotrace.runtime.passes import optimize
from autotrace.runtime.tracing.tracer import Tracer, TracerConversionError, set_item, trace
from tests.runtime.helpers import compiled

x3 = np.arange(3.0)
m23 = np.arange(6.0).reshape(2, 3)
Pair = collections.namedtuple("Pair", "first second")


def test_array_leaves_become_inputs_and_other_leaves_stay_static():
    seen = []

    def function(params, x, scale, mode=None):
        seen.append((scale, mode))
        return params["w"] * x * scale if mode == "scaled" else params["b"] + x
    graph, _ = trace(function, ({"w": m23, "b": x3}, x3, 2.0), {"mode": "scaled"})
    assert seen == [(2.0, "scaled")]
    assert [str(var.aval) for var in graph.inputs] == ["f64[3]", "f64[2,3]", "f64[3]"]
    assert str(graph).splitlines()[1:3] == ["  d:f64[2,3] = multiply b c",
                                            "  e:f64[2,3] = multiply d 2.0"]


def test_output_structure_is_rebuilt_with_static_leaves():
    def function(x):
        return {"pair": Pair(x.sum(), [x * 2, "tag"]), "shape": x.shape, "none": None}
    call, _ = compiled(function, m23)
    result = call(m23)
    assert isinstance(result["pair"], Pair) and result["pair"].second[1] == "tag"
    assert result["shape"] == (2, 3) and result["none"] is None
    np.testing.assert_array_equal(result["pair"].second[0], m23 * 2)


def test_known_while_tracing():
    def function(x):
        assert isinstance(x, Tracer)
        assert (x.shape, x.ndim, x.size, x.dtype, len(x)) == ((2, 3), 2, 6, np.float64, 2)
        assert (np.shape(x), np.ndim(x), np.size(x), np.size(x, 1)) == ((2, 3), 2, 6, 3)
        assert x.T.shape == (3, 2) and np.result_type(x, np.float32) == np.float64
        return [row * 2 for row in x]
    graph, _ = trace(function, (m23,))
    assert [eq.primitive.name for eq in graph.equations] == [
        "transpose", "getitem", "multiply", "getitem", "multiply"]


def test_weak_python_scalars_and_strong_numpy_scalars():
    f32 = np.ones(3, np.float32)
    graph, _ = trace(lambda x: (x * 2.0, x + 1, x * np.float64(2.0), x * np.float32(2)), (f32,))
    assert [str(var.aval) for var in graph.outputs] == ["f32[3]", "f32[3]", "f64[3]", "f32[3]"]


def test_concrete_arrays_are_baked_in_when_traced():
    weights = np.ones(3)
    call, _ = compiled(lambda x: x * weights, x3)
    weights[:] = 10.0
    np.testing.assert_array_equal(call(x3), x3)


def test_setitem_on_a_tracer_records_a_new_value_seen_by_every_name():
    def function(x):
        y = x.copy()
        alias = y
        y[0] = 100.0
        y[1:] *= 2
        return alias, x
    call, _ = compiled(function, x3)
    alias, original = call(x3)
    np.testing.assert_array_equal(alias, [100.0, 2.0, 4.0])
    np.testing.assert_array_equal(original, x3)


def test_set_item_writes_a_traced_value_into_a_concrete_array():
    def function(x):
        h = np.zeros((3, 3))
        for t in range(3):
            h = set_item(h, t, x * t)
        return h
    call, _ = compiled(function, x3)
    np.testing.assert_array_equal(call(x3), np.outer([0, 1, 2], x3))
    concrete = np.zeros(2)
    assert set_item(concrete, 0, 5.0) is concrete and concrete[0] == 5.0


def test_traced_index_arrays():
    call, _ = compiled(lambda x, i: (x[i], x[:, i], set_item(x, i, 0.0)), m23, np.array([1, 0]))
    index = np.array([1, 0])
    results = call(m23, index)
    np.testing.assert_array_equal(results[0], m23[index])
    np.testing.assert_array_equal(results[1], m23[:, index])
    np.testing.assert_array_equal(results[2], np.zeros_like(m23))


def test_ufunc_out_on_a_tracer_rebinds_it():
    def function(x):
        y = np.exp(x)
        np.add(y, 1.0, out=y)
        return y
    call, _ = compiled(function, x3)
    np.testing.assert_allclose(call(x3), np.exp(x3) + 1.0)


def test_a_compiled_graph_called_with_tracers_is_inlined():
    inner_graph, _ = trace(lambda x: np.exp(x) + 1.0, (x3,))
    inner, _ = compile_graph(optimize(inner_graph))
    outer, _ = trace(lambda x: inner(x * 2.0)[0], (x3,))
    assert [eq.primitive.name for eq in outer.equations] == ["multiply", "exp", "add"]


def test_side_effects_happen_while_tracing_only():
    calls = []

    def function(x):
        calls.append(1)
        return x + 1
    call, _ = compiled(function, x3)
    call(x3)
    call(x3)
    assert calls == [1]


# --- errors -------------------------------------------------------------------------------------

def test_bool_of_a_tracer():
    with pytest.raises(TracerConversionError) as error:
        trace(lambda x: x if x.sum() > 0 else -x, (x3,))
    assert str(error.value) == (
        "cannot convert a traced value to a Python bool: this is control flow on a traced "
        "array value; use autotrace.cond/while_loop or compute it outside the traced function")


@pytest.mark.parametrize("convert, what", [
    (float, "a Python float"), (int, "a Python int"), (range, "a Python int (an index)"),
])
def test_python_values_of_a_tracer(convert, what):
    with pytest.raises(TracerConversionError) as error:
        trace(lambda x: convert(x.sum()), (x3,))
    assert str(error.value) == (
        f"cannot convert a traced value to {what}: a traced value has no Python value while "
        f"tracing (it has one only when the graph runs). Keep it an array: compute with NumPy "
        f"functions (np.where to choose between values, autotrace.cond for a branch) and "
        f"return it, or leave this function untraced")


def test_item_of_a_tracer_says_to_index_instead():
    with pytest.raises(TracerConversionError) as error:
        trace(lambda x: x.sum().item(), (x3,))
    assert str(error.value) == (
        "cannot convert a traced value to a Python scalar (.item()): a traced value has no "
        "Python value while tracing (it has one only when the graph runs). Index it instead, "
        "which keeps a traced NumPy scalar: x.ravel()[0] for x.item(), x.ravel()[i] for "
        "x.item(i), x[i, j] for x.item(i, j)")


def test_a_numpy_array_of_a_tracer():
    with pytest.raises(TracerConversionError) as error:
        trace(lambda x: np.asarray(x.sum()), (x3,))
    assert str(error.value) == (
        "cannot convert a traced value to a NumPy array (np.asarray, np.array, or a function "
        "autotrace has no op for): its value is not known while tracing. If it is being "
        "written into a NumPy array made inside the traced function (buffer[i] = value), make "
        "that array from a traced one so it is traced too: np.zeros_like(x, shape=...)")


def test_writing_a_tracer_into_a_concrete_array_names_the_conversion():
    def function(x):
        h = np.zeros(3)
        h[0] = x[0]
        return h
    with pytest.raises(ValueError) as error:
        trace(function, (x3,))
    assert isinstance(error.value.__cause__, TracerConversionError)  # NumPy chains it
    with pytest.raises(TracerConversionError):
        trace(lambda x: (lambda h: h.__setitem__(slice(0, 3), x))(np.zeros(3)), (x3,))


def test_untraceable_numpy_function():
    with pytest.raises(UntraceableError) as error:
        trace(lambda x: np.fft.hfft(x), (x3,))
    assert str(error.value) == ("autotrace cannot trace numpy.fft.hfft yet: it has no op; "
                                "call it outside the traced function")


@pytest.mark.parametrize("function, name", [
    (lambda x: np.trim_zeros(x), "numpy.trim_zeros"),
    (lambda x: np.add.reduceat(x, [0]), "numpy.add.reduceat"),
])
def test_other_untraceable_functions_are_named(function, name):
    with pytest.raises(UntraceableError, match=f"autotrace cannot trace {name} yet"):
        trace(function, (x3,))


def test_unsupported_arguments_are_named():
    with pytest.raises(UntraceableError) as error:
        trace(lambda x: np.prod(x, where=x > 0), (x3,))  # (np.sum's where= is traced)
    assert str(error.value) == ("autotrace cannot trace numpy.prod with where= yet; call it "
                                "outside the traced function")


@pytest.mark.parametrize("function, name", [
    # A mask alone is `mask_select` (a result of unknown size); with other indices it is not.
    (lambda x: x[x > 0, None], "indexing with a traced boolean mask"),
    (lambda x: np.where(x > 0), "numpy.where with one argument"),
    (lambda x: np.nonzero(x), "numpy.nonzero"),
    (lambda x: np.unique(x), "numpy.unique"),
])
def test_data_dependent_shapes(function, name):
    # Those that a graph cannot hold even with a dimension of unknown size.
    with pytest.raises(UntraceableError) as error:
        trace(function, (x3,))
    assert str(error.value) == (
        f"autotrace cannot trace {name}: its result's shape depends on the values of a traced "
        f"array; compute it outside the traced function, or use np.where(condition, x, y)")


def write_selected(x):
    y = np.copy(x)
    y[x > 1.0] = x[x > 1.0] * 10.0  # as many values as the mask selects
    y[x < 1.0] = -1.0  # a scalar
    return y


def test_assignment_through_a_traced_mask():
    graph, _ = trace(write_selected, (x3,))
    assert str(graph).count("mask_assign[index=(#0,)]") == 2
    call, source = compiled(write_selected, x3)
    assert "[g] = -1.0" in source
    for x in (x3, -x3, x3 + 5.0):
        np.testing.assert_array_equal(call(x), np.where(x > 1.0, x * 10.0,
                                                        np.where(x < 1.0, -1.0, x)))


def test_assignment_through_a_traced_mask_checks_the_value_shape_while_tracing():
    def function(x):
        x[x > 0] = np.ones((2, 3))
        return x
    with pytest.raises(ValueError) as error:
        trace(function, (x3,))
    assert str(error.value) == ("could not broadcast a value of shape (2, 3) into x[index] of "
                                "shape (None,)")


def test_tracers_of_another_trace_and_leaked_tracers():
    leaked = []

    def outer(x):
        leaked.append(x)
        return trace(lambda y: y + x, (x3,))
    with pytest.raises(TracerConversionError, match="from another trace"):
        trace(outer, (x3,))
    with pytest.raises(TracerConversionError, match="after its trace ended"):
        trace(lambda y: y + leaked[0], (x3,))


def test_shape_errors_are_raised_while_tracing():
    with pytest.raises(ValueError, match="matmul"):
        trace(lambda x, y: x @ y, (m23, m23))
    with pytest.raises(ValueError, match="cannot reshape array of size 6 into shape"):
        trace(lambda x: x.reshape(4, 2), (m23,))


def test_a_state_cell_beside_a_tracer_is_its_captured_value():
    from autotrace.runtime.state import StateCell
    cell = StateCell(m23)
    # NumPy hands the call to the left operand's Tracer, which must take the cell as its value.
    graph, structure = trace(lambda x: (x @ cell.read().T, x * cell, np.maximum(x, cell)),
                             (m23,))
    assert structure.captured == [cell]
    assert str(graph).splitlines()[2:5] == ["  d:f64[2,2] = matmul a c",
                                            "  e:f64[2,3] = multiply a b",
                                            "  f:f64[2,3] = maximum a b"]


class _Box:
    def __init__(self, w):
        self.w = w


def _keeps_a_branch_value_in_an_attribute(x):
    box = _Box(x * 1.0)
    if np.sum(x) > 0:
        box.w = x * 2.0
    return np.sum(box.w * x)


def test_a_value_a_traced_if_keeps_in_an_attribute_names_where_it_was_made():
    line = _keeps_a_branch_value_in_an_attribute.__code__.co_firstlineno + 3
    with pytest.raises(TracerConversionError) as error:
        autotrace.function(_keeps_a_branch_value_in_an_attribute)(np.ones(3))
    assert str(error.value).startswith(
        f"a traced value that a traced `if` or loop body made (made at {__file__}:{line}) was "
        f"used after that statement, which kept it other than as one of its variables: set as "
        f"an attribute of an object (o.w = ...)")


def test_an_argument_of_no_named_parameter_is_named_by_its_position():
    def writes_into_its_argument(x):
        x[0] = 1.0
        return x
    with pytest.raises(TypeError) as error:  # (no parameter names given to the trace)
        trace(writes_into_its_argument, (x3,), protect_arguments=True)
    assert str(error.value).startswith(
        "the traced function changes argument 0 in place (x[...] = ...): called eagerly")
