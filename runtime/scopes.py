"""What tracing has open in this thread: name scopes, and the subgraphs being traced.

Name scopes: the path ("model/dense") that the tracer writes on each equation it records.

`autotrace.name_scope` and the layers push names here; runtime/tracing/tracer.py reads `current()`
when it records an equation, and graph pictures (runtime/execution/graph_dot.py) group equations by it.
The stack is per thread, so a trace running in a data pipeline's worker thread does not see
another thread's scopes.
"""
from __future__ import annotations

import contextlib
import threading

_STACK = threading.local()
# The subgraph builders now tracing in this thread, innermost last.
_ACTIVE = threading.local()


def active_subgraphs() -> list:
    """The builders of the subgraphs (branches, loop bodies) now tracing in this thread,
    innermost last: the list itself, which runtime/tracing/control.py pushes onto and pops. state.py
    asks it: a Variable assigned inside a traced `if` or loop is refused."""
    return _ACTIVE.__dict__.setdefault("builders", [])


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
    open; graph pictures (`python -m autotrace graph ... --dot`, runtime/execution/graph_dot.py) draw
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

    Examples:
        >>> @autotrace.function
        ... def model(x):
        ...     with autotrace.name_scope("encoder"):
        ...         h = np.tanh(x)
        ...     return np.sum(h)
        >>> [equation.scope for equation in model.graph(np.ones(2)).equations]
        ['encoder', '']
    """
    names = _names()
    names.append(_checked(name))
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


GRADIENTS = "gradients"


@contextlib.contextmanager
def gradient_scope(name: str):
    """The scope that the adjoint sweep of a `with name_scope(name):` block runs in (the
    gradient transforms write it; see README "Name scopes"): "gradients/<name>" inside the
    scopes open, or just "<name>" inside another gradient scope, so that gradients nest as the
    scopes of their forward operations do ("gradients/outer/inner"). As in TensorFlow, a
    graph picture then shows the model once, and its gradient in one "gradients" box beside
    it, built the same way.
    """
    checked = _checked(name)
    depth = getattr(_STACK, "gradient_depth", 0)
    names = _names()
    names.append(checked if depth else f"{GRADIENTS}/{checked}")
    _STACK.gradient_depth = depth + 1
    try:
        yield current()
    finally:
        _STACK.gradient_depth = depth
        names.pop()


def _checked(name) -> str:
    if not isinstance(name, str) or not name.strip("/"):
        raise ValueError(f"autotrace.name_scope: the name must be a non-empty string, got "
                         f"{name!r}; give a name such as 'layer1'")
    return name.strip("/")


class TraceRecord:
    """A record that generated code keeps in a variable of its own, made anew each time the
    code runs (a StateLog of the writes since a call began, runtime/derivatives/state_log.py).
    A traced loop or branch carries it as a value known while tracing, not as a graph value:
    its body, traced once for every iteration, makes one anew, and the loop goes on with the
    body's. So two records count as the same loop value where `same_in_graph` says so."""

    __slots__ = ()

    def same_in_graph(self, other) -> bool:
        """Whether a traced loop or branch may carry `other` where it carried this record."""
        return type(other) is type(self)

    def refusal(self, other, statement: str) -> str:
        """Why a traced `statement` ("for loop", "if") cannot carry `other` where it carried
        this record (`same_in_graph` said so), for people: what the code does, what to do."""
        return (f"autotrace cannot carry its record of a {type(self).__name__} through this "
                f"traced {statement}")


def record_refusal(a, b, statement: str) -> str | None:
    """The refusal of the first record in the trees `a` and `b` (what a traced `statement`
    carried before and after) that cannot stand for the other, or None."""
    if isinstance(a, TraceRecord) or isinstance(b, TraceRecord):
        record, other = (a, b) if isinstance(a, TraceRecord) else (b, a)
        return None if record.same_in_graph(other) else record.refusal(other, statement)
    if isinstance(a, (tuple, list)) and isinstance(b, (tuple, list)):
        pairs = zip(a, b)
    elif isinstance(a, dict) and isinstance(b, dict):
        pairs = ((a[key], b[key]) for key in a if key in b)
    else:
        return None
    return next(filter(None, (record_refusal(x, y, statement) for x, y in pairs)), None)
