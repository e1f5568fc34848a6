"""Tangent rules of functions that move, copy or select elements without arithmetic.

These functions are linear, so each is its own tangent: the same call on the input's tangent.
Functions that take a sequence of arrays (concatenate, stack, ...) take the sequence of the
elements' tangents; those that return several arrays (split, broadcast_arrays, atleast_Nd of
several arguments) give a list of tangents.
"""
import numpy as np

from autotrace.runtime.derivatives.adjoint_ops import (broadcast_each_like, reshape_each_back,
                                                       unbroadcast)
from autotrace.transforms.rules.core import d, tangent
from ...runtime.derivatives.structure import cast_like


@tangent(np.reshape)
def reshape_tangent(y, a, shape=None, order="C", *, newshape=None, copy=None):
    d[y] = np.reshape(d[a], np.shape(y), order=order)


@tangent(np.ravel)
def ravel_tangent(y, a, order="C"):
    d[y] = np.ravel(d[a], order)


@tangent(np.expand_dims)
def expand_dims_tangent(y, a, axis):
    d[y] = np.expand_dims(d[a], axis)


@tangent(np.squeeze)
def squeeze_tangent(y, a, axis=None):
    d[y] = np.squeeze(d[a], axis)


@tangent(np.transpose)
def transpose_tangent(y, a, axes=None):
    d[y] = np.transpose(d[a], axes)


@tangent(np.swapaxes)
def swapaxes_tangent(y, a, axis1, axis2):
    d[y] = np.swapaxes(d[a], axis1, axis2)


@tangent(np.moveaxis)
def moveaxis_tangent(y, a, source, destination):
    d[y] = np.moveaxis(d[a], source, destination)


@tangent(np.flip)
def flip_tangent(y, m, axis=None):
    d[y] = np.flip(d[m], axis)


@tangent(np.fliplr)
def fliplr_tangent(y, m):
    d[y] = np.fliplr(d[m])


@tangent(np.flipud)
def flipud_tangent(y, m):
    d[y] = np.flipud(d[m])


@tangent(np.matrix_transpose, np.linalg.matrix_transpose)
def matrix_transpose_tangent(y, x):
    d[y] = np.matrix_transpose(d[x])


@tangent(np.rot90)
def rot90_tangent(y, m, k=1, axes=(0, 1)):
    d[y] = np.rot90(d[m], k, axes)


@tangent(np.fft.fftshift)
def fftshift_tangent(y, x, axes=None):
    d[y] = np.fft.fftshift(d[x], axes)


@tangent(np.fft.ifftshift)
def ifftshift_tangent(y, x, axes=None):
    d[y] = np.fft.ifftshift(d[x], axes)


@tangent(np.roll)
def roll_tangent(y, a, shift, axis=None):
    d[y] = np.roll(d[a], shift, axis)


@tangent(np.broadcast_to)
def broadcast_to_tangent(y, array, shape, subok=False):
    d[y] = np.broadcast_to(d[array], shape)


@tangent(np.broadcast_arrays)
def broadcast_arrays_tangent(y, *args, subok=False):
    d[y] = broadcast_each_like(d[args], y)


@tangent(np.atleast_1d, np.atleast_2d, np.atleast_3d)
def atleast_nd_tangent(y, *arys):
    # One argument gives one array, several a tuple: reshape_each_back follows y.
    d[y] = reshape_each_back(d[arys], y)


# array and asarray may change the dtype: unbroadcast gives an integer result a zero tangent.
# np.array copies (unless told not to), so the tangent is copied too: y[i] = ... must not write
# into the input's tangent. asarray copies only where NumPy must, for its tangent too.


@tangent(np.array)
def array_tangent(y, object, dtype=None, *, copy=True, order="K", ndmin=0):
    d[y] = unbroadcast(np.reshape(np.array(d[object], copy=copy), np.shape(y)), y)


@tangent(np.asarray)
def asarray_tangent(y, a, dtype=None, order=None, *, copy=None):
    d[y] = unbroadcast(np.asarray(d[a]), y)


if hasattr(np, "astype"):  # NumPy 2.1
    @tangent(np.astype)
    def astype_tangent(y, x, dtype, *, copy=True, device=None):
        # In y's floating dtype; unbroadcast gives an integer result a zero tangent.
        d[y] = unbroadcast(cast_like(d[x], y), y)


@tangent(np.copy)
def copy_tangent(y, a, order="K"):
    d[y] = np.copy(d[a], order)


# Joining and splitting.


@tangent(np.concatenate)
def concatenate_tangent(y, arrays, axis=0, *, dtype=None, casting="same_kind"):
    d[y] = np.concatenate(d[arrays], axis)


@tangent(np.hstack)
def hstack_tangent(y, tup, *, dtype=None, casting="same_kind"):
    d[y] = np.hstack(d[tup])


@tangent(np.vstack)
def vstack_tangent(y, tup, *, dtype=None, casting="same_kind"):
    d[y] = np.vstack(d[tup])


@tangent(np.dstack)
def dstack_tangent(y, tup):
    d[y] = np.dstack(d[tup])


@tangent(np.column_stack)
def column_stack_tangent(y, tup):
    d[y] = np.column_stack(d[tup])


@tangent(np.stack)
def stack_tangent(y, arrays, axis=0, *, dtype=None, casting="same_kind"):
    d[y] = np.stack(d[arrays], axis)


@tangent(np.insert)
def insert_tangent(y, arr, obj, values, axis=None):
    # Linear in arr and values together. Values are cast to arr's dtype: an integer result has
    # a zero tangent, which unbroadcast gives.
    d[y] = unbroadcast(np.insert(d[arr], obj, d[values], axis), y)


@tangent(np.append)
def append_tangent(y, arr, values, axis=None):
    d[y] = np.append(d[arr], d[values], axis)


@tangent(np.delete)
def delete_tangent(y, arr, obj, axis=None):
    d[y] = np.delete(d[arr], obj, axis)


@tangent(np.split)
def split_tangent(y, ary, indices_or_sections, axis=0):
    d[y] = np.split(d[ary], indices_or_sections, axis)


@tangent(np.hsplit)
def hsplit_tangent(y, ary, indices_or_sections):
    d[y] = np.hsplit(d[ary], indices_or_sections)


@tangent(np.vsplit)
def vsplit_tangent(y, ary, indices_or_sections):
    d[y] = np.vsplit(d[ary], indices_or_sections)


@tangent(np.dsplit)
def dsplit_tangent(y, ary, indices_or_sections):
    d[y] = np.dsplit(d[ary], indices_or_sections)


@tangent(np.array_split)
def array_split_tangent(y, ary, indices_or_sections, axis=0):
    d[y] = np.array_split(d[ary], indices_or_sections, axis)


# Copies and selections.


@tangent(np.tile)
def tile_tangent(y, A, reps):
    d[y] = np.tile(d[A], reps)


@tangent(np.repeat)
def repeat_tangent(y, a, repeats, axis=None):
    d[y] = np.repeat(d[a], repeats, axis)


@tangent(np.pad)
def pad_tangent(y, array, pad_width, mode="constant", constant_values=0):
    # Linear in the array and the fill value together.
    d[y] = np.pad(d[array], pad_width, mode, constant_values=d[constant_values])


@tangent(np.diag)
def diag_tangent(y, v, k=0):
    d[y] = np.diag(d[v], k)


@tangent(np.tril)
def tril_tangent(y, m, k=0):
    d[y] = np.tril(d[m], k)


@tangent(np.triu)
def triu_tangent(y, m, k=0):
    d[y] = np.triu(d[m], k)


@tangent(np.take)
def take_tangent(y, a, indices, axis=None, *, mode="raise"):
    d[y] = np.take(d[a], indices, axis, mode=mode)


@tangent(np.take_along_axis)
def take_along_axis_tangent(y, arr, indices, axis=-1):
    d[y] = np.take_along_axis(d[arr], indices, axis)
