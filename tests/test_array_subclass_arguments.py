"""Arguments that are arrays of a subclass of np.ndarray: np.matrix (`*` is its matrix product)
and masked arrays (`a.sum()` leaves out the masked items) are refused by name in every mode,
where they were traced and differentiated as plain arrays; a memory map computes as np.ndarray
does, and is taken as one (runtime/array_subclasses.py)."""
import re

import numpy as np
import pytest

import autotrace
from autotrace import Spec
from tests.numeric import central_difference

MATRIX = np.matrix([[1.0, 2.0], [3.0, 4.0]])
MASKED = np.ma.masked_array([1.0, 2.0, 3.0], mask=[False, True, False])
KIND = "a subclass of np.ndarray: autotrace traces and differentiates np.ndarray's operations"
MATRIX_ERROR = (f"is a numpy.matrix, {KIND}, which for it may compute something else; pass "
                f"np.asarray(m) and write its matrix products with @")
MASKED_ERROR = (f"is a numpy.ma.MaskedArray, {KIND}, which for it may compute something else; "
                f"pass its data and its mask as two arrays (np.ma.getdata(a) or a.filled(0.0), "
                f"and np.ma.getmaskarray(a)) and leave out the masked items with "
                f"np.where(mask, 0.0, data)")


def squared(m):
    return np.sum(m * m)


def weighted(w, m):
    return np.sum(w * m)


def total(a):
    return a.sum()


@pytest.mark.parametrize("call, name", [
    (lambda: autotrace.function(squared)(MATRIX), "m"),
    (lambda: autotrace.jit(squared)(m=MATRIX), "m"),
    (lambda: autotrace.grad(squared)(MATRIX), "m"),
    (lambda: autotrace.function(autotrace.grad(squared))(MATRIX), "m"),
    (lambda: autotrace.forward(squared)(MATRIX, tangent=np.ones((2, 2))), "m"),
    (lambda: autotrace.vmap(lambda a: a * a)(MATRIX), "a"),
    (lambda: autotrace.function(squared, input_signature=[Spec((2, 2))])(MATRIX), "m"),
], ids=["function", "jit", "grad", "function(grad)", "forward", "vmap", "input_signature"])
def test_a_matrix_argument_is_refused_by_name(call, name):
    with pytest.raises(TypeError, match=f"^argument '{name}' {re.escape(MATRIX_ERROR)}$"):
        call()


def test_a_matrix_argument_not_differentiated_is_refused_too():
    """w * m is a matrix product there: an elementwise rule would give a wrong gradient."""
    w = np.ones((2, 2))
    for call in (autotrace.grad(weighted), autotrace.function(autotrace.grad(weighted))):
        with pytest.raises(TypeError, match=f"^argument 'm' {re.escape(MATRIX_ERROR)}$"):
            call(w, MATRIX)
    np.testing.assert_allclose(autotrace.grad(weighted)(w, np.asarray(MATRIX)),
                               central_difference(lambda v: weighted(v, np.asarray(MATRIX)), w),
                               rtol=1e-6)


@pytest.mark.parametrize("call", [
    lambda: autotrace.function(total)(MASKED),
    lambda: autotrace.grad(total)(MASKED),
    lambda: autotrace.function(autotrace.grad(total))(MASKED),
], ids=["function", "grad", "function(grad)"])
def test_a_masked_array_argument_is_refused_by_name(call):
    with pytest.raises(TypeError, match=f"^argument 'a' {re.escape(MASKED_ERROR)}$"):
        call()


def test_the_refusal_names_where_in_a_container_the_array_is():
    traced = autotrace.function(lambda values, scale: values[1]["m"] * scale)
    with pytest.raises(TypeError, match=r"^argument 'values'\[1\]\['m'\] is a numpy\.matrix"):
        traced([np.ones(2), {"m": MATRIX}], 2.0)
    with pytest.raises(TypeError, match=r"^argument 'scale' is a numpy\.ma\.MaskedArray"):
        traced([np.ones(2), {"m": np.ones(2)}], scale=MASKED)


def test_the_same_data_as_plain_arrays_and_a_memory_map_are_traced():
    np.testing.assert_allclose(autotrace.function(total)(np.where(MASKED.mask, 0.0, MASKED.data)),
                               total(MASKED))
    mapped = np.arange(1.0, 4.0).view(np.memmap)
    np.testing.assert_array_equal(autotrace.function(lambda x: x * 2.0)(mapped), [2.0, 4.0, 6.0])

    def loss(x):
        return np.sum(np.sin(x) * x)
    expected = central_difference(loss, np.asarray(mapped))
    np.testing.assert_allclose(autotrace.grad(loss)(mapped), expected, rtol=1e-6)
    np.testing.assert_allclose(autotrace.function(autotrace.grad(loss))(mapped), expected,
                               rtol=1e-6)


class _Model:
    """Holds a matrix and a masked array as attributes: read by the functions below, not
    passed to them."""

    def __init__(self):
        self.matrix = MATRIX
        self.masked = MASKED


_MODEL = _Model()
READ = ("an array the function reads other than its arguments (a global, a variable of a "
        "closure or an object's attribute)")


def matrix_attribute(x):
    return np.sum(np.asarray(_MODEL.matrix * x))  # a matrix product: 54 at x = MATRIX


def matrix_global(x):
    return np.sum(MATRIX * x)


def masked_attribute(x):
    return np.sum(_MODEL.masked * np.sin(x))  # the masked item left out


@pytest.mark.parametrize("f", [matrix_attribute, matrix_global])
def test_a_matrix_read_beside_the_arguments_is_refused(f):
    """Its `*` is a matrix product, which NumPy computes for the primal: the elementwise rule
    gave [[4, 6], [4, 6]] for the gradient [[4, 4], [6, 6]], and a trace gave [[30]] for 54."""
    x = np.asarray(MATRIX).copy()
    with pytest.raises(TypeError, match=f"^{re.escape(READ)}, or dy, {re.escape(MATRIX_ERROR)}$"):
        autotrace.grad(f)(x)
    with pytest.raises(TypeError, match=f"^{re.escape(READ)} {re.escape(MATRIX_ERROR)}\n"
                                        f"  File \"{re.escape(__file__)}\", line \\d+, in "
                                        f"{f.__name__}"):
        autotrace.function(f)(x)


def test_a_masked_array_read_beside_the_arguments_is_refused():
    """Its product leaves out the masked item: the gradient came back a masked array."""
    with pytest.raises(TypeError, match=f"^{re.escape(READ)}, or dy, {re.escape(MASKED_ERROR)}$"):
        autotrace.grad(masked_attribute)(np.ones(3))


@pytest.mark.parametrize("f", [matrix_global, matrix_attribute])
def test_forward_mode_refuses_a_matrix_read_beside_the_arguments(f):
    """The tangent `dx * M` was a matrix product too: 34 for the tangent 35 (e00 at x)."""
    x, tangent = np.array([[1.0, 2.0], [0.5, 4.0]]), np.array([[1.0, 0.0], [0.0, 0.0]])
    with pytest.raises(TypeError, match=f"^{re.escape(READ)} {re.escape(MATRIX_ERROR)}$"):
        autotrace.forward(f)(x, tangent=tangent)


def test_a_custom_gradient_returning_a_matrix_is_refused():
    @autotrace.custom_vjp
    def scaled(x):
        return 2.0 * x

    scaled.defvjp(lambda x: (2.0 * x, None), lambda _, g: (np.asmatrix(2.0 * g),))
    with pytest.raises(TypeError, match="^the gradient .* is a numpy.matrix, "):
        autotrace.grad(lambda x: np.sum(scaled(x)))(np.ones((2, 2)))
