"""Rules of np.fft's transforms: fft, ifft, rfft, irfft and their 2-d and n-d forms.

All are linear, so `linear` gives their tangents (the transform of the tangent), and their
gradients are transforms again (runtime/derivatives/fourier.py derives them): fft's is fft of
the same norm and ifft's ifft, fitted back to the input's shape; rfft's pads the bins it dropped
before the fft; irfft's is the ifft of the gradient on the bins it read, weighted by how often
each stands in the spectrum. These rules are closed, to any order. np.fft.fftshift and
ifftshift are in shape_functions.py.
"""
import numpy as np

from ...runtime.derivatives.fourier import (hermitian_weights, last_axis,
                                            padded_spectrum_shape, read_bins_shape, resized,
                                            transform_axes)
from .core import constant, d
from .declarations import linear

constant(transform_axes, last_axis, padded_spectrum_shape, read_bins_shape, hermitian_weights)


@linear(resized)
def resized_rule(y, x, shape):
    d[x] = resized(d[y], np.shape(x))


@linear(np.fft.fft)
def fft_rule(y, a, n=None, axis=-1, norm=None):
    d[a] = resized(np.fft.fft(d[y], None, axis, norm), np.shape(a))


@linear(np.fft.ifft)
def ifft_rule(y, a, n=None, axis=-1, norm=None):
    d[a] = resized(np.fft.ifft(d[y], None, axis, norm), np.shape(a))


@linear(np.fft.fftn)
def fftn_rule(y, a, s=None, axes=None, norm=None):
    d[a] = resized(np.fft.fftn(d[y], None, transform_axes(a, s, axes), norm), np.shape(a))


@linear(np.fft.fft2)
def fft2_rule(y, a, s=None, axes=(-2, -1), norm=None):
    d[a] = resized(np.fft.fftn(d[y], None, transform_axes(a, s, axes), norm), np.shape(a))


@linear(np.fft.ifftn)
def ifftn_rule(y, a, s=None, axes=None, norm=None):
    d[a] = resized(np.fft.ifftn(d[y], None, transform_axes(a, s, axes), norm), np.shape(a))


@linear(np.fft.ifft2)
def ifft2_rule(y, a, s=None, axes=(-2, -1), norm=None):
    d[a] = resized(np.fft.ifftn(d[y], None, transform_axes(a, s, axes), norm), np.shape(a))


@linear(np.fft.rfft)
def rfft_rule(y, a, n=None, axis=-1, norm=None):
    # The bins rfft dropped get zeros: the spectrum of all n bins, whose fft is a's gradient.
    spectrum = resized(d[y], padded_spectrum_shape(y, a, axis, n))
    d[a] = resized(np.fft.fft(spectrum, None, axis, norm), np.shape(a))


@linear(np.fft.rfftn)
def rfftn_rule(y, a, s=None, axes=None, norm=None):
    # As rfft along the last axis, whose bins are padded; fftn's transpose along the others.
    spectrum = resized(d[y], padded_spectrum_shape(y, a, last_axis(a, s, axes),
                                                   None if s is None else s[-1]))
    d[a] = resized(np.fft.fftn(spectrum, None, transform_axes(a, s, axes), norm), np.shape(a))


@linear(np.fft.rfft2)
def rfft2_rule(y, a, s=None, axes=(-2, -1), norm=None):
    spectrum = resized(d[y], padded_spectrum_shape(y, a, last_axis(a, s, axes),
                                                   None if s is None else s[-1]))
    d[a] = resized(np.fft.fftn(spectrum, None, transform_axes(a, s, axes), norm), np.shape(a))


@linear(np.fft.irfft)
def irfft_rule(y, a, n=None, axis=-1, norm=None):
    # The n // 2 + 1 bins irfft read, weighted; y is real, so only its gradient's real part
    # means anything.
    read = resized(np.fft.ifft(np.real(d[y]), None, axis, norm), read_bins_shape(y, axis))
    d[a] = resized(read * hermitian_weights(y, axis, read), np.shape(a))


@linear(np.fft.irfftn)
def irfftn_rule(y, a, s=None, axes=None, norm=None):
    # irfft along the last axis, after ifft along the others (as np.fft.irfftn computes it).
    read = resized(np.fft.ifftn(np.real(d[y]), None, transform_axes(a, s, axes), norm),
                   read_bins_shape(y, last_axis(a, s, axes)))
    d[a] = resized(read * hermitian_weights(y, last_axis(a, s, axes), read), np.shape(a))


@linear(np.fft.irfft2)
def irfft2_rule(y, a, s=None, axes=(-2, -1), norm=None):
    read = resized(np.fft.ifftn(np.real(d[y]), None, transform_axes(a, s, axes), norm),
                   read_bins_shape(y, last_axis(a, s, axes)))
    d[a] = resized(read * hermitian_weights(y, last_axis(a, s, axes), read), np.shape(a))
