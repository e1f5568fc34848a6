"""Graph-level control flow and printing: cond, while and print traced once, run for every value,
and compared with the same Python run eagerly."""
import numpy as np
import pytest

from autotrace.runtime.tracing.control import ControlFlowError, cond, print_values, while_loop
from autotrace.runtime.execution.executor import compile_graph
from autotrace.runtime.graph import Constant, Graph
from autotrace.runtime.passes import optimize
from autotrace.runtime.passes.cleanup import CommonSubexpressions, ConstantFolding, DeadCode
from autotrace.runtime.tracing.tracer import trace
from tests.runtime.helpers import assert_same, compiled

x3 = np.array([1.0, -2.0, 4.0])
y3 = np.array([0.5, 0.25, -1.0])


def branchy(x, y):
    return cond(x.sum() > 0, lambda a, b: (a * b, b.sum()), lambda a, b: (a - b, b.max()), x, y)


def branchy_eager(x, y):
    return (x * y, y.sum()) if x.sum() > 0 else (x - y, y.max())


def test_cond_runs_the_branch_each_input_takes():
    call, source = compiled(branchy, x3, y3)
    assert "if bool(" in source
    for x in (x3, -x3):
        assert_same(call(x, y3), branchy_eager(x, y3))


def test_cond_on_a_concrete_predicate_is_an_if():
    calls = []
    result = cond(True, lambda a: calls.append("true") or a, lambda a: calls.append("false"), x3)
    assert result is x3 and calls == ["true"]


def test_cond_captures_closed_over_traced_values_and_records_their_use_in_the_branch():
    def function(x, y):
        scale = y * 3.0
        return cond(x.sum() > 0, lambda a: a * scale, lambda a: a - y.sum(), x)
    graph, _ = trace(function, (x3, y3))
    (conditional,) = [eq for eq in graph.equations if eq.primitive.name == "cond"]
    # x, then the captured scale and y; y.sum() is computed inside the false branch only.
    assert len(conditional.inputs) == 4
    assert [eq.primitive.name for eq in conditional.attrs["branches"].false.equations] == [
        "reduce_sum", "subtract"]
    call, _ = compiled(function, x3, y3)
    for x in (x3, -x3):
        expected = x * (y3 * 3.0) if x.sum() > 0 else x - y3.sum()
        assert_same(call(x, y3), expected)


def test_nested_cond_inside_a_while_body_with_a_closure():
    def function(x, y):
        def body(state):
            i, acc = state
            acc = cond(acc.sum() > 10.0, lambda a: a - y, lambda a: a * 2.0 + y.sum(), acc)
            return i + 1, acc
        return while_loop(lambda state: state[0] < 5, body, (0, x))

    def eager(x, y):
        i, acc = 0, x
        while i < 5:
            acc = acc - y if acc.sum() > 10.0 else acc * 2.0 + y.sum()
            i += 1
        return np.int64(i), acc
    call, _ = compiled(function, x3, y3)
    for x in (x3, x3 * 10, -x3):
        assert_same(call(x, y3), eager(x, y3))


def collatz_steps(n):
    return while_loop(lambda s: s[1] != 1,
                      lambda s: (s[0] + 1, np.where(s[1] % 2 == 0, s[1] // 2, 3 * s[1] + 1)),
                      (0, n))


def test_while_loop_trip_count_depends_on_the_data():
    call, source = compiled(collatz_steps, np.int64(6))
    assert "while bool(" in source
    for n, steps in ((1, 0), (6, 8), (27, 111)):
        assert_same(call(np.int64(n)), (np.int64(steps), np.int64(1)))


def test_while_loop_on_concrete_values_is_a_python_loop():
    assert while_loop(lambda s: s < 10, lambda s: s * 2, 1) == 16


def test_while_loop_becomes_traced_when_its_condition_is():
    def function(limit):
        return while_loop(lambda i: i < limit, lambda i: i + 1, 0)
    call, _ = compiled(function, np.int64(3))
    assert_same(call(np.int64(3)), np.int64(3))
    assert_same(call(np.int64(7)), np.int64(7))


def test_golden_graph_of_a_small_cond():
    graph, _ = trace(lambda x: cond(x.sum() > 0.0, lambda a: a * 2.0, lambda a: -a, x), (x3,))
    assert str(graph) == """\
{ lambda a:f64[3] ;
  b:f64[] = reduce_sum[axis=(0,)] a
  c:bool[] = greater b 0.0
  d:f64[3] = cond[branches=(
    true={ lambda a:f64[3] ;
      b:f64[3] = multiply a 2.0
      in (b) }
    false={ lambda a:f64[3] ;
      b:f64[3] = negative a
      in (b) }
  )] c a
  in (d) }"""


def test_branches_of_different_shapes_are_an_error():
    with pytest.raises(ControlFlowError) as error:
        trace(lambda x: cond(x.sum() > 0, lambda a: (a, a), lambda a: (a, a[:2]), x), (x3,))
    assert str(error.value) == (
        "autotrace.cond: true_fn and false_fn must return arrays of the same shape and dtype, "
        "but output[1] is f64[3] in true_fn and f64[2] in false_fn")


def test_branches_of_different_structures_are_an_error():
    with pytest.raises(ControlFlowError) as error:
        trace(lambda x: cond(x.sum() > 0, lambda a: (a, a), lambda a: a, x), (x3,))
    assert str(error.value) == (
        "autotrace.cond: true_fn and false_fn must return the same structure, but true_fn "
        "returned (f64[3], f64[3]) and false_fn returned f64[3]")


def test_a_predicate_that_is_not_a_scalar_is_an_error():
    with pytest.raises(ControlFlowError, match=r"the predicate must be a scalar, but it is "
                                               r"bool\[3\]"):
        trace(lambda x: cond(x > 0, lambda a: a, lambda a: -a, x), (x3,))


def test_a_loop_body_changing_a_shape_is_an_error():
    with pytest.raises(ControlFlowError) as error:
        trace(lambda x: while_loop(lambda s: s[0] < 3, lambda s: (s[0] + 1, np.concatenate(
            [s[1], s[1]])), (0, x)), (x3,))
    assert str(error.value) == (
        "autotrace.while_loop: body_fn must keep the shape and dtype of each loop value, but "
        "loop value[1] goes in as f64[3] and comes out as f64[6]")


def test_a_loop_condition_that_is_not_a_scalar_is_an_error():
    with pytest.raises(ControlFlowError, match=r"cond_fn must return a scalar .* but it "
                                               r"returned bool\[3\]"):
        trace(lambda x: while_loop(lambda s: s > 0, lambda s: s - 1.0, x), (x3,))


def test_assigning_into_a_closed_over_traced_value_in_a_branch_is_an_error():
    def function(x, y):
        def branch(a):
            y[0] = 1.0
            return a
        return cond(x.sum() > 0, branch, lambda a: a, x)
    with pytest.raises(ControlFlowError, match="an array a branch function of autotrace.cond "
                                               "closes over.*or pass it in as an operand"):
        trace(function, (x3, y3))


def test_print_runs_on_every_call_in_program_order(capsys):
    def function(x):
        print_values("x is", x, "sum", x.sum(), sep="|")
        y = x * 2.0
        print_values(y)
        print_values(y)  # the same print twice is printed twice: never merged
        return x + 1.0
    call, source = compiled(function, x3)
    for x in (x3, -x3):
        assert_same(call(x), x + 1.0)
        assert capsys.readouterr().out == f"x is|{x}|sum|{x.sum()}\n{x * 2.0}\n{x * 2.0}\n"


def test_print_inside_a_branch_prints_only_when_the_branch_runs(capsys):
    def function(x):
        def loud(a):
            print_values("positive", a.sum())
            return a
        return cond(x.sum() > 0, loud, lambda a: -a, x)
    call, _ = compiled(function, x3)
    call(-x3 * 10)
    assert capsys.readouterr().out == ""
    call(x3)
    assert capsys.readouterr().out == "positive 3.0\n"


def test_print_of_concrete_values_prints_now(capsys):
    print_values("a", 1, np.arange(2))
    assert capsys.readouterr().out == "a 1 [0 1]\n"


def test_passes_keep_side_effects_and_leave_control_ops_whole():
    def function(x):
        print_values(x.sum())
        cond(x.sum() > 0, lambda a: a, lambda a: -a, x)  # its result is unused: dropped
        return while_loop(lambda s: s.sum() < 100.0, lambda s: s * 2.0, x * x)
    graph, _ = trace(function, (x3,))
    for graph_pass in (ConstantFolding(), CommonSubexpressions(), DeadCode()):
        graph = graph_pass.run(graph)
    names = [eq.primitive.name for eq in graph.equations]
    assert "print" in names and "while" in names and "cond" not in names
    run, _ = compile_graph(optimize(graph))
    assert_same(run(x3)[0], np.array([8.0, 32.0, 128.0]))


def test_a_cond_of_constants_is_folded():
    graph, _ = trace(lambda x: cond(x.sum() > 0, lambda a: a + 1.0, lambda a: a - 1.0, x), (x3,))
    (conditional,) = [eq for eq in graph.equations if eq.primitive.name == "cond"]
    constant = conditional.replace(inputs=(Constant(np.False_), Constant(np.arange(3.0))))
    folded = ConstantFolding().run(Graph([], [constant], constant.outputs))
    assert folded.equations == [] and isinstance(folded.outputs[0], Constant)
    assert_same(folded.outputs[0].value, np.arange(3.0) - 1.0)


def test_a_cond_with_a_concrete_operand_and_traced_predicate():
    def function(x):
        return cond(x.sum() > 0, lambda a: a + np.ones(3), lambda a: a - 1.0, np.arange(3.0))
    call, _ = compiled(function, x3)
    assert_same(call(x3), np.arange(3.0) + 1.0)
    assert_same(call(-x3), np.arange(3.0) - 1.0)
