"""From a Python function to its generated derivative: the passes, in order.

    parse -> check supported -> dict methods -> check writes -> lift nested functions
          -> list methods
          -> A-normal form -> exits to flags -> activity -> reverse mode
          -> cleanup (when optimized) -> print -> load

The passes up to activity analysis, which forward mode shares, are transforms/front_end.py's
`prepare`; this module holds reverse mode (`reverse_function`), its cleanup, and the loading of
a generated function (`load_generated`), which forward mode shares too.

Set the environment variable AUTOTRACE_DEBUG to a pass name (or "all") to print the source
after that pass.
"""
from __future__ import annotations

import collections
import copy
import os
import functools
import re

import gast

import autotrace.runtime.derivatives.adjoint_ops as adjoint_ops
import autotrace.runtime.derivatives.items as items
import autotrace.runtime.derivatives.sequences as sequences
import autotrace.runtime.derivatives.structure as structure
from autotrace.transforms import cleanup
from .object_state import is_state_write
from ..runtime.derivatives.sweeps import adjoint_sweep, primal_sweep
from .dead_branches import deferring_refusals
from .forward import ForwardMode
from ..runtime.derivatives.state_writes import state_tangent
from .names_alike import names_bound_alike
from .scopes import recomputes, scope_call
from autotrace.runtime.state import deposit, reverse_derivative_code
from autotrace.transforms.calls import classify
from autotrace.transforms.codegen import to_source
from autotrace.transforms.dynamic_calls import vjp_call
from autotrace.transforms.front_end import Prepared, prepare
from autotrace.transforms.line_map import remember, user_lines
from autotrace.transforms.live_names import DEFAULT, default_argument
from autotrace.transforms.reverse import ReverseMode
from autotrace.transforms.sweeps import COMMENT, SAVE, comment
from autotrace.transforms.sequences import SequenceKinds
from autotrace.transforms.shapes import ShapeClasses
from autotrace.transforms.templates import name, replace
import autotrace.transforms.rules  # noqa: F401  (fills the rule registries)
from .nodes import walk
from .session import Session, register_builder

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
    prepared = prepare(func, wrt, session, "dy", exits=True,
                       checkpoint_every=checkpoint_every, runs_once=outermost or split,
                       outermost=outermost)
    location, parameters, wrt_names = prepared.location, prepared.parameters, prepared.wrt_names
    seed_name, namespace, context = prepared.keyword, prepared.namespace, prepared.context
    body, result, active = prepared.body, prepared.result, prepared.active
    local_names = prepared.local_names
    references, recompute_blocks = collections.Counter(), collections.Counter()
    for node in (n for s in body for n in walk(s)):  # (one walk for both)
        if isinstance(node, gast.Name):
            references[node.id] += 1
        elif isinstance(node, gast.With) and recomputes(node, namespace) and \
                isinstance(scope_call(node).args[0], gast.Name):
            recompute_blocks[scope_call(node).args[0].id] += 1
    reverse = ReverseMode(context, active, parameters, local_names, references)
    reverse.recompute_blocks = recompute_blocks
    reverse.carrying = prepared.carrying
    reverse.sequences = SequenceKinds(body, parameters, namespace, active)
    reverse.array_names = reverse.sequences.array_names(body)
    reverse.shapes = ShapeClasses(body, namespace, reverse.sequences)
    reverse.same_objects = names_bound_alike(body, reverse.item_written)
    sweep = reverse.block(body)

    primal = list(sweep.primal)
    state = set()
    adjoint = []
    value_name = None
    if with_value or split:
        value_name = reverse.temporary("value")
        value = (copy.deepcopy(result) if result is not None
                 else gast.Constant(value=None, kind=None))
        if any(getattr(s, SAVE, ("", ""))[1] == "item_push" for s in _walk_statements(primal)):
            # The adjoint sweep undoes `x[i] = ...` in place: keep the value from before it.
            value = gast.Call(func=name(context.helper("snapshot")), args=[value], keywords=[])
        primal += [gast.Assign(targets=[name(value_name, store=True)], value=value,
                               type_comment=None)]
    takes = _writes_its_object(body, parameters, wrt_names, result, namespace)
    after_name = None
    if split:  # the caller's primal sweep goes on from here, and sends back the gradient
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
        if split:
            adjoint += replace("dy, gradient = sent_gradients(dy, value)", dy=seed_name,
                               gradient=reverse.gradient(parameters[0]), value=parameters[0],
                               sent_gradients=context.helper("sent_gradients"))
        else:
            after_name = prepared.namer.fresh(reverse.gradient(parameters[0]) + "_after")
            adjoint += replace("gradient = sent_object_gradient(after, value)",
                               gradient=reverse.gradient(parameters[0]), after=after_name,
                               value=parameters[0],
                               sent_object_gradient=context.helper("sent_object_gradient"))
        state.add(parameters[0])
    if isinstance(result, gast.Name) and result.id in active:
        adjoint += reverse.line_comment(prepared.return_node)
        adjoint += replace("gradient = seed(result, dy)", gradient=reverse.gradient(result.id),
                           seed=context.helper("implicit_seed" if session.implicit else "seed"),
                           result=result.id, dy=seed_name)
        state.add(result.id)
    adjoint += sweep.adjoint(state)
    for state_name in prepared.state_names:
        if state_name in state:  # a global or closure variable holding Variables
            adjoint += replace("deposit(value, gradient)", deposit=context.helper("deposit"),
                               value=state_name, gradient=reverse.gradient(state_name))
    for parameter in wrt_names:
        if parameter not in state:
            adjoint += reverse.zeros(parameter)
    match = context.helper("match" if outermost else "match_for_caller")
    gradients = [gast.Call(func=name(match), args=[name(reverse.gradient(p)), name(p)],
                           keywords=[]) for p in wrt_names]
    returned_gradient = (gradients[0] if not isinstance(wrt, tuple)
                         else gast.Tuple(elts=gradients, ctx=gast.Load()))
    if outermost and len(gradients) > 1:  # arrays of the caller's own, as NumPy code gives
        returned_gradient = gast.Call(func=name(context.helper("fresh_gradients")),
                                      args=[returned_gradient], keywords=[])
    if with_value:
        returned_gradient = gast.Tuple(elts=[name(value_name), returned_gradient],
                                       ctx=gast.Load())
    adjoint.append(gast.Return(value=returned_gradient))

    uses_stack = any(hasattr(s, SAVE) for s in primal + adjoint for s in walk(s))
    undefined = set()
    # Helpers are pure, but for deposit, and, in implicit mode, vjp_call (whose callee may
    # deposit gradients though it returns none).
    impure = {id(deposit), id(primal_sweep), id(adjoint_sweep)} | (
        {id(vjp_call)} if session.implicit else set())
    helper_identifiers = {v for k, v in context.bound.items()
                          if isinstance(k, int) and k not in impure}
    pure = _is_pure(namespace, helper_identifiers | {COMMENT},
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
    new_body = prologue + [comment("Primal sweep")] + primal + [
        comment("Adjoint sweep")] + adjoint
    if session.optimized:
        temporaries = reverse.temporaries | {n for n in local_names if re.fullmatch(
            r"_(t|cond|list|dict|i|n)\d+", n)}
        temporaries |= {reverse.gradient_names[n] for n in reverse.gradient_names
                        if n in temporaries}
        cleanup.fold_constants(new_body)
        cleanup.remove_dead_code(new_body, pure, keep_names=set(parameters))
        cleanup.inline_temporaries(new_body, temporaries, pure)
        cleanup.remove_empty_control_flow(new_body)
        cleanup.remove_dead_code(new_body, pure, keep_names=set(parameters))
        cleanup.remove_empty_control_flow(new_body)  # what dead code left empty
    cleanup.remove_orphan_comments(new_body)

    generated = load_generated(prepared, func, new_body, "d",
                               f"Gradient of {location.name} with respect to "
                               f"{', '.join(wrt_names)} (generated by autotrace).",
                               reverse=True, after=after_name)
    if reverse.split_calls:
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
def forward_function(func, wrt, *, session):
    """Generate and load the forward-mode derivative of `func`.

    The generated function takes func's parameters plus a keyword `tangent` (the tangent of the
    `wrt` argument, a tuple of them for a tuple `wrt`; default ones) and returns
    `(value, tangent of the value)`.
    """
    outermost, session.outermost = session.outermost, False
    prepared = prepare(func, wrt, session, "tangent", exits=False, outermost=outermost)
    context = prepared.context
    body = prepared.body
    if not body or not isinstance(body[-1], gast.Return):
        body = body + [gast.Return(value=gast.Constant(value=None, kind=None))]
    forward = ForwardMode(context, prepared.active | set(prepared.wrt_names))
    forward.sequences = SequenceKinds(prepared.body, prepared.parameters, prepared.namespace,
                                      prepared.active)
    if outermost:  # the caller's own tangents: none of them is handed back as it is
        forward.fresh_tangent = context.helper("fresh_tangent")
    seeds = [name(forward.tangent(p), store=True) for p in prepared.wrt_names]
    values = [name(p) for p in prepared.wrt_names]
    single = not isinstance(wrt, tuple)
    prologue = replace("tangents = tangent_seed(values, tangent)",
                       tangents=seeds[0] if single else gast.Tuple(elts=seeds, ctx=gast.Store()),
                       tangent_seed=context.helper("tangent_seed"),
                       values=values[0] if single else gast.Tuple(elts=values, ctx=gast.Load()),
                       tangent=prepared.keyword)
    if outermost:  # the user's own arguments: no tangent of an integer (as grad's `match`)
        prologue = [statement for parameter in prepared.wrt_names
                    for statement in replace("refuse(value)", value=parameter,
                                             refuse=context.helper("refuse_integral_argument"))
                    ] + prologue
    # An argument left out of wrt has a zero tangent, which it needs in a variable once an
    # assignment (`x = x - a`, `x[0] = a`) makes it active.
    # So does an object read from a global whose state a method called on it writes into.
    outside = sorted(name for name in forward.active - prepared.local_names
                     if name in prepared.namespace)
    for parameter in [*prepared.parameters, *outside]:
        if parameter in forward.active and parameter not in prepared.wrt_names:
            prologue += replace("tangent = zeros_like(value)", tangent=forward.tangent(parameter),
                                zeros_like=context.helper("zeros_like"), value=parameter)
    new_body = prologue + forward.block(body)
    if session.optimized:
        # (state_tangent changes in place the tangent a caller passed: kept where unread)
        pure = _is_pure(prepared.namespace, set(context.bound.values()),
                        {n for n, v in prepared.namespace.items() if v is state_tangent})
        temporaries = forward.temporaries | {n for n in prepared.local_names
                                             if n.startswith("_t")}
        cleanup.fold_constants(new_body)
        cleanup.remove_dead_code(new_body, pure, keep_names=set(prepared.parameters))
        cleanup.inline_temporaries(new_body, temporaries, pure)
        cleanup.remove_dead_code(new_body, pure, keep_names=set(prepared.parameters))
    return load_generated(prepared, func, new_body, "f",
                          f"Forward derivative of {prepared.location.name} along "
                          f"{', '.join(prepared.wrt_names)} (generated by autotrace).")


def load_generated(prepared: Prepared, func, body: list, prefix: str, doc: str,
                   reverse: bool = False, after: str | None = None):
    """Define, print and load the generated function: func's parameters plus the keyword
    (and `after`, where a method's derivative takes the gradient of its object after the
    call by a keyword of that name: its `__autotrace_object_after__`)."""
    generated_name = prepared.namer.fresh(
        prefix + prepared.location.name.strip("<>_").replace("lambda", "f"))
    arguments = copy.deepcopy(prepared.function.args)
    added = [prepared.keyword] + ([after] if after is not None else [])
    arguments.kwonlyargs = arguments.kwonlyargs + [
        gast.Name(id=keyword, ctx=gast.Param(), annotation=None, type_comment=None)
        for keyword in added]
    arguments.kw_defaults = arguments.kw_defaults + [
        gast.Constant(value=None, kind=None) for _ in added]
    for argument in arguments.posonlyargs + arguments.args + arguments.kwonlyargs:
        argument.annotation = None
    body = _defaults_read_when_run(arguments, prepared, set(added)) + body
    definition = gast.FunctionDef(name=generated_name, args=arguments, body=body,
                                  decorator_list=[], returns=None, type_comment=None,
                                  type_params=[])
    source = _with_comments(to_source(definition))
    if "generated" in os.environ.get("AUTOTRACE_DEBUG", "").split(","):
        print(source)
    generated = prepared.namespace.load(source, generated_name, generated_name, checked=True)
    prepared.namespace.read_live(generated.__code__)  # globals, closure variables: live
    generated.__autotrace_source__ = source
    # Variables the user's own code sets to None: None in them is a value the code may test
    # (`if n is None:`), never a placeholder the derivative left unset (see if_stmt). The
    # front end's own temporaries (`_return1 = None` for an early return) are not the user's;
    # a derivative of a derivative takes the user's from the one it derives.
    temporaries = {f"{base}{index}" for base, count in prepared.namer.counters.items()
                   for index in range(1, count + 1)}
    generated.__autotrace_user_nones__ = getattr(func, "__autotrace_user_nones__", None)
    if generated.__autotrace_user_nones__ is None:
        generated.__autotrace_user_nones__ = frozenset(
            target.id for node in walk(prepared.function) if isinstance(node, gast.Assign)
            and isinstance(node.value, gast.Constant) and node.value.value is None
            for target in node.targets if isinstance(target, gast.Name)) - temporaries
    generated.__autotrace_lines__ = user_lines(definition, source, prepared.location.filename,
                                               func)
    generated.__autotrace_seed__ = prepared.keyword
    generated.__autotrace_object_after__ = after
    generated.__autotrace_primal__ = func
    remember(generated)  # errors while it is traced name the user's lines
    # What it reads when it runs, checked before a cache hands it out again.
    generated.__autotrace_namespaces__ = prepared.context.session.namespaces
    generated.__doc__ = doc
    if reverse:  # its adjoint sweep recomputes: Variables may not be assigned under it
        reverse_derivative_code.add(generated.__code__)
    return generated


def _defaults_read_when_run(arguments, prepared: Prepared, added: set) -> list:
    """Give each parameter with a default the default DEFAULT, and statements that read the
    primal's default when the derivative runs (a later `f.__defaults__ = ...` reaches it);
    not the keywords `added` that the primal has not."""
    positional = arguments.posonlyargs + arguments.args
    keywords = [(a, d) for a, d in zip(arguments.kwonlyargs, arguments.kw_defaults)
                if d is not None and a.id not in added]
    with_default = positional[len(positional) - len(arguments.defaults):] + [
        a for a, _ in keywords]
    if not with_default:
        return []
    context = prepared.context
    default = context.import_value("DEFAULT", DEFAULT)
    arguments.defaults = [name(default) for _ in arguments.defaults]
    arguments.kw_defaults = [name(default) if (a, d) in keywords else d
                             for a, d in zip(arguments.kwonlyargs, arguments.kw_defaults)]
    read, primal = (context.import_value("default_argument", default_argument),
                    context.import_value("primal", prepared.namespace.function))
    return [statement for parameter in with_default for statement in replace(
        "if parameter is DEFAULT:\n    parameter = read(primal, text)",
        parameter=parameter.id, DEFAULT=default, read=read, primal=primal,
        text=gast.Constant(value=parameter.id, kind=None))]


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


_COMMENT_LINE = re.compile(r"^(\s*)" + COMMENT + r"\((['\"])(.*)\2\)$")


def _with_comments(source: str) -> str:
    """Turn comment statements into `# ...` lines; a comment repeating the one before it at
    the same depth (the same user line again) is dropped."""
    lines = []
    last_comment = {}
    for line in source.splitlines():
        match = _COMMENT_LINE.match(line)
        indent = len(line) - len(line.lstrip())
        if match:
            text = match.group(3).encode().decode("unicode_escape")
            if last_comment.get(indent) == text:
                continue
            last_comment[indent] = text
            lines.append(match.group(1) + "# " + text)
        else:
            for deeper in [k for k in last_comment if k > indent]:
                del last_comment[deeper]
            lines.append(line)
    return "\n".join(lines) + "\n"


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
