"""np.select, np.interp, np.gradient and np.bincount in user functions, in every mode.

Each is differentiated as the ops it computes (runtime/primitives/piecewise.py and
finite_differences.py): np.select as np.where nested from its last condition to its first,
np.interp as NumPy's arithmetic on the segment that holds each x, np.gradient as its
differences; np.bincount has a rule (its weights' gradient is the bins') and traces
as a scatter_add. Whole functions go through grad, value_and_grad, vjp, the traced gradient, forward
mode and the gradient of a directional derivative (check_every_mode), the Hessian, and
vmap(grad) against a loop; traced, their values and dtypes are NumPy's.
"""
import numpy as np
import pytest

import autotrace
from autotrace.runtime.tracing.tracer_batching import BatchingError
from tests.numeric import central_difference, check_every_mode

RNG = np.random.default_rng(5)
X = np.linspace(-1.3, 1.4, 8)  # no point on a boundary of select's conditions
XP = np.sort(RNG.uniform(-2.0, 2.0, 6))
FP = RNG.standard_normal(6)
AT = np.concatenate([RNG.uniform(-2.5, 2.5, 8), XP[:1] - 0.5, XP[-1:] + 0.5])
INTERP_OPTIONS = [{}, dict(left=-3.0, right=4.0), dict(period=3.0)]
INTERP_IDS = ["ends", "left-right", "period"]
SAMPLES = RNG.standard_normal((4, 5))
ROWS = np.cumsum(RNG.uniform(0.5, 1.0, 4))  # unevenly spaced, no two close
COLUMNS = np.cumsum(RNG.uniform(0.5, 1.0, 5))


def check_hessian(f, x):
    """autotrace.hessian(f) at x along a random direction, against central differences of
    the gradient."""
    direction = np.random.default_rng(1).standard_normal(np.shape(x))
    step = 1e-6
    expected = (autotrace.grad(f)(x + step * direction)
                - autotrace.grad(f)(x - step * direction)) / (2 * step)
    np.testing.assert_allclose(autotrace.hessian(f)(x) @ direction, expected, rtol=1e-5,
                               atol=1e-6)


def as_tuple(value):
    return value if isinstance(value, tuple) else (value,)


def check_traced(function, x):
    """autotrace.function(function)(x) is NumPy's result, of NumPy's dtype (float64 and
    float32 x), to the bit."""
    for argument in (x, np.asarray(x, np.float32)):
        traced, expected = autotrace.function(function)(argument), function(argument)
        assert type(traced) is type(expected)
        for t, e in zip(as_tuple(traced), as_tuple(expected)):
            assert t.dtype == e.dtype
            np.testing.assert_array_equal(t, e)


# --- np.select --------------------------------------------------------------------------------

def chosen(x):
    return np.select([x < -0.5, x > 0.5], [x ** 2, np.sin(x)], x * 3.0)


def test_select_every_mode_and_traced():
    check_every_mode(lambda x: np.sum(chosen(x) ** 2)
                     + np.sum(np.select([x > 0.0], [np.sum(x) * x[:1]]) ** 2), X)
    check_traced(chosen, X)
    check_traced(lambda x: np.select([x > 0, x < -0.5], [x, 2], -1.0), X)  # numbers' dtypes
    assert autotrace.grad(lambda v: np.sum(chosen(v)))(X.astype(np.float32)).dtype == \
        np.float32


def test_select_refuses_as_numpy_does():
    with pytest.raises(ValueError, match="list of cases must be same length"):
        autotrace.grad(lambda x: np.sum(np.select([x > 0], [x, x])))(X)
    with pytest.raises(TypeError, match="invalid entry 0 in condlist: should be boolean"):
        autotrace.function(lambda x: np.select([x], [x]))(X)


# --- np.interp --------------------------------------------------------------------------------

@pytest.mark.parametrize("options", [dict(left=-3.0, right=4.0), dict(period=3.0)],
                         ids=["ends-and-left-right", "period"])
def test_interp_every_mode_in_x_points_and_values(options):
    def f(v):  # v: x, xp and fp, one after the other (the default ends too, without period)
        x, xp, fp = v[:10], v[10:16], v[16:]
        ends = 0.0 if "period" in options else np.sum(np.interp(x, xp, fp) ** 2)
        return np.sum(np.sin(np.interp(x, xp, fp, **options)) * AT) + ends
    check_every_mode(f, np.concatenate([AT, XP, FP]))


@pytest.mark.parametrize("options", INTERP_OPTIONS, ids=INTERP_IDS)
def test_interp_traced_as_numpy(options):
    check_traced(lambda x: np.interp(x, XP, FP, **options), AT)
    assert autotrace.function(lambda x: np.interp(x, XP, FP, **options))(0.3) == \
        np.interp(0.3, XP, FP, **options)


def test_interp_slope_is_zero_outside_and_the_segments_inside():
    x = np.array([XP[0] - 1.0, (XP[1] + XP[2]) / 2, XP[-1] + 1.0])
    slope = (FP[2] - FP[1]) / (XP[2] - XP[1])
    gradient = autotrace.grad(lambda v: np.sum(np.interp(v, XP, FP)))(x.astype(np.float32))
    assert gradient.dtype == np.float32
    np.testing.assert_allclose(gradient, [0.0, slope, 0.0], rtol=1e-6)


def test_interp_hessian():
    check_hessian(lambda fp: np.sum(np.interp(AT, XP * 1.1, fp) ** 2
                                    * np.interp(AT * 0.5, XP, fp)), FP)


def test_interp_and_select_vmap_of_grad_match_a_loop():
    def f(x, xp, fp):
        return np.sum(np.select([x > 0.0], [np.interp(x, xp, fp) ** 2], x))
    xs, fps = np.stack([AT, AT * 0.9]), np.stack([FP, FP * 2.0])
    batched = autotrace.vmap(autotrace.grad(f, wrt=(0, 1, 2)), in_axes=(0, None, 0))(xs, XP, fps)
    for k in range(2):
        for b, one in zip(batched, autotrace.grad(f, wrt=(0, 1, 2))(xs[k], XP, fps[k])):
            np.testing.assert_allclose(b[k], one, rtol=1e-12)
        np.testing.assert_allclose(batched[0][k], central_difference(
            lambda v: f(v, XP, fps[k]), xs[k]), rtol=1e-6, atol=1e-8)


# --- np.gradient ------------------------------------------------------------------------------

@pytest.mark.parametrize("spacings, options", [
    ((), {}), ((0.7,), dict(edge_order=2)), ((ROWS, COLUMNS), {}),
    ((ROWS, COLUMNS), dict(edge_order=2)), ((0.5, COLUMNS), {}),
    ((COLUMNS,), dict(axis=-1, edge_order=2))],
    ids=["unit", "number-edge2", "coordinates", "coordinates-edge2", "mixed", "axis"])
def test_gradient_traced_as_numpy(spacings, options):
    check_traced(lambda f: np.gradient(f, *spacings, **options), SAMPLES)


def test_gradient_every_mode_in_samples_and_coordinates():
    def f(v):  # v: the samples, then the coordinates of their columns
        rows, columns = np.gradient(np.reshape(v[:20], (4, 5)) ** 2, ROWS, v[20:], edge_order=2)
        return np.sum(np.sin(rows)) + np.sum(columns ** 2)
    check_every_mode(f, np.concatenate([np.ravel(SAMPLES), COLUMNS]))


def test_gradient_in_a_spacing_and_of_unit_spacing():
    def f(v):
        return np.sum(np.gradient(SAMPLES * v[1:], v[0], axis=0) ** 2) + np.sum(
            np.gradient(v[1:] ** 3) * COLUMNS)
    v = np.concatenate([[0.4], COLUMNS])
    np.testing.assert_allclose(autotrace.grad(f)(v), central_difference(f, v), rtol=1e-6)
    _, tangent = autotrace.forward(f)(v, tangent=v)
    assert tangent == pytest.approx(central_difference(f, v) @ v, rel=1e-6)


def test_gradient_hessian_and_vmap_of_grad():
    def f(samples, coordinates):
        return np.sum(np.gradient(samples ** 2, coordinates) ** 2)
    check_hessian(lambda c: f(SAMPLES[0], c), COLUMNS)
    batched = autotrace.vmap(autotrace.grad(f, wrt=(0, 1)), in_axes=(0, None))(SAMPLES, COLUMNS)
    for k in range(len(SAMPLES)):
        for b, one in zip(batched, autotrace.grad(f, wrt=(0, 1))(SAMPLES[k], COLUMNS)):
            np.testing.assert_allclose(b[k], one, rtol=1e-12)


def test_gradient_refuses_as_numpy_does():
    with pytest.raises(ValueError, match=r"at least \(edge_order \+ 1\) elements"):
        autotrace.grad(lambda x: np.sum(np.gradient(x[:2], edge_order=2)))(X)
    with pytest.raises(ValueError, match="distances must match the length"):
        autotrace.function(lambda x: np.gradient(x, COLUMNS))(X)


# --- np.bincount ------------------------------------------------------------------------------

LABELS = np.array([0, 1, 0, 2, 1, 4])
WEIGHTS = RNG.standard_normal(6)


def test_bincount_every_mode_and_traced():
    check_every_mode(lambda w: np.sum(np.sin(np.bincount(LABELS, w ** 2, minlength=7))), WEIGHTS)
    for weights in (WEIGHTS, WEIGHTS.astype(np.float32)):
        traced = autotrace.function(lambda w: np.bincount(LABELS, w))(weights)
        assert traced.dtype == np.float64
        np.testing.assert_array_equal(traced, np.bincount(LABELS, weights))
        assert autotrace.grad(lambda w: np.sum(np.bincount(LABELS, w) ** 2))(
            weights).dtype == weights.dtype


def test_bincount_of_traced_bins_needs_minlength_and_checks_it():
    def weighted(x, w):
        return np.bincount(x, w, minlength=6)
    counted = autotrace.function(lambda x: np.bincount(x, minlength=6))(LABELS)
    np.testing.assert_array_equal(counted, np.bincount(LABELS, minlength=6))
    assert counted.dtype == np.bincount(LABELS).dtype
    np.testing.assert_array_equal(autotrace.function(weighted)(LABELS, WEIGHTS),
                                  weighted(LABELS, WEIGHTS))
    line = weighted.__code__.co_firstlineno + 1
    with pytest.raises(IndexError, match=(
            r"^np.bincount of a traced x with minlength=6: x holds values from 3 to 7, and a "
            r"traced np.bincount counts values in \[0, 6\) only \(its result's length is "
            r"minlength\); give a minlength above every value of x\n"
            rf'  File "{__file__}", line {line}\n')):
        autotrace.function(weighted)(LABELS + 3, WEIGHTS)
    with pytest.raises(NotImplementedError, match=(
            r"np.bincount of a traced x: the length of its result, max\(x\) \+ 1, is not known "
            r"while tracing; give minlength=n")):
        autotrace.function(lambda x, w: np.bincount(x, w))(LABELS, WEIGHTS)


def test_bincount_vmap_of_grad_matches_a_loop():
    def f(w, x):
        return np.sum(np.bincount(x, w, minlength=6) ** 2)
    xs, ws = np.stack([LABELS, LABELS[::-1]]), np.stack([WEIGHTS, WEIGHTS * 2.0])
    batched = autotrace.vmap(autotrace.grad(f))(ws, xs)
    for k in range(2):
        np.testing.assert_allclose(batched[k], central_difference(lambda w: f(w, xs[k]), ws[k]),
                                   rtol=1e-6, atol=1e-8)
    check_hessian(lambda w: f(w, LABELS), WEIGHTS)


# --- np.piecewise -----------------------------------------------------------------------------

def pieces_of(x):
    return np.piecewise(x, [x < -0.5, x > 0.5], [lambda v: v ** 2, np.sin, lambda v: 3.0 * v])


def test_piecewise_differentiates_the_functions_given_every_mode():
    # the functions, a constant, the extra arguments and the otherwise-function
    check_every_mode(lambda x: np.sum(pieces_of(x) ** 2) + np.sum(np.piecewise(
        x, [x < 0.0], [lambda v, a: a * v ** 3, 1.5], 2.0) * x), X)
    np.testing.assert_allclose(autotrace.grad(lambda x: np.sum(pieces_of(x)))(X),
                               np.where(X < -0.5, 2 * X, np.where(X > 0.5, np.cos(X), 3.0)),
                               rtol=1e-12)
    check_hessian(lambda x: np.sum(pieces_of(x) ** 3), X)


def test_piecewise_traced_as_numpy():
    check_traced(pieces_of, X)
    check_traced(lambda x: np.piecewise(x, [x > 0, x > 1], [np.cos, np.sin, 5.0]), X * 2.0)
    check_traced(lambda x: np.piecewise(x, x > 0, [np.cos, 2.0]), X)


def test_piecewise_of_a_number_and_under_vmap():
    assert autotrace.grad(lambda x: np.piecewise(x, x > 0, [np.cos]))(0.3) == \
        pytest.approx(-np.sin(0.3), rel=1e-12)
    with pytest.raises(BatchingError, match="cannot batch the op .mask_select."):
        autotrace.vmap(autotrace.grad(lambda x: np.sum(pieces_of(x))))(np.stack([X, X * 0.5]))
