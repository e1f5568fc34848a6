"""Derivatives stated once: linear functions, and elementwise functions by their partials.

A linear function is its own tangent, so its adjoint template is all there is to write:

    @linear(np.swapaxes)
    def swapaxes_rule(y, a, axis1, axis2):
        d[a] = np.swapaxes(d[y], axis1, axis2)

registers the adjoint and generates the tangent `d[y] = np.swapaxes(d[a], axis1, axis2)`: the
function called on the tangents of the arguments whose gradients the adjoint assigns, the other
arguments passed as the template's signature lists them (positional ones by position, keyword-only
ones by keyword). Where the tangent passes fewer or other arguments, `call=` lists them, as
they follow the function's name: `call="a, axis=axis, keepdims=keepdims"`. A bilinear function
(`bilinear`) gets one such call per argument, the others held, summed. A function that passes an
argument through as far as derivatives go (`identity`: its adjoint is `d[x] = d[y]`) has the
tangent `d[y] = d[x]`.

An elementwise function is declared by what each argument's gradient is, given `d[y]`:

    partials(np.tanh, math.tanh, x="d[y] * (1.0 - y * y)")

The adjoint assigns each gradient (undoing broadcasting where several arguments have one);
the tangent is the sum of the same expressions with `d[y]` read as each argument's tangent, for
scaling by a partial derivative is its own transpose. Both are templates like those written by
hand, so generated code shows them inlined.
"""
from __future__ import annotations

import ast
import builtins
import inspect
import sys
from types import ModuleType
from typing import Callable

import gast

from ...runtime.derivatives.adjoint_ops import unbroadcast
from .core import (Rule, RuleError, adjoint_rules, gradient_target, ignored_by,
                   tangent_rules)


def linear(*funcs, call: str | None = None) -> Callable:
    """Register the decorated adjoint template for `funcs`, linear in the arguments whose
    gradients it assigns (together), and the tangent that calls the function on their tangents."""
    return _linear(funcs, call, jointly=True)


def bilinear(*funcs, call: str | None = None) -> Callable:
    """As `linear`, for functions linear in each of those arguments with the others held
    (products): the tangent sums one call per argument."""
    return _linear(funcs, call, jointly=False)


def _linear(funcs, call, jointly) -> Callable:
    def register(template):
        rule = Rule(template)
        for func in funcs:
            adjoint_rules[func] = rule
        name = template.__name__.removesuffix("_rule") + "_tangent"
        _register(tangent_rules, funcs, name, _signature_text(template),
                  [linear_tangent(rule, funcs[0], call, jointly)], rule.namespace)
        return template
    return register


def identity(*funcs) -> Callable:
    """Register the decorated adjoint template, `d[x] = d[y]` alone, for functions that pass
    their argument x through as far as derivatives go; the tangent is `d[y] = d[x]`."""
    def register(template):
        rule = Rule(template)
        statement = rule.body[0] if len(rule.body) == 1 else None
        if not (isinstance(statement, gast.Assign) and len(statement.targets) == 1
                and gradient_target(statement.targets[0]) is not None
                and gradient_target(statement.value) == rule.result_name):
            raise RuleError(f"{template.__name__}: an identity's adjoint is d[x] = d[y] alone")
        for func in funcs:
            adjoint_rules[func] = rule
        argument = gradient_target(statement.targets[0])
        name = template.__name__.removesuffix("_rule") + "_tangent"
        _register(tangent_rules, funcs, name, _signature_text(template),
                  [f"d[{rule.result_name}] = d[{argument}]"], rule.namespace)
        return template
    return register


def linear_tangent(rule: Rule, func, call: str | None, jointly: bool) -> str:
    """The tangent statement of `func`, linear (jointly, or in each argument) in the arguments
    whose gradients its adjoint `rule` assigns."""
    inputs = [p for p in rule.signature.parameters if p in _assigned(rule)]
    arguments = _call_arguments(rule, call)
    groups = [inputs] if jointly else [[p] for p in inputs]
    callee = ast.parse(_spelling(func, rule.namespace), mode="eval").body
    terms = [ast.Call(func=callee, args=[_tangent_of(a, group) for a in arguments.args],
                      keywords=[ast.keyword(arg=k.arg, value=_tangent_of(k.value, group))
                                for k in arguments.keywords])
             for group in groups]
    value = terms[0]
    for term in terms[1:]:
        value = ast.BinOp(left=value, op=ast.Add(), right=term)
    return f"d[{rule.result_name}] = {ast.unparse(value)}"


def partials(*funcs, **gradients: str | None) -> None:
    """Register the adjoint and tangent rules of the elementwise functions `funcs`.

    gradients: for each parameter, in the function's order, its gradient as an expression of
    `d[y]` (the result's gradient), `y` (the result) and the parameters; None for a parameter
    that gets none (an order, a flag).
    """
    # The expressions name what the declaring module imports, as a written template would.
    namespace = sys._getframe(1).f_globals
    if "y" in gradients:
        raise RuleError("partials name the result y: write the templates of a function with a "
                        "parameter y by hand")
    signature = f"(y, {', '.join(gradients)})"
    parameters = [p for p, gradient in gradients.items() if gradient is not None]
    name = getattr(funcs[0], "__name__", "function")
    if len(parameters) == 1:
        adjoint_body = [f"d[{parameters[0]}] = {gradients[parameters[0]]}"]
    else:
        if namespace.get("unbroadcast") is not unbroadcast:
            raise RuleError(f"partials of {name}: its module must import unbroadcast")
        adjoint_body = [f"d[{p}] = unbroadcast({gradients[p]}, {p})" for p in parameters]
    _register(adjoint_rules, funcs, f"{name}_rule", signature, adjoint_body, namespace)

    value = None
    for parameter in parameters:
        term = _GradientAsTangent(parameter).visit(ast.parse(gradients[parameter], mode="eval"))
        if value is None:
            value = term.body
        else:
            term, negated = _without_leading_minus(term.body)
            value = ast.BinOp(left=value, op=ast.Sub() if negated else ast.Add(), right=term)
    _register(tangent_rules, funcs, f"{name}_tangent", signature,
              [f"d[y] = {ast.unparse(value)}"], namespace)


def _register(registry, funcs, name, signature, body, namespace) -> None:
    """Make the template `def name signature: body` in `namespace` and register it."""
    source = f"def {name}{signature}:\n" + "".join(f"    {line}\n" for line in body)
    scope = {}
    exec(compile(source, f"<rule {name}>", "exec"), namespace, scope)
    rule = Rule(scope[name], source=source, ignored_keywords=ignored_by(funcs))
    for func in funcs:
        registry[func] = rule


def _assigned(rule) -> set:
    """The parameters whose gradients an adjoint template assigns."""
    return {gradient_target(statement.targets[0]) for statement in rule.body
            if isinstance(statement, gast.Assign) and len(statement.targets) == 1}


def _signature_text(template) -> str:
    return str(inspect.signature(template))


def _call_arguments(rule, call) -> ast.Call:
    """The arguments a linear function's tangent passes, as a call node."""
    if call is not None:
        return ast.parse(f"f({call})", mode="eval").body
    arguments = ast.Call(func=None, args=[], keywords=[])
    for name, parameter in rule.signature.parameters.items():
        if parameter.kind is parameter.KEYWORD_ONLY:
            arguments.keywords.append(ast.keyword(arg=name, value=ast.Name(id=name)))
        elif parameter.kind is parameter.POSITIONAL_OR_KEYWORD:
            arguments.args.append(ast.Name(id=name))
        else:
            raise RuleError(f"{rule.template.__name__}: a linear rule's tangent cannot pass "
                            f"*{name} or **{name}; write the tangent")
    return arguments


def _tangent_of(argument, parameters):
    """`d[argument]` where the argument is one of `parameters`, else the argument."""
    if isinstance(argument, ast.Name) and argument.id in parameters:
        return ast.Subscript(value=ast.Name(id="d"), slice=ast.Name(id=argument.id))
    return argument


def _spelling(func, namespace) -> str:
    """How the declaring module names `func`: a global or builtin, or a function of an
    imported module (or of its fft or linalg submodule)."""
    for name, value in namespace.items():
        if value is func:
            return name
    if getattr(builtins, func.__name__, None) is func:
        return func.__name__
    for name, value in namespace.items():
        if isinstance(value, ModuleType):
            for path in ("", "fft.", "linalg."):
                owner = value
                for part in path.split(".")[:-1]:
                    owner = getattr(owner, part, None)
                if getattr(owner, func.__name__, None) is func:
                    return f"{name}.{path}{func.__name__}"
    raise RuleError(f"{func.__name__} is not named in the module declaring its rule")


class _GradientAsTangent(ast.NodeTransformer):
    """`d[y]` read as `d[parameter]`."""

    def __init__(self, parameter):
        self.parameter = parameter

    def visit_Subscript(self, node):
        if isinstance(node.value, ast.Name) and node.value.id == "d":
            return ast.Subscript(value=node.value, slice=ast.Name(id=self.parameter))
        return self.generic_visit(node)


def _without_leading_minus(term):
    """(term, False), or (term without its leading unary minus, True): `-d[x] * p` joins a sum
    as `- d[x] * p`, which has the same value."""
    if isinstance(term, ast.UnaryOp) and isinstance(term.op, ast.USub):
        return term.operand, True
    if isinstance(term, ast.BinOp) and isinstance(term.op, (ast.Mult, ast.Div)):
        left, negated = _without_leading_minus(term.left)
        if negated:
            return ast.BinOp(left=left, op=term.op, right=term.right), True
    return term, False
