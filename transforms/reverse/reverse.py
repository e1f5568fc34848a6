"""Reverse mode: an A-normal-form function becomes a primal sweep followed by an adjoint sweep.

The primal sweep is the function itself, plus what the adjoint sweep will need: values about to
be overwritten are pushed on `_stack` (and popped back, in reverse, by the adjoint sweep), each
loop counts its iterations, and each branch condition is kept in a name, or pushed where the
name may change before the adjoint reads it (transforms/reverse/reverse_control.py: if and loops).

The adjoint sweep visits the statements backwards. For `y = f(a, b)` it inlines f's rule with
`d[y]` read from `by` and adds the contributions into `ba` and `bb`. The transform tracks which
gradient variables hold a value at each point ("initialized"); the first contribution to an
uninitialized one is a plain assignment, later ones add. A gradient is consumed where its
variable is assigned (the old value of `y` has its own, fresh gradient), and where two paths
join (the branches of an if, the iterations of a loop) the transform writes zeros into the
paths that lack a gradient the others have.
"""
from __future__ import annotations

import collections
import linecache

import gast

from ..codegen.nodes import copy_tree
from ...runtime.derivatives import sequences
from ...runtime.derivatives.state_log import state_writes_log
from ...runtime.derivatives.state_writes import write_state
from ..analysis.activity import DESCRIPTIVE_ATTRIBUTES
from ..analysis.calls import FieldsOf
from ..analysis.calls import UNARY_OPERATORS, binary_operator, classify
from ..front.line_map import mark_unmarked
from ..modes import DerivativeMode
from .reverse_calls import CallAdjoints
from .reverse_control import ControlFlowAdjoints
from ..analysis.list_operators import SEQUENCE, UNKNOWN
from ..analysis.written_by_calls import call_of, item_writes_by, names_a_call_writes
from ..codegen.codegen import to_source
from .sweep_parts import PAIR, SAVE, Shared, Sweep, comment, marked
from ..codegen.templates import (index_value, keywords_dict, name, replace,
                                 replace_expression)

# The functions whose rules `a + b` and `a * b` take when an operand is, or may be, a list.
_SEQUENCE_OPERATORS = {
    (gast.Add, SEQUENCE): sequences.concatenate,
    (gast.Add, UNKNOWN): sequences.add_or_concatenate,
    (gast.Mult, SEQUENCE): sequences.repeat,
    (gast.Mult, UNKNOWN): sequences.multiply_or_repeat,
}


class ReverseMode(CallAdjoints, ControlFlowAdjoints, DerivativeMode):
    """Generates the primal and adjoint sweeps of one function body (see the module docstring).

    context, active: as for every mode (transforms/modes.py).
    """

    rule_kind = "adjoint"

    def __init__(self, context, active: set, parameters: list, local_names: set):
        super().__init__(context, active)
        self.carrying = active  # see transforms/front/front_end.py `activity`
        self.parameters = parameters
        self.defined = set(parameters)
        self.definite = set(parameters)
        self.loop_depth = 0
        self.branch_depth = 0  # how many branches of an if enclose the statement being visited
        self.gradient_names: dict[str, str] = {}
        self.stack = context.namer.temporary("stack")
        self.array_names = set()
        # Results of calls made for their effect on an object: zero gradients, seeded all the
        # same (see visit_Expr).
        self.unread_results: set[str] = set()
        self.shapes = None  # a transforms.analysis.same_shapes.ShapeClasses, when known
        self.local_names = local_names
        # id(call) -> [(the helper its recomputation runs in, the name of what it takes)]:
        # `state_as_of(_state1)`, `state_as_at(_written1)` (see `state_version`)
        self.state_versions: dict[int, list] = {}
        # The log of a `state_as_at` block -> {object: the name of its gradient from the
        # block, held apart} (transforms/reverse/reverse_control.py `held_apart`); those defined.
        self.held_apart: dict[str, dict[str, str]] = {}
        self.apart_defined: set[str] = set()
        self.apart_stacks: dict[str, str] = {}  # (in a loop) held apart -> its stack's name
        # The log of each `state_as_at` block -> how many blocks it has (set by the caller)
        self.recompute_blocks: collections.Counter = collections.Counter()
        # Calls run in halves (transforms/reverse/reverse_calls.py `split_call`): id(call) -> the
        # name holding its derivative between its primal and adjoint sweeps.
        self.split_calls: dict[int, str] = {}
        self.maybe_unassigned: set[str] = set()  # names the adjoint reads that may be unbound
        # (id(item write), a name it writes into) -> (the write, the other names bound to the
        # very object): transforms/analysis/names_alike.py names_bound_alike, set by the caller where it knows them
        self.same_objects: dict[tuple, tuple] = {}

    # ---- names -----------------------------------------------------------------------------

    def gradient(self, primal: str) -> str:
        if primal not in self.gradient_names:
            self.gradient_names[primal] = self.namer.gradient(primal)
            if primal.startswith("_"):
                self.temporaries.add(self.gradient_names[primal])
        return self.gradient_names[primal]

    # ---- gradient bookkeeping --------------------------------------------------------------

    def zeros(self, primal: str) -> list:
        return replace("gradient = zeros_like(value)", gradient=self.gradient(primal),
                       zeros_like=self.helper("zeros_like"), value=primal)

    def accumulate(self, primal: str, contribution, state: set) -> list:
        """Statements adding `contribution` into the gradient of `primal`."""
        gradient = self.gradient(primal)
        if primal not in state:
            state.add(primal)
            return replace("gradient = contribution", gradient=gradient,
                           contribution=contribution)
        if primal in self.array_names:
            return replace("gradient = gradient + contribution", gradient=gradient,
                           contribution=contribution)
        return replace("gradient = accumulate(gradient, contribution)", gradient=gradient,
                       accumulate=self.helper("accumulate"), contribution=contribution)

    def ensure(self, primal: str, state: set) -> list:
        """Zeros for the gradient of `primal` unless it holds a value already."""
        if primal in state:
            return []
        state.add(primal)
        return self.zeros(primal)

    def save(self, primal: str) -> tuple[list, list]:
        """(push before the assignment, pop after its adjoint) for a value about to change."""
        undefined = primal not in self.definite  # may be unbound: the prologue binds None
        push = replace("stack.append(value)", stack=self.stack, value=primal)
        pop = replace("value = stack.pop()", stack=self.stack, value=primal)
        pair = Shared()
        for statement in push + pop:
            setattr(statement, PAIR, pair)
        return marked(push, primal, "push", undefined), marked(pop, primal, "pop")

    def assignment_site(self, primal: str) -> tuple[list, list]:
        """Save/restore statements for assigning `primal` here, when it may overwrite a value."""
        overwrites = self.loop_depth > 0 or primal in self.defined
        result = self.save(primal) if overwrites else ([], [])
        self.defined.add(primal)
        self.definite.add(primal)
        return result

    # ---- blocks ------------------------------------------------------------------------------

    def block(self, statements) -> Sweep:
        sweeps = [self.statement(s) for s in statements]

        def adjoint(state):
            out = []
            for sweep in reversed(sweeps):
                out.extend(sweep.adjoint(state))
            return out
        return Sweep([s for sweep in sweeps for s in sweep.primal], adjoint)

    def statement(self, node) -> Sweep:
        sweep = self.restoring_call_writes(node, self.visitor(node)(node))
        mark_unmarked(sweep.primal, self.location, node)
        inner = sweep.adjoint

        def commented(state):
            statements = inner(state)
            return self.line_comment(node) + statements if statements else statements
        return Sweep(sweep.primal, commented)

    def line_comment(self, node) -> list:
        """`# Grad of line N: <the user's line>` for the line `node` came from."""
        line = self.location.line_of(node) if node is not None else None
        if line is None:
            return []
        text = linecache.getline(self.location.filename, line).strip()
        return [comment(f"Grad of line {line}: {text}" if text else f"Grad of line {line}")]

    # ---- simple statements -------------------------------------------------------------------

    def visit_Pass(self, node):
        return Sweep([])

    def visit_Break(self, node):
        return Sweep([node])

    def visit_Raise(self, node):
        return Sweep([node])

    visit_Assert = visit_Raise

    def visit_Return(self, node):
        raise self.location.error(node, "internal: a return statement should have been moved "
                                  "to the end of the function", "return")

    def visit_Expr(self, node):
        call = node.value
        if not isinstance(call, gast.Call):
            return Sweep([node])
        kind = classify(call.func, self.context.namespace).kind
        if kind == "list_append":
            return self.list_append(node, call)
        if call.func.id == self.context.helper("restore_item") if isinstance(
                call.func, gast.Name) else False:
            # Generated code undoing `x[i] = ...`: to a second derivative, an assignment.
            container, index, value = call.args
            return self.subscript_assignment(node, container.id, index_value(index), value)
        if kind == "list_pop":
            return self.visit_Assign(gast.copy_location(gast.Assign(
                targets=[name(self.temporary("t"), store=True)], value=call,
                type_comment=None), node))
        if kind == "dynamic" and self.active_callee(call.func) is not None and \
                not self.context.session.implicit:  # (a module's self: built, not followed)
            # Called for what it does to its object, which carries gradient: differentiated
            # as a call whose result nothing reads, for the object's own gradient.
            effect = self.temporary("effect")
            self.active.add(effect)
            self.unread_results.add(effect)
            return self.visit_Assign(gast.copy_location(gast.Assign(
                targets=[name(effect, store=True)], value=call, type_comment=None), node))
        return Sweep([node])

    def visit_Assign(self, node):
        target = node.targets[0]
        if isinstance(target, gast.Subscript):
            return self.subscript_assignment(node, target.value.id, index_value(target.slice),
                                             node.value)
        primal = target.id
        version = ([], [], [])
        resolved = (classify(node.value.func, self.context.namespace)
                    if isinstance(node.value, gast.Call) else None)
        if resolved is not None:
            if self.changes_its_object(node.value, resolved):
                # Its result may get no gradient, but what it writes into its object may be
                # read back: differentiated for its effect too (see visit_Expr).
                self.active.add(primal)
                self.unread_results.add(primal)
            if resolved.kind == "custom":
                return self.custom_gradient(node, primal, resolved.value)
            split = self.split_call(node, primal, resolved)
            if split is not None:
                return split
            if resolved.kind in ("user", "dynamic"):
                # A call a derivative of this derivative runs first as a derivative, noting
                # its writes: one run whole here (in a loop, each iteration's log is saved as
                # any value the loop overwrites; a traced loop refuses the write).
                logged = (primal in self.active and self.context.session.split_calls is False
                          and not self.context.session.implicit
                          and not isinstance(resolved.value, FieldsOf))
                version = self.state_version(node.value, self.context.session.implicit, logged)
        version_push, version_statement, version_pop = version
        push, pop = self.assignment_site(primal)

        def adjoint(state):
            out = []
            if primal in self.active and primal not in state and \
                    self.for_its_effect(primal, node.value, state):
                out += self.effect_seed(primal, state)
            if primal in self.active and primal not in state and resolved is not None and \
                    resolved.value is write_state:
                # A write into an object's state says what it wrote, for the caller, though
                # no gradient reached the object after it (runtime/derivatives/objects.py)
                out += self.ensure(primal, state)
            if primal in self.active and primal in state:
                out += self.adjoint_of_value(primal, node.value, state, node)
            elif resolved is not None and resolved.kind == "list_pop":
                out += self.list_pop_restore(primal, node.value, state)
            if resolved is not None and resolved.value is state_writes_log:
                out += self.add_held_apart(primal, state)  # (the log, not its restores)
            return out + pop + version_pop
        return Sweep(version_push + version_statement + push + [node], adjoint)

    def state_version(self, call, implicit: bool, logged: bool) -> tuple[list, list, list]:
        """(push, statements, pop) before a call run whole, whose derivative recomputes it:

            _written1 = state_writes_log(random_states(g, (x,), {}))
                                 the writes into objects' state from here, and the
                                 random states the call g(x) can draw from (and the
                                 call, run again where those may not be all)
            _state1 = state_version()         (implicit mode) the Variables the call sees

        The recomputation runs `with state_as_at(_written1):` (and `with
        state_as_of(_state1):`), seeing the state the call saw (runtime/derivatives/
        state_log.py; runtime/state.py). `logged`: the first, `implicit`: the second."""
        versions = [("state_as_at", "written", "state_writes_log")] if logged else []
        if implicit:
            versions.append(("state_as_of", "state", "state_version"))
        pushes, statements, pops = [], [], []
        for recompute_in, hint, helper in versions:
            version = self.namer.temporary(hint)
            self.state_versions.setdefault(id(call), []).append((recompute_in, version))
            push, pop = self.assignment_site(version)
            pushes += push
            # (the log notes the random states the callee and the arguments reach)
            reached = _names_reached(call) if helper == "state_writes_log" else []
            if reached and _passes_each(call):
                # (the call itself, which the recomputation runs again from those states,
                # where they may not be all it draws from, to see that it draws the same)
                statements += replace(
                    "version = helper(random_states(callee, arguments, keywords))",
                    version=version, helper=self.helper(helper),
                    random_states=self.helper("random_states"),
                    callee=copy_tree(call.func),
                    arguments=gast.Tuple(elts=copy_tree(call.args), ctx=gast.Load()),
                    keywords=keywords_dict(call.keywords))
            elif reached:  # (holes, not names in the template: the callee may be `helper`)
                arguments = gast.Tuple(elts=[name(n) for n in reached[1:]], ctx=gast.Load())
                statements += replace(
                    "version = helper(random_states(callee, arguments))", version=version,
                    helper=self.helper(helper), random_states=self.helper("random_states"),
                    callee=name(reached[0]), arguments=arguments)
            else:
                statements += replace("version = helper()", version=version,
                                      helper=self.helper(helper))
            pops = pop + pops
        return pushes, statements, pops

    def item_saves(self, node, container: str, index) -> tuple[list, list, tuple]:
        """(push before `node`, pop after its adjoint, the other names bound to the very
        array) for `node`, which writes into `container[index]`: the items it overwrites,
        saved and written back, through each name bound to that array and each view of it."""
        undefined = container not in self.defined
        push = marked(replace("stack.append(read_item(x, index))", stack=self.stack,
                               read_item=self.helper("read_item"), x=container, index=index),
                       container, "item_push", undefined)
        pop = marked(replace("restore_item(x, index, stack.pop())", stack=self.stack,
                              restore_item=self.helper("restore_item"), x=container,
                              index=index), container, "item_pop")
        write, alike, views = self.same_objects.get((id(node), container), (None, (), ()))
        if write is not node:
            alike, views = (), ()
        for other in alike:
            # `x = _t2; x[0] += a` changed _t2 too, whose rule (tanh's) reads it: eagerly,
            # restoring x's items restores _t2's, one array; in a traced graph the x the
            # adjoint sweep has (popped from a stack, given back by an if) is another value,
            # so each name bound to that array gets the items back. It is x's restore (kept
            # or dropped with it): it reads the items x's own restore brought back.
            pop += marked(replace("restore_item(other, index, read_item(x, index))",
                                  restore_item=self.helper("restore_item"), other=other,
                                  read_item=self.helper("read_item"), x=container,
                                  index=index), container, "item_pop")
        for view, indexing in views:
            # `v = x[1:3]; x[0:2] = ...` changed v, which a rule may read (`v * s`): eagerly,
            # restoring x's items restores v's; in a traced graph v, held since, is another
            # value, so it views the restored x again (kept where v is needed).
            pop += marked(replace(
                "if indexes_a_view(x, index):\n    view = x[where]",
                indexes_a_view=self.helper("indexes_a_view"), x=container, view=view,
                index=index_value(indexing.slice), where=indexing.slice), view, "pop")
        return push, pop, alike

    def restoring_call_writes(self, node, sweep: Sweep) -> Sweep:
        """`sweep` of the statement `node`, saving before its call what the names it gives a
        function that writes into them hold (`set_first(a)`, which runs `a[0] = 0.0`;
        written_by_calls.py), and writing it back before the call's adjoint, which may run
        the function again from its arguments, and the adjoints of the statements before it,
        which may read them (`np.sin(a)`'s): into the very arrays the call wrote, which the
        other names for them see in a traced `if` or loop too (`pushed_after_call`). (A write
        a name reads after the call is refused: transforms/analysis/aliases.py.)"""
        written = names_a_call_writes(node, self.local_names, self.context.namespace)
        checks = self.item_write_checks(node)
        if not written and not checks:
            return sweep
        reads, pushes, pops = checks, [], []
        for container in written:
            push, pop, _ = self.item_saves(node, container, gast.Constant(value=Ellipsis,
                                                                         kind=None))
            read, push = self.pushed_after_call(push, container, node)
            reads, pushes, pops = reads + read, pushes + push, pop + pops
        inner = sweep.adjoint
        # (the call runs in the last statement: after the reads of what its target held)
        return Sweep(sweep.primal[:-1] + reads + sweep.primal[-1:] + pushes,
                     lambda state: pops + inner(state))

    def pushed_after_call(self, push: list, container: str, node) -> tuple[list, list]:
        """`push` (`stack.append(read_item(x, ...))`, item_saves') as (what runs before the
        call: `held = read_item(x, ...)`, what runs after it: `note_kept(held, x)` marking the
        items the call left in their place, which the restore writes into, and the push of
        `held`), each marked as the push. An item the call replaced, moved or removed in a
        traced `if` or loop body is refused (inplace.refuse_moved_items): the restore could
        not reach the names the adjoint sweep reads for it."""
        statement, = push
        held = self.temporary("held")
        read = replace("held = value", held=held, value=statement.value.args[0])
        call = call_of(node)
        after = replace(
            "refuse_moved_items(held, x, call, name, filename, line)\nnote_kept(held, x)\n"
            "stack.append(held)", held=held, x=container, note_kept=self.helper("note_kept"),
            stack=self.stack, refuse_moved_items=self.helper("refuse_moved_items"),
            call=gast.Constant(value=to_source(call if call is not None else node).strip(),
                               kind=None),
            name=gast.Constant(value=container, kind=None),
            filename=gast.Constant(value=self.location.filename, kind=None),
            line=gast.Constant(value=self.location.line_of(node), kind=None))
        saved, kind, undefined = getattr(statement, SAVE)
        return marked(read, saved, kind, undefined), marked(after, saved, kind, undefined)

    def item_write_checks(self, node) -> list:
        """Checks to run before the call `node` makes, where its function writes `s op= v`
        into a name bound to an item of what it is given (`s = v[-1, 0]`): in place where
        that has more dimensions than the item's indices, a write the adjoint sweep does not
        undo (restoring_call_writes), refused then (inplace.refuse_shared_write)."""
        call = call_of(node)
        if call is None:
            return []
        checks = []
        for given, parameter, what, filename, line, items in item_writes_by(
                call, self.local_names, self.context.namespace):
            message = (f"{to_source(call).strip()} changes its argument {parameter!r} in place "
                       f"({what}, {filename}, line {line}) where {given} has more than "
                       f"{items} dimensions, which autotrace does not undo for the "
                       f"derivatives of the statements before it; pass a copy of {given} "
                       f"({given}.copy())")
            checks += replace(
                "refuse_shared_write(value, message, filename, line, items=items)",
                refuse_shared_write=self.helper("refuse_shared_write"), value=given,
                message=gast.Constant(value=message, kind=None),
                filename=gast.Constant(value=self.location.filename, kind=None),
                line=gast.Constant(value=self.location.line_of(node), kind=None),
                items=gast.Constant(value=items, kind=None))
        return checks

    def subscript_assignment(self, node, container: str, index, value) -> Sweep:
        """`container[index] = value` (node is that statement, or a `restore_item` call)."""
        push, pop, alike = self.item_saves(node, container, index)

        def adjoint(state):
            out, later = [], []
            # The gradient reaching the item written, through x or a name bound to the same
            # array and read after the write (in a derivative autotrace generated, `x = _t2`
            # given back in its adjoint sweep; a user's function reading one is refused), is
            # the value's: a second derivative reads the first's restores so.
            for name_read in (container, *alike):
                if name_read not in self.active or name_read not in state:
                    continue
                gradient = self.gradient(name_read)
                if self.is_active(value):
                    # (none where the array holds integers or booleans: kept_by_write)
                    contribution = replace_expression(
                        "kept_by_write(item_gradient(gradient, index, value), written)",
                        kept_by_write=self.helper("kept_by_write"),
                        item_gradient=self.helper("item_gradient"), gradient=gradient,
                        index=index, value=value, written=name_read)
                    if value.id in (container, *alike):
                        # `y[::-1] = y`: the value's gradient is the one cleared below, so
                        # the item's is taken first and added after the clear
                        taken = self.temporary("item")
                        out += replace("taken = contribution", taken=taken,
                                       contribution=contribution)
                        later.append(name(taken))
                    else:
                        out += self.accumulate(value.id, contribution, state)
                out += replace("gradient = clear_item(gradient, index)", gradient=gradient,
                               clear_item=self.helper("clear_item"), index=index)
            for taken in later:
                out += self.accumulate(value.id, taken, state)
            return out + pop
        return Sweep(push + [node], adjoint)

    def items_written(self, statement) -> list:
        """The names `statement` writes items into: `x[i] = v`, `restore_item(x, i, v)`, a call
        of a function that writes into what it is given (`restoring_call_writes`)."""
        if isinstance(statement, gast.Assign) and isinstance(statement.targets[0], gast.Subscript):
            container = statement.targets[0].value
            return [container.id] if isinstance(container, gast.Name) else []
        if (isinstance(statement, gast.Expr) and isinstance(statement.value, gast.Call)
                and isinstance(statement.value.func, gast.Name)
                and statement.value.func.id == self.helper("restore_item")
                and isinstance(statement.value.args[0], gast.Name)):
            return [statement.value.args[0].id]
        return names_a_call_writes(statement, self.local_names, self.context.namespace)

    def list_append(self, node, call) -> Sweep:
        container = call.func.value.id
        value = call.args[0]
        # Undone by binding the name to a shorter list, not by x.pop(): the list may be held
        # elsewhere too (stored into another, `rows[0] = x`, or read into a temporary), and
        # what the sweeps saved of those holders must stay as it was.
        restore = marked(replace("x = x[:-1]", x=container), container, "restore")

        def adjoint(state):
            out = []
            if container in self.active and container in state:
                gradient = self.gradient(container)
                if self.is_active(value):
                    last = replace_expression("gradient[-1]", gradient=gradient)
                    out += self.accumulate(value.id, last, state)
                out += replace("gradient = gradient[:-1]", gradient=gradient)
            return out + restore
        return Sweep([node], adjoint)

    def list_pop_restore(self, primal, call, state, gradient_flows=False) -> list:
        container = call.func.value.id
        out = []
        if container in self.active and (container in state or gradient_flows):
            gradient = self.gradient(container)
            out += self.ensure(container, state)
            if gradient_flows:
                out += replace("gradient = gradient + [item]", gradient=gradient,
                               item=self.gradient(primal))
            else:
                out += replace("gradient = append_zeros_like(gradient, v)", gradient=gradient,
                               append_zeros_like=self.context.import_value(
                                   "append_zeros_like", sequences.append_zeros_like), v=primal)
        return out + replace("x = x + [v]", x=container, v=primal)  # not in place: as above

    # ---- the adjoint of one operation ----------------------------------------------------------

    def adjoint_of_value(self, primal: str, value, state: set, node) -> list:
        """Statements sending the gradient of `primal = value` to value's active names."""
        gradient = name(self.gradient(primal))
        out = []
        if isinstance(value, gast.Call) and classify(
                value.func, self.context.namespace).kind == "list_pop":
            state.discard(primal)
            return self.list_pop_restore(primal, value, state, gradient_flows=True)
        state.discard(primal)
        if isinstance(value, gast.Name):
            if value.id in self.active:
                out += self.accumulate(value.id, gradient, state)
        elif isinstance(value, gast.BinOp):
            function = binary_operator(value, self.location, self.is_active)
            if function is None:
                return out  # bits of values without gradient: none to send
            if isinstance(value.op, (gast.Add, gast.Mult)) and self.sequences is not None:
                # `+` and `*` on lists and tuples concatenate and repeat
                kind = self.sequences.operation(primal, value)
                function = _SEQUENCE_OPERATORS.get((type(value.op), kind), function)
            out += self.apply_rule(function, primal, [value.left, value.right], [], gradient,
                                   state, node)
        elif isinstance(value, gast.UnaryOp) and type(value.op) in UNARY_OPERATORS:
            out += self.apply_rule(UNARY_OPERATORS[type(value.op)], primal, [value.operand],
                                   [], gradient, state, node)
        elif isinstance(value, gast.Call):
            out += self.call_adjoint(primal, value, gradient, state, node)
        elif isinstance(value, gast.Subscript):
            base = value.value
            if self.is_active(base):
                out += self.ensure(base.id, state)
                contribution = replace_expression(
                    "accumulate_item(gradient, index, value)",
                    accumulate_item=self.helper("accumulate_item"),
                    gradient=self.gradient(base.id), index=index_value(value.slice),
                    value=gradient)
                out += replace("target = contribution", target=self.gradient(base.id),
                               contribution=contribution)
        elif isinstance(value, gast.Attribute):
            base = value.value
            if self.is_active(base) and value.attr not in DESCRIPTIVE_ATTRIBUTES:
                out += self.ensure(base.id, state)
                out += replace("target = accumulate_attribute(target, attribute, value, owner)",
                               target=self.gradient(base.id),
                               accumulate_attribute=self.helper("accumulate_attribute"),
                               attribute=gast.Constant(value=value.attr, kind=None),
                               value=gradient, owner=base.id)
        elif isinstance(value, (gast.Tuple, gast.List)):
            for position, element in enumerate(value.elts):
                if self.is_active(element):
                    item = replace_expression("gradient[i]", gradient=gradient,
                                              i=gast.Constant(value=position, kind=None))
                    out += self.accumulate(element.id, item, state)
        elif isinstance(value, gast.Dict):
            for key, element in zip(value.keys, value.values):
                if self.is_active(element):
                    item = replace_expression("gradient[key]", gradient=gradient, key=key)
                    out += self.accumulate(element.id, item, state)
        return out


def _passes_each(call) -> bool:
    """Whether `call` passes each argument on its own (no `*args`, no `**kwargs`), so that
    `random_states(callee, arguments, keywords)` can hold the call."""
    return not any(isinstance(argument, gast.Starred) for argument in call.args) and all(
        keyword.arg is not None for keyword in call.keywords)


def _names_reached(call) -> list:
    """The names `call` reads its callee from (the object of a method) and the arguments it
    passes by a name: what a log of the random states the call draws from looks into."""
    owner = call.func
    while isinstance(owner, gast.Attribute):
        owner = owner.value
    values = [owner, *call.args, *(keyword.value for keyword in call.keywords)]
    names = []
    for value in values:
        if isinstance(value, gast.Starred):
            value = value.value
        if isinstance(value, gast.Name) and value.id not in names:
            names.append(value.id)
    return names
