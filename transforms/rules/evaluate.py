"""Run one adjoint rule eagerly, outside any transform: for testing rules by themselves."""
from __future__ import annotations

import itertools

from transforms.codegen import load_function, to_source
from transforms.rules.core import adjoint_rules, instantiate
from transforms.templates import name


def rule_vjp(func, *args, **kwargs):
    """Evaluate `func`'s adjoint rule at `args`.

    Returns `(y, vjp)` where `y = func(*args, **kwargs)` and `vjp(dy)` returns a dict from the
    rule's parameter names to their gradients (for a `*name` parameter, a sequence).
    """
    rule = adjoint_rules[func]
    y = func(*args, **kwargs)
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
    return y, lambda dy: function(y, dy, **values)
