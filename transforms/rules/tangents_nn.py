"""Tangent rules of convolution, pooling and erf (runtime/convolution.py, runtime/pooling.py,
runtime/special.py).

The bilinear maps are differentiated factor by factor; the maps linear in their first argument
(pooling and its helpers) are their own tangents, the window's largest element held fixed.
"""
import math

import numpy as np

from autotrace.runtime.convolution import conv2d, conv2d_backprop_input, conv2d_backprop_kernel
from autotrace.runtime.pooling import (avg_pool2d, avg_pool2d_backprop, max_pool2d,
                                       max_pool2d_gather, max_pool2d_scatter)
from autotrace.runtime.special import erf
from autotrace.transforms.rules.core import d, tangent
from autotrace.transforms.rules.nn import TWO_OVER_SQRT_PI


@tangent(erf, math.erf)
def erf_tangent(y, x):
    d[y] = d[x] * TWO_OVER_SQRT_PI * np.exp(-x * x)


@tangent(conv2d)
def conv2d_tangent(y, x, kernel, strides=(1, 1), padding="valid", data_format="channels_last"):
    d[y] = (conv2d(d[x], kernel, strides, padding, data_format)
            + conv2d(x, d[kernel], strides, padding, data_format))


@tangent(conv2d_backprop_input)
def conv2d_backprop_input_tangent(z, g, x, kernel, strides=(1, 1), padding="valid",
                                  data_format="channels_last"):
    d[z] = (conv2d_backprop_input(d[g], x, kernel, strides, padding, data_format)
            + conv2d_backprop_input(g, x, d[kernel], strides, padding, data_format))


@tangent(conv2d_backprop_kernel)
def conv2d_backprop_kernel_tangent(z, g, x, kernel, strides=(1, 1), padding="valid",
                                   data_format="channels_last"):
    d[z] = (conv2d_backprop_kernel(d[g], x, kernel, strides, padding, data_format)
            + conv2d_backprop_kernel(g, d[x], kernel, strides, padding, data_format))


@tangent(max_pool2d)
def max_pool2d_tangent(y, x, pool_size=(2, 2), strides=None, padding="valid",
                       data_format="channels_last"):
    d[y] = max_pool2d_gather(d[x], x, pool_size, strides, padding, data_format)


@tangent(max_pool2d_scatter)
def max_pool2d_scatter_tangent(z, g, x, pool_size=(2, 2), strides=None, padding="valid",
                               data_format="channels_last"):
    d[z] = max_pool2d_scatter(d[g], x, pool_size, strides, padding, data_format)


@tangent(max_pool2d_gather)
def max_pool2d_gather_tangent(z, v, x, pool_size=(2, 2), strides=None, padding="valid",
                              data_format="channels_last"):
    d[z] = max_pool2d_gather(d[v], x, pool_size, strides, padding, data_format)


@tangent(avg_pool2d)
def avg_pool2d_tangent(y, x, pool_size=(2, 2), strides=None, padding="valid",
                       data_format="channels_last"):
    d[y] = avg_pool2d(d[x], pool_size, strides, padding, data_format)


@tangent(avg_pool2d_backprop)
def avg_pool2d_backprop_tangent(z, g, x, pool_size=(2, 2), strides=None, padding="valid",
                                data_format="channels_last"):
    d[z] = avg_pool2d_backprop(d[g], x, pool_size, strides, padding, data_format)
