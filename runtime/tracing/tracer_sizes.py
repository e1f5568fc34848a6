"""Sizes a traced function returns where they are known only when its graph runs.

    @autotrace.function(reduce_retracing=True)
    def f(x):
        return x.shape[0], x * 2.0       # x: Tracer<f64[?]>

The user's code reads such a size as an UnknownSize (runtime/unknown_sizes.py). Returned, it
becomes a graph output, the size of the array it was read from (`dimension_size`), given
back as a Python int as NumPy's shapes hold it (OutputStructure.python_ints), so each call
gets its own size, never a placeholder.
"""
from __future__ import annotations

from ..primitives.shape import dimension_size
from ..unknown_sizes import UnknownSize
from .trees import map_arrays


class SizeValues(dict):
    """The graph values of the sizes a trace returns, by the ids of their Vars."""

    def at(self, outputs: list) -> tuple:
        """The positions among the graph's `outputs` (Vars) of these sizes."""
        return tuple(index for index, var in enumerate(outputs) if id(var) in self)


def sizes_as_values(result) -> tuple:
    """(`result` with each UnknownSize replaced by a traced i64[] of its size, the SizeValues
    of those sizes)."""
    made = SizeValues()

    def value_of(size):
        if size.source is None:
            raise size.error("returning a size")
        value = dimension_size(size.source, size.axis)
        made[id(value.graph_var)] = value  # (kept alive: its id stays its own)
        return value
    return map_arrays(result, value_of, is_leaf=lambda leaf: isinstance(leaf, UnknownSize)), made
