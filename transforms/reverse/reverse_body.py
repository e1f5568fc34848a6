"""The reverse-mode source passes (transforms/pipeline.py SOURCE_PASSES): the body of the
generated gradient function.

`reverse` runs reverse mode (transforms/reverse/reverse.py) over the function's body and puts the
sweeps together: the primal sweep, the value kept (with_value) or yielded (split), then the
adjoint sweep, seeded with the result's gradient, returning the gradients of wrt. `saves`
drops the saves the adjoint sweep needs not (optimized), starts the stacks and the names that
may be unassigned, and makes the body.
"""
from __future__ import annotations

import collections

import gast

from ..codegen.nodes import copy_tree
from ...runtime.derivatives import adjoint_ops as adjoint_ops
from ...runtime.derivatives import items as items
from ...runtime.derivatives import sequences as sequences
from ...runtime.derivatives import structure as structure
from ...runtime.derivatives.no_gradient import check_output
from ...runtime.state import deposit
from ...runtime.generated_source import TEMPORARY_NAME
from ...runtime.derivatives.sweeps import adjoint_sweep, primal_sweep
from ..codegen import cleanup
from ..codegen.restores import restore_from_names
from ..dynamic_calls import vjp_call
from ..front.front_end import Unit
from ..analysis.names_alike import names_bound_alike
from ..codegen.nodes import walk
from ..analysis.object_state import is_state_write
from .reverse import ReverseMode
from .name_scopes import recomputes, scope_call
from ..analysis.list_operators import SequenceKinds
from ..analysis.same_shapes import ShapeClasses
from .sweep_parts import COMMENT, SAVE, comment
from ..codegen.templates import name, replace


def reverse(unit: Unit) -> None:
    """Reverse mode (transforms/reverse/reverse.py): the primal sweep, then the adjoint sweep, which
    seeds the result's gradient and returns the gradients of wrt (and the value, with_value;
    a generator yielding the value between the sweeps, split)."""
    session, context, parameters = unit.session, unit.context, unit.parameters
    seed_name, namespace, wrt_names = unit.keyword, unit.namespace, unit.with_respect_to.names
    body, result, active = unit.body, unit.result, unit.active
    recompute_blocks = collections.Counter()
    for node in (n for s in body for n in walk(s)):
        if isinstance(node, gast.With) and recomputes(node, namespace) and \
                isinstance(scope_call(node).args[0], gast.Name):
            recompute_blocks[scope_call(node).args[0].id] += 1
    reverse = unit.derivative_mode = ReverseMode(context, active, parameters, unit.local_names)
    reverse.recompute_blocks = recompute_blocks
    reverse.carrying = unit.carrying
    reverse.sequences = SequenceKinds(body, parameters, namespace, active)
    reverse.array_names = reverse.sequences.array_names(body)
    reverse.shapes = ShapeClasses(body, namespace, reverse.sequences)
    reverse.same_objects = names_bound_alike(body, reverse.items_written)
    sweep = reverse.block(body)

    primal = list(sweep.primal)
    state = set()
    adjoint = []
    value_name = None
    if unit.with_value or unit.split:
        value_name = reverse.temporary("value")
        value = (copy_tree(result) if result is not None
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
    if unit.outermost and not unit.split and not (isinstance(result, gast.Name)
                                                  and result.id in active):
        # No gradient reaches the output: refused (at run time, where no seed is given) if it
        # is none to take (None, text, booleans, integers), as `seed` refuses one it reaches.
        primal += replace("check_output(result, dy)", check_output=context.helper(
            "check_output"), result=copy_tree(result) if result is not None else
            gast.Constant(value=None, kind=None), dy=seed_name)
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
    impure = {id(deposit), id(primal_sweep), id(adjoint_sweep), id(check_output)} | (
        {id(vjp_call)} if session.implicit else set())
    helper_identifiers = {v for k, v in context.bound.items()
                          if isinstance(k, int) and k not in impure}
    unit.pure = cleanup.purity(namespace, helper_identifiers | {COMMENT},
                               {v for k, v in context.bound.items() if k in impure})
    if session.optimized:
        restore_from_names(primal, adjoint, parameters, context.namer.temporary)
        undefined = cleanup.remove_unneeded_saves(primal, adjoint, _shape_only(context),
                                                  context.helper("shape_only"), namespace,
                                                  parameters)
    else:
        undefined = {getattr(s, SAVE)[0] for s in _walk_statements(primal)
                     if hasattr(s, SAVE) and getattr(s, SAVE)[2]}
    # (statements_in is lazy: the search stops at the first save, mostly near the start)
    uses_stack = any(hasattr(s, SAVE) for s in cleanup.statements_in(primal + adjoint))
    prologue = []
    if uses_stack:
        prologue += replace("stack = []", stack=reverse.stack)
    for stack in sorted(reverse.apart_stacks.values()):
        prologue += replace("stack = []", stack=stack)
    unit.started_as_none = frozenset((undefined | reverse.maybe_unassigned) - set(parameters))
    for undefined_name in sorted(unit.started_as_none):
        prologue += replace("name = None", name=undefined_name)
    unit.new_body = prologue + [comment("Primal sweep")] + primal + [
        comment("Adjoint sweep")] + adjoint
    temporaries = reverse.temporaries | {n for n in unit.local_names
                                         if TEMPORARY_NAME.fullmatch(n)}
    unit.temporaries = temporaries | {reverse.gradient_names[n] for n in reverse.gradient_names
                                      if n in temporaries}


def _shape_only(context) -> dict:
    """Helpers bound in generated code -> the argument positions they read only the shape (and
    the dtype) of."""
    positions = {structure.zeros_like: (0,), structure.seed: (0,), structure.cast_like: (1,),
                 structure.implicit_seed: (0,), structure.match: (1,),
                 structure.match_for_caller: (1,),
                 items.item_gradient: (2,), items.kept_by_write: (1,),
                 adjoint_ops.unbroadcast: (1,),
                 adjoint_ops.unreduce: (1,), adjoint_ops.reduced_size: (0,),
                 sequences.concatenates: (0, 1), sequences.repeats: (0, 1),
                 sequences.first_items: (1,), sequences.last_items: (1,),
                 sequences.sum_copies: (1,), sequences.place_first: (1,),
                 sequences.place_last: (1,), sequences.copies: (1, 2),
                 sequences.append_zeros_like: (1,)}
    return {context.bound[id(f)]: p for f, p in positions.items() if id(f) in context.bound}


def _walk_statements(body):
    return list(cleanup.statements_in(body))


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
