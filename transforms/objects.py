"""Objects in differentiated code: methods that call `super()`."""
from __future__ import annotations

import gast

from transforms.templates import name


def explicit_super(function: gast.FunctionDef, namespace: dict) -> None:
    """`super()` becomes `super(__class__, self)`: Python finds the class and instance of a
    zero-argument `super()` through the method's `__class__` cell and its first parameter,
    and generated code, compiled outside the class body, has no such cell. The method's
    `__class__` is one of its closure values, so generated code can read it by name."""
    arguments = function.args.posonlyargs + function.args.args
    if "__class__" not in namespace or not arguments:
        return  # not a method Python compiled with a cell: super() fails as it would there
    for node in gast.walk(function):
        if (isinstance(node, gast.Call) and isinstance(node.func, gast.Name)
                and node.func.id == "super" and not node.args and not node.keywords):
            node.args = [name("__class__"), name(arguments[0].id)]
