"""np.fft in user functions as scientific code writes it: a power spectrum, a convolution by
FFT, a spectral derivative, a round trip through rfft and irfft; each in every mode (grad,
value_and_grad, vjp, the traced gradient, forward mode, jvp, the gradient of a directional
derivative), through vmap(grad) and the Hessian, traced and untraced, against central
differences and NumPy.

tests/rule_table_fft.py checks each transform's rules by themselves, to second order, in every
size, axis and norm; here the transforms meet each other and the rest of NumPy.
"""
import numpy as np
import pytest

import autotrace
from autotrace.transforms.errors import TransformError
from tests.numeric import central_difference, check_every_mode

RNG = np.random.default_rng(23)
KERNEL = np.array([0.5, -1.0, 2.0])


def power_spectrum(x):
    # the energy of each frequency bin of an odd-length, zero-padded window, weighted
    return np.sum(np.abs(np.fft.rfft(x, 9, norm="ortho")) ** 2 * np.arange(5.0))


def convolved(x):
    n = x.shape[-1] + KERNEL.shape[-1] - 1
    return np.fft.irfft(np.fft.rfft(x, n) * np.fft.rfft(KERNEL, n), n)


def convolution_loss(x):
    return np.sum(convolved(x) ** 3)


def spectral_derivative(x):
    # d/dt of samples on [0, 2 pi): multiply by i k in frequency
    wavenumbers = np.fft.fftfreq(x.shape[-1], 1.0 / x.shape[-1])
    return np.real(np.fft.ifft(1j * wavenumbers * np.fft.fft(x)))


def spectral_derivative_loss(x):
    return np.sum(np.sin(spectral_derivative(x)))


def round_trip(x):
    return np.sum(np.fft.irfft(np.fft.rfft(x), x.shape[-1]) ** 2 * np.cos(x))


def filtered_image(x):
    # a 2-d low-pass filter: the shifted spectrum, weighted by distance from its centre
    spectrum = np.fft.fftshift(np.fft.fft2(np.reshape(x, (3, 4))))
    weights = np.exp(-np.add.outer(np.arange(-1.0, 2.0) ** 2, np.arange(-2.0, 2.0) ** 2))
    return np.sum(np.fft.irfftn(np.fft.ifftshift(spectrum * weights)[:, :3], (3, 4), (0, 1)) ** 2)


LOSSES = [power_spectrum, convolution_loss, spectral_derivative_loss, round_trip, filtered_image]


def test_values_are_numpy_s():
    x = RNG.standard_normal(8)
    np.testing.assert_allclose(convolved(x), np.convolve(x, KERNEL), atol=1e-12)
    t = np.linspace(0.0, 2.0 * np.pi, 8, endpoint=False)
    np.testing.assert_allclose(spectral_derivative(np.sin(t)), np.cos(t), atol=1e-12)
    np.testing.assert_allclose(np.fft.irfft(np.fft.rfft(x), 8), x, atol=1e-12)
    for loss in LOSSES:
        point = RNG.standard_normal(12 if loss is filtered_image else 7)
        assert autotrace.function(loss)(point) == pytest.approx(loss(point), rel=1e-13)


@pytest.mark.parametrize("dtype, spectrum", [(np.float64, np.complex128),
                                             (np.float32, np.complex64)])
def test_traced_dtypes_are_numpy_s(dtype, spectrum):
    x = RNG.standard_normal((2, 6)).astype(dtype)
    for function in (np.fft.fft, np.fft.rfft, np.fft.fft2, np.fft.rfftn):
        result = autotrace.function(function)(x)
        assert result.dtype == function(x).dtype == spectrum
        np.testing.assert_allclose(result, function(x), rtol=1e-5)
    assert autotrace.function(np.fft.irfft)(np.fft.rfft(x)).dtype == dtype
    assert autotrace.grad(power_spectrum)(x[0]).dtype == dtype


@pytest.mark.parametrize("loss", LOSSES)
def test_every_mode_against_central_differences(loss):
    x = RNG.standard_normal(12 if loss is filtered_image else 7)
    check_every_mode(loss, x)


@pytest.mark.parametrize("loss", LOSSES)
def test_vmap_of_grad_and_hessian(loss):
    batch = RNG.standard_normal((3, 12 if loss is filtered_image else 8))
    gradients = autotrace.vmap(autotrace.grad(loss))(batch)
    for row, gradient in zip(batch, gradients):
        np.testing.assert_allclose(gradient, central_difference(loss, row), rtol=1e-6,
                                   atol=1e-7)
    x = batch[0]
    expected = np.stack([central_difference(lambda y: autotrace.grad(loss)(y)[i], x)
                         for i in range(x.size)])
    np.testing.assert_allclose(autotrace.hessian(loss)(x), expected, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(autotrace.function(autotrace.hessian(loss))(x), expected,
                               rtol=1e-5, atol=1e-6)


def test_gradient_of_complex_input_is_jax_s():
    # A real loss of a complex z: the gradient is dL/dx - 1j dL/dy (JAX's convention, as for
    # np.abs(z) ** 2, whose gradient is 2 conj(z)).
    def loss(z):
        return np.sum(np.abs(np.fft.fft(z, 6) * np.arange(1.0, 7.0)) ** 2) + np.sum(
            np.fft.irfft(z, norm="ortho") ** 3)
    z = RNG.standard_normal(4) + 1j * RNG.standard_normal(4)
    expected = (central_difference(lambda x: loss(x + 1j * z.imag), z.real)
                - 1j * central_difference(lambda y: loss(z.real + 1j * y), z.imag))
    np.testing.assert_allclose(autotrace.grad(loss)(z), expected, rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(autotrace.function(autotrace.grad(loss))(z), expected,
                               rtol=1e-6, atol=1e-7)


def test_hermitian_fft_is_refused():
    def loss(x):
        return np.sum(np.fft.hfft(x))
    with pytest.raises(TransformError, match=r"no derivative rule for numpy.fft.hfft: a "
                                             r"transform of a Hermitian-symmetric spectrum"):
        autotrace.grad(loss)(np.ones(4))

    def rewritten(x):  # what the refusal says to write, differentiated
        return np.sum(np.fft.irfft(np.conj(x), 6) * 6)
    x = np.array([0.3, -1.2, 0.7, 2.0])
    np.testing.assert_allclose(rewritten(x), np.sum(np.fft.hfft(x, 6)), rtol=1e-12)
    step = 1e-6
    expected = [(rewritten(x + step * e) - rewritten(x - step * e)) / (2 * step)
                for e in np.eye(4)]
    np.testing.assert_allclose(autotrace.grad(rewritten)(x), expected, rtol=1e-6, atol=1e-8)


def test_an_axis_transformed_twice_is_refused_in_reverse_mode():
    # NumPy transforms it twice, fitted to each size of s in turn: one transpose per axis would
    # be wrong, so the gradient refuses; the tangent, the transform of the tangent, is right.
    def loss(x):
        return np.sum(np.abs(np.fft.fftn(x, (3, 5), axes=(0, 0))) ** 2)
    x = RNG.standard_normal((4, 2))
    with pytest.raises(NotImplementedError, match=r"^autotrace does not differentiate np\.fft's "
                       r"n-d transforms along an axis given twice \(axes=\(0, 0\)\): call the "
                       r"transform once per pass along it$"):
        autotrace.grad(loss)(x)
    direction = RNG.standard_normal(x.shape)
    _, tangent = autotrace.jvp(loss, (x,), (direction,))
    assert tangent == pytest.approx(np.sum(central_difference(loss, x) * direction), rel=1e-6)
