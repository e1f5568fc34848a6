"""Generated source that tracebacks, `inspect` and pdb show.

autotrace compiles the code it generates (derivatives, traced graphs, kernels) under made-up
file names such as `<autotrace df #0>`, and puts their lines in `linecache.cache`, where the
traceback module, `inspect` and pdb read them. Such an entry has no modification time (None), so
`linecache.checkcache` keeps it: there is no file on disk to compare it with.

Before Python 3.13 the interpreter prints an uncaught exception with its own printer, written in
C, which reads no linecache and shows no line of a file named `<...>`; from 3.13 it prints
through the traceback module. So on 3.10 to 3.12 the first source registered here sets hooks
(`sys.excepthook`, and `threading.excepthook` for a thread's uncaught exception) that print an
exception whose traceback passes through generated code with the traceback module, as 3.13
does, and hand every other exception to Python's own printer. A hook set by someone else
(IPython's, which reads linecache itself) is left alone.
"""
from __future__ import annotations

import linecache
import re
import sys
import threading
import traceback
import weakref

PREFIX = "<autotrace "
# The names generated code gives the value of `a and b` and of `a or b`, which it computes
# as `_and1 = a` then `if _and1: _and1 = b` (transforms/front/anf.py): a traced `if` of such
# a name joins its two sides as a traced `and` does (runtime/tracing/control_branches.py).
SHORT_CIRCUIT_NAME = re.compile(r"_(and|or)\d+$")
# The names of the values a transform introduces (transforms/codegen/naming.Namer.temporary):
# `_t3` for an operation's result, `_cond1` for a test, `_n2` for a loop's trip count, `_i1`
# for an index, `_list1`, `_dict1` for a container built, `_and1`, `_or1` as above. A user's
# code reads none of them, so a pass may inline one used once (transforms/codegen/cleanup.py),
# and a traced loop may keep one that starts as None a Python flag (runtime/tracing/
# control_loops.py).
TEMPORARY_NAME = re.compile(r"_(t|and|or|cond|list|dict|i|n)\d+")


def register_generated(filename: str, source: str, sites: dict | None = None) -> None:
    """Put `source`, compiled under `filename`, where tracebacks, inspect and pdb read it;
    `sites`: the (file, line) of the user's code that each of its lines computes, by line
    number (a traced graph's: its equations' sites), which `user_site_of` reads."""
    _drop_collected()
    lines = source.splitlines(keepends=True)
    linecache.cache[filename] = (len(source), None, lines, filename)
    if sites:
        _sites[filename] = sites
    if sys.version_info < (3, 13):
        if sys.excepthook is sys.__excepthook__:
            sys.excepthook = _print_with_generated_lines
        if threading.excepthook is threading.__excepthook__:
            threading.excepthook = _print_thread_error_with_generated_lines


def forget_with(owner, filename: str) -> None:
    """Drop `filename`'s lines once `owner` (the function compiled from them) is collected, so
    a program that makes derivatives in a loop does not fill linecache."""
    weakref.finalize(owner, _forget, filename)


# Names whose lines were to go while linecache walked its cache: dropped at the next
# registration.
_collected: list[str] = []
# The registry of the user's sites of generated lines: filename -> {line: (file, line)}.
_sites: dict[str, dict] = {}
# Of a derivative's lines, found when asked: filename -> a function of the line giving
# (file, line) or None (transforms/front/line_map.py gives one for each derivative it loads).
_site_finders: dict[str, object] = {}


def register_site_finder(filename: str, finder) -> None:
    """Let `generated_site` find the user's line of a line of generated code `filename` by
    `finder(line)`, while that code lives (`forget_with`)."""
    _site_finders[filename] = finder


def generated_site(filename: str, line: int) -> tuple | None:
    """(file, line) of the user's code that line `line` of generated code `filename` computes
    (of a derivative: the user's line it was made from), or None where that is not known."""
    sites = _sites.get(filename)
    if sites is not None and line in sites:
        return sites[line]
    finder = _site_finders.get(filename)
    return None if finder is None else finder(line)


def user_site_of(error: BaseException) -> tuple | None:
    """(file, line) of the user's code that the innermost line of generated code in `error`'s
    traceback computes (a traced graph's equation, by the line that recorded it), or None."""
    site, trace = None, error.__traceback__
    while trace is not None:
        lines = _sites.get(trace.tb_frame.f_code.co_filename)
        if lines is not None:
            site = lines.get(trace.tb_lineno, site)
        trace = trace.tb_next
    return site


def _forget(filename: str) -> None:
    """Drop `filename` from linecache now, unless a thread is inside `linecache.checkcache`,
    which reads each entry of a list of names it took before: the collector may run there
    (any allocation can start it), and an entry gone from under it is a KeyError in the
    caller's traceback or doctest. Then it goes at the next registration."""
    _sites.pop(filename, None)
    _site_finders.pop(filename, None)
    if any(_in_checkcache(frame) for frame in sys._current_frames().values()):
        _collected.append(filename)
    else:
        linecache.cache.pop(filename, None)


def _in_checkcache(frame) -> bool:
    while frame is not None:
        if frame.f_code is linecache.checkcache.__code__:
            return True
        frame = frame.f_back
    return False


def _drop_collected() -> None:
    while _collected:
        linecache.cache.pop(_collected.pop(), None)


def _print_with_generated_lines(kind, error, trace) -> None:
    """`sys.excepthook` before Python 3.13: an exception that passed through generated code is
    printed by the traceback module, which shows the generated lines."""
    if _passes_generated_code(error, trace):
        traceback.print_exception(kind, error, trace)
    else:
        sys.__excepthook__(kind, error, trace)


def _print_thread_error_with_generated_lines(arguments) -> None:
    """`threading.excepthook` before Python 3.13, as `_print_with_generated_lines`."""
    error, trace = arguments.exc_value, arguments.exc_traceback
    if sys.stderr is None or not _passes_generated_code(error, trace):
        threading.__excepthook__(arguments)
        return
    name = arguments.thread.name if arguments.thread is not None else threading.get_ident()
    print(f"Exception in thread {name}:", file=sys.stderr, flush=True)
    traceback.print_exception(arguments.exc_type, error, trace)


def _passes_generated_code(error, trace) -> bool:
    """Whether a frame of `trace`, or of an exception chained to `error`, runs generated code."""
    seen = set()
    while error is not None and id(error) not in seen:
        seen.add(id(error))
        while trace is not None:
            if trace.tb_frame.f_code.co_filename.startswith(PREFIX):
                return True
            trace = trace.tb_next
        error = error.__cause__ or (None if error.__suppress_context__ else error.__context__)
        trace = getattr(error, "__traceback__", None)
    return False
