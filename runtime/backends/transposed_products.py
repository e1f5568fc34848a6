"""Transposed products: a matmul read only through one transpose is written in the transposed
layout, so that a reshape of it is a view, not a copy.

Attention merges its heads with `np.reshape(np.transpose(weights @ v, (0, 2, 1, 3)), (batch,
tokens, features))`, and its gradient does the same to the gradients of q, k and v. The matmul
writes a C-contiguous (batch, heads, tokens, features) array; the transpose is a view of it, and
the reshape copies it, allocating a new array on every call. A strided view of a C-contiguous
buffer in the transposed layout is as good a place for BLAS to write the product: each of its
matrices still has rows of unit stride. So, on the CPU backends:

    c:f64[8,4,64,16] = matmul a b
    d:f64[8,64,4,16] = transpose[axes=(0, 2, 1, 3)] c     ->    d:f64[8,64,4,16] =
    e:f64[8,64,64] = reshape[shape=(8, 64, 64)] d                  matmul_transposed[axes=...] a b
                                                                e:f64[8,64,64] = reshape ... d

whose code calls `transposed_product(a, b, view, swap, shape)`: np.matmul(a, b) written
through `out.transpose(view)` (view: the inverse of axes), `out` a C-contiguous array of the
transposed shape, a buffer the executor keeps where it can. Where the transpose moves the
product's rows to the last axis (`(0, 3, 1, 2)`, the gradient of the keys), it computes the
transposed product, b.swapaxes(-1, -2) @ a.swapaxes(-1, -2), whose rows are the columns wanted.

Measured on a 2-core Zen 4, one core: (8, 4, 64, 64) @ (8, 4, 64, 16) float64 takes 81 us into
a C-contiguous array and 83 into the transposed view, and the reshape's copy 13 us in a loop;
in a graph each copy is a new 256 KiB array, which the C library maps fresh from the system
(page faults). The float64 transformer block of benchmarks/models.py reshapes 4 such products
twice each: its traced gradient went from 5.8 to 5.25 ms (both in one process, alternating),
float32 from 2.58 to 2.47.

The product is BLAS's either way, its matrices in the same order: a product written through the
view is NumPy's matmul bit for bit; a transposed one agrees with it to rounding (its dot products
are summed in another order), as runtime/passes/products.py's do.

Only float32 and float64 products of two stacks of matrices (two dimensions or more) of one
dtype are rewritten, whose result is read by one transpose and nothing else (not returned), that
transpose keeping the product's rows or its columns on the last axis and being read by a
reshape (which would copy it), and no more than one of the graph's outputs viewing it (the
reshape, now a view, would share memory with another, where NumPy's copy does not). A backend
whose matmul is not NumPy's does not run this pass.
"""
from __future__ import annotations

import numpy as np

from ..abstract import AbstractArray
from ..graph import Equation, Graph, Var, readers_of
from ..primitives.batching import refuse_batching
from ..primitives.registry import (C_ORDER, Primitive, out_argument, primitives, register,
                                   viewed_inputs)

_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))


def transposed_product(a, b, view, swap, shape, out=None):
    """`out` (a new C-contiguous array of `shape` if None) holding the product of a and b
    written through `out.transpose(view)`: np.matmul(a, b) where not `swap`, else
    np.matmul(b.swapaxes(-1, -2), a.swapaxes(-1, -2)). `layout(axes)` gives view and swap
    for the product transposed by `axes`."""
    if out is None:
        out = np.empty(shape, a.dtype)
    if swap:
        a, b = b.swapaxes(-1, -2), a.swapaxes(-1, -2)
    np.matmul(a, b, out=out.transpose(view))
    return out


def layout(axes: tuple) -> tuple[tuple, bool]:
    """(view, swap) for `transposed_product` of a product transposed by `axes`, whose last
    entry is the product's last axis or the one before: the product is written through
    out.transpose(view), transposed itself (its two last axes swapped) where `swap`."""
    last = len(axes) - 1
    swap = axes[-1] != last
    if swap:
        axes = tuple(last - 1 if axis == last else last if axis == last - 1 else axis
                     for axis in axes)
    return tuple(int(axis) for axis in np.argsort(axes)), swap


def _abstract_eval(a, b, axes, **attrs):
    product = primitives["matmul"].abstract_eval(a, b)
    return AbstractArray(tuple(product.shape[axis] for axis in axes), product.dtype,
                         product.device)


def _source(args, attrs) -> str:
    view, swap = layout(attrs["axes"])
    into = f", out={out_argument(args, attrs)}" if "out" in attrs else ""
    return (f"transposed_product({args[0]}, {args[1]}, {view!r}, {swap}, "
            f"{attrs['shape']!r}{into})")


matmul_transposed = register(Primitive(
    "matmul_transposed",
    lambda a, b, axes, shape, **attrs: transposed_product(a, b, *layout(axes), shape),
    _abstract_eval, source=_source, fresh=True, takes_out=C_ORDER,
    globals=lambda attrs: {"transposed_product": transposed_product},
    batching=refuse_batching("it is made by the CPU backend's passes, after batching")))


class TransposedProducts:
    """Write each matmul read through one transpose, then reshaped, as `matmul_transposed`."""

    def run(self, graph: Graph) -> Graph:
        readers = readers_of(graph)
        returned = {id(value) for value in graph.outputs if isinstance(value, Var)}
        replaced: dict[int, Equation] = {}  # id of a matmul -> its matmul_transposed
        dropped: set[int] = set()           # ids of the transposes it replaces
        for equation in graph.equations:
            transpose = _read_through_transpose(equation, readers, returned)
            if transpose is not None and _returned_views(transpose.outputs[0], readers,
                                                         returned) < 2:
                replaced[id(equation)] = Equation(
                    matmul_transposed, equation.inputs,
                    {"axes": transpose.attrs["axes"], "shape": transpose.outputs[0].aval.shape},
                    transpose.outputs, equation.scope, equation.site)
                dropped.add(id(transpose))
        if not replaced:
            return graph
        return Graph(graph.inputs, [replaced.get(id(equation), equation)
                                    for equation in graph.equations
                                    if id(equation) not in dropped], graph.outputs)


def _returned_views(value: Var, readers: dict, returned: set) -> int:
    """How many of the graph's outputs are `value` or may view its buffer. Two or more: the
    product written transposed would make a reshape of it, a copy in NumPy, a view that
    shares memory with the other (`return np.reshape(t, ...), t`), where NumPy's results do
    not share it."""
    viewing, pending = {id(value)}, [value]
    while pending:
        viewed = pending.pop()
        for reader in readers.get(id(viewed), []):
            if reader.primitive.fresh or all(value is not viewed
                                             for value in viewed_inputs(reader)):
                continue
            for output in reader.outputs:
                if id(output) not in viewing:
                    viewing.add(id(output))
                    pending.append(output)
    return len(viewing & returned)


def _read_through_transpose(equation: Equation, readers: dict, returned: set):
    """The one transpose that reads `equation`'s product, if it is to be written transposed."""
    if equation.primitive.name != "matmul" or "out" in equation.attrs:
        return None
    a, b = (getattr(value, "aval", None) for value in equation.inputs)
    result = equation.outputs[0]
    if (a is None or b is None or a.ndim < 2 or b.ndim < 2 or a.dtype != b.dtype
            or a.dtype not in _FLOATS or id(result) in returned
            or None in result.aval.shape):
        return None
    (transpose, *others) = readers.get(id(result), [None])
    if others or transpose is None or transpose.primitive.name != "transpose":
        return None
    axes, last = transpose.attrs["axes"], result.aval.ndim - 1
    if axes[-1] not in (last, last - 1) or axes == tuple(range(last + 1)):
        return None
    reshaped = any(reader.primitive.name == "reshape"
                   for reader in readers.get(id(transpose.outputs[0]), []))
    return transpose if reshaped else None
