"""From a Python function to its generated derivative: the source passes, in order.

    reverse_function(f, wrt, session=...)      forward_function(f, wrt, session=...)

where wrt is a WithRespectTo (transforms/wrt.py), made where autotrace was given it.

Both drivers make a `Unit` of the function (transforms/front/front_end.py) and run SOURCE_PASSES
on it, the passes of its mode, in order: the front end both modes share (parse, checks, dict
and list methods, writes into arguments, nested functions, A-normal form, lists NumPy reads
as arrays made arrays, exits to flags, activity), the mode (transforms/reverse/reverse_body.py: the primal and adjoint sweeps, then the
saves they need; transforms/forward/forward_body.py: the tangent statements), cleanup when optimized
(transforms/codegen/cleanup.py), then the generated source, printed where asked, and the function
loaded from it (transforms/codegen/loading.py).
A pass calls back into the driver only through its session (transforms/session.py), where this
module registers the builders of both modes.

To print the source after a named pass: `Session(..., show_after=("anf",))`, or the
environment variable AUTOTRACE_DEBUG set to pass names, comma separated (or "all");
AUTOTRACE_DEBUG=generated prints each generated function as loaded.
"""
from __future__ import annotations

import dataclasses
import os
import types
from dataclasses import dataclass
from typing import Callable

import gast

from .codegen import cleanup, constant_folding
from .forward import forward_body
from .front import front_end
from .codegen import loading
from .reverse import reverse_body
from .codegen.codegen import to_source
from .codegen.rebinding import DerivativeTemplate
from .derivative_record import derivative_record
from .front.dead_branches import deferring_refusals
from .front.front_end import Unit
from .front.module_defaults import read_as_modules
from .front.statement_rewrites import statements
from .session import Session, register_builder
from .wrt import WithRespectTo
from . import rules  # noqa: F401  (fills the rule registries)

# The source passes, in the order they run (modes: the halves that run a pass; when: a test
# of the unit, else always). Each is a function of the Unit, which it changes in place.
REVERSE, FORWARD = ("reverse",), ("forward",)


@dataclass(frozen=True)
class SourcePass:
    """One source pass: `run(unit)`, in the modes named, where `when(unit)` (None: always)."""

    name: str
    run: Callable[[Unit], None]
    modes: tuple = REVERSE + FORWARD
    when: Callable[[Unit], bool] | None = None

    def applies(self, unit: Unit) -> bool:
        return unit.mode in self.modes and (self.when is None or self.when(unit))


def _optimized(unit: Unit) -> bool:
    return unit.session.optimized


def _constants(unit: Unit) -> None:
    constant_folding.fold_constants(unit.new_body)


def _dead_code(unit: Unit) -> None:
    cleanup.remove_dead_code(unit.new_body, unit.pure, keep_names=set(unit.parameters))


def _temporaries(unit: Unit) -> None:
    cleanup.inline_temporaries(unit.new_body, unit.temporaries, unit.pure)


def _empty_control_flow(unit: Unit) -> None:
    cleanup.remove_empty_control_flow(unit.new_body)


def _orphan_comments(unit: Unit) -> None:
    cleanup.remove_orphan_comments(unit.new_body)


SOURCE_PASSES = [
    # The front end (transforms/front/front_end.py), which both modes share.
    SourcePass("parse", front_end.parse),
    SourcePass("module_defaults", read_as_modules),  # xp=np: xp read as np, guarded
    SourcePass("in_place_dunders", front_end.in_place_dunders),  # a.__iadd__(x): a += x
    SourcePass("dead_branches", front_end.dead_branches),  # refusals raised when run
    SourcePass("state_writes", front_end.state_writes),  # self.n = ...: write_state(...)
    SourcePass("starred", front_end.starred),  # g(*xs): g(xs[0], xs[1])
    SourcePass("super", front_end.super_calls),  # super(): super(C, self)
    SourcePass("statements", statements),  # loop else, :=, map, {"a"}: rewritten
    SourcePass("check", front_end.check),  # what autotrace supports (transforms/front/checks.py)
    SourcePass("dicts", front_end.dicts),  # dict methods (transforms/front/dict_methods.py)
    SourcePass("bind", front_end.bind),  # parameters, wrt, namespace, names, helpers
    SourcePass("out_arguments", front_end.out_arguments),  # np.sin(x, out=y)
    SourcePass("writes", front_end.writes),  # writes into arguments (transforms/front/inplace.py)
    SourcePass("replace_calls", front_end.replaced),  # dataclasses.replace(p, ...)
    SourcePass("varargs", front_end.varargs),  # calls of f(*args, **kwargs)
    SourcePass("segments", front_end.segments),  # checkpointed loops (checkpoint_every)
    SourcePass("lift", front_end.lift),  # nested functions (transforms/front/nested.py)
    SourcePass("accumulate", front_end.accumulate),  # accumulate(b, c): add(b, c)
    SourcePass("namedtuples", front_end.namedtuples),
    SourcePass("objects", front_end.objects),  # objects built (transforms/reverse/built_objects_and_super.py)
    SourcePass("lists", front_end.lists),  # list methods (transforms/front/list_methods.py)
    SourcePass("anf", front_end.anf),  # A-normal form (transforms/front/anf.py)
    SourcePass("list_arguments", front_end.list_arguments),  # np.mean(items): of an array
    SourcePass("exits", front_end.exits, REVERSE),  # break, continue, return: flags
    SourcePass("loop_tests", front_end.loop_tests, FORWARD),
    SourcePass("activity", front_end.activity),  # what carries gradient; refusals
    # The mode: reverse (transforms/reverse/reverse_body.py) or forward (transforms/forward/forward_body.py).
    SourcePass("reverse", reverse_body.reverse, REVERSE),
    SourcePass("saves", reverse_body.saves, REVERSE),
    SourcePass("forward", forward_body.forward, FORWARD),
    # Cleanup (transforms/codegen/cleanup.py), when optimized.
    SourcePass("constants", _constants, when=_optimized),
    SourcePass("dead_code", _dead_code, when=_optimized),
    SourcePass("temporaries", _temporaries, when=_optimized),
    SourcePass("empty_control_flow", _empty_control_flow, REVERSE, _optimized),
    SourcePass("dead_code", _dead_code, when=_optimized),  # what inlining left unread
    SourcePass("empty_control_flow", _empty_control_flow, REVERSE, _optimized),
    SourcePass("comments", _orphan_comments, REVERSE),  # comments left without code
    # The generated function (transforms/codegen/loading.py).
    SourcePass("generated", loading.generated_source),
    SourcePass("load", loading.load),
]


def run_passes(unit: Unit, passes=None) -> Unit:
    """Run `passes` (by default SOURCE_PASSES) that apply to `unit`, in order; print the
    source after those the session's show_after or AUTOTRACE_DEBUG names (see the module
    docstring)."""
    wanted = set(unit.session.show_after) | set(
        os.environ.get("AUTOTRACE_DEBUG", "").split(","))
    for source_pass in SOURCE_PASSES if passes is None else passes:
        if source_pass.applies(unit):
            source_pass.run(unit)
            if source_pass.name in wanted or "all" in wanted:
                _show(source_pass.name, unit)
    return unit


def _show(pass_name: str, unit: Unit) -> None:
    if pass_name == "generated":  # the generated function as loaded
        print(unit.source)
        return
    if unit.new_body is not None:
        node = gast.Module(body=unit.new_body, type_ignores=[])
    elif unit.primal is not None:
        node = gast.Module(body=unit.primal + unit.adjoint, type_ignores=[])
    else:
        node = unit.function
    print(f"# ---- after {pass_name} ----")
    print(to_source(node))


@deferring_refusals
def reverse_function(func, wrt: WithRespectTo, *, session: Session, with_value: bool = False,
                     checkpoint_every: int | None = None, split: bool = False):
    """Generate and load the reverse-mode derivative of `func` (see the module docstring).

    wrt: what it is taken with respect to (transforms/wrt.py). The generated function takes
    func's parameters plus a keyword `dy` and returns the gradient (a tuple for a tuple
    `wrt`), or `(value, gradient)` when with_value. checkpoint_every: store the state of
    func's loops once every so many iterations, recomputing the others
    (transforms/front/segments.py). split: generate the derivative a caller runs in two
    halves, a generator that yields the value after the primal sweep and takes `dy` back
    (runtime/derivatives/sweeps.py).
    """
    outermost, session.outermost = session.outermost, False
    unit = run_passes(Unit(func, wrt, session, "reverse", "dy", checkpoint_every,
                           runs_once=outermost or split, outermost=outermost,
                           with_value=with_value, split=split))
    generated = unit.generated
    if unit.derivative_mode.split_calls:
        # It runs its callees' derivatives in halves, which a derivative of this derivative
        # cannot follow: that one differentiates the same function with each callee's
        # derivative called whole (transforms/front/parsing.py reads this). And the one
        # autotrace.function traces where a call in halves sat in a traced `if` or loop:
        # calls there run whole, the others still in halves.
        options = dict(with_value=with_value, checkpoint_every=checkpoint_every, split=split)
        flags = session.with_whole_calls(outermost)
        generated.__autotrace_derivative__ = dataclasses.replace(
            derivative_record(generated),
            whole_calls=RebuiltWithCalls(func, wrt, flags, False, options),
            top_calls=RebuiltWithCalls(func, wrt, flags, "top", options))
    return generated


class RebuiltWithCalls:
    """`func`'s reverse derivative built again, once, when first asked for (by a derivative of
    it, a trace of it), with its calls run whole or (split_calls="top") in halves only outside
    every `if` and loop: a record's `whole_calls` and `top_calls`."""

    def __init__(self, func, wrt: WithRespectTo, flags: Session, split_calls, options: dict,
                 shared: list | None = None):
        self.func, self.wrt, self.split_calls, self.options = func, wrt, split_calls, options
        self.flags = flags  # a session never built in: its options only
        self.made = None
        # Shared by those of the functions of one code (`for_function`): the template of the
        # first one built (transforms/codegen/rebinding.py), which the others are bound from.
        self.shared = [None] if shared is None else shared

    def __call__(self):
        if self.made is None:
            code = getattr(self.func, "__code__", None)
            template = self.shared[0]
            if isinstance(self.func, types.FunctionType) and template is not None \
                    and template[0] is code:
                self.made = template[1].bind(self.func)
            if self.made is None:
                session = self.flags.with_whole_calls(self.flags.outermost, self.split_calls)
                self.made = reverse_function(self.func, self.wrt, session=session,
                                             **self.options)
                if template is None and isinstance(self.func, types.FunctionType):
                    made = DerivativeTemplate.of(self.made, self.func)
                    self.shared[0] = None if made is None else (code, made)
        return self.made

    def for_function(self, func) -> "RebuiltWithCalls":
        """The same for `func` (None: none yet), another function of the code func runs."""
        return RebuiltWithCalls(func, self.wrt, self.flags, self.split_calls, self.options,
                                self.shared)


@deferring_refusals
def forward_function(func, wrt: WithRespectTo, *, session: Session):
    """Generate and load the forward-mode derivative of `func`.

    The generated function takes func's parameters plus a keyword `tangent` (the tangent of the
    `wrt` argument, a tuple of them for a tuple `wrt`; default ones) and returns
    `(value, tangent of the value)`.
    """
    outermost, session.outermost = session.outermost, False
    return run_passes(Unit(func, wrt, session, "forward", "tangent",
                           outermost=outermost)).generated


register_builder("reverse", reverse_function)
register_builder("forward", forward_function)
