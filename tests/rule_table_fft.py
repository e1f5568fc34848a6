"""Rule-table entries (see tests/rule_table.py) for np.fft's transforms: each of fft, ifft,
rfft and irfft with odd and even lengths, n cropping and zero-padding the input, along another
axis and in each norm; their 2-d and n-d forms with s and axes given and not; and `resized`,
the cropping and padding their gradients use."""
from __future__ import annotations

import numpy as np

from autotrace.runtime.derivatives.fourier import resized


def _normal(*shapes):
    return lambda rng: tuple(rng.standard_normal(shape) for shape in shapes)


# (name, input shape, keyword arguments)
_ONE_D = [
    ("", (6,), {}), ("odd", (5,), {}), ("crop", (6,), dict(n=4)), ("pad-odd", (4,), dict(n=7)),
    ("axis0-ortho", (5, 3), dict(axis=0, norm="ortho")),
    ("forward", (2, 4), dict(norm="forward")), ("backward-pad", (3,), dict(n=6, norm="backward")),
]
_N_D = [
    ("", (3, 4), {}), ("s-crop-pad", (3, 4), dict(s=(2, 5), axes=(0, 1))),
    ("axes", (2, 3, 4), dict(axes=(0, 2), norm="ortho")),
    ("s-axes", (3, 2, 5), dict(s=(4, 3), axes=(2, 0), norm="forward")),
    ("one-axis", (3, 5), dict(axes=(0,))),
    ("s-whole-axis", (3, 4), dict(s=(2, -1), axes=(0, 1))),  # -1: the input's length
]
_TWO_D = [("", (3, 4), {}), ("batched", (2, 3, 5), dict(s=(2, 4))),
          ("axes", (4, 2, 3), dict(axes=(0, 2), norm="ortho"))]


def fft_table(Entry) -> list:
    """The entries, made with the table's Entry class."""
    table = []
    for function in (np.fft.fft, np.fft.ifft, np.fft.rfft, np.fft.irfft):
        for name, shape, kwargs in _ONE_D:
            table.append(Entry(f"fft.{function.__name__}/{name or 'default'}", function,
                               _normal(shape), kwargs))
    for function in (np.fft.fftn, np.fft.ifftn, np.fft.rfftn, np.fft.irfftn):
        for name, shape, kwargs in _N_D:
            table.append(Entry(f"fft.{function.__name__}/{name or 'default'}", function,
                               _normal(shape), kwargs))
    for function in (np.fft.fft2, np.fft.ifft2, np.fft.rfft2, np.fft.irfft2):
        for name, shape, kwargs in _TWO_D:
            table.append(Entry(f"fft.{function.__name__}/{name or 'default'}", function,
                               _normal(shape), kwargs))
    table += [
        Entry("helper:resized", resized, _normal((3, 4)), dict(shape=(2, 6))),
        Entry("helper:resized/same", resized, _normal((3,)), dict(shape=(3,))),
    ]
    return table
