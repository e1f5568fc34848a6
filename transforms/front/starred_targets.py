"""Starred assignment targets written out as indexing, which every mode follows:

    first, *middle, last = value      _items = list(value)
                                      if len(_items) < 2:
                                          raise ValueError('not enough values to unpack '
                                                           '(expected at least 2)')
                                      first = _items[0]
                                      middle = _items[1:len(_items) - 1]
                                      last = _items[len(_items) - 1]

`list(value)` reads the value once, whatever it is (an array's rows, a tuple, a generator), and
`middle` is a list, as Python makes it. A loop's starred target (`for a, *rest in pairs`) is
left as it is, which the checks refuse.
"""
from __future__ import annotations

import gast

from ..codegen.naming import Namer, names_in
from ..codegen.nodes import rewrite_statements, walk
from ..codegen.templates import replace


def spell_out_starred_targets(function: gast.FunctionDef) -> None:
    """Rewrite each `a, *rest = value` in `function` (nested functions too) in place."""
    namer = []  # (made for the first starred assignment: most functions have none)

    def written_out(statement):
        if not _starred(statement):
            return None
        namer[:] = namer or [Namer(names_in(function))]
        return _written_out(statement, namer[0])
    rewrite_statements(function, written_out)


def _starred(statement) -> bool:
    """An assignment to one tuple or list target with one starred name in it."""
    if not (isinstance(statement, gast.Assign) and len(statement.targets) == 1
            and isinstance(statement.targets[0], (gast.Tuple, gast.List))):
        return False
    stars = [e for e in statement.targets[0].elts if isinstance(e, gast.Starred)]
    return len(stars) == 1


def _written_out(statement: gast.Assign, namer: Namer) -> list:
    targets = statement.targets[0].elts
    star = next(i for i, e in enumerate(targets) if isinstance(e, gast.Starred))
    after = len(targets) - star - 1
    items = namer.temporary("items")
    count = len(targets) - 1
    out = replace(f"items = list(value)\n"
                  f"if len(items) < {count}:\n"
                  f"    raise ValueError('not enough values to unpack (expected at least "
                  f"{count})')", items=items, value=statement.value)
    for position, target in enumerate(targets):
        if position < star:
            index = f"items[{position}]"
        elif position == star:
            target = target.value
            index = f"items[{star}:len(items) - {after}]" if after else f"items[{star}:]"
        else:
            index = f"items[len(items) - {len(targets) - position}]"
        out += replace(f"target = {index}", target=target, items=items)
    for new in out:
        for node in walk(new):
            if "lineno" in getattr(node, "_attributes", ()) and \
                    getattr(node, "lineno", None) is None:
                gast.copy_location(node, statement)
    return out
