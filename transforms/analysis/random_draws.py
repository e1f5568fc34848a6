"""NumPy random draws in code that reverse mode runs again.

A function marked with autotrace.checkpoint, and each segment of a loop that checkpoint_every
splits, runs twice: in the primal sweep, and again in the adjoint sweep, from its inputs,
before its adjoint. A NumPy draw in it (`rng.random(...)`, `np.random.rand(...)`) draws other
numbers the second time, so the gradient would be that of another draw than the value's (a
dropout mask that is not the one applied). Such code is refused, at the draw's line, when its
derivative is made: the numbers are drawn outside it and passed in.
"""
from __future__ import annotations

import inspect

import gast
import numpy as np

from ..codegen.codegen import to_source
from ..codegen.nodes import walk
from ..errors import TransformError
from ..front.parsing import MISSING, parse_function, resolve

# np.random's functions are methods of a global RandomState; a Generator's are its own.
NUMPY_GENERATORS = (np.random.Generator, np.random.RandomState)
# Their methods that draw nothing.
NOT_DRAWS = frozenset({"seed", "get_state", "set_state", "spawn", "bit_generator"})


def drawn_by(func, namespace) -> str | None:
    """What draws, where the called `func` (a node) is a NumPy generator's method that draws
    random numbers (`rng.random`, `np.random.rand`); else None."""
    value = resolve(func, namespace)
    if isinstance(func, gast.Attribute) and value is MISSING:  # a method of an instance
        owner = resolve(func.value, namespace)
        if isinstance(owner, NUMPY_GENERATORS) and func.attr not in NOT_DRAWS:
            return to_source(func).strip()
        return None
    owner = getattr(value, "__self__", None)
    if isinstance(owner, NUMPY_GENERATORS) and getattr(value, "__name__", "") not in NOT_DRAWS:
        return to_source(func).strip()
    return None


def refuse_draws(nodes, namespace, location, recomputed: str, seen=None) -> None:
    """Raise a TransformError at the first NumPy draw in `nodes` (the statements of the code
    `recomputed` names, read in `namespace`), or in a Python function they call (followed
    once each, `seen`)."""
    seen = set() if seen is None else seen
    for node in (n for statement in nodes for n in walk(statement)):
        if not isinstance(node, gast.Call):
            continue
        drawn = drawn_by(node.func, namespace)
        if drawn is not None:
            raise location.error(
                node, f"{drawn} draws random numbers in {recomputed}, which reverse mode runs "
                "again in the adjoint sweep, from its inputs: the draw would give other "
                "numbers there, and the gradient would belong to them, not to the value; "
                "draw the numbers outside it and pass them in as an argument",
                "random draw in recomputed code")
        callee = resolve(node.func, namespace)
        if inspect.isfunction(callee) and callee not in seen:
            seen.add(callee)
            refuse_draws_in(callee, recomputed, seen)


def refuse_draws_in(function, recomputed: str, seen=None) -> None:
    """`refuse_draws` over the body of the Python function `function`, whose source is read
    where it can be (a function with none draws nothing that can be seen)."""
    try:
        parsed = parse_function(function)
    except (TransformError, OSError, TypeError):
        return
    refuse_draws(parsed.node.body, parsed.namespace, parsed.location, recomputed,
                 {function} if seen is None else seen)
