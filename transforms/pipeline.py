"""From a Python function to its generated derivative: the source passes, in order.

    reverse_function(f, wrt, session=...)      forward_function(f, wrt, session=...)

Both drivers make a `Unit` of the function (transforms/front_end.py) and run SOURCE_PASSES
on it, the passes of its mode, in order: the front end both modes share (parse, checks, dict
and list methods, writes into arguments, nested functions, A-normal form, exits to flags,
activity), the mode (reverse: the primal and adjoint sweeps, then the saves they need;
forward: the tangent statements), cleanup when optimized (transforms/cleanup.py), then the
generated source, printed where asked, and the function loaded from it (transforms/loading.py).
A pass calls back into the driver only through its session (transforms/session.py), where this
module registers the builders of both modes.

To print the source after a named pass: `Session(..., show_after=("anf",))`, or the
environment variable AUTOTRACE_DEBUG set to pass names, comma separated (or "all");
AUTOTRACE_DEBUG=generated prints each generated function as loaded.
"""
from __future__ import annotations

import collections
import copy
import functools
import os
import re
from dataclasses import dataclass
from typing import Callable

import gast

import autotrace.runtime.derivatives.adjoint_ops as adjoint_ops
import autotrace.runtime.derivatives.items as items
import autotrace.runtime.derivatives.sequences as sequences
import autotrace.runtime.derivatives.structure as structure
from autotrace.runtime.state import deposit
from ..runtime.derivatives.state_writes import state_tangent
from ..runtime.derivatives.sweeps import adjoint_sweep, primal_sweep
from . import cleanup, front_end, loading
from .calls import classify
from .codegen import to_source
from .dead_branches import deferring_refusals
from .dynamic_calls import vjp_call
from .forward import ForwardMode
from .front_end import Unit
from .names_alike import names_bound_alike
from .nodes import walk
from .object_state import is_state_write
from .reverse import ReverseMode
from .scopes import recomputes, scope_call
from .sequences import SequenceKinds
from .session import Session, register_builder
from .shapes import ShapeClasses
from .sweeps import COMMENT, SAVE, comment
from .templates import name, replace
from . import rules  # noqa: F401  (fills the rule registries)

IMPURE_BUILTINS = {print, input, open, next, iter}


def _is_pure(namespace, helper_identifiers, impure=frozenset()):
    def pure(value) -> bool:
        for node in walk(value):
            if isinstance(node, (gast.Yield, gast.YieldFrom)):
                return False
            if isinstance(node, gast.Call):
                if isinstance(node.func, gast.Name) and node.func.id in impure:
                    return False
                if isinstance(node.func, gast.Name) and node.func.id in helper_identifiers:
                    continue
                resolved = classify(node.func, namespace)
                if resolved.kind not in ("rule", "constant"):
                    return False
                if resolved.value in IMPURE_BUILTINS:
                    return False
        return True
    return pure


def reverse(unit: Unit) -> None:
    """Reverse mode (transforms/reverse.py): the primal sweep, then the adjoint sweep, which
    seeds the result's gradient and returns the gradients of wrt (and the value, with_value;
    a generator yielding the value between the sweeps, split)."""
    session, context, parameters = unit.session, unit.context, unit.parameters
    seed_name, namespace, wrt_names = unit.keyword, unit.namespace, unit.with_respect_to.names
    body, result, active = unit.body, unit.result, unit.active
    references, recompute_blocks = collections.Counter(), collections.Counter()
    for node in (n for s in body for n in walk(s)):  # (one walk for both)
        if isinstance(node, gast.Name):
            references[node.id] += 1
        elif isinstance(node, gast.With) and recomputes(node, namespace) and \
                isinstance(scope_call(node).args[0], gast.Name):
            recompute_blocks[scope_call(node).args[0].id] += 1
    reverse = unit.derivative_mode = ReverseMode(context, active, parameters, unit.local_names,
                                                 references)
    reverse.recompute_blocks = recompute_blocks
    reverse.carrying = unit.carrying
    reverse.sequences = SequenceKinds(body, parameters, namespace, active)
    reverse.array_names = reverse.sequences.array_names(body)
    reverse.shapes = ShapeClasses(body, namespace, reverse.sequences)
    reverse.same_objects = names_bound_alike(body, reverse.item_written)
    sweep = reverse.block(body)

    primal = list(sweep.primal)
    state = set()
    adjoint = []
    value_name = None
    if unit.with_value or unit.split:
        value_name = reverse.temporary("value")
        value = (copy.deepcopy(result) if result is not None
                 else gast.Constant(value=None, kind=None))
        if any(getattr(s, SAVE, ("", ""))[1] == "item_push" for s in _walk_statements(primal)):
            # The adjoint sweep undoes `x[i] = ...` in place: keep the value from before it.
            value = gast.Call(func=name(context.helper("snapshot")), args=[value], keywords=[])
        primal += [gast.Assign(targets=[name(value_name, store=True)], value=value,
                               type_comment=None)]
    takes = _writes_its_object(body, parameters, wrt_names, result, namespace)
    if unit.split:  # the caller's primal sweep goes on from here, and sends back the gradient
        yielded = name(value_name)
        if takes:
            yielded = gast.Call(func=name(context.helper("TakingObjectGradient")),
                                args=[yielded], keywords=[])
        primal += [gast.Assign(targets=[name(seed_name, store=True)],
                               value=gast.Yield(value=yielded), type_comment=None)]
    if takes:
        # A method writing into its object's state: its caller sends the gradient of the
        # object after the call too, whose entries at the slots written are the gradients of
        # what the method wrote (runtime/derivatives/sweeps.py `adjoint_sweep`); run whole,
        # it takes it by a keyword of its own (dynamic_calls.py `vjp_call`'s `after`).
        if unit.split:
            adjoint += replace("dy, gradient = sent_gradients(dy, value)", dy=seed_name,
                               gradient=reverse.gradient(parameters[0]), value=parameters[0],
                               sent_gradients=context.helper("sent_gradients"))
        else:
            unit.after = unit.namer.fresh(reverse.gradient(parameters[0]) + "_after")
            adjoint += replace("gradient = sent_object_gradient(after, value)",
                               gradient=reverse.gradient(parameters[0]), after=unit.after,
                               value=parameters[0],
                               sent_object_gradient=context.helper("sent_object_gradient"))
        state.add(parameters[0])
    if isinstance(result, gast.Name) and result.id in active:
        adjoint += reverse.line_comment(unit.return_node)
        adjoint += replace("gradient = seed(result, dy)", gradient=reverse.gradient(result.id),
                           seed=context.helper("implicit_seed" if session.implicit else "seed"),
                           result=result.id, dy=seed_name)
        state.add(result.id)
    adjoint += sweep.adjoint(state)
    for state_name in unit.state_names:
        if state_name in state:  # a global or closure variable holding Variables
            adjoint += replace("deposit(value, gradient)", deposit=context.helper("deposit"),
                               value=state_name, gradient=reverse.gradient(state_name))
    for parameter in wrt_names:
        if parameter not in state:
            adjoint += reverse.zeros(parameter)
    match = context.helper("match" if unit.outermost else "match_for_caller")
    gradients = [gast.Call(func=name(match), args=[name(reverse.gradient(p)), name(p)],
                           keywords=[]) for p in wrt_names]
    returned_gradient = (gradients[0] if unit.with_respect_to.single
                         else gast.Tuple(elts=gradients, ctx=gast.Load()))
    if unit.outermost and len(gradients) > 1:  # the caller's own arrays, as NumPy code gives
        returned_gradient = gast.Call(func=name(context.helper("fresh_gradients")),
                                      args=[returned_gradient], keywords=[])
    if unit.with_value:
        returned_gradient = gast.Tuple(elts=[name(value_name), returned_gradient],
                                       ctx=gast.Load())
    adjoint.append(gast.Return(value=returned_gradient))
    unit.primal, unit.adjoint = primal, adjoint


def saves(unit: Unit) -> None:
    """Drop the saves on the stack that the adjoint sweep needs not (optimized), start the
    stacks and the names that may be unassigned, and put the sweeps together."""
    session, context, namespace = unit.session, unit.context, unit.namespace
    reverse, primal, adjoint = unit.derivative_mode, unit.primal, unit.adjoint
    parameters = unit.parameters
    # Helpers are pure, but for deposit, and, in implicit mode, vjp_call (whose callee may
    # deposit gradients though it returns none).
    impure = {id(deposit), id(primal_sweep), id(adjoint_sweep)} | (
        {id(vjp_call)} if session.implicit else set())
    helper_identifiers = {v for k, v in context.bound.items()
                          if isinstance(k, int) and k not in impure}
    unit.pure = _is_pure(namespace, helper_identifiers | {COMMENT},
                         {v for k, v in context.bound.items() if k in impure})
    if session.optimized:
        undefined = cleanup.remove_unneeded_saves(primal, adjoint, _shape_only(context),
                                                  context.helper("shape_only"), namespace,
                                                  parameters)
    else:
        undefined = {getattr(s, SAVE)[0] for s in _walk_statements(primal)
                     if hasattr(s, SAVE) and getattr(s, SAVE)[2]}
    uses_stack = any(hasattr(s, SAVE) for s in _walk_statements(primal + adjoint))
    prologue = []
    if uses_stack:
        prologue += replace("stack = []", stack=reverse.stack)
    for stack in sorted(reverse.apart_stacks.values()):
        prologue += replace("stack = []", stack=stack)
    for undefined_name in sorted((undefined | reverse.maybe_unassigned) - set(parameters)):
        prologue += replace("name = None", name=undefined_name)
    unit.new_body = prologue + [comment("Primal sweep")] + primal + [
        comment("Adjoint sweep")] + adjoint
    temporaries = reverse.temporaries | {n for n in unit.local_names if re.fullmatch(
        r"_(t|cond|list|dict|i|n)\d+", n)}
    unit.temporaries = temporaries | {reverse.gradient_names[n] for n in reverse.gradient_names
                                      if n in temporaries}


def forward(unit: Unit) -> None:
    """Forward mode (transforms/forward.py): each statement followed by its tangent's, after
    the tangents of wrt taken from the keyword (zeros for the other arguments that need
    one)."""
    context, session = unit.context, unit.session
    body = unit.body
    if not body or not isinstance(body[-1], gast.Return):
        body = body + [gast.Return(value=gast.Constant(value=None, kind=None))]
    forward = unit.derivative_mode = ForwardMode(context, unit.active | set(unit.with_respect_to.names))
    forward.sequences = SequenceKinds(unit.body, unit.parameters, unit.namespace, unit.active)
    if unit.outermost:  # the caller's own tangents: none of them is handed back as it is
        forward.fresh_tangent = context.helper("fresh_tangent")
    seeds = [name(forward.tangent(p), store=True) for p in unit.with_respect_to.names]
    values = [name(p) for p in unit.with_respect_to.names]
    single = unit.with_respect_to.single
    prologue = replace("tangents = tangent_seed(values, tangent)",
                       tangents=seeds[0] if single else gast.Tuple(elts=seeds, ctx=gast.Store()),
                       tangent_seed=context.helper("tangent_seed"),
                       values=values[0] if single else gast.Tuple(elts=values, ctx=gast.Load()),
                       tangent=unit.keyword)
    if unit.outermost:  # the user's own arguments: no tangent of an integer (as grad's match)
        prologue = [statement for parameter in unit.with_respect_to.names
                    for statement in replace("refuse(value)", value=parameter,
                                             refuse=context.helper("refuse_integral_argument"))
                    ] + prologue
    # An argument left out of wrt has a zero tangent, which it needs in a variable once an
    # assignment (`x = x - a`, `x[0] = a`) makes it active.
    # So does an object read from a global whose state a method called on it writes into.
    outside = sorted(name for name in forward.active - unit.local_names
                     if name in unit.namespace)
    for parameter in [*unit.parameters, *outside]:
        if parameter in forward.active and parameter not in unit.with_respect_to.names:
            prologue += replace("tangent = zeros_like(value)", tangent=forward.tangent(parameter),
                                zeros_like=context.helper("zeros_like"), value=parameter)
    unit.new_body = prologue + forward.block(body)
    if session.optimized:
        # (state_tangent changes in place the tangent a caller passed: kept where unread)
        unit.pure = _is_pure(unit.namespace, set(context.bound.values()),
                             {n for n, v in unit.namespace.items() if v is state_tangent})
        unit.temporaries = forward.temporaries | {n for n in unit.local_names
                                                  if n.startswith("_t")}


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
    cleanup.fold_constants(unit.new_body)


def _dead_code(unit: Unit) -> None:
    cleanup.remove_dead_code(unit.new_body, unit.pure, keep_names=set(unit.parameters))


def _temporaries(unit: Unit) -> None:
    cleanup.inline_temporaries(unit.new_body, unit.temporaries, unit.pure)


def _empty_control_flow(unit: Unit) -> None:
    cleanup.remove_empty_control_flow(unit.new_body)


def _orphan_comments(unit: Unit) -> None:
    cleanup.remove_orphan_comments(unit.new_body)


SOURCE_PASSES = [
    # The front end (transforms/front_end.py), which both modes share.
    SourcePass("parse", front_end.parse),
    SourcePass("dead_branches", front_end.dead_branches),  # refusals raised when run
    SourcePass("state_writes", front_end.state_writes),  # self.n = ...: write_state(...)
    SourcePass("starred", front_end.starred),  # g(*xs): g(xs[0], xs[1])
    SourcePass("super", front_end.super_calls),  # super(): super(C, self)
    SourcePass("check", front_end.check),  # what autotrace supports (transforms/checks.py)
    SourcePass("dicts", front_end.dicts),  # dict methods (transforms/dict_methods.py)
    SourcePass("bind", front_end.bind),  # parameters, wrt, namespace, names, helpers
    SourcePass("out_arguments", front_end.out_arguments),  # np.sin(x, out=y)
    SourcePass("writes", front_end.writes),  # writes into arguments (transforms/inplace.py)
    SourcePass("replace_calls", front_end.replaced),  # dataclasses.replace(p, ...)
    SourcePass("varargs", front_end.varargs),  # calls of f(*args, **kwargs)
    SourcePass("segments", front_end.segments),  # checkpointed loops (checkpoint_every)
    SourcePass("lift", front_end.lift),  # nested functions (transforms/nested.py)
    SourcePass("accumulate", front_end.accumulate),  # accumulate(b, c): add(b, c)
    SourcePass("namedtuples", front_end.namedtuples),
    SourcePass("objects", front_end.objects),  # objects built (transforms/objects.py)
    SourcePass("lists", front_end.lists),  # list methods (transforms/list_methods.py)
    SourcePass("anf", front_end.anf),  # A-normal form (transforms/anf.py)
    SourcePass("exits", front_end.exits, REVERSE),  # break, continue, return: flags
    SourcePass("loop_tests", front_end.loop_tests, FORWARD),
    SourcePass("activity", front_end.activity),  # what carries gradient; refusals
    # The mode: reverse (transforms/reverse.py) or forward (transforms/forward.py).
    SourcePass("reverse", reverse, REVERSE),
    SourcePass("saves", saves, REVERSE),
    SourcePass("forward", forward, FORWARD),
    # Cleanup (transforms/cleanup.py), when optimized.
    SourcePass("constants", _constants, when=_optimized),
    SourcePass("dead_code", _dead_code, when=_optimized),
    SourcePass("temporaries", _temporaries, when=_optimized),
    SourcePass("empty_control_flow", _empty_control_flow, REVERSE, _optimized),
    SourcePass("dead_code", _dead_code, when=_optimized),  # what inlining left unread
    SourcePass("empty_control_flow", _empty_control_flow, REVERSE, _optimized),
    SourcePass("comments", _orphan_comments, REVERSE),  # comments left without code
    # The generated function (transforms/loading.py).
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
def reverse_function(func, wrt, *, session: Session, with_value: bool = False,
                     checkpoint_every: int | None = None, split: bool = False):
    """Generate and load the reverse-mode derivative of `func` (see the module docstring).

    wrt: a parameter index or name, or a tuple of those. The generated function takes func's
    parameters plus a keyword `dy` and returns the gradient (a tuple for a tuple `wrt`), or
    `(value, gradient)` when with_value. checkpoint_every: store the state of func's loops
    once every so many iterations, recomputing the others (transforms/segments.py).
    split: generate the derivative a caller runs in two halves, a generator that yields the
    value after the primal sweep and takes `dy` back (runtime/derivatives/sweeps.py).
    """
    outermost, session.outermost = session.outermost, False
    unit = run_passes(Unit(func, wrt, session, "reverse", "dy", checkpoint_every,
                           runs_once=outermost or split, outermost=outermost,
                           with_value=with_value, split=split))
    generated = unit.generated
    if unit.derivative_mode.split_calls:
        # It runs its callees' derivatives in halves, which a derivative of this derivative
        # cannot follow: that one differentiates the same function with each callee's
        # derivative called whole (transforms/parsing.py reads this).
        options = dict(with_value=with_value, checkpoint_every=checkpoint_every, split=split)
        generated.__autotrace_whole_calls__ = functools.cache(lambda: reverse_function(
            func, wrt, session=session.with_whole_calls(outermost), **options))
        # The one autotrace.function traces where a call in halves sat in a traced `if` or
        # loop: calls there run whole, the others still in halves.
        generated.__autotrace_top_calls__ = functools.cache(lambda: reverse_function(
            func, wrt, session=session.with_whole_calls(outermost, "top"), **options))
    return generated


@deferring_refusals
def forward_function(func, wrt, *, session: Session):
    """Generate and load the forward-mode derivative of `func`.

    The generated function takes func's parameters plus a keyword `tangent` (the tangent of the
    `wrt` argument, a tuple of them for a tuple `wrt`; default ones) and returns
    `(value, tangent of the value)`.
    """
    outermost, session.outermost = session.outermost, False
    return run_passes(Unit(func, wrt, session, "forward", "tangent",
                           outermost=outermost)).generated


def _shape_only(context) -> dict:
    """Helpers bound in generated code -> the argument positions they read only the shape of."""
    positions = {structure.zeros_like: (0,), structure.seed: (0,),
                 structure.implicit_seed: (0,), structure.match: (1,),
                 structure.match_for_caller: (1,),
                 items.item_gradient: (2,), adjoint_ops.unbroadcast: (1,),
                 adjoint_ops.unreduce: (1,), adjoint_ops.reduced_size: (0,),
                 sequences.concatenates: (0, 1), sequences.repeats: (0, 1),
                 sequences.first_items: (1,), sequences.last_items: (1,),
                 sequences.sum_copies: (1,), sequences.place_first: (1,),
                 sequences.place_last: (1,), sequences.copies: (1, 2),
                 sequences.append_zeros_like: (1,)}
    return {context.bound[id(f)]: p for f, p in positions.items() if id(f) in context.bound}


def _walk_statements(body):
    return list(cleanup._statements(body))


def _writes_its_object(body: list, parameters: list, wrt_names, result, namespace: dict) -> bool:
    """Whether the function writes into the state of its first parameter, with respect to
    which it is differentiated (a method's object), or calls a method of it, which may, and
    does not return it (whose gradient its caller then sends as that of the value)."""
    if not parameters or parameters[0] not in wrt_names or (
            isinstance(result, gast.Name) and result.id == parameters[0]):
        return False

    def of_the_object(node) -> bool:  # write_state(self, ...), self.method(...)
        target = node.args[0] if is_state_write(node, namespace) else (
            node.func.value if isinstance(node, gast.Call)
            and isinstance(node.func, gast.Attribute) else None)
        return isinstance(target, gast.Name) and target.id == parameters[0]
    return any(of_the_object(node) for statement in body for node in walk(statement))


register_builder("reverse", reverse_function)
register_builder("forward", forward_function)
