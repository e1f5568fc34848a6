"""Control flow on traced values, converted before tracing: `if`, `while` and `for` on arrays
become graph `cond` and `while` ops, so one trace serves inputs that take different paths."""
import traceback

import numpy as np
import pytest

import autotrace
from autotrace.runtime.tracing.control import ControlFlowError
from tests.numeric import central_difference

positive = np.array([1.0, 2.0, 3.0])
negative = -positive


def data_dependent_if(x):
    if np.sum(x) > 0:
        y = np.sin(x) * 2.0
    else:
        y = x ** 3
    return np.sum(y * y)


def data_dependent_while(x):
    y = x
    while np.sum(y * y) < 100.0:
        y = y * 1.5 + 0.25
    return np.sum(y ** 2)


def data_dependent_for(x):
    total = 0.0
    for row in x:
        if np.max(row) > 0.5:
            total = total + np.sum(np.tanh(row))
        else:
            total = total - np.sum(row * row)
    return total


def test_if_traces_once_and_takes_either_path():
    traced = autotrace.function(data_dependent_if)
    for x in (positive, negative, positive * 0.5, negative * 2.0):
        np.testing.assert_allclose(traced(x), data_dependent_if(x), rtol=1e-12)
    assert traced.trace_count == 1
    assert "cond[branches=(" in str(traced.graph(positive))


def test_gradient_of_if_traces_once_and_matches_finite_differences():
    traced = autotrace.function(autotrace.grad(data_dependent_if))
    for x in (positive, negative):
        np.testing.assert_allclose(traced(x), central_difference(data_dependent_if, x),
                                   rtol=1e-6)
    assert traced.trace_count == 1


def test_while_traces_once_for_every_trip_count():
    traced = autotrace.function(data_dependent_while)
    small, large = np.array([0.1, 0.2]), np.array([3.0, 4.0])
    for x in (small, large, np.array([-1.0, 0.5])):
        np.testing.assert_allclose(traced(x), data_dependent_while(x), rtol=1e-12)
    assert traced.trace_count == 1
    assert "while[loop=(" in str(traced.graph(small))


def test_gradient_of_while_traces_once_for_every_trip_count():
    traced = autotrace.function(autotrace.grad(data_dependent_while))
    for x in (np.array([0.1, 0.2]), np.array([3.0, 4.0]), np.array([0.01, -0.02])):
        np.testing.assert_allclose(traced(x), central_difference(data_dependent_while, x),
                                   rtol=1e-6)
    assert traced.trace_count == 1
    graph = str(traced.graph(np.array([0.1, 0.2])))
    # The forward loop saves each iteration's value on a stack the adjoint loop pops.
    assert graph.count("while[loop=(") == 2
    assert "stack_push" in graph and "stack_pop" in graph


def test_gradient_of_a_traced_function_differentiates_its_source():
    gradient = autotrace.grad(autotrace.function(data_dependent_while))
    for x in (np.array([0.1, 0.2]), np.array([3.0, 4.0])):
        np.testing.assert_allclose(gradient(x), central_difference(data_dependent_while, x),
                                   rtol=1e-6)


def test_graphs_with_stacks_run_from_several_threads_at_once():
    import threading
    traced = autotrace.function(autotrace.grad(data_dependent_while))
    inputs = [np.array([0.1, 0.2]) * (k + 1) for k in range(8)]
    expected = [autotrace.grad(data_dependent_while)(x) for x in inputs]
    results = [None] * len(inputs)

    def run(k):
        for _ in range(20):
            results[k] = traced(inputs[k])
    threads = [threading.Thread(target=run, args=(k,)) for k in range(len(inputs))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    for got, want in zip(results, expected):
        np.testing.assert_allclose(got, want, rtol=1e-12)
    assert traced.trace_count == 1


def test_for_over_a_traced_array_is_one_loop_op_with_a_cond_inside():
    traced = autotrace.function(data_dependent_for)
    x = np.array([[1.0, 0.2], [0.1, 0.3], [0.9, -2.0]])
    for value in (x, -x, x * 0.1):
        np.testing.assert_allclose(traced(value), data_dependent_for(value), rtol=1e-12)
    assert traced.trace_count == 1
    graph = str(traced.graph(x))
    assert graph.count("while[loop=(") == 1 and graph.count("cond[branches=(") == 1


def test_gradient_of_for_with_a_branch_traces_once():
    traced = autotrace.function(autotrace.grad(data_dependent_for))
    x = np.array([[1.0, 0.2], [0.1, 0.3], [0.9, -2.0]])
    for value in (x, -x):
        np.testing.assert_allclose(traced(value), central_difference(data_dependent_for, value),
                                   rtol=1e-6)
    assert traced.trace_count == 1


def test_python_conditions_still_unroll():
    @autotrace.function
    def power(x, n):
        result = np.ones_like(x)
        while n > 0:
            result = result * x
            n -= 1
        return result
    np.testing.assert_allclose(power(positive, 3), positive ** 3)
    assert "while" not in str(power.graph(positive, 3))


def test_python_numbers_in_a_traced_loop_widen_until_their_dtypes_settle():
    @autotrace.function
    def f(x):
        a = 0
        b = 0
        while np.sum(x) < 10.0:
            x = x * 2.0
            b = b + a      # becomes a float only once `a` is traced as one
            a = a + 0.5
        return x, a, b
    for x in (np.array([1.0, 2.0]), np.array([0.1, 0.2])):
        steps = 0
        while np.sum(x * 2.0 ** steps) < 10.0:
            steps += 1
        got_x, got_a, got_b = f(x)
        np.testing.assert_allclose(got_x, x * 2.0 ** steps)
        assert got_a == 0.5 * steps and got_b == 0.25 * steps * (steps - 1)
        assert got_a.dtype == got_b.dtype == np.float64
    assert f.trace_count == 1


def test_range_with_a_traced_bound_is_a_loop_op():
    @autotrace.function
    def partial_sums(x, n):
        total = np.zeros_like(x)
        for i in range(n):
            total = total + x * i
        return total
    for n in (0, 3, 5):
        np.testing.assert_allclose(partial_sums(positive, np.array(n)),
                                   positive * sum(range(n)))
    assert partial_sums.trace_count == 1


def test_early_return_break_and_continue_on_traced_values():
    @autotrace.function
    def clipped_norm(x):
        if np.sum(x * x) > 4.0:
            return x / np.sqrt(np.sum(x * x)) * 2.0
        return x

    @autotrace.function
    def sum_until_large(x):
        total = 0.0
        for value in x:
            if value < 0:
                continue
            total = total + value
            if total > 3.0:
                break
        return total
    for x in (np.array([0.5, 0.5]), np.array([3.0, 4.0])):
        expected = x / np.linalg.norm(x) * 2.0 if np.sum(x * x) > 4.0 else x
        np.testing.assert_allclose(clipped_norm(x), expected)
    for x, expected in ((np.array([1.0, -5.0, 1.5]), 2.5),
                        (np.array([2.0, 2.0, 7.0]), 4.0), (np.array([-1.0, 9.0, 1.0]), 9.0)):
        assert sum_until_large(x) == expected
    assert clipped_norm.trace_count == 1 and sum_until_large.trace_count == 1


def test_boolean_operators_and_conditional_expressions():
    @autotrace.function
    def f(x):
        inside = np.min(x) > -1.0 and not np.max(x) > 1.0
        return x * 2.0 if inside or np.sum(x) > 100.0 else -x
    for x in (np.array([0.5, -0.5]), np.array([2.0, 0.0]), np.array([200.0, 0.0])):
        inside = np.min(x) > -1.0 and not np.max(x) > 1.0
        expected = x * 2.0 if inside or np.sum(x) > 100.0 else -x
        np.testing.assert_allclose(f(x), expected)
    assert f.trace_count == 1


def helper_with_branch(x):
    if np.mean(x) > 0:
        return x + 1.0
    return x - 1.0


def test_functions_called_from_a_traced_function_are_converted_too():
    traced = autotrace.function(lambda x: helper_with_branch(x) * 2.0)
    np.testing.assert_allclose(traced(positive), (positive + 1.0) * 2.0)
    np.testing.assert_allclose(traced(negative), (negative - 1.0) * 2.0)
    assert traced.trace_count == 1


def test_arrays_made_inside_and_filled_with_traced_values():
    @autotrace.function
    def hidden_states(x, W):
        h = np.zeros((x.shape[0] + 1, W.shape[0]))
        for t in range(x.shape[0]):
            h[t + 1] = np.tanh(h[t] @ W + x[t])
        return np.array([h[-1], h[1]])
    rng = np.random.default_rng(0)
    x, W = rng.normal(size=(4, 3)), rng.normal(size=(3, 3)) * 0.5
    h = np.zeros((5, 3))
    for t in range(4):
        h[t + 1] = np.tanh(h[t] @ W + x[t])
    np.testing.assert_allclose(hidden_states(x, W), np.array([h[-1], h[1]]))


def test_mask_assignment_of_a_number_writes_the_selected_elements():
    @autotrace.function
    def relu(x):
        y = x.copy()
        y[y < 0] = 0.0
        return y
    np.testing.assert_array_equal(relu(np.array([-1.0, 2.0, -3.0])), [0.0, 2.0, 0.0])


def test_a_traced_boolean_mask_selects_a_number_of_elements_known_at_run_time():
    @autotrace.function
    def positive_energy(x):
        return np.sum(x[x > 0] ** 2)
    for x in (np.array([1.0, -2.0, 3.0]), np.array([-1.0, -2.0, -3.0]), positive):
        assert positive_energy(x) == np.sum(x[x > 0] ** 2)
    assert positive_energy.trace_count == 1
    assert "mask_select" in str(positive_energy.graph(positive))
    assert "f64[?]" in str(positive_energy.graph(positive))


def count_down_by_two(x, n):
    i = -1
    for i in range(n, 0, -2):
        x = x + i
    return x, i


def last_row(x):
    row = np.zeros(2)
    for row in x:
        pass
    return row


def test_a_loop_variable_assigned_before_a_traced_loop_keeps_its_last_value():
    traced = autotrace.function(count_down_by_two)
    for n, expected_x, expected_i in ((5, 10.0, 1), (4, 7.0, 2), (0, 1.0, -1)):  # last item, or
        x, i = traced(np.ones(2), np.int64(n))                                   # the value before
        np.testing.assert_array_equal(x, [expected_x] * 2)
        assert i == expected_i == count_down_by_two(np.ones(2), n)[1]
    assert traced.trace_count == 1
    rows = np.arange(6.0).reshape(3, 2)
    np.testing.assert_array_equal(autotrace.function(last_row)(rows), [4.0, 5.0])


def test_a_loop_variable_used_after_a_traced_loop_needs_a_value_before_it():
    def no_value_before(x, n):
        for i in range(n):
            x = x + 1
        return x, i
    header = "for i in range(n):"
    with pytest.raises(ControlFlowError) as raised:
        autotrace.function(no_value_before)(positive, np.int64(3))
    assert str(raised.value).startswith(
        f"{__file__}:{line_of(no_value_before, header)}: {header}\n  the loop variable 'i' is "
        f"used after this for loop on a traced value, which may run no iteration: assign it "
        f"before the loop (e.g. i = 0), so it has a value then\n")


def grow_until_large(x):
    steps = 0
    while steps < 10:
        x = x * 1.5
        if np.sum(x) > 20.0:
            break
        steps += 1
    return x, steps


def test_a_counter_from_a_traced_loop_is_a_numpy_scalar_whichever_path_gave_it():
    traced = autotrace.function(grow_until_large)
    for x, expected in ((np.array([1.0, 2.0]), 4), (np.array([6.0, 7.0]), 1),
                        (np.array([100.0, 1.0]), 0)):
        _, steps = traced(x)
        assert type(steps) is np.int64 and steps == expected == grow_until_large(x)[1]
        assert {steps: "hashable"}  # as the int eager code returns is
    assert traced.trace_count == 1


# Containers of the module or of a closure, changed while tracing: Python side effects.
lazy_constants = {}
calls_traced = []


def scaled_by_lazy_constant(x):
    if "scale" not in lazy_constants:  # set up on first use
        lazy_constants["scale"] = 2.0
    for i in range(2):
        calls_traced.append(i)
    lazy_constants["last"] = len(calls_traced)  # outside control flow, in a converted function
    return np.sum(x) * lazy_constants["scale"]


def test_global_and_closure_containers_change_in_python_control_flow():
    traced = autotrace.function(scaled_by_lazy_constant)
    assert traced(positive) == 12.0 and traced(negative) == -12.0
    assert lazy_constants == {"scale": 2.0, "last": 2} and calls_traced == [0, 1]  # one trace

    def make():
        log = []

        def f(x):
            for i in range(2):
                log.append(i)
            if np.sum(x) > 0:  # a traced condition: its branch runs once, while tracing
                log.append("branch")
            return x * len(log)
        return f, log
    f, log = make()
    traced = autotrace.function(f)
    np.testing.assert_array_equal(traced(positive), positive * 3)
    np.testing.assert_array_equal(traced(negative), negative * 3)
    assert log == [0, 1, "branch"]


# --- what cannot be converted: errors that name the line and the variable ----------------------

def defined_in_one_branch(x):
    if np.sum(x) > 0:
        y = x * 2.0
    return y


def loop_variable_changes_shape(x):
    while np.sum(x) < 100.0:
        x = np.concatenate([x, x])
    return x


def first_assigned_in_loop(x):
    while np.sum(x) < 100.0:
        x = x * 2.0
        last = x
    return last


def branches_disagree(x):
    if np.sum(x) > 0:
        y = x
    else:
        y = np.sum(x)
    return y


def line_of(function, text):
    import inspect
    lines, first = inspect.getsourcelines(function)
    return first + next(i for i, line in enumerate(lines) if text in line)


@pytest.mark.parametrize("function, header, message", [
    (defined_in_one_branch, "if np.sum(x) > 0:",
     "variable 'y' is assigned in the true branch only, and used after the if. A traced "
     "condition runs both branches in the graph: assign 'y' in both branches, or before the if"),
    (loop_variable_changes_shape, "while np.sum(x) < 100.0:",
     "variable 'x' changes from f64[3] to f64[6] in one iteration of this while loop on a "
     "traced value; a traced loop must keep each variable's shape and dtype"),
    (first_assigned_in_loop, "while np.sum(x) < 100.0:",
     "variable 'last' is first assigned inside this while loop on a traced value, and used "
     "after it. Assign it before the loop (e.g. last = np.zeros_like(...))"),
    (branches_disagree, "if np.sum(x) > 0:",
     "variable 'y' is f64[3] after the true branch and f64[] after the false branch; both "
     "branches must give it the same shape and dtype"),
])
def test_unconvertible_control_flow_names_the_line_and_the_variable(function, header, message):
    where = f"{__file__}:{line_of(function, header)}: {header}"
    with pytest.raises(ControlFlowError) as raised:
        autotrace.function(function)(positive)
    text = str(raised.value)
    assert text.startswith(where + "\n  "), text
    assert message in text


def test_an_undefined_variable_read_in_a_branch_says_so():
    def reads_before_assignment(x):
        if np.sum(x) > 0:
            y = x
        else:
            y = z * 2.0  # noqa: F821 - read before any assignment
        z = y
        return z
    with pytest.raises(NameError, match="cannot access (local|free) variable 'z' where it is "
                                        "not associated with a value"):
        autotrace.function(reads_before_assignment)(positive)


def test_tracebacks_point_at_the_users_lines():
    def fails_in_branch(x):
        if np.sum(x) > 0:
            y = x @ np.ones((5, 5))
        else:
            y = x
        return y
    with pytest.raises(ValueError) as raised:
        autotrace.function(fails_in_branch)(positive)
    frames = [(frame.filename, frame.lineno, frame.name)
              for frame in traceback.extract_tb(raised.tb)]
    # named as the user's function, not as the branch function it became (_if_true1)
    assert (__file__, line_of(fails_in_branch, "x @ np.ones"), "fails_in_branch") in frames


def loop_with_else(x):
    while np.sum(x) < 10.0:
        x = x * 2.0
    else:
        x = x + 1.0
    return x


def range_loop_with_else(x, n):
    for i in range(n):
        x = x * 2.0
    else:
        x = x + 1.0
    return x


def test_loops_with_else_are_converted():
    # (the else body runs after the loop, under a flag where the loop breaks: loop_else.py)
    x = np.array([0.5, 1.5])
    np.testing.assert_allclose(autotrace.function(loop_with_else)(x), loop_with_else(x))
    np.testing.assert_allclose(autotrace.function(range_loop_with_else)(x, np.int64(2)),
                               range_loop_with_else(x, 2))


def larger_of(x):
    return max(np.sum(x), 1.0)


def smaller_of(x):
    return min(np.sum(x), 1.0)


def as_float(x):
    return float(np.sum(x))


def as_item(x):
    return np.sum(x).item()


positive_calls = 0


def count_positive(x):
    global positive_calls
    if np.sum(x) > 0:
        positive_calls = positive_calls + 1
    return x


def in_a_loop(x, n):
    for i in range(n):
        x = x + float(x[0])
    return x


def mismatched_product(x):
    y = np.sin(x)
    return y @ x


@pytest.mark.parametrize("function, args, kind, message, line", [
    (count_positive, (positive,), ControlFlowError,
     f"{__file__}:{line_of(count_positive, 'if np')}: if np.sum(x) > 0:\n  this if statement "
     f"assigns the global or nonlocal variable 'positive_calls', which cannot be converted to "
     f"a graph cond when its condition is traced; pass the value in and return the new one "
     f"instead", "if np.sum(x) > 0:"),
    (larger_of, (positive,), TypeError,
     "built-in max() compares values as Python values, and a traced value has none while "
     "tracing: use np.maximum(a, b) for two values, or np.max(x) over an array's elements",
     "return max(np.sum(x), 1.0)"),
    (smaller_of, (positive,), TypeError,
     "built-in min() compares values as Python values, and a traced value has none while "
     "tracing: use np.minimum(a, b) for two values, or np.min(x) over an array's elements",
     "return min(np.sum(x), 1.0)"),
    (as_float, (positive,), TypeError,
     "cannot convert a traced value to a Python float: a traced value has no Python value "
     "while tracing (it has one only when the graph runs). Keep it an array: compute with "
     "NumPy functions (np.where to choose between values, autotrace.cond for a branch) and "
     "return it, or leave this function untraced", "return float(np.sum(x))"),
    (as_item, (positive,), TypeError,
     "cannot convert a traced value to a Python scalar (.item()): a traced value has no Python "
     "value while tracing (it has one only when the graph runs). Index it instead, which keeps "
     "a traced NumPy scalar: x.ravel()[0] for x.item(), x.ravel()[i] for x.item(i), x[i, j] "
     "for x.item(i, j)", "return np.sum(x).item()"),
    (in_a_loop, (positive, np.int64(2)), TypeError,
     "cannot convert a traced value to a Python float: a traced value has no Python value "
     "while tracing (it has one only when the graph runs). Keep it an array: compute with "
     "NumPy functions (np.where to choose between values, autotrace.cond for a branch) and "
     "return it, or leave this function untraced", "x = x + float(x[0])"),
    (mismatched_product, (np.ones((2, 3)),), ValueError,
     "matmul: shapes (2, 3) and (2, 3) do not match in their core dimension (3 != 2)",
     "return y @ x"),
])
def test_what_cannot_trace_says_why_and_names_the_users_line(function, args, kind, message,
                                                              line):
    with pytest.raises(kind) as raised:
        autotrace.function(function)(*args)
    assert str(raised.value) == (f"{message}\n  File \"{__file__}\", line "
                                 f"{line_of(function, line)}, in {function.__name__}\n    {line}")


def counts_until_a_large_item(a):
    i = 0
    while i < a.shape[0] and a[i] < 100.0:
        i = i + 1
    return i


def counts_until_a_small_item(a):
    i = 0
    while not (i >= a.shape[0] or a[i] < 0.0):
        i = i + 1
    return i


@pytest.mark.parametrize("function", [counts_until_a_large_item, counts_until_a_small_item])
@pytest.mark.parametrize("a", [np.array([1.0, 2.0, 3.0]), np.array([1.0, 200.0, -3.0]),
                               np.array([-1.0, 2.0, 3.0])], ids=["all", "middle", "first"])
def test_a_traced_and_or_reads_its_right_side_only_where_python_would(function, a):
    # `i < 3 and a[i] ...` at i = 3 would index past the end: the right side of a traced
    # `and` (`or`) is computed under a cond, where the left is true (false)
    traced = autotrace.function(function)
    assert int(traced(a)) == function(a)
    assert int(traced(a[::-1].copy())) == function(a[::-1].copy())  # the cached graph
