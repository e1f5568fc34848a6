"""What autotrace makes from a user's function (its derivatives, its control-flow conversion,
its specializations to the arguments of a call), kept on the function itself, in its
`__dict__`, so that it lives as long as the function and no longer.

A table keyed weakly by the function would not do: what is made from a function refers back
to it (a derivative reads the function's globals and closure when it runs, and names the
function it came from), and a WeakKeyDictionary entry whose value refers to its key keeps the
key alive for ever, with everything made from it and the generated source in linecache. Kept
on the function, the two refer to each other: a cycle that Python's collector frees once the
user drops the function (taking the linecache entries with it: transforms/codegen/codegen.py).
"""
from __future__ import annotations

import types
import weakref


def made_from(function, kind: str,
              elsewhere: "weakref.WeakKeyDictionary | dict | None" = None) -> dict:
    """The dict of what was made from `function` of one `kind` (an attribute name): kept on a
    Python function; other callables (NumPy's functions, callable objects, which keep their
    attributes to themselves) are kept in `elsewhere`. TypeError where there is none, or it is
    a weakly keyed table and `function` takes no weak reference."""
    if isinstance(function, types.FunctionType):
        entry = function.__dict__.get(kind)
        # functools.wraps copies a wrapped function's __dict__ into its wrapper: what was made
        # from the wrapped function is not the wrapper's.
        if entry is None or entry[0] is not function:
            entry = function.__dict__[kind] = (function, {})
        return entry[1]
    if elsewhere is None:
        raise TypeError(f"made_from keeps only what is made from Python functions here; got "
                        f"{type(function).__name__}")
    return elsewhere.setdefault(function, {})


# What is made from a code object alone (its source lines, its parsed tree), shared by every
# function that runs it: each closure a factory returns runs the same code. Kept by identity
# (code objects compare equal by value, and two functions alike at the same line of two files
# are equal), and dropped when the code object goes. What is kept must not refer to the code
# object, which would then never go.
_made_from_code: dict = {}  # id(code) -> (a weak reference to it, kind -> what was made)


def made_from_code(code: types.CodeType, kind: str) -> dict:
    """The dict of what was made from the code object `code` of one `kind`."""
    entry = _made_from_code.get(id(code))
    if entry is None or entry[0]() is not code:
        key = id(code)

        def forget(reference, key=key):
            if _made_from_code.get(key, (None,))[0] is reference:
                del _made_from_code[key]
        entry = _made_from_code[key] = (weakref.ref(code, forget), {})
    return entry[1].setdefault(kind, {})
