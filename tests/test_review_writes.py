"""In-place methods on part of a constant array, which change no value that carries gradient,
and writes into a class attribute that a derivative would read as unchanged."""
import numpy as np
import pytest

import autotrace
from tests.numeric import central_difference

POINT = np.array([0.3, -1.2, 0.8, 1.5])


# --- an in-place method on part of a constant array ---------------------------------------------

def row_filled(x):
    A = np.zeros((2, 4))
    A[0].fill(1.0)
    return np.sum(A * x)


def columns_filled(x):
    M = np.eye(4)
    M[:, 0].fill(2.0)
    M.T[1].fill(3.0)
    return x @ M @ x


def tail_filled(x):
    buf = np.zeros(4)
    buf[1:].fill(x[0] if False else 0.5)
    return np.sum(buf * x)


def row_put(x):
    t = np.zeros((2, 4))
    t[1].put([0, 2], [1.0, 2.0])
    return np.sum(t[1] * x)


def mask_after_diagonal(x):
    W = np.eye(4)
    np.fill_diagonal(W, 2.0)
    W[0].fill(0.5)
    mask = np.ones(4)
    mask[:2].fill(0.0)
    return x @ W @ (mask * x)


@pytest.mark.parametrize("f", [row_filled, columns_filled, tail_filled, row_put,
                               mask_after_diagonal])
def test_in_place_method_on_part_of_a_constant_array(f):
    want = central_difference(f, POINT)
    np.testing.assert_allclose(autotrace.grad(f)(POINT), want, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(autotrace.function(autotrace.grad(f))(POINT), want, rtol=1e-6,
                               atol=1e-8)
    direction = np.array([0.5, -1.0, 0.25, 2.0])
    np.testing.assert_allclose(autotrace.jvp(f, (POINT,), (direction,))[1], want @ direction,
                               rtol=1e-6)
    batched = autotrace.vmap(autotrace.grad(f))(np.stack([POINT, POINT]))
    np.testing.assert_allclose(batched[1], want, rtol=1e-6, atol=1e-8)


def product_filled(x):
    M = np.outer(x, x)
    M[0].fill(1.0)
    return np.sum(M * np.arange(16).reshape(4, 4))


def filled_with_an_argument(x):
    y = np.zeros(4)
    y[1:].fill(x[0])
    return np.sum(y * x)


def filled_after_a_product(x):
    A = np.ones((2, 2))
    y = A @ x[:2]
    A[0].fill(5.0)
    return np.sum(y * x[:2]) + np.sum(A @ x[2:])


def filled_in_a_loop(x):
    A = np.ones((2, 4))
    total = 0.0
    for i in range(2):
        total = total + np.sum(A * x)
        A[i].fill(3.0)
    return total


@pytest.mark.parametrize("f, line, message", [
    (product_filled, 2, "M[0].fill(), which changes 'M' in place; compute a new value "
                        "instead: M[0] = np.full_like(M[0], 1.0)"),
    (filled_with_an_argument, 2, "y[1:].fill(), which changes 'y' in place"),
    # the derivative of `A @ x[:2]` would read A after the write
    (filled_after_a_product, 3, "A[0].fill(), which changes 'A' in place"),
    (filled_in_a_loop, 5, "A[i].fill(), which changes 'A' in place"),
])
@pytest.mark.parametrize("transform", [autotrace.grad, autotrace.forward])
def test_in_place_method_on_part_of_a_varied_array_is_refused(f, line, message, transform):
    with pytest.raises(autotrace.TransformError) as error:
        transform(f)(POINT)
    assert f"autotrace cannot differentiate {message}" in str(error.value)
    assert f"line {f.__code__.co_firstlineno + line}" in str(error.value)


# --- a class attribute or global written with a value that carries gradient --------------------

class Spring:
    k = 2.0

    def __init__(self, rest):
        self.rest = rest

    @property
    def twice(self):
        return self.k * 2.0


SETTINGS = {"scale": 2.0}
SCALE = 2.0


def set_stiffness(v):
    Spring.k = v


def set_scale(v):
    global SCALE
    SCALE = v


def stiffness_set_by_a_helper(x):
    set_stiffness(x[0])
    return Spring.k ** 2 * x[1]


def property_after_a_helper(x):
    set_stiffness(x[0])
    return Spring(x[2]).twice ** 2 * x[1]


def global_set_by_a_helper(x):
    set_scale(x[0])
    return SCALE ** 2 * x[1]


def stiffness_set_here(x):
    Spring.k = x[0] * 2.0
    return Spring.k * x[1]


HELPER = ("this call of set_stiffness: it sets the class attribute Spring.k (Spring.k = ..., "
          f"{__file__}, line {set_stiffness.__code__.co_firstlineno + 1}) to a value that "
          "carries gradient")
HERE = ("Spring.k = ..., a write into the class attribute Spring.k: it writes a value that "
        "carries gradient, and autotrace reads the attributes of a class as constants, so the "
        "gradient through what reads it back would be lost; pass the value as an argument to "
        "what reads Spring.k, or keep it on an instance of Spring instead")


@pytest.mark.parametrize("f, message", [
    (stiffness_set_by_a_helper, HELPER),
    (property_after_a_helper, HELPER),
    (global_set_by_a_helper, "this call of set_scale: it sets the global 'SCALE' (SCALE = ..."),
    (stiffness_set_here, HERE),
])
@pytest.mark.parametrize("transform", [
    autotrace.grad, autotrace.forward, autotrace.hessian,
    lambda f: autotrace.function(autotrace.grad(f))])
def test_class_attribute_written_with_gradient_is_refused(f, message, transform):
    # The derivative read the attribute back as a constant: grad [0, 1, 0] for
    # property_after_a_helper, where it is [-4, 1, 0].
    Spring.k = 2.0
    try:
        with pytest.raises(autotrace.TransformError) as error:
            transform(f)(np.array([0.5, -1.0, 2.0]))
    finally:
        Spring.k, globals()["SCALE"] = 2.0, 2.0
    assert f"autotrace cannot differentiate {message}" in str(error.value)
    assert f"line {f.__code__.co_firstlineno + 1}" in str(error.value)


def stiffness_set_to_a_constant(x):
    set_stiffness(3.0)
    Spring.k = Spring.k + 1.0
    return Spring(x[2]).twice * x[1] ** 2


def test_class_attribute_written_with_a_constant_is_followed():
    try:
        np.testing.assert_allclose(autotrace.grad(stiffness_set_to_a_constant)(
            np.array([0.5, -1.0, 2.0])), [0.0, -16.0, 0.0])
    finally:
        Spring.k = 2.0


def test_property_reading_a_numpy_float_class_attribute_is_refused():
    # a NumPy float is what a forward sweep gives `Spring.k = x[0]` written out of sight
    Spring.k = np.float64(0.5)
    try:
        with pytest.raises(TypeError, match="autotrace cannot differentiate through the "
                                            "property Spring.twice"):
            autotrace.grad(lambda x: Spring(x[2]).twice ** 2 * x[1])(np.array([0.5, -1.0, 2.0]))
    finally:
        Spring.k = 2.0


def _ident(a):
    return a


def filled_through_another_name(x):
    A = np.ones(4)
    y = np.sum(A * x ** 2)
    B = A
    B[1:].fill(5.0)
    return y


def filled_after_a_view_was_read(x):
    A = np.ones((2, 4))
    V = A.T
    y = np.sum(V[:, 0] * x ** 2)
    A[0].fill(5.0)
    return y


def filled_after_a_list_held_it(x):
    A = np.ones(4)
    L = [A]
    y = np.sum(L[0] * x ** 2)
    A[1:].fill(5.0)
    return y


def filled_after_a_helper_returned_it(x):
    A = np.ones(4)
    B = _ident(A)
    y = np.sum(B * x ** 2)
    A[1:].fill(5.0)
    return y


@pytest.mark.parametrize("f", [filled_through_another_name, filled_after_a_view_was_read,
                               filled_after_a_list_held_it, filled_after_a_helper_returned_it])
def test_part_of_a_constant_array_another_name_holds_is_refused(f):
    # each name, view, container or call result holding the array's memory reads its new
    # contents after the write, where the forward pass read the old (a gradient 5x too large)
    with pytest.raises(autotrace.TransformError, match=r"autotrace cannot differentiate "
                       r"[AB]\[[01]:?\]\.fill\(\)"):
        autotrace.grad(f)(POINT)
