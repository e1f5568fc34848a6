"""Reverse mode for control flow: if statements, loops, and name scopes.

These are the methods of transforms.reverse.reverse.ReverseMode for `if`, `for` and `while`; they live
here to keep each module to one idea. The primal sweep keeps what the adjoint sweep needs to
take the same path backwards: each loop counts its iterations, and a branch condition the
adjoint cannot read back from its name is pushed after the if and popped before its adjoint.
"""
from __future__ import annotations

import copy

import gast

from ..codegen.nodes import copy_tree
from ..analysis.liveness import closure_reads, read_before_bound
from ..front.line_map import mark
from ..front.context_managers import PRIMAL, PURE, is_warning_filter
from .name_scopes import recomputes, scope_call, with_block, with_kind
from .sweep_parts import SAVE, UNDOES, Shared, Sweep, marked
from ..codegen.templates import name, replace
from ..codegen.nodes import walk


def _is_terminal_break(statement) -> bool:
    return (isinstance(statement, gast.If) and len(statement.body) == 1
            and isinstance(statement.body[0], gast.Break) and not statement.orelse)


def _assigns(node, identifier: str) -> bool:
    """Whether `node` assigns `identifier` anywhere inside it."""
    return any(isinstance(n, gast.Name) and n.id == identifier and isinstance(n.ctx, gast.Store)
               for n in walk(node))


class ControlFlowAdjoints:
    """Mixed into ReverseMode: the sweeps of if statements and loops."""

    def join_zeros(self, primal: str, definite: set) -> list:
        """Zeros for the gradient of `primal` on a path joining one that has it, where
        `definite` holds the names assigned on every way to the join."""
        if primal in self.local_names and primal not in definite:
            self.maybe_unassigned.add(primal)
        return self.zeros(primal)

    def visit_If(self, node):
        test = node.test
        primal = []
        condition_site, saved_condition = None, None
        if isinstance(test, gast.Name) and (self.branch_depth > 0 or _assigns(node, test.id)) \
                and not _is_terminal_break(node):
            # The adjoint cannot read this condition back from its name: the branch reassigns
            # it (`a and b` becomes `t = a; if t: t = b`), or it was set inside an enclosing
            # branch, which on a traced condition leaves the name holding either branch's
            # value. The condition is pushed after the if and popped before its adjoint.
            saved_condition = self.temporary("cond")
            primal += replace("condition = test", condition=saved_condition, test=test)
            test = name(saved_condition)
        elif not isinstance(test, (gast.Name, gast.Constant)):
            condition = self.temporary("cond")
            condition_site = self.visit_Assign(gast.copy_location(gast.Assign(
                targets=[name(condition, store=True)], value=test, type_comment=None), node))
            primal += condition_site.primal
            test = name(condition)
        # Each branch starts from what was defined before it. `defined` holds names that may
        # be defined (for saves), `definite` names that are defined on every path.
        defined, definite = set(self.defined), set(self.definite)
        self.branch_depth += 1
        body = self.block(node.body)
        defined_in_body, definite_in_body = self.defined, self.definite
        self.defined, self.definite = set(defined), set(definite)
        orelse = self.block(node.orelse)
        self.branch_depth -= 1
        definite_in_orelse = self.definite
        self.defined |= defined_in_body
        self.definite = definite_in_body & definite_in_orelse
        primal_if = mark(gast.If(test=test, body=body.primal or [gast.Pass()],
                                 orelse=orelse.primal), self.location, node)
        primal.append(primal_if)
        condition_pop = []
        if saved_condition is not None:
            primal += marked(replace("stack.append(condition)", stack=self.stack,
                                     condition=saved_condition), saved_condition, "push")
            condition_pop = marked(replace("condition = stack.pop()", stack=self.stack,
                                           condition=saved_condition), saved_condition, "pop")

        def adjoint(state):
            body_state, orelse_state = set(state), set(state)
            body_adjoint = body.adjoint(body_state)
            orelse_adjoint = orelse.adjoint(orelse_state)
            # A gradient one branch has and the other lacks is zero on the other path. The
            # variable may be unassigned there (`if c: y = ...` earlier, and this branch reads
            # y): the prologue binds it to None, whose zeros_like is None.
            for missing in sorted(body_state - orelse_state):
                orelse_adjoint += self.join_zeros(missing, definite_in_orelse)
            for missing in sorted(orelse_state - body_state):
                body_adjoint += self.join_zeros(missing, definite_in_body)
            state.clear()
            state.update(body_state | orelse_state)
            out = []
            if body_adjoint or orelse_adjoint:
                out += condition_pop
                out.append(mark(gast.If(test=copy_tree(test),
                                        body=body_adjoint or [gast.Pass()],
                                        orelse=orelse_adjoint), self.location, node))
                setattr(out[-1], UNDOES, Shared(primal_if))
            if condition_site is not None:
                out += condition_site.adjoint(state)
            return out
        return Sweep(primal, adjoint)

    def visit_With(self, node):
        """A name scope (transforms/reverse/name_scopes.py): the primal statements stay in it, and the
        adjoint statements run in its gradient scope (runtime/scopes.py `gradient_scope`).
        Another context manager: see managed_adjoint."""
        body = self.block(node.body)
        primal = mark(with_block(node, copy_tree(scope_call(node)), body.primal,
                                 copy_tree(node.items[0].optional_vars)),
                      self.location, node)
        kind = with_kind(node, self.context.namespace)
        if kind in (PURE, PRIMAL):
            return Sweep([primal], lambda state: self.managed_adjoint(node, body, state, kind))

        recomputing = recomputes(node, self.context.namespace)
        # (In a loop, what each iteration's block gives is pushed on a stack of its own and
        # popped at that iteration's log: the adjoint of an adjoint loop runs its iterations
        # in the order of the primal loop, whose adjoint pops them in reverse. Where a log has
        # several blocks, a recomputation's gradient reaching the slots its call overwrote is
        # refused when it runs instead, sweeps.py `object_gradient_first`.)
        log = scope_call(node).args[0] if recomputing else None
        stacked = bool(self.loop_depth) and isinstance(log, gast.Name) and \
            self.recompute_blocks.get(log.id) == 1
        apart = recomputing and (not self.loop_depth or stacked)

        def adjoint(state):
            statements = (self.held_apart_adjoint(node, body, state, stacked) if apart
                          else body.adjoint(state))
            if not statements:
                return []
            call = copy_tree(scope_call(node))
            if recomputing:
                # `state_as_at`: each statement, from the state the block begins with
                return [mark(with_block(node, copy_tree(call), [statement]), self.location,
                             node) for statement in statements]
            call.func = name(self.helper("gradient_scope"))
            return [mark(with_block(node, call, statements), self.location, node)]
        return Sweep([primal], adjoint)

    def managed_adjoint(self, node, body, state: set, kind: str) -> list:
        """The adjoint statements of a `with` of a context manager
        (transforms/front/context_managers.py): a pure context's again in the same context,
        evaluated anew, after the block's warning filters; the user's manager's as they
        are, outside it (its entry and exit are the primal pass's)."""
        statements = body.adjoint(state)
        if kind == PRIMAL or not statements:
            return statements
        filters = [copy_tree(s) for s in node.body
                   if is_warning_filter(s, self.context.namespace)]
        return [mark(with_block(node, copy_tree(scope_call(node)), filters + statements),
                     self.location, node)]

    def held_apart_adjoint(self, node, body, state: set, stacked: bool) -> list:
        """The adjoint of a `with state_as_at(_written1):` block, which runs a call again
        from the state before it (runtime/derivatives/state_log.py). What it gives the objects
        whose attributes it reads is a gradient of their state before that call, where the
        statements after the call gave one of their state after it, which the call's own
        adjoint takes: so it is held apart, in a name of its own (`bCELL_before`), and added
        in where the adjoint sweep reaches the log (`add_held_apart`), past that call's.
        stacked: the block is in a loop, and what it gives is pushed on a stack (see
        visit_With)."""
        log = scope_call(node).args[0].id
        read = {n.value.id for statement in node.body for n in walk(statement)
                if isinstance(n, gast.Attribute) and isinstance(n.value, gast.Name)}
        read -= {n.id for statement in node.body for n in walk(statement)
                 if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store)}
        apart = self.held_apart.setdefault(log, {})
        kept = {}
        for owner in sorted(read & self.active):
            if owner not in apart:
                apart[owner] = self.namer.fresh(self.gradient(owner) + "_before")
            kept[owner] = (self.gradient(owner), owner in state)
            self.gradient_names[owner] = apart[owner]
            state.discard(owner)
            if apart[owner] in self.apart_defined and not stacked:
                state.add(owner)
        statements = body.adjoint(state)
        pushes = []
        for owner, (gradient, had) in kept.items():
            self.gradient_names[owner] = gradient
            if stacked:
                self.apart_stacks[apart[owner]] = apart[owner] + "s"
                self.namer.taken.add(apart[owner] + "s")
                pushes += replace("stack.append(apart)", stack=apart[owner] + "s",
                                  apart=apart[owner] if owner in state else "None")
                self.apart_defined.add(apart[owner])
            elif owner in state:
                self.apart_defined.add(apart[owner])
            state.discard(owner)
            if had:
                state.add(owner)
        return statements + pushes

    def add_held_apart(self, log: str, state: set) -> list:
        """At the log's adjoint: the gradients held apart (`held_apart_adjoint`) added to the
        objects' own."""
        out = []
        for owner, apart in sorted(self.held_apart.get(log, {}).items()):
            if apart not in self.apart_defined:
                continue
            if apart in self.apart_stacks:
                out += replace("apart = stack.pop()", apart=apart,
                               stack=self.apart_stacks[apart])
            out += replace("gradient = add_recomputed(after, apart)",
                           gradient=self.gradient(owner), apart=apart,
                           after=self.gradient(owner) if owner in state else "None",
                           add_recomputed=self.helper("add_recomputed"))
            state.add(owner)
        return out

    def visit_For(self, node):
        return self.loop(node, node.target.id)

    def visit_While(self, node):
        return self.loop(node, None)

    def loop(self, node, target) -> Sweep:
        counter = self.temporary("n")
        counter_site = self.visit_Assign(gast.copy_location(gast.Assign(
            targets=[name(counter, store=True)], value=gast.Constant(value=0, kind=None),
            type_comment=None), node))
        target_push, target_pop = [], []
        if target is not None:
            if target in self.defined:  # the loop variable overwrites an earlier value
                before_push, before_pop = self.save(target)
            else:
                before_push, before_pop = [], []
            self.defined.add(target)
            target_push, target_pop = self.save(target)
            for statement in target_push + target_pop:
                setattr(statement, SAVE, (target, getattr(statement, SAVE)[1], False))
        self.loop_depth += 1
        definite = set(self.definite)
        body = self.block(node.body)
        self.definite = definite | {counter}  # the body may not run at all
        self.loop_depth -= 1
        count = replace("counter = counter + 1", counter=counter)
        loop = mark(copy.copy(node), self.location, node)
        # The loop variable is pushed as the iteration ends (before a terminal break) and
        # popped as the reversed iteration begins, so pops mirror pushes.
        inner = body.primal
        if inner and _is_terminal_break(inner[-1]):
            inner = inner[:-1] + target_push + inner[-1:]
        else:
            inner = inner + target_push
        loop.body = count + inner
        primal = counter_site.primal + (before_push if target else []) + [loop]
        inside = {n.id for n in walk(node) if isinstance(n, gast.Name)}
        # A name each iteration binds before it reads it starts every iteration afresh: its
        # gradient is not carried from one reversed iteration to the next, unless it has one
        # where the adjoint sweep enters the loop (read after the loop, or the result: `for
        # ...: y = a * x; x = y` then `return y`), which the first reversed iteration consumes
        # and the others must find zero.
        assigned = {n.id for n in walk(node)
                    if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store)}
        fresh = assigned - read_before_bound(node.body, closure_reads(node.body)) - set(
            self.parameters)

        def adjoint(state):
            carried = sorted((inside & self.active) - (fresh - state))
            before = []
            for primal_name in carried:
                zeros = self.ensure(primal_name, state)
                if zeros and primal_name in self.local_names and primal_name not in definite:
                    # unassigned where the loop never ran: None, whose zeros_like is None
                    self.maybe_unassigned.add(primal_name)
                before += zeros
            body_state = set(state)
            body_adjoint = body.adjoint(body_state)
            for missing in carried:
                if missing not in body_state:
                    body_adjoint += self.zeros(missing)
            reverse_index = self.namer.fresh("_")
            out = before
            if body_adjoint or target_pop:
                reversed_loop = replace("for index in range(counter):\n    body",
                                        index=reverse_index, counter=counter, body=target_pop)
                # made for this loop alone: not copied again, which each loop around it would
                # do once more (a template copies what it is given)
                reversed_loop[0].body += body_adjoint
                out += [mark(reversed_loop[0], self.location, node)]
            if target is not None:
                out += before_pop
            return out + counter_site.adjoint(state)
        return Sweep(primal, adjoint)
