"""Forward mode: each statement is followed by the statement computing its tangent.

    y = np.sin(x) * w          becomes      _t1 = np.sin(x)
                                            d_t1 = dx * np.cos(x)
                                            y = _t1 * w
                                            dy = d_t1 * w + _t1 * dw

Control flow stays as written (tangents ride along the path the primal takes), so loops,
breaks and early returns need no bookkeeping. A `return v` returns `(v, dv)`. Calls to other
user functions call their forward derivatives, which return `(value, tangent)` too.
"""
from __future__ import annotations

import inspect

import gast
import numpy as np

from ..codegen import constant_folding
from ..analysis.activity import DESCRIPTIVE_ATTRIBUTES, popped_stack
from ..analysis.calls import (UNARY_OPERATORS, binary_operator, classify, describe,
                                        has_tangent_rule)
from ..codegen.nodes import copy_tree
from ..front.custom_gradients import check_call, custom_functions, kind_of
from ..errors import TransformError
from ..front.line_map import mark, mark_unmarked
from ..analysis.object_state import may_change_its_object
from ..pipeline_names import CONTAINER_RESULTS
from ..analysis.list_operators import ARRAY
from ..analysis.same_shapes import is_number
from ..rules.core import (RuleError, instantiate_tangent, reads_list_as_array,
                          tangent_rules, unbound_call_message)
from ..codegen.templates import keywords_dict, name, replace, replace_expression
from ..modes import DerivativeMode
from ..reverse.name_scopes import recomputes, scope_call, with_block
from .zero_terms import ZeroTerms, holds_folded_zero, is_zero


class ForwardMode(DerivativeMode):
    """Generates the tangent statements of one function body (see the module docstring).

    context, active: as for every mode (transforms/modes.py).
    """

    rule_kind = "tangent"

    def __init__(self, context, active: set):
        super().__init__(context, active)
        self.tangent_names: dict[str, str] = {}
        # Tangents of temporaries that hold arrays of their own, and tangents that may not.
        self.own_arrays: set[str] = set()
        self.shared: set[str] = set()
        self._linear = None
        # The helper each returned tangent passes through, set by the driver for the user's
        # own function (its caller may write into the tangent it gets), else None.
        self.fresh_tangent = None

    def tangent(self, primal: str) -> str:
        if primal not in self.tangent_names:
            self.tangent_names[primal] = self.namer.fresh("d" + primal)
            if primal.startswith("_"):
                self.temporaries.add(self.tangent_names[primal])
        return self.tangent_names[primal]

    def tangent_of(self, node):
        """The tangent of an atom: its tangent variable, or zeros like it."""
        if self.is_active(node):
            return name(self.tangent(node.id))
        if isinstance(node, gast.Tuple):
            return gast.Tuple(elts=[self.tangent_of(e) for e in node.elts], ctx=gast.Load())
        if is_number(node):
            zero = gast.Constant(value=0.0, kind=None)
            zero.symbolic_zero = "number"  # a number's tangent: terms it multiplies vanish
            return zero
        zero = replace_expression("zeros_like(value)", zeros_like=self.helper("zeros_like"),
                                  value=copy_tree(node))
        zero.symbolic_zero = "array"  # vanishes too, but may carry a broadcast shape
        return zero

    # ---- blocks and statements -------------------------------------------------------------

    def block(self, statements) -> list:
        out = []
        for statement in statements:
            out += self.statement(statement)
        return out

    def statement(self, node) -> list:
        return mark_unmarked(self.visitor(node)(node), self.location, node)

    def visit_Pass(self, node):
        return []

    def visit_Break(self, node):
        return [node]

    visit_Continue = visit_Raise = visit_Assert = visit_Break

    def visit_Return(self, node):
        value = node.value
        tangent = self.tangent_of(value)
        if self.fresh_tangent is not None and not is_zero(tangent):
            tangent = gast.Call(func=name(self.fresh_tangent), args=[tangent], keywords=[])
        return [gast.Return(value=gast.Tuple(elts=[value, tangent], ctx=gast.Load()))]

    def visit_If(self, node):
        node.body = self.block(node.body) or [gast.Pass()]
        node.orelse = self.block(node.orelse)
        return [mark(node, self.location, node)]

    def visit_For(self, node):
        body = self.block(node.body) or [gast.Pass()]
        target = node.target.id
        if target in self.active:  # a loop counter is a constant: its tangent is zero
            body = self.assign_tangent(target, replace_expression(
                "zeros_like(value)", zeros_like=self.helper("zeros_like"), value=target)) + body
        node.body = body
        return [mark(node, self.location, node)]

    def visit_While(self, node):
        node.body = self.block(node.body) or [gast.Pass()]
        return [mark(node, self.location, node)]

    def visit_With(self, node):
        """A name scope (transforms/reverse/name_scopes.py): tangents inside it too. A `state_as_at` block:
        a block of its own for each statement it becomes (a call recomputed, then the
        recomputation of its tangent), each from the state the block begins with."""
        if not recomputes(node, self.context.namespace):
            return self.visit_While(node)
        return [mark(with_block(node, copy_tree(scope_call(node)), [statement]),
                     self.location, node) for statement in self.block(node.body)]

    def visit_Expr(self, node):
        call = node.value
        if not isinstance(call, gast.Call):
            return [node]
        kind = classify(call.func, self.context.namespace).kind
        if kind == "list_append" and self.is_active(call.func.value):
            container = call.func.value.id
            return [node] + replace("tangent.append(value)", tangent=self.tangent(container),
                                    value=self.tangent_of(call.args[0]))
        if kind == "list_pop" and self.is_active(call.func.value):
            return [node] + replace("tangent.pop()", tangent=self.tangent(call.func.value.id))
        if (isinstance(call.func, gast.Name)
                and call.func.id == self.context.helper("restore_item")):
            container, index, value = call.args
            if self.is_active(container):
                return [node] + replace(
                    "restore_item(tangent, index, value)", restore_item=call.func.id,
                    tangent=self.tangent(container.id), index=index,
                    value=self.tangent_of(value))
        if (isinstance(call.func, gast.Name) and call.func.id == self.context.helper("note_kept")
                and all(self.is_active(argument) for argument in call.args)):
            held, container = call.args  # (the tangents' items stay where the values' do)
            return [node] + replace("note_kept(tangent_held, tangent)", note_kept=call.func.id,
                                    tangent_held=self.tangent(held.id),
                                    tangent=self.tangent(container.id))
        if kind == "dynamic" and self.active_callee(call) is not None:
            # Called for what it does to its object, which carries a tangent: differentiated
            # as a call whose result nothing reads (see reverse.py's visit_Expr).
            effect = self.temporary("effect")
            return self.visit_Assign(gast.copy_location(gast.Assign(
                targets=[name(effect, store=True)], value=call, type_comment=None), node))
        return [node]

    def visit_Assign(self, node):
        target = node.targets[0]
        if isinstance(target, gast.Subscript):
            container = target.value.id
            if container not in self.active:
                return [node]
            tangent_target = gast.Subscript(value=name(self.tangent(container)),
                                            slice=copy_tree(target.slice),
                                            ctx=gast.Store())
            # The tangent goes first: `A[0:2] = A[0:2] * s` changes the view `A[0:2]` the
            # tangent reads (primal values never read tangents). What the target keeps of it:
            # none where it holds integers or booleans, the real part where it is real.
            kept = replace_expression("kept_by_write(tangent, target)", kept_by_write=self.helper(
                "kept_by_write"), tangent=self.tangent_of(node.value), target=container)
            return [gast.Assign(targets=[tangent_target], value=kept, type_comment=None), node]
        primal, value = target.id, node.value
        if primal not in self.active and popped_stack(value) in self.active:  # a value saved
            return self.visit_Expr(node)  # without a tangent (a loop index): take its zero off
        if primal not in self.active and not (  # (a call for its effect on its object)
                isinstance(value, gast.Call) and self.active_callee(value) is not None
                and may_change_its_object(value, self.context.namespace)):
            return [node]
        self.active.add(primal)
        if isinstance(value, gast.Call):
            resolved = classify(value.func, self.context.namespace)
            if resolved.kind in ("user", "dynamic") and self.call_is_active(value) \
                    and not has_tangent_rule(resolved.value):
                return self.call(primal, value, resolved, node)
            if resolved.kind == "custom" and self.call_is_active(value):
                return self.custom_call(primal, value, resolved.value, node)
        tangent = self.tangent_of_value(primal, value, node)
        if tangent is None:
            tangent = [gast.Assign(targets=[name(self.tangent(primal), store=True)],
                                   value=replace_expression(
                                       "zeros_like(value)",
                                       zeros_like=self.helper("zeros_like"), value=primal),
                                   type_comment=None)]
        return [node] + tangent

    def call_is_active(self, call) -> bool:
        return any(self.is_active(a) for a in call.args + [k.value for k in call.keywords]) \
            or self.active_callee(call) is not None

    def active_callee(self, call) -> str | None:
        """The name of the object that carries a tangent and whose method a call resolved
        only when it runs is (`p` of `p(x)` or `p.method(x)`), or None."""
        func = call.func.value if isinstance(call.func, gast.Attribute) else call.func
        if not (isinstance(func, gast.Name) and self.is_active(func)):
            return None
        return func.id if classify(call.func, self.context.namespace).kind == "dynamic" \
            else None

    def callee_tangent(self, func, owner: str):
        """The tangent of the object a call of `func` runs a method of, `owner`'s for
        `owner(x)`; for `owner.f(x)`, found when it runs: `owner`'s where `f` is a method of
        it, that of `owner.f` where it is an object held there (a layer in a field)."""
        if not isinstance(func, gast.Attribute):
            return self.tangent_of(name(owner))
        return replace_expression(
            "callee_tangent(tangent, attribute, owner)",
            callee_tangent=self.helper("callee_tangent"), tangent=self.tangent_of(name(owner)),
            attribute=gast.Constant(value=func.attr, kind=None), owner=owner)

    # ---- the tangent of one operation -------------------------------------------------------

    def assign_tangent(self, primal: str, value) -> list:
        self.shared.add(self.tangent(primal))  # a name's, an item's: maybe another's array
        return [gast.Assign(targets=[name(self.tangent(primal), store=True)], value=value,
                            type_comment=None)]

    def tangent_of_value(self, primal, value, node):
        """Statements assigning the tangent of `primal = value`, or None if it is zero."""
        if isinstance(value, gast.Name):
            return self.assign_tangent(primal, self.tangent_of(value)) if self.is_active(
                value) else None
        if isinstance(value, gast.BinOp):
            if (isinstance(value.op, gast.Add) and self.sequences is not None
                    and self.sequences.operation(primal, value) != ARRAY):
                return self.concatenation_tangent(primal, value)
            return self.apply_rule(binary_operator(value, self.location, self.is_active),
                                   primal, [value.left, value.right], [], node)
        if isinstance(value, gast.UnaryOp) and type(value.op) in UNARY_OPERATORS:
            return self.apply_rule(UNARY_OPERATORS[type(value.op)], primal, [value.operand],
                                   [], node)
        if isinstance(value, gast.Call):
            resolved = classify(value.func, self.context.namespace)
            if resolved.kind == "list_pop":
                if not self.is_active(value.func.value):
                    return None
                return self.assign_tangent(primal, replace_expression(
                    "tangent.pop()", tangent=self.tangent(value.func.value.id)))
            if not self.call_is_active(value):
                return None
            if resolved.kind == "rule" or has_tangent_rule(resolved.value):  # (one alone too)
                return self.apply_rule(resolved.value, primal, value.args, value.keywords,
                                       node, called=True)
            if resolved.kind == "constant":
                return None
            raise self.no_rule(resolved.value, node, value.func)
        if isinstance(value, gast.Subscript):
            if not self.is_active(value.value):
                return None
            return self.assign_tangent(primal, gast.Subscript(
                value=self.tangent_of(value.value), slice=copy_tree(value.slice),
                ctx=gast.Load()))
        if isinstance(value, gast.Attribute):
            if not self.is_active(value.value) or value.attr in DESCRIPTIVE_ATTRIBUTES:
                return None
            return self.assign_tangent(primal, replace_expression(
                "attribute_tangent(tangent, attribute, owner)",
                attribute_tangent=self.helper("attribute_tangent"),
                tangent=self.tangent_of(value.value),
                attribute=gast.Constant(value=value.attr, kind=None), owner=value.value))
        if isinstance(value, (gast.Tuple, gast.List)):
            if not any(self.is_active(e) for e in value.elts):
                return None
            return self.assign_tangent(primal, type(value)(
                elts=[self.tangent_of(e) for e in value.elts], ctx=gast.Load()))
        if isinstance(value, gast.Dict):
            if not any(self.is_active(v) for v in value.values):
                return None
            return self.assign_tangent(primal, gast.Dict(
                keys=copy_tree(value.keys), values=[self.tangent_of(v)
                                                        for v in value.values]))
        return None

    def concatenation_tangent(self, primal, value):
        """`a + b` that joins lists or tuples (or may): the tangent joins the operands'
        tangents, an operand without one giving zeros of its own length, so that the items
        keep their places (for arrays the same code adds)."""
        def part(operand):
            if isinstance(operand, (gast.List, gast.Tuple)):
                return type(operand)(elts=[part(e) for e in operand.elts], ctx=gast.Load())
            if self.is_active(operand):
                return self.tangent_of(operand)
            return replace_expression("zeros_like(value)", value=copy_tree(operand),
                                      zeros_like=self.helper("zeros_like"))
        operands = (value.left, value.right)
        if not any(self.is_active(e) for operand in operands for e in getattr(
                operand, "elts", [operand])):
            return None
        return self.assign_tangent(primal, gast.BinOp(left=part(value.left), op=gast.Add(),
                                                      right=part(value.right)))

    def apply_rule(self, function, primal, args, keywords, node, called=False):
        """`primal = function(*args)`'s tangent: a call if `called`, else Python's operator."""
        if not any(self.is_active(a) or isinstance(a, gast.Tuple) and any(
                self.is_active(e) for e in a.elts) for a in args + [k.value for k in keywords]):
            return None
        rule = tangent_rules.get(function)
        if rule is None:
            raise self.no_rule(function, node)
        kwargs = {k.arg: k.value for k in keywords}
        try:
            rule.bind(args, kwargs)
        except TypeError as error:
            raise self.location.error(
                node, unbound_call_message(function, describe(function), error),
                describe(function)) from None
        try:
            statements = instantiate_tangent(
                rule, name(primal), list(args), kwargs, self.temporary,
                lambda parameter, bound: self.argument_tangent(function, parameter, bound)
                if called else self.tangent_of(bound), self.tangent(primal))
        except RuleError as error:
            raise self.location.error(node, f"{describe(function)}: {error}",
                                      describe(function)) from None
        written = [copy_tree(s) for s in statements]  # each zero tangent computed, as zeros
        zero_terms = ZeroTerms(self.linear_functions())
        statements = [zero_terms.visit(s) for s in statements]
        container = getattr(function, "__name__", "") in CONTAINER_RESULTS
        for index, statement in enumerate(statements):
            if not isinstance(statement, gast.Assign):
                continue
            whole_zero = is_zero(statement.value)
            if whole_zero and statement.targets[0].id != self.tangent(primal) or \
                    not whole_zero and holds_folded_zero(statement.value):
                # A zero standing for a term of another shape (`np.sum(dx)` of a zero dx, the
                # product of a zero and a wider array), in a temporary or an item of the result:
                # that statement is computed as the rule writes it, on zeros.
                statement.value = written[index].value
                whole_zero = False
            if container and statement.targets[0].id == self.tangent(primal):
                # A tuple or namedtuple result gets a tangent of the very same kind.
                statement.value = replace_expression(
                    "like_container(tangent, value)",
                    like_container=self.helper("like_container"), tangent=statement.value,
                    value=primal)
            if whole_zero:
                statement.value = replace_expression(
                    "zeros_like(value)", zeros_like=self.helper("zeros_like"), value=primal)
            elif zero_terms.dropped_array_zero and statement.targets[0].id == self.tangent(
                    primal):
                # A dropped zero term may have carried the result's broadcast shape.
                statement.value = replace_expression(
                    "tangent_like(tangent, value)", tangent_like=self.helper("tangent_like"),
                    tangent=statement.value, value=primal)
            if statement.targets[0].id == self.tangent(primal):
                if isinstance(function, np.ufunc):
                    self.keep_apart(statement)
                if isinstance(function, np.ufunc) or function in _NEW_ARRAYS:
                    self.own_arrays.add(self.tangent(primal))
                else:
                    self.shared.add(self.tangent(primal))
        return self.import_template_names(statements, rule.namespace)

    def argument_tangent(self, function, parameter: str, argument):
        """The tangent of `argument` as `function`'s rule reads it as `parameter`: where NumPy
        reads a list as an array, that of its tangents (`read_as_array`), which the rule's
        operators do not repeat or join (`d[x] * 2`); Python's operators keep lists."""
        tangent = self.tangent_of(argument)
        if (isinstance(argument, gast.Name) and self.is_active(argument)
                and reads_list_as_array(function, parameter)
                and (self.sequences is None or self.sequences.may_hold_list(argument.id))):
            return replace_expression("read_as_array(tangent)", tangent=tangent,
                                      read_as_array=self.helper("read_as_array"))
        return tangent

    def keep_apart(self, statement) -> None:
        """A ufunc's result is a new array (`+x`, `x - 0.0`, `x * 1.0`), so its tangent must
        not be an input's tangent itself, which a later `y[i] = ...` would write into: where
        the rule (its zero terms dropped, its constants folded) gives one through, copy it,
        unless it is a temporary's (read once, here) that holds an array of its own."""
        folded = copy_tree(statement)
        constant_folding.fold_constants([folded])
        value = folded.value
        passed = value
        while (isinstance(passed, gast.Call) and isinstance(passed.func, gast.Name)
               and passed.func.id in (self.helper("tangent_like"),
                                      self.helper("read_as_array"))):
            passed = passed.args[0]  # the tangent itself where it is an array already
        if isinstance(passed, gast.Name) and not (
                passed.id in self.temporaries and passed.id in self.own_arrays
                and passed.id not in self.shared):
            statement.value = replace_expression("snapshot(tangent)",
                                                 snapshot=self.helper("snapshot"),
                                                 tangent=value)

    def linear_functions(self) -> dict:
        """Names (as generated code spells them) of functions that are zero when the given
        argument positions are zero: products in any factor, linear maps in their first."""
        if self._linear is None:
            products = (np.matmul, np.dot, np.multiply, np.outer, np.inner, np.kron,
                        np.tensordot)
            maps = (np.sum, np.mean, np.transpose, np.reshape, np.swapaxes, np.moveaxis,
                    np.squeeze, np.expand_dims, np.ravel, np.negative, np.cumsum,
                    np.broadcast_to, np.real, np.conj, np.trace, np.diagonal, np.flip,
                    np.roll, np.tile, np.repeat, np.rot90)
            self._linear = {}
            for function in products + maps:
                positions = (0, 1) if function in products else (0,)
                for spelling in _spellings(function, self.context):
                    self._linear[spelling] = positions
        return self._linear

    def call(self, primal, call, resolved, node) -> list:
        """`primal = g(...)` for a user function g: one call to g's forward derivative."""
        positions = [i for i, a in enumerate(call.args) if self.is_active(a)]
        keywords = [k.arg for k in call.keywords if self.is_active(k.value)]
        owner = self.active_callee(call) if resolved.kind == "dynamic" else None
        wrt = self.wrt_of_call(call, tuple(positions) + tuple(keywords), owner)
        # The object's tangent, which the method's writes into its state change in place
        # (runtime/derivatives/state_writes.py `state_tangent`): one the caller holds.
        ensured = [] if owner is None else replace(
            "tangent = object_tangent(tangent, value)", tangent=self.tangent(owner),
            object_tangent=self.helper("object_tangent"), value=owner)
        tangents = gast.Tuple(elts=([self.callee_tangent(call.func, owner)] if owner else [])
                              + [self.tangent_of(call.args[i]) for i in positions]
                              + [self.tangent_of(k.value) for k in call.keywords
                                 if k.arg in keywords], ctx=gast.Load())
        pair = gast.Tuple(elts=[name(primal, store=True),
                                name(self.tangent(primal), store=True)], ctx=gast.Store())
        self.shared.add(self.tangent(primal))  # g may return its argument's tangent
        if resolved.kind == "user":
            try:
                derivative = self.context.derive(resolved.value, wrt, "forward")
            except TransformError as error:
                if error.filename is not None:
                    raise
                raise self.location.error(node, error.message, error.construct,
                                          type(error)) from None
            keyword = self.context.seed_keyword(resolved.value, "tangent")
            value = gast.Call(func=name(derivative), args=copy_tree(call.args),
                              keywords=copy_tree(call.keywords)
                              + [gast.keyword(arg=keyword, value=tangents)])
        else:
            arguments = gast.Tuple(elts=copy_tree(call.args), ctx=gast.Load())
            value = replace_expression(
                "jvp_call(function, arguments, keywords, tangents, wrt)",
                jvp_call=self.helper("jvp_call"), function=call.func, arguments=arguments,
                keywords=keywords_dict(call.keywords), tangents=tangents, wrt=repr(wrt))
        return [gast.copy_location(statement, node) for statement in ensured] + [
            gast.copy_location(gast.Assign(targets=[pair], value=value, type_comment=None),
                               node)]

    def custom_call(self, primal, call, custom, node) -> list:
        """`y = f(...)` for an f with a custom gradient (see transforms/front/custom_gradients.py): y from f's
        value-only twin, and its tangent from the user's grad_fn, so that forward mode agrees
        with reverse mode. grad_fn is linear in dy, dy -> J^T dy, so J v is the gradient in dy
        of <grad_fn(dy), v>: one reverse-mode derivative of f's vjp twin, seeded with v.
        A custom_jvp function's tangent comes from its rule; a custom_vjp function's is
        refused, as in JAX (its bwd need not be code autotrace can transpose)."""
        kind = kind_of(custom)
        if kind == "custom_vjp":
            label = getattr(custom, "__name__", "f")
            raise self.location.error(
                node, f"{label} is a custom_vjp function, whose rules give its gradient in "
                "reverse mode only; forward mode (forward, jvp, hessian, jacobian with "
                f"mode='forward') cannot use them: give {label} a custom_jvp rule instead "
                "(autotrace.custom_jvp), which both modes use", describe(custom))
        value_function, vjp_function = custom_functions(custom)
        check_call(custom, call, self.location, node)
        if kind == "custom_jvp":
            return self.custom_jvp_call(primal, call, custom, node)
        value_name = self.context.import_value(value_function.__name__, value_function)
        arguments = inspect.signature(vjp_function).parameters
        seed_parameter = list(arguments)[-1]  # the twin's last parameter: dy
        try:
            transposed = self.context.derive(vjp_function, (seed_parameter,), "reverse")
        except TransformError as error:
            message = (f"forward mode takes the tangent of {describe(custom)} (called on line "
                       f"{self.location.line_of(node)} of {self.location.filename}) from its "
                       f"grad_fn, and cannot differentiate it in dy: {error.message}")
            if error.filename is None:
                raise self.location.error(node, message, describe(custom)) from None
            raise TransformError(message, error.filename, error.lineno,
                                 error.construct) from None
        tangents = [self.tangent_of(argument) for argument in call.args]
        seed = tangents[0] if len(tangents) == 1 else gast.Tuple(elts=tangents,
                                                                 ctx=gast.Load())
        zero = replace_expression("zeros_like(value)", zeros_like=self.helper("zeros_like"),
                                  value=primal)
        keywords = copy_tree(call.keywords) + [
            gast.keyword(arg=seed_parameter, value=zero),
            gast.keyword(arg=self.context.seed_keyword(vjp_function), value=seed)]
        value = gast.Assign(targets=[name(primal, store=True)], value=gast.Call(
            func=name(value_name), args=copy_tree(call.args),
            keywords=copy_tree(call.keywords)), type_comment=None)
        gradients = gast.Call(func=name(transposed), args=copy_tree(call.args),
                              keywords=keywords)
        tangent = replace_expression("gradients[0]", gradients=gradients)
        return [gast.copy_location(value, node)] + self.assign_tangent(primal, tangent)

    def custom_jvp_call(self, primal, call, custom, node) -> list:
        """`y = f(...)` for a custom_jvp f: y and its tangent from f's rule,
        `y, dy = jvp((args...), (tangents...))`."""
        rule = self.context.import_value(f"{getattr(custom, '__name__', 'f')}__jvp", custom.jvp)
        pair = self.temporary("pair")
        primals = gast.Tuple(elts=copy_tree(call.args), ctx=gast.Load())
        tangents = gast.Tuple(elts=[self.tangent_of(argument) for argument in call.args],
                              ctx=gast.Load())
        statements = [
            gast.Assign(targets=[name(pair, store=True)], value=gast.Call(
                func=name(rule), args=[primals, tangents], keywords=[]), type_comment=None),
            gast.Assign(targets=[name(primal, store=True)],
                        value=replace_expression("pair[0]", pair=pair), type_comment=None)]
        return [gast.copy_location(s, node) for s in statements] + self.assign_tangent(
            primal, replace_expression("pair[1]", pair=pair))

    def no_rule_text(self, label: str) -> str:
        return f"no tangent rule for {label}"

    def missing_rule_text(self, function, label: str) -> str:
        return f"no tangent (forward-mode) rule for {label}"


# Functions whose tangent rules compute new arrays (as ufuncs' do, once keep_apart has run).
_NEW_ARRAYS = {np.dot, np.inner, np.outer, np.tensordot, np.einsum, np.kron, np.sum, np.mean,
               np.where, np.clip}


def _spellings(function, context) -> list:
    """How generated code may name `function`: `np.sum` (numpy as bound there)."""
    return [f"{context.numpy_name}.{function.__name__}", f"np.{function.__name__}"]
