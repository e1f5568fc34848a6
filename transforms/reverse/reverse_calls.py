"""Reverse mode for calls: inlined rules, derivatives of user functions, custom gradients.

These are the methods of transforms.reverse.reverse.ReverseMode that turn `y = f(...)` into adjoint
statements; they live here to keep each module to one idea.
"""
from __future__ import annotations

import inspect

import gast
import numpy as np

from ..codegen.visitors import NodeTransformer
from ..codegen.nodes import copy_tree
from ...runtime.derivatives import adjoint_ops as adjoint_ops
from ..analysis.calls import classify, describe, tangent_rule_only
from ..codegen.codegen import to_source
from ..front.custom_gradients import (check_call, custom_functions, kind_of,
                                      transposed_tangents)
from ..errors import TransformError
from ..analysis.calls import FieldsOf
from ..analysis.object_state import may_change_its_object
from ..analysis.random_draws import refuse_draws_in
from ..rules.core import RuleError, adjoint_rules, instantiate, unbound_call_message
from .sweep_parts import Sweep, comment
from ..codegen.templates import keywords_dict, name, replace, replace_expression


# Where the adjoint sweep runs a call whole, not checkpointed: in a derivative of a derivative.
RUN_AGAIN = "a function called by one that is differentiated twice (grad of grad, hessian)"


class CallAdjoints:
    """Mixed into ReverseMode: the adjoints of calls (see the module docstring)."""

    def custom_gradient(self, node, primal: str, custom) -> Sweep:
        """`y = f(a, b)` for an f with a custom gradient: the primal sweep computes f's value,
        the adjoint sweep calls f's grad_fn (see transforms/front/custom_gradients.py); a
        custom_jvp function's, its rule's tangent transposed (`custom_jvp_adjoint`)."""
        value_function, vjp_function = custom_functions(custom)
        call = node.value
        check_call(custom, call, self.location, node)
        value_name = self.context.import_value(value_function.__name__, value_function)
        if kind_of(custom) == "custom_jvp":
            gradients_of = self.custom_jvp_adjoint(custom, vjp_function, node)
        else:
            vjp_name = self.context.import_value(vjp_function.__name__, vjp_function)

            def gradients_of(arguments: list, gradient) -> gast.Call:
                return gast.Call(func=name(vjp_name), args=arguments + [gradient],
                                 keywords=[])
        push, pop = self.assignment_site(primal)
        statement = gast.copy_location(gast.Assign(
            targets=[name(primal, store=True)],
            value=gast.Call(func=name(value_name), args=copy_tree(call.args),
                            keywords=copy_tree(call.keywords)), type_comment=None), node)
        active = [a for a in call.args if self.is_active(a)]

        def adjoint(state):
            out = []
            if primal in self.active and primal in state and active:
                state.discard(primal)
                results = self.temporary("grads")
                out.append(gast.Assign(targets=[name(results, store=True)], value=gradients_of(
                    copy_tree(call.args), name(self.gradient(primal))), type_comment=None))
                for position, argument in enumerate(call.args):
                    if not self.is_active(argument):
                        continue
                    item = (name(results) if len(call.args) == 1 else replace_expression(
                        "results[i]", results=results,
                        i=gast.Constant(value=position, kind=None)))
                    out += self.accumulate(argument.id, item, state)
            return out + pop
        return Sweep(push + [statement], adjoint)

    def custom_jvp_adjoint(self, custom, tangent_function, node):
        """For a custom_jvp function, a function from its call's arguments (nodes) and its
        value's gradient (a node) to the call that gives the arguments' gradients:
        `transposed_tangents` of its rule's tangent (`tangent_function` of the arguments and
        their tangents) differentiated in the tangents, which refuses a tangent not linear
        in them (transforms/front/custom_gradients.py)."""
        parameters = list(inspect.signature(tangent_function).parameters)
        count = len(parameters) // 2
        try:
            transposed = self.context.derive(tangent_function, tuple(parameters[count:]),
                                             "reverse")
        except TransformError as error:
            message = (f"reverse mode transposes the jvp rule of {describe(custom)} (called on "
                       f"line {self.location.line_of(node)} of {self.location.filename}), and "
                       f"cannot differentiate its tangent in the tangents: {error.message}")
            if error.filename is None:
                raise self.location.error(node, message, describe(custom)) from None
            raise TransformError(message, error.filename, error.lineno,
                                 error.construct) from None
        helper = self.context.import_value("transposed_tangents", transposed_tangents)
        seed = gast.Constant(value=self.context.seed_keyword(tangent_function), kind=None)
        label = gast.Constant(value=f"{getattr(custom, '__name__', 'f')} (called on line "
                              f"{self.location.line_of(node)} of {self.location.filename})",
                              kind=None)

        def gradients_of(arguments: list, gradient) -> gast.Call:
            return gast.Call(func=name(helper), args=[
                name(transposed), gast.Tuple(elts=arguments, ctx=gast.Load()), gradient,
                seed, label], keywords=[])
        return gradients_of

    def apply_rule(self, function, primal, args, keywords, gradient, state, node) -> list:
        rule = adjoint_rules.get(function)
        if rule is None:
            raise self.no_rule(function, node)
        kwargs = {k.arg: k.value for k in keywords}
        wanted = set()
        try:
            bound = rule.bind(args, kwargs)
        except TypeError as error:
            raise self.location.error(
                node, unbound_call_message(function, describe(function), error),
                describe(function)) from None
        for parameter, argument in bound.arguments.items():
            elements = argument if isinstance(argument, tuple) else [argument]
            if any(self.is_active(e) for e in elements):
                wanted.add(parameter)
        if not wanted:
            return []

        def fresh_name(hint: str) -> str:
            # A gradient the rule computes for an argument `x` is `bx_term`: a term of bx
            argument = bound.arguments.get(hint[len("grad_"):]) if hint.startswith(
                "grad_") else None
            if isinstance(argument, gast.Name):
                term = self.namer.fresh(self.gradient(argument.id) + "_term")
                self.temporaries.add(term)
                return term
            return self.temporary(hint)
        try:
            instance = instantiate(rule, name(primal), args, kwargs, fresh_name, gradient,
                                   wanted)
        except RuleError as error:
            raise self.location.error(node, f"{describe(function)}: {error}",
                                      describe(function)) from None
        if isinstance(function, np.ufunc) and self.shapes is not None:
            self.drop_unbroadcast(instance.statements, primal, rule.namespace)
        out = self.import_template_names(instance.statements, rule.namespace)
        for parameter, gradient_name in instance.gradients.items():
            argument = instance.arguments[parameter]
            if isinstance(argument, gast.Tuple):
                for position, element in enumerate(argument.elts):
                    if self.is_active(element):
                        item = replace_expression("g[i]", g=gradient_name,
                                                  i=gast.Constant(value=position, kind=None))
                        out += self.accumulate(element.id, item, state)
            elif self.is_active(argument):
                out += self.accumulate(argument.id, name(gradient_name), state)
        return out

    def drop_unbroadcast(self, statements, primal: str, namespace: dict) -> None:
        """`unbroadcast(g, x)` is `g` where x provably has the shape of the result."""
        unbroadcast = adjoint_ops.unbroadcast
        shapes = self.shapes

        class Drop(NodeTransformer):
            def visit_Call(self, node):
                self.generic_visit(node)
                if (isinstance(node.func, gast.Name) and namespace.get(node.func.id)
                        is unbroadcast and len(node.args) == 2
                        and isinstance(node.args[1], gast.Name)
                        and shapes.same(node.args[1].id, primal)):
                    return node.args[0]
                return node
        for statement in statements:
            Drop().visit(statement)

    def split_call(self, node, primal: str, resolved) -> Sweep | None:
        """`y = f(x)` for a user's function f whose derivative the adjoint sweep wants, run
        in halves (runtime/derivatives/sweeps.py):

            _adjoint1 = df(x)               (or vjp_start(f, (x,), {}, wrt), f known later)
            y = primal_sweep(_adjoint1)      f runs once, its derivative's primal sweep
            ...
            _grads1 = adjoint_sweep(_adjoint1, by)

        None for a call run whole: no gradient wanted, a rule, a checkpointed call (whose
        point is to run again), a constructor's fields. (Traced, an `if` or loop on a traced
        value becomes a graph op whose branches and body are graphs of their own, which what
        a call's primal sweep keeps cannot leave: autotrace.function then traces the form that
        runs every call whole, autotrace/traced_function.py.)"""
        call = node.value
        if self.context.session.split_calls == "top" and (self.loop_depth or self.branch_depth):
            return None
        if not self.context.session.split_calls or primal not in self.active or \
                resolved.kind not in ("user", "dynamic") or resolved.checkpointed or \
                isinstance(resolved.value, FieldsOf):
            return None
        _, _, owner, wrt = self.call_wrt(call, resolved)
        if not wrt:
            return None
        adjoint_name = self.temporary("adjoint")
        if resolved.kind == "user":
            start = gast.Call(func=name(self.derive_user(resolved.value, wrt, node, call,
                                                         "split")),
                              args=copy_tree(call.args),
                              keywords=copy_tree(call.keywords))
        else:
            start = replace_expression(
                "vjp_start(function, arguments, keywords, wrt)",
                vjp_start=self.helper("vjp_start"), function=copy_tree(call.func),
                arguments=gast.Tuple(elts=copy_tree(call.args), ctx=gast.Load()),
                keywords=keywords_dict(call.keywords), wrt=repr(wrt))
        self.split_calls[id(call)] = adjoint_name
        push, pop = self.assignment_site(adjoint_name)
        value_push, value_pop = self.assignment_site(primal)
        statements = [gast.copy_location(statement, node) for statement in (
            gast.Assign(targets=[name(adjoint_name, store=True)], value=start,
                        type_comment=None),
            gast.Assign(targets=[name(primal, store=True)], value=gast.Call(
                func=name(self.helper("primal_sweep")), args=[name(adjoint_name)],
                keywords=[]), type_comment=None))]

        def adjoint(state):
            out = []
            if primal not in state and self.for_its_effect(primal, call, state):
                out += self.effect_seed(primal, state)
            if primal in state:
                out += self.adjoint_of_value(primal, call, state, node)
            return out + value_pop + pop
        return Sweep(push + statements[:1] + value_push + statements[1:], adjoint)

    def derive_user(self, function, wrt: tuple, node, call, mode: str = "reverse") -> str:
        """The name of the derivative of the user's `function` called at `node`; a refusal
        that names no place of its own is raised at the call."""
        try:
            return self.context.derive(function, wrt, mode)
        except TransformError as error:
            if tangent_rule_only(function):
                raise self.no_rule(function, node, call.func) from None
            if error.filename is not None:
                raise
            raise self.location.error(node, error.message, error.construct,
                                      type(error)) from None

    def call_wrt(self, call, resolved) -> tuple:
        """(the positions, keywords and object, or None, of a call's arguments that carry
        gradient; the `wrt` its derivative takes)."""
        active_positions = [i for i, a in enumerate(call.args) if self.is_active(a)]
        active_keywords = [k.arg for k in call.keywords if self.is_active(k.value)]
        owner = self.active_callee(call.func) if resolved.kind == "dynamic" else None
        wrt = self.wrt_of_call(call, tuple(active_positions) + tuple(active_keywords), owner)
        return active_positions, active_keywords, owner, wrt

    def call_adjoint(self, primal, call, gradient, state, node) -> list:
        resolved = classify(call.func, self.context.namespace)
        active_positions, active_keywords, owner, wrt = self.call_wrt(call, resolved)
        if not active_positions and not active_keywords and owner is None and not (
                self.context.session.implicit and primal in self.active
                and (resolved.kind in ("user", "dynamic")
                     or getattr(resolved.value, "__autotrace_reads_state__", False))
                and not isinstance(resolved.value, FieldsOf)):
            # (In implicit mode a call passed no gradient-carrying argument still needs its
            # derivative run: it may read Variables, whose gradients it hands to the sink.)
            return []
        if resolved.kind == "rule":
            return self.apply_rule(resolved.value, primal, call.args, call.keywords, gradient,
                                   state, node)
        if resolved.kind == "constant":
            return []
        if resolved.kind == "unknown":
            raise self.no_rule(resolved.value, node, call.func)
        results = self.temporary("grads")
        split = self.split_calls.get(id(call))
        # A method may take the gradient of its object after the call (what its caller reads
        # back of what it writes): the gradients returned then include it.
        taken = owner is not None
        after = self.callee_gradient(call.func, owner, state) if taken else "None"
        if taken and split is not None:
            out = replace("results = adjoint_sweep(adjoint, gradient, after, with_object=True)",
                          results=results, adjoint_sweep=self.helper("adjoint_sweep"),
                          adjoint=split, gradient=gradient, after=after)
        elif split is not None:
            out = replace("results = adjoint_sweep(adjoint, gradient)", results=results,
                          adjoint_sweep=self.helper("adjoint_sweep"), adjoint=split,
                          gradient=gradient)
        elif resolved.kind == "user":
            # Called whole, not in halves: its primal sweep runs again here, where a NumPy
            # draw would draw anew, but in a `state_as_at` block, which sets the random
            # states back to those before the call (runtime/derivatives/state_log.py).
            if resolved.checkpointed or all(recompute_in != "state_as_at" for recompute_in, _
                                            in self.state_versions.get(id(call), ())):
                refuse_draws_in(resolved.value, "a function that autotrace.checkpoint marks"
                                if resolved.checkpointed else RUN_AGAIN)
            derivative = self.derive_user(resolved.value, wrt, node, call)
            arguments, keywords = copy_tree(call.args), copy_tree(call.keywords)
            if resolved.checkpointed:
                arguments, keywords = self.recomputed_inputs(arguments, keywords, gradient)
            value = gast.Call(func=name(derivative), args=arguments,
                              keywords=keywords + [gast.keyword(
                                  arg=self.context.seed_keyword(resolved.value),
                                  value=gradient)])
            if resolved.checkpointed:
                # Its gradients pass a barrier too: else fusion could sum the gradient terms
                # of every recomputed call in one kernel at the end, all of them held till then.
                value = gast.Call(func=name(self.helper("recompute_from")),
                                  args=[value, copy_tree(gradient)], keywords=[])
            out = [gast.Assign(targets=[name(results, store=True)], value=value,
                               type_comment=None)]
            if resolved.checkpointed:
                callee = getattr(resolved.value, "__name__", None) or to_source(
                    call.func).strip()
                out = [comment(f"checkpoint: {callee}'s primal sweep runs again here, from "
                               "its inputs, then its adjoint")] + out
        else:
            arguments = gast.Tuple(elts=copy_tree(call.args), ctx=gast.Load())
            keywords = keywords_dict(call.keywords)
            out = replace("results = vjp_call(function, arguments, keywords, gradient, wrt"
                          + (", after)" if taken else ")"),
                          results=results, vjp_call=self.helper("vjp_call"),
                          function=call.func, arguments=arguments, keywords=keywords,
                          gradient=gradient, wrt=repr(wrt), after=after)
        for recompute_in, version in reversed(self.state_versions.get(id(call), ())):
            # the derivative recomputes the call: as of when it ran
            out = replace("with recompute_in(version):\n    body", version=version,
                          recompute_in=self.helper(recompute_in), body=out)
        for position, argument in enumerate(
                ([name(owner)] if owner else []) + [call.args[i] for i in active_positions]
                + [k.value for k in call.keywords if k.arg in active_keywords]):
            item = replace_expression("results[i]", results=results,
                                      i=gast.Constant(value=position, kind=None))
            if taken and position == 0:  # the object's whole gradient, before the call
                out += self.owner_gradient(call.func, owner, item, state)
                continue
            out += self.accumulate(argument.id, item, state)
        return out

    def callee_gradient(self, func, owner: str, state: set):
        """The gradient, after the call, of the object a call of `func` runs a method of:
        `owner`'s for `owner(x)`; for `owner.f(x)`, found when it runs (see
        runtime/derivatives/called_objects.py). None where `owner` has none."""
        if owner not in state:
            return "None"
        if not isinstance(func, gast.Attribute):
            return self.gradient(owner)
        return replace_expression(
            "callee_gradient(gradient, attribute, owner)",
            callee_gradient=self.helper("callee_gradient"), gradient=self.gradient(owner),
            attribute=gast.Constant(value=func.attr, kind=None), owner=owner)

    def owner_gradient(self, func, owner: str, called, state: set) -> list:
        """`owner`'s gradient before a call of `func`, given `called`, the gradient the call
        gives back of the object it ran a method of (`callee_gradient`'s, before the call)."""
        before = "None" if owner not in state else self.gradient(owner)
        state.add(owner)
        if not isinstance(func, gast.Attribute):
            return replace("gradient = called", gradient=self.gradient(owner), called=called)
        return replace("gradient = with_callee_gradient(before, attribute, owner, called)",
                       gradient=self.gradient(owner),
                       with_callee_gradient=self.helper("with_callee_gradient"),
                       before=before, attribute=gast.Constant(value=func.attr, kind=None),
                       owner=owner, called=called)

    def recomputed_inputs(self, arguments: list, keywords: list, gradient) -> tuple:
        """The inputs of a checkpointed call's recomputation, each `recompute_from(x, dy)`:
        `x` itself, but in a traced graph a value the graph passes cannot identify with the
        primal sweep's `x`, so the recomputed ops stay apart (runtime/primitives/recompute_barrier.py)."""
        helper = self.helper("recompute_from")

        def barrier(value):
            if not isinstance(value, gast.Name):
                return value  # a literal: nothing to keep apart
            return gast.Call(func=name(helper), args=[value, copy_tree(gradient)],
                             keywords=[])
        for keyword in keywords:
            keyword.value = barrier(keyword.value)
        return [barrier(argument) for argument in arguments], keywords

    def for_its_effect(self, primal: str, call, state: set) -> bool:
        """Whether the adjoint sweep runs the derivative of the call assigned to `primal`
        for its effect on its object, no gradient having reached its result: the object has
        a gradient after the call (else the call's adjoint would give none)."""
        return (primal in self.unread_results and isinstance(call, gast.Call)
                and self.active_callee(call.func) in state)

    def effect_seed(self, primal: str, state: set) -> list:
        """The zero gradient of the result of a call made for its effect (`for_its_effect`)."""
        state.add(primal)
        return replace("gradient = zero_seed(value)", gradient=self.gradient(primal),
                       zero_seed=self.helper("zero_seed"), value=primal)

    def changes_its_object(self, call, resolved) -> bool:
        """Whether `call` is of a method of an object that carries gradient, which may write
        into that object a value that carries gradient (resolved: what the callee is)."""
        return (resolved.kind == "dynamic" and self.active_callee(call.func) is not None
                and not self.context.session.implicit
                and may_change_its_object(call, self.context.namespace))

    def active_callee(self, func) -> str | None:
        """The name of the object that carries gradient and whose method the callee `func`
        is (`p` of `p(x)` or `p.method(x)`), or None."""
        if isinstance(func, gast.Attribute):
            func = func.value
        return func.id if isinstance(func, gast.Name) and func.id in self.carrying else None

    def no_rule_text(self, label: str) -> str:
        return f"no derivative rule for {label}"

    def missing_rule_text(self, function, label: str) -> str:
        only = ("; it has a tangent rule (autotrace.register_tangent), which forward mode "
                "uses, but reverse mode needs an adjoint rule" if tangent_rule_only(function)
                else "")
        return f"no derivative rule for {label}{only}"
