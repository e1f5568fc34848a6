"""np.partition and np.argpartition, traced as a sort along the axis (np.sort, np.argsort with
kind='stable').

A sorted array is a valid partition for every kth: each element at a kth position is the one
that sorting puts there, the elements before it are no larger and those after it no smaller.
So the traced np.partition equals NumPy's exactly at the kth positions, and elsewhere holds the
same elements in sorted order, where NumPy's order of them is its selection algorithm's (not a
promise of NumPy's). The traced np.argpartition is the stable argsort: indices of a valid
partition, which at the kth positions index an element equal to the one NumPy's do (the same
element where values are distinct).
"""
from __future__ import annotations

import numpy as np

from .registry import normalize_axis, reject_arguments, static, traces


def _as_array(a):
    return a if hasattr(a, "dtype") else np.asarray(a)


def _checked(a, kth, axis, kind, order, name: str):
    """`a` (flattened for axis=None) and the axis to sort along, after NumPy's checks of kth."""
    reject_arguments(f"numpy.{name}", order=order)
    a = _as_array(a)
    static(kind, f"kind of numpy.{name}")
    kth = static(kth, f"kth of numpy.{name}")
    axis = static(axis, f"axis of numpy.{name}")
    if axis is None:
        a, axis = np.reshape(a, (-1,)), 0
    axis = normalize_axis(axis, np.ndim(a), f"numpy.{name}")
    length = np.shape(a)[axis]
    np.partition(np.zeros(length), kth)  # NumPy's errors for kth: out of bounds, not ints
    return a, axis


@traces(np.partition)
def bind_partition(a, kth, axis=-1, kind="introselect", order=None):
    a, axis = _checked(a, kth, axis, kind, order, "partition")
    return np.sort(a, axis=axis)


@traces(np.argpartition)
def bind_argpartition(a, kth, axis=-1, kind="introselect", order=None):
    a, axis = _checked(a, kth, axis, kind, order, "argpartition")
    return np.argsort(a, axis=axis, kind="stable")
