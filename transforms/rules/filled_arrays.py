"""Derivative rules of the functions that fill a new array from values: full, full_like,
linspace and arange, both modes side by side.

Their values are differentiable, the rest (shapes, counts, dtypes) is not:
- np.full(shape, v) and np.full_like(a, v) are v broadcast: v gets the gradient summed back
  to its shape; `a` gives only its shape and dtype, and gets none.
- np.linspace(start, stop, num) is y = start + t * (stop - start), with t = i / (num - 1)
  (i / num without the endpoint): linear in start and stop together, its tangent is the
  linspace of their tangents. retstep=True, which returns the step too, has no rule.
- np.arange(start, stop, step) is y_i = start + i * step; its length is a step function of
  the arguments, whose derivative is 0, so stop gets no gradient, nor does the single
  argument of np.arange(stop), for y_i = i.

An integer result carries no gradient and has a zero tangent (unbroadcast gives the zeros);
a floating one keeps its dtype: a float32 fill value has float32 tangents.
"""
import numpy as np

from ...runtime.derivatives.adjoint_ops import (arange_positions, arange_start_weight,
                                                broadcast_like, linspace_samples,
                                                linspace_weights, unbroadcast)
from ...runtime.derivatives.real_only import refuse_real_part
from ...runtime.derivatives.structure import cast_like
from .core import adjoint, constant, d, tangent

constant(linspace_samples, linspace_weights, arange_start_weight, arange_positions)


@adjoint(np.full)
def full_rule(y, shape, fill_value, dtype=None, order="C", *, device=None, like=None):
    refuse_real_part(fill_value, y, "numpy.full")
    g = unbroadcast(d[y], y)  # zeros for an integer result
    d[fill_value] = unbroadcast(g, fill_value)


@tangent(np.full)
def full_tangent(y, shape, fill_value, dtype=None, order="C", *, device=None, like=None):
    # cast_like copies: the result is a new array, which may be written into.
    d[y] = unbroadcast(cast_like(broadcast_like(d[fill_value], y), y), y)


@adjoint(np.full_like)
def full_like_rule(y, a, fill_value, dtype=None, order="K", subok=True, shape=None, *,
                   device=None):
    refuse_real_part(fill_value, y, "numpy.full_like")
    g = unbroadcast(d[y], y)  # zeros for an integer result
    d[fill_value] = unbroadcast(g, fill_value)


@tangent(np.full_like)
def full_like_tangent(y, a, fill_value, dtype=None, order="K", subok=True, shape=None, *,
                      device=None):
    d[y] = unbroadcast(cast_like(broadcast_like(d[fill_value], y), y), y)


@adjoint(np.linspace)
def linspace_rule(y, start, stop, num=50, endpoint=True, retstep=False, dtype=None, axis=0, *,
                  device=None):
    samples = linspace_samples(y, retstep)
    t = linspace_weights(samples, num, endpoint, axis)
    g = unbroadcast(d[y], samples)  # zeros for an integer result
    d[start] = unbroadcast(np.sum(g * (1.0 - t), axis=axis), start)
    d[stop] = unbroadcast(np.sum(g * t, axis=axis), stop)


@tangent(np.linspace)
def linspace_tangent(y, start, stop, num=50, endpoint=True, retstep=False, dtype=None, axis=0,
                     *, device=None):
    samples = linspace_samples(y, retstep)
    d[y] = unbroadcast(cast_like(np.linspace(d[start], d[stop], num, endpoint, axis=axis),
                                 samples), samples)


@adjoint(np.arange)
def arange_rule(y, start, stop=None, step=None, dtype=None, *, device=None, like=None):
    g = unbroadcast(d[y], y)  # zeros for an integer result
    d[start] = unbroadcast(np.sum(g) * arange_start_weight(stop), start)
    d[step] = unbroadcast(np.sum(g * arange_positions(y)), step)


@tangent(np.arange)
def arange_tangent(y, start, stop=None, step=None, dtype=None, *, device=None, like=None):
    d[y] = unbroadcast(cast_like(d[start] * arange_start_weight(stop)
                                 + d[step] * arange_positions(y), y), y)
