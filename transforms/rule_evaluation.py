"""Run one derivative rule eagerly, outside any transform: for calls whose function is known
only when they run (dynamic_calls.py), and for testing rules by themselves."""
from __future__ import annotations

import itertools

import gast

from ..runtime.derivatives.structure import zeros_like
from ..runtime.primitives.index import as_array
from ..runtime.derivatives.structural_adjoints import unarray
from ..runtime.derivatives.tangent_ops import read_as_array
from .codegen.codegen import load_function, to_source
from .rules.core import (adjoint_rules, instantiate, instantiate_tangent, lists_read_as_arrays,
                         reads_list_as_array, tangent_rules)
from .codegen.templates import name


def rule_vjp(func, *args, **kwargs):
    """Evaluate `func`'s adjoint rule at `args`.

    Returns `(y, vjp)` where `y = func(*args, **kwargs)` and `vjp(dy)` returns a dict from the
    rule's parameter names to their gradients (for a `*name` parameter, a sequence).
    """
    rule = adjoint_rules[func]
    y = func(*args, **kwargs)
    args, kwargs, lists = _lists_as_arrays(func, args, kwargs)
    counter = itertools.count()
    values = {}

    def argument(value):
        identifier = f"arg{len(values)}"
        values[identifier] = value
        return name(identifier)

    arg_nodes = [argument(a) for a in args]
    kwarg_nodes = {k: argument(v) for k, v in kwargs.items()}
    instance = instantiate(rule, name("y"), arg_nodes, kwarg_nodes,
                           lambda hint: f"{hint}_{next(counter)}", name("dy"))
    gradients = ", ".join(f"{param!r}: {grad}" for param, grad in instance.gradients.items())
    body = to_source(instance.statements) or "pass\n"
    source = (f"def vjp(y, dy, {', '.join(values) or '_'}):\n"
              + "".join("    " + line + "\n" for line in body.splitlines())
              + f"    return {{{gradients}}}\n")
    function = load_function(source, "vjp", dict(rule.namespace), hint="rule")
    if not values:
        values["_"] = None
    return y, lambda dy: _gradients_of_lists(function(y, dy, **values), lists)


def _lists_as_arrays(func, args: tuple, kwargs: dict):
    """The arguments with each list or tuple that NumPy's `func` reads as one array
    (np.logaddexp.reduce([a, b])) made that array, for the rule's operators, which would
    repeat or join lists; and those lists, by the rule's parameter."""
    rule, args, kwargs, lists = adjoint_rules[func], list(args), dict(kwargs), {}
    names = list(rule.signature.parameters)
    for key in lists_read_as_arrays(func, args, kwargs):
        holder = args if isinstance(key, int) else kwargs
        lists[names[key] if isinstance(key, int) else key] = holder[key]
        holder[key] = as_array(holder[key])
    return tuple(args), kwargs, lists


def _gradients_of_lists(gradients: dict, lists: dict) -> dict:
    """The rule's gradients, that of a list read as an array in the list's structure."""
    for parameter, given in lists.items():
        if gradients.get(parameter) is not None:
            gradients[parameter] = unarray(gradients[parameter], given)
    return gradients


def rule_jvp(func, args, tangents, **kwargs):
    """Evaluate `func`'s tangent rule: returns `(y, tangent of y)`.

    tangents: one tangent per positional argument (None for an argument with no tangent: it is
    read as zeros like the argument).
    """
    rule = tangent_rules[func]
    y = func(*args, **kwargs)
    counter = itertools.count()
    values = {}

    def argument(value, prefix="arg"):
        identifier = f"{prefix}{len(values)}"
        values[identifier] = value
        return name(identifier)

    arg_nodes = [argument(a) for a in args]
    kwarg_nodes = {k: argument(v) for k, v in kwargs.items()}
    by_node = {}
    for node, value, tangent_value in zip(arg_nodes, args, tangents):
        by_node[node.id] = argument(zeros_like(value) if tangent_value is None
                                    else tangent_value, "tangent")

    def tangent_of(parameter, bound):
        if isinstance(bound, gast.Tuple):
            return gast.Tuple(elts=[tangent_of(parameter, e) for e in bound.elts],
                              ctx=gast.Load())
        if isinstance(bound, gast.Name) and bound.id in by_node:
            if reads_list_as_array(func, parameter):
                # A list there is the array NumPy reads, for the rule, its tangent too: the
                # rule's operators would repeat or join lists.
                values[bound.id] = as_array(values[bound.id])
                return argument(read_as_array(values[by_node[bound.id].id]), "tangent")
            return by_node[bound.id]
        return name("_zero_tangent")  # a keyword or default: no tangent

    statements = instantiate_tangent(rule, name("y"), arg_nodes, kwarg_nodes,
                                     lambda hint: f"{hint}_{next(counter)}", tangent_of, "dy")
    body = to_source(statements)
    source = (f"def jvp(y, {', '.join(values) or '_'}):\n"
              + "".join("    " + line + "\n" for line in body.splitlines())
              + "    return dy\n")
    namespace = dict(rule.namespace)
    namespace["_zero_tangent"] = 0.0
    function = load_function(source, "jvp", namespace, hint="tangent rule")
    return y, function(y, **values)
