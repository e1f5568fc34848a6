"""Forms of NumPy calls that the derivative rules do not take, refused with what to write,
where they gave a wrong gradient before: np.einsum's sublist form, the absolute value of
complex values."""
import numpy as np
import pytest

import autotrace
from tests.numeric import central_difference

C = np.array([1.0, 2.0, 3.0])
X = np.arange(6.0).reshape(2, 3) / 4.0

SUBLIST_MESSAGE = ("np.einsum has a derivative rule only for its subscripts-string form: write "
                   "np.einsum('ij,j->i', a, b) rather than np.einsum(a, [0, 1], b, [1], [0])")


def sums_columns_by_sublists(x):
    return np.sum(np.einsum(x, [0, 1], [1]) * C)


def contracts_by_sublists_second(x):
    return np.sum(np.einsum(C, [1], x, [0, 1], [0]) ** 2)


def contracts_by_subscripts(x):
    return np.sum(np.einsum("ij,j->i", x, C) ** 2)


@pytest.mark.parametrize("function", [sums_columns_by_sublists, contracts_by_sublists_second],
                         ids=["first_operand", "second_operand"])
def test_the_sublist_form_of_einsum_is_refused(function):
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
def test_the_absolute_value_of_complex_values_is_refused(function):
    # its slope is conj(z) / |z|, not np.sign(z) = z / |z|: it gave a complex gradient of x
    message = ("autotrace does not differentiate the absolute value of complex values (as it "
               "does not differentiate np.real or np.conj): keep the real and imaginary parts "
               "as real arrays, re and im, and write np.sqrt(re ** 2 + im ** 2)")
    for differentiate in (autotrace.grad, lambda f: autotrace.function(autotrace.grad(f)),
                          lambda f: lambda x: autotrace.jvp(f, (x,), (x,))):
        with pytest.raises(NotImplementedError) as refused:
            differentiate(function)(X[0])
        assert str(refused.value) == message
