"""A session: one top-level transform and the derivatives of the user functions it calls,
each made once.

Passes below the driver ask for the derivative of a function they meet (a call of a user's
function, transforms/front/front_end.py `Context.derive`; one resolved when generated code runs,
transforms/dynamic_calls.py) through their session, which hands the request to the builder
of its mode. The driver (transforms/pipeline.py) registers its builders here when it is
imported, so that no pass imports the driver that runs it.
"""
from __future__ import annotations

import collections
import inspect
import types

from .wrt import WithRespectTo

# mode ("reverse", "forward") -> build(func, wrt, *, session, **options), the driver's (wrt a
# WithRespectTo).
_BUILDERS: dict = {}


def register_builder(mode: str, build) -> None:
    """Make `build` the builder of derivatives of `mode` (the driver does, at import)."""
    _BUILDERS[mode] = build


class Session:
    """One top-level transform, and the derivatives of the user functions it calls."""

    def __init__(self, optimized: bool, implicit: bool = False, outermost: bool = False,
                 called: bool = False, split_calls: bool = True, show_after=(),
                 module_defaults: bool = True):
        """outermost: the first function derived is the user's, whose gradients the user
        gets (the others are called by generated code); called: its function is one a
        differentiated function calls; split_calls: a call of a user's function runs its
        derivative's primal sweep where the call is and its adjoint sweep later
        (runtime/derivatives/sweeps.py), not the function and then its whole derivative;
        show_after: names of source passes (transforms/pipeline.py SOURCE_PASSES) after which
        to print the source, to debug; module_defaults: a parameter whose default holds a
        module is read as that module (transforms/front/module_defaults.py)."""
        self.show_after = tuple(show_after)
        self.module_defaults = module_defaults
        self.optimized = optimized
        # (Implicit derivatives recompute calls as of the Variables they saw: called whole.)
        # "top": in halves only outside every `if` and loop, as autotrace.function traces a
        # derivative whose calls in halves sat in an `if` or loop on a traced value.
        self.split_calls = split_calls if not implicit else False
        self.outermost = outermost
        self.called = called
        self.checked_callees: set = set()  # code of functions whose calls were checked
        # Implicit mode (autotrace.implicit_grad): Variables reached through globals,
        # closures, attributes and calls carry gradient too, handed to runtime/state's sink.
        self.implicit = implicit
        self.done: dict = {}
        self.namespaces: list = []  # of every function transformed (see LiveNamespace)
        self.pending: dict = collections.defaultdict(list)
        # Refusals in branches of an `if`, raised when the branch runs (dead_branches.py).
        self.refused_when_run: list = []

    def with_whole_calls(self, outermost: bool, split_calls=False) -> "Session":
        """A session like this one where calls run their callees' derivatives whole (or, with
        split_calls="top", in halves only outside every `if` and loop)."""
        return Session(self.optimized, self.implicit, outermost, self.called,
                       split_calls=split_calls, show_after=self.show_after,
                       module_defaults=self.module_defaults)

    def snapshot(self) -> tuple:
        """What a derivative's build changes in the session, to be restored (`restore`)
        where the build stops at a refusal and starts again."""
        return (self.outermost, dict(self.done),
                {key: list(waiting) for key, waiting in self.pending.items()},
                len(self.namespaces), set(self.checked_callees))

    def restore(self, snapshot: tuple) -> None:
        self.outermost, done, pending, namespaces, checked = snapshot
        self.done = done
        self.pending = collections.defaultdict(list, pending)
        del self.namespaces[namespaces:]
        self.checked_callees = checked

    def bind_derivative(self, func, wrt: WithRespectTo, namespace, identifier,
                        mode="reverse"):
        """Bind func's derivative (made once per mode and wrt in this session) to `identifier`
        in `namespace`, now or, where it is being built (recursion), once it is."""
        key = (mode, func, wrt)
        if key in self.done:
            namespace[identifier] = self.done[key]
            return
        self.pending[key].append((namespace, identifier))
        if len(self.pending[key]) == 1:  # not already being built (recursion)
            if inspect.ismethod(func):  # a bound method: derive its function, bind it again
                derivative = types.MethodType(
                    self.build(mode, func.__func__, wrt.past_self()), func.__self__)
            else:
                derivative = self.build(mode, func, wrt)
            self.done[key] = derivative
            for waiting_namespace, waiting_identifier in self.pending.pop(key):
                waiting_namespace[waiting_identifier] = derivative

    def build(self, mode: str, func, wrt: WithRespectTo, **options):
        """func's derivative, built in this session by the driver's builder for `mode`
        ("reverse", "split": reverse run in halves, or "forward")."""
        if mode == "split":
            mode, options = "reverse", {**options, "split": True}
        if mode not in _BUILDERS:  # (importing autotrace.transforms.pipeline registers them)
            raise RuntimeError(f"no builder of {mode} derivatives is registered: import "
                               "autotrace.transforms.pipeline first")
        return _BUILDERS[mode](func, wrt, session=self, **options)
