"""np.pad in each mode, forward and reverse: the derivative of what NumPy pads with, or the same
refusal in both modes.

The modes that copy the array's items, ramp to it or fill with constants are linear in the array
(and the fill values): both modes have rules. 'mean', 'maximum', 'minimum' and 'median' pad with
weighted sums of the items at the edge (the weights of an extremum or a median constant where
items do not tie), odd reflections with twice the edge less a mirrored item, and 'empty' with
values that are no function of the array: all have rules. A callable mode pads with whatever
the user's function writes: both modes refuse it alike, at the user's line.
"""
import re

import numpy as np
import pytest

import autotrace
from tests.numeric import central_difference, check_every_mode

X = np.array([0.3, -1.2, 2.0, 0.5, 0.9])
WEIGHTS = np.arange(1.0, 10.0)


def pad_edge(x):
    return np.sum(np.pad(x, 2, mode="edge") * WEIGHTS)


def pad_reflect(x):
    return np.sum(np.pad(x, (1, 3), mode="reflect") * WEIGHTS)


def pad_symmetric(x):
    return np.sum(np.pad(x, 2, mode="symmetric") * WEIGHTS)


def pad_wrap(x):
    return np.sum(np.pad(x, (3, 1), "wrap") ** 2 * WEIGHTS)


def pad_constant(x):
    return np.sum(np.pad(x, 2, constant_values=(x[0], 2.0)) ** 2 * WEIGHTS)


def pad_ramp(x):
    return np.sum(np.pad(x, 2, mode="linear_ramp", end_values=(x[1], 2.0)) ** 2 * WEIGHTS)


@pytest.mark.parametrize("f", [pad_edge, pad_reflect, pad_symmetric, pad_wrap, pad_constant,
                               pad_ramp], ids=lambda f: f.__name__)
def test_linear_modes_in_every_mode(f):
    check_every_mode(f, X.copy())


def pad_mean(x):
    return np.sum(np.pad(x, 2, mode="mean") ** 2 * WEIGHTS)


def test_the_mean_has_a_tangent():
    direction = np.array([1.0, -2.0, 0.5, 3.0, 0.7])
    expected = central_difference(pad_mean, X) @ direction
    assert autotrace.forward(pad_mean)(X, tangent=direction)[1] == pytest.approx(expected)
    assert autotrace.jvp(pad_mean, (X,), (direction,))[1] == pytest.approx(expected)


def pad_maximum(x):
    return np.sum(np.pad(x, 2, mode="maximum") * WEIGHTS)


def pad_minimum(x):
    return np.sum(np.pad(x, pad_width=2, mode="minimum", stat_length=(2, 3)) ** 2 * WEIGHTS)


def pad_median(x):
    return np.sum(np.pad(x, (1, 3), "median", stat_length=4) ** 2 * WEIGHTS)


def pad_mean_of_two(x):
    return np.sum(np.pad(x, (3, 1), "mean", stat_length=2) ** 2 * WEIGHTS)


def pad_odd_reflection(x):
    return np.sum(np.pad(x, (1, 3), "reflect", reflect_type="odd") ** 2 * WEIGHTS)


def pad_odd_symmetric(x):
    return np.sum(np.pad(x, 2, "symmetric", reflect_type="odd") ** 2 * WEIGHTS)


def pad_empty(x):
    return np.sum(np.pad(x, 2, mode="empty")[2:-2] ** 2 * WEIGHTS[:5])


@pytest.mark.parametrize("f", [pad_maximum, pad_minimum, pad_median, pad_mean_of_two,
                               pad_odd_reflection, pad_odd_symmetric, pad_empty],
                         ids=lambda f: f.__name__)
def test_weighted_modes_in_every_mode(f):
    check_every_mode(f, X.copy())


def doubled_edges(vector, width, axis, kwargs):
    vector[:width[0]] = 2.0 * vector[width[0]]
    vector[len(vector) - width[1]:] = 0.0


def pad_by_function(x):
    return np.sum(np.pad(x, 2, mode=doubled_edges) * WEIGHTS)


def test_a_callable_mode_is_refused_alike_at_the_users_line():
    line = pad_by_function.__code__.co_firstlineno + 1
    message = (f'File "{re.escape(__file__)}", line {line}: np.pad with mode=<function '
               f"doubled_edges.* has no derivative rule")
    direction = np.ones_like(X)
    with pytest.raises(NotImplementedError, match=message):
        autotrace.grad(pad_by_function)(X)
    with pytest.raises(NotImplementedError, match=message):
        autotrace.forward(pad_by_function)(X, tangent=direction)
    with pytest.raises(NotImplementedError, match=message):
        autotrace.jvp(pad_by_function, (X,), (direction,))
    with pytest.raises(NotImplementedError, match=message):
        autotrace.function(autotrace.grad(pad_by_function))(X)
    with pytest.raises(NotImplementedError, match=message):
        autotrace.function(autotrace.forward(pad_by_function))(X, tangent=direction)


def concatenated_maximum(x):
    top = np.max(x) * np.ones(2)
    return np.sum(np.concatenate([top, x, top]) * WEIGHTS)


def test_the_advice_for_a_statistic_works():
    check_every_mode(concatenated_maximum, X.copy())
