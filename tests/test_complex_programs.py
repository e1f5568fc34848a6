"""Derivatives of complex programs that were wrong with no error: np.sign of complex values
(a constant to the gradient, though z / |z| is not: now refused, as np.abs of them is); a power
of a negative real base in its exponent (d/dz b ** z = b ** z log(b), with log(-2) =
log(2) + i pi, the branch NumPy's complex power takes); and the gradient of a real argument of
a complex function, which was complex for an array and its real part for a Python float: now
real for both, the real part Re(u f'(x)) for the seed u, as JAX's is.

Each against central differences: along 1 and along 1j of a complex argument where the
function is holomorphic (the tangent f'(z) dz, the gradient g f'(z)), along 1 of a real one."""
import re

import numpy as np
import pytest

import autotrace
from tests.numeric import check_every_mode

Z = np.array([0.7 + 0.4j, -1.2 + 0.3j, 0.5 - 1.1j])
X = np.array([0.4, -1.3, 2.1])
EPS = 1e-6
CLOSE = dict(rtol=1e-6, atol=1e-8)


def differences(function, point, scale):
    """(f(point + h scale e_k) - f(point - h scale e_k)) / 2h for each k: the tangents along
    the unit directions times `scale` (1 or 1j)."""
    rows = []
    for k in range(point.size):
        step = np.zeros(point.shape, complex if scale != 1 else point.dtype)
        step.flat[k] = EPS * scale
        rows.append((function(point + step) - function(point - step)) / (2 * EPS))
    return np.array(rows)


def gradients(function, point):
    """The gradient of `function` at `point` eagerly, traced and vmapped (over two copies)."""
    yield "grad", autotrace.grad(function)(point)
    yield "function(grad)", autotrace.function(autotrace.grad(function))(point)
    batched = autotrace.vmap(autotrace.grad(function))(np.stack([point, point]))
    yield "vmap(grad)", batched[1]


def tangents(function, point, direction):
    yield "jvp", autotrace.jvp(function, (point,), (direction,))[1]
    yield "function(forward)", autotrace.function(autotrace.forward(function))(
        point, tangent=direction)[1]


def check_holomorphic(function, z):
    """The gradient and tangents of `function` (complex array -> complex number), holomorphic
    in z, against differences along 1 and 1j, in every mode."""
    for scale in (1, 1j):
        expected = differences(function, z, scale)
        for mode, gradient in gradients(function, z):
            np.testing.assert_allclose(gradient * scale, expected, **CLOSE, err_msg=mode)
        for k in range(z.size):
            direction = np.zeros(z.shape, complex)
            direction[k] = scale
            for mode, tangent in tangents(function, z, direction):
                np.testing.assert_allclose(tangent, expected[k], **CLOSE, err_msg=mode)


# --- np.sign ------------------------------------------------------------------------------------

SIGN_REFUSED = re.escape(
    "autotrace does not differentiate numpy.sign of complex values: np.sign(z) is z / |z|, "
    "which is not holomorphic, and autotrace's complex derivatives are those of holomorphic "
    "functions and of np.real, np.imag, np.conj and np.abs")


def sign_times(z):
    return np.sum(np.sign(z) * z)


def sign_of_a_complex_value_of_real(x):
    return np.sum(np.sign(x * (1.0 + 1.0j)) * x)


REFUSING = {
    "grad": autotrace.grad,
    "function(grad)": lambda f: autotrace.function(autotrace.grad(f)),
    "vmap(grad)": lambda f: lambda x: autotrace.vmap(autotrace.grad(f))(np.stack([x, x])),
    "jvp": lambda f: lambda x: autotrace.jvp(f, (x,), (np.ones_like(x),)),
    "function(forward)": lambda f: autotrace.function(autotrace.forward(f)),
}


@pytest.mark.parametrize("mode", REFUSING)
@pytest.mark.parametrize("function, point", [(sign_times, Z),
                                             (sign_of_a_complex_value_of_real, X)],
                         ids=["complex", "complex-of-real"])
def test_the_sign_of_complex_values_is_refused(mode, function, point):
    with pytest.raises(NotImplementedError, match=SIGN_REFUSED):
        REFUSING[mode](function)(point)


def test_the_sign_of_real_values_has_a_zero_derivative():
    check_every_mode(lambda x: np.sum(np.sign(x) * x ** 2), X)  # 2 |x|


# --- Powers of a negative real base -------------------------------------------------------------

def negative_float_base(z):
    return np.sum((-2.0) ** z)


def negative_complex_base(z):
    return np.sum(np.power(-2.0 + 0.0j, z))


def negative_bases(z):
    return np.sum(np.array([-2.0, -0.5, 3.0]) ** z)


def bases_of_negative_real_part(z):
    return np.sum(np.array([-1.0 + 1.0j, -2.0 - 0.5j, -0.5 + 0.0j]) ** z)


def bases_below_the_cut(z):
    """-2 - 0j (as -z or np.conj(z) of a real-valued complex z gives) lies below the cut of
    the log: NumPy's power takes log(2) - i pi there, -3 + 0j log(3) + i pi."""
    return np.sum(np.array([complex(-2.0, -0.0), -3.0 + 0.0j, 1.0 - 0.0j]) ** z)


@pytest.mark.parametrize("function", [negative_float_base, negative_complex_base,
                                      negative_bases, bases_of_negative_real_part,
                                      bases_below_the_cut])
def test_a_complex_power_of_a_negative_base_is_differentiated_in_its_exponent(function):
    check_holomorphic(function, Z)


def test_the_derivative_in_the_exponent_reads_the_principal_log():
    expected = (-2.0 + 0.0j) ** Z * (np.log(2.0) + 1j * np.pi)
    for mode, gradient in gradients(negative_float_base, Z):
        np.testing.assert_allclose(gradient, expected, **CLOSE, err_msg=mode)


def test_a_base_below_the_cut_reads_the_log_of_its_side():
    bases = np.array([complex(-2.0, -0.0), -3.0 + 0.0j, 1.0 - 0.0j])
    expected = bases ** Z * np.log(bases)
    for mode, gradient in gradients(bases_below_the_cut, Z):
        np.testing.assert_allclose(gradient, expected, **CLOSE, err_msg=mode)


def test_a_real_exponent_of_a_complex_negative_base_gets_a_real_gradient():
    def power(p):
        return np.sum(np.power(-2.0 + 0.0j, p) * np.array([1.0, 2.0j, -1.0]))
    expected = differences(power, X, 1)
    for mode, gradient in gradients(power, X):
        assert gradient.dtype == np.float64, mode
        np.testing.assert_allclose(gradient, expected.real, **CLOSE, err_msg=mode)


# --- A real argument of a complex function ------------------------------------------------------

def complex_of_real(x):
    return np.sum(np.exp(1j * x) * x + (2.0 - 1.0j) * x * x)


def first_derivative(x):
    """d/dx of each term of complex_of_real: complex."""
    return np.exp(1j * x) * (1.0 + 1j * x) + 2.0 * (2.0 - 1.0j) * x


SEED = 0.5 - 2.0j


@pytest.mark.parametrize("point", [0.7, np.float64(0.7), np.array(0.7), X,
                                   X.astype(np.float32)],
                         ids=["float", "float64", "0-d", "array", "float32"])
def test_a_real_argument_of_a_complex_function_gets_a_real_gradient(point):
    expected = np.real(SEED * first_derivative(np.asarray(point, np.float64)))
    modes = {"grad": autotrace.grad(complex_of_real),
             "function(grad)": autotrace.function(autotrace.grad(complex_of_real)),
             "vjp": lambda x: autotrace.vjp(complex_of_real, x)[1](SEED)[0]}
    for mode, derivative in modes.items():
        gradient = derivative(point, dy=SEED) if mode != "vjp" else derivative(point)
        if type(point) is float:
            assert type(gradient) is float, mode
        else:
            assert gradient.dtype == point.dtype and np.shape(gradient) == np.shape(point), mode
        np.testing.assert_allclose(gradient, expected, rtol=1e-5, err_msg=mode)
    if np.ndim(point) == 1:
        batched = autotrace.vmap(autotrace.grad(complex_of_real))(np.stack([point, point]))
        assert batched.dtype == point.dtype
        np.testing.assert_allclose(batched[1], np.real(first_derivative(point)), rtol=1e-5)


def test_the_real_gradient_is_the_real_part_of_the_difference():
    difference = differences(complex_of_real, X, 1)
    np.testing.assert_allclose(autotrace.grad(complex_of_real)(X, dy=SEED),
                               np.real(SEED * difference), **CLOSE)


@pytest.mark.parametrize("point", [0.7, np.array(0.7)], ids=["float", "0-d"])
def test_a_real_argument_of_a_complex_function_has_a_complex_tangent(point):
    expected = first_derivative(0.7)
    for mode, tangent in tangents(complex_of_real, point, np.ones_like(point)):
        np.testing.assert_allclose(tangent, expected, **CLOSE, err_msg=mode)


def elementwise_complex_of_real(x):
    return np.exp(1j * x) * x + (2.0 - 1.0j) * x * x


def test_jacobians_of_a_complex_function_of_a_real_argument_agree():
    # A row of the reverse Jacobian is complex: the gradients for the seeds e and -1j e.
    expected = np.diag(first_derivative(X))
    for jacobian in (autotrace.jacrev, autotrace.jacfwd, autotrace.jacobian,
                     lambda f: autotrace.jacobian(f, mode="forward"),
                     lambda f: autotrace.jacobian(f, batched=True),
                     lambda f: autotrace.function(autotrace.jacrev(f))):
        np.testing.assert_allclose(jacobian(elementwise_complex_of_real)(X), expected, **CLOSE)


def test_a_real_gradient_of_a_complex_function_is_differentiated_in_both_modes():
    # The gradient is the real part of a complex one, whose gradient is the real part of the
    # cotangent (runtime/derivatives/complex_parts.py real_if_real), as JAX's.
    def squared_gradient(x):
        return np.sum(autotrace.grad(complex_of_real)(x) ** 2)
    tangent = autotrace.jvp(squared_gradient, (X,), (np.ones(3),))[1]
    difference = np.sum(differences(squared_gradient, X, 1))
    np.testing.assert_allclose(tangent, difference, rtol=1e-5)
    for gradient in (autotrace.grad(squared_gradient),
                     autotrace.function(autotrace.grad(squared_gradient))):
        np.testing.assert_allclose(gradient(X), differences(squared_gradient, X, 1),
                                   rtol=1e-5)
