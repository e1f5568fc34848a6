"""Calls that unpack their arguments, `f(a, *items, k=v, **options)`, as generated code makes them.

The transforms cannot tell, before the code runs, how many values `*items` holds or which
keywords `**options` gives, so such a call becomes `apply_unpacked(f, arguments, keywords)`: the
positional arguments as one tuple (`(a,) + tuple(items)`) and the keywords as one dict
(`merged_keywords({'k': v}, options)`). Its derivative (transforms/reverse/unpacked_calls.py) asks,
when it runs, which of those values carry gradient, and runs the function again: the random
states the call can draw from, noted right before it (random_states.py), go with it.
"""
from __future__ import annotations

from ..containers import rebuild


def apply_unpacked(function, arguments: tuple, keywords: dict, states=None):
    """`function(*arguments, **keywords)`; `states`, the random states it can draw from as
    they were before it (random_states.py `random_states`), are for its derivative."""
    return function(*arguments, **keywords)


def merged_keywords(*dicts) -> dict:
    """The keywords of a call that gives `k=v` and `**options`, in order: one dict. A keyword
    given twice is an error, as in Python's own call."""
    merged = {}
    for given in dicts:
        for key, value in given.items():
            if key in merged:
                raise TypeError(f"got multiple values for keyword argument {key!r}")
            merged[key] = value
    return merged


def keywords_parts(gradient, dicts) -> tuple:
    """The gradient of `merged_keywords(*dicts)` given that of its result (a dict, or None for
    none), cut into one dict per merged dict (also the tangent of the inverse cut)."""
    gradient = gradient or {}
    return tuple(rebuild(given, ((k, gradient.get(k)) for k in given)) for given in dicts)


def keywords_tangent(tangents, dicts) -> dict:
    """The tangent of `merged_keywords(*dicts)` from the tangents of the dicts (None where a
    dict has none)."""
    merged = {}
    for tangent, given in zip(tangents, dicts):
        for key in given:
            merged[key] = None if tangent is None else tangent.get(key)
    return merged
