"""The linear maps of max pooling's derivatives (runtime/primitives/pooling.py) and the fold of
convolution's input gradient (runtime/primitives/windows.py) against loop-by-loop references:
the first largest element of each window wins, a NaN is the largest, padding never receives a
gradient, and values are NumPy's arithmetic, special values included."""
from __future__ import annotations

import itertools

import numpy as np
import pytest

from autotrace.runtime.primitives import pooling
from autotrace.runtime.primitives.windows import (extract_patches, fold_patches, pad_spatial,
                                                  window_geometry)

rng = np.random.default_rng(3)
# (x spatial size, window, strides, padding): overlapping windows, "same" padding on each side.
CASES = [((8, 8), (2, 2), (2, 2), "same"), ((5, 7), (3, 3), (1, 1), "same"),
         ((6, 5), (3, 2), (2, 1), "same"), ((5, 7), (2, 3), (2, 2), "valid"),
         ((4, 4), (5, 5), (1, 1), "same"), ((7, 6), (3, 3), (3, 2), "same")]


def awkward_images(spatial, dtype, channels=3):
    """Ties (rounded values, 0.0 beside -0.0), NaN, infinities."""
    x = np.round(rng.standard_normal((2, *spatial, channels)) * 2) / 2
    x[x == 0] = rng.choice([0.0, -0.0], np.count_nonzero(x == 0))
    flat = x.reshape(-1)
    flat[rng.choice(flat.size, 4, replace=False)] = [np.nan, np.inf, -np.inf, np.nan]
    x[1, :, :, 2] = -np.inf  # a channel of -inf: windows tie with their padding
    return x.astype(dtype)


def reference_winners(x, geometry):
    """(n, i, j, c) -> the padded position of the window's first largest element (argmax)."""
    padded = pad_spatial(x, geometry, -np.inf)
    patches = extract_patches(padded, window_geometry(padded.shape[1:3], geometry.window,
                                                      geometry.strides, "valid", "test"))
    winners = {}
    for n, i, j, c in itertools.product(*map(range, patches.shape[:3]), range(x.shape[3])):
        tap = int(np.argmax(patches[n, i, j, :, c]))
        winners[n, i, j, c] = (i * geometry.strides[0] + tap // geometry.window[1],
                               j * geometry.strides[1] + tap % geometry.window[1])
    return winners


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("spatial,window,strides,padding", CASES)
def test_max_pool_gradient_maps_match_loops(spatial, window, strides, padding, dtype):
    x = awkward_images(spatial, dtype)
    geometry = window_geometry(spatial, window, strides, padding, "test")
    options = dict(pool_size=window, strides=strides, padding=padding,
                   data_format="channels_last")
    g = rng.standard_normal((*x.shape[:1], *geometry.output_size, x.shape[3])).astype(dtype)
    g[0, 0, 0, 0] = -0.0
    v = rng.standard_normal(x.shape).astype(dtype)
    (top, _), (left, _) = geometry.pads
    scattered = np.zeros(x.shape, dtype)
    gathered = np.zeros(g.shape, dtype)
    for (n, i, j, c), (row, column) in reference_winners(x, geometry).items():
        inside = 0 <= row - top < x.shape[1] and 0 <= column - left < x.shape[2]
        if inside:
            scattered[n, row - top, column - left, c] += g[n, i, j, c]
            gathered[n, i, j, c] = v[n, row - top, column - left, c]
    with np.errstate(invalid="ignore"):
        result = pooling._max_pool2d_scatter(g, x, **options)
    assert result.dtype == dtype
    np.testing.assert_allclose(result, scattered, rtol=1e-6, atol=0)
    assert not np.signbit(result[result == 0]).any()  # sums start at +0.0, as NumPy's adds
    gathered_result = pooling._max_pool2d_gather(v, x, **options)
    assert gathered_result.dtype == dtype and not np.shares_memory(gathered_result, v)
    np.testing.assert_array_equal(gathered_result, gathered)


@pytest.mark.parametrize("spatial,window,strides,padding", CASES)
def test_fold_adds_each_tap_as_a_padded_image_would(spatial, window, strides, padding):
    geometry = window_geometry(spatial, window, strides, padding, "test")
    taps = window[0] * window[1]
    patches = rng.standard_normal((2, *geometry.output_size, taps, 3))
    padded = np.zeros((2, *geometry.padded_size, 3))
    for index, tap in enumerate(geometry.taps):  # the order of the adds, pixel by pixel
        padded[tap] += patches[:, :, :, index, :]
    (top, _), (left, _) = geometry.pads
    expected = padded[:, top:top + spatial[0], left:left + spatial[1], :]
    folded = fold_patches(patches, geometry)
    assert folded.flags.c_contiguous
    np.testing.assert_array_equal(folded, expected)
