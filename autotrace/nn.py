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
from autotrace.runtime.primitives.convolution import conv2d
from autotrace.runtime.primitives.pooling import avg_pool2d, max_pool2d
from autotrace.runtime.primitives.special import erf

__all__ = ["conv2d", "max_pool2d", "avg_pool2d", "relu", "sigmoid", "tanh", "softmax",
           "log_softmax", "gelu", "erf", "linear", "get_activation"]

SQRT_HALF = 0.7071067811865476  # 1 / sqrt(2)
SQRT_TWO_OVER_PI = 0.7978845608028654  # sqrt(2 / pi)


def relu(x):
    """max(x, 0), elementwise; its derivative at 0 is 0, as in TensorFlow and PyTorch.

    Example:
        >>> relu(np.array([-1.0, 2.0]))
        array([0., 2.])
    """
    return np.where(x > 0, x, 0.0)


def sigmoid(x):
    """1 / (1 + exp(-x)), elementwise, without overflow for any x: exp is only taken of -|x|.

    Example:
        >>> sigmoid(np.array([-1000.0, 0.0, 1000.0]))
        array([0. , 0.5, 1. ])
    """
    # -|x| written as a where, not -np.abs(x), so that at x = 0 the derivative follows the
    # branch taken (np.abs has derivative 0 there, which would make sigmoid's 0 too).
    decay = np.exp(np.where(x >= 0, -x, x))
    return np.where(x >= 0, 1.0 / (1.0 + decay), decay / (1.0 + decay))


def tanh(x):
    """The hyperbolic tangent, elementwise."""
    return np.tanh(x)


def linear(x):
    """x itself: the identity activation ("linear" or None in `get_activation`)."""
    return x


def softmax(x, axis=-1):
    """exp(x) / sum(exp(x)) along `axis`, computed as softmax(x - max(x)), which never overflows.

    The maximum is a constant to the gradient (softmax does not change when x is shifted).

    Example:
        >>> softmax(np.array([1000.0, 1000.0]))
        array([0.5, 0.5])
    """
    shifted = x - stop_gradient(np.max(x, axis=axis, keepdims=True))
    exponentials = np.exp(shifted)
    return exponentials / np.sum(exponentials, axis=axis, keepdims=True)


def log_softmax(x, axis=-1):
    """log(softmax(x)) along `axis`, computed as x - max(x) - log(sum(exp(x - max(x)))), which
    stays finite where softmax underflows to 0.

    Example:
        >>> log_softmax(np.array([0.0, 1000.0]))
        array([-1000.,     0.])
    """
    shifted = x - stop_gradient(np.max(x, axis=axis, keepdims=True))
    return shifted - np.log(np.sum(np.exp(shifted), axis=axis, keepdims=True))


def gelu(x, approximate=False):
    """The Gaussian error linear unit, x P(X <= x) for a standard normal X, elementwise.

    Arguments:
        x: an array.
        approximate: False for the exact x (1 + erf(x / sqrt(2))) / 2; True for the tanh
            approximation x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3))) / 2.

    Example:
        >>> gelu(np.array([-1.0, 0.0, 1.0]))
        array([-0.15865525,  0.        ,  0.84134475])
    """
    if approximate:
        return 0.5 * x * (1.0 + np.tanh(SQRT_TWO_OVER_PI * (x + 0.044715 * x ** 3)))
    return 0.5 * x * (1.0 + erf(x * SQRT_HALF))


ACTIVATIONS = {"relu": relu, "sigmoid": sigmoid, "tanh": tanh, "softmax": softmax,
               "gelu": gelu, "linear": linear}


def get_activation(activation: str | Callable | None) -> Callable:
    """The activation function named `activation`, or `activation` itself if it is callable.

    Arguments:
        activation: one of "relu", "sigmoid", "tanh", "softmax", "gelu", "linear" (any case),
            None (the same as "linear"), or a function.
    Returns:
        A function of one array.

    Example:
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
