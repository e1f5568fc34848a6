"""Derivatives through control flow whose shape makes the sweeps easy to get out of step: `and`,
`or` and chained comparisons in the conditions of if and while (the second operand runs only
sometimes), early exits, and exits on traced values around lists of arrays. Each function is
checked in every mode against finite differences: eager reverse and forward mode, grad of grad,
forward over reverse, and the traced gradient (autotrace.function of autotrace.grad)."""
import inspect

import numpy as np
import pytest

import autotrace
from autotrace.testing import check_grads, check_vjp
from autotrace.runtime.tracing.control import ControlFlowError
from autotrace.transforms.derivative_record import derivative_record


def check_every_mode(f, args, wrt=0, order=2):
    """Eager reverse and forward mode up to `order`, and the traced gradient, against finite
    differences; the traced gradient is checked on a second call too, served by the cache."""
    check_grads(f, args, wrt, order=order, modes=("reverse", "forward"))
    traced = autotrace.function(autotrace.grad(f, wrt))
    check_vjp(f, traced, args, wrt, description=f"the traced gradient of {f.__name__}")
    check_vjp(f, traced, args, wrt, seed=1, description=f"the traced gradient of {f.__name__}")


# --- `and` and `or` in conditions ---------------------------------------------------------------

def and_in_loop(x):
    y = 0.0
    for i in range(4):
        if x > 0.0 and i < 2:
            y = y + x * x
    return y


def test_and_in_an_if_inside_a_loop_by_hand():
    # Two of the four iterations add x * x: the derivative is 2 * 2 * x.
    assert autotrace.grad(and_in_loop)(np.array(3.0)) == pytest.approx(12.0)
    assert autotrace.function(autotrace.grad(and_in_loop))(np.array(3.0)) == pytest.approx(12.0)
    assert autotrace.forward(and_in_loop)(np.array(3.0), tangent=np.array(1.0))[1] == \
        pytest.approx(12.0)


@pytest.mark.parametrize("x", [np.array(3.0), np.array(-2.0), 1.5])
def test_and_in_an_if_inside_a_loop(x):
    check_every_mode(and_in_loop, (x,))


def scale_while_sum_large_and_few_steps(x, a):
    k = 0
    while np.sum(x) > 0.5 and k < 2:
        x = x * a
        k += 1
    return np.sum(x * x)


def scale_while_sum_large_or_few_steps(x, a):
    k = 0
    while np.sum(x) > 3.0 or k < 1:
        x = x * a
        k += 1
    return np.sum(x * x)


WHILE_INPUTS = [np.array([2.0, -0.4, 0.75, 1.1]), np.array([0.1, 0.2, -0.3, 0.1]),
                np.array([5.0, 1.0, 2.0, 0.5])]


@pytest.mark.parametrize("f", [scale_while_sum_large_and_few_steps,
                               scale_while_sum_large_or_few_steps])
@pytest.mark.parametrize("x", WHILE_INPUTS)
@pytest.mark.parametrize("wrt", [0, 1, (0, 1)])
def test_while_with_and_or_or_in_its_condition(f, x, wrt):
    check_every_mode(f, (x, 0.9), wrt)


def test_while_with_and_by_hand():
    x = np.array([2.0, -0.4, 0.75, 1.1])
    # Two steps: sum((x a^2)^2) = a^4 sum(x^2), whose derivative in a is 4 a^3 sum(x^2).
    expected = 4 * 0.9 ** 3 * np.sum(x * x)
    gradient = autotrace.grad(scale_while_sum_large_and_few_steps, wrt=1)
    assert gradient(x, 0.9) == pytest.approx(expected)
    assert autotrace.function(gradient)(x, 0.9) == pytest.approx(expected)


def mixed_and_or_not(x, y):
    total = 0.0
    for i in range(5):
        if not (x > 0.0 and i % 2 == 0) or y < -1.0 and i > 2:
            total = total + x * y
        elif x > 1.0 or not i < 3:
            total = total + y * y * x
        else:
            total = total - x
    return total


@pytest.mark.parametrize("x, y", [(0.5, 2.0), (1.5, -2.0), (-0.7, 0.3), (2.0, -1.5)])
def test_mixed_and_or_and_not_in_an_elif_chain_inside_a_loop(x, y):
    check_every_mode(mixed_and_or_not, (np.array(x), np.array(y)), (0, 1))


def nested_conditions(x):
    y = x * 1.0
    for i in range(3):
        for j in range(3):
            if np.sum(y) > 0.0 and (i < 2 or j == 0):
                if j > 0 and np.max(y) < 10.0:
                    y = y * x
                else:
                    y = y + 1.0
            elif np.sum(y) < -1.0 or i == j:
                y = np.sin(y)
    return np.sum(y)


@pytest.mark.parametrize("x", [np.array([0.5, 0.6]), np.array([-0.8, -0.9]),
                               np.array([1.2, -0.3])])
def test_and_or_in_nested_ifs_in_nested_loops(x):
    check_every_mode(nested_conditions, (x,))


def flag_cleared_in_its_branch(x):
    y = 0.0
    running = True
    for i in range(4):
        if running:
            y = y + x * x
            running = x < 0.0 and i < 1
    return y


@pytest.mark.parametrize("x", [2.0, -2.0])
def test_a_branch_that_reassigns_its_own_condition(x):
    check_every_mode(flag_cleared_in_its_branch, (np.array(x),))


def boolean_value_kept(x):
    y = 0.0
    for i in range(4):
        keep = i < 1 or x > 1.0 and i < 3
        if keep:
            y = y + x * x * x
    return y


@pytest.mark.parametrize("x", [0.5, 2.0])
def test_and_or_result_kept_in_a_name_then_tested(x):
    check_every_mode(boolean_value_kept, (np.array(x),))


def comprehension_with_and(x):
    return sum([x * i for i in range(5) if x > 0.0 and i % 2 == 1])


def comprehension_with_or(x):
    return sum([x * x * i for i in range(5) if x > 2.0 or i < 2])


@pytest.mark.parametrize("f", [comprehension_with_and, comprehension_with_or])
@pytest.mark.parametrize("x", [0.5, 3.0])
def test_and_or_in_comprehension_conditions(f, x):
    # A Python float: traced, the conditions are known, and so is the length of the list.
    check_every_mode(f, (x,))


# --- early exits on traced values around lists of arrays ----------------------------------------

def rotate_until_large(x):
    for i in range(2):
        x = np.concatenate([x[1:], x[:1]])
        if np.sum(x) > 2.0:
            break
    return np.sum(x * np.arange(3.0))


def stack_until_large(x):
    for i in range(3):
        x = np.stack([x[1], x[0] * x[1]])
        if np.sum(x) > 2.0:
            break
    return np.sum(x * np.arange(2.0))


def break_in_nested_ifs(x):
    for i in range(4):
        if np.sum(x) > 1.0:
            if np.max(x) > 0.8:
                break
            x = x * 0.5
        x = np.concatenate([x[1:], x[:1] * 2.0])
    return np.sum(x * np.arange(3.0))


def rotate_while_small(x):
    while np.sum(x) < 3.0:
        x = np.concatenate([x[1:] * 1.5, x[:1] + 0.1])
    return np.sum(x * np.arange(3.0))


def concatenate_a_tuple_until_large(x):
    for i in range(3):
        pair = (x * 2.0, x[::-1])
        x = np.concatenate(pair)[:3] * 0.5
        if np.sum(x) > 5.0:
            break
    return np.sum(x * x)


def continue_or_rotate(x):
    total = 0.0
    for i in range(4):
        if np.sum(x) > 1.0 and i % 2 == 0:
            x = x * 0.5
            continue
        x = np.concatenate([x[1:], x[:1]])
        total = total + np.sum(x * np.arange(3.0))
    return total


def return_from_a_rotating_loop(x):
    for i in range(3):
        x = np.concatenate([x[1:], x[:1]]) * 1.1
        if np.sum(x * np.arange(3.0)) > 2.0:
            return np.sum(x ** 2)
    return np.sum(x)


def break_on_either_condition(x):
    for i in range(4):
        x = np.sin(x) + 0.5
        if np.sum(x) > 2.5 or np.min(x) < 0.0:
            break
    return np.sum(x)


EXITS = [rotate_until_large, stack_until_large, break_in_nested_ifs, rotate_while_small,
         concatenate_a_tuple_until_large, continue_or_rotate, return_from_a_rotating_loop,
         break_on_either_condition]
# Each function exits at the first iteration for some of these inputs, later or never for others.
EXIT_INPUTS = [[1.0, 2.0, 3.0], [0.1, 0.2, 0.3], [-1.0, 1.0, 1.5], [0.5, 0.4, 0.3],
               [0.9, 0.1, 0.3], [0.2, 0.3, 0.6], [3.0, 4.0, 5.0]]


def test_rotation_with_a_traced_break_by_hand():
    # [1, 2, 3] -> [2, 3, 1], whose sum passes 2.0: the loop breaks after one rotation,
    # and sum(x * [0, 1, 2]) = x1 * 2 + x2 * 0 + x0 * 1 after it.
    traced = autotrace.function(autotrace.grad(rotate_until_large))
    np.testing.assert_allclose(traced(np.array([1.0, 2.0, 3.0])), [2.0, 0.0, 1.0])


@pytest.mark.parametrize("f", EXITS)
def test_exits_on_traced_values_around_lists_of_arrays(f):
    for x in EXIT_INPUTS:
        x = np.array(x[:2]) / 2.0 if f is stack_until_large else np.array(x)
        check_every_mode(f, (x,))


# --- early returns, to second and third order in a later argument -------------------------------

def two_returns(x, a):
    if a > 0:
        return a * a * x
    return a * a * a * x


def returns_in_nested_ifs(x, a):
    if x > 0:
        if a > 1.0:
            return a * a * x
        y = a * x
        if y > 2.0:
            return np.sin(y) * a
    return a * a * a * x


def returns_in_a_loop(x, a):
    s = x
    for i in range(4):
        s = s * a + x
        if s > 3.0:
            return s * a
        if s < -3.0:
            return s * s
    return s


def return_in_a_while_loop(x, a):
    k = 0
    while k < 5:
        x = x * a
        if x > 4.0 and k > 0:
            return x * a
        k += 1
    return x


def returns_in_nested_loops(x, a):
    s = 0.0
    for i in range(3):
        for j in range(3):
            s = s + a * x * (i - j)
            if s > 2.0:
                if a > 1.0:
                    return s * a
                return s * x
    return s * s


def return_or_break_on_arrays(x, a):
    for i in range(3):
        x = np.tanh(x * a)
        if np.sum(x) > 1.0:
            return np.sum(x * x) * a
        if np.min(x) < -0.5:
            break
    return np.sum(x) * a


EARLY_RETURNS = [
    (two_returns, [(2.0, 3.0), (2.0, -3.0)]),
    (returns_in_nested_ifs, [(2.0, 3.0), (2.0, 0.5), (3.0, 0.9), (-1.0, 2.0)]),
    (returns_in_a_loop, [(1.0, 1.5), (0.1, 0.5), (-1.2, 2.0), (0.2, 1.1)]),
    (return_in_a_while_loop, [(1.0, 1.5), (1.0, 0.5), (5.0, 1.2)]),
    (returns_in_nested_loops, [(1.0, 1.5), (1.0, 0.5), (0.1, 0.2), (-1.0, 0.5)]),
    (return_or_break_on_arrays, [(np.array([1.0, 2.0]), 1.5), (np.array([0.1, 0.2]), 0.5),
                                 (np.array([-1.0, 0.2]), 1.5)]),
]


@pytest.mark.parametrize("f, inputs", EARLY_RETURNS, ids=[f.__name__ for f, _ in EARLY_RETURNS])
@pytest.mark.parametrize("wrt", [1, (0, 1)])
def test_early_returns_to_second_order(f, inputs, wrt):
    for args in inputs:
        check_every_mode(f, args, wrt)


@pytest.mark.parametrize("args", [(2.0, 0.5), (3.0, 0.9)])
def test_early_returns_in_nested_ifs_to_third_order(args):
    check_grads(returns_in_nested_ifs, args, 1, order=3, modes=("reverse", "forward"))


def test_grad_of_grad_in_a_later_argument_with_returns_in_nested_ifs_by_hand():
    # x > 0, a <= 1, a x <= 2: the last return, a^3 x, whose second derivative in a is 6 a x.
    second = autotrace.grad(autotrace.grad(returns_in_nested_ifs, wrt=1), wrt=1)
    assert second(2.0, 0.5) == pytest.approx(6.0)


def assigned_in_one_branch_read_in_others(x, a):
    s = x * 1.0
    if a > 0.0:
        y = x * 2.0
    if a > 1.0:
        s = y * 3.0 + s
    s = s * x
    if a > 0.5:
        s = s + y * x
    return s


@pytest.mark.parametrize("a", [2.0, 0.7, 0.2, -1.0])
def test_a_variable_assigned_in_one_branch_and_read_in_later_ones(a):
    check_every_mode(assigned_in_one_branch_read_in_others, (1.5, a), (0, 1))


# --- chained comparisons: an `and` of their links -----------------------------------------------

def chained_in_a_loop(x):
    y = 0.0
    for i in range(4):
        if 0.0 < x * i < 3.0 and not i == 2:
            y = y + x ** 3
        if -1.0 < np.sin(x * i) <= 0.5 < 2.0:
            y = y + x
    return y


@pytest.mark.parametrize("x", [0.5, 1.2, 4.0])
def test_chained_comparisons_on_traced_values_in_a_loop(x):
    check_every_mode(chained_in_a_loop, (np.array(x),))


def test_chained_comparisons_in_a_traced_function():
    evaluations = []

    def middle(x):
        evaluations.append("evaluated")  # (a traced value kept past the call is refused)
        return x * 2.0

    def f(x, low):
        y = np.zeros_like(x)
        if low < middle(x) <= 4.0 < 5.0:
            y = y + x
        inside = -1.0 < x < low
        return y + np.where(inside, x, 3.0)

    traced = autotrace.function(f)
    for x in (0.1, 1.2, 2.5, -2.0):
        assert traced(np.array(x), 1.0) == f(np.array(x), 1.0)
    # The middle operand is evaluated once per trace: one trace, one evaluation.
    assert traced.trace_count == 1 and len(evaluations) == 1 + 4



# --- forward over reverse, traced ---------------------------------------------------------------

@pytest.mark.parametrize("f, args, wrt", [
    (scale_while_sum_large_and_few_steps, (np.array([2.0, -0.4, 0.75, 1.1]), 0.9), 0),
    (scale_while_sum_large_or_few_steps, (np.array([5.0, 1.0, 2.0, 0.5]), 0.9), 0),
    (break_on_either_condition, (np.array([0.6, 0.4, 0.3]),), 0),
    (rotate_until_large, (np.array([1.0, 2.0, 3.0]),), 0),
])
def test_traced_hessian_vector_products_through_traced_loops(f, args, wrt):
    # The tangent code of the gradient pushes tangents beside the saved values, on a stack
    # of its own that the trace keeps in the graph too.
    v = np.linspace(0.5, -0.5, args[wrt].size)
    expected = autotrace.hvp(f, wrt)(*args, v)
    gradient = autotrace.grad(f, wrt)
    eps = 1e-6
    moved = [list(args), list(args)]
    moved[0][wrt], moved[1][wrt] = args[wrt] + eps * v, args[wrt] - eps * v
    np.testing.assert_allclose(expected, (gradient(*moved[0]) - gradient(*moved[1])) / (2 * eps),
                               rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(autotrace.function(autotrace.hvp(f, wrt))(*args, v), expected,
                               rtol=1e-12, atol=1e-14)


# --- what a trace cannot follow -----------------------------------------------------------------

def scale_until_large(x):
    while x < 2.0:
        x = x * 1.5 + 0.1
    return x * x


def test_a_traced_second_derivative_through_a_traced_loop_traces():
    second = autotrace.grad(autotrace.grad(scale_until_large))
    traced = autotrace.function(second)
    # Four steps scale x by 1.5^4, so the second derivative of x^2 is 2 * 1.5^8; from 0.5,
    # three steps; from 2.5, none.
    for x, steps in [(0.3, 4), (0.5, 3), (2.5, 0), (0.3, 4)]:
        assert second(np.array(x)) == pytest.approx(2 * 1.5 ** (2 * steps))
        assert traced(np.array(x)) == pytest.approx(2 * 1.5 ** (2 * steps), rel=1e-14)
    assert traced.trace_count == 1


def test_the_loops_of_derivatives_of_any_order_know_the_users_line():
    loop_line = scale_until_large.__code__.co_firstlineno + 1
    derivative = scale_until_large
    for order in range(3):
        derivative = autotrace.grad(derivative)
        # The forward loop, its adjoint, and at higher orders their adjoints in turn; the
        # other statements the derivative runs name the user's lines of the function too.
        places = list(derivative_record(derivative).lines.values())
        lines, first = inspect.getsourcelines(scale_until_large)
        assert set(places) <= {(__file__, first + i) for i in range(len(lines))}
        assert places.count((__file__, loop_line)) >= 2 ** (order + 1)


def test_a_traced_third_derivative_through_a_traced_loop_is_refused_at_the_users_line():
    third = autotrace.grad(autotrace.grad(autotrace.grad(scale_until_large)))
    assert third(np.array(0.3)) == 0.0  # eagerly: the third derivative of 1.5^8 x^2 + ...
    with pytest.raises(ControlFlowError) as raised:
        autotrace.function(third)(np.array(0.3))
    first_line, reason = str(raised.value).splitlines()[:2]
    loop_line = scale_until_large.__code__.co_firstlineno + 1
    assert first_line.startswith(f"{__file__}:{loop_line}: while x < 2.0: (derivative code "
                                 f"<autotrace dddscale_until_large")
    assert reason.strip() == (
        "'_stack1' holds the values this derivative saves, and it appends to or pops from it "
        "in this while loop on a traced value, in a way a trace cannot follow (first and "
        "second derivatives it can). Compute this derivative eagerly, or trace one of lower "
        "order, e.g. autotrace.function(autotrace.grad(f))")


def keep_every_step(x):
    steps = [x]
    while x < 2.0:
        x = x * 1.5 + 0.1
        steps.append(x)
    return steps[0] * x


def test_a_list_grown_in_a_traced_loop_is_refused_at_the_users_line_saying_what_to_do():
    with pytest.raises(ControlFlowError) as raised:
        autotrace.function(autotrace.grad(keep_every_step))(np.array(0.3))
    first_line, reason = str(raised.value).splitlines()[:2]
    loop_line = keep_every_step.__code__.co_firstlineno + 2
    assert first_line.startswith(f"{__file__}:{loop_line}: while x < 2.0: (derivative code "
                                 f"<autotrace dkeep_every_step")
    assert reason.strip() == (
        "'steps' is a list whose length here depends on a traced value (this derivative "
        "appends to or pops from it in this while loop); a trace needs its length. Give the "
        "loop Python bounds (it then unrolls), keep the values in an array of known shape "
        "instead of a list, or compute this derivative eagerly")


# --- variables a loop body assigns before reading them ------------------------------------------
# Each iteration assigns `t` (or a generated continue flag) before it reads it, so the loop does
# not carry it: a traced if that assigns it in one branch, and reads it only there, is valid.

def temporary_in_a_branch(x, a):
    for i in range(2):
        if np.sum(x) > 0:
            t = x * a
            x = t
    return np.sum(np.sin(x))


def temporary_after_a_break(x, a):
    for i in range(3):
        if np.sum(x) > 5:
            break
        t = x * a
        x = t + 1
    return np.sum(np.sin(x))


def temporary_in_a_traced_while(x, a):
    k = 0
    while np.sum(x) < 3 and k < 2:
        k += 1
        if np.sum(x) > 0:
            t = x * a
            x = t + 0.5
        else:
            x = x + 1.0
    return np.sum(np.sin(x))


def return_in_a_traced_while_in_a_loop(x, a):
    for i in range(3):
        k = 0
        while a / (1.0 + np.max(x) ** 2) > 0.94 and k < 2:
            k += 1
            if np.mean(x) < 0.56:
                return np.sum(x ** 2) + np.sum(x) * a
            x = x * 0.5
    return np.sum(np.sin(x)) + np.sum(x) * a


def counter_read_by_its_own_increment(x, a):
    k = 0
    while np.sum(x) < 3:
        k += 1  # read by the increment alone: still carried from one iteration to the next
        x = x * a + 0.5
    return np.sum(np.sin(x))


@pytest.mark.parametrize("f", [temporary_in_a_branch, temporary_after_a_break,
                               temporary_in_a_traced_while, return_in_a_traced_while_in_a_loop,
                               counter_read_by_its_own_increment])
@pytest.mark.parametrize("x, a", [(np.array([0.3, -0.2, 0.5]), 1.3),
                                  (np.array([-0.4, 0.1, -0.9]), 2.0),
                                  (np.array([0.2, 0.1, 0.3]), 3.0)])
def test_loop_temporaries_assigned_in_one_branch(f, x, a):
    assert autotrace.function(f)(x, a) == pytest.approx(f(x, a))
    check_every_mode(f, (x, a), wrt=(0, 1))


# --- returns under ifs nested in traced ifs ----------------------------------------------------

def return_two_ifs_deep(x, a):
    v = x * a
    if a > 0.5:
        if np.sum(x) > 0.5:
            return np.sum(v * x)
        v = v * 3.0
    v = v + x
    return np.sum(v * v) * a


def return_under_an_and(x, a):
    v = x * 1.0
    if a > 0.2:
        if (a - 0.6) > -0.86 and np.concatenate([x[2:], x[:2]])[-3] > -0.54:
            return np.sum(v ** 2) * a
    else:
        v = v * a
    return np.sum(np.sin(v)) * a


def return_under_a_python_if_in_a_traced_if(x, a, n=2):
    s = np.sum(x * a)
    if s > 1.0:
        if n > 1:
            return s * s
        s = s * 2.0
    t = s + a
    return t * a


def return_under_a_reduction_of_zeros(x, a):
    if a > 0.0:
        if (x - x).sum() < 0.0:
            return np.sum(x) * a
    return np.sum(x * x) * a


NESTED_RETURNS = [
    (return_two_ifs_deep, [np.array([1.0, 2.0]), np.array([-1.0, 0.5])], [0.9, 0.2]),
    (return_under_an_and, [np.array([1.0, 2.0, 3.0, 4.0]), np.array([1.0, -2.0, -3.0, 4.0])],
     [0.9, 0.1]),
    (return_under_a_python_if_in_a_traced_if, [np.array([1.0, 2.0]), np.array([-1.0, 0.5])],
     [0.9, -0.4]),
    (return_under_a_reduction_of_zeros, [np.array([1.0, 2.0])], [0.9, -0.4]),
]
# The traced gradient of a return under a Python if inside a traced if is still refused: the
# adjoint sweep's `if not _returned` is traced where the primal's was a Python value, so its
# pops do not match the pushes (a limit of traced gradients' saved values, not of the returns).
TRACED_GRADIENT_REFUSED = {return_under_a_python_if_in_a_traced_if}


@pytest.mark.parametrize("f, xs, as_", NESTED_RETURNS, ids=[f.__name__ for f, *_ in NESTED_RETURNS])
def test_returns_under_ifs_nested_in_traced_ifs_trace_once(f, xs, as_):
    traced = autotrace.function(f)
    traced_forward = autotrace.function(autotrace.forward(f, wrt=(0, 1)))
    eager_forward = autotrace.forward(f, wrt=(0, 1))
    for x in xs:
        for a in as_:
            args, tangents = (x, np.array(a)), (np.ones_like(x), np.array(0.5))
            assert traced(*args) == pytest.approx(f(*args))
            value, tangent = traced_forward(*args, tangent=tangents)
            expected_value, expected_tangent = eager_forward(*args, tangent=tangents)
            assert value == pytest.approx(expected_value)
            assert tangent == pytest.approx(expected_tangent)
            if f in TRACED_GRADIENT_REFUSED:
                check_grads(f, args, (0, 1), order=2, modes=("reverse", "forward"))
            else:
                check_every_mode(f, args, wrt=(0, 1))
    assert traced.trace_count == 1
    assert traced_forward.trace_count == 1


# --- a loop that turns traced after some iterations, which wrote into an array in place --------
# The traced gradient runs such a loop again from its start in the graph (the stacks of saved
# values must be the graph's); the arrays its first iterations changed in place must start
# over as they were before it, or those iterations count twice.

def scale_an_item_until_the_sum_is_large(x):
    v = x * 1.0
    s = 0.0  # a Python float: the first test is a Python value, the next ones are traced
    while s < 1.01:
        s = s + 1.5 + np.sum(v)
        v[2] *= x[1]
    return np.sum(v)


def scale_an_item_of_a_constant_until_the_sum_is_large(x):
    v = np.ones(4)  # a NumPy array while tracing: the first iteration changes it in NumPy
    s = 0.0
    while s < 1.01:
        s = s + 1.5 + np.sum(x)
        v[1] *= 3.0
    return np.sum(v * x)


def scale_an_item_until_a_traced_break(x):
    v = x * 1.0
    for i in range(3):
        v[2] *= x[1]
        if np.sum(v) > -5.0:  # the first iteration's test is traced: the loop ends after it
            break
    return np.sum(v * v)


def test_a_loop_turning_traced_after_an_in_place_write_by_hand():
    # One iteration: v = [x0, x1, x2 * x1, x3], and d sum(v) / dx = [1, 1 + x2, x1, 1].
    x = np.array([-0.9, 1.2, -0.5, 0.5])
    expected = [1.0, 0.5, 1.2, 1.0]
    np.testing.assert_allclose(autotrace.grad(scale_an_item_until_the_sum_is_large)(x),
                               expected)
    traced = autotrace.function(autotrace.grad(scale_an_item_until_the_sum_is_large))
    np.testing.assert_allclose(traced(x), expected)
    np.testing.assert_allclose(x, [-0.9, 1.2, -0.5, 0.5])
    # One iteration: v = [1, 3, 1, 1].
    traced = autotrace.function(
        autotrace.grad(scale_an_item_of_a_constant_until_the_sum_is_large))
    np.testing.assert_allclose(traced(x), [1.0, 3.0, 1.0, 1.0])


@pytest.mark.parametrize("f", [scale_an_item_until_the_sum_is_large,
                               scale_an_item_of_a_constant_until_the_sum_is_large,
                               scale_an_item_until_a_traced_break])
@pytest.mark.parametrize("x", [[-0.9, 1.2, -0.5, 0.5], [0.3, -0.7, 1.1, 0.2]])
def test_a_loop_turning_traced_after_an_in_place_write(f, x):
    x = np.array(x)
    assert autotrace.function(f)(x) == pytest.approx(f(x.copy()))
    check_every_mode(f, (x,))
