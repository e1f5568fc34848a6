"""Forms of NumPy calls that the derivative rules do not take, refused with what to write,
where they gave a wrong gradient before: np.einsum's sublist form with sublists held in names
(written in the call, it is differentiated as the subscripts string), and the functions not
holomorphic in complex values (norm, var, std, slogdet, pinv, vdot's conjugated argument). The
absolute value of complex values, refused before, is differentiated as JAX does."""
import numpy as np
import pytest

import autotrace
from tests.numeric import central_difference

C = np.array([1.0, 2.0, 3.0])
X = np.arange(6.0).reshape(2, 3) / 4.0

SUBLIST_MESSAGE = ("np.einsum's sublist form has derivative rules where each sublist is a list "
                   "of ints written in the call, as in np.einsum(a, [0, 1], b, [1], [0]), and "
                   "here one is not: write the sublists so, or the subscripts string "
                   "(np.einsum('ij,j->i', a, b))")


def sums_columns_by_sublists(x):
    return np.sum(np.einsum(x, [0, 1], [1]) * C)


def contracts_by_sublists_second(x):
    return np.sum(np.einsum(C, [1], x, [0, 1], [0]) ** 2)


def sums_columns_by_named_sublists(x):
    rows_columns, columns = [0, 1], [1]
    return np.sum(np.einsum(x, rows_columns, columns) * C)


def contracts_by_named_sublists_second(x):
    vector = [1]
    return np.sum(np.einsum(C, vector, x, [0, 1], [0]) ** 2)


def contracts_by_subscripts(x):
    return np.sum(np.einsum("ij,j->i", x, C) ** 2)


@pytest.mark.parametrize("function", [sums_columns_by_sublists, contracts_by_sublists_second],
                         ids=["first_operand", "second_operand"])
def test_the_sublist_form_of_einsum_written_in_the_call_is_differentiated(function):
    # (written as the subscripts string: 'AB->B', 'B,AB->A')
    expected = central_difference(function, X)
    np.testing.assert_allclose(autotrace.grad(function)(X), expected, rtol=1e-7)
    direction = np.ones_like(X)
    np.testing.assert_allclose(autotrace.jvp(function, (X,), (direction,))[1],
                               np.sum(expected * direction), rtol=1e-7)


@pytest.mark.parametrize("function", [sums_columns_by_named_sublists,
                                      contracts_by_named_sublists_second],
                         ids=["first_operand", "second_operand"])
def test_the_sublist_form_of_einsum_with_sublists_in_names_is_refused(function):
    with pytest.raises(NotImplementedError) as refused:
        autotrace.grad(function)(X)
    assert str(refused.value) == SUBLIST_MESSAGE
    with pytest.raises(NotImplementedError) as refused:
        autotrace.jvp(function, (X,), (np.ones_like(X),))
    assert str(refused.value) == SUBLIST_MESSAGE


def test_the_subscripts_form_of_einsum_is_differentiated():
    np.testing.assert_allclose(autotrace.grad(contracts_by_subscripts)(X),
                               central_difference(contracts_by_subscripts, X), rtol=1e-7)


def absolute_value_of_complex_values(x):
    return np.sum(np.abs(x * (1.0 + 1.0j)))


def absolute_value_of_a_complex_number(x):
    return abs(x[0] + 2.0j) * x[1]


@pytest.mark.parametrize("function", [absolute_value_of_complex_values,
                                      absolute_value_of_a_complex_number],
                         ids=["np.abs", "abs"])
def test_the_absolute_value_of_complex_values_is_differentiated(function):
    # its slope is conj(z) / |z|, not np.sign(z) = z / |z|, which gave a complex gradient of x
    point = X[0] + 0.5
    expected = central_difference(function, point)
    for differentiate in (autotrace.grad, lambda f: autotrace.function(autotrace.grad(f))):
        gradient = differentiate(function)(point)
        assert gradient.dtype == np.float64
        np.testing.assert_allclose(gradient, expected, rtol=1e-6)
    tangent = autotrace.jvp(function, (point,), (np.ones_like(point),))[1]
    np.testing.assert_allclose(tangent, np.sum(expected), rtol=1e-6)


# Functions that are not holomorphic in a complex argument: their rules are for real values.
W = np.array([0.3 - 1.0j, 2.0 + 0.5j, 1.0j])

NOT_HOLOMORPHIC = ("autotrace does not differentiate {function} of complex values: it is not "
                   "holomorphic (its derivative needs conjugates), and autotrace's complex "
                   "derivatives are those of holomorphic functions and of np.real, np.imag, "
                   "np.conj and np.abs: write it with those (or keep the real and imaginary "
                   "parts as real arrays of their own, re and im)")


def norm_of_complex(x):
    return np.linalg.norm(x * (1.0 + 1.0j))


def matrix_norm_of_complex(x):
    return np.linalg.norm(np.outer(x, W), 1)


def variance_of_complex(x):
    return np.var(x * (1.0 + 1.0j))


def deviation_of_complex(x):
    return np.std(x + W)


def log_determinant_of_complex(x):
    return np.linalg.slogdet(np.outer(x, W) + np.eye(3))[1]


def pseudo_inverse_of_complex(x):
    return np.sum(np.linalg.pinv(np.outer(x, W) + np.eye(3)))


@pytest.mark.parametrize("function, name", [
    (norm_of_complex, "numpy.linalg.norm"), (matrix_norm_of_complex, "numpy.linalg.norm"),
    (variance_of_complex, "numpy.var"), (deviation_of_complex, "numpy.std"),
    (log_determinant_of_complex, "numpy.linalg.slogdet"),
    (pseudo_inverse_of_complex, "numpy.linalg.pinv")],
    ids=["norm", "matrix-norm", "var", "std", "slogdet", "pinv"])
def test_functions_not_holomorphic_in_complex_values_are_refused(function, name):
    # they gave a complex tangent of a real value, and gradients without conjugates
    message = NOT_HOLOMORPHIC.format(function=name)
    for differentiate in (autotrace.grad, lambda f: autotrace.function(autotrace.grad(f)),
                          lambda f: lambda x: autotrace.jvp(f, (x,), (x,))):
        with pytest.raises(NotImplementedError) as refused:
            differentiate(function)(X[0])
        assert str(refused.value).split("\n")[0] == message


def test_the_gradient_of_vdot_of_a_complex_first_argument_is_refused():
    with pytest.raises(NotImplementedError) as refused:
        autotrace.grad(lambda x: np.vdot(x * (1.0 + 1.0j), W))(X[0])
    assert str(refused.value) == (
        "autotrace does not differentiate numpy.vdot of complex values: its gradients need the "
        "conjugate of its first argument, and autotrace's complex derivatives are those of "
        "holomorphic functions and of np.real, np.imag, np.conj and np.abs: write it with "
        "those (or keep the real and imaginary parts as real arrays of their own, re and im)")


REAL = np.array([0.3, -1.0, 2.0])


def vdot_by_a_real(z):
    return np.vdot(REAL, z)


def power_of_itself(z):
    return np.sum(z ** z)


def determinant_of_complex(z):
    return np.linalg.det(np.outer(z, REAL) + np.eye(3))


def test_holomorphic_functions_of_complex_values_are_differentiated():
    # vdot of a real first argument, a power with a base of positive real part, mean: the
    # gradient g f'(z) and the tangent f'(z) dz, against central differences along 1 and 1j
    z = np.array([1.0 + 2.0j, 0.5 - 1.0j, 2.0 + 0.3j])
    for function in (vdot_by_a_real, power_of_itself, np.mean, determinant_of_complex):
        for k in range(3):
            for step in (1e-6, 1e-6j):
                moved = np.zeros(3, complex)
                moved[k] = step
                difference = (function(z + moved) - function(z - moved)) / (2 * abs(step))
                direction = moved / abs(step)
                tangent = autotrace.jvp(function, (z,), (direction,))[1]
                np.testing.assert_allclose(tangent, difference, rtol=1e-6, atol=1e-8)
                gradient = autotrace.grad(function)(z)
                np.testing.assert_allclose(np.sum(gradient * direction), difference,
                                           rtol=1e-6, atol=1e-8)
