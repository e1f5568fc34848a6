"""np.select, np.interp and np.piecewise written as the ops they compute.

Each function here is both the binding that traces the NumPy function (autotrace.function,
vmap) and the Python version that the source transforms differentiate in its place
(transforms/front/python_versions.py), so its derivatives, in every mode and to any order, are
those of the ops it calls, and no rule is written for it.

np.select is np.where nested from the last condition to the first, in the dtype NumPy's select
gives. np.interp is NumPy's own computation: the segment [xp[j], xp[j + 1]] each x falls in
(found by np.searchsorted, an integer: no gradient), fp[j] + slope * (x - xp[j]) with the
segment's slope, fp[-1] at xp[-1], left and right outside; for a period, x and xp taken modulo
it, xp sorted and extended by one point on each side, as NumPy's wrapper does. Its gradient in
x is the slope (0 outside), in fp the linear weights and in xp the slope's. np.piecewise is
NumPy's loop: each function called on the values of x its condition selects (x[condition]),
written into zeros where it holds (a later condition over an earlier), so the functions given,
the user's code, are differentiated as any function called there. Selected by a traced mask,
those values are as many as it holds, which differs between the examples of autotrace.vmap:
it refuses to batch such a selection.
"""
from __future__ import annotations

import numpy as np

from .registry import traces


def _empty_like(value):
    """What NumPy's type promotion reads of `value`: a Python number as it is, else an empty
    array of its dtype (a list's, as NumPy makes an array of it)."""
    if isinstance(value, (bool, int, float, complex)):
        return value
    dtype = value.dtype if hasattr(value, "dtype") else np.asarray(value).dtype
    return np.zeros(0, dtype)


def select_dtype(choicelist, default):
    """The dtype of np.select(condlist, choicelist, default), found by NumPy's select itself
    on empty arrays of the choices' dtypes."""
    empty = [_empty_like(choice) for choice in choicelist]
    return np.select([np.zeros(0, bool)] * len(empty), empty, _empty_like(default)).dtype


def check_conditions(condlist, choicelist) -> None:
    """NumPy's errors for the conditions of np.select."""
    if len(condlist) != len(choicelist):
        raise ValueError("list of cases must be same length as list of conditions")
    if len(condlist) == 0:
        raise ValueError("select with an empty condition list is not possible")
    for index, condition in enumerate(condlist):
        if np.result_type(condition) != np.bool_:
            raise TypeError(f"invalid entry {index} in condlist: should be boolean ndarray")


@traces(np.select)
def select(condlist, choicelist, default=0):
    """np.select: the first choice whose condition holds, else default."""
    check_conditions(condlist, choicelist)
    dtype = select_dtype(choicelist, default)
    result = default
    for index in range(len(condlist) - 1, -1, -1):
        result = np.where(condlist[index], choicelist[index], result)
    return np.astype(result, dtype, copy=False)


def as_array(value, dtype):
    """`value` as an array of `dtype` (a traced value, whose np.asarray is refused, too)."""
    return np.astype(value if hasattr(value, "dtype") else np.asarray(value), dtype, copy=False)


def check_samples(xp, fp) -> None:
    """NumPy's errors for np.interp's sample points."""
    if np.ndim(xp) != 1 or np.ndim(fp) != 1:
        raise ValueError("object too deep for desired array")
    if np.shape(xp)[0] == 0:
        raise ValueError("array of sample points is empty")
    if np.shape(xp)[0] != np.shape(fp)[0]:
        raise ValueError("fp and xp are not of the same length.")


@traces(np.interp)
def interp(x, xp, fp, left=None, right=None, period=None):
    """np.interp: the piecewise linear function through the points (xp, fp), at x."""
    x, xp, fp, left, right = interp_points(x, xp, fp, left, right, period)
    j = segments(x, xp)
    # One point is no segment: its ends are that point (its value is fp[0] at it).
    following = j + 1 if np.shape(xp)[0] > 1 else j
    return pieces(x, xp, fp, left, right, at(xp, j), at(xp, following), at(fp, j),
                  at(fp, following))


def at(values, index):
    """values[index] for 1-d values, where values may be a NumPy array and index traced."""
    return np.reshape(np.take_along_axis(values, np.reshape(index, (-1,)), 0), np.shape(index))


def interp_points(x, xp, fp, left, right, period):
    """np.interp's arguments as it computes with them: arrays of float64 (fp of complex128
    where complex), and for a period x and xp taken modulo it, xp sorted and extended by one
    point on each side (then no left or right)."""
    dtype = np.complex128 if np.iscomplexobj(fp) else np.float64
    x = as_array(x, np.float64)
    xp = as_array(xp, np.float64)
    fp = as_array(fp, dtype)
    if period is not None:
        if period == 0:
            raise ValueError("period must be a non-zero value")
        period = abs(period)
        left = None
        right = None
        check_samples(xp, fp)
        x = x % period
        xp = xp % period
        order = np.argsort(xp)
        xp = at(xp, order)
        fp = at(fp, order)
        xp = np.concatenate((xp[-1:] - period, xp, xp[0:1] + period))
        fp = np.concatenate((fp[-1:], fp, fp[0:1]))
    check_samples(xp, fp)
    return x, xp, fp, left, right


def segments(x, xp):
    """The first point j of the segment [xp[j], xp[j + 1]] that holds each x (the first or the
    last segment outside them): integers, no gradient."""
    return np.clip(np.searchsorted(xp, x, side="right") - 1, 0, max(np.shape(xp)[0] - 2, 0))


def pieces(x, xp, fp, left, right, lower, upper, below, above):
    """np.interp's values, from the ends of each x's segment (lower and upper of xp, below
    and above of fp), by NumPy's arithmetic: fp[-1] at xp[-1], left and right outside."""
    first = fp[0] if left is None else left
    last = fp[-1] if right is None else right
    if np.shape(xp)[0] == 1:
        inside = np.where(x == xp[0], fp[0], below)
    else:
        # A repeated first or last knot is a segment of zero width, chosen only for the x
        # outside (whose value is left or right): its slope is 0, not inf or NaN, so that
        # neither the value nor the gradient through the unselected branch sees 0 * inf.
        width = upper - lower
        flat = width == 0
        slope = np.where(flat, 0.0, (above - below) / np.where(flat, 1.0, width))
        inside = np.where(x == xp[-1], fp[-1], slope * (x - lower) + below)
    return np.astype(np.where(x < xp[0], first, np.where(x > xp[-1], last, inside)),
                     fp.dtype, copy=False)


def is_condition_list(condlist, x) -> bool:
    """NumPy's test of whether np.piecewise's condlist lists conditions (else it is one): a
    sequence whose first item is a list or an array (a traced one of 1 or more dimensions;
    NumPy's of a 1-d array is a NumPy scalar), or any sequence for a 0-d x."""
    if np.isscalar(condlist):
        return False
    first = condlist[0]
    return isinstance(first, (list, np.ndarray)) or np.ndim(x) == 0 or (
        hasattr(first, "dtype") and not isinstance(first, np.generic) and np.ndim(first) > 0)


def piecewise_conditions(x, condlist, functions: int) -> list:
    """np.piecewise's conditions: a list of boolean arrays, one for each function (the last,
    where there is one more function, where no condition holds), with NumPy's errors."""
    if not is_condition_list(condlist, x):
        condlist = [condlist]
    conditions = [np.astype(c if hasattr(c, "dtype") else np.asarray(c), bool, copy=False)
                  for c in condlist]
    if len(conditions) == functions - 1:
        otherwise = np.logical_not(conditions[0])
        for condition in conditions[1:]:
            otherwise = np.logical_and(otherwise, np.logical_not(condition))
        conditions.append(otherwise)
    elif len(conditions) != functions:
        raise ValueError(f"with {len(conditions)} condition(s), either {len(conditions)} or "
                         f"{len(conditions) + 1} functions are expected")
    return conditions


def selects_nothing(values) -> bool:
    """Whether `values`, selected by a mask, are known to be none (NumPy then calls no
    function): traced, by a traced mask, their number is not known, and may be more."""
    size = np.shape(values)[0]
    return isinstance(size, (int, np.integer)) and size == 0


@traces(np.piecewise)
def piecewise(x, condlist, funclist, *args, **kw):
    """np.piecewise: each function of funclist (or constant) where its condition holds, a
    later condition over an earlier, zero where none holds; a function is called with the
    values of x its condition selects."""
    x = x if hasattr(x, "dtype") else np.asarray(x)
    conditions = piecewise_conditions(x, condlist, len(funclist))
    shape = np.shape(x)
    if len(shape) == 0:
        # A 0-d x is one value, which a condition selects or not: as NumPy's x[condition]
        # gives it, 1-d, to the function, and as a traced mask can select it
        x = np.reshape(x, (1,))
        conditions = [np.reshape(condition, (1,)) for condition in conditions]
    y = np.zeros_like(x)
    for index in range(len(conditions)):
        condition = conditions[index]
        function = funclist[index]
        if not callable(function):
            y[condition] = function
        else:
            values = x[condition]
            if not selects_nothing(values):
                y[condition] = function(values, *args, **kw)
    return np.reshape(y, shape)
