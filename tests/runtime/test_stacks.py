"""Stacks of saved values as graph values: pushes inside traced branches and loops, popped by
the branches and loops that mirror them, whichever path runs."""
import numpy as np
import pytest

from autotrace.runtime.abstract import AbstractArray
from autotrace.runtime.tracing.control import ControlFlowError, cond, while_loop
from autotrace.runtime.tracing.control_statements import if_stmt
from autotrace.runtime.execution.executor import compile_graph
from autotrace.runtime.tracing.stacks import SavedValues, new_stack
from autotrace.runtime.tracing.tracer import trace
from tests.runtime.helpers import compiled

x3 = np.array([1.0, -2.0, 4.0])


def push_per_branch(x):
    """Each branch saves values of its own shapes; the mirror branch pops them back."""
    stack = new_stack(x._builder, [])
    positive = x.sum() > 0

    def save_row(stack):
        stack.append(x * 2.0)
        return stack

    def save_scalars(stack):
        stack.append(x.sum())
        stack.append(x.max() + 1.0)
        return stack
    stack = cond(positive, save_row, save_scalars, stack)

    def restore_row(stack):
        return stack, stack.pop()

    def restore_scalars(stack):
        top = stack.pop()
        return stack, np.ones(3) * (top * 10.0 + stack.pop())
    return cond(positive, restore_row, restore_scalars, stack)[1]


def test_branches_save_values_of_different_shapes():
    call, _ = compiled(push_per_branch, x3)
    np.testing.assert_allclose(call(x3), x3 * 2.0)
    np.testing.assert_allclose(call(-x3), np.full(3, (2.0 + 1.0) * 10.0 - 3.0))


def push_in_a_loop_branch(x):
    """A loop saves, on odd trip counters only, a value; the mirror loop pops them in reverse
    and sums them with weights 1, 2, 3, ..."""
    stack = new_stack(x._builder, [])

    def forward(state):
        i, stack, value = state

        def save(stack):
            stack.append(value)
            return stack
        stack = cond(i % 2 == 1, save, lambda stack: stack, stack)
        return i + 1, stack, value * 2.0
    count, stack, _ = while_loop(lambda state: state[0] < x.shape[0] + np.sum(x > 0),
                                 forward, (0, stack, x[0]))

    def backward(state):
        i, stack, total = state

        def take(stack, total):
            return stack, total * 3.0 + stack.pop()
        stack, total = cond(i % 2 == 1, take, lambda stack, total: (stack, total), stack, total)
        return i - 1, stack, total
    return while_loop(lambda state: state[0] >= 0, backward, (count - 1, stack, 0.0 * x[0]))[2]


def eager_push_in_a_loop_branch(x):
    count = x.shape[0] + np.sum(x > 0)
    saved = [x[0] * 2.0 ** i for i in range(count) if i % 2 == 1]
    total = 0.0
    for value in reversed(saved):
        total = total * 3.0 + value
    return total


def test_a_loop_saves_in_a_branch_and_its_mirror_pops_in_the_same_branch():
    call, _ = compiled(push_in_a_loop_branch, x3)
    for x in (x3, np.abs(x3), -np.abs(x3), np.array([1.5, 2.0, -1.0])):
        np.testing.assert_allclose(call(x), eager_push_in_a_loop_branch(x))


def popped_outside_the_branch(x):
    stack = new_stack(x._builder, [])
    stack = cond(x.sum() > 0, lambda s: (s.append(x), s)[1], lambda s: s, stack)
    return stack.pop()


def test_pops_that_do_not_mirror_the_pushes_are_an_error():
    with pytest.raises(ControlFlowError) as error:
        trace(popped_outside_the_branch, (x3,))
    assert str(error.value) == (
        "autotrace cannot trace this gradient: it pops a value where a cond on a traced value "
        "pushed values, so the saved values it pops would not be the ones it pushed. Take the "
        "gradient of the traced function instead, autotrace.grad(autotrace.function(f)), or "
        "compute it eagerly")


def test_pushes_nobody_pops_are_dead_code():
    def unused(x):
        stack = new_stack(x._builder, [x, None])
        stack.append(x * 2.0)
        return x + 1.0
    _, source = compiled(unused, x3)
    assert "append" not in source and "[]" not in source


def pushed_again_after_its_pops(x):
    """What a second derivative does: a branch pops what a branch pushed, then a branch pushes
    again (the pops undone) and its mirror pops those."""
    stack = new_stack(x._builder, [])
    positive = x.sum() > 0
    stack = cond(positive, lambda s: (s.append(x * 2.0), s)[1],
                 lambda s: (s.append(x.sum()), s)[1], stack)
    stack, first = cond(positive, lambda s: (s, s.pop()),
                        lambda s: (s, np.ones(3) * s.pop()), stack)
    stack = cond(positive, lambda s: (s.append(first + 1.0), s)[1],
                 lambda s: (s.append(first[0] * 3.0), s)[1], stack)
    return cond(positive, lambda s: (s, s.pop()), lambda s: (s, np.ones(3) * s.pop()), stack)[1]


def test_a_push_after_pops_goes_on_top_of_what_is_left():
    call, _ = compiled(pushed_again_after_its_pops, x3)
    np.testing.assert_allclose(call(x3), x3 * 2.0 + 1.0)
    np.testing.assert_allclose(call(-x3), np.full(3, -3.0 * 3.0))


def test_the_gradient_of_a_stack_is_an_empty_stack_only_where_it_holds_nothing():
    def gradient_after_pops(x):
        stack = new_stack(x._builder, [])
        stack = cond(x.sum() > 0, lambda s: (s.append(x), s)[1], lambda s: s, stack)
        stack = cond(x.sum() > 0, lambda s: (s.pop(), s)[1], lambda s: s, stack)
        gradients = SavedValues.zeros_like(stack)
        gradients.append(x * 3.0)
        return gradients.pop()
    call, _ = compiled(gradient_after_pops, x3)
    np.testing.assert_allclose(call(x3), x3 * 3.0)

    def gradient_while_it_holds_values(x):
        stack = new_stack(x._builder, [])
        stack = cond(x.sum() > 0, lambda s: (s.append(x), s)[1], lambda s: s, stack)
        return SavedValues.zeros_like(stack)
    with pytest.raises(ControlFlowError, match="the gradient of a stack of saved values is "
                                               "made while the stack still holds values"):
        trace(gradient_while_it_holds_values, (x3,))
    zeros = SavedValues.zeros_like(SavedValues([x3, None]))  # a stack not traced (yet)
    assert type(zeros) is SavedValues and zeros[1] is None
    np.testing.assert_array_equal(zeros[0], np.zeros(3))


def test_a_pop_of_another_shape_than_traced_is_an_error_not_a_value():
    def save_and_restore(x):
        stack = new_stack(x._builder, [])
        stack = cond(x.sum() > 0, lambda s: (s.append(x), s)[1],
                     lambda s: (s.append(x * 2.0), s)[1], stack)
        return cond(x.sum() > 0, lambda s: (s, s.pop()), lambda s: (s, s.pop()), stack)[1]
    graph, _ = trace(save_and_restore, (x3,))
    pops = [equation for subgraph in _subgraphs(graph) for equation in subgraph.equations
            if equation.primitive.name == "stack_pop"]
    assert pops and all(equation.attrs["popped"].shape == (3,) for equation in pops)
    run, _ = compile_graph(graph)
    np.testing.assert_allclose(run(x3)[0], x3)
    for equation in pops:  # as if the trace had followed the pushes wrongly
        equation.attrs = {"popped": AbstractArray((2,), np.float64)}
    with pytest.raises(RuntimeError, match="gave back a value of another shape"):
        compile_graph(graph)[0](x3)


def _subgraphs(graph):
    yield graph
    for equation in graph.equations:
        for attribute in equation.attrs.values():
            for part in ("true", "false", "cond", "body"):
                if hasattr(attribute, part):
                    yield from _subgraphs(getattr(attribute, part))


def test_pops_a_converted_if_cannot_follow_are_an_error_at_the_users_line():
    def popped_in_a_converted_if(x):
        stack = new_stack(x._builder, [])

        def take(stack):
            stack.pop()
            return (stack,)
        return if_stmt(x.sum() > 0, take, lambda stack: (stack,), (stack,), names=("stack",),
                       live=("stack",), where="model.py:3: if x.sum() > 0:", placeholders=True)
    with pytest.raises(ControlFlowError) as error:
        trace(popped_in_a_converted_if, (x3,))
    assert str(error.value) == (
        "model.py:3: if x.sum() > 0:\n  autotrace cannot trace this gradient: it pops more "
        "values than were pushed, so the saved values it pops would not be the ones it pushed. "
        "Take the gradient of the traced function instead, "
        "autotrace.grad(autotrace.function(f)), or compute it eagerly")
