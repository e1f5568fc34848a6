"""np.select and np.interp in user functions, in every mode.

Both are differentiated as the ops they compute (runtime/primitives/piecewise.py): np.select as
np.where nested from its last condition to its first, np.interp as NumPy's arithmetic on the
segment that holds each x. Here whole functions go through grad, value_and_grad, vjp, the traced
gradient, forward mode and the gradient of a directional derivative (check_every_mode), the
Hessian, and vmap(grad) against a loop; traced, their values and dtypes are NumPy's.
"""
import numpy as np
import pytest

import autotrace
from tests.numeric import central_difference, check_every_mode

RNG = np.random.default_rng(5)
X = np.linspace(-1.3, 1.4, 8)  # no point on a boundary of select's conditions
XP = np.sort(RNG.uniform(-2.0, 2.0, 6))
FP = RNG.standard_normal(6)
AT = np.concatenate([RNG.uniform(-2.5, 2.5, 8), XP[:1] - 0.5, XP[-1:] + 0.5])
INTERP_OPTIONS = [{}, dict(left=-3.0, right=4.0), dict(period=3.0)]


def chosen(x):
    return np.select([x < -0.5, x > 0.5], [x ** 2, np.sin(x)], x * 3.0)


def test_select_every_mode():
    check_every_mode(lambda x: np.sum(chosen(x) ** 2), X)
    # the default a number, a choice broadcast against the conditions
    check_every_mode(lambda x: np.sum(np.select([x > 0.0], [np.sum(x) * x[:1]]) ** 2), X)


def test_select_traced_value_and_dtype_are_numpys():
    for x in (X, X.astype(np.float32)):
        traced = autotrace.function(chosen)(x)
        assert traced.dtype == chosen(x).dtype == x.dtype
        np.testing.assert_array_equal(traced, chosen(x))
        assert autotrace.grad(lambda v: np.sum(chosen(v)))(x).dtype == x.dtype


def test_select_refuses_as_numpy_does():
    with pytest.raises(ValueError, match="list of cases must be same length"):
        autotrace.grad(lambda x: np.sum(np.select([x > 0], [x, x])))(X)
    with pytest.raises(TypeError, match="invalid entry 0 in condlist: should be boolean"):
        autotrace.function(lambda x: np.select([x], [x]))(X)


@pytest.mark.parametrize("options", INTERP_OPTIONS, ids=["ends", "left-right", "period"])
def test_interp_every_mode(options):
    check_every_mode(lambda x: np.sum(np.sin(np.interp(x, XP, FP, **options))), AT)
    check_every_mode(lambda fp: np.sum(np.interp(AT, XP, fp, **options) ** 3), FP)
    check_every_mode(lambda xp: np.sum(np.sin(np.interp(AT, xp, FP, **options))), XP)


@pytest.mark.parametrize("options", INTERP_OPTIONS, ids=["ends", "left-right", "period"])
def test_interp_traced_value_and_dtype_are_numpys(options):
    for x in (AT, AT.astype(np.float32), 0.3):
        traced = autotrace.function(lambda v: np.interp(v, XP, FP, **options))(x)
        expected = np.interp(x, XP, FP, **options)
        assert traced.dtype == expected.dtype == np.float64
        np.testing.assert_array_equal(traced, expected)
    gradient = autotrace.grad(lambda v: np.sum(np.interp(v, XP, FP)))(AT.astype(np.float32))
    assert gradient.dtype == np.float32


def test_interp_slope_is_zero_outside_and_the_segments_inside():
    x = np.array([XP[0] - 1.0, (XP[1] + XP[2]) / 2, XP[-1] + 1.0])
    slopes = (FP[2] - FP[1]) / (XP[2] - XP[1])
    np.testing.assert_allclose(autotrace.grad(lambda v: np.sum(np.interp(v, XP, FP)))(x),
                               [0.0, slopes, 0.0], rtol=1e-12)


def test_interp_hessian_in_points_and_values():
    def f(fp):
        return np.sum(np.interp(AT, XP * 1.1, fp) ** 2 * np.interp(AT * 0.5, XP, fp))
    hessian = autotrace.hessian(f)(FP)
    expected = np.stack([central_difference(lambda v: autotrace.grad(f)(v)[i], FP)
                         for i in range(len(FP))])
    np.testing.assert_allclose(hessian, expected, rtol=1e-5, atol=1e-6)


def test_interp_and_select_vmap_of_grad_match_a_loop():
    def f(x, xp, fp):
        return np.sum(np.select([x > 0.0], [np.interp(x, xp, fp) ** 2], x))
    xs, fps = np.stack([AT, AT * 0.9]), np.stack([FP, FP * 2.0])
    batched = autotrace.vmap(autotrace.grad(f, wrt=(0, 1, 2)), in_axes=(0, None, 0))(xs, XP, fps)
    for k in range(2):
        one = autotrace.grad(f, wrt=(0, 1, 2))(xs[k], XP, fps[k])
        for batched_gradient, gradient in zip(batched, one):
            np.testing.assert_allclose(batched_gradient[k], gradient, rtol=1e-12)
        np.testing.assert_allclose(batched[0][k], central_difference(
            lambda v: f(v, XP, fps[k]), xs[k]), rtol=1e-6, atol=1e-8)
