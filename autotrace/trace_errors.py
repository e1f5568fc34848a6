"""What autotrace adds to an error raised while tracing: the line of the user's code that
raised it, and, where a trace with sizes left unknown (None in a Spec) needed one, whether the
user's code or autotrace's own asked for it and what to do."""
from __future__ import annotations

import ast
import linecache
import os
import traceback

import numpy as np

from autotrace import runtime
from autotrace import transforms
from autotrace.runtime import unknown_sizes
from autotrace.runtime.array_subclasses import ArraySubclassError
from autotrace.runtime.generated_source import user_site_of
from autotrace.runtime.abstract import UnknownDimensionError, UnknownSizeError, is_unknown
from autotrace.runtime.tracing.control import ControlFlowError
from autotrace.runtime.tracing.type_checks import TracerAttributeError
from autotrace.runtime.ops import UntraceableError
from autotrace.runtime.state import StateError
from autotrace.transforms.front.line_map import user_place
from autotrace.runtime.tracing.tracer import (ArgumentChangedError, TracerConversionError, is_array,
                                      map_arrays)

# Errors that a line of the user's code caused: they get that line appended.
_LOCATED_ERRORS = (UntraceableError, TracerConversionError, UnknownDimensionError,
                   UnknownSizeError, ControlFlowError, StateError, ArgumentChangedError,
                   ArraySubclassError, TracerAttributeError)
# Where a size known only when the graph runs refuses what needs it (runtime/unknown_sizes.py)
_SIZE_FILE = os.path.abspath(unknown_sizes.__file__)
_LIBRARY_DIRS = tuple(os.path.dirname(os.path.abspath(path)) + os.sep
                      for path in (np.__file__, runtime.__file__, transforms.__file__, __file__))


def _user_frame(error: BaseException):
    """The innermost frame of the error's traceback in the user's code (not in NumPy or
    autotrace), or None."""
    for frame in reversed(traceback.extract_tb(error.__traceback__)):
        if not os.path.abspath(frame.filename).startswith(_LIBRARY_DIRS):
            return frame
    return None


def _autotrace_frame(error: BaseException, skipped: str = ""):
    """The innermost frame of the error's traceback outside NumPy (and the file `skipped`),
    if it is autotrace's own (then autotrace, not the user's code, failed), else None. A
    comprehension's or lambda's frame is named by the autotrace function around it."""
    found = None
    for frame in reversed(traceback.extract_tb(error.__traceback__)):
        path = os.path.abspath(frame.filename)
        if found is None and (path.startswith(_LIBRARY_DIRS[0]) or path == skipped):
            continue
        if not path.startswith(_LIBRARY_DIRS[1:]):
            break
        found = frame
        if not frame.name.startswith("<"):
            break
    return found


def _raised_in(error: BaseException, path: str) -> bool:
    frames = traceback.extract_tb(error.__traceback__)
    return bool(frames) and os.path.abspath(frames[-1].filename) == path


def raised_by_an_op(error: BaseException) -> bool:
    """Whether the error was raised in runtime/, where the ops check their inputs (a shape or
    index rule: `matmul: shapes (2, 3) and (2, 3) do not match`)."""
    frames = traceback.extract_tb(error.__traceback__)
    return bool(frames) and os.path.abspath(frames[-1].filename).startswith(_LIBRARY_DIRS[1])


def raised_by_user_code(error: BaseException) -> bool:
    """Whether the user's own code raised the error: the innermost frame of its traceback is
    the user's, not NumPy's, autotrace's or that of code autotrace generated."""
    frames = traceback.extract_tb(error.__traceback__)
    if not frames:
        return False
    filename = frames[-1].filename
    return not (filename.startswith("<autotrace ") or
                os.path.abspath(filename).startswith(_LIBRARY_DIRS))


def user_line(error: BaseException) -> tuple[str, int, str] | None:
    """The user's line the error was raised from: (file, line number, its text stripped), or
    None. A line of a generated derivative is the user's line it was made from."""
    frame = _user_frame(error)
    if frame is None:
        return None
    place = user_place(frame.filename, frame.lineno)
    filename, line = place if place is not None else (frame.filename, frame.lineno)
    return filename, line, linecache.getline(filename, line).strip()


def located(filename: str, line: int, function: str | None = None) -> str:
    """The lines an error message ends with to name a place of the user's code: its file and
    line (for a line of a generated derivative, the user's line it was made from), the
    function's name where given, and the line's text."""
    place = user_place(filename, line)
    if place is not None:
        (filename, line), function = place, None
    where = f'\n  File "{filename}", line {line}' + (f", in {function}" if function else "")
    text = linecache.getline(filename, line).strip()
    return where + (f"\n    {text}" if text else "")


def explain_trace_error(error: Exception, args, kwargs) -> None:
    """Add to the message of an error raised while tracing: where in the user's code it was
    raised, and, for a trace with unknown sizes that asked for one, what to do."""
    if getattr(error, "_autotrace_explained", False) or len(error.args) != 1 or \
            not isinstance(error.args[0], str):
        return
    message = error.args[0]
    if isinstance(error, RecursionError):
        message += _recursion(error)
    unknown_size = isinstance(error, TypeError) and "NoneType" in message and \
        _has_unknown_sizes(args, kwargs)
    if unknown_size:
        inside = _autotrace_frame(error)
        needs = ("code that needs their size, like len(x) or x.shape[0] * 2, cannot trace"
                 if inside is None else
                 f"autotrace's own {inside.name} ({inside.filename}, line {inside.lineno}) "
                 f"needs their size, and cannot trace them")
        message += (f"\n  (traced with dimensions of unknown size, None in the Spec: {needs}; "
                    f"give them a size in the Spec)")
    asked = _autotrace_frame(error, _SIZE_FILE) if _raised_in(error, _SIZE_FILE) else None
    if asked is not None:  # an UnknownSize the user's code passed on to autotrace's
        message += (f"\n  (autotrace's own {asked.name} ({asked.filename}, line "
                    f"{asked.lineno}) asked for it)")
    # A shape or index rule of an op (`matmul: shapes (2, 3) and (2, 3) do not match`) says
    # what is wrong but not where: the user's line is added, as for autotrace's own errors.
    op_rule = isinstance(error, (ValueError, IndexError)) and raised_by_an_op(error)
    written = _traced_item_written(error)
    if written:
        message += _closure_array_written(error) or _TRACED_ITEM_WRITTEN
    if isinstance(error, _LOCATED_ERRORS) or unknown_size or op_rule or written:
        frame = getattr(error, "place", None) or _user_frame(error)  # (where it is known)
        if frame is not None:
            message += located(frame.filename, frame.lineno, frame.name)
    error.args = (message,)
    error._autotrace_explained = True


# NumPy's "setting an array element with a sequence", from `a[i] = t` where `a` is a concrete
# array the converted code cannot rebind (an object's attribute: `self.hist[1] = x.sum()`).
_TRACED_ITEM_WRITTEN = (
    " (a traced value is written into a NumPy array that is not traced: one held by an object "
    "or made outside the traced function, which NumPy cannot hold a traced value in. Write "
    "into a copy and assign it back, which the traced graph keeps as the object's state: "
    "`hist = self.hist.copy(); hist[i] = value; self.hist = hist`)")


def _traced_item_written(error: BaseException) -> bool:
    """Whether NumPy raised `error` writing a traced value into an item of a concrete array
    (it asks the value for a Python number, which a traced value has none of)."""
    return isinstance(error, ValueError) and \
        isinstance(error.__cause__, TracerConversionError) and \
        "setting an array element with a sequence" in str(error)


def _closure_array_written(error: BaseException) -> str | None:
    """What to add to NumPy's "setting an array element with a sequence" where the user's
    line writes into an item of an array of an enclosing function (`buf[i] = v` in a nested
    function, with `buf = np.zeros(3)` made around it), else None."""
    frame = None
    for tb in _tracebacks(error):
        if not os.path.abspath(tb.tb_frame.f_code.co_filename).startswith(_LIBRARY_DIRS):
            frame = tb.tb_frame
    if frame is None:
        return None
    try:
        statement = ast.parse(linecache.getline(frame.f_code.co_filename,
                                                frame.f_lineno).strip()).body[0]
    except (SyntaxError, IndexError):
        return None
    targets = getattr(statement, "targets", None) or [getattr(statement, "target", None)]
    base = targets[0]
    while isinstance(base, ast.Subscript):
        base = base.value
    if not isinstance(base, ast.Name) or base.id not in frame.f_code.co_freevars:
        return None
    name, function = base.id, frame.f_code.co_name
    return (f" (a traced value is written into {name!r}, a NumPy array of the function around "
            f"{function}, made there by NumPy and not from a traced value, which NumPy cannot "
            f"hold a traced value in. Make it from a traced value so it is traced too, where it "
            f"is made: {name} = np.zeros_like(x, shape=...) for {name} = np.zeros(...), x a "
            f"traced array; or return the value from {function} and write it there)")


def _tracebacks(error: BaseException):
    tb = error.__traceback__
    while tb is not None:
        yield tb
        tb = tb.tb_next


def explain_run_error(error: BaseException, batched: bool = False) -> None:
    """Add to an IndexError raised where a traced graph runs (an index out of range, which
    only the values tell) the user's line that made the indexing op: the traceback ends at the
    graph's line. With `batched` (autotrace.vmap's graph), say that the axes NumPy counts are
    the batch's, whose axis 0 is the examples'."""
    if not isinstance(error, IndexError) or getattr(error, "_autotrace_explained", False) or \
            len(error.args) != 1 or not isinstance(error.args[0], str):
        return
    site = user_site_of(error)
    if site is None:
        return
    message = error.args[0]
    if batched:
        message += (" (an example's index is out of range; the axes counted are the batch's, "
                    "whose axis 0 is the examples')")
    error.args = (message + located(*site),)
    error._autotrace_explained = True


def _recursion(error: RecursionError) -> str:
    """What to add to a RecursionError raised while tracing: a function of the user's that
    calls itself under a condition on a traced value never stops while tracing (a traced `if`
    traces both branches, its call too, with no value to stop on)."""
    every = traceback.extract_tb(error.__traceback__)
    if not any(frame.filename.endswith(("control_branches.py", "control_loops.py"))
               for frame in every):
        return ""  # (no traced `if` or loop among its calls)
    frames = [frame for frame in every if not frame.filename.startswith("<autotrace ")
              and not os.path.abspath(frame.filename).startswith(_LIBRARY_DIRS)]
    if not frames:
        return ""
    places = [(frame.filename, frame.lineno, frame.name) for frame in frames]
    filename, line, name = max(set(places), key=places.count)  # the recursion's own line
    return (f"\n  (while tracing: {name} calls itself, and the test that stops it is on a "
            f"traced value, where a traced `if` traces both branches, the call too, so the "
            f"recursion never stops while tracing. Recursion that stops on a traced value "
            f"cannot be converted: write it as a while loop, `while not done: ...`, which "
            f"becomes a graph loop)" + located(filename, line, name))


def _has_unknown_sizes(args, kwargs) -> bool:
    found = []
    map_arrays((args, kwargs), lambda leaf: found.append(is_array(leaf) and is_unknown(
        getattr(leaf, "aval", None))))
    return any(found)
