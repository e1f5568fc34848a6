"""The front end every derivative shares, and the session it runs in.

`prepare` runs the passes of transforms/pipeline.py up to activity analysis: parse, check what
is supported, rewrite dict and list methods, follow writes into arguments, lift nested
functions, A-normal form, exits to flags; then it finds the names that carry gradient. Reverse
mode (transforms/pipeline.py `reverse_function`) and forward mode (transforms/forward.py)
start from what it returns (`Prepared`).

It runs in a `Session` (transforms/session.py); a `Context` binds the runtime helpers generated code calls (HELPERS), and the
derivatives it calls, to names in the namespace the code runs in.
"""
from __future__ import annotations

import copy
import functools
from dataclasses import dataclass, field

import gast
import numpy as np

import autotrace.runtime.derivatives.items as items
import autotrace.runtime.derivatives.structure as structure
from autotrace.transforms import cleanup
from autotrace.runtime.recompute import recompute_from
from autotrace.runtime.scopes import gradient_scope
from autotrace.runtime.state import deposit, holds_state, state_as_of, state_version
from ..runtime.derivatives.unpacking import apply_unpacked, merged_keywords
from .activity import STATE, active_names, varied_names
from .dead_branches import raise_when_run
from ..runtime.derivatives.state_writes import object_tangent, refuse_reads_of
from .state_aliases import method_may_write, refuse_stale_aliases
from .state_writes import (calls_changing_state, refuse_written_gradients,
                           rewrite_state_writes, settle_state_writes)
from autotrace.transforms.anf import normalize
from autotrace.transforms.calls import CustomGradient, FieldsOf, classify
from autotrace.transforms.checks import check_supported
from autotrace.transforms.custom import custom_caller
from autotrace.transforms.codegen import debug_source
from autotrace.transforms.dict_methods import rewrite_dict_methods
from autotrace.transforms.dynamic_calls import jvp_call, vjp_call, vjp_start
from ..runtime.derivatives.sweeps import (TakingObjectGradient, adjoint_sweep, primal_sweep,
                                          sent_gradients, sent_object_gradient)
from autotrace.transforms.exits import exits_to_flags
from autotrace.transforms.inplace import check_writes, follow_writes, refuse_shared_write
from .out_arguments import rewrite_out_arguments
from ..runtime.ops_index import checked_out, indexes_a_view
from ..runtime.derivatives.state_log import add_recomputed, state_as_at, state_writes_log
from autotrace.transforms.list_methods import rewrite_list_methods
from autotrace.transforms.live_names import LiveNamespace
from autotrace.transforms.naming import Namer, names_in, seed_keyword
from autotrace.transforms.nested import lift_nested_functions
from autotrace.transforms.segments import bind_checkpointed_calls, segment_loops
from .session import Session
from .object_state import check_calls, check_state_writes
from autotrace.transforms.objects import (check_constructions, explicit_super, objects_built,
                                          parse_fields_function, replace_calls)
from autotrace.transforms.parsing import parse_function, resolve
from autotrace.transforms.partials import check_partials, partial_caller
from autotrace.transforms.templates import name
from autotrace.transforms.varargs import calls_written_out, specialize_calls, spell_out_starred
import autotrace.transforms.rules  # noqa: F401  (fills the rule registries)
from . import unpacked_calls  # noqa: F401  (the rules of apply_unpacked)
from .nodes import walk


# The runtime helpers generated code may call, by the name it calls them.
HELPERS = {
    "zeros_like": structure.zeros_like, "add": structure.add,
    "accumulate": structure.accumulate, "seed": structure.seed,
    "implicit_seed": structure.implicit_seed,
    "match": structure.match, "match_for_caller": structure.match_for_caller,
    "fresh_gradients": structure.fresh_gradients, "fresh_tangent": structure.fresh_tangent,
    "accumulate_item": items.accumulate_item,
    "accumulate_attribute": items.accumulate_attribute,
    "attribute_tangent": items.attribute_tangent,
    "item_gradient": items.item_gradient, "clear_item": items.clear_item,
    "read_item": items.read_item, "restore_item": items.restore_item,
    "shape_only": items.shape_only, "build_namedtuple": items.build_namedtuple,
    "sequence": items.sequence, "sort_order": items.sort_order,
    "dict_items": items.dict_items,
    "dict_keys": items.dict_keys, "dict_values": items.dict_values,
    "astype": items.astype, "item": items.item, "snapshot": structure.snapshot,
    "checked_out": checked_out,
    "shallow_copy": items.shallow_copy,
    "tangent_seed": structure.tangent_seed, "tangent_like": structure.tangent_like,
    "refuse_integral_argument": structure.refuse_integral_argument,
    "like_container": structure.like_container, "deposit": deposit,
    "state_version": state_version, "state_as_of": state_as_of,
    "refuse_shared_write": refuse_shared_write,
    "check_state_writes": check_state_writes, "gradient_scope": gradient_scope,
    "recompute_from": recompute_from, "apply_unpacked": apply_unpacked,
    "merged_keywords": merged_keywords,
    "primal_sweep": primal_sweep, "adjoint_sweep": adjoint_sweep, "vjp_start": vjp_start,
    "sent_gradients": sent_gradients, "TakingObjectGradient": TakingObjectGradient,
    "sent_object_gradient": sent_object_gradient,
    "refuse_reads_of": refuse_reads_of, "object_tangent": object_tangent,
    "indexes_a_view": indexes_a_view,
    "state_writes_log": state_writes_log, "state_as_at": state_as_at,
    "add_recomputed": add_recomputed, "zero_seed": structure.zero_seed,
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
        """The identifier bound to func's derivative (`mode` "reverse", "split": reverse run
        in halves, or "forward")."""
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


def resolve_wrt(wrt, parameters: list, function_name: str) -> tuple:
    """`wrt` (an index, a name, or a tuple of those) as a tuple of parameter names."""
    items = wrt if isinstance(wrt, tuple) else (wrt,)
    names = []
    for item in items:
        if isinstance(item, bool) or not isinstance(item, (int, str)):
            raise TypeError(f"wrt must be a parameter index or name, or a tuple of those; "
                            f"got {item!r}")
        if isinstance(item, int):
            if not -len(parameters) <= item < len(parameters):
                raise ValueError(f"wrt={item} is out of range: {function_name} has "
                                 f"{len(parameters)} parameters {tuple(parameters)}")
            names.append(parameters[item])
        else:
            if item not in parameters:
                raise ValueError(f"wrt={item!r} is not a parameter of {function_name}; its "
                                 f"parameters are {tuple(parameters)}")
            names.append(item)
    return tuple(names)


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
class Prepared:
    """A function through the front end: parsed, checked, lifted, in A-normal form."""

    function: gast.FunctionDef
    location: object
    parameters: list
    wrt_names: tuple
    keyword: str
    namer: Namer
    namespace: dict
    context: Context
    body: list
    result: object
    local_names: set
    active: set
    return_node: object = None
    state_names: tuple = ()  # free names holding Variables (implicit mode)
    carrying: set = field(default_factory=set)  # names that carry gradient from values


def prepare(func, wrt, session: Session, keyword: str, exits: bool,
            checkpoint_every: int | None = None, runs_once: bool = True,
            outermost: bool = True) -> Prepared:
    """Run the passes every transform shares, up to activity analysis.

    keyword: the base name of the generated function's extra keyword (`dy`, `tangent`).
    exits: turn break/continue/early return into flags (reverse mode needs it).
    checkpoint_every: split loops into checkpointed segments of so many iterations
    (transforms/segments.py), or None. runs_once: the derivative runs func's primal sweep
    once per call of func (writes into objects' state are then made as Python makes them,
    transforms/state_writes.py). outermost: func is the function the user differentiates,
    not one it calls (whose caller does not see what it writes into objects' state).
    """
    custom = getattr(func, "__autotrace_python_function__", func)  # through a traced one
    if isinstance(custom, CustomGradient):  # grad(log1pexp) itself: derive a call of it
        func = custom_caller(custom)
    elif isinstance(func, functools.partial):  # its function, with the bound arguments
        func = partial_caller(func)
    if isinstance(func, FieldsOf):  # a constructor call: its __init__, building a dict
        parsed = parse_fields_function(func)
    else:
        parsed = parse_function(func)
    function = parsed.node
    location = parsed.location
    raise_when_run(function, location, parsed.namespace, session.refused_when_run)
    state_written = rewrite_state_writes(function, location, parsed.namespace, runs_once)
    spell_out_starred(function)  # g(*xs) with xs = (a, b): g(xs[0], xs[1])
    explicit_super(function, parsed.namespace)
    check_supported(function, location, parsed.namespace)
    rewrite_dict_methods(function, location, Namer(names_in(function)), parsed.namespace)
    debug_source("dicts", function)
    # A caller that checked its call of this function, or none: writes into arguments are
    # followed (its caller would not see them, and does not read them afterwards).
    called = (session.called or bool(session.namespaces)) and getattr(
        parsed.function, "__code__", None) not in session.checked_callees
    parameters = _parameter_names(function.args)
    keyword = seed_keyword(parsed.function, keyword)
    wrt_names = resolve_wrt(wrt, parameters, location.name)

    namespace = LiveNamespace(parsed)
    namespace.update(getattr(parsed, "generated_names", {}))  # of a fields function
    session.namespaces.append(namespace)
    for local in _own_local_names(function):  # a local shadows the global of its name
        namespace.pop(local, None)
    namer = Namer(names_in(function) | {keyword})
    namer.locals = set()
    numpy_name = next((k for k in ("np", "numpy", "onp") if namespace.get(k) is np), None)
    if numpy_name is None:
        numpy_name = namer.fresh("np")
        namespace[numpy_name] = np
    context = Context(session, namer, namespace, location, numpy_name)
    # np.sin(x, out=y): y[...] = checked_out(np.sin(x), y, 'sin'), a write followed as others
    rewrite_out_arguments(function, parsed.namespace, context.helper("checked_out"))
    shared_writes = check_writes(function, location, parsed.namespace, session.checked_callees)

    follow_writes(function, namespace, context.helper, shared_writes, location, called,
                  numpy_name)
    replace_calls(function, namespace, context.import_value)  # dataclasses.replace(p, ...)
    specialize_calls(function, namespace, resolve, namer)  # calls of f(*args, **kwargs)
    segment_loops(function, checkpoint_every, location, namer, context.helper)
    debug_source("segments", function)
    lift_nested_functions(function, location, namer, namespace)
    bind_checkpointed_calls(function, namespace, namer)
    debug_source("lift", function)
    _accumulate_as_add(function, namespace, context.helper)
    _namedtuples_built(function, namespace, context.helper)
    objects_built(function, namespace, context.import_value)
    rewrite_list_methods(function, location, namer, namespace, context.helper)
    debug_source("lists", function)
    normalize(function, location, namer, namespace, numpy_name, context.helper)
    debug_source("anf", function)
    if exits:
        exits_to_flags(function, namer)
        debug_source("exits", function)
    else:
        _attach_loop_tests(function.body)

    body = function.body
    result = return_node = None
    if exits and body and isinstance(body[-1], gast.Return):
        return_node = body[-1]
        result = return_node.value
        body = body[:-1]
    local_names = set(parameters) | {n.id for s in body for n in walk(s)
                                     if isinstance(n, gast.Name)
                                     and isinstance(n.ctx, gast.Store)}
    namer.locals = local_names
    returned = [gast.Return(value=result)] if result is not None else []
    seeds, reads_state, state_names = set(wrt_names), None, ()
    if session.implicit:
        state_names = _state_names(body + returned, local_names, namespace)
        seeds |= set(state_names) | {STATE}
        reads_state = _may_read_state(namespace)
    is_constant = _is_constant_call(namespace, session.implicit)
    changes = calls_changing_state(namespace, body)
    active = active_names(body + returned, seeds, is_constant, reads_state, changes)
    rebound = settle_state_writes(body, active, varied_names(body + returned, seeds,
                                                             is_constant, None, changes),
                                  wrt_names, local_names, namespace, namer, location,
                                  context.helper, outermost, state_written)
    if rebound:  # objects whose state a write changed: they carry gradient from there
        local_names = set(parameters) | {n.id for s in body for n in walk(s)
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
    def activity(constant):
        return active_names(body + returned, seeds, constant, reads_state, changes)
    check_constructions(body + returned, namespace, location, activity, is_constant)
    varied = varied_names(body + returned, seeds, is_constant, None, changes)
    refuse_written_gradients(body, location, state_written, varied, namespace)
    check_calls(body, location, varied, active, lambda func: classify(func, namespace),
                context.helper, namespace)
    check_partials(body + returned, location, namespace, activity, is_constant)
    return Prepared(function, location, parameters, wrt_names, keyword, namer, namespace,
                    context, body, result, local_names, active, return_node, state_names,
                    carrying)


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
            value=gast.Attribute(value=copy.deepcopy(node.func), attr="_field_defaults",
                                 ctx=gast.Load()),
            slice=gast.Constant(value=slot, kind=None), ctx=gast.Load())
            for slot in cls._fields]
        node.args = [node.func, gast.Tuple(elts=values, ctx=gast.Load())]
        node.keywords = []
        node.func = name(helper("build_namedtuple"))


def _own_local_names(function) -> set:
    """The parameters of `function` and the names it assigns, leaving out those of functions
    and lambdas defined inside it (their own scopes)."""
    names = set(_parameter_names(function.args))
    pending = list(function.body)
    while pending:
        node = pending.pop()
        if isinstance(node, (gast.FunctionDef, gast.AsyncFunctionDef, gast.ClassDef)):
            names.add(node.name)
            continue
        if isinstance(node, gast.Lambda):
            continue
        if isinstance(node, gast.Name) and isinstance(node.ctx, gast.Store):
            names.add(node.id)
        pending.extend(gast.iter_child_nodes(node))
    return names


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
    free = {n.id for s in body for n in walk(s) if isinstance(n, gast.Name)
            and isinstance(n.ctx, gast.Load) and n.id not in local_names}
    return tuple(sorted(n for n in free if n in namespace and holds_state(namespace[n])))


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
    for statement in cleanup._statements(body):
        if isinstance(statement, gast.While) and getattr(statement, "recompute", None):
            recompute = statement.recompute
            statement.body = _test_before_continue(statement.body, recompute) + recompute
            statement.recompute = []


def _test_before_continue(body, recompute) -> list:
    """`body` with the loop test recomputed before each of its own `continue`s."""
    out = []
    for statement in body:
        if isinstance(statement, gast.Continue):
            out += copy.deepcopy(recompute)
        elif isinstance(statement, gast.If):
            statement.body = _test_before_continue(statement.body, recompute)
            statement.orelse = _test_before_continue(statement.orelse, recompute)
        elif isinstance(statement, gast.With):  # a name scope
            statement.body = _test_before_continue(statement.body, recompute)
        out.append(statement)
    return out
