"""Derivative helpers of np.fft's transforms: the axes and sizes they take, and the cropping and
zero padding that fit an array to them.

Every transform of np.fft is linear, and autotrace pairs a gradient g with a tangent t by
Re(g t), without a conjugate (complex_parts.py), so a transform's gradient is its transpose, not
its adjoint: the DFT matrix is symmetric, so fft's transpose is fft with the same norm, and
ifft's is ifft. A size n (or s) first crops or zero-pads the input along the axis, whose
transpose fits the gradient back to the input's shape (`resized`).

rfft keeps the bins 0..n//2 of the fft of a real input: its transpose zero-pads the gradient
back to n bins before the fft. irfft(X, n) reads only those bins of X, as the Hermitian
spectrum they stand for: y[j] = c (X[0] + 2 sum Re(X[k] e^(2 pi i j k / n)) + X[n/2] (-1)^j),
the last term for an even n alone and Re taken of X[0] and X[n/2]. Its transpose is the ifft of
the (real) gradient, of the same norm c, cropped to those bins and weighted 1 at bin 0 and at
bin n/2 of an even n, 2 at the others (`hermitian_weights`).
"""
from __future__ import annotations

import numpy as np

from ..devices import array_module
from .dtypes import real_dtype


def resized(x, shape: tuple):
    """`x` cropped or zero-padded at the end of each axis to `shape`, as np.fft fits its input
    to n or s. Linear; its transpose is `resized` back to x's shape."""
    widths = [(0, max(0, size - now)) for now, size in zip(np.shape(x), shape)]
    if any(after for _, after in widths):
        x = array_module(x).pad(x, widths)
    if tuple(np.shape(x)) == tuple(shape):
        return x
    return x[tuple(slice(0, size) for size in shape)]


def transform_axes(x, s=None, axes=None) -> tuple:
    """The axes, non-negative, that np.fft.fftn(x, s, axes) transforms: those given, else the
    last len(s) ones, else all. An axis given twice, which NumPy transforms twice (cropped or
    padded to each size in turn), is refused: the rules transpose one transform per axis."""
    ndim = np.ndim(x)
    if axes is None:
        axes = range(ndim - len(s), ndim) if s is not None else range(ndim)
    axes = tuple(axis % ndim for axis in axes)
    if len(set(axes)) < len(axes):
        raise NotImplementedError(
            f"autotrace does not differentiate np.fft's n-d transforms along an axis given "
            f"twice (axes={axes}): call the transform once per pass along it")
    return axes


def last_axis(x, s=None, axes=None) -> int:
    """The axis along which np.fft.rfftn(x, s, axes) and irfftn take the real transform."""
    return transform_axes(x, s, axes)[-1]


def padded_spectrum_shape(y, a, axis: int, n=None) -> tuple:
    """The shape of rfft's result `y` of `a` with all n bins along `axis`, the n // 2 + 1 it
    kept and those it dropped: n, else (None, or -1 in rfftn's s) a's length."""
    shape = list(np.shape(y))
    shape[axis] = np.shape(a)[axis] if n is None or n == -1 else n
    return tuple(shape)


def read_bins_shape(y, axis: int) -> tuple:
    """The shape of the bins that irfft read to give `y`: n // 2 + 1 along `axis`, n = y's."""
    shape = list(np.shape(y))
    shape[axis] = shape[axis] // 2 + 1
    return tuple(shape)


def hermitian_weights(y, axis: int, like):
    """The weights, along `axis` of an array of `like`'s axes and precision, of the n // 2 + 1
    bins that np.fft.irfft read to give `y`, of length n along `axis`: 1 at bin 0 and at bin
    n / 2 of an even n, 2 at the others."""
    n = np.shape(y)[axis]
    weights = np.full(n // 2 + 1, 2.0, real_dtype(like))
    weights[0] = 1.0
    if n % 2 == 0:
        weights[-1] = 1.0
    shape = [1] * np.ndim(like)
    shape[axis] = n // 2 + 1
    return array_module(like).asarray(np.reshape(weights, shape))
