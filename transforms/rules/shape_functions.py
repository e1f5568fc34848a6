"""Derivative rules of functions that move, copy or select elements without arithmetic.

These functions are linear, so each is its own tangent (declarations.py): the same call on the
input's tangent. Each adjoint is the structural inverse: a reshape is undone by a reshape, a
transpose by the inverse transpose, a concatenation by a split, a broadcast or a repeat by a sum,
a pad by a slice, a quarter turn by a turn back, an insertion by taking out what was inserted.
Functions that take a sequence of arrays (concatenate, stack, hstack, vstack) give a list with
one gradient per element and take the sequence of the elements' tangents; variadic ones
(atleast_1d, broadcast_arrays, meshgrid) give one gradient per argument.
"""
import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from ...runtime.derivatives.adjoint_ops import (broadcast_each_like, delete_sources, diag_adjoint,
                                                hstack_axis, insert_places, inverse_permutation,
                                                negate_shift, reshape_each, reshape_each_back,
                                                split_like, take_at, unarray, unbroadcast,
                                                unbroadcast_each, unpad, unpad_values, unrepeat,
                                                unstack, untake, untake_along, untile, unwindow,
                                                writeable_windows)
from ...runtime.derivatives.structural_adjoints import (memory_order, meshgrid_adjoint,
                                                       meshgrid_tangent, pad_tangent_mode)
from ...runtime.derivatives.real_only import refuse_real_part
from ...runtime.derivatives.structure import cast_like
from ...runtime.derivatives.weighted_pads import weighted_pad, weighted_pad_mode, weighted_unpad
from ...runtime.primitives.diagonal_fill import diagonal_index, diagonal_order, diagonal_values
from .core import adjoint, constant, d, tangent
from .declarations import linear


# sliding_window_view's writeable=True is refused (its windows overlap); False passes.
constant(writeable_windows)
# "A" and "K" read the items in the order of a's memory layout: the tangent and the gradient
# read theirs (laid out anew) in that same order, named.
constant(memory_order, diagonal_index, diagonal_order)
# The modes of np.pad whose tangent is np.pad of the tangent; it refuses the others.
constant(pad_tangent_mode)
# The modes of np.pad whose padded items are weighted sums of the array's along an axis (a
# statistic, an odd reflection, 'empty'): weighted_pads.py has their derivatives.
constant(weighted_pad_mode)


@adjoint(np.reshape)
def reshape_rule(y, a, shape=None, order="C", *, newshape=None, copy=None):  # newshape: NumPy 1
    d[a] = np.reshape(d[y], np.shape(a), order=memory_order(a, order))


@tangent(np.reshape)
def reshape_tangent(y, a, shape=None, order="C", *, newshape=None, copy=None):
    d[y] = np.reshape(d[a], np.shape(y), order=memory_order(a, order))


@adjoint(np.ravel)
def ravel_rule(y, a, order="C"):
    d[a] = np.reshape(d[y], np.shape(a), order=memory_order(a, order))


@tangent(np.ravel)
def ravel_tangent(y, a, order="C"):
    d[y] = np.ravel(d[a], order=memory_order(a, order))


@linear(np.expand_dims)
def expand_dims_rule(y, a, axis):
    d[a] = np.reshape(d[y], np.shape(a))


@linear(np.squeeze)
def squeeze_rule(y, a, axis=None):
    d[a] = np.reshape(d[y], np.shape(a))


@linear(np.transpose)
def transpose_rule(y, a, axes=None):
    d[a] = np.transpose(d[y], inverse_permutation(axes, a))


@linear(np.swapaxes)
def swapaxes_rule(y, a, axis1, axis2):
    d[a] = np.swapaxes(d[y], axis1, axis2)


@linear(np.moveaxis)
def moveaxis_rule(y, a, source, destination):
    d[a] = np.moveaxis(d[y], destination, source)


# A read-only view whose windows overlap: its adjoint adds each window's gradient back.
@linear(sliding_window_view,
        call="x, window_shape, axis, writeable=writeable_windows(writeable)")
def sliding_window_view_rule(y, x, window_shape, axis=None, *, subok=False, writeable=False):
    d[x] = unwindow(d[y], x, window_shape, axis, writeable)


@linear(np.flip)
def flip_rule(y, m, axis=None):
    d[m] = np.flip(d[y], axis)


@linear(np.fliplr)
def fliplr_rule(y, m):
    d[m] = np.fliplr(d[y])


@linear(np.flipud)
def flipud_rule(y, m):
    d[m] = np.flipud(d[y])


@linear(np.matrix_transpose, np.linalg.matrix_transpose)
def matrix_transpose_rule(y, x):
    d[x] = np.matrix_transpose(d[y])


@linear(np.rot90)
def rot90_rule(y, m, k=1, axes=(0, 1)):
    d[m] = np.rot90(d[y], -k, axes)


@linear(np.fft.fftshift)
def fftshift_rule(y, x, axes=None):
    d[x] = np.fft.ifftshift(d[y], axes)


@linear(np.fft.ifftshift)
def ifftshift_rule(y, x, axes=None):
    d[x] = np.fft.fftshift(d[y], axes)


@linear(np.roll)
def roll_rule(y, a, shift, axis=None):
    d[a] = np.roll(d[y], negate_shift(shift), axis)


@linear(np.broadcast_to, call="array, shape")
def broadcast_to_rule(y, array, shape, subok=False):
    d[array] = unbroadcast(d[y], array)


@adjoint(np.broadcast_arrays)
def broadcast_arrays_rule(y, *args, subok=False):
    d[args] = unbroadcast_each(d[y], args)


@tangent(np.broadcast_arrays)
def broadcast_arrays_tangent(y, *args, subok=False):
    d[y] = broadcast_each_like(d[args], y)


@adjoint(np.meshgrid)
def meshgrid_rule(y, *xi, copy=True, sparse=False, indexing="xy"):
    d[xi] = meshgrid_adjoint(d[y], xi, indexing, copy)


@tangent(np.meshgrid)
def meshgrid_tangent_rule(y, *xi, copy=True, sparse=False, indexing="xy"):
    d[y] = meshgrid_tangent(d[xi], sparse, indexing, copy)


@adjoint(np.atleast_1d, np.atleast_2d, np.atleast_3d)
def atleast_nd_rule(y, *arys):
    d[arys] = reshape_each(d[y], arys)


@tangent(np.atleast_1d, np.atleast_2d, np.atleast_3d)
def atleast_nd_tangent(y, *arys):
    # One argument gives one array, several a tuple: reshape_each_back follows y.
    d[y] = reshape_each_back(d[arys], y)


# array and asarray may change the dtype: unbroadcast gives an integer result a zero tangent.
# np.array copies (unless told not to), so the tangent is copied too: y[i] = ... must not write
# into the input's tangent. asarray copies only where NumPy must, for its tangent too.


@adjoint(np.array)
def array_rule(y, object, dtype=None, *, copy=True, order="K", ndmin=0):
    d[object] = unarray(d[y], object)


@tangent(np.array)
def array_tangent(y, object, dtype=None, *, copy=True, order="K", ndmin=0):
    d[y] = unbroadcast(np.reshape(np.array(d[object], copy=copy), np.shape(y)), y)


@adjoint(np.asarray)
def asarray_rule(y, a, dtype=None, order=None, *, copy=None):
    d[a] = unarray(d[y], a)


@tangent(np.asarray)
def asarray_tangent(y, a, dtype=None, order=None, *, copy=None):
    d[y] = unbroadcast(np.asarray(d[a]), y)


if hasattr(np, "astype"):  # NumPy 2.1
    @adjoint(np.astype)
    def astype_rule(y, x, dtype, *, copy=True, device=None):
        refuse_real_part(x, y, "numpy.astype")
        d[x] = cast_like(d[y], x)

    @tangent(np.astype)
    def astype_tangent(y, x, dtype, *, copy=True, device=None):
        # In y's floating dtype; unbroadcast gives an integer result a zero tangent.
        d[y] = unbroadcast(cast_like(d[x], y), y)


@linear(np.copy)
def copy_rule(y, a, order="K"):
    d[a] = unarray(d[y], a)


# Joining and splitting.


@linear(np.concatenate, call="arrays, axis")
def concatenate_rule(y, arrays, axis=0, *, dtype=None, casting="same_kind"):
    d[arrays] = split_like(d[y], arrays, axis, 0)


@linear(np.hstack, call="tup")
def hstack_rule(y, tup, *, dtype=None, casting="same_kind"):
    d[tup] = split_like(d[y], tup, hstack_axis(tup), 1)


@linear(np.vstack, call="tup")
def vstack_rule(y, tup, *, dtype=None, casting="same_kind"):
    d[tup] = split_like(d[y], tup, 0, 2)


@linear(np.dstack)
def dstack_rule(y, tup):
    d[tup] = split_like(d[y], tup, 2, 3)


@linear(np.column_stack)
def column_stack_rule(y, tup):
    d[tup] = split_like(d[y], tup, 1, -2)  # -2: a 1-d array was a column


@linear(np.stack, call="arrays, axis")
def stack_rule(y, arrays, axis=0, *, dtype=None, casting="same_kind"):
    d[arrays] = unstack(d[y], axis)


@adjoint(np.insert)
def insert_rule(y, arr, obj, values, axis=None):
    # Each element of arr is in y once; an element of values may be in y many times (values
    # broadcast), and its gradient adds them up.
    kept, placed, sources = insert_places(arr, obj, values, axis)
    d[arr] = unbroadcast(take_at(d[y], kept), arr)
    d[values] = unbroadcast(untake(take_at(d[y], placed), values, sources), values)


@tangent(np.insert)
def insert_tangent(y, arr, obj, values, axis=None):
    # Linear in arr and values together. Values are cast to arr's dtype: an integer result has
    # a zero tangent, which unbroadcast gives.
    d[y] = unbroadcast(np.insert(d[arr], obj, d[values], axis), y)


@linear(np.append)
def append_rule(y, arr, values, axis=None):
    pieces = split_like(d[y], (arr, values), axis)
    d[arr] = unbroadcast(pieces[0], arr)
    d[values] = unbroadcast(pieces[1], values)


@linear(np.delete)
def delete_rule(y, arr, obj, axis=None):
    d[arr] = unbroadcast(untake(d[y], arr, delete_sources(arr, obj, axis)), arr)


@linear(np.split)
def split_rule(y, ary, indices_or_sections, axis=0):
    d[ary] = np.concatenate(d[y], axis=axis)


linear(np.array_split)(split_rule)


@linear(np.hsplit)
def hsplit_rule(y, ary, indices_or_sections):
    d[ary] = np.hstack(d[y])


@linear(np.vsplit)
def vsplit_rule(y, ary, indices_or_sections):
    d[ary] = np.vstack(d[y])


@linear(np.dsplit)
def dsplit_rule(y, ary, indices_or_sections):
    d[ary] = np.dstack(d[y])


# Copies and selections.


@linear(np.tile)
def tile_rule(y, A, reps):
    d[A] = untile(d[y], A, reps)


@linear(np.repeat)
def repeat_rule(y, a, repeats, axis=None):
    d[a] = unrepeat(d[y], a, repeats, axis)


# Linear in the array and the fill value together, but for the modes that pad with a statistic
# (maximum, minimum, median), whose weights change only where items tie.
@adjoint(np.pad)
def pad_rule(y, array, pad_width, mode="constant", constant_values=0, end_values=0,
             stat_length=None, reflect_type="even"):
    d[array] = weighted_unpad(d[y], array, pad_width, mode, stat_length, reflect_type) if (
        weighted_pad_mode(mode, reflect_type)) else unpad(d[y], pad_width, mode)
    # Each fill value (one, a (before, after) pair, or a pair per axis) gets the gradient of
    # the padded elements it fills; each end value of a linear ramp, of those its ramp leads
    # from it.
    d[constant_values] = unpad_values(d[y], pad_width, constant_values)
    d[end_values] = unpad_values(d[y], pad_width, end_values, mode)


@tangent(np.pad)
def pad_tangent(y, array, pad_width, mode="constant", constant_values=0, end_values=0,
                stat_length=None, reflect_type="even"):
    # (constant_values is constant mode's alone, end_values linear_ramp's; the copying modes
    # are linear in the array; a callable mode is refused)
    d[y] = np.pad(d[array], pad_width, mode, constant_values=d[constant_values]) if (
        mode == "constant") else np.pad(d[array], pad_width, mode, end_values=d[end_values]) if (
        mode == "linear_ramp") else weighted_pad(d[array], array, pad_width, mode, stat_length,
                                                 reflect_type) if (
        weighted_pad_mode(mode, reflect_type)) else np.pad(d[array], pad_width,
                                                           pad_tangent_mode(mode))


# The derivatives of the weighted modes are linear in what they carry, each the other's
# transpose; the weights are constant where items do not tie.
@linear(weighted_pad)
def weighted_pad_rule(z, t, array, pad_width, mode, stat_length=None, reflect_type="even"):
    d[t] = weighted_unpad(d[z], array, pad_width, mode, stat_length, reflect_type)


@linear(weighted_unpad)
def weighted_unpad_rule(z, g, array, pad_width, mode, stat_length=None, reflect_type="even"):
    d[g] = weighted_pad(d[z], array, pad_width, mode, stat_length, reflect_type)


@linear(np.diag)
def diag_rule(y, v, k=0):
    d[v] = diag_adjoint(d[y], v, k)


@linear(np.tril)
def tril_rule(y, m, k=0):
    d[m] = np.tril(d[y], k)


@linear(np.triu)
def triu_rule(y, m, k=0):
    d[m] = np.triu(d[y], k)


@linear(np.take)
def take_rule(y, a, indices, axis=None, *, mode="raise"):
    d[a] = untake(d[y], a, indices, axis, mode)


# np.fill_diagonal's values: np.take of val in "wrap" mode (runtime/primitives/diagonal_fill.py).
@linear(diagonal_values)
def diagonal_values_rule(y, val, a, wrap=False):
    d[val] = untake(d[y], val, diagonal_order(a, wrap), None, "wrap")


@linear(np.take_along_axis)
def take_along_axis_rule(y, arr, indices, axis=-1):
    d[arr] = untake_along(d[y], arr, indices, axis)
