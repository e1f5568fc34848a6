"""autotrace.function and writes through aliases and views: the traced value must be NumPy's.

NumPy changes an array in place through every name and view that shares its memory
(`B = A; A += x`, `B = A[1:]; A[1] = v`, `B = A.T; B += 1`); a trace must see the same values,
and the traced gradient must be the eager one.
"""
import re

import numpy as np
import pytest

import autotrace as at
from autotrace.runtime.tracing.tracer import ArgumentChangedError
from autotrace.runtime.tracing.control import ControlFlowError
from autotrace.runtime.tracing.views import ViewAmbiguityError


def add_through_a_name(x):
    A = x * 1.0
    B = A
    A += x
    return np.sum(B * x)


def write_base_read_slice(x):
    A = x * 1.0
    B = A[1:]
    A[1] = 5.0
    return np.sum(B * x[1:])


def write_slice_read_base(x):
    A = x * 1.0
    B = A[1:]
    B[0] = 5.0
    return np.sum(A * x)


def add_into_transpose(x):
    A = np.outer(x, x)
    B = A.T
    B[0] += x
    return np.sum(A * A)


def multiply_array_in_a_list(x):
    A = x * 1.0
    items = [A]
    A *= x
    return np.sum(items[0] * x)


def loop_over_rows(x):
    H = np.zeros_like(x, shape=(4, x.shape[0]))
    H[0] = x
    for i in range(3):
        h = H[i]
        H[i + 1] = np.sin(h) + x
        h *= 2.0  # the row that was read, changed in H too
    return np.sum(H * H)


def view_of_a_view(x):
    A = np.zeros_like(x, shape=(3, x.shape[0]))
    row = A[1]
    part = row[1:]
    part += x[1:]
    A[1, 0] = x[0] * 3.0
    return np.sum(A * A) + np.sum(part * x[1:]) + np.sum(row)


def reshape_of_a_made_array(x):
    A = np.zeros_like(x, shape=(x.shape[0] * 2,))
    M = A.reshape(2, x.shape[0])
    M[1] = x * x
    M[0] -= x
    return np.sum(A * np.concatenate([x, x]))


def ravel_of_a_reshape_of_a_made_array(x):
    # a 1-d array made here is contiguous, and so is its C-order reshape: the ravel is a view
    A = x * 2.0
    flat = A.reshape(2, x.shape[0] // 2).ravel()
    flat *= 3.0
    flat[0] = x[1]
    return A * 1.0


def unit_reshape(x):
    A = np.ones_like(x, shape=(1, x.shape[0]))
    row = A.reshape(x.shape[0])
    row *= x
    return np.sum(np.sin(A))


def swapped_axes(x):
    A = np.outer(x, np.ones_like(x))[None]
    B = np.swapaxes(A, 1, 2)
    B[0, 0] *= 3.0
    C = np.moveaxis(A, 0, 2)
    C[1] -= 1.0
    return np.sum(A * A)


def squeezed_and_expanded(x):
    A = np.ones_like(x, shape=(1, x.shape[0]))
    S = np.squeeze(A)
    S[0] = x[0] * 4.0
    E = np.expand_dims(A, 0)
    E[0, 0, 1] = x[1]
    return np.sum(A * S)


def fill_and_sort_through_views(x):
    A = np.concatenate([x, x * x])
    A[:2].fill(2.0)
    A[1:].sort()
    return np.sum(A * np.arange(8.0))


def out_into_a_view(x):
    A = x * 2.0
    np.multiply(x[1:], x[1:], out=A[1:])
    return np.sum(A * x)


def float32_stays_float32(x):
    A = x.astype(np.float32)
    A += x * 0.5
    return A


def every_in_place_operator(x):
    A = x * 1.0
    B = A[:]
    A += 1.0
    A -= 0.5
    A *= x
    A /= 2.0
    A **= 2.0
    return np.sum(B * x)


def integer_operators(n):
    A = n * 1
    B = A[::-1]
    A //= 2
    A %= 3
    A &= 7
    A |= 8
    A ^= 1
    A <<= 1
    A >>= 1
    return B


VALUE_CASES = [add_through_a_name, write_base_read_slice, write_slice_read_base,
               add_into_transpose, multiply_array_in_a_list, loop_over_rows, view_of_a_view,
               reshape_of_a_made_array, ravel_of_a_reshape_of_a_made_array, unit_reshape,
               swapped_axes, squeezed_and_expanded,
               fill_and_sort_through_views, out_into_a_view, every_in_place_operator]


@pytest.mark.parametrize("function", VALUE_CASES, ids=lambda f: f.__name__)
def test_traced_value_is_numpys(function):
    x = np.array([0.5, -1.25, 2.0, 0.75])
    expected = function(x.copy())
    np.testing.assert_allclose(at.function(function)(x), expected, rtol=1e-12)


def rows_from_rows(x):
    H = np.zeros_like(x, shape=(4, x.shape[0]))
    H[0] = x
    for i in range(3):
        h = H[i]
        H[i + 1] = np.sin(h) + x
    return np.sum(H * H)


def in_place_on_slices(x):
    A = x * 1.0
    A[1:] *= x[:-1]
    A[:2] += 1.0
    A /= 2.0
    return np.sum(A * A)


def in_place_on_float32(x):
    A = x.astype(np.float32)
    A += x * 0.1  # NumPy: A stays float32
    A *= x
    return np.sum(A * x)


# Eager autotrace.grad refuses a write into memory another name reads afterwards (the cases
# above); these write in place where no other name sees it.
def central_differences(function, x, step=1e-6):
    return [(function(x + step * e) - function(x - step * e)) / (2 * step)
            for e in np.eye(len(x))]


@pytest.mark.parametrize("function, expected", [
    (rows_from_rows, lambda x: central_differences(rows_from_rows, x)),
    (in_place_on_slices, lambda x: central_differences(in_place_on_slices, x)),
    # sum(1.1 x * x * x): 3.3 x^2 (float32 rounding makes differences useless here).
    (in_place_on_float32, lambda x: 3.3 * x ** 2),
], ids=["rows_from_rows", "in_place_on_slices", "in_place_on_float32"])
def test_traced_value_and_gradient_of_in_place_writes(function, expected):
    x = np.array([0.3, -1.7, 2.1, 0.7])
    assert at.function(function)(x) == function(x.copy())
    eager = at.grad(function)(x.copy())
    np.testing.assert_allclose(at.function(at.grad(function))(x), eager, rtol=1e-12)
    np.testing.assert_allclose(eager, expected(x), rtol=1e-6)


def test_integer_in_place_operators_keep_the_integer_array():
    n = np.array([5, 9, 12, 30])
    traced = at.function(integer_operators)(n)
    np.testing.assert_array_equal(traced, integer_operators(n.copy()))
    assert traced.dtype == n.dtype


def test_float32_array_stays_float32_under_a_float64_operand():
    x = np.array([0.5, -1.25], dtype=np.float64)
    traced = at.function(float32_stays_float32)(x)
    assert traced.dtype == np.float32
    np.testing.assert_array_equal(traced, float32_stays_float32(x))


def add_a_half_to_integers(x):
    A = np.zeros_like(x, dtype=np.int64)
    A += 0.5
    return A


def divide_integers_out(x):
    A = np.zeros_like(x, dtype=np.int64)
    np.divide(A, 2, out=A)
    return A


@pytest.mark.parametrize("function", [add_a_half_to_integers, divide_integers_out])
def test_in_place_change_of_dtype_raises_numpys_error(function):
    x = np.array([1.0, 2.0])
    with pytest.raises(TypeError) as eager:
        function(x)
    with pytest.raises(TypeError) as traced:
        at.function(function)(x)
    assert str(traced.value).startswith(str(eager.value))


def grow_in_place(x):
    A = x * 1.0
    A += np.ones((2, x.shape[0]))
    return A


def test_in_place_broadcast_to_a_larger_shape_raises_numpys_error():
    x = np.array([1.0, 2.0])
    with pytest.raises(ValueError) as eager:
        grow_in_place(x)
    with pytest.raises(ValueError) as traced:
        at.function(grow_in_place)(x)
    assert str(traced.value).startswith(str(eager.value))


def write_broadcast(x):
    B = np.broadcast_to(x * 1.0, (2, x.shape[0]))
    B[0] = 1.0
    return B


def add_to_diagonal(x):
    D = np.outer(x, x).diagonal()
    D += 1.0
    return D


def write_imaginary_part_of_reals(x):
    A = x * 1.0
    A.imag[0] = 1.0
    return A


@pytest.mark.parametrize("function", [write_broadcast, add_to_diagonal,
                                      write_imaginary_part_of_reals])
def test_writes_into_read_only_views_raise_numpys_error(function):
    x = np.array([1.0, 2.0])
    with pytest.raises(ValueError) as eager:
        function(x)
    with pytest.raises(ValueError) as traced:
        at.function(function)(x)
    assert str(traced.value).startswith(str(eager.value))


def read_only_view_sees_writes(x):
    A = x * 1.0
    B = np.broadcast_to(A, (2, x.shape[0]))
    D = np.outer(A, A).diagonal()
    A[0] = 7.0
    return B, D


def test_read_only_views_read_their_base_again():
    x = np.array([1.0, 2.0])
    traced = at.function(read_only_view_sees_writes)(x)
    for got, expected in zip(traced, read_only_view_sees_writes(x)):
        np.testing.assert_array_equal(got, expected)


def reshape_then_read_base(x):
    A = np.outer(x, x) * 1.0
    flat = A.reshape(-1)  # a view of A: A is C-contiguous here, not always when traced
    flat[0] = 9.0
    return np.sum(A)


def write_base_then_read_reshape(x):
    A = np.outer(x, x) * 1.0
    flat = A.ravel()
    A[0, 0] = 9.0
    return np.sum(flat)


def ravel_of_a_transposed_reshape(x):
    # the transpose of a reshape of a made 1-d array is not C-contiguous: NumPy's ravel copies
    A = np.concatenate([x, x]) * 2.0
    flat = A.reshape(2, x.shape[0]).T.ravel()
    flat[0] = 9.0
    return np.sum(A)


@pytest.mark.parametrize("function", [reshape_then_read_base, write_base_then_read_reshape,
                                      ravel_of_a_transposed_reshape])
def test_a_read_that_depends_on_whether_reshape_copied_is_refused(function):
    with pytest.raises(ViewAmbiguityError, match="a reshape|a ravel"):
        at.function(function)(np.array([1.0, 2.0]))


def complex_parts(x):
    Z = x + 1j * x
    Z.real[0] = 5.0
    Z.imag[1] += 2.0
    return Z


def test_writes_into_real_and_imaginary_parts():
    x = np.array([1.0, 2.0])
    np.testing.assert_array_equal(at.function(complex_parts)(x), complex_parts(x))


def changes_argument_through_transpose(x):
    B = x.T
    B[0] += 1.0
    return x


def test_argument_changed_through_a_transpose_is_refused():
    with pytest.raises(ArgumentChangedError,
                       match=r"changes argument 'x' in place \(x\[\.\.\.\] = \.\.\.\)"):
        at.function(changes_argument_through_transpose)(np.ones((2, 2)))


def scalar_in_place(x):
    s = np.sum(x)
    t = s
    s += 1.0  # a NumPy scalar: s is rebound, t keeps the sum
    return t, s


def test_in_place_operator_on_a_scalar_rebinds_it():
    x = np.array([1.0, 2.0])
    traced = at.function(scalar_in_place)(x)
    assert tuple(traced) == scalar_in_place(x) == (3.0, 4.0)


def element_of_an_argument_in_place(x, m, z):
    a = x[0]  # an element of an argument is a NumPy scalar, a copy: `+=` rebinds it
    a += 2.0 * x[1]
    b = m[1, 0]
    b *= 3.0
    c = z[()]  # the element of a 0-d array too
    c -= 1.0
    return a * x[2] + b + c, x, m, z


def test_in_place_operator_on_an_element_of_an_argument_rebinds_it():
    x, m, z = np.array([0.5, 2.0, 1.0]), np.array([[1.0, 2.0], [3.0, 4.0]]), np.array(7.0)
    expected = element_of_an_argument_in_place(x.copy(), m.copy(), z.copy())
    traced = at.function(element_of_an_argument_in_place)(x, m, z)
    assert traced[0] == expected[0] == 4.5 + 9.0 + 6.0
    for value, eager in zip(traced[1:], expected[1:]):
        np.testing.assert_array_equal(value, eager)
    gradient = at.function(at.grad(lambda x: element_of_an_argument_in_place(x, m, z)[0]))(x)
    np.testing.assert_allclose(gradient, [x[2], 2.0 * x[2], x[0] + 2.0 * x[1]], rtol=1e-15)


def _items_rebound_in_a_loop(x, y):
    total = 0.0
    for v in y:  # each v a NumPy number: `v += ...` rebinds it, y stays as it was
        v += x[0]
        total = total + v * v
    return total + np.sum(y)


def test_in_place_operator_on_the_items_of_a_1d_argument_in_a_loop_rebinds_them():
    x, y = np.array([1.0, 2.0]), np.array([1.0, 2.0])
    assert _items_rebound_in_a_loop(x, y) == at.function(_items_rebound_in_a_loop)(x, y) == 16.0
    np.testing.assert_array_equal(y, [1.0, 2.0])
    expected = ([2.0 * (2.0 + 3.0), 0.0], [2.0 * 2.0 + 1.0, 2.0 * 3.0 + 1.0])
    for gradient in (at.grad(_items_rebound_in_a_loop, wrt=(0, 1)),
                     at.function(at.grad(_items_rebound_in_a_loop, wrt=(0, 1)))):
        for got, want in zip(gradient(x, y), expected):
            np.testing.assert_array_equal(got, want)
    with pytest.raises(ArgumentChangedError, match=re.escape("argument 'y'[...] in place")):
        at.function(_items_rebound_in_a_loop)(x, np.ones((2, 2)))  # rows are views


@pytest.mark.parametrize("index, shown", [(Ellipsis, "x[...]"), ((0, Ellipsis), "x[0, ...]")])
def test_in_place_operator_on_a_view_of_an_argument_is_refused(index, shown):
    def changes(x):
        a = x[index]  # a 0-d array: a view, which `+=` changes in place
        a += 1.0
        return x
    with pytest.raises(ArgumentChangedError,
                       match=rf"changes argument 'x'\[.*\] in place \({re.escape(shown)} \+="):
        at.function(changes)(np.array([1.0]) if index is not Ellipsis else np.array(1.0))


# --- 0-d arrays: `op=` changes one in place, as NumPy's does, through every name -------------

def zero_d_array_through_a_name(x):
    u = np.asarray(np.sum(x))  # a 0-d array, not a NumPy scalar
    a = u
    u += 1.0
    return np.sum(a * x)


def zero_d_copy_through_a_list(x):
    u = np.copy(np.sum(x))
    rows = [u, x]
    a = rows[0]
    u *= 2.0
    return np.sum(a * x)


def zero_d_array_in_a_branch(x):
    u = np.array(np.sum(x))
    a = u
    if np.sum(x) > 0.0:
        u *= 2.0
    return np.sum(a * x)


def zero_d_array_in_a_loop(x):
    u = np.zeros(())
    u[...] = np.sum(x)
    a = u
    i = 0
    while np.sum(u) < 20.0:
        u += 1.0
        i += 1
    return np.sum(a * x) + i


def zero_d_array_through_a_view(x):
    u = np.asarray(np.sum(x))
    a = u.reshape(1)
    u *= 3.0
    return np.sum(a * x)


def zero_d_array_chosen_by_where(x):
    u = np.where(x[0] > 0.0, x[0], x[1])  # np.where makes an array, of 0-d too
    a = u
    u -= 1.0
    return a * x[2]


# At x = [1, 2, 3] (sum 6), a is u changed: 7, 12, 12, 20 after 14 runs of the loop, 18 and 0
# (where `u = u + 1.0` would leave a as it was)
ZERO_D_WRITES = {zero_d_array_through_a_name: 7.0 * 6.0, zero_d_copy_through_a_list: 12.0 * 6.0,
                 zero_d_array_in_a_branch: 12.0 * 6.0, zero_d_array_in_a_loop: 20.0 * 6.0 + 14,
                 zero_d_array_through_a_view: 18.0 * 6.0, zero_d_array_chosen_by_where: 0.0}


@pytest.mark.parametrize("function", ZERO_D_WRITES, ids=lambda f: f.__name__)
def test_a_0d_array_changes_in_place_through_every_name(function):
    x = np.array([1.0, 2.0, 3.0])
    expected = function(x)
    assert expected == ZERO_D_WRITES[function]
    assert at.function(function)(x) == expected
    batch = np.stack([x, -0.5 * x])
    np.testing.assert_array_equal(at.vmap(function)(batch), [function(row) for row in batch])


@pytest.mark.parametrize("function", ZERO_D_WRITES, ids=lambda f: f.__name__)
def test_the_gradient_refuses_a_0d_array_changed_through_another_name_traced_or_not(function):
    x = np.array([1.0, 2.0, 3.0])
    pattern = r"changes 'u' in place, and 'a' shares its memory"
    with pytest.raises(at.TransformError, match=pattern):
        at.grad(function)(x)
    with pytest.raises(at.TransformError, match=pattern):
        at.function(at.grad(function))(x)


def copy_of_a_scalar_through_a_name(x):
    u = np.sum(x).copy()  # a NumPy scalar's copy is a NumPy scalar: `+=` rebinds u
    a = u
    u += 1.0
    t = (x[0] * x[1]).reshape(())  # a scalar's reshape is a scalar too
    b = t
    t *= 3.0
    return a * x[0] + u * x[1] + b * x[2] + t


def test_a_copy_or_reshape_of_a_scalar_is_rebound_by_in_place_operators():
    x = np.array([1.0, 2.0, 3.0])
    expected = 6.0 * 1.0 + 7.0 * 2.0 + 2.0 * 3.0 + 6.0
    assert copy_of_a_scalar_through_a_name(x) == expected
    assert at.function(copy_of_a_scalar_through_a_name)(x) == expected
    np.testing.assert_array_equal(at.vmap(copy_of_a_scalar_through_a_name)(np.stack([x, x])),
                                  [expected, expected])


def array_made_a_scalar_in_a_loop(x):
    u = np.asarray(np.sum(x))
    i = 0.0
    while np.sum(x) * 0.0 + i < 3.0:
        a = u
        u += 1.0  # changes a on the first run alone: then u is a NumPy scalar
        u = u * 1.0
        i = i + a
    return i + u


def test_a_loop_that_writes_into_a_0d_array_and_makes_it_a_scalar_is_refused():
    x = np.array([1.0, 2.0, 3.0])
    assert array_made_a_scalar_in_a_loop(x) == 7.0 + 7.0
    with pytest.raises(ControlFlowError, match=(
            r"a traced loop changes a 0-d array in place \(u \+= v\) and then gives the name a "
            r"NumPy scalar")):
        at.function(array_made_a_scalar_in_a_loop)(x)


def scalar_through_a_name(x):
    s = np.sum(x)  # a NumPy scalar: `+=` rebinds s, and t keeps the old value
    t = s
    s += 1.0
    if s > 0.0:
        s *= 2.0
    return t * s


def test_in_place_operator_on_a_shared_scalar_rebinds_it():
    x = np.array([1.0, 2.0, 3.0])
    assert at.function(scalar_through_a_name)(x) == scalar_through_a_name(x) == 6.0 * 14.0
    expected = 4.0 * np.sum(x) + 2.0  # d/dx of 2 s (s + 1)
    np.testing.assert_allclose(at.grad(scalar_through_a_name)(x), expected, rtol=1e-15)
    np.testing.assert_allclose(at.function(at.grad(scalar_through_a_name))(x), expected,
                               rtol=1e-15)


# --- traced branches and loops (converted to graph ops) ---------------------------------------

def loop_writes_an_aliased_array(x, n):
    A = x * 1.0
    B = A
    C = A[1:]
    i = 0
    while i < n:
        A[0] += x[0]
        A[1:] *= 2.0
        i += 1
    return np.sum(B) + np.sum(C) * 10.0


def branch_writes_or_rebinds(x):
    A = x * 1.0
    B = A
    C = A[1:]
    if np.sum(x) > 0:
        A[1] = 5.0
    else:
        A = A + 1.0
    return np.sum(B) + np.sum(C) * 10.0 + np.sum(A) * 100.0


def branch_writes_through_an_operand_view(x):
    A = x * 1.0
    C = A[1:]
    if np.sum(x) > 0:
        C[0] = 5.0
        A[0] = np.sum(C)
    else:
        C += 1.0
    return np.sum(A) + np.sum(C) * 10.0


@pytest.mark.parametrize("function, args", [
    (loop_writes_an_aliased_array, (np.array([1.0, 2.0, 3.0]), np.array(3))),
    (branch_writes_or_rebinds, (np.array([1.0, 2.0, 3.0]),)),
    (branch_writes_or_rebinds, (np.array([-1.0, -2.0, 3.0]),)),
    (branch_writes_through_an_operand_view, (np.array([1.0, 2.0, 3.0]),)),
    (branch_writes_through_an_operand_view, (np.array([-1.0, -2.0, 3.0]),)),
])
def test_traced_branches_and_loops_write_into_shared_memory(function, args):
    traced = at.function(function)
    assert traced(*args) == function(*[arg.copy() for arg in args])
    assert traced.trace_count == 1


def loop_writes_one_of_two_aliased_loop_values(x, n):
    A = x * 1.0
    B = A
    i = 0
    while i < n:
        A += 1.0
        B *= 2.0
        i += 1
    return np.sum(A) + 10 * np.sum(B)


def test_a_loop_changing_a_value_another_loop_value_shares_is_refused():
    with pytest.raises(Exception, match="a traced loop changes a loop value in place "
                                        r"\(f64\[3\]\) that shares its memory with another"):
        at.function(loop_writes_one_of_two_aliased_loop_values)(np.ones(3), np.array(2))


def write_through_asarray_of_the_same_dtype(x):
    A = x * 1.0
    B = np.asarray(A, dtype=np.float64)  # A itself, as NumPy gives it
    B[0] = 7.0
    C = np.asarray(A, dtype=np.float32)  # a copy
    C[1] = 9.0
    return A


def test_asarray_of_a_traced_array_of_its_dtype_is_the_array():
    x = np.ones(3)
    np.testing.assert_array_equal(at.function(write_through_asarray_of_the_same_dtype)(x),
                                  write_through_asarray_of_the_same_dtype(x.copy()))


def add_at_into_a_view(x):
    A = x * 1.0
    B = A[1:]
    np.add.at(B, np.array([0, 0]), 1.0)
    return A


def add_at_into_an_argument(x):
    np.add.at(x, np.array([0, 0]), 1.0)
    return x


def test_add_at_writes_into_a_view_and_is_refused_on_an_argument():
    x = np.array([1.0, 2.0, 3.0])
    np.testing.assert_array_equal(at.function(add_at_into_a_view)(x),
                                  add_at_into_a_view(x.copy()))
    with pytest.raises(ArgumentChangedError,
                       match=r"changes argument 'x' in place \(np\.add\.at\(x, \.\.\.\)\)"):
        at.function(add_at_into_an_argument)(x)


def doubles_rows_in_a_traced_loop(x):
    H = np.outer(x, x)
    for row in H:  # a loop over a traced array: a graph op that does not carry H
        row *= 2.0
    return H


def doubles_rows_by_index(x):
    H = np.outer(x, x)
    for i in range(len(H)):
        H[i] *= 2.0
    return H


def test_a_write_into_a_view_of_an_array_a_traced_loop_does_not_carry_is_refused():
    x = np.array([1.0, 2.0])
    with pytest.raises(Exception, match=r"Loop over indices instead \(`for i in range\(len\(H\)"):
        at.function(doubles_rows_in_a_traced_loop)(x)
    np.testing.assert_array_equal(at.function(doubles_rows_by_index)(x),
                                  doubles_rows_in_a_traced_loop(x))


def write_real_part_of_reals(x):
    A = x * 1.0
    np.real(A)[0] = 5.0
    A.real[1] = 6.0
    return A


def test_real_part_of_a_real_array_is_the_array():
    x = np.array([1.0, 2.0, 3.0])
    np.testing.assert_array_equal(at.function(write_real_part_of_reals)(x),
                                  write_real_part_of_reals(x.copy()))


def write_into_flips_splits_and_promotions(x):
    A = np.outer(x, np.arange(1.0, 4.0))
    np.flip(A, 0)[0, 0] = 7.0
    np.fliplr(A)[1] *= 2.0
    np.flipud(A)[:, 1] += 1.0
    np.permute_dims(A, (1, 0))[2, 0] = -1.0
    first, second = np.split(A, [1], axis=1)
    first *= 3.0
    second[0] -= 5.0
    left, right = np.hsplit(A, [2])
    right += 10.0
    top, bottom = np.array_split(A, 2)
    bottom[0, 0] = 0.5
    np.atleast_2d(x * 1.0)[0, 0] = 8.0
    row = x * 1.0
    np.atleast_3d(row)[0, 1, 0] = 9.0
    return A, row


def test_writes_into_flips_splits_and_promotions_reach_the_array():
    x = np.array([1.0, 2.0, 3.0, 4.0])
    for traced, eager in zip(at.function(write_into_flips_splits_and_promotions)(x),
                             write_into_flips_splits_and_promotions(x.copy())):
        np.testing.assert_array_equal(traced, eager)


def writes_into_its_argument(x):
    x[0] = 1.0
    return np.sum(x * x)


def test_a_gradient_of_a_write_into_a_read_only_argument_raises_as_numpy_does():
    x = np.broadcast_to(np.array([1.0, 2.0, 3.0]), (3,))  # read-only
    with pytest.raises(ValueError, match="assignment destination is read-only"):
        writes_into_its_argument(x)
    with pytest.raises(ValueError, match="assignment destination is read-only"):
        at.grad(writes_into_its_argument)(x)
    # a writeable argument: the gradient of the array written, d/dx = (0, 2 x1, 2 x2)
    np.testing.assert_array_equal(at.grad(writes_into_its_argument)(np.array(x)),
                                  [0.0, 4.0, 6.0])
