"""np.fft's transforms, traced as one op each: fft, ifft, rfft, irfft and their 2-d and n-d
forms.

The op is NumPy's own function, called by the NumPy backend as it is (`np.fft.rfft(x, n=8)`),
so a traced result is NumPy's to the bit, and its dtype NumPy's (complex64 of float32). The
size, axes and norm are attributes; the result's shape and dtype are worked out by example.
Under autotrace.vmap the batch axis is one more axis the transform leaves alone: the axes move
by one, and an n-d transform of all axes, or of the last len(s), names them.
np.fft.fftshift and ifftshift trace as rolls (shape.py).
"""
from __future__ import annotations

import numpy as np

from .batching import BatchedCall, axis_batching, shifted
from .registry import define_traced_function

ONE_AXIS = (np.fft.fft, np.fft.ifft, np.fft.rfft, np.fft.irfft)
TWO_AXES = (np.fft.fft2, np.fft.ifft2, np.fft.rfft2, np.fft.irfft2)
ALL_AXES = (np.fft.fftn, np.fft.ifftn, np.fft.rfftn, np.fft.irfftn)


def _axes_batching(call: BatchedCall):
    """An n-d transform on a batch: the axes it transforms, written out where it took its
    default (all axes, or the last len(s)), moved by one."""
    axes = call.attrs.get("axes", (-2, -1) if call.primitive.impl in TWO_AXES else None)
    if axes is None:
        ndim, s = call.example_ndim(0), call.attrs.get("s")
        axes = tuple(range(ndim - len(s), ndim)) if s is not None else tuple(range(ndim))
    return call.bind(call.args[0], axes=shifted(tuple(axes)))


for _function in ONE_AXIS:
    define_traced_function(_function, fresh=True,
                           batching=axis_batching("axis", defaults={"axis": -1}))
for _function in TWO_AXES + ALL_AXES:
    define_traced_function(_function, fresh=True, batching=_axes_batching)
