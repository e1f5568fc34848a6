"""Name scopes: the path ("model/dense") that the tracer writes on each equation it records.

`autotrace.name_scope` and the layers push names here; runtime/tracer.py reads `current()`
when it records an equation, and graph pictures (runtime/graph_dot.py) group equations by it.
The stack is per thread, so a trace running in a data pipeline's worker thread does not see
another thread's scopes.
"""
from __future__ import annotations

import contextlib
import threading

_STACK = threading.local()


def _names() -> list:
    names = getattr(_STACK, "names", None)
    if names is None:
        names = _STACK.names = []
    return names


def current() -> str:
    """The scope path now open in this thread, outermost first ("model/dense"); "" for none."""
    return "/".join(_names())


@contextlib.contextmanager
def name_scope(name: str):
    """Group the operations traced in the `with` block under `name`, inside the scopes already
    open; graph pictures (`python -m autotrace graph ... --dot`, runtime/graph_dot.py) draw
    each scope as a box. Layers and Modules open one named after themselves. Values computed
    are unchanged.

        import autotrace
        import numpy as np

        @autotrace.function
        def model(x):
            with autotrace.name_scope("encoder"):
                with autotrace.name_scope("layer1"):
                    h = np.tanh(x)           # its equation's scope: "encoder/layer1"
            return np.sum(h)                 # scope ""
    """
    if not isinstance(name, str) or not name.strip("/"):
        raise ValueError(f"autotrace.name_scope: the name must be a non-empty string, got "
                         f"{name!r}; give a name such as 'layer1'")
    names = _names()
    names.append(name.strip("/"))
    try:
        yield current()
    finally:
        names.pop()


def relative(scope: str, base: str) -> str:
    """`scope` below `base`: ("model/pos", "model") -> "pos", ("model", "model") -> ""; a scope
    not below `base` is returned whole. (Equations in a cond's branch or a loop's body carry
    the whole path; pictures draw them inside the control equation, below its scope.)"""
    if not base:
        return scope
    if scope == base:
        return ""
    return scope[len(base) + 1:] if scope.startswith(base + "/") else scope
