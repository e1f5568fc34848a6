"""Which modules are Python's standard library's, by where their files lie.

A user's file named like a module of the standard library (`trace.py`, `queue.py` beside their
script) is imported under that name, so a name alone does not tell the two apart: a module is
the standard library's where it is built in or loaded from the standard library's folders
(their site-packages aside).
"""
from __future__ import annotations

import functools
import os
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
