"""A complex value's gradient is complex from its first term on: np.real's gradient Re(g) is
made in the value's complex dtype, so an item's complex term added after it (np.imag of a[0:2])
keeps its imaginary part whatever the order of the terms, and both branches of a traced `if`
give a gradient of one dtype.

The gradient of a real f of a complex a is df/dRe(a) - 1j df/dIm(a) (autotrace's pairing
Re(g t), as JAX's): checked against central differences of f along 1 and along 1j, eagerly,
traced, vmapped and differentiated again in forward mode (forward over reverse). Forward mode's
tangent of a complex value made from a real one (x + 1j) is complex too, so a complex item
written into it keeps its imaginary part, and a real cotangent given for a complex output is
made complex."""
import numpy as np
import pytest

import autotrace

A = np.array([1.0 + 2.0j, 3.0 - 1.0j, 0.5 + 0.5j])
DIRECTION = np.array([0.3 - 0.2j, 1.0 + 0.5j, -0.7j])
EPS = 1e-6


def imaginary_part_first(a):
    return np.imag(np.sum(a[0:2])) + np.sum(np.real(a))


def real_parts_first(a):
    return np.sum(np.real(a)) + np.imag(np.sum(a[0:2]))


def real_parts_of_a_product(a):
    b = a * 2.0
    return np.sum(np.real(b) ** 2) + np.imag(b[1]) * np.real(a[0])


def branches(a):
    if np.sum(np.real(a)) > 0:  # traced under autotrace.function, a select under vmap
        y = np.sum(np.real(a)) + np.imag(np.sum(a[0:2]))
    else:
        y = np.imag(a[2]) * 3.0 + np.sum(np.real(a) ** 2)
    return y


def attributes(a):
    return np.sum(a.real ** 2) + a[1].imag


def differences(f, a):
    """df/dRe(a_k) - 1j df/dIm(a_k), by central differences."""
    gradient = np.zeros(a.shape, complex)
    for k in range(a.size):
        step = np.zeros(a.shape, complex)
        step[k] = EPS
        along_real = (f(a + step) - f(a - step)) / (2 * EPS)
        along_imaginary = (f(a + 1j * step) - f(a - 1j * step)) / (2 * EPS)
        gradient[k] = along_real - 1j * along_imaginary
    return gradient


MODES = {
    "grad": lambda f, a: autotrace.grad(f)(a),
    "function(grad)": lambda f, a: autotrace.function(autotrace.grad(f))(a),
    "vmap(grad)": lambda f, a: autotrace.vmap(autotrace.grad(f))(np.stack([a, a]))[1],
}


@pytest.mark.parametrize("f", [imaginary_part_first, real_parts_first, real_parts_of_a_product,
                               branches, attributes])
@pytest.mark.parametrize("point", [A, -A], ids=["positive", "negative"])
def test_a_complex_gradient_keeps_its_imaginary_part_whichever_term_comes_first(f, point):
    expected = differences(f, point)
    for mode, gradient_of in MODES.items():
        gradient = gradient_of(f, point)
        assert gradient.dtype == np.complex128, mode
        np.testing.assert_allclose(gradient, expected, atol=1e-7, err_msg=mode)
    gradient = autotrace.grad(f)
    changed = (gradient(point + EPS * DIRECTION) - gradient(point - EPS * DIRECTION)) / (2 * EPS)
    np.testing.assert_allclose(autotrace.jvp(gradient, (point,), (DIRECTION,))[1], changed,
                               atol=1e-6, err_msg="jvp(grad)")


def test_a_complex64_gradient_begun_by_real_parts_stays_complex64():
    a = A.astype(np.complex64)
    for mode, gradient_of in MODES.items():
        gradient = gradient_of(imaginary_part_first, a)
        assert gradient.dtype == np.complex64, mode
        np.testing.assert_allclose(gradient, [1 - 1j, 1 - 1j, 1], err_msg=mode)


def complex_item_into_a_shifted_real(x, w):
    z = x + 1j  # (its tangent is x's, real, made complex as z is)
    z[0] = w * 1j * x[1]
    return np.imag(np.sum(np.exp(z) * z)) + np.sum(np.real(z) ** 3)


def complex_slice_into_a_shifted_real(x, w):
    z = x + np.array([0j, 1j, 2j])
    z[0:2] = w * 1j * x[1:]
    return np.imag(np.sum(np.exp(z) * z)) + np.sum(np.real(z) ** 3)


@pytest.mark.parametrize("f", [complex_item_into_a_shifted_real,
                               complex_slice_into_a_shifted_real])
def test_a_complex_tangent_written_into_a_complex_value_of_a_real_one_keeps_its_imaginary_part(f):
    """Forward mode's tangent of x + 1j: complex, as the value is (it was x's real one, and the
    item's complex tangent written into it raised a TypeError or lost its imaginary part)."""
    x, w = np.array([0.3, 1.2, -0.4]), 0.7
    tangents = (np.array([1.0, -0.5, 0.25]), 0.5)
    changed = (f(x + EPS * tangents[0], w + EPS * tangents[1])
               - f(x - EPS * tangents[0], w - EPS * tangents[1])) / (2 * EPS)
    np.testing.assert_allclose(autotrace.jvp(f, (x, w), tangents)[1], changed, rtol=1e-7)
    traced = autotrace.function(autotrace.forward(f, wrt=(0, 1)))(x, w, tangent=tangents)[1]
    np.testing.assert_allclose(traced, changed, rtol=1e-7)


def doubled_and_an_imaginary_part(a):
    y = a * 2.0
    return y, np.imag(y[0])


def test_a_real_cotangent_of_a_complex_output_keeps_the_imaginary_part_added_to_it():
    """The seed of the complex output y, given real, is made complex: np.imag(y[0])'s -1j
    term added into its item kept only its real part (gradient 2 of a[0], where 2 - 2j is)."""
    a = np.array([1.0 + 2.0j, 3.0 - 1.0j])
    dy = (np.array([1.0, 1.0]), 1.0)
    expected = [2.0 - 2.0j, 2.0]
    np.testing.assert_allclose(autotrace.vjp(doubled_and_an_imaginary_part, a)[1](dy)[0],
                               expected)
    traced = autotrace.function(autotrace.grad(doubled_and_an_imaginary_part))(a, dy=dy)
    np.testing.assert_allclose(traced, expected)
