"""The user's frame: where a warning autotrace raises should point, and the `file:line` it names.

autotrace's code lives in three folders (autotrace/, and runtime/ and transforms/, which install
inside it); the first frame outside them, walking out from the caller, is the user's.
"""
from __future__ import annotations

import linecache
import os
import sys

import numpy as np

from .generated_source import generated_site

_PARENT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# Installed, runtime/ and transforms/ are inside autotrace/; in a checkout they sit beside it.
PACKAGE_DIRS = ((_PARENT + os.sep,) if os.path.basename(_PARENT) == "autotrace" else
                tuple(os.path.join(_PARENT, name) + os.sep
                      for name in ("autotrace", "runtime", "transforms")))
# autotrace's folders and NumPy's, whose frames are no user's code.
_LIBRARIES = PACKAGE_DIRS + (os.path.dirname(os.path.abspath(np.__file__)) + os.sep,)


def _first_outside(frame):
    """(the first frame from `frame` outward that is not autotrace's, or None; frames passed)."""
    passed = 0
    while frame is not None and frame.f_code.co_filename.startswith(PACKAGE_DIRS):
        frame, passed = frame.f_back, passed + 1
    return frame, passed


def user_stacklevel() -> int:
    """The `stacklevel` for `warnings.warn`, called by the function that calls this one, that
    points at the user's line which called into autotrace."""
    return 1 + _first_outside(sys._getframe(1))[1]


def user_site() -> str:
    """`file:line` of the user's code that called into autotrace ("<unknown>" if none)."""
    frame = _first_outside(sys._getframe(1))[0]
    return "<unknown>" if frame is None else f"{frame.f_code.co_filename}:{frame.f_lineno}"


def code_site() -> tuple | None:
    """(file, line) of the code outside autotrace and NumPy that called into them, or None:
    what each traced op remembers, for the errors about it (NumPy's own Python functions,
    np.linalg's, call the ops the user's line asked for)."""
    frame = sys._getframe(1)
    while frame is not None and frame.f_code.co_filename.startswith(_LIBRARIES):
        frame = frame.f_back
    return None if frame is None else (frame.f_code.co_filename, frame.f_lineno)


def user_code_site() -> tuple | None:
    """As `code_site`, for the code that called the function that calls this one; where that
    is generated code (a derivative traced by autotrace.function), the user's line it was made
    from, as errors raised when the graph runs name it."""
    frame = sys._getframe(1)
    while frame is not None and frame.f_code.co_filename.startswith(_LIBRARIES):
        frame = frame.f_back
    if frame is None:
        return None
    site = frame.f_code.co_filename, frame.f_lineno
    return generated_site(*site) or site


def library_frame(frame) -> bool:
    """Whether `frame` runs autotrace's code or NumPy's."""
    return frame.f_code.co_filename.startswith(_LIBRARIES)


def handed_on_write() -> tuple | None:
    """Where the code outside autotrace and NumPy that called into them is a function another
    such function called (`lst[0][0] = 1.0` in g, run by `g([x])` in f): ((the line's text,
    file, line, function), (the calling line's text, its line)); None where it is no call, or
    either is code autotrace generated (no file)."""
    frame = sys._getframe(1)
    while frame is not None and library_frame(frame):
        frame = frame.f_back
    caller = None if frame is None else frame.f_back
    if caller is None or library_frame(caller) or any(
            f.f_code.co_filename.startswith("<") for f in (frame, caller)):
        return None
    texts = [linecache.getline(f.f_code.co_filename, f.f_lineno).strip()
             for f in (frame, caller)]
    if not all(texts):
        return None
    return ((texts[0], frame.f_code.co_filename, frame.f_lineno, frame.f_code.co_name),
            (texts[1], caller.f_lineno))
