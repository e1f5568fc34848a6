"""Values restored from names in the adjoint sweep (transforms/codegen/restores.py).

An array copied, then written in place, under traced `if`s: the adjoint sweep gives the name
back the copy from the temporary that holds it, not from the stack, so that the traced
gradient sees one array on every path. Each function is checked against finite differences
in every mode, with inputs taking each branch.

A second derivative differentiates those restores: the adjoint sweep reads the copy by its
temporary's name after the primal sweep wrote an item of it, so the gradient reaching that
item through the temporary belongs to the value written (transforms/reverse/reverse.py
`subscript_assignment`).
"""
import numpy as np
import pytest

import autotrace
from autotrace.runtime.tracing.control_scope import ControlFlowError
from tests.numeric import central_difference, check_every_mode

V = np.array([1.0, 2.0, 3.0])


def copied_written_then_rebound(x):
    w = V * x
    w = np.copy(w)
    w[0] = x[1]
    w = w * x
    return np.sum(w * x)


def copied_written_then_added_under_nested_ifs(x):
    v = V * 1.0
    if np.sum(x) > 0.0:
        v = np.copy(v)
        v[0] = 3.0 * x[2]
        if np.sum(v) > 1.0:
            v = v + x
    return np.sum(v * x)


def copied_written_then_written_or_rebound(x):
    w = np.tanh(V * x)
    if np.sum(x) > 0.0:
        w = np.copy(w)
        w[0] = x[1]
        if np.sum(w) > 0.5:
            w = w * x
        else:
            w[2] = x[0] ** 2
    return np.sum(w * x)


def copied_in_one_branch_rebound_in_the_other(x):
    w = V * x
    if np.sum(x) > 0.0:
        w = np.copy(w)
        w[1] *= 2.0
    else:
        w = w + 1.0
    if np.max(w) > 1.0:
        w = w * x
    return np.sum(w ** 2)


def copied_under_an_if_in_a_loop(x):
    w = V + x
    for i in range(3):
        if np.sum(w) > 1.0:
            u = np.copy(w)
            u[i] = x[i] * 3.0
            w = u
    return np.sum(w * x)


def rebound_to_a_name_in_a_for_loop(x):
    # y holds v (assigned once, outside the loop) when the next line overwrites it: the pop
    # of its push becomes `y = v`, in the adjoint loop's body, which is a copy of the
    # statements made for it (it kept the push's pair: before, only the push went)
    v = x * 2.0
    y = x
    for i in range(3):
        y = v
        y = np.sin(y) * x + y
    return np.sum(y * y)


def rebound_to_a_name_in_a_while_loop(x):
    v = np.cos(x)
    y = x * 1.0
    k = 0
    while k < 2:
        k += 1
        t = y
        y = v
        y = y * t + x
    return np.sum(y ** 2)


def rebound_to_a_name_under_an_if_in_a_loop(x):
    v = (x - np.mean(x))[::-1]
    for i in range(3):
        if np.sum(x) > 0.1:
            x = v
            x = (x - x) - np.mean(x - x) + x * x
    return np.sum(v ** 2) + np.sum(np.sin(x))


def written_in_a_loop_under_an_if_then_rebound_in_another_loop(x):
    # The adjoint gives v2 back from the name holding it (v2 = _t), then writes the saved
    # items back into it, inside the adjoint of the traced if: the if takes that name as a
    # variable of its own (before, the write reached a value of the enclosing trace).
    v2 = x * 1.5
    if np.sum(v2[1:3]) > -0.25:
        k6 = 0
        while k6 < 3:
            k6 += 1
            v2[0:2] = x[1:3]
    else:
        v2 = v2 - 0.78
    k7 = 0
    while np.sum(x) < 5.0 and k7 < 2:
        k7 += 1
        if np.max(x) > 0.33:
            v2 = v2 + 0.72
    return np.sum(x ** 2) + np.sum(v2 ** 2)


FUNCTIONS = [copied_written_then_rebound, copied_written_then_added_under_nested_ifs,
             copied_written_then_written_or_rebound, copied_in_one_branch_rebound_in_the_other,
             copied_under_an_if_in_a_loop, rebound_to_a_name_in_a_for_loop,
             rebound_to_a_name_in_a_while_loop, rebound_to_a_name_under_an_if_in_a_loop,
             written_in_a_loop_under_an_if_then_rebound_in_another_loop]
INPUTS = [np.array([0.5, 1.0, -0.2]), np.array([-0.5, 0.3, -0.2]), np.array([0.9, -0.4, 0.1])]


@pytest.mark.parametrize("function", FUNCTIONS, ids=lambda f: f.__name__)
@pytest.mark.parametrize("x", INPUTS, ids=["both_branches", "outer_false", "inner_false"])
def test_every_mode_against_finite_differences(function, x):
    check_every_mode(function, x)


def test_the_copy_comes_back_from_its_name_not_the_stack():
    source = autotrace.source(autotrace.grad(copied_written_then_added_under_nested_ifs))
    lines = [line.strip() for line in source.splitlines()]
    primal = lines[:lines.index("# Adjoint sweep")]
    adjoint = lines[lines.index("# Adjoint sweep"):]
    copy = next(line.split(" = ")[0] for line in primal if line.endswith("= np.copy(v)"))
    # v is never pushed: not before `v = copy` or `v = v + x`, nor before the function's first
    # write, where `v = V * 1.0` is split so that a name of its own holds the value
    assert "_stack1.append(v)" not in primal, source
    made = next(line.split(" = ")[0] for line in primal if line.endswith(" = V * 1.0"))
    assert primal[primal.index(f"{made} = V * 1.0") + 1] == f"v = {made}", source
    assert adjoint[-2] == f"v = {made}", source
    # given back after `v = v + x`, and after the inner if's adjoint
    assert adjoint.count(f"v = {copy}") == 2, source


def copied_in_a_traced_loop_then_rebound_under_nested_ifs(x):
    v = V * x
    if np.sum(x[0:2]) < 0.68:
        v = v * np.cos(x)
    else:
        w = np.tanh(np.sum(x))
        while w < 1.31:
            w = w + 0.5
            v = np.copy(v)
            v[-1] *= np.sum(x)
        if np.sum(v) < 0.64:
            v = v + x
    return np.sum(np.sin(v)) + np.sum(x)


def test_a_copy_made_in_a_traced_loop_is_refused_never_wrong():
    """Each iteration's copy comes back from the stack: the traced gradient is refused, as
    docs/limitations.md says; the eager gradient and that of the traced function are right."""
    x = np.array([0.5, 1.0, -0.2])
    function = copied_in_a_traced_loop_then_rebound_under_nested_ifs
    expected = central_difference(function, x)
    np.testing.assert_allclose(autotrace.grad(function)(x), expected, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(autotrace.grad(autotrace.function(function))(x), expected,
                               rtol=1e-6, atol=1e-8)
    with pytest.raises(ControlFlowError, match="may share memory, depending on a traced "
                       "condition") as refused:
        autotrace.function(autotrace.grad(function))(x)
    assert "if np.sum(x[0:2]) < 0.68:" in str(refused.value)
