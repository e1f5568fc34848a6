"""Views that a traced function keeps as NumPy has them: writes through an F-order reshape land
where NumPy's do; results NumPy gives as new arrays (a ravel of a strided array, a reshape with
copy=True, a reshape of a reshape that copied) share no memory with the caller's arrays; and
results NumPy gives as views or as the array itself (astype with copy=False, the conjugate of
a real array, np.diff with n=0, np.diag of a matrix) are views in the traced function too.

Each function is run by NumPy and traced, on the NumPy backend and on the llvm backend with
every region fused, twice, on arguments of several memory layouts: the values, the dtypes,
which results share memory with which arguments and results, and where a write into each
result reaches, must be NumPy's."""
from __future__ import annotations

import numpy as np
import pytest

import autotrace
from autotrace.runtime.backends.selection import backend_named
from autotrace.runtime.tracing.views import ViewAmbiguityError
from tests.test_output_memory import _traced

# Arguments of one shape in several memory layouts, each made anew by a call.
MATRICES = {
    "C-contiguous": lambda: np.arange(6.0).reshape(2, 3),
    "F-contiguous": lambda: np.asfortranarray(np.arange(6.0).reshape(2, 3)),
    "strided": lambda: np.arange(12.0).reshape(2, 6)[:, :3],
    "transposed": lambda: np.arange(6.0).reshape(3, 2).T,
}
VECTORS = {
    "contiguous": lambda: np.arange(1.0, 4.0),
    "strided": lambda: np.arange(1.0, 7.0)[::2],
}


# --- bug 1: writes through an F-order reshape ----------------------------------------------------

def written_through_a_same_shape_f_reshape(x):
    y = x * 2
    w = y.reshape(2, 3, order="F")  # the same shape: a view, item for item, in NumPy
    w[0] = 0.0
    return y


def written_through_an_f_reshape_of_a_transpose(a):
    y = a.T * 2  # F-contiguous in NumPy
    w = y.reshape(3, 2, order="F")
    w[0] = 0.0
    return y


def written_through_an_f_reshape_of_an_f_copy(a):
    y = a.T.copy(order="F")
    w = y.reshape(3, 2, order="F")
    w[0] = 0.0
    w[:, 1] += 10.0
    return y


def written_through_an_f_reshape_with_a_unit_axis(x):
    y = x * 2
    w = y.reshape(2, 1, 3, order="F")
    w[1, 0, 1:] = -1.0
    return y, w


def written_through_an_f_reshape_of_a_vector(x):
    y = np.concatenate([x, x]) * 1.0  # 1-d and made here: contiguous, so an F reshape views it
    w = y.reshape(2, 3, order="F")
    w[0] = 0.0
    return y


def written_through_an_f_ravel_of_a_vector(x):
    y = x * 3.0
    w = np.ravel(y, order="F")
    w[1] = -5.0
    return y


# --- bug 2: results NumPy gives as new arrays ----------------------------------------------------

def ravel_of_a_column(a):
    return a[:, 0].ravel()


def ravel_of_an_argument(a):
    return a.ravel()


def f_ravel_of_an_argument(a):
    return np.ravel(a, order="F")


def reshape_with_copy(a):
    return np.reshape(a, (6,), copy=True)


def reshape_method_with_copy(a):
    return a.reshape(3, 2, copy=True)


def f_reshape_with_copy(a):
    return np.reshape(a, (3, 2), order="F", copy=True)


def reshape_of_a_reshape(a):
    return a.reshape(6).reshape(2, 3)


def reshape_of_a_reshape_to_another_shape(a):
    return a.reshape(6).reshape(3, 2)


def reshape_of_a_reshape_adding_a_unit_axis(a):
    return a.reshape(6).reshape(6, 1)


def ravel_of_a_vector(x):
    return x.ravel()


def a_result_and_its_ravel(a):
    y = a * 2.0
    return y, y.ravel()


# --- bug 3: results NumPy gives as views, or as the array itself --------------------------------

def written_through_astype_without_copy(x):
    y = x.copy()
    w = y.astype(np.float64, copy=False)
    w[0] = 5.0
    return y


def written_through_np_astype_without_copy(x):
    y = x.copy()
    w = np.astype(y, np.float64, copy=False)
    w[0] = 5.0
    return y


def written_through_astype_to_another_dtype(x):
    y = x.copy()
    w = y.astype(np.float32, copy=False)  # another dtype: a copy
    w[0] = 5.0
    return y, w


def written_through_conj(x):
    y = x * 1.0
    w = y.conj()
    w[0] = 0.0
    return y


def written_through_conjugate(x):
    y = x * 1.0
    w = y.conjugate()
    w[1] = 0.0
    return y


def written_through_a_complex_conj(x):
    y = x * (1.0 + 1.0j)
    w = y.conj()  # complex: a new array
    w[0] = 0.0
    return y, w


def written_through_diff_of_order_zero(x):
    y = x * 1.0
    w = np.diff(y, n=0)
    w[0] = 0.0
    return y


def diagonal_read_after_a_write(m):
    y = m * 1.0
    d = np.diag(y)
    y[...] = 7.0
    return d


def diag_of_a_vector_written(x):
    y = x * 1.0
    d = np.diag(y)  # a new matrix
    d[0, 0] = -1.0
    return y, d


def astype_without_copy_returned(x):
    return x.astype(x.dtype, copy=False)


def conj_returned(x):
    return x.conj()


def diff_of_order_zero_returned(x):
    return np.diff(x, n=0)


def diag_returned(a):
    return np.diag(a), np.diag(a, 1)


MATRIX_FUNCTIONS = [
    written_through_a_same_shape_f_reshape, written_through_an_f_reshape_of_a_transpose,
    written_through_an_f_reshape_of_an_f_copy, written_through_an_f_reshape_with_a_unit_axis,
    ravel_of_a_column, ravel_of_an_argument, f_ravel_of_an_argument, reshape_with_copy,
    reshape_method_with_copy, f_reshape_with_copy, reshape_of_a_reshape,
    reshape_of_a_reshape_to_another_shape, reshape_of_a_reshape_adding_a_unit_axis,
    a_result_and_its_ravel, diagonal_read_after_a_write, diag_returned]
VECTOR_FUNCTIONS = [
    written_through_an_f_reshape_of_a_vector, written_through_an_f_ravel_of_a_vector,
    ravel_of_a_vector, written_through_astype_without_copy,
    written_through_np_astype_without_copy, written_through_astype_to_another_dtype,
    written_through_conj, written_through_conjugate, written_through_a_complex_conj,
    written_through_diff_of_order_zero, diag_of_a_vector_written, astype_without_copy_returned,
    conj_returned, diff_of_order_zero_returned]
CASES = ([(function, layout, MATRICES[layout]) for function in MATRIX_FUNCTIONS
          for layout in MATRICES]
         + [(function, layout, VECTORS[layout]) for function in VECTOR_FUNCTIONS
            for layout in VECTORS])
BACKENDS = ["numpy"] + (["llvm"] if backend_named("llvm").available() is None else [])




def _leaves(result) -> list:
    return list(result) if isinstance(result, tuple) else [result]


def _sharing(outputs: list, inputs: list) -> list:
    """For each output: whether it shares memory with each input, then each earlier output."""
    return [[bool(np.shares_memory(output, other)) for other in [*inputs, *outputs[:index]]]
            for index, output in enumerate(outputs)]


def _same(got: list, expected: list, what: str) -> None:
    assert len(got) == len(expected), what
    for value, reference in zip(got, expected):
        assert np.asarray(value).dtype == np.asarray(reference).dtype, what
        np.testing.assert_array_equal(value, reference, err_msg=what)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("function, layout, make", CASES,
                         ids=[f"{case[0].__name__}-{case[1]}" for case in CASES])
def test_traced_views_are_numpys(function, layout, make, backend):
    """Values, dtypes, memory shared with the arguments and between the results, and what a
    write into each result reaches: NumPy's, on each of two calls."""
    call = _traced(backend, function)
    for _ in range(2):
        argument, reference = make(), make()
        got, expected = _leaves(call(argument)), _leaves(function(reference))
        _same(got, expected, "the results")
        assert _sharing(got, [argument]) == _sharing(expected, [reference])
        assert [r.flags.writeable for r in got] == [r.flags.writeable for r in expected]
        for index, result in enumerate(expected):
            if result.flags.writeable:  # a write reaches what it reaches in NumPy
                result[...] = -7.0
                got[index][...] = -7.0
                _same([argument, *got], [reference, *expected], f"after a write into {index}")


# --- what NumPy refuses, or the trace cannot know -----------------------------------------------

def writes_into_a_diagonal(m):
    d = np.diag(m * 1.0)
    d[0] = 1.0
    return d


def test_a_write_into_the_diagonal_of_a_matrix_is_read_only_as_numpys():
    with pytest.raises(ValueError, match="assignment destination is read-only"):
        writes_into_a_diagonal(np.ones((2, 2)))
    with pytest.raises(ValueError, match="assignment destination is read-only"):
        autotrace.function(writes_into_a_diagonal)(np.ones((2, 2)))


def written_through_an_f_reshape_then_read(x):
    y = x * 2.0
    w = y.reshape(3, 2, order="F")  # a view or a copy, by y's layout
    w[0] = 0.0
    return y


def written_then_read_through_an_f_reshape(x):
    y = x * 2.0
    w = y.reshape(3, 2, order="F")
    y[0] = 0.0
    return w


def written_through_an_ordered_astype_then_read(x):
    y = x * 2.0
    w = y.astype(np.float64, order="C", copy=False)  # y itself, or a copy, by y's layout
    w[0] = 0.0
    return y


@pytest.mark.parametrize("function", [
    written_through_an_f_reshape_then_read, written_then_read_through_an_f_reshape,
    written_through_an_ordered_astype_then_read], ids=lambda function: function.__name__)
def test_a_value_the_memory_layout_decides_is_refused(function):
    with pytest.raises(ViewAmbiguityError, match="depending on the memory layout"):
        autotrace.function(function)(np.arange(6.0).reshape(2, 3))


def read_through_an_ordered_astype(x):
    y = x * 2.0
    w = y.astype(np.float64, order="C", copy=False)
    return w + y, y.astype(np.float32, order="F", copy=False)


def test_an_ordered_astype_without_a_write_is_its_value():
    x = np.arange(6.0).reshape(2, 3)
    got, expected = autotrace.function(read_through_an_ordered_astype)(x), \
        read_through_an_ordered_astype(x)
    _same(list(got), list(expected), "the results")


# --- the same memory in derivatives, whose writes the alias analysis reads from the source ------

def loss_written_through_conj(x):
    y = x * 1.0
    w = y.conj()
    w[0] = 0.0
    return np.sum(y * x)


def loss_written_through_diff_of_order_zero(x):
    y = x * 1.0
    w = np.diff(y, n=0)
    w[0] = 0.0
    return np.sum(y * x)


def loss_of_a_diagonal_read_after_a_write(x):
    y = x * 1.0
    d = np.diag(y)
    y[...] = y * 3.0
    return np.sum(d * d)


@pytest.mark.parametrize("loss, x", [
    (loss_written_through_conj, np.arange(1.0, 4.0)),
    (loss_written_through_diff_of_order_zero, np.arange(1.0, 4.0)),
    (loss_of_a_diagonal_read_after_a_write, np.arange(1.0, 5.0).reshape(2, 2))],
    ids=lambda value: getattr(value, "__name__", ""))
def test_a_derivative_refuses_a_write_that_reaches_another_name(loss, x):
    """The result is the argument itself or a view of it in NumPy: a derivative that took it
    for a new array would have the wrong value; it refuses, naming the line."""
    with pytest.raises(autotrace.TransformError, match="share"):
        autotrace.grad(loss)(x)
