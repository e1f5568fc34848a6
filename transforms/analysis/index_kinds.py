"""What a subscript's index says of what `value[index]` shares with `value`, for
transforms/analysis/aliases.py's analysis.

Of an array, basic indexing (integers, slices, `...`, None) gives a view, and advanced indexing
(a list of integers or booleans, an array, a comparison's mask) a new array; of a list or a
tuple, a slice gives a new one holding the same items, and an integer one of its items; of a
dict, any key one of its values. Only where the source says the index is an advanced one is
the result taken for a new array (and only by the analysis, where it knows the value indexed is
an array): a name's index may hold a tuple of integers, which is basic.
"""
from __future__ import annotations

import gast

from .call_results import ARRAY_MAKERS, numpy_name


def slices(index) -> bool:
    """Whether the subscript `index` slices (`a:b`, alone or in a tuple), which takes a view of
    an array and a new list or tuple of a list or tuple, never one of its items."""
    parts = index.elts if isinstance(index, gast.Tuple) else [index]
    return any(isinstance(part, gast.Slice) for part in parts)


def advanced(index, name_value, arrays: set, namespace: dict) -> bool:
    """Whether the subscript `index` surely indexes an array by advanced indexing, which copies
    (NumPy's `A[[0, 2]]`, `A[A > 0]`, `A[np.array([0, 2])]`, `A[:, [0, 2]]`): one of its parts
    is a list display, a comparison, a call of a NumPy function that makes an array, or a name
    whose memories (`name_value(name)`) are all surely arrays (in `arrays`)."""
    def is_advanced(part) -> bool:
        if isinstance(part, (gast.List, gast.ListComp, gast.Compare)):
            return True
        if isinstance(part, gast.Call):
            return numpy_name(part.func, namespace) in ARRAY_MAKERS
        if isinstance(part, gast.Name):
            memories = name_value(part.id)
            return bool(memories) and memories <= arrays
        return False
    parts = index.elts if isinstance(index, gast.Tuple) else [index]
    return any(is_advanced(part) for part in parts)


def selects_nothing(index) -> bool:
    """Whether the subscript `index` surely selects no element of an array, whatever its
    length: a slice whose bounds are integers written in the source, both counted from the
    start or both from the end, with stop at or before start (`1:1`, `:0`, `3:1`, `-1:-2`;
    with a negative step, at or after it), alone or as a part of a tuple. `A[1:1] = v` then
    writes nothing into A (of a list, it inserts: only an array's index is asked)."""
    parts = index.elts if isinstance(index, gast.Tuple) else [index]
    return any(isinstance(part, gast.Slice) and _empty_slice(part) for part in parts)


def _empty_slice(part) -> bool:
    step = 1 if part.step is None else _integer(part.step)
    # (with a positive step, no start is 0: `A[:0]`)
    lower = 0 if part.lower is None and step is not None and step > 0 else _integer(part.lower)
    bounds = [lower, _integer(part.upper)]
    if None in bounds or step is None or step == 0 or (bounds[0] < 0) != (bounds[1] < 0):
        return False
    start, stop = bounds
    return stop <= start if step > 0 else stop >= start


def _integer(node):
    """The integer `node` writes (`2`, `-1`), else None."""
    negative = isinstance(node, gast.UnaryOp) and isinstance(node.op, gast.USub)
    if negative:
        node = node.operand
    if not (isinstance(node, gast.Constant) and type(node.value) is int):
        return None
    return -node.value if negative else node.value
