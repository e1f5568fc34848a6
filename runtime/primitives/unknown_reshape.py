"""The shape a reshape takes where the array has a dimension of unknown size (None in a Spec).

`x.reshape(x.shape[0], -1)` under `Spec((None, 8, 8, 1))` asks for the shape `(None, -1)`:
two dimensions not known while tracing. The None is `x.shape[0]` carried through unchanged,
and then the -1 is known (64) and the reshape is `(-1, 64)`. A None is only a None, though:
it does not say which array's dimension it was read from. So it is taken for the array's own
dimension of unknown size only where nothing else in the trace could have given it:

- the array has one dimension of unknown size, and it has an origin (the input dimension its
  size comes from, runtime/abstract.py);
- every other dimension of unknown size the trace has made so far has that origin too, or is
  a dimension of another input of the function: then the graph checks, when it runs, that the
  two are the same size (a batch of images and its batch of labels are).

Anything else (a dimension of unknown size from a flattening reshape or a boolean mask; one
of another input, inside a traced branch or loop body) could be where the None came from, and
the reshape is refused with the error that says to write it with -1 and the sizes that are
known.
"""
from __future__ import annotations

import math

from ..abstract import AbstractArray, unknown_dimension_error
from .registry import bind


def unknown_reshape_shape(a, shape: tuple) -> tuple:
    """The shape for `np.reshape(a, shape)`, `a` traced with a dimension of unknown size, with
    the one unknown dimension of the result written -1 (and a None that is `a`'s own unknown
    dimension, with a -1 beside it, resolved as above)."""
    unknown = [n for n in shape if n is None or n == -1]
    if len(unknown) == 1:
        return tuple(-1 if n is None else int(n) for n in shape)
    axes = [axis for axis, n in enumerate(a.shape) if n is None]
    if len(unknown) != 2 or shape.count(None) != 1 or len(axes) != 1:
        raise unknown_dimension_error(
            f"numpy.reshape to shape {shape} (one dimension must be -1 or unknown)", a.aval)
    known_in = math.prod(n for n in a.shape if n is not None)
    known_out = math.prod(n for n in shape if n is not None and n != -1)
    if known_out == 0 or known_in % known_out:
        raise ValueError(
            f"cannot reshape array of shape {a.aval} into shape {shape}: with the None taken "
            f"as its dimension of unknown size, the other dimensions hold {known_in} "
            f"elements, which is not a multiple of {known_out}")
    _check_none_is_own_dimension(a, axes[0], shape, known_in // known_out)
    return tuple(-1 if n is None else known_in // known_out if n == -1 else int(n)
                 for n in shape)


def _check_none_is_own_dimension(a, axis: int, shape: tuple, rest: int) -> None:
    """Refuse unless the None in `shape` can only be `a.shape[axis]`; record the checks of the
    other inputs' unknown dimensions that the trace then takes to be the same size."""
    suggestion = tuple(rest if n == -1 else -1 if n is None else n for n in shape)
    refusal = unknown_dimension_error(
        f"numpy.reshape to shape {shape}: the None in it could be the size of another "
        f"dimension of unknown size than this array's, and autotrace cannot tell which (if it "
        f"is this array's, write np.reshape(x, {suggestion}): -1 where the None is, and the "
        f"sizes that are known)", a.aval)
    builder = getattr(a, "_builder", None)
    if builder is None or _origin(a.graph_var, axis) is None:
        raise refusal
    origin = _origin(a.graph_var, axis)
    root = builder.root()
    others = {}  # origin -> (a graph input with a dimension of that origin, its axis)
    for owner, var, other_axis in _unknown_dimensions(builder):
        other = _origin(var, other_axis)
        if other == origin or other in others:
            continue
        if other is None or owner is not builder or builder is not root \
                or var not in root.inputs:
            raise refusal
        others[other] = (var, other_axis)
    op = (f"numpy.reshape to shape {shape} (the None taken as the size of {a.aval}'s "
          f"dimension of unknown size; write np.reshape(x, {suggestion}) to reshape "
          f"without it)")
    for var, other_axis in others.values():
        bind("same_sizes", a, type(a)(builder, var), axes=((axis, other_axis),), op=op)


def _unknown_dimensions(builder) -> list[tuple]:
    """(builder, var, axis) for each dimension of unknown size of a value made so far in the
    trace of `builder` (runtime/tracing/tracer.py GraphBuilder) or the traces it is inside (a
    branch's: the whole function's), inputs first: where a None the traced function holds
    (`x.shape[0]`) may have come from."""
    found = []
    while builder is not None:
        variables = [*builder.inputs,
                     *(var for equation in builder.equations for var in equation.outputs)]
        found += [(builder, var, axis) for var in variables
                  if isinstance(var.aval, AbstractArray)
                  for axis, size in enumerate(var.aval.shape) if size is None]
        builder = getattr(builder, "parent", None)
    return found


def _origin(var, axis: int):
    origins = var.aval.origins
    return None if origins is None else origins[axis]
