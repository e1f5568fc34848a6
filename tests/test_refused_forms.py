"""Forms of NumPy calls that the derivative rules do not take, refused with what to write,
where they gave a zero gradient before: np.einsum's sublist form."""
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
