"""NumPy functions that need what a traced value has not, its memory's layout or its items'
Python values (a random generator's seed among them): converted code calls these in their place
(control_statements.py NUMPY_REPLACEMENTS), which refuse a traced argument saying what to write
instead, where NumPy's own would fail converting it to an array with a message about
conversions. On anything else each is NumPy's own.
"""
from __future__ import annotations

import functools

import numpy as np
from numpy.lib.stride_tricks import as_strided

from ..primitives.index import holds_traced
from ..primitives.registry import UntraceableError
from ..primitives.stride_tricks import AS_STRIDED

_NO_LAYOUT = ("a traced value has no memory layout (the compiled graph chooses it): use "
              "np.asarray(x), or x.copy() for a new array that writes into do not reach x")
_HINTS = {
    np.ascontiguousarray: _NO_LAYOUT,
    np.asfortranarray: _NO_LAYOUT,
    np.require: _NO_LAYOUT,
    np.asarray_chkfinite: "a traced value's items are not known while tracing: use "
                          "np.asarray(x), and test np.all(np.isfinite(x)) where it matters",
    # (as a statement of its own it is the write into a's diagonal: out_arguments.py)
    np.fill_diagonal: "it writes into a in place, which autotrace follows where the call is a "
                      "statement of its own, np.fill_diagonal(a, val), with a a variable",
}


def _refusing(function, hint: str):
    @functools.wraps(function)
    def call(*args, **kwargs):
        if holds_traced(args) or holds_traced(tuple(kwargs.values())):
            raise UntraceableError(f"autotrace cannot trace np.{function.__name__} of a traced "
                                   f"value: {hint}")
        return function(*args, **kwargs)
    return call


def _refusing_all(function, reason: str):
    """`function` refusing a traced argument: `reason` names it and says why."""
    @functools.wraps(function)
    def call(*args, **kwargs):
        if holds_traced(args) or holds_traced(tuple(kwargs.values())):
            raise UntraceableError(f"autotrace cannot trace {reason}")
        return function(*args, **kwargs)
    return call


class _Vectorized(np.vectorize):
    """np.vectorize, refusing traced arguments: it calls its function on each item's Python
    value, which a traced array has not while tracing."""

    def __call__(self, *args, **kwargs):
        if holds_traced(args) or holds_traced(tuple(kwargs.values())):
            raise UntraceableError(
                "autotrace cannot trace a np.vectorize function of a traced value: it calls "
                "the Python function on each item's value, which is not known while tracing. "
                "Write the function with NumPy's operations, which apply to whole arrays "
                "(np.where(x > 0, x, 0.0) for `x if x > 0 else 0.0`)")
        return super().__call__(*args, **kwargs)


REFUSED_FUNCTIONS = {function: _refusing(function, hint) for function, hint in _HINTS.items()}
REFUSED_FUNCTIONS[as_strided] = _refusing_all(as_strided, AS_STRIDED)

# What seeds NumPy's random generators: a seed is read for its value, which a traced one has
# not while tracing (a NumPy integer argument is traced, as an array of no axes).
_SEEDING = (np.random.default_rng, np.random.seed, np.random.RandomState,
            np.random.SeedSequence, np.random.PCG64, np.random.PCG64DXSM, np.random.MT19937,
            np.random.Philox, np.random.SFC64)
for _function in _SEEDING:
    REFUSED_FUNCTIONS[_function] = _refusing_all(_function, (
        f"np.random.{_function.__name__}(seed) with a traced seed: NumPy seeds a generator "
        f"with the seed's value, which a traced value has not while tracing (autotrace.function "
        f"and vmap trace NumPy integers, and vmap its batched arguments). Pass the seed as a "
        f"Python int (int(seed)), which is traced for each value, or make it static "
        f"(autotrace.jit(f, static_argnames=('seed',))), or pass a np.random.Generator made "
        f"outside the function; to draw new numbers on each call of a traced function, use "
        f"autotrace.random.Generator(seed)"))
REFUSED_FUNCTIONS[np.vectorize] = _Vectorized
