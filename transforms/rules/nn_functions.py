"""Derivative rules of convolution, pooling and erf (runtime/primitives/convolution.py, runtime/primitives/pooling.py,
runtime/primitives/special.py; math.erf shares erf's, math.erfc their negation), both modes side
by side.

conv2d is bilinear; its two backprops are bilinear too, and each one's rule calls the other two
(the identities in runtime/primitives/convolution.py), so derivatives of any order stay closed. Max pooling
routes gradients through the first largest element of each window (`max_pool2d_scatter`), whose
transpose is `max_pool2d_gather`; which element is largest is a constant to the gradient, so
both are linear in their first argument, as are average pooling and its backprop. The arguments
that give only shapes or that choice get no gradient.
"""
import math

import numpy as np  # noqa: F401  (named in partials' expressions)

from ...runtime.primitives.convolution import (conv2d, conv2d_backprop_input,
                                              conv2d_backprop_input_of, conv2d_backprop_kernel,
                                              conv2d_backprop_kernel_of)
from ...runtime.primitives.pooling import (avg_pool2d, avg_pool2d_backprop, avg_pool2d_backprop_of,
                                           max_pool2d, max_pool2d_gather, max_pool2d_scatter)
from ...runtime.primitives.math_special import erfc
from ...runtime.primitives.special import erf
from .core import adjoint, d, tangent
from .declarations import bilinear, linear, partials

# d erf(x) / dx = 2 / sqrt(pi) exp(-x^2).
TWO_OVER_SQRT_PI = 1.1283791670955126
partials(erf, math.erf, x="d[y] * TWO_OVER_SQRT_PI * np.exp(-x * x)")
partials(math.erfc, erfc, x="-d[y] * TWO_OVER_SQRT_PI * np.exp(-x * x)")


@bilinear(conv2d)
def conv2d_rule(y, x, kernel, strides=(1, 1), padding="valid", data_format="channels_last"):
    d[x] = conv2d_backprop_input(d[y], x, kernel, strides, padding, data_format)
    d[kernel] = conv2d_backprop_kernel(d[y], x, kernel, strides, padding, data_format)


@bilinear(conv2d_backprop_input)
def conv2d_backprop_input_rule(z, g, x, kernel, strides=(1, 1), padding="valid",
                               data_format="channels_last"):
    d[g] = conv2d(d[z], kernel, strides, padding, data_format)
    d[kernel] = conv2d_backprop_kernel(g, d[z], kernel, strides, padding, data_format)


@bilinear(conv2d_backprop_kernel)
def conv2d_backprop_kernel_rule(z, g, x, kernel, strides=(1, 1), padding="valid",
                                data_format="channels_last"):
    d[g] = conv2d(x, d[z], strides, padding, data_format)
    d[x] = conv2d_backprop_input(g, x, d[z], strides, padding, data_format)


@adjoint(max_pool2d)
def max_pool2d_rule(y, x, pool_size=(2, 2), strides=None, padding="valid",
                    data_format="channels_last"):
    d[x] = max_pool2d_scatter(d[y], x, pool_size, strides, padding, data_format)


@tangent(max_pool2d)
def max_pool2d_tangent(y, x, pool_size=(2, 2), strides=None, padding="valid",
                       data_format="channels_last"):
    d[y] = max_pool2d_gather(d[x], x, pool_size, strides, padding, data_format)


@linear(max_pool2d_scatter)
def max_pool2d_scatter_rule(z, g, x, pool_size=(2, 2), strides=None, padding="valid",
                            data_format="channels_last"):
    d[g] = max_pool2d_gather(d[z], x, pool_size, strides, padding, data_format)


@linear(max_pool2d_gather)
def max_pool2d_gather_rule(z, v, x, pool_size=(2, 2), strides=None, padding="valid",
                           data_format="channels_last"):
    d[v] = max_pool2d_scatter(d[z], x, pool_size, strides, padding, data_format)


@linear(avg_pool2d)
def avg_pool2d_rule(y, x, pool_size=(2, 2), strides=None, padding="valid",
                    data_format="channels_last"):
    d[x] = avg_pool2d_backprop(d[y], x, pool_size, strides, padding, data_format)


@linear(avg_pool2d_backprop)
def avg_pool2d_backprop_rule(z, g, x, pool_size=(2, 2), strides=None, padding="valid",
                             data_format="channels_last"):
    d[g] = avg_pool2d(d[z], pool_size, strides, padding, data_format)


# The backprops as graphs call their ops, the size of x or of the kernel in its place.

@bilinear(conv2d_backprop_input_of)
def conv2d_backprop_input_of_rule(z, g, kernel, input_size, strides, padding, data_format):
    d[g] = conv2d(d[z], kernel, strides, padding, data_format)
    d[kernel] = conv2d_backprop_kernel(g, d[z], kernel, strides, padding, data_format)


@bilinear(conv2d_backprop_kernel_of)
def conv2d_backprop_kernel_of_rule(z, g, x, window, strides, padding, data_format):
    d[g] = conv2d(x, d[z], strides, padding, data_format)
    d[x] = conv2d_backprop_input(g, x, d[z], strides, padding, data_format)


@linear(avg_pool2d_backprop_of)
def avg_pool2d_backprop_of_rule(z, g, input_size, pool_size, strides, padding, data_format):
    d[g] = avg_pool2d(d[z], pool_size, strides, padding, data_format)
