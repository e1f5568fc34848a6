"""Derivatives made once per function: `grad(loss)` in a training loop transforms `loss` once.

A derivative is kept on the function it was made from (in its `__dict__`), so it lives as long
as the function and no longer; other callables (traced functions, objects) are kept in a small
table of the most recent ones. The key is what the transform depends on: the function's code
object (a reassigned `f.__code__` is a new function), the transform and its options. The
derivative reads globals, closure variables and defaults when it runs
(transforms/analysis/live_names.py), so a cached one stays right while they change; one whose
namespace now holds what it was not generated for (a rebound function) is made again.

A closure made anew each step (`opt.minimize(lambda: ...)`, `grad(lambda w: loss(w, batch))`
in a loop) is another function of the same code each time: its derivative is the one made for
an earlier function of that code, rebound to its cells, defaults and globals where that is
exactly right (transforms/codegen/rebinding.py), not generated again. The templates for that
are kept for the most recent codes and transforms only (`_TEMPLATE_LIMIT`).

Transforms run one at a time (transforms/analysis/live_names.py `transform_lock`).
"""
from __future__ import annotations

import collections
import types
import weakref
from typing import Callable

from autotrace.transforms.codegen.rebinding import DerivativeTemplate
from autotrace.transforms.front.function_caches import made_from
from autotrace.transforms.analysis.live_names import is_current, transform_lock

_ATTRIBUTE = "__autotrace_derivatives__"
_RECENT_LIMIT = 64
# Other callables (traced functions, callable objects): id -> (the callable, its derivatives),
# the most recent last.
_recent: "collections.OrderedDict" = collections.OrderedDict()
_TEMPLATE_LIMIT = 128
# (id of a Python function's code, transform keys) -> (a weak reference to the code, the
# DerivativeTemplate of its derivative, or of a derivative of its derivative), the most recent
# last.
_templates: "collections.OrderedDict" = collections.OrderedDict()
# A derivative's origin: the code of the user's function it derives and the transforms' keys
# (kept beside it, not on it: a derivative carries one record, its __autotrace_derivative__)
_origins: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()


def _derivatives_of(f) -> dict:
    if isinstance(f, types.FunctionType):  # other objects keep their attributes to themselves
        return made_from(f, _ATTRIBUTE)
    entry = _recent.pop(id(f), None)
    if entry is None or entry[0] is not f:
        entry = (f, {})
    _recent[id(f)] = entry
    while len(_recent) > _RECENT_LIMIT:
        _recent.popitem(last=False)
    return entry[1]


def cached_derivative(f, key: tuple, make: Callable[[], Callable]) -> Callable:
    """The derivative of `f` for `key` (the transform and its options), made by `make()` once
    and again only when `f`'s code changed or its namespace holds what it was not made for."""
    code = getattr(getattr(f, "__autotrace_python_function__", f), "__code__", None)
    with transform_lock:
        derivatives = _derivatives_of(f)
        derivative = derivatives.get((code,) + key)
        if derivative is None or not is_current(derivative):
            derivative = derivatives[(code,) + key] = _made_for(f, code, key, make)
        return derivative


def _made_for(f, code, key: tuple, make: Callable[[], Callable]) -> Callable:
    """`make()`, or the derivative made for another function of `f`'s code, rebound to `f`."""
    if not isinstance(f, types.FunctionType) or f.__code__ is not code:
        return make()
    # A derivative's template is kept for the code of the user's function and the transforms
    # that made it (a rebound derivative runs a copy of its template's code; a derivative
    # generated again has code of its own): one template for them, the latest.
    root, transforms = _origins.get(f, (code, ()))
    transforms += (key,)
    entry = _templates.pop((id(root), transforms), None)
    template = entry[1] if entry is not None and entry[0]() is root else None
    derivative = None if template is None else template.bind(f)
    if derivative is None:
        derivative = make()
        template = DerivativeTemplate.of(derivative, f)
    if isinstance(derivative, types.FunctionType):
        _origins[derivative] = (root, transforms)
    if template is not None:
        _templates[(id(root), transforms)] = (weakref.ref(root), template)
        while len(_templates) > _TEMPLATE_LIMIT:
            _templates.popitem(last=False)
    return derivative
