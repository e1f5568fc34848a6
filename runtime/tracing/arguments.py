"""Arguments of a traced function that must not change in place: a graph cannot write into
the caller's arrays (see runtime/tracing/tracer.py, `protect_arguments`).

`GraphBuilder.arguments` maps the id of each Tracer that is an array argument, or a view of
one, to (the Tracer, the parameter's name, the path in it); a write into one of them raises
ArgumentChangedError naming it.
"""
from __future__ import annotations

import numpy as np

from .trees import map_arrays


class ArgumentChangedError(TypeError):
    """A traced function changed an array argument in place, which only an eager call can do:
    the graph cannot write into the caller's array."""


def refuse_change_of_argument(tracer, operation: str) -> None:
    """Raise ArgumentChangedError if `tracer` is an array argument of the traced function (or
    stands for one in a branch or loop): `operation` (e.g. "{} += ...", `{}` for the
    argument) would change it in place."""
    known = tracer._builder.arguments.get(id(tracer))
    if known is None or known[0] is not tracer:
        return
    _, parameter, path = known
    shown = f"{parameter}{path}" if parameter.isidentifier() else "x"
    name = f"{parameter!r}{path}" if parameter.isidentifier() else f"{parameter}{path}"
    raise ArgumentChangedError(
        f"the traced function changes argument {name} in place ({operation.format(shown)}): "
        f"called eagerly, that changes the caller's array, but a traced call cannot, so the "
        f"change would be lost. Make a new array and return it instead ({shown} = {shown} + "
        f"... rather than +=, or y = {shown}.copy() and change y); arrays made inside the "
        f"function may be changed in place")


def mark_view(view, base, index) -> None:
    """Mark `view` (`base[index]`, a NumPy view when `base` is an array) as part of the array
    argument `base` stands for, if it stands for one: changing it changes the caller's array."""
    known = base._builder.arguments.get(id(base))
    if known is not None and known[0] is base and getattr(view, "_builder", None) is not None:
        view._builder.arguments[id(view)] = (view, known[1], f"{known[2]}[{_index_text(index)}]")


def _basic_index(index) -> bool:
    """Whether `array[index]` is a view in NumPy (integers, slices, ..., None)."""
    pieces = index if isinstance(index, tuple) else (index,)
    return all(piece is None or piece is Ellipsis or isinstance(piece, slice)
               or _is_integer(piece) for piece in pieces)


def is_view_index(array, index) -> bool:
    """Whether `array[index]` is a view of `array` in NumPy: a basic index, but not one
    integer for each axis (`()` of a 0-d array), which gives one element, a NumPy scalar."""
    pieces = index if isinstance(index, tuple) else (index,)
    return _basic_index(index) and not (
        len(pieces) == array.ndim and all(_is_integer(piece) for piece in pieces))


def _is_integer(piece) -> bool:
    return isinstance(piece, (int, np.integer)) and not isinstance(piece, bool)


def _index_text(index) -> str:
    """`index` as it is written inside brackets: `0, 1:3`."""
    def piece_text(piece):
        if piece is Ellipsis:
            return "..."
        if isinstance(piece, slice):
            text = ":".join("" if part is None else str(part)
                            for part in (piece.start, piece.stop, piece.step))
            return text[:-1] if piece.step is None else text
        return str(piece)
    if isinstance(index, str):
        return index
    return ", ".join(piece_text(piece) for piece in (index if isinstance(index, tuple)
                                                     else (index,)))


def inherit_arguments(builder, operands, inner) -> None:
    """Mark the inputs `inner` of a subgraph (a branch, a loop body) that stand for array
    arguments among `operands` as those arguments, so that changing them in place is refused
    there too."""
    outer_leaves, inner_leaves = [], []
    map_arrays(operands, outer_leaves.append)
    map_arrays(inner, inner_leaves.append)
    for outer, leaf in zip(outer_leaves, inner_leaves):
        if getattr(outer, "_builder", None) is not None and \
                getattr(leaf, "_builder", None) is not None:
            known = outer._builder.arguments.get(id(outer))
            if known is not None and known[0] is outer:
                builder.arguments[id(leaf)] = (leaf, *known[1:])
