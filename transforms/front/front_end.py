"""The front end every derivative shares: the source passes up to activity analysis.

Each pass here is a function of the `Unit` going through the passes (the function being
transformed, and what the passes found out about it); transforms/pipeline.py SOURCE_PASSES
lists them in the order they run: parse, check what is supported, rewrite dict and list
methods, follow writes into arguments, lift nested functions, A-normal form, exits to flags,
and activity (the names that carry gradient). Reverse mode and forward mode start from there.

A unit is built in a `Session` (transforms/session.py); a `Context` binds the runtime helpers
generated code calls (HELPERS), and the derivatives it calls, to names in the namespace the
code runs in.
"""
from __future__ import annotations

import functools
from dataclasses import dataclass, field

import gast
import numpy as np

from ..codegen.nodes import copy_tree
from ...runtime.derivatives import items, structure, tangent_ops
from ...runtime.derivatives.given_checks import check_tangents
from ...runtime.derivatives.no_gradient import check_output
from ...runtime.derivatives.snapshots import (argument_snapshot, in_place_result,
                                              refuse_cast_in_place, refuse_read_only,
                                              snapshot)
from ...runtime.derivatives.state_log import add_recomputed, state_as_at, state_writes_log
from ...runtime.derivatives.state_writes import object_tangent, refuse_reads_of
from ...runtime.derivatives.sweeps import (TakingObjectGradient, adjoint_sweep, primal_sweep,
                                          sent_gradients, sent_object_gradient)
from ...runtime.derivatives.called_objects import (callee_gradient, callee_tangent,
                                                   with_callee_gradient)
from ...runtime.derivatives.random_states import random_states
from ...runtime.derivatives.unpacking import apply_unpacked, merged_keywords
from ...runtime.primitives.diagonal_fill import diagonal_index, diagonal_values
from ...runtime.primitives.index import indexes_a_view
from ...runtime.primitives.out_writes import checked_out, checked_out_item, masked_operand
from ...runtime.primitives.recompute_barrier import recompute_from
from ...runtime.scopes import gradient_scope
from ...runtime.held_state import holds_state
from ...runtime.state import deposit, state_as_of, state_version
from ..codegen import cleanup
from .. import rules  # noqa: F401  (fills the rule registries)
from ..reverse import unpacked_calls# noqa: F401  (the rules of apply_unpacked)
from ..analysis.activity import STATE, active_and_varied, active_names, varied_names
from .anf import normalize
from .list_arguments import convert_list_arguments
from ..analysis.call_results import names_that_may_hold_none
from ..analysis.calls import CustomGradient, FieldsOf, classify
from .checks import check_supported
from .custom_gradients import custom_caller
from .dead_branches import raise_when_run
from .dict_methods import may_change_dicts, rewrite_dict_methods
from ..dynamic_calls import jvp_call, vjp_call, vjp_start
from .exits import exits_to_flags
from .inplace import (check_writes, follow_writes, refuse_holding, refuse_moved_items,
                      refuse_shared_item, refuse_shared_write)
from .shared_items import refuse_shared_argument, refuse_shared_items
from .list_methods import rewrite_list_methods
from .method_receivers import check_array_method, is_array_method
from ..analysis.live_names import LiveNamespace
from ..codegen.naming import Namer, local_names, names_in, rename_local, seed_keyword
from .nested import lift_nested_functions
from ..codegen.nodes import nodes_of, walk
from ..analysis.object_state import check_calls, check_state_writes
from ..analysis.given_function_checks import check_functions_given, guard_functions_given
from ..analysis.reduced_writes import check_reduced_writes, guard_reduced_calls
from ..reverse.built_objects_and_super import (check_constructions, explicit_super, objects_built,
                      parse_fields_function, replace_calls)
from .out_arguments import rewrite_out_arguments
from .parsing import parse_function, resolve
from .partials import check_partials, partial_caller
from .python_versions import check_in_place_operators, replace_copy_calls
from .in_place_dunders import rewrite_in_place_dunders
from .class_reads import rewrite_class_reads
from .class_method_calls import rewrite_class_method_calls
from .segments import bind_checkpointed_calls, segment_loops
from ..session import Session
from ..analysis.state_aliases import method_may_write, refuse_stale_aliases
from ..analysis.given_state_writes import (call_changing_objects_by_method, calls_changing_state,
                                           refuse_written_gradients, rewrite_state_writes,
                                           settle_state_writes)
from ..codegen.templates import name
from .varargs import calls_written_out, specialize_calls, spell_out_starred
from .starred_targets import spell_out_starred_targets
from ..wrt import WithRespectTo


# The runtime helpers generated code may call, by the name it calls them.
HELPERS = {
    "zeros_like": structure.zeros_like, "add": structure.add,
    "accumulate": structure.accumulate, "seed": structure.seed,
    "implicit_seed": structure.implicit_seed, "check_output": check_output,
    "match": structure.match, "match_for_caller": structure.match_for_caller,
    "fresh_gradients": structure.fresh_gradients, "fresh_tangent": structure.fresh_tangent,
    "accumulate_item": items.accumulate_item,
    "accumulate_attribute": items.accumulate_attribute,
    "attribute_tangent": items.attribute_tangent,
    "callee_tangent": callee_tangent, "callee_gradient": callee_gradient,
    "with_callee_gradient": with_callee_gradient,
    "item_gradient": items.item_gradient, "clear_item": items.clear_item,
    "kept_by_write": items.kept_by_write,
    "read_item": items.read_item, "restore_item": items.restore_item,
    "note_kept": items.note_kept,
    "shape_only": items.shape_only, "build_namedtuple": items.build_namedtuple,
    "sequence": items.sequence, "sort_order": items.sort_order,
    "dict_items": items.dict_items,
    "dict_keys": items.dict_keys, "dict_values": items.dict_values,
    "astype": items.astype, "item": items.item, "snapshot": snapshot,
    "argument_snapshot": argument_snapshot,
    "refuse_read_only": refuse_read_only, "refuse_cast_in_place": refuse_cast_in_place,
    "in_place_result": in_place_result,
    "checked_out": checked_out, "checked_out_item": checked_out_item,
    "masked_operand": masked_operand, "where": np.where,
    "diagonal_index": diagonal_index, "diagonal_values": diagonal_values,
    "shallow_copy": items.shallow_copy,
    "tangent_seed": tangent_ops.tangent_seed, "tangent_like": tangent_ops.tangent_like,
    "read_as_array": tangent_ops.read_as_array,
    "refuse_integral_argument": structure.refuse_integral_argument,
    "check_tangents": check_tangents,
    "like_container": structure.like_container, "deposit": deposit,
    "state_version": state_version, "state_as_of": state_as_of,
    "refuse_shared_write": refuse_shared_write, "refuse_shared_item": refuse_shared_item,
    "refuse_holding": refuse_holding, "refuse_moved_items": refuse_moved_items,
    "refuse_shared_items": refuse_shared_items, "refuse_shared_argument": refuse_shared_argument,
    "check_state_writes": check_state_writes, "gradient_scope": gradient_scope,
    "check_functions_given": check_functions_given,
    "recompute_from": recompute_from, "apply_unpacked": apply_unpacked,
    "merged_keywords": merged_keywords, "random_states": random_states,
    "primal_sweep": primal_sweep, "adjoint_sweep": adjoint_sweep, "vjp_start": vjp_start,
    "sent_gradients": sent_gradients, "TakingObjectGradient": TakingObjectGradient,
    "sent_object_gradient": sent_object_gradient,
    "refuse_reads_of": refuse_reads_of, "object_tangent": object_tangent,
    "indexes_a_view": indexes_a_view,
    "state_writes_log": state_writes_log, "state_as_at": state_as_at,
    "add_recomputed": add_recomputed, "zero_seed": structure.zero_seed,
    "is_array_method": is_array_method, "check_array_method": check_array_method,
    "check_reduced_writes": check_reduced_writes,
}


@dataclass
class Context:
    """What the reverse-mode pass needs to know about the function being transformed."""

    session: "Session"
    namer: Namer
    namespace: dict
    location: object
    numpy_name: str
    bound: dict = field(default_factory=dict)

    def import_value(self, hint: str, value) -> str:
        """The identifier under which `value` is visible to generated code."""
        key = id(value)
        if key in self.bound:
            return self.bound[key]
        # A global keeps its name unless a local of the generated code (the user's, or one
        # the transform made: the tangent `dX` of X) has it, which would hide it.
        if self.namespace.get(hint, _ABSENT) is value and hint not in self.namer.locals \
                and hint not in self.namer.handed_out:
            identifier = hint
            self.namer.taken.add(hint)  # so that no tangent made later hides it (`deposit`)
        else:
            identifier = self.namer.fresh(hint)
            self.namespace[identifier] = value
        self.bound[key] = identifier
        return identifier

    def helper(self, helper_name: str) -> str:
        if helper_name == "vjp_call":
            return self.import_value("vjp_call", vjp_call)
        if helper_name == "jvp_call":
            return self.import_value("jvp_call", jvp_call)
        return self.import_value(helper_name, HELPERS[helper_name])

    @staticmethod
    def seed_keyword(func, keyword: str = "dy") -> str:
        return seed_keyword(func, keyword)

    def derive(self, func, wrt: tuple, mode: str = "reverse") -> str:
        """The identifier bound to func's derivative with respect to the positions and
        keywords `wrt` of a call of it (`mode` "reverse", "split": reverse run in halves, or
        "forward")."""
        wrt = WithRespectTo.of(wrt)
        key = (mode, func, wrt)
        if key in self.bound:
            return self.bound[key]
        prefix = "f" if mode == "forward" else "d"
        identifier = self.namer.fresh(prefix + getattr(func, "__name__", "f").strip("_<>"))
        self.bound[key] = identifier
        self.session.bind_derivative(func, wrt, self.namespace, identifier, mode)
        return identifier


_ABSENT = object()


def _parameter_names(arguments) -> list:
    return [a.id for a in arguments.posonlyargs + arguments.args + arguments.kwonlyargs]


def _is_constant_call(namespace, implicit: bool = False):
    def is_constant(call) -> bool:
        resolved = classify(call.func, namespace)
        if implicit and isinstance(resolved.value, type) and \
                resolved.value.__module__ != "builtins" and \
                not resolved.value.__module__.startswith("numpy"):
            # An object built from Variables: its attributes are read later, and hand the
            # Variables their gradients then (implicit mode); it is no constant.
            return False
        return resolved.kind == "constant"
    return is_constant


@dataclass
class Unit:
    """A function going through the source passes (transforms/pipeline.py SOURCE_PASSES), and
    what they have made of it so far. The driver fills in the first fields; each pass reads
    and sets the others.

    mode: "reverse" or "forward". keyword: the base name of the generated function's extra
    keyword (`dy`, `tangent`), then the one it takes. checkpoint_every: split loops into
    checkpointed segments of so many iterations (transforms/front/segments.py), or None. runs_once:
    the derivative runs func's primal sweep once per call of func (writes into objects'
    state are then made as Python makes them, transforms/analysis/given_state_writes.py). outermost: func is
    the function the user differentiates, not one it calls (whose caller does not see what
    it writes into objects' state). with_value, split: as reverse_function takes them.
    """

    func: object
    with_respect_to: WithRespectTo  # as given; the bind pass resolves it (names, positions)
    session: Session
    mode: str
    keyword: str
    checkpoint_every: int | None = None
    runs_once: bool = True
    outermost: bool = True
    with_value: bool = False
    split: bool = False
    # The front end's (transforms/front/front_end.py):
    parsed: object = None
    function: gast.FunctionDef = None
    location: object = None
    state_written: object = None
    called: bool = False
    parameters: list = None
    namer: Namer = None
    namespace: dict = None
    numpy_name: str = None
    context: Context = None
    body: list = None
    result: object = None
    return_node: object = None
    local_names: set = None
    active: set = None
    state_names: tuple = ()  # free names holding Variables (implicit mode)
    carrying: set = field(default_factory=set)  # names that carry gradient from values
    # The mode's (transforms/reverse/reverse_body.py, forward_body.py) and cleanup's:
    derivative_mode: object = None  # the ReverseMode or ForwardMode that differentiated it
    primal: list = None  # reverse mode's primal sweep
    adjoint: list = None  # and adjoint sweep
    new_body: list = None  # the generated function's body
    pure: object = None  # pure(expression): whether cleanup may drop or move it
    temporaries: set = None  # names cleanup may inline
    set_to_none: frozenset = frozenset()  # names the user's code sets to None (`n = None`)
    may_hold_none: frozenset = frozenset()  # and those it may set to None (`n = g()`)
    started_as_none: frozenset = frozenset()  # names a reverse derivative sets to None first
    after: str | None = None  # the keyword taking the object's gradient after the call
    # parameters read as their default's module, and the fallback's build (module_defaults.py)
    module_defaults: tuple | None = None
    # The last passes' (transforms/codegen/loading.py):
    generated_name: str = None
    definition: gast.FunctionDef = None  # the generated function's
    source: str = None  # the generated function's, as printed and loaded
    generated: object = None  # the loaded function


def parse(unit: Unit) -> None:
    """Read func's source (a custom gradient's: a call of it; a partial's: its function with
    the bound arguments; a constructor's fields: its __init__ building a dict)."""
    func = unit.func
    custom = getattr(func, "__autotrace_python_function__", func)  # through a traced one
    if isinstance(custom, CustomGradient):  # grad(log1pexp) itself: derive a call of it
        func = custom_caller(custom)
    elif isinstance(func, functools.partial):  # its function, with the bound arguments
        func = partial_caller(func)
    if isinstance(func, FieldsOf):  # a constructor call: its __init__, building a dict
        unit.parsed = parse_fields_function(func)
    else:
        unit.parsed = parse_function(func)
    unit.function = unit.parsed.node
    unit.location = unit.parsed.location


def in_place_dunders(unit: Unit) -> None:
    rewrite_class_method_calls(unit.function, unit.parsed.namespace)  # np.ndarray.sort(a)
    rewrite_in_place_dunders(unit.function, unit.location)  # a.__iadd__(x): a += x
    replace_copy_calls(unit.function, unit.parsed.namespace)  # copy.copy(x): copied(x)
    if unit.session.implicit:  # type(self).w: self.__class__.w, whose Variable gets its gradient
        rewrite_class_reads(unit.function, unit.parsed.namespace, unit.location)


def dead_branches(unit: Unit) -> None:
    raise_when_run(unit.function, unit.location, unit.parsed.namespace,
                   unit.session.refused_when_run)


def state_writes(unit: Unit) -> None:
    unit.state_written = rewrite_state_writes(unit.function, unit.location,
                                              unit.parsed.namespace, unit.runs_once)


def starred(unit: Unit) -> None:
    spell_out_starred_targets(unit.function)  # a, *rest = xs: indexing (starred_targets.py)
    spell_out_starred(unit.function)  # g(*xs) with xs = (a, b): g(xs[0], xs[1])


def super_calls(unit: Unit) -> None:
    explicit_super(unit.function, unit.parsed.namespace)


def check(unit: Unit) -> None:
    check_supported(unit.function, unit.location, unit.parsed.namespace, unit.session.implicit)


def dicts(unit: Unit) -> None:
    if not may_change_dicts(unit.function):  # (no dict built, and no method of one called)
        return
    rewrite_dict_methods(unit.function, unit.location, Namer(names_in(unit.function)),
                         unit.parsed.namespace)


def bind(unit: Unit) -> None:
    """The parameters, wrt, the keyword, the namespace generated code runs in, its namer and
    the context that binds helpers there."""
    function, parsed, session = unit.function, unit.parsed, unit.session
    # A caller that checked its call of this function, or none: writes into arguments are
    # followed (its caller would not see them, and does not read them afterwards).
    unit.called = (session.called or bool(session.namespaces)) and getattr(
        parsed.function, "__code__", None) not in session.checked_callees
    unit.parameters = _parameter_names(function.args)
    unit.keyword = seed_keyword(parsed.function, unit.keyword)
    if unit.keyword in names_in(function):  # a local of f's: renamed, so that `dy=` works
        rename_local(function, unit.keyword, Namer(names_in(function)).fresh(unit.keyword))
    unit.with_respect_to = unit.with_respect_to.resolve(unit.parameters, unit.location.name)

    namespace = unit.namespace = LiveNamespace(parsed)
    namespace.update(getattr(parsed, "generated_names", {}))  # of a fields function
    session.namespaces.append(namespace)
    # a local variable shadows the global (or builtin) of its name
    namespace.shadowed = local_names(function.args, function.body)
    for local in namespace.shadowed:
        namespace.pop(local, None)
    namer = unit.namer = Namer(names_in(function) | {unit.keyword})
    namer.locals = set()
    numpy_name = next((k for k in ("np", "numpy", "onp") if namespace.get(k) is np), None)
    if numpy_name is None:
        numpy_name = namer.fresh("np")
        namespace[numpy_name] = np
    unit.numpy_name = numpy_name
    unit.context = Context(session, namer, namespace, unit.location, numpy_name)


def out_arguments(unit: Unit) -> None:
    # np.sin(x, out=y): y[...] = checked_out(np.sin(x), y, 'sin'), a write followed as others
    location = unit.location
    rewrite_out_arguments(unit.function, unit.parsed.namespace, unit.context.helper,
                          lambda statement: (location.filename, location.line_of(statement)),
                          unit.namer.temporary)


def writes(unit: Unit) -> None:
    shared_writes = check_writes(unit.function, unit.location, unit.parsed.namespace,
                                 unit.session.checked_callees)
    follow_writes(unit.function, unit.namespace, unit.context.helper, shared_writes,
                  unit.location, unit.called, unit.numpy_name, unit.namer.fresh)


def replaced(unit: Unit) -> None:
    replace_calls(unit.function, unit.namespace, unit.context.import_value)  # dataclasses'


def varargs(unit: Unit) -> None:
    specialize_calls(unit.function, unit.namespace, resolve, unit.namer)  # f(*args, **kw)


def segments(unit: Unit) -> None:
    segment_loops(unit.function, unit.checkpoint_every, unit.location, unit.namer,
                  unit.context.helper, unit.namespace)


def lift(unit: Unit) -> None:
    lift_nested_functions(unit.function, unit.location, unit.namer, unit.namespace)
    bind_checkpointed_calls(unit.function, unit.namespace, unit.namer)


def accumulate(unit: Unit) -> None:
    _accumulate_as_add(unit.function, unit.namespace, unit.context.helper)


def namedtuples(unit: Unit) -> None:
    _namedtuples_built(unit.function, unit.namespace, unit.context.helper)


def objects(unit: Unit) -> None:
    objects_built(unit.function, unit.namespace, unit.context.import_value)


def lists(unit: Unit) -> None:
    rewrite_list_methods(unit.function, unit.location, unit.namer, unit.namespace,
                         unit.context.helper)


def anf(unit: Unit) -> None:
    normalize(unit.function, unit.location, unit.namer, unit.namespace, unit.numpy_name,
              unit.context.helper)
    # read before the mode's passes rewrite its statements (transforms/codegen/loading.py)
    unit.set_to_none, unit.may_hold_none = names_that_may_hold_none(unit.function, unit.namespace)


def list_arguments(unit: Unit) -> None:
    convert_list_arguments(unit.function, unit.parameters, unit.namespace, unit.namer,
                           unit.numpy_name)


def exits(unit: Unit) -> None:
    exits_to_flags(unit.function, unit.namer)


def loop_tests(unit: Unit) -> None:
    _attach_loop_tests(unit.function.body)


def activity(unit: Unit) -> None:
    """Find the names that carry gradient (`active`), settle writes into objects' state, and
    refuse what cannot be differentiated right (see the passes it calls)."""
    function, namespace, namer = unit.function, unit.namespace, unit.namer
    location, session, parameters = unit.location, unit.session, unit.parameters
    wrt_names = unit.with_respect_to.names
    body = function.body
    result = return_node = None
    if unit.mode == "reverse" and body and isinstance(body[-1], gast.Return):
        return_node = body[-1]  # the one return exits_to_flags left, last
        result = return_node.value
        body = body[:-1]
    local_names = set(parameters) | {n.id for s in body for n in nodes_of(s)
                                     if isinstance(n, gast.Name)
                                     and isinstance(n.ctx, gast.Store)}
    namer.locals = local_names
    returned = [gast.Return(value=result)] if result is not None else []
    seeds, reads_state, state_names = set(wrt_names), None, ()
    if session.implicit:
        state_names = _state_names(body + returned, local_names, namespace) + \
            _state_defaults(function.args, namespace, wrt_names)
        seeds |= set(state_names) | {STATE}
        reads_state = _may_read_state(namespace)
    is_constant = _is_constant_call(namespace, session.implicit)
    changes = calls_changing_state(namespace, body)
    call_changing_objects_by_method(body + returned, changes)
    if reads_state is None:
        active, varied = active_and_varied(body + returned, seeds, is_constant, changes)
    else:
        active = active_names(body + returned, seeds, is_constant, reads_state, changes)
        varied = varied_names(body + returned, seeds, is_constant, None, changes)
    rebound = settle_state_writes(body, active, varied,
                                  wrt_names, local_names, namespace, namer, location,
                                  unit.context.helper, unit.outermost,
                                  unit.state_written)
    if rebound:  # objects whose state a write changed: they carry gradient from there
        local_names = set(parameters) | {n.id for s in body for n in nodes_of(s)
                                         if isinstance(n, gast.Name)
                                         and isinstance(n.ctx, gast.Store)}
        namer.locals = local_names
        # An object differentiated with respect to, whose state the function writes, is an
        # output too: its caller may read back what was written (runtime/derivatives/
        # sweeps.py `adjoint_sweep`), whose gradient then reaches what it was made from.
        outputs = returned + [gast.Return(value=gast.Name(id=parameter, ctx=gast.Load(),
                                                          annotation=None, type_comment=None))
                              for parameter in sorted(set(rebound) & set(wrt_names))]
        active = active_names(body + outputs, seeds, is_constant, reads_state,
                              changes) | rebound
        refuse_stale_aliases(body, rebound, location, namespace, method_may_write(namespace))
    # Objects whose methods pass gradient to their self: built from values that carry it,
    # not merely reached by calls that may read Variables (whose results are no such objects).
    carrying = active if reads_state is None else active_names(
        body + returned, set(wrt_names) | set(state_names), is_constant, None, changes)

    def active_with(constant):  # the names active where `constant` tells constant calls
        return active_names(body + returned, seeds, constant, reads_state, changes)
    check_constructions(body + returned, namespace, location, active_with, is_constant)
    varied = varied_names(body + returned, seeds, is_constant, None, changes)
    refuse_written_gradients(body, location, unit.state_written, varied, namespace)
    check_calls(body, location, varied, active, lambda func: classify(func, namespace),
                unit.context.helper, namespace, returned)
    guard_functions_given(body, returned, location, lambda func: classify(func, namespace),
                          unit.context.helper, namespace, varied, active)
    guard_reduced_calls(body, location, varied, active, lambda func: classify(func, namespace),
                        unit.context.helper, local_names, namespace)
    check_partials(body + returned, location, namespace, active_with, is_constant)
    check_in_place_operators(body + returned, location, namespace, namer.fresh)
    unit.body, unit.result, unit.return_node = body, result, return_node
    unit.local_names, unit.active = local_names, active
    unit.state_names, unit.carrying = state_names, carrying


def _namedtuples_built(function, namespace: dict, helper) -> None:
    """`P(a, b=c)` with P a namedtuple class becomes `build_namedtuple(P, (a, c))`, the values
    in field order (defaults filled in), so that its fields carry gradient."""
    for node in calls_written_out(function):
        cls = resolve(node.func, namespace)
        if not (isinstance(cls, type) and issubclass(cls, tuple) and hasattr(cls, "_fields")):
            continue
        given = dict(zip(cls._fields, node.args))
        given.update((k.arg, k.value) for k in node.keywords)
        defaults = getattr(cls, "_field_defaults", {})
        if len(node.args) > len(cls._fields) or set(given) - set(cls._fields) or any(
                slot not in given and slot not in defaults for slot in cls._fields):
            continue  # a call Python would refuse: leave it to raise as it does
        values = [given[slot] if slot in given else gast.Subscript(
            value=gast.Attribute(value=copy_tree(node.func), attr="_field_defaults",
                                 ctx=gast.Load()),
            slice=gast.Constant(value=slot, kind=None), ctx=gast.Load())
            for slot in cls._fields]
        node.args = [node.func, gast.Tuple(elts=values, ctx=gast.Load())]
        node.keywords = []
        node.func = name(helper("build_namedtuple"))


def _accumulate_as_add(function, namespace: dict, helper) -> None:
    """In generated code being differentiated again, `b = accumulate(b, c)` becomes
    `b = add(b, c)`: normalizing splits the statement (`_t1 = accumulate(b, c)`, then
    `b = _t1`), and the derivative may save or read b's old value in between, which an
    in-place sum would have changed."""
    for node in walk(function):
        if (isinstance(node, gast.Call) and isinstance(node.func, gast.Name)
                and namespace.get(node.func.id) is structure.accumulate):
            node.func = name(helper("add"))


def _state_names(body, local_names: set, namespace: dict) -> tuple:
    """The globals and closure variables the body reads that hold Variables."""
    free = {n.id for s in body for n in nodes_of(s) if isinstance(n, gast.Name)
            and isinstance(n.ctx, gast.Load) and n.id not in local_names}
    return tuple(sorted(n for n in free if n in namespace and holds_state(namespace[n])))


def _state_defaults(arguments, namespace: dict, wrt_names) -> tuple:
    """The parameters not differentiated with respect to whose defaults hold Variables
    (`def f(x, w=w0)`, a partial's bound keyword): the value they are called with, the
    default or what the caller passed without gradient, gets its gradient here."""
    positional = arguments.posonlyargs + arguments.args
    pairs = list(zip(positional[len(positional) - len(arguments.defaults):],
                     arguments.defaults)) + list(zip(arguments.kwonlyargs,
                                                     arguments.kw_defaults))
    return tuple(parameter.id for parameter, default in pairs
                 if isinstance(default, gast.Name) and parameter.id not in wrt_names
                 and default.id in namespace and holds_state(namespace[default.id]))


def _may_read_state(namespace):
    """Calls that may read Variables they are not passed: of user functions and objects."""
    def reads(call) -> bool:
        resolved = classify(call.func, namespace)
        if isinstance(resolved.value, FieldsOf):
            return False  # builds an object from its arguments alone
        return resolved.kind in ("user", "dynamic") or getattr(
            resolved.value, "__autotrace_reads_state__", False)
    return reads


def _attach_loop_tests(body) -> None:
    """Put each while loop's test back at the end of its body (exits_to_flags does this when
    it runs; a `continue` there would skip it, but forward mode keeps jumps as they are)."""
    for statement in cleanup.statements_in(body):
        if isinstance(statement, gast.While) and getattr(statement, "recompute", None):
            recompute = statement.recompute
            statement.body = _test_before_continue(statement.body, recompute) + recompute
            statement.recompute = []


def _test_before_continue(body, recompute) -> list:
    """`body` with the loop test recomputed before each of its own `continue`s."""
    out = []
    for statement in body:
        if isinstance(statement, gast.Continue):
            out += copy_tree(recompute)
        elif isinstance(statement, gast.If):
            statement.body = _test_before_continue(statement.body, recompute)
            statement.orelse = _test_before_continue(statement.orelse, recompute)
        elif isinstance(statement, gast.With):  # a name scope
            statement.body = _test_before_continue(statement.body, recompute)
        out.append(statement)
    return out
