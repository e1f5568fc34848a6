"""NumPy arrays made before a traced `if` or loop, held read-only while its body is traced.

A traced statement becomes one graph op, its body traced once. Its variables come in as traced
values, so a write into one of them is traced. A NumPy array it reaches another way (a name it
only reads, `helper(a)` writing into its argument, `o.a += 1.0`, `a.__iadd__(v)`,
`np.copyto(a, ...)`) is concrete: NumPy would make the change once, while tracing, and never
again as the graph runs, or make it where the graph takes the other branch. NumPy changes it
on each iteration, or only on the path taken.

`held_read_only` finds the arrays the statement's functions reach: what their closures, defaults
and the globals they name hold (memory.held_values: through lists, tuples, dicts and the user's
objects), and so on through the user's functions among them; it marks them read-only while the
body is traced, and restores them after. A write into one fails in NumPy ("read-only"), and
becomes an error that names the user's line and says what to do.
"""
from __future__ import annotations

import contextlib
import types

import numpy as np

from ..primitives.memory import held_values, memory_owner
from ..user_frames import PACKAGE_DIRS, library_frame
from .control_scope import ControlFlowError

_MESSAGE = (
    "{site}: NumPy refused to write into a read-only array ({numpy}). This runs inside a "
    "{statement} on a traced value ({where}), which autotrace traces once as a graph op; while "
    "it does, it holds the NumPy arrays made before it read-only, because a change to one "
    "there would be made once, while tracing, not on each iteration or only on the path "
    "taken. Make the array traced where it is made (np.zeros_like(x, shape=...), x a traced "
    "value), or give the statement the new value as a variable (a = a + v, not a helper "
    "changing `a` in place)")


def _reached(functions) -> list:
    """The NumPy arrays that `functions` reach (see the module docstring): what their closures,
    defaults and the globals they name hold, and so for the user's functions among those."""
    roots, pending, seen = [], list(functions), set()
    while pending:
        function = pending.pop()
        if not isinstance(function, types.FunctionType) or id(function) in seen or \
                function.__code__.co_filename.startswith(PACKAGE_DIRS):
            continue
        seen.add(id(function))
        found = [cell.cell_contents for cell in function.__closure__ or () if filled(cell)]
        found += list(function.__defaults__ or ()) + list((function.__kwdefaults__ or {}).values())
        found += [function.__globals__[name] for name in function.__code__.co_names
                  if name in function.__globals__]
        pending += [value for value in found if isinstance(value, types.FunctionType)]
        roots += found
    return [value for value in held_values(roots) if type(value) is np.ndarray]


def filled(cell) -> bool:
    try:
        cell.cell_contents
    except ValueError:  # a name not yet assigned
        return False
    return True


def _bases(array: np.ndarray) -> list:
    """The arrays in `array`'s chain of bases."""
    found = []
    while isinstance(array.base, np.ndarray):
        array = array.base
        found.append(array)
    return found


@contextlib.contextmanager
def held_read_only(functions, where: str, statement: str):
    """Hold the NumPy arrays `functions` reach read-only while the `statement` (on a traced
    value, at `where`) is traced; a write into one is an error naming the user's line. An array
    NumPy could not make writeable again after (one viewing a read-only array) is left as it
    is. Views the body takes of the held arrays, where `functions` reach them after, are made
    writeable too, as NumPy's views of writeable arrays are."""
    reached = _reached(functions)
    held = [array for array in reached if array.flags.writeable and all(
        base.flags.writeable for base in _bases(array))]
    read_only = {id(array) for array in reached if not array.flags.writeable}
    for array in held:
        array.flags.writeable = False
    try:
        yield
    except ValueError as error:
        if not held or "read-only" not in str(error):
            raise
        raise ControlFlowError(_MESSAGE.format(
            site=_user_site(error.__traceback__), numpy=error, statement=statement,
            where=where)) from error
    finally:
        # a base first: NumPy lets a view be writeable again only once its base is
        for array in sorted(held, key=lambda array: len(_bases(array))):
            array.flags.writeable = True
        # views taken of a held array (NumPy made them read-only), where its bases now let
        owners = {id(memory_owner(array)) for array in held}
        for array in _reached(functions):
            if not array.flags.writeable and id(array) not in read_only and \
                    id(memory_owner(array)) in owners and \
                    all(base.flags.writeable for base in _bases(array)):
                array.flags.writeable = True


def _user_site(traceback) -> str:
    """`file:line` of the innermost frame of `traceback` outside autotrace and NumPy."""
    site = "<unknown>"
    while traceback is not None:
        if not library_frame(traceback.tb_frame):
            site = f"{traceback.tb_frame.f_code.co_filename}:{traceback.tb_lineno}"
        traceback = traceback.tb_next
    return site
