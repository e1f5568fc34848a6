"""`*items` and `**options` written out as values: what A-normal form makes of a call or a
display that unpacks a value whose length or keys are known only when the code runs.

    f(a, *items, k=v, **options)  ->  apply_unpacked(f, (a,) + tuple(items),
                                                     merged_keywords({'k': v}, options))
    [a, *items]                   ->  [a] + list(items)

The concatenations and `tuple(...)` have derivatives of their own; apply_unpacked's are in
transforms/reverse/unpacked_calls.py.
"""
from __future__ import annotations

import gast

from ..codegen.templates import name


def unpacks(args: list, keywords: list) -> bool:
    """Whether a call with these arguments unpacks a value (`*items`, `**options`)."""
    return any(isinstance(a, gast.Starred) for a in args) or any(
        k.arg is None for k in keywords)


def joined(elements: list, kind: str):
    """The display `elements` (`kind` "tuple" or "list") with each `*items` in it as a
    concatenation: `(a,) + tuple(items) + (b,)`."""
    display = gast.Tuple if kind == "tuple" else gast.List
    parts, written_out = [], []
    for element in elements:
        if isinstance(element, gast.Starred):
            if written_out:
                parts.append(display(elts=written_out, ctx=gast.Load()))
                written_out = []
            parts.append(gast.Call(func=name(kind), args=[element.value], keywords=[]))
        else:
            written_out.append(element)
    if written_out or not parts:
        parts.append(display(elts=written_out, ctx=gast.Load()))
    expression = parts[0]
    for part in parts[1:]:
        expression = gast.BinOp(left=expression, op=gast.Add(), right=part)
    return expression


def keywords_value(keywords: list, merge: str):
    """The keywords of a call as one dict: `{'k': v}`, or with `**options` among them,
    `merge({'k': v}, options)` (merge: the name bound to merged_keywords)."""
    parts, written_out = [], ([], [])
    for keyword in keywords:
        if keyword.arg is None:
            if written_out[0]:
                parts.append(gast.Dict(keys=written_out[0], values=written_out[1]))
                written_out = ([], [])
            parts.append(keyword.value)
        else:
            written_out[0].append(gast.Constant(value=keyword.arg, kind=None))
            written_out[1].append(keyword.value)
    if written_out[0]:
        parts.append(gast.Dict(keys=written_out[0], values=written_out[1]))
    if len(parts) == 1 and isinstance(parts[0], gast.Dict):
        return parts[0]
    return gast.Call(func=name(merge), args=parts, keywords=[])
