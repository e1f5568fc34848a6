"""The array-API backend: graphs whose inputs are arrays of a library that follows the Python
array API standard (array_api_strict; CuPy or torch through array-api-compat) run on that
library, through NumPy's names over its namespace (runtime/array_api.py).

One backend per namespace and device (`backend_for_place`), named after them
(`array_api_strict`). What differs from the NumPy backend:
- `np` in generated code is `NumpyNames` over the namespace, so `np.power(a, b)` runs
  `pow` of that library, and a NumPy function it has no equivalent for raises ArrayApiError
  naming it, never computing a NumPy array instead.
- Constants (NumPy arrays folded while tracing) are converted to the namespace and device
  once, when the graph is compiled.
- Equations that NumPy writes as methods or subscripts (`a.T`, `a.astype(...)`, `a[0, idx]`,
  `c[index] = v`, `np.add.at`) are written as calls of `np` by the `ArrayApiSource` pass, as
  their primitives say (`Primitive.array_api_source`, `array_api_statements`), which follow
  NumPy's rules where the standard's differ (runtime/array_api_index.py).
- Arrays are not written into (no buffer reuse): the standard has no `out=`.
"""
from __future__ import annotations

import dataclasses
from functools import lru_cache

import numpy as np

from ..array_api import names_for_place
from .protocol import Backend
from ..graph import Graph
from ..ops import primitives


@lru_cache(maxsize=None)
def _respelled(primitive):
    return dataclasses.replace(primitive, source=primitive.array_api_source,
                               statements=primitive.array_api_statements)


class ArrayApiSource:
    """Equations that NumPy writes as methods or subscripts, written as calls of `np` (the
    namespace's NumPy names), and none writing into an input (`out=`); in the subgraphs of
    control ops too."""

    def run(self, graph: Graph) -> Graph:
        equations = []
        for equation in graph.equations:
            # `out` is dropped: subgraphs of control ops had their buffers reused when traced
            attrs = {key: self._subgraphs(value)
                     for key, value in equation.attrs.items() if key != "out"}
            primitive = equation.primitive
            respelled = primitive.array_api_source or primitive.array_api_statements
            if respelled and primitive is primitives.get(primitive.name):
                primitive = _respelled(primitive)
            equations.append(equation.replace(primitive=primitive, attrs=attrs))
        return Graph(graph.inputs, equations, graph.outputs)

    def _subgraphs(self, value):
        """An attribute with its subgraphs (a control op's Branches or Loop) run through."""
        if isinstance(value, Graph):
            return self.run(value)
        if dataclasses.is_dataclass(value) and not isinstance(value, type):
            changes = {field.name: self.run(getattr(value, field.name))
                       for field in dataclasses.fields(value)
                       if isinstance(getattr(value, field.name), Graph)}
            return dataclasses.replace(value, **changes) if changes else value
        return value


class ArrayApiBackend(Backend):
    device_kind = "cpu"
    lowers_scalars = False   # 0-d values stay arrays of the namespace
    writes_in_place = False  # no buffer reuse: the standard has no out=

    def __init__(self, place: str):
        self.name = place
        self.names = names_for_place(place)

    def array_module(self):
        return self.names

    def place_constant(self, value, device: str):
        if isinstance(value, (np.ndarray, np.generic)):
            return self.names.asarray(value)
        return value

    def passes(self) -> list:
        return [ArrayApiSource()]


@lru_cache(maxsize=None)
def backend_for_place(place: str) -> ArrayApiBackend:
    """The backend for arrays that runtime.array_api.place_of names `place`."""
    return ArrayApiBackend(place)

