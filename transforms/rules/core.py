"""Derivative rules written as templates, and the registry that holds them.

An adjoint rule is a small Python function that is never called. Its first parameter names the
primal result, the others mirror the differentiated function's signature, and its body says how
the gradient of the result flows to each argument:

    @adjoint(np.sin)
    def sin(y, x):
        d[x] = d[y] * np.cos(x)

`d[name]` is the gradient of `name`. The reverse-mode transform inlines the body at every call
site, with the parameters replaced by the call's arguments, so generated source reads like the
rule. Names assigned in a template (other than `d[...]`) are temporaries and get fresh names.
A parameter written `*name` collects the remaining positional arguments as a tuple, and
`d[name]` must then be a sequence with one gradient per collected argument.
"""
from __future__ import annotations

import copy
import inspect
import operator
import textwrap
from dataclasses import dataclass, field
from typing import Any, Callable

import gast
import numpy as np


class _GradientOf:
    """`d` in rule templates; `d[x]` reads as "the gradient of x". Templates are never run.

    Examples:
        >>> def cube(x):
        ...     return x * x * x
        >>> @autotrace.register_adjoint(cube)
        ... def cube_adjoint(y, x):
        ...     d[x] = d[y] * 3 * x * x      # the gradient of x, from the gradient of y
        >>> autotrace.grad(cube)(2.0)
        12.0
    """

    def __getitem__(self, name):
        raise RuntimeError("rule templates are parsed, never run")


d = _GradientOf()

# The registries, filled at import by the rule modules (and by users through autotrace).
adjoint_rules: dict[Any, "Rule"] = {}
tangent_rules: dict[Any, "Rule"] = {}
# Functions whose value is piecewise constant or not numeric: constants to the gradient.
constant_functions: set[Any] = set()
# What to write instead of a call of a function that its rules cannot take (math.log(x, base),
# where the rules are of math.log(x)), by function: declared beside the rules (`other_calls`).
other_call_advice: dict[Any, str] = {}


# The parameters of NumPy's functions (as their rules name them, after NumPy) that read an
# array_like: a list or tuple there is read as one array (np.asarray's).
READ_AS_ARRAY = frozenset({"a", "A", "arr", "array", "ary", "b", "condition", "m", "v",
                           "values", "x", "x1", "x2", "y"})


def reads_list_as_array(function, parameter: str) -> bool:
    """Whether NumPy's `function` reads a list given as `parameter` as one array (np.asarray
    and np.array, whose rules take a list as it is, aside)."""
    return parameter in READ_AS_ARRAY and reads_lists(function)


def reads_lists(function) -> bool:
    """Whether `function` is NumPy's, other than np.asarray and np.array (a ufunc's method,
    np.logaddexp.reduce, included)."""
    if function is np.asarray or function is np.array:
        return False
    module = getattr(function, "__module__", None) or ""
    return isinstance(function, np.ufunc) or isinstance(getattr(function, "__self__", None),
                                                        np.ufunc) or \
        module == "numpy" or module.startswith("numpy.")


def lists_read_as_arrays(function, args: tuple, kwargs: dict = {}) -> tuple:
    """The positions of `args`, and the names of `kwargs`, that hold a list or tuple where
    NumPy's `function` reads one array (by the parameter its rule names there)."""
    rule = adjoint_rules.get(function) or tangent_rules.get(function)
    if rule is None or not any(isinstance(v, (list, tuple)) for v in (*args, *kwargs.values())):
        return ()
    names = [p.name for p in rule.signature.parameters.values()
             if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    given = [*zip(range(len(args)), names, args), *((k, k, v) for k, v in kwargs.items())]
    return tuple(key for key, name, value in given
                 if isinstance(value, (list, tuple)) and reads_list_as_array(function, name))


class RuleError(Exception):
    """A rule template that cannot be used as written, or a call it cannot bind."""


@dataclass
class Rule:
    """A parsed template: its signature (without the result parameter) and its body.

    source: the template's text where it was generated (declarations.py) rather than written
    in a module, which inspect would read.
    ignored_keywords: keywords a call may pass that the template has no parameter for, as they
    change no derivative (a ufunc's dtype=, the loop NumPy computes in: `ignored_by(funcs)`).
    """

    template: Callable
    source: str | None = None
    ignored_keywords: frozenset = frozenset()
    result_name: str = field(init=False)
    signature: inspect.Signature = field(init=False)
    _body: list | None = field(default=None, init=False, repr=False)
    _assigned: list | None = field(default=None, init=False, repr=False)

    def __post_init__(self):
        parameters = list(inspect.signature(self.template).parameters.values())
        if not parameters:
            raise RuleError(f"rule template {self.template.__name__} needs a result parameter")
        self.result_name = parameters[0].name
        self.signature = inspect.Signature(parameters[1:])

    @property
    def body(self) -> list:
        """The template's statements as gast nodes, parsed once."""
        if self._body is None:
            source = self.source or textwrap.dedent(inspect.getsource(self.template))
            tree = gast.parse(source)
            self._body = tree.body[0].body
            if (self._body and isinstance(self._body[0], gast.Expr)
                    and isinstance(self._body[0].value, gast.Constant)
                    and isinstance(self._body[0].value.value, str)):
                self._body = self._body[1:]  # a docstring
        return self._body

    @property
    def assigned(self) -> list:
        """For each statement of the body, the names it assigns, in gast.walk's order (a name
        assigned twice listed twice): found once, as the body is never changed."""
        if self._assigned is None:
            self._assigned = [tuple(node.id for node in gast.walk(statement)
                                    if isinstance(node, gast.Name)
                                    and isinstance(node.ctx, gast.Store))
                              for statement in self.body]
        return self._assigned

    @property
    def namespace(self) -> dict:
        """What the template's names mean: the globals of the module that wrote it."""
        return self.template.__globals__

    def bind(self, args, kwargs: dict) -> inspect.BoundArguments:
        """The template's parameters bound to a call's arguments, leaving out the keywords it
        ignores; TypeError where they do not bind."""
        return self.signature.bind(*args, **{key: value for key, value in kwargs.items()
                                             if key not in self.ignored_keywords})


# The keywords of a ufunc's call that change no derivative: dtype= is the loop NumPy computes
# in (the gradients meet the arguments' dtypes as they reach them).
_UFUNC_KEYWORDS = frozenset({"dtype"})


def ignored_by(funcs) -> frozenset:
    """The keywords the rules of `funcs` take without a parameter (Rule.ignored_keywords)."""
    return _UFUNC_KEYWORDS if any(isinstance(func, np.ufunc) for func in funcs) else frozenset()


def _register(registry: dict, funcs) -> Callable:
    def register(template):
        rule = Rule(template, ignored_keywords=ignored_by(funcs))
        for func in funcs:
            registry[func] = rule
        return template
    return register


def adjoint(*funcs) -> Callable:
    """Register the decorated template as the adjoint rule of each function in `funcs`."""
    return _register(adjoint_rules, funcs)


def tangent(*funcs) -> Callable:
    """Register the decorated template as the tangent (forward-mode) rule of `funcs`."""
    return _register(tangent_rules, funcs)


def constant(*funcs) -> None:
    """Declare functions whose outputs carry no gradient (piecewise constant, non-numeric)."""
    constant_functions.update(funcs)


def other_calls(func, advice: str) -> None:
    """Declare what a call of `func` that its rules cannot take should say: what autotrace
    differentiates, and what to write instead."""
    other_call_advice[func] = advice


def unbound_call_message(func, described: str, error: Exception) -> str:
    """The message for a call of `func` (named `described`) that its rule could not bind
    (`error`, what inspect said): the advice declared for it, else what inspect said."""
    return other_call_advice.get(func) or (
        f"the derivative rule of {described} cannot take this call: {error}")


def literal(value) -> gast.expr:
    """A gast expression for a default value written in a template signature."""
    if isinstance(value, tuple):
        return gast.Tuple(elts=[literal(v) for v in value], ctx=gast.Load())
    if value is None or isinstance(value, (bool, int, float, complex, str)):
        if isinstance(value, (int, float)) and not isinstance(value, bool) and value < 0:
            return gast.UnaryOp(op=gast.USub(), operand=gast.Constant(value=-value, kind=None))
        return gast.Constant(value=value, kind=None)
    raise RuleError(f"a template default must be a literal, not {value!r}")


def gradient_target(node) -> str | None:
    """The parameter name in `d[name]`, or None when `node` is something else."""
    if (isinstance(node, gast.Subscript) and isinstance(node.value, gast.Name)
            and node.value.id == "d" and isinstance(node.slice, gast.Name)):
        return node.slice.id
    return None


# The attribute marking the names a rule instance holds that are the call site's, not the
# template's globals: arguments, gradients and temporaries.
CALL_SITE_NAME = "call_site_name"


def _call_site(node):
    for child in gast.walk(node):
        if isinstance(child, gast.Name):
            setattr(child, CALL_SITE_NAME, True)
    return node


def _call_site_copy(value):
    """_call_site(copy.deepcopy(value)) for an expression `value`, in one pass: its copy with
    each Name marked as the call site's. (Rules do not import the copier of the transforms.)"""
    return _marked_copy(value, {})


def _marked_copy(value, memo: dict):
    if type(value) in _ATOMS:
        return value
    copied = memo.get(id(value))
    if copied is not None:
        return copied
    if isinstance(value, gast.AST):
        # as copy.deepcopy makes a node: by its class's __new__, its __dict__ filled
        copied = type(value).__new__(type(value))
        memo[id(value)] = copied
        state = copied.__dict__
        for key, item in value.__dict__.items():
            state[key] = _marked_copy(item, memo)
        if isinstance(copied, gast.Name):
            state[CALL_SITE_NAME] = True
        return copied
    if type(value) is list:
        copied = memo[id(value)] = []
        copied.extend(_marked_copy(item, memo) for item in value)
        return copied
    return copy.deepcopy(value, memo)


# What copy.deepcopy returns as it is.
_ATOMS = frozenset({type(None), bool, int, float, complex, str, bytes, type(Ellipsis)})


class _Substitute:
    """A copy of a template statement with parameters replaced by argument expressions,
    temporaries by fresh names, and `d[...]` by gradients. The template is read, never
    changed: copying it while filling it in is one pass where copying it first was two."""

    def __init__(self, bindings: dict, gradients: dict, result_name: str, gradient_of_result,
                 namespace: dict | None = None):
        self.bindings = bindings
        self.gradients = gradients
        self.result_name = result_name
        self.gradient_of_result = gradient_of_result
        self.namespace = namespace or {}

    def visit(self, node):
        if isinstance(node, gast.Name):
            return self.visit_Name(node)
        if isinstance(node, gast.Subscript) and gradient_target(node) is not None:
            return self.visit_Subscript(node)
        copied = self.copy(node)
        if isinstance(node, gast.Call) and isinstance(node.func, gast.Name):
            # A helper that says its value from the call's constant arguments
            # (`memory_order(x, "C")` is "C") is that value in the code made.
            fold = getattr(self.namespace.get(node.func.id), "__autotrace_fold__", None)
            folded = fold(copied.args) if fold is not None else None
            return folded if folded is not None else copied
        if isinstance(node, gast.IfExp):
            # `a if "edge" != "constant" else b`, the argument a constant: the branch taken
            test = _constant_comparison(copied.test)
            return copied if test is None else (copied.body if test else copied.orelse)
        return copied

    def copy(self, node):
        """`node` copied as copy.deepcopy copies it (its class, every attribute), with the
        nodes under it visited."""
        copied = type(node)()
        state = copied.__dict__
        for key, value in node.__dict__.items():
            if isinstance(value, gast.AST):
                value = self.visit(value)
            elif isinstance(value, list):
                value = [self.visit(item) if isinstance(item, gast.AST) else item
                         for item in value]
            state[key] = value  # else a string, number or None, which deepcopy shares too
        return copied

    def visit_Subscript(self, node):
        """`d[name]`, of the result or of a parameter."""
        target = gradient_target(node)
        if target == self.result_name:
            return _call_site_copy(self.gradient_of_result)
        if target not in self.gradients:
            raise RuleError(f"d[{target}] is read in a template before it is assigned")
        return _call_site(gast.Name(id=self.gradients[target], ctx=self.copy(node.ctx),
                                    annotation=None, type_comment=None))

    def visit_Name(self, node):
        if node.id in self.bindings:
            replacement = self.bindings[node.id]
            if isinstance(node.ctx, gast.Store) or isinstance(replacement, str):
                return _call_site(gast.Name(id=replacement, ctx=self.copy(node.ctx),
                                            annotation=None, type_comment=None))
            return _call_site_copy(replacement)
        return self.copy(node)


@dataclass
class Instance:
    """A rule inlined at one call site.

    statements: the template body with names replaced; a statement that assigns `d[p]` for a
        parameter `p` now assigns `gradients[p]`.
    gradients: parameter name -> the fresh name that holds that parameter's gradient.
    arguments: parameter name -> the call's argument expression bound to it (a gast.Tuple for
        a `*name` parameter).
    """

    statements: list
    gradients: dict
    arguments: dict


def _bind(rule: Rule, args: list, kwargs: dict, mode: str) -> dict:
    """Each parameter of `rule` -> the call's argument expression bound to it (a gast.Tuple for
    a `*name` parameter, a literal for a default)."""
    try:
        bound = rule.bind(args, kwargs)
    except TypeError as error:
        raise RuleError(f"the {mode} rule cannot take this call: {error}") from None
    bound.apply_defaults()
    arguments = {}
    for name, value in bound.arguments.items():
        parameter = rule.signature.parameters[name]
        if parameter.kind is inspect.Parameter.VAR_POSITIONAL:
            value = gast.Tuple(elts=list(value), ctx=gast.Load())
        elif parameter.kind is inspect.Parameter.VAR_KEYWORD:
            raise RuleError(f"rule template {rule.template.__name__} may not take **{name}")
        elif not isinstance(value, gast.AST):
            value = literal(value)
        arguments[name] = value
    return arguments


def _name_temporaries(assigned: tuple, temporaries: dict, fresh_name) -> None:
    """Give each name a statement assigns (`assigned`, Rule.assigned's) a fresh name, once."""
    for identifier in assigned:
        if identifier not in temporaries:
            temporaries[identifier] = fresh_name(identifier)


def instantiate(rule: Rule, result, args: list, kwargs: dict, fresh_name: Callable[[str], str],
                gradient_of_result, wanted: set | None = None) -> Instance:
    """Inline `rule` for the call `func(*args, **kwargs)` whose result is `result`.

    result, gradient_of_result: gast expressions for the primal result and its gradient.
    args, kwargs: the call's arguments as gast expressions.
    fresh_name(hint): returns a name unused in the surrounding code.
    wanted: the parameters whose gradients are needed; statements assigning other parameters'
        gradients are left out (None keeps all).
    """
    arguments = _bind(rule, args, kwargs, "derivative")
    bindings = {rule.result_name: result, **arguments}

    temporaries = {}
    gradients = {}
    statements = []
    for statement, assigned in zip(rule.body, rule.assigned):
        target = None
        if isinstance(statement, gast.Assign) and len(statement.targets) == 1:
            target = gradient_target(statement.targets[0])
        if target is not None:
            if target not in rule.signature.parameters:
                raise RuleError(f"rule template {rule.template.__name__} assigns d[{target}], "
                                f"but {target} is not one of its parameters")
            if wanted is not None and target not in wanted:
                continue
            if target in gradients:
                raise RuleError(f"rule template {rule.template.__name__} assigns d[{target}] "
                                "twice; assign it once")
            gradients[target] = fresh_name("grad_" + target)
        _name_temporaries(assigned, temporaries, fresh_name)
        statements.append(statement)

    bindings.update(temporaries)
    substitute = _Substitute(bindings, gradients, rule.result_name, gradient_of_result,
                             rule.namespace)
    statements = [substitute.visit(statement) for statement in statements]
    return Instance(statements, gradients, arguments)


def instantiate_tangent(rule: Rule, result, args: list, kwargs: dict,
                        fresh_name: Callable[[str], str], tangent_of, output: str) -> list:
    """Inline the tangent rule `rule` for `result = func(*args, **kwargs)`.

    A tangent template assigns `d[y]` (y: its result parameter) once, from the tangents of its
    inputs, `d[x]`. tangent_of(parameter name, bound argument expression) returns the gast
    expression standing for `d[parameter]` (for a `*name` parameter, a tuple expression).
    `output` is the name the tangent of the result is assigned to.
    """
    arguments = _bind(rule, args, kwargs, "tangent")
    bindings = {rule.result_name: result, **arguments}
    tangents = {parameter: tangent_of(parameter, value) for parameter, value in arguments.items()}

    temporaries = {}
    statements = []
    assigned_output = False
    for statement, assigned in zip(rule.body, rule.assigned):
        target = None
        if isinstance(statement, gast.Assign) and len(statement.targets) == 1:
            target = gradient_target(statement.targets[0])
        if target is not None:
            if target != rule.result_name or assigned_output:
                raise RuleError(f"tangent template {rule.template.__name__} must assign "
                                f"d[{rule.result_name}] once, and no other d[...]")
            assigned_output = True
        _name_temporaries(assigned, temporaries, fresh_name)
        statements.append(statement)
    if not assigned_output:
        raise RuleError(f"tangent template {rule.template.__name__} never assigns "
                        f"d[{rule.result_name}]")
    bindings.update(temporaries)
    substitute = _TangentSubstitute(bindings, tangents, rule.result_name, output,
                                    rule.namespace)
    return [substitute.visit(statement) for statement in statements]


_COMPARISONS = {gast.Eq: operator.eq, gast.NotEq: operator.ne, gast.In: lambda a, b: a in b,
                gast.NotIn: lambda a, b: a not in b, gast.Is: operator.is_,
                gast.IsNot: operator.is_not}


def _constant_comparison(test):
    """The truth of `test` where it compares constants alone (`"edge" != "constant"`,
    `-0.5 is None`, `None is None and 0.0 is None`), else None."""
    if isinstance(test, gast.BoolOp):
        truths = [_constant_comparison(value) for value in test.values]
        if None in truths:
            return None
        return all(truths) if isinstance(test.op, gast.And) else any(truths)
    if not (isinstance(test, gast.Compare) and len(test.ops) == 1
            and type(test.ops[0]) in _COMPARISONS):
        return None
    left, right = _constant(test.left), _constant(test.comparators[0])
    if left is _NOT_CONSTANT or right is _NOT_CONSTANT:
        return None
    return bool(_COMPARISONS[type(test.ops[0])](left, right))


_NOT_CONSTANT = object()


def _constant(node):
    """The value of a constant node, a signed number too (`-0.5`), else _NOT_CONSTANT."""
    if isinstance(node, gast.UnaryOp) and isinstance(node.op, (gast.USub, gast.UAdd)):
        value = _constant(node.operand)
        if isinstance(value, (int, float, complex)) and not isinstance(value, bool):
            return -value if isinstance(node.op, gast.USub) else value
        return _NOT_CONSTANT
    return node.value if isinstance(node, gast.Constant) else _NOT_CONSTANT


class _TangentSubstitute(_Substitute):
    """Like _Substitute, with `d[x]` for an input x read as that input's tangent."""

    def __init__(self, bindings: dict, tangents: dict, result_name: str, output: str,
                 namespace: dict | None = None):
        super().__init__(bindings, {}, None, None, namespace)
        self.tangents = tangents
        self.result = result_name
        self.output = output

    def visit_Subscript(self, node):
        target = gradient_target(node)
        if target == self.result and isinstance(node.ctx, gast.Store):
            return gast.Name(id=self.output, ctx=gast.Store(), annotation=None,
                             type_comment=None)
        if target not in self.tangents:
            raise RuleError(f"d[{target}] in a tangent template must name an input parameter")
        # The tangent's names are the call site's: a global of the rule's module that happens
        # to be named like one (`dX`) is not what the rule reads.
        return _call_site_copy(self.tangents[target])
