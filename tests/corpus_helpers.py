"""User functions in a module of their own, called from tests/corpus.py.

The transform must follow these calls into another module and read this module's globals
(`SHIFT`, `np`, and the helpers that call each other) in this module's namespace.
"""
import numpy as np

SHIFT = 0.25


def softplus(x):
    return np.log1p(np.exp(x))


def affine(x, W, b):
    return x @ W + b


def shifted_square(x):
    return (x - SHIFT) ** 2


def smooth_abs(x, eps=1e-2):
    return np.sqrt(x * x + eps)


def normalize(x):
    centered = x - x.mean()
    return centered / np.sqrt(np.mean(centered ** 2) + 1e-3)


def mean_and_spread(x):
    mean = np.mean(x)
    spread = np.sqrt(np.mean((x - mean) ** 2))
    return mean, spread


def horner(coefficients, x):
    result = 0.0
    for c in coefficients:
        result = result * x + c
    return result


def layer(x, W, b):
    # Calls another helper of this module.
    return np.tanh(affine(x, W, b))


def repeated_sine(x, times):
    if times == 0:
        return x
    return repeated_sine(np.sin(x) + 0.5 * x, times - 1)
