"""Which modules are Python's standard library's, by where their files lie; and the source of
a function's code, read as `inspect` reads it, without its search through every module loaded.

A user's file named like a module of the standard library (`trace.py`, `queue.py` beside their
script) is imported under that name, so a name alone does not tell the two apart: a module is
the standard library's where it is built in or loaded from the standard library's folders
(their site-packages aside).
"""
from __future__ import annotations

import functools
import inspect
import linecache
import os
import re
import sys
import sysconfig

# Where Python's standard library lies (its site-packages aside).
STDLIB_PATHS = tuple(sorted({os.path.normcase(os.path.realpath(path)) + os.sep for path in (
    sysconfig.get_paths()["stdlib"], sysconfig.get_paths()["platstdlib"],
    sysconfig.get_paths(vars={"base": sys.base_prefix, "platbase": sys.base_exec_prefix})[
        "stdlib"])}))


def is_standard_library(module_name: str | None) -> bool:
    """Whether the module `module_name` (a function's or class's `__module__`) belongs to
    Python's standard library: its top package is built in, or loaded from a file where the
    standard library lies (a user's `trace.py` is not, though named as one of its modules)."""
    top = (module_name or "").split(".")[0]
    if top in sys.builtin_module_names or top == "builtins":
        return True
    module = sys.modules.get(top)
    if module is None:
        return top in sys.stdlib_module_names  # (not imported: by its name)
    return _from_standard_library(getattr(module, "__file__", None), top)


@functools.lru_cache(maxsize=256)
def _from_standard_library(path: str | None, name: str) -> bool:
    if path is None:
        return name in sys.stdlib_module_names  # (frozen, or a namespace package)
    path = os.path.normcase(os.path.realpath(path))
    return path.startswith(STDLIB_PATHS) and "-packages" + os.sep not in path


# A line that may open the definition whose code starts at or below it (inspect.findsource's).
_DEFINITION = re.compile(r"^(\s*def\s)|(\s*async\s+def\s)|(.*(?<!\w)lambda(:|\s))|^(\s*@)")
_FIRST_LINE_IS_DEFINITION = sys.version_info >= (3, 13)  # (where findsource stopped searching)


def source_lines(code, module_globals: dict | None = None) -> tuple:
    """(the lines of `code`'s source, the file's number of the first, the file's name): what
    `inspect.getsourcelines(code)` and `inspect.getsourcefile(code) or code.co_filename` give,
    read from linecache with the globals of a function running `code` (which hold its module's
    loader, as the module inspect finds does). inspect looks through every module loaded for
    the one whose file holds the code, first for each file and each time for a file no
    module was loaded from (exec'd or generated code): a millisecond or more a call with a
    thousand modules loaded. Raises OSError where the source cannot be read; code whose file
    neither exists nor is named `<...>` is left to inspect, which knows the rarer cases."""
    filename = code.co_filename
    if not (os.path.exists(filename) and filename.endswith(".py")) and not (
            filename.startswith("<") and filename.endswith(">")):
        lines, first_line = inspect.getsourcelines(code)
        return lines, first_line, inspect.getsourcefile(code) or filename
    linecache.checkcache(filename)
    lines = linecache.getlines(filename, module_globals)
    if not lines:
        raise OSError("could not get source code")
    number = code.co_firstlineno - 1
    if _FIRST_LINE_IS_DEFINITION:
        if number >= len(lines):
            raise OSError("lineno is out of bounds")
    else:
        while number > 0:
            if number >= len(lines):
                raise OSError("lineno is out of bounds")
            if _DEFINITION.match(lines[number]):
                break
            number -= 1
    return inspect.getblock(lines[number:]), number + 1, filename
