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
"""
from __future__ import annotations

import copy

import gast

from ..codegen.codegen import load_function, to_source
from ..errors import Location
from ..analysis.live_names import LiveNamespace
from .parsing import parse_function
from .partials import caller_location
from ..codegen.nodes import walk


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


def _check_parameters(parsed) -> None:
    arguments = parsed.node.args
    if arguments.vararg is not None or arguments.kwarg is not None or arguments.kwonlyargs:
        raise parsed.location.error(
            parsed.node, "a custom_gradient function takes positional parameters only (no "
            "*args, keyword-only parameters or **kwargs): its grad_fn returns one gradient "
            "per parameter, in order", "custom_gradient")


def check_call(custom, call, location, node) -> None:
    """Refuse a call of a custom-gradient function with keyword arguments: its derivatives
    pass the arguments and the seed by position, and grad_fn's gradients come in the
    parameters' order."""
    if call.keywords:
        passed = ", ".join(k.arg or "**" + to_source(k.value).strip() for k in call.keywords)
        label = getattr(custom, "__name__", "the custom_gradient function")
        raise location.error(
            node, f"pass {passed} to {label} by position: the grad_fn of a custom_gradient "
            "function returns the gradients of its parameters in order", "custom_gradient")


def custom_functions(custom):
    """`(value_function, vjp_function)` for a CustomGradient object (made once, then kept)."""
    made = getattr(custom, "_autotrace_functions", None)
    if made is not None:
        return made
    parsed = parse_function(custom.function)
    definition, location = parsed.node, parsed.location
    _check_parameters(parsed)
    value, grad_fn = _split_return(definition, location)
    namespace = LiveNamespace(parsed)
    base = definition.name

    value_definition = copy.deepcopy(definition)
    value_definition.name = f"{base}__value"
    value_definition.body[-1] = gast.copy_location(gast.Return(value=copy.deepcopy(value)),
                                                   definition.body[-1])

    vjp_definition = copy.deepcopy(definition)
    vjp_definition.name = f"{base}__vjp"
    seed = "dy"
    taken = {n.id for n in walk(definition) if isinstance(n, gast.Name)}
    while seed in taken:
        seed += "_"
    vjp_definition.args.args = vjp_definition.args.args + [
        gast.Name(id=seed, ctx=gast.Param(), annotation=None, type_comment=None)]
    call = gast.Call(func=copy.deepcopy(grad_fn),
                     args=[gast.Name(id=seed, ctx=gast.Load(), annotation=None,
                                     type_comment=None)], keywords=[])
    vjp_definition.body[-1] = gast.copy_location(gast.Return(value=call), definition.body[-1])

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
    arguments = copy.deepcopy(parsed.node.args)
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
