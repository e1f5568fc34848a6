"""runtime.derivatives.structure.accumulate: `b = accumulate(b, c)` writes into b's buffer only
where no other name, container or view can see it, and otherwise adds as `add` does."""
import weakref

import numpy as np

import autotrace
from autotrace.testing import check_grads
from autotrace.runtime.derivatives.structure import accumulate


def test_a_gradient_only_its_name_holds_is_written_in_place():
    gradient = np.zeros(3)
    held = weakref.ref(gradient)  # weakly: not a reference that counts
    gradient = accumulate(gradient, np.ones(3))
    assert gradient is held()
    np.testing.assert_array_equal(gradient, [1.0, 1.0, 1.0])


def test_a_gradient_that_something_else_sees_is_left_as_it_was():
    def check(gradient, *others):
        result = accumulate(gradient, np.ones(3))
        assert result is not gradient
        np.testing.assert_array_equal(result, [1.0, 1.0, 1.0])
        np.testing.assert_array_equal(gradient, [0.0, 0.0, 0.0])

    gradient = np.zeros(3)
    check(gradient)                     # another name: the caller's `gradient`
    check(np.zeros((2, 3))[0])          # a view: its base may be read elsewhere
    gradient = np.zeros(3)
    row = gradient[None]                # a view of it
    check(gradient, row)
    frozen = np.zeros(3)
    frozen.flags.writeable = False
    check(frozen)
    gradient = np.zeros(3)
    check(gradient, [gradient])         # held by a list


def test_other_types_shapes_and_dtypes_are_added_as_add_does():
    single = np.zeros(3, np.float32)
    widened = accumulate(single, np.ones(3))
    assert widened.dtype == np.float64 and single.dtype == np.float32 and not single.any()
    np.testing.assert_array_equal(accumulate(np.zeros(3), np.ones((2, 3))), np.ones((2, 3)))
    assert accumulate(1.5, 2.0) == 3.5 and accumulate(None, 2.0) == 2.0
    assert accumulate((np.zeros(2), 1.0), (np.ones(2), 2.0))[1] == 3.0


def aliased(x, w):
    s = x + x  # in its adjoint bx and bx_term_1 are both bs (for arrays): three names, one array
    t = s * w
    return np.sum(t * s)


def test_gradients_that_share_arrays_in_generated_code_stay_right():
    x, w = np.array([1.0, -2.0, 0.5]), np.array([0.3, 0.7, -1.1])
    source = autotrace.source(autotrace.grad(aliased, wrt=(0, 1)))
    assert "else unbroadcast(bs, x)\n    bx = accumulate(bx, bx_term_1)\n" in source
    gx, gw = autotrace.grad(aliased, wrt=(0, 1))(x, w)
    np.testing.assert_allclose(gx, 8 * x * w)
    np.testing.assert_allclose(gw, 4 * x * x)


def halves_and_logs(x):
    return np.sum(x / 2.0 + np.log(x))


def hypotenuse_angle(x):
    return np.sum(np.hypot(x, 2.0 * x + 1.0) + np.arctan2(x, x + 2.0))


def test_second_derivatives_of_code_that_accumulates_are_right():
    # grad's code accumulates bx in place; differentiating that code again splits
    # `bx = accumulate(bx, c)` into two statements and saves the old bx between them.
    x = np.array([0.5, 1.2, 0.8])
    second = autotrace.grad(lambda x: np.sum(autotrace.grad(halves_and_logs)(x)))(x)
    np.testing.assert_allclose(second, -1.0 / x ** 2)
    check_grads(hypotenuse_angle, (x,), order=2, modes=("reverse", "forward"))
