"""Functions with custom gradients, rewritten into two plain functions the transforms can read.

A custom-gradient function ends with `return value, grad_fn`, where grad_fn is a nested def or
lambda that may read the function's other variables. From its source this module makes

    def log1pexp__value(x):            def log1pexp__vjp(x, dy):
        e = np.exp(x)                      e = np.exp(x)
        ...                                def grad_fn(dy): ...
        return np.log(1 + e)               return grad_fn(dy)

Both modes run the first for the value. Reverse mode calls the second for the gradient;
forward mode takes the gradient of the second in dy, seeded with the tangents (grad_fn is
linear in dy, so that is the Jacobian times the tangents), and so agrees with reverse mode.
Both are ordinary source, so derivatives of any order go through them: grad_fn is called
directly, and the variables it reads become its arguments when it is lifted.

A custom_vjp function (CustomVJP) gets the same two twins, written around its rules:

    def f__value(x, y):                 def f__vjp(x, y, dy):
        return f__fwd(x, y)[0]              gradients = f__bwd(f__fwd(x, y)[1], dy)
                                            f__check(gradients)
                                            d_x = gradients[0]
                                            if d_x is None:         # bwd's None: zeros
                                                d_x = no_gradient(x)
                                            ... (d_y the same)
                                            return d_x, d_y

(with nondiff_argnums=(1,), bwd takes y first, `f__bwd(y, f__fwd(x, y)[1], dy)`, and gives
x's gradient alone; y's is no_gradient(y))

and forward mode refuses it. A custom_jvp function (CustomJVP) runs itself for its value in
reverse mode, and its rule for the tangent in forward mode; reverse mode transposes the
rule's tangent, `f__tangent(x, y, tx, ty)`, linear in the tangents, by differentiating it in
them (reverse_calls.py `custom_jvp_adjoint`): `transposed_tangents` runs that derivative, and
refuses a rule whose tangent is not linear, which no transposition can follow.
"""
from __future__ import annotations

import gast

import numpy as np

from ..codegen.nodes import copy_tree
from ...runtime.derivatives.given_checks import check_like
from ...runtime.derivatives.structure import carries_gradient, ones_like, zeros_like
from ...runtime.derivatives.tree_gradients import (is_dataclass_instance, map_fields, node_of,
                                                   registered)
from ..analysis.calls import CustomJVP, CustomVJP
from ..codegen.codegen import load_function, to_source
from ..errors import Location
from ..analysis.live_names import LiveNamespace
from .parsing import parse_function
from .partials import caller_location
from ..codegen.nodes import walk
from ..rules.core import constant


def _split_return(definition: gast.FunctionDef, location: Location):
    last = definition.body[-1] if definition.body else None
    returns = [n for n in walk(definition) if isinstance(n, gast.Return)
               and n is not last and not _inside_nested(definition, n)]
    if (not isinstance(last, gast.Return) or not isinstance(last.value, gast.Tuple)
            or len(last.value.elts) != 2 or returns):
        raise location.error(
            last or definition, "a custom_gradient function must end with a single "
            "`return value, grad_fn`", "custom_gradient")
    return last.value.elts


def _inside_nested(definition, node) -> bool:
    for inner in walk(definition):
        if inner is not definition and isinstance(inner, (gast.FunctionDef, gast.Lambda)):
            if any(n is node for n in walk(inner)):
                return True
    return False


def _check_parameters(parsed, kind: str = "custom_gradient") -> None:
    arguments = parsed.node.args
    if arguments.vararg is not None or arguments.kwarg is not None or arguments.kwonlyargs:
        rule = {"custom_gradient": "its grad_fn returns", "custom_vjp": "its bwd returns",
                "custom_jvp": "its jvp takes"}[kind]
        raise parsed.location.error(
            parsed.node, f"a {kind} function takes positional parameters only (no "
            f"*args, keyword-only parameters or **kwargs): {rule} one gradient "
            "per parameter, in order", kind)


def check_call(custom, call, location, node) -> None:
    """Refuse a call of a custom-gradient function with keyword arguments: its derivatives
    pass the arguments and the seed by position, and grad_fn's gradients come in the
    parameters' order."""
    if call.keywords:
        passed = ", ".join(k.arg or "**" + to_source(k.value).strip() for k in call.keywords)
        kind = kind_of(custom)
        label = getattr(custom, "__name__", f"the {kind} function")
        rule = {"custom_gradient": "the grad_fn of a custom_gradient function returns",
                "custom_vjp": "the bwd rule of a custom_vjp function returns",
                "custom_jvp": "the jvp rule of a custom_jvp function takes"}[kind]
        raise location.error(
            node, f"pass {passed} to {label} by position: {rule} the gradients of its "
            "parameters in order", kind)


def custom_functions(custom):
    """`(value_function, vjp_function)` for a CustomGradient object (made once, then kept);
    for a custom_jvp function, `(the function itself, tangent_function)` (see the module
    docstring)."""
    made = getattr(custom, "_autotrace_functions", None)
    if made is not None:
        return made
    if isinstance(custom, (CustomVJP, CustomJVP)):
        custom._autotrace_functions = _rule_functions(custom)
        return custom._autotrace_functions
    parsed = parse_function(custom.function)
    definition, location = parsed.node, parsed.location
    _check_parameters(parsed)
    value, grad_fn = _split_return(definition, location)
    namespace = LiveNamespace(parsed)
    base = definition.name

    value_definition = copy_tree(definition)
    value_definition.name = f"{base}__value"
    value_definition.body[-1] = gast.copy_location(gast.Return(value=copy_tree(value)),
                                                   definition.body[-1])

    vjp_definition = copy_tree(definition)
    vjp_definition.name = f"{base}__vjp"
    seed = "dy"
    taken = {n.id for n in walk(definition) if isinstance(n, gast.Name)}
    while seed in taken:
        seed += "_"
    vjp_definition.args.args = vjp_definition.args.args + [
        gast.Name(id=seed, ctx=gast.Param(), annotation=None, type_comment=None)]
    call = gast.Call(func=copy_tree(grad_fn),
                     args=[gast.Name(id=seed, ctx=gast.Load(), annotation=None,
                                     type_comment=None)], keywords=[])
    # gradients = grad_fn(dy); check(gradients, (x, y)); return gradients
    parameters = [a.id for a in definition.args.posonlyargs + definition.args.args]
    check, gradients = f"{base}__check", "gradients"
    while check in taken:
        check += "_"
    while gradients in taken or gradients == seed:
        gradients += "_"
    namespace[check] = _grad_fn_check(base, parameters)
    ending = gast.parse(f"{gradients} = None\n"
                        f"{check}({gradients}, ({''.join(p + ', ' for p in parameters)}))\n"
                        f"return {gradients}\n").body
    ending[0].value = call
    vjp_definition.body[-1:] = [gast.copy_location(statement, definition.body[-1])
                                for statement in ending]
    for statement in ending:
        gast.fix_missing_locations(statement)

    made = []
    for generated in (value_definition, vjp_definition):
        function = namespace.load(to_source(generated), generated.name, generated.name,
                                  checked=True)
        function.__autotrace_origin__ = location
        made.append(function)
    namespace.read_live(*(f.__code__ for f in made))  # globals, closure variables: live
    custom._autotrace_functions = tuple(made)
    return custom._autotrace_functions


def custom_caller(custom):
    """A plain function with the parameters of `custom`'s function that calls `custom` with
    them (made once, then kept), so that `grad(log1pexp)` and the other transforms of a
    custom-gradient function itself derive that call, through the function's grad_fn."""
    made = getattr(custom, "_autotrace_caller", None)
    if made is not None:
        return made
    parsed = parse_function(custom.function)
    _check_parameters(parsed)
    arguments = copy_tree(parsed.node.args)
    namespace = dict(parsed.namespace)
    base = parsed.node.name
    callee = f"{base}__custom"
    namespace[callee] = custom

    def loaded(parameter):
        return gast.Name(id=parameter.id, ctx=gast.Load(), annotation=None, type_comment=None)
    call = gast.Call(
        func=gast.Name(id=callee, ctx=gast.Load(), annotation=None, type_comment=None),
        args=[loaded(p) for p in arguments.posonlyargs + arguments.args],
        keywords=[gast.keyword(arg=p.id, value=loaded(p)) for p in arguments.kwonlyargs])
    for parameter in arguments.posonlyargs + arguments.args + arguments.kwonlyargs:
        parameter.annotation = None
    definition = gast.FunctionDef(name=base, args=arguments, body=[gast.Return(value=call)],
                                  decorator_list=[], returns=None, type_comment=None,
                                  type_params=[])
    gast.copy_location(definition, parsed.node)
    function = load_function(to_source(definition), base, namespace, hint=f"{base}__caller")
    function.__autotrace_origin__ = caller_location(parsed)
    custom._autotrace_caller = function
    return function


def kind_of(custom) -> str:
    """How the user made `custom`: "custom_vjp", "custom_jvp" or "custom_gradient"."""
    return ("custom_vjp" if isinstance(custom, CustomVJP) else
            "custom_jvp" if isinstance(custom, CustomJVP) else "custom_gradient")


def _rule_functions(custom) -> tuple:
    """The twins of a custom_vjp or custom_jvp function, written around its rules (see the
    module docstring), in a namespace of their own."""
    parsed = parse_function(custom.function)
    kind = kind_of(custom)
    _check_parameters(parsed, kind)
    base = parsed.node.name
    parameters = [a.id for a in parsed.node.args.posonlyargs + parsed.node.args.args]
    rules = (custom.fwd, custom.bwd) if kind == "custom_vjp" else (custom.jvp,)
    if rules[0] is None:
        given = "defvjp(fwd, bwd)" if kind == "custom_vjp" else "defjvp(jvp)"
        raise parsed.location.error(
            parsed.node, f"{base} is a {kind} function whose rules were not given: call "
            f"{base}.{given} before differentiating it", kind)
    taken = set(parameters)

    def fresh(hint: str) -> str:
        while hint in taken:
            hint += "_"
        taken.add(hint)
        return hint
    listed = ", ".join(parameters)
    packed = f"({listed},)" if parameters else "()"
    if kind == "custom_vjp":
        made = _vjp_twins(custom, base, parameters, fresh)
    else:
        rule = fresh(f"{base}__jvp")
        tangents = [fresh(f"t_{p}") for p in parameters]
        tangent = load_function(
            f"def {base}__tangent({', '.join(parameters + tangents)}):\n"
            f"    return {rule}({packed}, ({', '.join(tangents)},))[1]\n",
            f"{base}__tangent", {rule: custom.jvp})
        made = (custom.function, tangent)
    for function in made:
        function.__autotrace_origin__ = parsed.location
    return made


def _vjp_twins(custom, base: str, parameters: list, fresh) -> tuple:
    """The twins of a custom_vjp function (see the module docstring). Its bwd takes the
    arguments at nondiff_argnums first and returns one gradient for each other argument, None
    for zeros (JAX's rules); the vjp twin gives every argument one, those at nondiff_argnums
    and those bwd gave None zeros (no gradient where an argument carries none)."""
    fwd, bwd, check = fresh(f"{base}__fwd"), fresh(f"{base}__bwd"), fresh(f"{base}__check")
    zeros, seed, gradients = fresh("no_gradient"), fresh("dy"), fresh("gradients")
    nondiff = [parameters[index] for index in custom.nondiff_argnums]
    differentiable = [p for p in parameters if p not in nondiff]
    namespace = {fwd: custom.fwd, bwd: custom.bwd, zeros: _no_gradient,
                 check: _cotangent_check(base, custom.bwd, len(differentiable), nondiff,
                                          differentiable)}
    listed = ", ".join(parameters)
    value = load_function(f"def {base}__value({listed}):\n"
                          f"    return {fwd}({listed})[0]\n", f"{base}__value", namespace)
    lines = [f"def {base}__vjp({listed}, {seed}):",
             f"    {gradients} = {bwd}({''.join(p + ', ' for p in nondiff)}"
             f"{fwd}({listed})[1], {seed})",
             f"    {check}({gradients}, ({''.join(p + ', ' for p in differentiable)}))"]
    results = []
    for parameter in parameters:
        if parameter in nondiff:
            results.append(f"{zeros}({parameter})")
            continue
        name = fresh(f"d_{parameter}")
        lines += [f"    {name} = {gradients}[{differentiable.index(parameter)}]",
                  f"    if {name} is None:",
                  f"        {name} = {zeros}({parameter})"]
        results.append(name)
    lines.append(f"    return {results[0] if len(results) == 1 else ', '.join(results)}")
    vjp = load_function("\n".join(lines) + "\n", f"{base}__vjp", namespace)
    return value, vjp


def _no_gradient(value):
    """The gradient of an argument that gets none: zeros like it, or None where it is no
    number, array or container of them (a string, a function)."""
    return zeros_like(value) if carries_gradient(value) else None


constant(_no_gradient)


def _cotangent_check(name: str, bwd, count: int, nondiff: list, parameters: list):
    """A function that refuses what `bwd` returned unless it is one gradient (or None) per
    argument not in nondiff_argnums (`parameters`: theirs), each shaped like its argument."""
    def check(gradients, arguments: tuple) -> None:
        if not isinstance(gradients, (tuple, list)) or len(gradients) != count:
            what = (f"a {type(gradients).__name__} of {len(gradients)}"
                    if isinstance(gradients, (tuple, list)) else f"a {type(gradients).__name__}")
            arguments = (f"argument of {name} ({count})" if not nondiff else
                         f"argument of {name} not in nondiff_argnums ({count}: all but "
                         f"{', '.join(nondiff)})")
            raise TypeError(f"the bwd rule of the custom_vjp function {name} "
                            f"({getattr(bwd, '__qualname__', bwd)}) must return a tuple with "
                            f"one gradient (or None, for zeros) per {arguments}, but it "
                            f"returned {what}")
        what = (f"the gradient of {{path}} that the bwd rule of the custom_vjp function "
                f"{name} ({getattr(bwd, '__qualname__', bwd)}) returned")
        rule = ("a bwd rule returns one gradient per argument, with its structure, shapes "
                "and floating dtype (sum a gradient over the axes its argument was "
                "broadcast along)")
        for parameter, value, gradient in zip(parameters, arguments, gradients):
            check_like(value, gradient, parameter, what, rule, strict_kind=True)
    constant(check)
    return check


def _grad_fn_check(name: str, parameters: list):
    """A function that refuses the gradients a custom_gradient function's grad_fn returned
    unless each is shaped like its argument (one for one argument, else a tuple of one per
    argument)."""
    def check(gradients, arguments: tuple) -> None:
        what = f"the gradient of {{path}} that the grad_fn of {name} returned"
        rule = ("a grad_fn returns one gradient per argument (a tuple of them for several), "
                "with its structure and shapes (sum a gradient over the axes its argument was "
                "broadcast along)")
        if len(parameters) == 1:
            check_like(arguments[0], gradients, parameters[0], what, rule)
        elif isinstance(gradients, (tuple, list)) and len(gradients) == len(parameters):
            for parameter, value, gradient in zip(parameters, arguments, gradients):
                check_like(value, gradient, parameter, what, rule)
    constant(check)
    return check


def transposed_tangents(transposed, primals: tuple, cotangent, seed: str, label: str):
    """The gradients of a custom_jvp function's arguments given the gradient `cotangent` of
    its value: `transposed` (its rule's tangent differentiated in the tangents, seeded by the
    keyword `seed`) at zero tangents.

    A transposition is right only for a tangent linear in the tangents, whose derivative in
    them is the same at any tangents: run again at tangents of ones, a derivative that
    differs is refused. Where autotrace.function traces, the values are not known: the check
    runs on stand-ins of their shapes (random values), and where a size is unknown too, the
    function is refused, as no check can run.
    """
    zeros = tuple(zeros_like(p) for p in primals)
    gradients = transposed(*primals, *zeros, **{seed: cotangent})
    if _traced(primals) or _traced(cotangent):
        check_primals, check_cotangent = _stand_in(primals, label), _stand_in(cotangent, label)
        at_zero = transposed(*check_primals, *(zeros_like(p) for p in check_primals),
                             **{seed: check_cotangent})
    else:
        check_primals, check_cotangent, at_zero = primals, cotangent, gradients
    at_ones = transposed(*check_primals, *(_unit_tangent(p) for p in check_primals),
                         **{seed: check_cotangent})
    if not _close(at_zero, at_ones):
        raise TypeError(
            f"reverse mode cannot transpose the jvp rule of the custom_jvp function {label}: "
            "the tangent it returns is not linear in the tangents (its derivative in them "
            "changes with them); make it linear, or give the function a custom_vjp for "
            "reverse mode")
    return gradients[0] if len(primals) == 1 else gradients


def _unit_tangent(value):
    """Ones where `value` carries gradient, zeros (None) elsewhere: the other tangents the
    linearity check runs at."""
    return _map_leaves(lambda leaf: ones_like(leaf) if carries_gradient(leaf)
                       else zeros_like(leaf), value)


def _map_leaves(function, value):
    """`value` with `function` of each leaf: through the nodes of a pytree (runtime/pytrees.py:
    containers, namedtuples, registered types, ObjectGradients) and the fields of a
    dataclass, as gradients and tangents of one are made."""
    if is_dataclass_instance(value) and registered(type(value)) is None:
        return map_fields(lambda field: _map_leaves(function, field), value)
    node = node_of(value)
    if node is None:
        return function(value)
    children, _, rebuild = node
    return rebuild([_map_leaves(function, child) for child in children])


def _leaves(value) -> list:
    """The leaves `_map_leaves` maps, in order."""
    leaves = []
    _map_leaves(leaves.append, value)
    return leaves


def _traced(value) -> bool:
    return any(getattr(type(leaf), "_is_traced_array", False) for leaf in _leaves(value))


def _stand_in(value, label: str):
    """`value` with each traced array replaced by random values of its shape and dtype."""
    return _map_leaves(lambda leaf: _leaf_stand_in(leaf, label), value)


def _leaf_stand_in(value, label: str):
    if not getattr(type(value), "_is_traced_array", False):
        return value
    if any(size is None for size in value.shape):
        raise TypeError(
            f"reverse mode transposes the jvp rule of the custom_jvp function {label}, and "
            "checks that its tangent is linear on values of the traced shapes; a size of "
            f"{tuple(value.shape)} is unknown here, so no check can run: trace with known "
            "sizes, or give the function a custom_vjp for reverse mode")
    generator = np.random.default_rng(0)
    return generator.standard_normal(value.shape).astype(value.dtype)


def _close(a, b) -> bool:
    """Whether gradients `a` and `b` hold the same values (None, no gradient, where the other
    has one, leaves one fewer leaf: not the same)."""
    a, b = _leaves(a), _leaves(b)
    return len(a) == len(b) and all(bool(np.allclose(x, y, rtol=1e-7, atol=1e-12))
                                    for x, y in zip(a, b))
