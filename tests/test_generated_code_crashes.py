"""Programs whose derivative or traced code once crashed inside generated code (a NumPy error
from a line the user never wrote). Each now gives NumPy's values and the derivatives finite
differences give, eagerly and traced, or a refusal naming the user's file and line."""
import inspect
import linecache

import numpy as np
import pytest

import autotrace
from autotrace.testing import check_grads
from tests.numeric import central_difference

POINTS = [np.array([0.3, -0.7, 1.1]), np.array([-0.4, 0.6, -1.3])]


def assert_right_in_every_mode(f, points=POINTS):
    """At each point, f traced gives f's value, and its gradient eagerly, traced, of the traced
    f and in forward mode (a tangent per axis) gives central differences, from one trace."""
    traced, traced_gradient = autotrace.function(f), autotrace.function(autotrace.grad(f))
    gradient_of_traced, tangent = autotrace.grad(traced), autotrace.forward(f)
    for x in points:
        expected = central_difference(f, x)
        np.testing.assert_allclose(traced(x.copy()), f(x.copy()), rtol=1e-12)
        np.testing.assert_allclose(autotrace.grad(f)(x.copy()), expected, rtol=1e-6, atol=1e-8)
        np.testing.assert_allclose(traced_gradient(x.copy()), expected, rtol=1e-6, atol=1e-8)
        np.testing.assert_allclose(gradient_of_traced(x.copy()), expected, rtol=1e-6, atol=1e-8)
        columns = [tangent(x.copy(), tangent=direction)[1] for direction in np.eye(x.size)]
        np.testing.assert_allclose(columns, expected, rtol=1e-6, atol=1e-8)
    assert traced.trace_count == 1 and traced_gradient.trace_count == 1
    check_grads(f, (points[0],), order=2, modes=("reverse", "forward"))


# --- an item written into an array that a later line rebinds, in a loop --------------------------

def doubles_an_item_then_rebinds(x):
    v = x * 1.0
    for i in range(2):
        v[i] = v[i] * 2.0
        v = np.tanh(v)  # the next write goes into this result, which tanh's rule reads
    return np.sum(v)


def test_a_write_into_a_result_that_a_rule_reads_is_undone_in_the_adjoint_sweep():
    # The adjoint sweep restores the item into the array the name held (a stand-in holding
    # only the shape was saved, and read-only: restore_item raised).
    assert_right_in_every_mode(doubles_an_item_then_rebinds)


# --- a boolean mask computed in the function, traced ---------------------------------------------

def zeroes_where_positive(x):
    y = x * 2.0
    y[x > 0] = 0.0
    return np.sum(y)


def zeroes_its_argument_where_positive(x):
    x[x > 0] = 0.0
    return x


def test_traced_gradient_of_a_write_under_a_traced_mask():
    # The adjoint clears the gradient of the written elements: a traced mask indexing a
    # gradient that is not traced (the seed of np.sum) raised TracerConversionError.
    assert_right_in_every_mode(zeroes_where_positive)


def test_traced_jacobian_of_a_write_under_a_traced_mask():
    x = np.array([0.3, -0.7, 1.1])
    expected = np.diag((x <= 0).astype(float))
    jacobian = autotrace.function(autotrace.jacobian(zeroes_its_argument_where_positive))
    np.testing.assert_array_equal(jacobian(x.copy()), expected)
    np.testing.assert_array_equal(
        autotrace.jacobian(zeroes_its_argument_where_positive)(x.copy()), expected)


# --- fancy indexing under a traced if -------------------------------------------------------------

def gathers_in_one_branch(x):
    if x[0] > 0:
        y = x[[0, 2, 1]]
    else:
        y = x * 2.0
    return np.sum(y * x)


def gathers_in_both_branches(x):
    if x[0] > 0:
        y = x[[0, 2, 1]]
    else:
        y = x[[1, 0, 0]]
    return np.sum(y * x)


def scatters_in_one_branch(x):
    y = x * 1.0
    if x[0] > 0:
        y[[0, 2]] = x[[1, 1]] * 3.0
    return np.sum(y * x)


def index_chosen_by_a_traced_condition(x):
    index = [0, 2, 1] if x[0] > 0 else [1, 0, 0]
    return np.sum(x[index] * x)


def index_of_traced_ints(x):
    i = 2 if x[0] > 0 else 1
    j = 0 if x[1] > 0 else 2
    return np.sum(x[[0, i]] * x[[j, 1]]) + np.sum(x[[[0, i], [1, 1]]] ** 2)


@pytest.mark.parametrize("f", [gathers_in_one_branch, gathers_in_both_branches,
                               scatters_in_one_branch, index_chosen_by_a_traced_condition,
                               index_of_traced_ints], ids=lambda f: f.__name__)
def test_integer_list_index_under_a_traced_condition(f):
    # The index list the A-normal form names in a branch stays a Python list (it was a cond
    # output, a list of traced ints, which NumPy cannot index with); a list a traced condition
    # does choose is an index array, as NumPy makes of it.
    assert_right_in_every_mode(f)


# --- a write into a global or closure variable: one refusal in every mode -------------------------

BUFFER = np.zeros(3)
LOG = []


def writes_into_a_global_array(x):
    BUFFER[0] = x[0] * 2.0
    return np.sum(BUFFER * x)


def appends_to_a_global_list(x):
    LOG.append(x[0] * 2.0)
    return np.sum(x * x) * LOG[-1]


def closure_writing_into_its_array():
    totals = np.zeros(3)

    def adds_into_a_closure_array(x):
        totals[1] += x[1]
        return np.sum(totals * x)
    return adds_into_a_closure_array


def outside_write_message(variable: str, write: str) -> str:
    return (f"the function changes {variable!r} in place ({write}), a global or closure "
            f"variable that it does not make: autotrace follows writes only into values the "
            f"function makes or is passed. Pass {variable} as an argument and return its new "
            f"value, or write into a copy made in the function "
            f"(new_{variable} = {variable}.copy())")


def line_of(f, marker: str) -> int:
    lines, start = inspect.getsourcelines(f)
    return start + next(i for i, text in enumerate(lines) if marker in text)


OUTSIDE_WRITES = [(writes_into_a_global_array, "BUFFER", "BUFFER[0] = ..."),
                  (appends_to_a_global_list, "LOG", "LOG.append(...)"),
                  (closure_writing_into_its_array(), "totals", "totals[1] += ...")]


@pytest.mark.parametrize("f, variable, write", OUTSIDE_WRITES,
                         ids=[case[0].__name__ for case in OUTSIDE_WRITES])
@pytest.mark.parametrize("transform", [autotrace.grad, autotrace.forward,
                                       lambda f: autotrace.function(autotrace.grad(f))],
                         ids=["grad", "forward", "function_of_grad"])
def test_a_derivative_refuses_a_write_into_a_global_or_closure_variable(
        f, variable, write, transform):
    with pytest.raises(autotrace.TransformError) as caught:
        transform(f)(POINTS[0].copy())
    assert caught.value.message == outside_write_message(variable, write)
    assert (caught.value.filename, caught.value.lineno) == (__file__, line_of(f, write[:8]))
    assert not LOG and not BUFFER.any()  # nothing ran


@pytest.mark.parametrize("f, variable, write", [OUTSIDE_WRITES[0], OUTSIDE_WRITES[2]],
                         ids=["global", "closure"])
def test_a_traced_function_refuses_a_write_into_a_global_or_closure_array(f, variable, write):
    with pytest.raises(autotrace.runtime.tracing.control_scope.ControlFlowError) as caught:
        autotrace.function(f)(POINTS[0].copy())
    line = line_of(f, write[:8])
    source = linecache.getline(__file__, line).strip()
    assert str(caught.value) == (
        f"{__file__}:{line}: {source}\n  " + outside_write_message(variable, write)
        + f'\n  File "{__file__}", line {line}, in {f.__name__}\n    {source}')
    assert not BUFFER.any()


def writes_into_a_closure_array_it_made(x):
    made = np.zeros_like(x)

    def put(i, value):
        made[i] = value  # the enclosing function's own array: followed
    put(0, x[0] * x[1])
    return made * 2.0


def test_a_nested_function_may_write_into_the_enclosing_functions_array():
    x = POINTS[0]
    np.testing.assert_allclose(autotrace.function(writes_into_a_closure_array_it_made)(x),
                               [2 * x[0] * x[1], 0.0, 0.0])


# --- an early return under a traced condition, then a Python loop with continue -------------------

def returns_early_then_skips_an_iteration(x):
    total = 0.0
    if x[0] > 0:
        return np.sum(x)
    for i in range(3):
        if i == 1:
            continue
        total = total + x[i] * x[i]
    return total


def returns_early_then_skips_by_value(x):
    total = 0.0
    if x[0] > 0:
        return np.sum(x * x)
    for i in range(3):
        if x[i] > 0:
            continue
        total = total + np.sin(x[i]) * x[i]
    return total


def returns_early_then_breaks(x):
    total = 0.0
    if x[0] > 0:
        return np.sum(np.tanh(x))
    for i in range(3):
        if i == 2:
            break
        total = total + x[i] * x[2]
    return total


@pytest.mark.parametrize("f", [returns_early_then_skips_an_iteration,
                               returns_early_then_skips_by_value, returns_early_then_breaks],
                         ids=lambda f: f.__name__)
def test_early_return_under_a_traced_condition_then_a_loop_that_skips(f):
    # The loop's flag (`not skipped`, a Python bool saved on the stack) stays a Python bool
    # across the traced if: the None generated code starts it with is no value of the user's.
    assert_right_in_every_mode(f)


def returns_from_a_loop_under_a_traced_condition(x):
    total = x[1] * 1.0
    for j in range(2):
        if x[0] > 0:
            return total * x[2]
        for i in range(3):
            if i == j:
                continue
            total = total + x[i] * x[j]
    return total


def test_a_python_loop_under_a_traced_return_in_a_loop_is_traced():
    """The inner loop's trip count stays a Python int in the traced outer loop: the traced
    gradient (refused at `for i in range(3)` before) is right on both paths, from one trace."""
    assert_right_in_every_mode(returns_from_a_loop_under_a_traced_condition)


# --- a branch that NumPy never runs, which fails for these shapes ---------------------------------

def broadcasts_wrongly_in_a_branch_not_taken(x):
    if x[0] > 0:
        y = x * 2.0
    else:
        y = x + np.ones(4)
    return np.sum(y)


@pytest.mark.parametrize("transform", [autotrace.function,
                                       lambda f: autotrace.function(autotrace.grad(f))],
                         ids=["function", "function_of_grad"])
def test_a_branch_that_fails_while_traced_is_named_with_its_line(transform):
    f = broadcasts_wrongly_in_a_branch_not_taken
    x = POINTS[0]
    assert f(x) == pytest.approx(2 * np.sum(x))  # NumPy takes the true branch
    with pytest.raises(autotrace.runtime.tracing.control_scope.ControlFlowError) as caught:
        transform(f)(x)
    message = str(caught.value)
    if_line, branch_line = line_of(f, "if x[0] > 0"), line_of(f, "np.ones(4)")
    assert message.startswith(f"{__file__}:{if_line}: if x[0] > 0:")
    assert ("\n  the false branch of this traced `if` fails while it is traced, at " in message)
    if transform is autotrace.function:  # (in derivative code, the generated line)
        assert f"{__file__}:{branch_line}: y = x + np.ones(4)\n" in message
    assert (
        "\n  ValueError: shape mismatch: objects cannot be broadcast to a single shape.  "
        "Mismatch is between arg 0 with shape (3,) and arg 1 with shape (4,).\n  A traced "
        "condition traces both branches, also one that these inputs do not take (NumPy would "
        "not run it), so both must be valid for the shapes and dtypes of this call: fix that "
        "branch, or, where it is meant for other shapes, test the shapes in Python "
        "(`if x.shape[0] == 4:` is not traced)\n  File ") in message
    assert isinstance(caught.value, ValueError)  # still NumPy's kind of error, for an except
    # NumPy's error is kept as the context, not printed as a second traceback
    assert isinstance(caught.value.__context__, ValueError)
    assert caught.value.__suppress_context__


def broadcasts_wrongly_in_a_value_not_chosen(x):
    y = x * 2.0 if x[0] > 0 else x + np.ones(4)
    return np.sum(y)


def test_a_conditional_expression_that_fails_while_traced_is_named_with_its_line():
    f = broadcasts_wrongly_in_a_value_not_chosen
    line = line_of(f, "np.ones(4)")
    with pytest.raises(ValueError) as caught:
        autotrace.function(f)(POINTS[0])
    assert str(caught.value).startswith(
        f"{__file__}:{line}: x * 2.0 if x[0] > 0 else x + np.ones(4)\n  the false branch of "
        f"this traced conditional expression fails while it is traced, at {__file__}:{line}: "
        "y = x * 2.0 if x[0] > 0 else x + np.ones(4)\n  ValueError: shape mismatch: ")


# --- A.view() in a traced function ---------------------------------------------------------

def writes_through_a_view(x):
    A = x * 1.0
    B = A.view()
    B[0] = 5.0
    return A


def reads_a_write_through_a_view(x):
    A = x * 1.0
    B = A.view()
    A[1] = 7.0
    return B * 2.0


def views_as_the_same_dtype(x):
    A = x.reshape(3, 1) * 1.0
    C = A.view(np.ndarray).view(np.float64)
    C[2] = 9.0
    return A


@pytest.mark.parametrize("f, expected", [
    (writes_through_a_view, lambda x: [5.0, x[1], x[2]]),
    (reads_a_write_through_a_view, lambda x: [2 * x[0], 14.0, 2 * x[2]]),
    (views_as_the_same_dtype, lambda x: [[x[0]], [x[1]], [9.0]])], ids=lambda f: getattr(
        f, "__name__", ""))
def test_a_view_in_a_traced_function_shares_memory_as_numpys(f, expected):
    x = POINTS[0]
    np.testing.assert_array_equal(f(x.copy()), expected(x))  # NumPy's own
    np.testing.assert_array_equal(autotrace.function(f)(x.copy()), expected(x))


def views_as_integers(x):
    return x.view(np.int64)


def test_a_view_that_reinterprets_bytes_is_refused():
    with pytest.raises(NotImplementedError) as caught:
        autotrace.function(views_as_integers)(POINTS[0])
    line = line_of(views_as_integers, "x.view")
    assert str(caught.value) == (
        "autotrace cannot trace .view(int64) of a float64 array: it reinterprets the bytes, "
        "which no graph op does; convert the values with .astype(int64) instead if that is "
        f'what is meant\n  File "{__file__}", line {line}, in views_as_integers\n'
        "    return x.view(np.int64)")


def writes_items_in_a_loop(x):
    u = x * 2.0
    for i in range(3):
        u[i] = u[i] * x[i]
    return np.sum(np.sin(u))


def test_a_traced_gradient_of_a_gradient_clears_items_of_a_concrete_gradient():
    # the second derivative cleared an item of a gradient that was still a NumPy array with
    # zeros made traced (ValueError: setting an array element with a sequence)
    x = np.array([0.3, -0.5, 0.8])
    first = autotrace.grad(writes_items_in_a_loop)

    def summed(x):
        return np.sum(first(x))

    expected = central_difference(summed, x)
    np.testing.assert_allclose(autotrace.grad(summed)(x), expected, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(autotrace.function(autotrace.grad(summed))(x), expected,
                               rtol=1e-6, atol=1e-8)
