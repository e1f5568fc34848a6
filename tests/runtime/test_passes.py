"""Each graph pass alone: a graph where it must fire and one where it must not."""
import numpy as np
import pytest

import autotrace
from autotrace.runtime.abstract import AbstractArray
from autotrace.runtime.execution.executor import compile_graph
from autotrace.runtime.graph import Constant, Equation, Graph, Literal, Var
from autotrace.runtime.ops import primitives
from autotrace.runtime.passes import (AlgebraicSimplification, BufferReuse, CommonSubexpressions,
                                      ConstantFolding, DeadCode, MatmulLayout, optimize)
from autotrace.runtime.tracing.tracer import trace

x3 = np.arange(3.0)
m23 = np.arange(6.0).reshape(2, 3)


def traced(function, *args):
    return trace(function, args)[0]


def primitive_names(graph):
    return [equation.primitive.name for equation in graph.equations]


def same_results(before, after, *args):
    for expected, result in zip(compile_graph(before)[0](*args), compile_graph(after)[0](*args)):
        np.testing.assert_allclose(result, expected)


# --- constant folding ---------------------------------------------------------------------------

def test_constant_folding_evaluates_equations_of_constants():
    f64 = AbstractArray((3,), np.float64)
    x, folded, y = Var(f64), Var(f64), Var(f64)
    graph = Graph([x], [
        Equation(primitives["multiply"], [Constant(np.ones(3)), Literal(2.0)], {}, [folded]),
        Equation(primitives["add"], [x, folded], {}, [y]),
    ], [y, folded])
    result = ConstantFolding().run(graph)
    assert primitive_names(result) == ["add"]
    constant = result.equations[0].inputs[1]
    assert isinstance(constant, Constant) and constant.value.tolist() == [2.0, 2.0, 2.0]
    assert result.outputs[1] is constant and not constant.value.flags.writeable
    same_results(graph, result, x3)


def test_constant_folding_leaves_traced_inputs_and_creation_ops():
    graph = traced(lambda x: np.zeros_like(x) + np.sin(x), x3)
    assert primitive_names(ConstantFolding().run(graph)) == ["full", "sin", "add"]


# --- algebraic simplification -------------------------------------------------------------------

@pytest.mark.parametrize("function", [
    lambda x: x * 1, lambda x: 1.0 * x, lambda x: x + -0.0, lambda x: -0.0 + x,
    lambda x: x - 0, lambda x: x - 0.0, lambda x: x / 1, lambda x: x ** 1, lambda x: -(-x),
    lambda x: +x, lambda x: x * np.ones(3), lambda x: x + np.full(3, -0.0),
])
def test_neutral_operations_are_removed(function):
    graph = traced(function, x3)
    result = DeadCode().run(AlgebraicSimplification().run(graph))
    assert result.equations == [] and result.outputs[0] is graph.inputs[0]


@pytest.mark.parametrize("function", [
    lambda x: x + 0, lambda x: x + 0.0, lambda x: 0.0 + x, lambda x: x + np.zeros(3),
    lambda x: x - -0.0,
])
def test_adding_a_positive_zero_to_a_float_stays(function):
    """-0.0 + 0.0 is +0.0 in NumPy: x + 0.0 is not x (x - -0.0 is x + 0.0)."""
    graph = traced(function, x3)
    result = DeadCode().run(AlgebraicSimplification().run(graph))
    assert primitive_names(result) in (["add"], ["subtract"])


def test_adding_zero_to_integers_is_removed():
    graph = traced(lambda x: x + 0, np.arange(3))
    result = DeadCode().run(AlgebraicSimplification().run(graph))
    assert result.equations == [] and result.outputs[0] is graph.inputs[0]


@pytest.mark.parametrize("function, args", [
    (lambda x: x * np.ones((2, 3)), (x3,)),           # broadcasting changes the shape
    (lambda x: x * 1.0, (np.arange(3),)),             # int * float changes the dtype
    (lambda x: 0 - x, (x3,)),                         # not neutral on the left
    (lambda x: 1 / x, (x3 + 1,)),
    (lambda x: x * 2, (x3,)),
    (lambda x: -x, (x3,)),
])
def test_operations_that_are_not_neutral_stay(function, args):
    graph = traced(function, *args)
    assert len(AlgebraicSimplification().run(graph).equations) == len(graph.equations)


@pytest.mark.parametrize("function", [lambda z: z * 1.0, lambda z: 1 * z, lambda z: z / 1,
                                      lambda z: z + -0.0, lambda z: z * (1 + 0j)])
@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
def test_neutral_operations_on_complex_values_stay_numpys(function, dtype):
    # (NumPy's complex64 loop makes inf * 1 inf+nanj: the multiply was dropped)
    z = np.array([complex(np.inf, 0), complex(1, -0.0), complex(np.nan, 1)], dtype=dtype)
    graph = traced(function, z)
    assert len(AlgebraicSimplification().run(graph).equations) == len(graph.equations)
    with np.errstate(invalid="ignore"):
        expected = function(z)
        result = autotrace.function(function)(z)
    np.testing.assert_array_equal(result.view(np.float32 if dtype == np.complex64 else float),
                                  expected.view(np.float32 if dtype == np.complex64 else float))


def test_transpose_of_transpose():
    t3 = np.zeros((2, 3, 4))
    identity = DeadCode().run(AlgebraicSimplification().run(traced(lambda x: x.T.T, t3)))
    assert identity.equations == [] and identity.outputs[0] is identity.inputs[0]
    composed = AlgebraicSimplification().run(
        traced(lambda x: np.transpose(np.transpose(x, (1, 0, 2)), (0, 2, 1)), t3))
    composed = DeadCode().run(composed)
    assert str(composed).splitlines()[1].strip() == "b:f64[3,4,2] = transpose[axes=(1, 2, 0)] a"
    np.testing.assert_array_equal(compile_graph(composed)[0](t3)[0],
                                  np.transpose(np.transpose(t3, (1, 0, 2)), (0, 2, 1)))


def test_reshape_of_reshape():
    back = DeadCode().run(AlgebraicSimplification().run(
        traced(lambda x: (x * 2.0).reshape(6).reshape(2, 3), m23)))
    assert primitive_names(back) == ["multiply"] and back.outputs[0] is back.equations[0].outputs[0]
    once = DeadCode().run(AlgebraicSimplification().run(
        traced(lambda x: (x * 2.0).reshape(6).reshape(3, 2), m23)))
    assert primitive_names(once) == ["multiply", "reshape"]
    unit = DeadCode().run(AlgebraicSimplification().run(
        traced(lambda x: x.reshape(2, 1, 3).reshape(3, 2), m23)))
    assert primitive_names(unit) == ["reshape"] and unit.equations[0].inputs[0] is unit.inputs[0]


def test_a_reshape_of_a_reshape_of_an_argument_stays_two():
    """Of an argument whose layout allows no view of the first shape (a strided one), NumPy's
    first reshape copies: the result is new memory, where one reshape would view the argument."""
    graph = traced(lambda x: x.reshape(6).reshape(2, 3), m23)
    assert primitive_names(AlgebraicSimplification().run(graph)) == ["reshape", "reshape"]
    strided = np.arange(12.0).reshape(2, 6)[:, :3]
    result = compile_graph(optimize(graph))[0](strided)[0]
    np.testing.assert_array_equal(result, strided)
    assert not np.shares_memory(result, strided)


# --- common subexpressions ----------------------------------------------------------------------

def test_common_subexpressions_are_computed_once():
    graph = traced(lambda x: np.sin(x) * np.sin(x) + np.sum(x, 0) + np.sum(x, 0), m23)
    result = CommonSubexpressions().run(graph)
    assert primitive_names(result) == ["sin", "multiply", "reduce_sum", "add", "add"]
    same_results(graph, result, m23)


def test_different_attributes_or_literals_are_not_merged():
    graph = traced(lambda x: (np.sum(x, 0), np.sum(x, 1), x + 1, x + 1.0, x + True), m23)
    assert len(CommonSubexpressions().run(graph).equations) == 5


# --- dead code ----------------------------------------------------------------------------------

def test_dead_code_is_dropped():
    def function(x):
        np.exp(x)
        np.cos(x) * 2
        return np.sin(x)
    assert primitive_names(DeadCode().run(traced(function, x3))) == ["sin"]


def test_live_code_is_kept():
    graph = traced(lambda x: (np.exp(x), np.cos(x) * 2), x3)
    assert primitive_names(DeadCode().run(graph)) == ["exp", "cos", "multiply"]


# --- buffer reuse -------------------------------------------------------------------------------

def reused(function, *args):
    """The `out` attribute of each equation after BufferReuse (None where there is none)."""
    graph = BufferReuse().run(traced(function, *args))
    same_results(traced(function, *args), graph, *args)
    return [equation.attrs.get("out") for equation in graph.equations]


def test_buffer_reuse_writes_into_a_dying_intermediate():
    assert reused(lambda x: np.exp(x) + 1.0, x3) == [None, 0]
    assert reused(lambda x: 1.0 - np.exp(x), x3) == [None, 1]


def test_buffer_reuse_never_writes_into_inputs_or_constants():
    assert reused(lambda x: x + 1.0, x3) == [None]
    assert reused(lambda x: np.arange(3.0) + x, x3) == [None]


def test_buffer_reuse_waits_for_the_last_reader():
    assert reused(lambda x: (lambda e: (e + 1.0) * e)(np.exp(x)), x3) == [None, None, 0]


def test_buffer_reuse_needs_the_same_shape_and_dtype():
    assert reused(lambda x: np.exp(x) + np.ones((2, 3)), x3) == [None, None]
    assert reused(lambda x: np.exp(x) > 1.0, x3) == [None, None]
    assert reused(lambda x: np.sum(x) + 1.0, x3) == [None, None]  # 0-d: a NumPy scalar


def test_buffer_reuse_respects_views_read_later():
    def function(x):
        e = np.exp(x)
        view = e.T
        f = e + 1.0      # must not write into e: view is read below
        return f, view * 2.0
    assert reused(function, m23) == [None, None, None, None]

    def view_read_before(x):
        e = np.exp(x)
        total = e.T.sum()
        return e + 1.0, total
    assert reused(view_read_before, m23) == [None, None, None, 0]


def test_buffer_reuse_never_writes_into_an_output():
    assert reused(lambda x: (lambda e: (e, e + 1.0))(np.exp(x)), x3) == [None, None]


# --- matmul layout ------------------------------------------------------------------------------

def test_a_transpose_shared_by_matmuls_on_the_right_is_copied_once():
    def steps(w, h):
        for _ in range(3):
            h = np.tanh(h @ w.T)
        return h, w.T + 1.0
    w, h = np.arange(16.0).reshape(4, 4) / 20, np.ones((2, 4))
    graph = CommonSubexpressions().run(traced(steps, w, h))
    result = MatmulLayout().run(graph)
    lines = str(result).splitlines()
    assert lines[1:3] == ["  c:f64[4,4] = transpose[axes=(1, 0)] a",
                          "  d:f64[4,4] = copy[order='C'] c"]
    products = [equation for equation in result.equations
                if equation.primitive.name == "matmul"]
    assert len(products) == 3 and all(
        equation.inputs[1] is result.equations[1].outputs[0] for equation in products)
    add = [equation for equation in result.equations if equation.primitive.name == "add"]
    assert add[0].inputs[0] is result.equations[0].outputs[0]  # other readers keep the view
    same_results(graph, result, w, h)
    assert "d = np.copy(c, order='C')" in compile_graph(result)[1]
    row_major = primitives["copy"].impl(w.T, order="C")
    assert row_major.flags.c_contiguous and np.array_equal(row_major, w.T)


@pytest.mark.parametrize("function", [
    lambda w, h: np.tanh(h @ w.T) @ w,       # the transpose is read by one matmul only
    lambda w, h: w.T @ (w.T @ h.T),          # read on the left, where BLAS is as fast
    lambda w, h: np.tanh(h @ w) @ w,         # no transpose at all
])
def test_matmul_layout_leaves_other_products_alone(function):
    graph = traced(function, np.eye(4), np.ones((2, 4)))
    assert str(MatmulLayout().run(graph)) == str(graph)


def test_optimize_runs_every_pass_and_can_show_one(capsys):
    graph = optimize(traced(lambda x: np.exp(x) * 1.0 + 1.0, x3), show_after=("DeadCode",))
    assert primitive_names(graph) == ["exp", "add"]
    assert capsys.readouterr().out.startswith("# after DeadCode\n{ lambda a:f64[3] ;")


# --- broadcasts an elementwise op does itself --------------------------------------------------

def test_broadcast_into_an_elementwise_op_is_left_to_the_op():
    column = np.arange(2.0).reshape(2, 1)
    graph = traced(lambda c, m: np.broadcast_to(c, (2, 3)) * m, column, m23)
    simplified = DeadCode().run(AlgebraicSimplification().run(graph))
    assert primitive_names(simplified) == ["multiply"]
    assert simplified.equations[0].inputs[0] is simplified.inputs[0]
    same_results(graph, simplified, column, m23)


@pytest.mark.parametrize("function, args", [
    # the op alone would not make the broadcast shape
    (lambda c, m: np.broadcast_to(c, (2, 3)) * 2.0, (np.arange(2.0).reshape(2, 1), m23)),
    # the view is an output itself (the add may still read c)
    (lambda c, m: (np.broadcast_to(c, (2, 3)), np.broadcast_to(c, (2, 3)) + m),
     (np.arange(2.0).reshape(2, 1), m23)),
])
def test_broadcasts_that_shape_the_result_stay(function, args):
    graph = traced(function, *args)
    simplified = DeadCode().run(AlgebraicSimplification().run(graph))
    assert "broadcast_to" in primitive_names(simplified)
    same_results(graph, simplified, *args)
