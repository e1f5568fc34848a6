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
