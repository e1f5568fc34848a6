"""Adjoint rules of functions that move, copy or select elements without arithmetic.

Each adjoint is the structural inverse: a reshape is undone by a reshape, a transpose by the
inverse transpose, a concatenation by a split, a broadcast or a repeat by a sum, a pad by a slice,
a quarter turn by a turn back, an insertion by taking out what was inserted.
Functions that take a sequence of arrays (concatenate, stack, hstack, vstack) give a list with
one gradient per element; variadic ones (atleast_1d, broadcast_arrays) one per argument.
"""
import numpy as np

from autotrace.runtime.derivatives.adjoint_ops import (delete_sources, diag_adjoint,
                                                       hstack_axis, insert_places,
                                                       inverse_permutation,
                                                       negate_shift, reshape_each, split_like,
                                                       take_at, unarray, unbroadcast,
                                                       unbroadcast_each, unpad, unrepeat, unstack,
                                                       untake, untake_along, untile)
from autotrace.transforms.rules.core import adjoint, d
from ...runtime.derivatives.structure import cast_like


@adjoint(np.reshape)
def reshape_rule(y, a, shape=None, order="C", *, newshape=None, copy=None):  # newshape: NumPy 1
    d[a] = np.reshape(d[y], np.shape(a), order=order)


@adjoint(np.ravel)
def ravel_rule(y, a, order="C"):
    d[a] = np.reshape(d[y], np.shape(a), order=order)


@adjoint(np.expand_dims)
def expand_dims_rule(y, a, axis):
    d[a] = np.reshape(d[y], np.shape(a))


@adjoint(np.squeeze)
def squeeze_rule(y, a, axis=None):
    d[a] = np.reshape(d[y], np.shape(a))


@adjoint(np.transpose)
def transpose_rule(y, a, axes=None):
    d[a] = np.transpose(d[y], inverse_permutation(axes, a))


@adjoint(np.swapaxes)
def swapaxes_rule(y, a, axis1, axis2):
    d[a] = np.swapaxes(d[y], axis1, axis2)


@adjoint(np.moveaxis)
def moveaxis_rule(y, a, source, destination):
    d[a] = np.moveaxis(d[y], destination, source)


@adjoint(np.flip)
def flip_rule(y, m, axis=None):
    d[m] = np.flip(d[y], axis)


@adjoint(np.fliplr)
def fliplr_rule(y, m):
    d[m] = np.fliplr(d[y])


@adjoint(np.flipud)
def flipud_rule(y, m):
    d[m] = np.flipud(d[y])


@adjoint(np.matrix_transpose, np.linalg.matrix_transpose)
def matrix_transpose_rule(y, x):
    d[x] = np.matrix_transpose(d[y])


@adjoint(np.rot90)
def rot90_rule(y, m, k=1, axes=(0, 1)):
    d[m] = np.rot90(d[y], -k, axes)


@adjoint(np.fft.fftshift)
def fftshift_rule(y, x, axes=None):
    d[x] = np.fft.ifftshift(d[y], axes)


@adjoint(np.fft.ifftshift)
def ifftshift_rule(y, x, axes=None):
    d[x] = np.fft.fftshift(d[y], axes)


@adjoint(np.roll)
def roll_rule(y, a, shift, axis=None):
    d[a] = np.roll(d[y], negate_shift(shift), axis)


@adjoint(np.broadcast_to)
def broadcast_to_rule(y, array, shape, subok=False):
    d[array] = unbroadcast(d[y], array)


@adjoint(np.broadcast_arrays)
def broadcast_arrays_rule(y, *args, subok=False):
    d[args] = unbroadcast_each(d[y], args)


@adjoint(np.atleast_1d, np.atleast_2d, np.atleast_3d)
def atleast_nd_rule(y, *arys):
    d[arys] = reshape_each(d[y], arys)


@adjoint(np.array)
def array_rule(y, object, dtype=None, *, copy=True, order="K", ndmin=0):
    d[object] = unarray(d[y], object)


@adjoint(np.asarray)
def asarray_rule(y, a, dtype=None, order=None, *, copy=None):
    d[a] = unarray(d[y], a)


if hasattr(np, "astype"):  # NumPy 2.1
    @adjoint(np.astype)
    def astype_rule(y, x, dtype, *, copy=True, device=None):
        d[x] = cast_like(d[y], x)


@adjoint(np.copy)
def copy_rule(y, a, order="K"):
    d[a] = unarray(d[y], a)


# Joining and splitting.


@adjoint(np.concatenate)
def concatenate_rule(y, arrays, axis=0, *, dtype=None, casting="same_kind"):
    d[arrays] = split_like(d[y], arrays, axis, 0)


@adjoint(np.hstack)
def hstack_rule(y, tup, *, dtype=None, casting="same_kind"):
    d[tup] = split_like(d[y], tup, hstack_axis(tup), 1)


@adjoint(np.vstack)
def vstack_rule(y, tup, *, dtype=None, casting="same_kind"):
    d[tup] = split_like(d[y], tup, 0, 2)


@adjoint(np.dstack)
def dstack_rule(y, tup):
    d[tup] = split_like(d[y], tup, 2, 3)


@adjoint(np.column_stack)
def column_stack_rule(y, tup):
    d[tup] = split_like(d[y], tup, 1, -2)  # -2: a 1-d array was a column


@adjoint(np.stack)
def stack_rule(y, arrays, axis=0, *, dtype=None, casting="same_kind"):
    d[arrays] = unstack(d[y], axis)


@adjoint(np.insert)
def insert_rule(y, arr, obj, values, axis=None):
    # Each element of arr is in y once; an element of values may be in y many times (values
    # broadcast), and its gradient adds them up.
    kept, placed, sources = insert_places(arr, obj, values, axis)
    d[arr] = unbroadcast(take_at(d[y], kept), arr)
    d[values] = unbroadcast(untake(take_at(d[y], placed), values, sources), values)


@adjoint(np.append)
def append_rule(y, arr, values, axis=None):
    pieces = split_like(d[y], (arr, values), axis)
    d[arr] = unbroadcast(pieces[0], arr)
    d[values] = unbroadcast(pieces[1], values)


@adjoint(np.delete)
def delete_rule(y, arr, obj, axis=None):
    d[arr] = unbroadcast(untake(d[y], arr, delete_sources(arr, obj, axis)), arr)


@adjoint(np.split, np.array_split)
def split_rule(y, ary, indices_or_sections, axis=0):
    d[ary] = np.concatenate(d[y], axis=axis)


@adjoint(np.hsplit)
def hsplit_rule(y, ary, indices_or_sections):
    d[ary] = np.hstack(d[y])


@adjoint(np.vsplit)
def vsplit_rule(y, ary, indices_or_sections):
    d[ary] = np.vstack(d[y])


@adjoint(np.dsplit)
def dsplit_rule(y, ary, indices_or_sections):
    d[ary] = np.dstack(d[y])


# Copies and selections.


@adjoint(np.tile)
def tile_rule(y, A, reps):
    d[A] = untile(d[y], A, reps)


@adjoint(np.repeat)
def repeat_rule(y, a, repeats, axis=None):
    d[a] = unrepeat(d[y], a, repeats, axis)


@adjoint(np.pad)
def pad_rule(y, array, pad_width, mode="constant", constant_values=0):
    d[array] = unpad(d[y], pad_width, mode)
    # A scalar fill value gets the gradient of every padded element.
    d[constant_values] = np.sum(d[y]) - np.sum(unpad(d[y], pad_width, mode))


@adjoint(np.diag)
def diag_rule(y, v, k=0):
    d[v] = diag_adjoint(d[y], v, k)


@adjoint(np.tril)
def tril_rule(y, m, k=0):
    d[m] = np.tril(d[y], k)


@adjoint(np.triu)
def triu_rule(y, m, k=0):
    d[m] = np.triu(d[y], k)


@adjoint(np.take)
def take_rule(y, a, indices, axis=None, *, mode="raise"):
    d[a] = untake(d[y], a, indices, axis, mode)


@adjoint(np.take_along_axis)
def take_along_axis_rule(y, arr, indices, axis=-1):
    d[arr] = untake_along(d[y], arr, indices, axis)
