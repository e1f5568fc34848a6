"""NumPy arrays made before a traced `if` or loop, held read-only while its body is traced.

A traced statement becomes one graph op, its body traced once. Its variables come in as traced
values, so a write into one of them is traced. A NumPy array it reaches another way (a name it
only reads, `helper(a)` writing into its argument, `o.a += 1.0`, `a.__iadd__(v)`,
`np.copyto(a, ...)`) is concrete: NumPy would make the change once, while tracing, and never
again as the graph runs, or make it where the graph takes the other branch. NumPy changes it
on each iteration, or only on the path taken.

`held_read_only` finds the arrays the statement's functions reach: what their closures and the
globals they name hold, through lists, tuples, dicts, sets, the user's objects and functions;
it marks them read-only while the body is traced, and restores them after. A write into one
fails in NumPy ("read-only"), and becomes an error that names the user's line and says what to
do.
"""
from __future__ import annotations

import contextlib
import types

import numpy as np

from ..user_frames import PACKAGE_DIRS, library_frame
from .control_scope import ControlFlowError

# How deep into containers and objects, and how many items of one, the search goes: a write
# into an array held deeper is not found (as one through a name the body does not read).
_DEPTH = 6
_ITEMS = 1000
_CONTAINERS = (list, tuple, set, frozenset)

_MESSAGE = (
    "{site}: NumPy refused to write into a read-only array ({numpy}). This runs inside a "
    "{statement} on a traced value ({where}), which autotrace traces once as a graph op; while "
    "it does, it holds the NumPy arrays made before it read-only, because a change to one "
    "there would be made once, while tracing, not on each iteration or only on the path "
    "taken. Make the array traced where it is made (np.zeros_like(x, shape=...), x a traced "
    "value), or give the statement the new value as a variable (a = a + v, not a helper "
    "changing `a` in place)")


def _reached(functions) -> list:
    """The writeable NumPy arrays that `functions` reach (see the module docstring)."""
    seen, found = set(), []

    def visit(value, depth):
        if depth > _DEPTH or id(value) in seen:
            return
        seen.add(id(value))
        if type(value) is np.ndarray:
            if value.flags.writeable:
                found.append(value)
        elif isinstance(value, _CONTAINERS):
            for item in list(value)[:_ITEMS]:
                visit(item, depth + 1)
        elif isinstance(value, dict):
            for item in list(value.values())[:_ITEMS]:
                visit(item, depth + 1)
        elif isinstance(value, types.FunctionType):
            if value.__code__.co_filename.startswith(PACKAGE_DIRS):
                return
            for cell in value.__closure__ or ():
                with contextlib.suppress(ValueError):  # an empty cell
                    visit(cell.cell_contents, depth + 1)
            for name in value.__code__.co_names:
                item = value.__globals__.get(name)
                if isinstance(item, (np.ndarray, *_CONTAINERS, dict)):
                    visit(item, depth + 1)
        elif _users_object(value):
            for item in list(vars(value).values())[:_ITEMS]:
                visit(item, depth + 1)

    for function in functions:
        visit(function, 0)
    return found


def _users_object(value) -> bool:
    """Whether `value` is an object of a class of the user's, with a __dict__."""
    kind = type(value)
    module = getattr(kind, "__module__", "") or ""
    return hasattr(value, "__dict__") and not isinstance(value, (type, types.ModuleType)) and \
        not module.split(".")[0] in ("autotrace", "numpy", "builtins")


def _base_depth(array: np.ndarray) -> int:
    depth = 0
    while isinstance(array.base, np.ndarray):
        array, depth = array.base, depth + 1
    return depth


@contextlib.contextmanager
def held_read_only(functions, where: str, statement: str):
    """Hold the NumPy arrays `functions` reach read-only while the `statement` (on a traced
    value, at `where`) is traced; a write into one is an error naming the user's line."""
    arrays = _reached(functions)
    for array in arrays:
        array.flags.writeable = False
    try:
        yield
    except ValueError as error:
        if not arrays or "read-only" not in str(error):
            raise
        raise ControlFlowError(_MESSAGE.format(
            site=_user_site(error.__traceback__), numpy=error, statement=statement,
            where=where)) from error
    finally:
        # a base first: NumPy lets a view be writeable again only once its base is
        for array in sorted(arrays, key=_base_depth):
            array.flags.writeable = True


def _user_site(traceback) -> str:
    """`file:line` of the innermost frame of `traceback` outside autotrace and NumPy."""
    site = "<unknown>"
    while traceback is not None:
        if not library_frame(traceback.tb_frame):
            site = f"{traceback.tb_frame.f_code.co_filename}:{traceback.tb_lineno}"
        traceback = traceback.tb_next
    return site
