"""The functions whose generated source tests/test_source.py compares with golden text.

The goldens quote line numbers of this file (`# Grad of line 21: ...`): change it only
together with them, and add new functions at the end.
"""
import numpy as np


def straight_line(x, y):
    z = x * y + np.sin(x)
    return np.sum(z * z)


def branch(x):
    if np.sum(x) > 0:
        y = x * 2.0
    else:
        y = np.exp(x)
    return np.sum(y)


def loop(x, n):
    for i in range(n):
        x = np.sin(x) * x
    return np.sum(x)


def while_loop(x):
    s = 0.0
    while s < 10.0:
        s = s + np.sum(x * x)
        x = x * 1.5
    return s


def scale_by_cosine(a, b):
    return a * np.cos(b)


def calls_user_function(x, y):
    z = scale_by_cosine(x, y)
    return np.sum(z)


def fill_from_dot(x):
    v = np.ones(3)
    for i in range(3):
        v[i] = np.sum(v * x)
    return np.sum(v)


def slices(x):
    a = x[1:3, ::2]
    b = x[..., None]
    c = x[:, 0]
    return np.sum(a) + np.sum(b * 2.0) + np.sum(c * c)


import autotrace  # noqa: E402 - here, so the lines of the functions above stay as quoted


def name_scopes(x, w):
    with autotrace.name_scope("encoder"):
        with autotrace.name_scope("layer1"):
            h = np.tanh(x * w)
        if np.sum(h) > 0:
            h = h * h
    return np.sum(h)
