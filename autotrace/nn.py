"""Neural-network building blocks: convolution, pooling and activation functions.

conv2d, max_pool2d and avg_pool2d are array functions of autotrace's runtime with derivative
rules of their own (one op each in a traced graph); erf too. The activations are plain NumPy code
that `autotrace.grad` and `autotrace.forward` differentiate from its source, like a user's.

    import autotrace as at
    y = at.nn.relu(at.nn.conv2d(images, kernel, padding="same"))
    probabilities = at.nn.softmax(logits)
"""
from __future__ import annotations

from typing import Callable

import numpy as np

from autotrace.custom import stop_gradient
from autotrace.runtime.devices import array_module
from autotrace.runtime.primitives.convolution import conv2d
from autotrace.runtime.primitives.pooling import avg_pool2d, max_pool2d
from autotrace.runtime.primitives.special import erf

__all__ = ["conv2d", "max_pool2d", "avg_pool2d", "relu", "leaky_relu", "elu", "softplus",
           "sigmoid", "silu", "swish", "tanh", "softmax", "log_softmax", "logsumexp", "gelu",
           "erf", "linear", "one_hot", "get_activation"]
__dir__ = __all__.copy  # what dir(module) lists (sorted): the public names, not imports


SQRT_HALF = 0.7071067811865476  # 1 / sqrt(2)
SQRT_TWO_OVER_PI = 0.7978845608028654  # sqrt(2 / pi)


def relu(x):
    """max(x, 0), elementwise; its derivative at 0 is 0, as in TensorFlow and PyTorch.

    Examples:
        >>> relu(np.array([-1.0, 2.0]))
        array([0., 2.])
    """
    return np.where(x > 0, x, 0.0)


def leaky_relu(x, negative_slope=0.2):
    """x where x > 0, negative_slope * x elsewhere (Keras's and TensorFlow's default slope, 0.2).

    Examples:
        >>> leaky_relu(np.array([-1.0, 2.0]))
        array([-0.2,  2. ])
    """
    return np.where(x > 0, x, negative_slope * x)


def elu(x, alpha=1.0):
    """The exponential linear unit: x where x > 0, alpha * (exp(x) - 1) elsewhere.

    Examples:
        >>> elu(np.array([-1.0, 2.0]))
        array([-0.63212056,  2.        ])
    """
    # exp of the negative part only, so that a large positive x does not overflow.
    return np.where(x > 0, x, alpha * np.expm1(np.where(x > 0, 0.0, x)))


def softplus(x):
    """log(1 + exp(x)), elementwise, computed as max(x, 0) + log(1 + exp(-|x|)), which does not
    overflow for any x.

    Examples:
        >>> softplus(np.array([-1000.0, 0.0, 1000.0])).tolist()
        [0.0, 0.6931471805599453, 1000.0]
    """
    # max(x, 0) and -|x| as wheres on one condition, so that at x = 0 the derivative follows
    # one branch (1/2, as sigmoid(0)) instead of np.maximum's and np.abs's tie rules.
    positive = x >= 0
    return np.where(positive, x, 0.0) + np.log1p(np.exp(np.where(positive, -x, x)))


def sigmoid(x):
    """1 / (1 + exp(-x)), elementwise, without overflow for any x: exp is only taken of -|x|.

    Examples:
        >>> sigmoid(np.array([-1000.0, 0.0, 1000.0]))
        array([0. , 0.5, 1. ])
    """
    # -|x| written as a where, not -np.abs(x), so that at x = 0 the derivative follows the
    # branch taken (np.abs has derivative 0 there, which would make sigmoid's 0 too).
    decay = np.exp(np.where(x >= 0, -x, x))
    return np.where(x >= 0, 1.0 / (1.0 + decay), decay / (1.0 + decay))


def silu(x):
    """x * sigmoid(x), the sigmoid linear unit (also called swish).

    Examples:
        >>> silu(np.array([0.0, 1000.0]))
        array([   0., 1000.])
    """
    return x * sigmoid(x)


swish = silu


def tanh(x):
    """The hyperbolic tangent, elementwise.

    Examples:
        >>> tanh(np.array([0.0, 1.0]))
        array([0.        , 0.76159416])
    """
    return np.tanh(x)


def linear(x):
    """x itself: the identity activation ("linear" or None in `get_activation`).

    Examples:
        >>> linear(np.array([-1.0, 2.0]))
        array([-1.,  2.])
    """
    return x


def softmax(x, axis=-1):
    """exp(x) / sum(exp(x)) along `axis`, computed as softmax(x - max(x)), which never overflows.

    The maximum is a constant to the gradient (softmax does not change when x is shifted).

    Examples:
        >>> softmax(np.array([1000.0, 1000.0]))
        array([0.5, 0.5])
    """
    shifted = x - stop_gradient(np.max(x, axis=axis, keepdims=True))
    exponentials = np.exp(shifted)
    return exponentials / np.sum(exponentials, axis=axis, keepdims=True)


def log_softmax(x, axis=-1):
    """log(softmax(x)) along `axis`, computed as x - max(x) - log(sum(exp(x - max(x)))), which
    stays finite where softmax underflows to 0.

    Examples:
        >>> log_softmax(np.array([0.0, 1000.0]))
        array([-1000.,     0.])
    """
    shifted = x - stop_gradient(np.max(x, axis=axis, keepdims=True))
    return shifted - np.log(np.sum(np.exp(shifted), axis=axis, keepdims=True))


def logsumexp(x, axis=None, keepdims=False):
    """log(sum(exp(x))) over `axis` (every element for None), computed as m + log(sum(exp(x - m)))
    with m the maximum, which neither overflows nor underflows to -inf.

    Arguments:
        x: an array.
        axis: an axis, a tuple of axes, or None for all of them.
        keepdims: keep the reduced axes with size 1.

    Examples:
        >>> float(logsumexp(np.array([1000.0, 1000.0])))
        1000.6931471805599
    """
    largest = np.max(x, axis=axis, keepdims=True)
    # An all -inf slice would give -inf - -inf = NaN: shift it by 0 instead (its result is -inf).
    largest = stop_gradient(np.where(np.isfinite(largest), largest, 0.0))
    result = largest + np.log(np.sum(np.exp(x - largest), axis=axis, keepdims=True))
    return result if keepdims else np.squeeze(result, axis=axis)


def one_hot(indices, num_classes, axis=-1, dtype=np.float32):
    """Rows of zeros with a one at each index (Keras's `ops.one_hot`).

    Arguments:
        indices: an integer array of any shape.
        num_classes: the length of each one-hot row.
        axis: where the new axis of classes goes (default last).
        dtype: the result's dtype (default float32, as in Keras and TensorFlow).

    Returns:
        An array of shape indices.shape with num_classes inserted at `axis`; an index outside
        [0, num_classes) gives a row of zeros (as in TensorFlow).

    Examples:
        >>> one_hot(np.array([2, 0]), 3)
        array([[0., 0., 1.],
               [1., 0., 0.]], dtype=float32)
    """
    indices = indices if hasattr(indices, "dtype") else np.asarray(indices)
    if not np.issubdtype(indices.dtype, np.integer):
        raise TypeError(f"one_hot: indices must be integers, got dtype {indices.dtype}")
    classes = array_module(indices).arange(num_classes)
    encoded = (np.expand_dims(indices, -1) == classes).astype(dtype)
    return encoded if axis == -1 else np.moveaxis(encoded, -1, axis)


def gelu(x, approximate=False):
    """The Gaussian error linear unit, x P(X <= x) for a standard normal X, elementwise.

    Arguments:
        x: an array.
        approximate: False for the exact x (1 + erf(x / sqrt(2))) / 2; True for the tanh
            approximation x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3))) / 2.

    Examples:
        >>> gelu(np.array([-1.0, 0.0, 1.0]))
        array([-0.15865525,  0.        ,  0.84134475])
    """
    if approximate:
        return 0.5 * x * (1.0 + np.tanh(SQRT_TWO_OVER_PI * (x + 0.044715 * x ** 3)))
    return 0.5 * x * (1.0 + erf(x * SQRT_HALF))


ACTIVATIONS = {"relu": relu, "sigmoid": sigmoid, "tanh": tanh, "softmax": softmax,
               "gelu": gelu, "linear": linear, "leaky_relu": leaky_relu, "elu": elu,
               "softplus": softplus, "silu": silu, "swish": swish}


def get_activation(activation: str | Callable | None) -> Callable:
    """The activation function named `activation`, or `activation` itself if it is callable.

    Arguments:
        activation: one of "relu", "sigmoid", "tanh", "softmax", "gelu", "linear",
            "leaky_relu", "elu", "softplus", "silu", "swish" (any case), None (the same as
            "linear"), or a function.

    Returns:
        A function of one array.

    Examples:
        >>> get_activation("relu") is relu, get_activation(None) is linear
        (True, True)
    """
    if activation is None:
        return linear
    if callable(activation):
        return activation
    if isinstance(activation, str) and activation.lower() in ACTIVATIONS:
        return ACTIVATIONS[activation.lower()]
    names = ", ".join(repr(name) for name in ACTIVATIONS)
    raise ValueError(f"get_activation: activation must be one of {names}, None or a "
                     f"function, got {activation!r}")
