"""Rule-table entries (see tests/rule_table.py) for convolution, pooling and erf, and the helpers
their rules call. Small images, odd sizes, both paddings and data formats, strides 1 and 2."""
from __future__ import annotations

import numpy as np

from autotrace.runtime.primitives.convolution import (conv2d, conv2d_backprop_input,
                                                      conv2d_backprop_input_of,
                                                      conv2d_backprop_kernel,
                                                      conv2d_backprop_kernel_of)
from autotrace.runtime.primitives.pooling import (avg_pool2d, avg_pool2d_backprop,
                                                  avg_pool2d_backprop_of, max_pool2d,
                                                  max_pool2d_gather, max_pool2d_scatter)
from autotrace.runtime.primitives.special import erf


def _normal(*shapes):
    return lambda rng: tuple(rng.standard_normal(shape) for shape in shapes)


def _distinct(shape):
    """Values at least 0.1 apart, so no window of a max pool holds a tie."""
    def make(rng):
        size = int(np.prod(shape))
        values = rng.permutation(size) * 0.3 + rng.uniform(0.0, 0.1, size) - 0.15 * size
        return values.reshape(shape)
    return make


def _with_distinct(first_shape, x_shape):
    """(a normal array, an x of distinct values): the helpers of max pooling."""
    return lambda rng: (rng.standard_normal(first_shape), _distinct(x_shape)(rng))


# (name, x shape, kernel shape, output shape, options)
_CONVOLUTIONS = [
    ("valid", (2, 5, 4, 3), (3, 2, 3, 2), (2, 3, 3, 2), {}),
    ("same-stride2", (2, 5, 6, 2), (3, 3, 2, 3), (2, 3, 3, 3), dict(strides=2, padding="same")),
    ("channels-first", (1, 2, 5, 5), (2, 3, 2, 2), (1, 2, 2, 3),
     dict(strides=(2, 1), padding="valid", data_format="channels_first")),
]
# (name, x shape, output shape, options)
_POOLS = [
    ("valid", (2, 4, 5, 2), (2, 2, 2, 2), {}),
    ("same-overlapping", (1, 5, 5, 2), (1, 3, 3, 2), dict(pool_size=3, strides=2,
                                                          padding="same")),
    ("channels-first", (1, 2, 5, 4), (1, 2, 5, 2),
     dict(pool_size=(2, 2), strides=(1, 2), padding="same", data_format="channels_first")),
]


def _pair(value) -> tuple:
    return (value, value) if isinstance(value, int) else tuple(value)


def _as_graphs_call(options: dict, x_shape: tuple, pool: bool) -> dict:
    """A call's options as its op's attributes (what a graph passes): pairs, every default
    given, and x's (height, width) as input_size."""
    data_format = options.get("data_format", "channels_last")
    spatial = x_shape[1:3] if data_format == "channels_last" else x_shape[2:4]
    attributes = dict(padding=options.get("padding", "valid"), data_format=data_format,
                      input_size=tuple(spatial))
    if pool:
        attributes["pool_size"] = _pair(options.get("pool_size", (2, 2)))
        attributes["strides"] = _pair(options.get("strides", attributes["pool_size"]))
    else:
        attributes["strides"] = _pair(options.get("strides", (1, 1)))
    return attributes


def nn_table(Entry) -> list:
    """The entries, made with the table's Entry class."""
    table = [Entry("erf", erf, _normal((3, 4))),
             Entry("erf/wide", erf, lambda rng: (rng.uniform(-4.0, 4.0, 7),))]
    for name, x, kernel, y, options in _CONVOLUTIONS:
        table += [
            Entry(f"conv2d/{name}", conv2d, _normal(x, kernel), options),
            Entry(f"helper:conv2d_backprop_input/{name}", conv2d_backprop_input,
                  _normal(y, x, kernel), options, wrt=(0, 2)),
            Entry(f"helper:conv2d_backprop_kernel/{name}", conv2d_backprop_kernel,
                  _normal(y, x, kernel), options, wrt=(0, 1)),
        ]
        attributes = _as_graphs_call(options, x, pool=False)
        input_size = attributes.pop("input_size")
        table += [  # as graphs call them: the size of x or of the kernel in its place
            Entry(f"helper:conv2d_backprop_input_of/{name}", conv2d_backprop_input_of,
                  _normal(y, kernel), {**attributes, "input_size": input_size}, wrt=(0, 1)),
            Entry(f"helper:conv2d_backprop_kernel_of/{name}", conv2d_backprop_kernel_of,
                  _normal(y, x), {**attributes, "window": tuple(kernel[:2])}, wrt=(0, 1)),
        ]
    for name, x, y, options in _POOLS:
        table += [
            Entry(f"max_pool2d/{name}", max_pool2d, lambda rng, x=x: (_distinct(x)(rng),),
                  options),
            Entry(f"helper:max_pool2d_scatter/{name}", max_pool2d_scatter,
                  _with_distinct(y, x), options, wrt=(0,)),
            Entry(f"helper:max_pool2d_gather/{name}", max_pool2d_gather,
                  _with_distinct(x, x), options, wrt=(0,)),
            Entry(f"avg_pool2d/{name}", avg_pool2d, _normal(x), options),
            Entry(f"helper:avg_pool2d_backprop/{name}", avg_pool2d_backprop,
                  _normal(y, x), options, wrt=(0,)),
            Entry(f"helper:avg_pool2d_backprop_of/{name}", avg_pool2d_backprop_of,
                  _normal(y), _as_graphs_call(options, x, pool=True), wrt=(0,)),
        ]
    return table
