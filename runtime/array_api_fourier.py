"""np.fft over an array-API namespace's `fft` extension (runtime/array_api.py's NumpyNames).

The extension has NumPy's transforms but for the 2-d ones, which are its n-d ones over the
last two axes; its norm has no None (NumPy's None is "backward"), and its complex transforms
take complex inputs only, so a real input is made complex of its precision first, as NumPy
computes it. A namespace without the extension refuses each transform, naming it.
"""
from __future__ import annotations


class Fourier:
    """`np.fft` over a namespace's `fft` extension."""

    def __init__(self, names):
        self.names = names
        self.xp_fft = getattr(names.xp, "fft", None)

    def _call(self, name: str, x, complex_input: bool, **kwargs):
        function = getattr(self.xp_fft, name, None)
        if function is None:
            raise self.names.unsupported(
                f"numpy.fft.{name} has no equivalent in {self.names.xp.__name__}, which has no "
                f"fft extension of the array API; run it on NumPy arrays")
        (x,) = self.names._promoted([x], float_only=True)
        xp = self.names.xp
        if complex_input and not xp.isdtype(x.dtype, "complex floating"):
            x = xp.astype(x, xp.complex64 if x.dtype == xp.float32 else xp.complex128)
        norm = kwargs.pop("norm", None) or "backward"
        return function(x, norm=norm, **{key: value for key, value in kwargs.items()
                                         if value is not None})

    def fft(self, a, n=None, axis=-1, norm=None):
        return self._call("fft", a, True, n=n, axis=axis, norm=norm)

    def ifft(self, a, n=None, axis=-1, norm=None):
        return self._call("ifft", a, True, n=n, axis=axis, norm=norm)

    def rfft(self, a, n=None, axis=-1, norm=None):
        return self._call("rfft", a, False, n=n, axis=axis, norm=norm)

    def irfft(self, a, n=None, axis=-1, norm=None):
        return self._call("irfft", a, True, n=n, axis=axis, norm=norm)

    def fftn(self, a, s=None, axes=None, norm=None):
        return self._call("fftn", a, True, s=s, axes=axes, norm=norm)

    def ifftn(self, a, s=None, axes=None, norm=None):
        return self._call("ifftn", a, True, s=s, axes=axes, norm=norm)

    def rfftn(self, a, s=None, axes=None, norm=None):
        return self._call("rfftn", a, False, s=s, axes=axes, norm=norm)

    def irfftn(self, a, s=None, axes=None, norm=None):
        return self._call("irfftn", a, True, s=s, axes=axes, norm=norm)

    def fft2(self, a, s=None, axes=(-2, -1), norm=None):
        return self.fftn(a, s, axes, norm)

    def ifft2(self, a, s=None, axes=(-2, -1), norm=None):
        return self.ifftn(a, s, axes, norm)

    def rfft2(self, a, s=None, axes=(-2, -1), norm=None):
        return self.rfftn(a, s, axes, norm)

    def irfft2(self, a, s=None, axes=(-2, -1), norm=None):
        return self.irfftn(a, s, axes, norm)
