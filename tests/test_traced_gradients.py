"""autotrace.function(autotrace.grad(f)) where the gradient needs more than fixed shapes: values
selected by a traced boolean mask (a size known only at run time), and values saved inside
branches of a traced loop. One trace serves inputs that take different paths, and its gradients
agree with eager autotrace.grad and with finite differences."""
import numpy as np
import pytest

import autotrace
from autotrace.runtime.tracing.control import ControlFlowError
from tests import corpus
from tests.numeric import central_difference


def assert_one_trace_serves(f, inputs, *others):
    """The traced gradient of `f` in its first argument equals the eager one and central
    differences at each of `inputs` (with `others` as the remaining arguments), from one trace."""
    gradient = autotrace.grad(f)
    traced = autotrace.function(gradient)
    for x in inputs:
        expected = central_difference(lambda x: f(x, *others), x)
        np.testing.assert_allclose(gradient(x, *others), expected, rtol=1e-6, atol=1e-7)
        np.testing.assert_allclose(traced(x, *others), gradient(x, *others), rtol=1e-12,
                                   atol=1e-14)
    assert traced.trace_count == 1
    return traced


# --- traced boolean masks -----------------------------------------------------------------------

MIXED = np.array([0.5, -1.2, 2.0, -0.3, 0.8, -2.5])
MASKS = [MIXED, np.abs(MIXED), -np.abs(MIXED)]  # some, all and no elements selected


def test_gradient_through_a_boolean_mask_traces_once_for_any_number_selected():
    traced = assert_one_trace_serves(corpus.index_boolean_mask, MASKS)
    graph = str(traced.graph(MIXED))
    assert "mask_select" in graph and "mask_assign" in graph and "f64[?]" in graph
    # Values selected by one mask have one (unknown) size: no run-time check that they agree.
    assert "same_sizes" not in graph


def test_gradient_through_a_mask_made_from_another_argument():
    y = np.array([0.1, 0.9, 0.7, -0.3, 1.2, 0.2])
    for mask_source in (y, np.ones(6), np.zeros(6)):
        assert_one_trace_serves(corpus.index_mask_from_other, [MIXED, -MIXED], mask_source)


def test_gradient_through_mask_assignment():
    traced = assert_one_trace_serves(corpus.mask_assignment, MASKS)
    np.testing.assert_allclose(traced(MIXED), np.where(MIXED < 0, 0.0, 3 * MIXED ** 2))


def masked_mean_square(X, w):
    rows = X[X @ w > 0]
    return np.sum(np.mean(rows ** 2, axis=1) * rows[:, 0])


def test_gradient_of_rows_selected_by_a_mask_reduces_over_known_axes():
    # The selected rows are f64[?,3]: the gradient of a mean over the known axis keeps the
    # unknown one (expand_dims, not a reshape to a shape that does not exist yet).
    rng = np.random.default_rng(3)
    X = rng.normal(size=(5, 3))
    for w in (np.array([1.0, 0.5, -0.2]), np.array([-9.0, 0.0, 0.0]), np.zeros(3) - 1e3):
        assert_one_trace_serves(masked_mean_square, [X, X * 2.0], w)


# --- values saved inside branches of traced loops -----------------------------------------------

def test_return_inside_a_loop_at_any_iteration_or_none():
    # |x| decides the iteration that returns: the first, a later one, or none (the loop ends).
    inputs = [np.array([2.0, 1.0, 0.5]), np.array([0.1, -0.05, 0.08]), np.full(3, 1e-3)]
    traced = assert_one_trace_serves(corpus.return_inside_loop, inputs)
    # The forward loop saves values inside the branch that returns; the adjoint loop pops
    # them inside the same branch.
    graph = str(traced.graph(inputs[0]))
    assert graph.count("while[loop=(") == 2 and "stack_push" in graph


def test_return_inside_a_nested_loop_from_either_loop_level():
    X = np.array([[0.3, -0.2, 0.1], [0.4, 0.2, -0.3], [0.2, 0.1, 0.3]])
    big_first = X.copy()
    big_first[0, 0] = 2.5
    second_row = X.copy()
    second_row[1, 1] = 2.0
    assert_one_trace_serves(corpus.return_inside_nested_loop, [X, big_first, second_row])


def test_break_out_of_an_inner_loop_after_any_number_of_elements():
    rng = np.random.default_rng(5)
    X = np.abs(rng.normal(size=(3, 4))) + 0.1
    breaks = X.copy()
    breaks[0, 0], breaks[1, 2], breaks[2, 3] = -0.5, -0.7, -0.2
    assert_one_trace_serves(corpus.break_out_of_inner_loop, [X, breaks, -X])


def test_branches_that_save_values_of_different_shapes_in_every_order():
    rng = np.random.default_rng(6)
    noise = 0.1 * rng.standard_normal((3, 4))
    # Row means above 0.5, between -0.5 and 0.5, and below -0.5 pick the three branches.
    inputs = [noise + np.array([[1.5], [0.0], [-1.5]]), noise + np.array([[-1.5], [1.5], [0.0]]),
              noise + np.array([[0.0], [0.0], [0.0]])]
    assert_one_trace_serves(corpus.branches_per_row, inputs)


# --- dimensions of unknown size from an input_signature -----------------------------------------

def centered_energy(X, w):
    return np.mean((X - np.mean(X, axis=0)) ** 2 * w)


def spread_and_totals(X, w):
    return np.sum(np.var(X, axis=0) * w) + np.sum(X.sum(axis=1, keepdims=True) * X)


@pytest.mark.parametrize("f", [centered_energy, spread_and_totals])
def test_gradient_traced_once_for_every_number_of_rows(f):
    # Means and variances over the rows divide by their number, known only at run time.
    gradient = autotrace.grad(f)
    traced = autotrace.function(gradient, input_signature=[autotrace.Spec((None, 3)),
                                                           autotrace.Spec((3,))])
    rng = np.random.default_rng(7)
    w = rng.normal(size=3)
    for rows in (1, 2, 5):
        X = rng.normal(size=(rows, 3))
        np.testing.assert_allclose(traced(X, w), central_difference(lambda X: f(X, w), X),
                                   rtol=1e-6, atol=1e-7)
        np.testing.assert_allclose(traced(X, w), gradient(X, w), rtol=1e-12)
    assert traced.trace_count == 1
    assert "dimension_size[axis=0]" in str(traced.graph(X, w))


# --- gathers by traced indices --------------------------------------------------------------------

def take_rows_loss(W, ids):
    return np.sum(np.take(W, ids, axis=0) ** 2)


def take_flat_loss(W, ids, mode):
    return np.sum(np.take(W, ids, mode=mode) * np.arange(1.0, 5.0))


def test_gradient_of_take_by_traced_indices_adds_up_repeated_indices():
    W = np.arange(10.0).reshape(5, 2)
    traced = autotrace.function(autotrace.grad(take_rows_loss))
    expected = np.array([[0, 0], [12, 18], [0, 0], [12, 14], [0, 0]])  # row 1 taken three times
    np.testing.assert_array_equal(traced(W, np.array([[1, 1], [3, 1]])), expected)
    np.testing.assert_array_equal(traced(W, np.array([[0, 0], [0, 4]])),
                                  [[0, 6], [0, 0], [0, 0], [0, 0], [16, 18]])
    assert traced.trace_count == 1
    ids = np.array([7, -1, 2, 2])  # out of range: clipped, or wrapped around
    for mode, expected in [("clip", [2, 0, 7, 0, 0, 0, 0, 1, 0, 0]),
                           ("wrap", [0, 0, 7, 0, 0, 0, 0, 1, 0, 2])]:
        flat = autotrace.function(autotrace.grad(take_flat_loss))
        np.testing.assert_array_equal(flat(W, ids, mode).ravel(), expected)
        np.testing.assert_array_equal(autotrace.grad(take_flat_loss)(W, ids, mode).ravel(),
                                      expected)


def picked_cubes(Z, idx):
    """One element of each row, picked by a range of the rows and an index array."""
    return np.sum(Z[range(Z.shape[0]), idx] ** 3)


def picked_rewritten(Z, idx, step):
    Z = Z.copy()
    Z[range(0, 4, step), idx] = np.sin(Z[range(0, 4, step), idx])
    return np.sum(Z * Z)


def test_indexing_with_a_range_traces_as_an_index_array():
    rng = np.random.default_rng(5)
    Z = rng.standard_normal((4, 3))
    idx = np.array([2, 0, 0, 1])
    np.testing.assert_array_equal(autotrace.function(lambda Z: Z[range(4), idx])(Z),
                                  Z[range(4), idx])
    np.testing.assert_array_equal(autotrace.function(lambda Z: Z[range(1, 4, 2), 1:])(Z),
                                  Z[range(1, 4, 2), 1:])
    empty = autotrace.function(lambda Z: Z[range(0)])(Z)
    assert empty.shape == (0, 3) and empty.dtype == np.float64
    assert autotrace.function(picked_cubes)(Z, idx) == pytest.approx(picked_cubes(Z, idx))
    expected = central_difference(lambda Z: picked_cubes(Z, idx), Z)
    np.testing.assert_allclose(autotrace.function(autotrace.grad(picked_cubes))(Z, idx),
                               expected, rtol=1e-6, atol=1e-8)
    _, tangent = autotrace.function(autotrace.forward(picked_cubes))(Z, idx, tangent=Z)
    assert tangent == pytest.approx(np.sum(expected * Z))
    for step in (1, 2):
        picks = idx[::step]
        expected = central_difference(lambda Z: picked_rewritten(Z, picks, step), Z)
        traced = autotrace.function(autotrace.grad(picked_rewritten))
        np.testing.assert_allclose(traced(Z, picks, step), expected, rtol=1e-6, atol=1e-8)


def inserted_sines(a, v):
    weights = np.arange(21.0).reshape(3, 7)
    return np.sum(np.sin(np.insert(a, [3, 0, 3], v[:, None] * 2.0, axis=1)) * weights)


def inserted_flat(a, v):
    return np.sum(np.insert(a, slice(1, 3), v[0] ** 2) ** 2 * np.arange(1.0, 15.0))


def turned_cubes(a, v):
    return np.sum(np.rot90(a * v[:, None], -3, (1, 0)) ** 3 * np.arange(12.0).reshape(4, 3))


def turned_twice(a, v):
    return np.sum(np.rot90(np.rot90(a, 5) * v, 2, axes=(1, 0)) ** 2)


def deleted_and_appended(a, v):
    kept = np.delete(a * v[:, None], [3, 0, 3], axis=1)
    return np.sum(np.append(kept, v ** 2) ** 2 * np.arange(1.0, 10.0))


def split_in_depth(a, v):
    low, high = np.dsplit(np.reshape(a, (3, 2, 2)), [1])
    return np.sum(np.fliplr(low) * v[:, None, None] + np.flipud(high) ** 2)


def columns_shifted(a, v):
    columns = np.column_stack([v * v, a, v[::-1]])
    return (np.sum(np.fft.fftshift(columns) * np.arange(18.0).reshape(3, 6))
            + np.sum(np.fft.ifftshift(a, axes=0) ** 3 * np.arange(12.0).reshape(3, 4)))


@pytest.mark.parametrize("f", [inserted_sines, inserted_flat, turned_cubes, turned_twice,
                               deleted_and_appended, split_in_depth, columns_shifted])
def test_traced_gradients_of_rot90_insert_delete_append_and_splits(f):
    rng = np.random.default_rng(6)
    a, v = rng.standard_normal((3, 4)), rng.standard_normal(3)
    for wrt, others in ((0, lambda x: (x, v)), (1, lambda x: (a, x))):
        x = (a, v)[wrt]
        expected = central_difference(lambda x: f(*others(x)), x)
        gradient = autotrace.grad(f, wrt=wrt)
        np.testing.assert_allclose(gradient(a, v), expected, rtol=1e-6, atol=1e-8)
        np.testing.assert_allclose(autotrace.function(gradient)(a, v), expected, rtol=1e-6,
                                   atol=1e-8)
    assert autotrace.function(f)(a, v) == pytest.approx(f(a, v), rel=1e-12)


def array_api_linalg(a):
    """numpy.linalg's array-API names beside the functions they stand for."""
    m = a[:, :3]
    s = m @ m.T + 3.0 * np.eye(3)
    terms = (np.linalg.matmul(m, a[0, :3]), np.linalg.outer(a[0], a[1]),
             np.linalg.tensordot(m, m, axes=2), np.linalg.cross(a[0, :3], a[1, 1:]),
             np.linalg.trace(a[None], offset=1), np.linalg.diagonal(m.T, offset=-1),
             np.linalg.vecdot(a, a[0]), np.linalg.vecdot(a.T, a.T, axis=0) + np.vecdot(a, a),
             np.vdot(m, m.T),
             np.linalg.vector_norm(a, axis=1, ord=3), np.linalg.eigvalsh(s),
             np.linalg.matrix_transpose(m) * 2.0, np.float_power(s * s, 0.75),
             np.astype(a * 3.0, np.float64))
    return sum(np.sum(np.sin(term)) for term in terms)


def test_traced_gradients_of_the_array_api_names():
    a = np.random.default_rng(7).standard_normal((3, 4))
    expected = central_difference(array_api_linalg, a)
    np.testing.assert_allclose(autotrace.grad(array_api_linalg)(a), expected, rtol=1e-5,
                               atol=1e-6)
    traced = autotrace.function(autotrace.grad(array_api_linalg))
    np.testing.assert_allclose(traced(a), expected, rtol=1e-5, atol=1e-6)
    assert autotrace.function(array_api_linalg)(a) == pytest.approx(array_api_linalg(a),
                                                                    rel=1e-6)
    # A float32 argument cast up gets a float32 gradient.
    gradient = autotrace.grad(lambda x: np.sum(np.astype(x, np.float64) ** 2))
    assert gradient(np.ones(3, np.float32)).dtype == np.float32


def cleaned(x, fill):
    return np.sum(np.nan_to_num(x * 2.0, nan=fill, posinf=fill * 3.0, neginf=-fill) ** 2)


def test_traced_gradients_of_nan_to_num_go_to_the_replacing_values():
    x = np.array([0.5, np.nan, np.inf, -np.inf, -1.5])
    fill = 0.7  # a Python float: traced, nan_to_num takes its replacements as constants
    for wrt, f, at in ((0, lambda x: cleaned(x, fill), x), (1, lambda v: cleaned(x, v), fill)):
        expected = central_difference(f, np.asarray(at, dtype=float))
        gradient = autotrace.grad(cleaned, wrt=wrt)
        np.testing.assert_allclose(gradient(x, fill), expected, rtol=1e-6)
        np.testing.assert_allclose(autotrace.function(gradient)(x, fill), expected, rtol=1e-6)
    # d/dfill: 2 fill for the NaN, 2 (3 fill) 3 for infinity, 2 fill for -infinity.
    assert autotrace.grad(cleaned, wrt=1)(x, fill) == pytest.approx(22 * 0.7)
    _, tangent = autotrace.function(autotrace.forward(cleaned, wrt=1))(x, fill)
    assert tangent == pytest.approx(22 * 0.7)


def test_insert_at_a_traced_place_is_refused_saying_what_to_do():
    traced = autotrace.function(lambda a, i: np.insert(a, i, 0.0))
    with pytest.raises(NotImplementedError, match=r"the obj of numpy.insert must be known while "
                                                   r"tracing, but it is a traced array"):
        traced(np.ones(3), np.array(1))


def trace_times_sum(x):
    return np.trace(x) * np.sum(np.diagonal(x, 1))


def test_gradient_of_a_diagonal_scaled_by_a_traced_value():
    x = np.arange(9.0).reshape(3, 3)
    traced = autotrace.function(autotrace.grad(trace_times_sum))
    # d/dx: sum(diagonal(x, 1)) = 6 on the diagonal, trace(x) = 12 on the first superdiagonal
    np.testing.assert_array_equal(traced(x), [[6, 12, 0], [0, 6, 12], [0, 0, 6]])
    np.testing.assert_array_equal(autotrace.grad(trace_times_sum)(x), traced(x))


# --- second derivatives through loops and branches on traced values -----------------------------
# The first derivative saves values on a stack inside traced branches and loops; the second
# derivative pushes them back and keeps their gradients on a stack of its own. Both stay in the
# graph, so one trace serves inputs whose branches and trip counts differ.

def halve_while_large(x):
    for i in range(3):
        if np.sum(x) > 1.0:
            x = x * 0.5
    return np.sum(x * x)


def test_traced_second_derivative_through_an_if_in_a_loop_by_hand():
    # x is halved until its sum is at most 1 (at most three times): f = x^2 / 4^k.
    second = autotrace.function(autotrace.grad(autotrace.grad(halve_while_large)))
    for x, halvings in [(3.0, 2), (1.5, 1), (0.5, 0), (10.0, 3), (0.9, 0), (2.5, 2)]:
        assert second(np.array(x)) == pytest.approx(2.0 / 4 ** halvings, rel=1e-14)
    assert second.trace_count == 1


def sine_halving_in_a_loop(x):
    for i in range(3):
        if np.sum(x) > 1.0:
            x = x * 0.5 + np.sin(x)
    return np.sum(x * x * x)


def grow_with_a_counter(x):
    n = 0
    while np.sum(x) < 2.0 and n < 5:
        x = x * 1.5 + 0.1 * np.sin(x)
        n = n + 1
    return np.sum(x * x * x)


def break_when_large(x):
    for i in range(5):
        x = np.sin(x) * 1.3 + x * x * 0.1
        if np.sum(x) > 1.0:
            break
    return np.sum(x * x * x)


def return_early_when_large(x):
    for i in range(4):
        if np.sum(x) > 3.0:
            return np.sum(x * x * np.sin(x))
        x = x * 1.7 + 0.2
    return np.sum(np.sin(x) * x)


def nested_ifs(x):
    s = np.sum(x)
    if s > 0.0:
        if s > 1.0:
            y = x * x * x
        else:
            y = x * x * 2.0
    else:
        y = -x * x * np.cos(x)
    return np.sum(y)


def and_or_in_a_while(x):
    n = 0
    while (np.sum(x) < 3.0 and np.sum(x) > -3.0) or n < 1:
        x = x * 1.4 + 0.3 * np.cos(x)
        n = n + 1
        if n > 6:
            break
    return np.sum(x * x * x)


def while_in_a_loop(x):
    n = 0
    while n < 3:
        while np.sum(x) < 1.5:
            x = x * 1.3 + 0.2
        x = np.sin(x) * 0.7
        n = n + 1
    return np.sum(x * x * x)


def continue_when_large(x):
    y = x * 0.0
    for i in range(4):
        if np.sum(x) * i > 1.5:
            continue
        y = y + np.sin(x * i) * x
    return np.sum(y * y)


def elif_with_or(x):
    s = np.sum(x)
    y = x
    for i in range(2):
        if s > 2.0:
            y = y * y
        elif s > 0.5 or s < -1.0:
            y = np.sin(y) * x
        else:
            y = y * 3.0
        s = np.sum(y)
    return np.sum(y * x)


def list_of_halvings(x):
    parts = []
    for i in range(3):
        if np.sum(x) > 0.5:
            x = np.tanh(x) * 1.5
        parts.append(x * x)
    return np.sum(parts[0] * parts[2] + parts[1])


def traced_trip_count(x):
    n = 0
    y = x
    while n < np.sum(x) * 3.0 + 2.0:
        y = np.sin(y) + x
        n = n + 1
    return np.sum(y * y)


def if_without_else(x):
    # The second derivative makes the gradient of the saved values inside each branch.
    y = 2.0 * x
    if np.max(x) > 0.5:
        y = y * x * np.sin(x)
    return np.sum(y)


SECOND_ORDER_SHAPES = [if_without_else, sine_halving_in_a_loop, grow_with_a_counter,
                       break_when_large, return_early_when_large, nested_ifs, and_or_in_a_while,
                       while_in_a_loop, continue_when_large, elif_with_or, list_of_halvings,
                       traced_trip_count]
# Points away from each function's thresholds, which take different branches and trip counts.
SCALAR_POINTS = [0.3, 0.9, 1.6, -0.4, 2.5, 3.5]
VECTOR_POINTS = [np.array([0.3, 0.2, -0.1]) * scale for scale in (1.0, 3.0, -1.0, 0.5, 6.0)]
DIRECTION = np.array([1.0, -0.5, 0.25])


@pytest.mark.parametrize("f", SECOND_ORDER_SHAPES)
def test_traced_grad_of_grad_through_traced_control_flow(f):
    gradient = autotrace.grad(f)
    second = autotrace.grad(gradient)
    traced = autotrace.function(second)
    for x in SCALAR_POINTS:
        x = np.array(x)
        np.testing.assert_allclose(second(x), central_difference(gradient, x), rtol=1e-5,
                                   atol=1e-6)
        np.testing.assert_allclose(traced(x), second(x), rtol=1e-12, atol=1e-14)
    assert traced.trace_count == 1


@pytest.mark.parametrize("f", SECOND_ORDER_SHAPES)
def test_traced_reverse_over_reverse_on_arrays_through_traced_control_flow(f):
    gradient = autotrace.grad(f)

    def along_direction(x, v):
        return np.sum(gradient(x) * v)
    hessian_times = autotrace.grad(along_direction)
    traced = autotrace.function(hessian_times)
    for x in VECTOR_POINTS:
        expected = central_difference(lambda x: along_direction(x, DIRECTION), x)
        np.testing.assert_allclose(hessian_times(x, DIRECTION), expected, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(traced(x, DIRECTION), hessian_times(x, DIRECTION),
                                   rtol=1e-12, atol=1e-14)
    assert traced.trace_count == 1


@pytest.mark.parametrize("f", SECOND_ORDER_SHAPES)
def test_traced_hvp_and_hessian_through_traced_control_flow(f):
    # Forward over reverse: the tangents of the saved values are a stack beside them.
    hvp, hessian = autotrace.hvp(f), autotrace.hessian(f)
    traced_hvp, traced_hessian = autotrace.function(hvp), autotrace.function(hessian)
    gradient = autotrace.grad(f)
    for x in VECTOR_POINTS:
        expected = central_difference(lambda x: np.sum(gradient(x) * DIRECTION), x)
        np.testing.assert_allclose(hvp(x, DIRECTION), expected, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(traced_hvp(x, DIRECTION), hvp(x, DIRECTION), rtol=1e-12,
                                   atol=1e-14)
        np.testing.assert_allclose(traced_hessian(x), hessian(x), rtol=1e-12, atol=1e-14)
        np.testing.assert_allclose(hessian(x) @ DIRECTION, hvp(x, DIRECTION), rtol=1e-10,
                                   atol=1e-12)
    assert traced_hvp.trace_count == 1 and traced_hessian.trace_count == 1


@pytest.mark.parametrize("f", SECOND_ORDER_SHAPES)
def test_traced_reverse_mode_jacobian_of_the_gradient_through_traced_control_flow(f):
    # Reverse over reverse, one row of the Hessian per pull-back.
    hessian = autotrace.jacobian(autotrace.grad(f), mode="reverse")
    traced = autotrace.function(hessian)
    for x in VECTOR_POINTS:
        np.testing.assert_allclose(hessian(x), autotrace.hessian(f)(x), rtol=1e-10, atol=1e-12)
        np.testing.assert_allclose(traced(x), hessian(x), rtol=1e-12, atol=1e-14)
    assert traced.trace_count == 1


# --- arrays built of Python floats and traced arrays ---------------------------------------------

def built_by_array(a, x):
    """sum((a x0)**2 + (3 x1)**2), the float a in np.array beside a constant."""
    return np.sum((np.asarray([a, 3.0]) * x) ** 2) + np.sum(np.array([[a, 2.0 * a]]) @ x)


def built_by_stack(a, x):
    return np.sum((np.stack([a, a * 2.0]) * x) ** 2)


@pytest.mark.parametrize("function", [built_by_array, built_by_stack])
def test_traced_gradient_of_an_array_built_of_float_arguments(function):
    """Inside autotrace.function a float argument is a constant and x is traced: the adjoint of
    np.array/np.asarray/np.stack hands the float its traced gradient as it is."""
    a, x = 1.5, np.array([1.0, 2.0])
    wrt_a = central_difference(lambda v: function(float(v[0]), x), np.array([a]))[0]
    wrt_x = central_difference(lambda v: function(a, v), x)
    for gradient in (autotrace.grad(function, wrt=(0, 1)),
                     autotrace.function(autotrace.grad(function, wrt=(0, 1)))):
        got_a, got_x = gradient(a, x)
        assert got_a == pytest.approx(wrt_a, rel=1e-6)
        np.testing.assert_allclose(got_x, wrt_x, rtol=1e-6)
    # the mixed second derivative: d/da of the x-gradient, against differences of the eager one
    eager_x = autotrace.grad(function, wrt=1)
    expected = (eager_x(a + 1e-6, x) - eager_x(a - 1e-6, x)) / 2e-6
    mixed = autotrace.grad(autotrace.grad(function, wrt=1), wrt=0)
    assert mixed(a, x) == pytest.approx(np.sum(expected), rel=1e-6)
    assert autotrace.function(mixed)(a, x) == pytest.approx(np.sum(expected), rel=1e-6)


# --- Python loops inside branches on traced values ----------------------------------------------

def loop_inside_a_traced_if(x, a):
    y = x * 1.0
    if np.sum(x) < 10:
        for _ in range(2):
            y = y * a
    return np.sum(y ** 2)


def loop_after_an_early_return(x, a):
    if np.mean(x) > 1.0:
        return np.sum(np.sin(x)) * a
    k = 0
    while k < 3:
        k += 1
        x = np.tanh(x) * a
    return np.sum(x ** 2)


@pytest.mark.parametrize("function", [loop_inside_a_traced_if, loop_after_an_early_return])
def test_python_loop_inside_a_traced_branch(function):
    """The loop's trip count, set in one branch only, stays a Python int: the adjoint loop is
    unrolled inside the adjoint branch and pops what the forward branch pushed."""
    small, large = np.array([0.3, -0.7, 0.5]), np.array([4.0, 5.0, 6.0])
    assert_one_trace_serves(function, [small, large, small * 0.5], 1.3)


def python_loop_inside_a_traced_loop(x, a):
    w = np.tanh(np.sum(np.sin(x)))
    while w < 1.4:  # traced
        w = w + 0.5 + x[1] ** 2
        k = 0
        while k < 2:  # in Python: the same two iterations every time
            k += 1
            x = np.concatenate([x[2:], x[:2]]) * a
    return np.sum(np.sin(x)) + np.sum(x) * a


def python_loop_inside_a_traced_for(x, a):
    for i in range(np.sum(x > 0.0)):  # traced: how many elements are positive
        for j in range(3):
            x = x * a + np.roll(x, j) * 0.1
    return np.sum(x ** 2)


@pytest.mark.parametrize("function", [python_loop_inside_a_traced_loop,
                                      python_loop_inside_a_traced_for])
def test_python_loop_inside_a_traced_loop(function):
    """The inner loop's trip count is the same in every iteration of the traced loop: it stays
    a Python int, so the adjoint's inner loop runs in Python too and pops what the primal's
    pushed, where it was refused ("pops values that were not pushed by a loop")."""
    inputs = [np.array([0.3, -0.7, 0.5, 0.1]), np.array([-0.3, -0.7, -0.5, -0.9]),
              np.array([0.9, 0.4, 0.2, -0.1])]
    assert_one_trace_serves(function, inputs, 0.9)


def return_under_an_or(x, a):
    if np.sin(a) < -0.3 or np.sum(x) < 0.35:
        return np.sum(np.sin(x)) + np.sum(x) * a
    a = np.mean(x + x)
    return np.sum(np.sin(x)) + np.sum(x) * a


@pytest.mark.parametrize("a", [1.5, -1.5, np.float64(1.5)],
                         ids=["constant-false", "constant-true", "traced"])
def test_or_of_a_constant_and_a_traced_condition(a):
    """Inside autotrace.function a float argument is a constant: `np.sin(a) < -0.3` is a
    Python bool, saved and popped as one, so the adjoint of its `if` is a Python `if` too."""
    assert_one_trace_serves(return_under_an_or, [np.array([1.0, 2.0]), np.array([-1.0, 0.5])],
                            a)


def item_written_in_a_traced_branch(x, a):
    v = x * a
    if np.sum(v) > 0:
        v[0] = x[1]
    return np.sum(v ** 2)


def test_item_written_in_a_traced_branch():
    """The adjoint branch restores `v[0]` from the saved values: `v` is a variable of the
    converted adjoint `if`, as it is of the forward one."""
    traced = assert_one_trace_serves(item_written_in_a_traced_branch,
                                     [np.array([1.0, 2.0, 3.0]), np.array([-1.0, -2.0, 0.5])],
                                     1.5)
    np.testing.assert_allclose(traced(np.array([1.0, 2.0, 3.0]), 1.5), [0.0, 13.0, 13.5])


def returns_in_a_nested_loop_then_selects_rows(x, a):
    # After the loops, the rest runs under a traced `if` on whether the function returned;
    # `v6 = (x - a)[rows]` is assigned there alone. An item of an array is never the user's
    # None, so the derivative's `if` gives v6 zeros on the other path, as it does its own
    # temporaries (before, it was taken for a name the user may set to None, and refused).
    k = 0
    while k < 2:
        k += 1
        w = np.tanh(np.max(x))
        while w < 1.93:
            w = w + 0.5 + a ** 2
            t = np.arctan2(x, -1.0)
            if a > 0.79:
                return np.sum(np.sin(t)) + np.sum(x) * a
    x = x * 2.0
    v6 = (x - a)[np.array([2, 1, 0])]
    return np.sum(v6 ** 2) + np.sum(np.sin(x))


@pytest.mark.parametrize("a", [np.float64(0.3), np.float64(0.9)])
def test_a_name_assigned_after_an_early_return_is_no_user_none(a):
    assert_one_trace_serves(returns_in_a_nested_loop_then_selects_rows,
                            [np.array([0.3, -0.5, 0.9]), np.array([1.2, 0.1, -0.4])], a)


def _scaled(u, s):
    return u * s + 1.0


def reads_a_name_of_one_branch_the_user_may_set_to_none(x, a):
    # `t = x` is assigned in the true branch alone and read by the derivative of the next line
    # only there. x may be None as far as the source says (a Python function's result, below),
    # so t counts as a name the user may set to None: the derivative's `if` gives it zeros on
    # the other path all the same, since it is unassigned there, not None (before, refused).
    if np.sum(x) < 0.5:
        t = x
        x = np.sin(t + x)
    else:
        u = a * 2.0
    x = _scaled(x, a)
    return np.sum(x ** 2) + a


@pytest.mark.parametrize("a", [np.float64(0.3), np.float64(-1.5)])
def test_a_name_one_branch_assigns_gets_zeros_though_the_user_may_set_it_to_none(a):
    assert_one_trace_serves(reads_a_name_of_one_branch_the_user_may_set_to_none,
                            [np.array([0.3, -0.5, 0.2]), np.array([1.2, 0.1, -0.4])], a)


def none_on_one_path(x):
    n = None
    if np.sum(x) > 0.0:
        n = x * 2.0
    return np.sum(x ** 2) if n is None else np.sum(n * x)


def test_a_name_the_user_sets_to_none_on_one_path_is_still_refused():
    # as the traced function itself refuses it: None is a value there, not a placeholder
    for traced in (autotrace.function(none_on_one_path),
                   autotrace.function(autotrace.grad(none_on_one_path))):
        with pytest.raises(ControlFlowError, match=r"variable 'n' is f64\[3\] after the true "
                           r"branch and None after the false branch"):
            traced(np.array([0.3, -0.5, 0.9]))


class _Pair:
    def __init__(self, w, b):
        self.w, self.b = w, b


def makes_an_object_in_a_branch(x):
    if np.sum(x) > 0.0:
        pair = _Pair(x * 2.0, 1.0)
    else:
        pair = _Pair(x * 3.0, 2.0)
    return np.sum(pair.w * pair.b)


def test_an_object_made_in_a_traced_branch_is_refused_saying_what_to_write():
    for traced in (autotrace.function(makes_an_object_in_a_branch),
                   autotrace.function(autotrace.grad(makes_an_object_in_a_branch))):
        with pytest.raises(ControlFlowError, match=(
                r"variable 'pair' is an object of class _Pair after the if; a traced condition "
                r"can only choose between arrays: choose the object's arrays under the condition "
                r"and make the object after the if")):
            traced(np.array([0.3, -0.5, 0.9]))
