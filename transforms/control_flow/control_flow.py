"""Control flow on traced values, converted before tracing (the way AutoGraph does it).

A traced value has no Python truth value, so `if x.sum() > 0:` cannot run while tracing. This
pass rewrites a function's `if`, `while` and `for` statements, conditional expressions, and the
`and`/`or`/`not` in their conditions into calls of runtime helpers. Each helper runs the plain
Python statement when its condition is a Python value, and records a graph-level `cond` or
`while` op when it is traced, so one trace serves every value:

    if x.sum() > 0:                  def _if_true1(y):
        y = x * 2.0                      y = x * 2.0
    else:                                return (y,)
        y = -x                       def _if_false1(y):
                                         y = -x
                                         return (y,)
                                     (y,) = _autotrace_if_stmt(x.sum() > 0, _if_true1,
                                         _if_false1, (y,), names=('y',), live=('y',),
                                         where='f.py:2: if x.sum() > 0:')

A statement's variables are those its body assigns (or mutates: `a[i] = v`, `l.append(v)`, or gives
a function that writes into them: `set_first(a)`, `g([a])`). They go into the branch or loop-body
functions as arguments and come back as results, so the helpers see them as values. A global or
closure container that the function mutates but never assigns (`cache[k] = v`, `log.append(v)`) is
no variable of the function: it is changed in place while tracing, a Python side effect, as in
tf.function. `live` names the variables read after the statement (anywhere later in the function,
and in the whole loop around it): a variable assigned in one branch only, or only inside a traced
loop, is an error only when it is live. Variables that may be unassigned start as
`Undefined(name)`, whose every use raises a clear error.

Early returns are folded first (`single_return` in transforms/front/exits.py): `if c: return a`
followed by more statements becomes an if/else whose branches both end in a return, then both
returns assign `_retval` and the function returns it once. `break`, `continue` and a return inside
a loop become flags (transforms/front/exits.py). Statements that still hold a `return`, `break` or
`continue` (of their own loop), a `while`/`for` with an `else:`, a `global`/`nonlocal` variable, or
one a nested function or lambda reads (its closure sees each value Python assigns) are left as they
are: their Python condition must then not be traced (`python_test` says why).

The branch and loop functions made here are named as the user's function in the compiled code,
so tracebacks say `in f`, not `in _if_true1`. Calls of the builtins `max` and `min` are
converted too: on traced values they say to use np.maximum or np.minimum.

What statements read and write is found in transforms/control_flow/control_flow_variables.py; the helpers'
names, and the rewriting of expressions (conditions, calls) into helper calls, are in
transforms/control_flow/control_flow_calls.py. transforms/control_flow/control_flow_build.py `convert` reads a
function's source, runs this converter and compiles the converted function with the user's
file name and line numbers, so tracebacks and the helpers' errors point at the user's lines.
AUTOTRACE_DEBUG=control_flow prints it.
"""
from __future__ import annotations

import builtins
import collections
import linecache

import gast

from ..codegen.nodes import copy_tree
from ...runtime.derivatives.items import restore_item
from ..analysis.argument_writes import (base_name, operator_text, outside_write_message,
                                        statement_text, write_text)
from ..codegen.codegen import to_source
from .control_flow_calls import USER_NODE, _Conditions, _ConditionalExpressions, helper
from .handled_errors import reraise_tracing_errors, unsuppressing_items
from .loop_sources import loop_sources
from .control_flow_variables import (_early_returns, _jumps, _jumps_in_loops,
                                     assigned_names, captured_at, closures_of, loaded_names,
                                     names_calls_write, over_trip_count, stop_statement,
                                     trailing_stop)
from ..front.exits import GUARDS_AFTER_JUMP, exits_to_flags, single_return
from ..analysis.liveness import live_after
from ..analysis.write_sharing import write_sharing
from .concrete_writes import (checked_test, made_containers, outside_names, unfollowed_writes,
                              write_keywords, written_through)
from ..codegen.naming import Namer, local_names, name_counts, names_in, walk_scope
from ..front.parsing import resolve
from ..codegen.templates import name, replace, replace_expression
from ..codegen.nodes import walk


class ControlFlowConverter:
    """Rewrites one function's control flow into helper calls (see the module docstring)."""

    def __init__(self, namer: Namer, filename: str, namespace: dict):
        self.namer = namer
        self.filename = filename
        self.namespace = namespace
        self.generated: set = set()  # names of the branch and loop functions made here
        self.outputs: set = set()    # variables of converted statements (may be unassigned)
        self.fixed: set = set()      # global and nonlocal names: never statement variables
        self.local: set = set()      # the function's local variables (Python's rule)
        self.enclosing: set = set()  # those of the functions this one is defined in
        # Code autotrace generated reads a variable assigned in one branch only under the
        # same condition: there it is not an error (see if_stmt's placeholders).
        self.generated_code = False
        self.user_nones: frozenset = frozenset()  # generated code: the user's `name = None`s
        self.origin = None  # for generated code: the user's function it derives, and where
        self.flags: set = set()  # the break/continue/return flags this pass introduced
        self.loads = collections.Counter()  # reads of each variable
        # id(statement) -> the variables that may be read after it before being bound again
        self.live_after: dict = {}
        # Variables nested functions read: a closure reads them whenever it is called, so a
        # loop carries them on.
        self.closure_reads: set = set()
        # Nested functions and lambdas (control_flow_variables.closures_of): a statement that
        # assigns a variable one that may run in it or after it reads stays Python code, as a
        # global's does (a converted statement assigns in a function of its own).
        self.closures: list = []
        self.loops: list = []  # the loops around the statement converted
        # Generated code: its line -> (file, line) of the user's statement it came from.
        self.user_lines: dict = {}
        # id(user's `a[i] = v`) -> set_item's keywords (transforms/analysis/write_sharing.py)
        self.unfollowed: dict | None = {}

    def function(self, node: gast.FunctionDef) -> gast.FunctionDef:
        self.fixed = {n for statement in node.body for s in walk_scope(statement)
                      if isinstance(s, (gast.Global, gast.Nonlocal)) for n in s.names}
        outer_outputs, self.outputs = self.outputs, set()
        if _jumps_in_loops(node.body):
            node = self._exits_to_flags(node)
        node.body = single_return(node.body, self.namer)
        if _early_returns(node.body):
            # A return folding could not move to the end (under ifs nested in ifs followed
            # by more statements) becomes flags too, so its if can still be a graph cond.
            node = self._exits_to_flags(node)
        body = node.body
        self.local = local_names(node.args, body) - self.fixed
        self.loads = name_counts(body)
        self.live_after = live_after(body)
        # The user's writes that other names' memory may miss, were they traced (generated
        # code's are followed by its sweeps: none is checked).
        self.unfollowed = None if self.generated_code else write_sharing(
            node, self.filename, self.namespace)
        self.closure_reads = {n for statement in body for scope in walk_scope(statement)
                              if isinstance(scope, (gast.FunctionDef, gast.Lambda,
                                                    gast.ClassDef))
                              for n in loaded_names([scope])}
        self.closures = closures_of(body)
        body = self.block(body, after=set())
        parameters = {a.id for a in node.args.posonlyargs + node.args.args
                      + node.args.kwonlyargs}
        for extra in (node.args.vararg, node.args.kwarg):
            if extra is not None:
                parameters.add(extra.id)
        undefined = [_undefined(n) for n in sorted(self.outputs - parameters)]
        for statement in undefined:
            _locate(statement, node)
        node.body = undefined + body
        self.outputs = outer_outputs
        return node

    def _exits_to_flags(self, node: gast.FunctionDef) -> gast.FunctionDef:
        before = names_in(node)
        node = exits_to_flags(node, self.namer)
        _fill_locations(node)
        self.flags |= names_in(node) - before
        return node

    def block(self, statements: list, after: set) -> list:
        """Convert `statements`; `after` holds the variables read after this block."""
        later = [after]  # what is read after each statement, from the last one back
        if all(id(statement) in self.live_after for statement in statements):
            later *= len(statements)  # each replaced below: no need to read the statements
        else:
            for statement in reversed(statements[1:]):
                later.append(later[-1] | loaded_names([statement]))
        out = []
        for statement, read_after in zip(statements, reversed(later)):
            # The liveness analysis knows what an assignment binds again: a variable a loop
            # body assigns before reading it is not read by the next iteration.
            if id(statement) in self.live_after:
                read_after = self.live_after[id(statement)]
            out.extend(self.statement(statement, read_after))
        return out

    def statement(self, node, after: set) -> list:
        if isinstance(node, gast.If):
            return self.if_statement(node, after)
        if isinstance(node, gast.While):
            return self.while_statement(node, after)
        if isinstance(node, gast.For):
            return self.for_statement(node, after)
        if isinstance(node, gast.FunctionDef):
            inner = ControlFlowConverter(self.namer, self.filename, self.namespace)
            inner.generated_code, inner.origin = self.generated_code, self.origin
            inner.user_lines = self.user_lines
            inner.flags = self.flags
            inner.enclosing = self.enclosing | self.local
            inner.loads = self.loads
            inner.function(node)
            self.generated |= inner.generated
            return [node]
        if isinstance(node, (gast.With, gast.Try)):
            for field in ("body", "orelse", "finalbody"):
                if getattr(node, field, None):
                    setattr(node, field, self.block(getattr(node, field), after))
            for handler in getattr(node, "handlers", ()):
                handler.body = self.block(handler.body, after)
            # Only the header's expressions are left (the blocks are converted: a second
            # pass would wrap their calls twice).
            for item in getattr(node, "items", ()):
                item.context_expr = self.expressions(item.context_expr)
            if isinstance(node, gast.With):
                unsuppressing_items(node)
            for handler in getattr(node, "handlers", ()):
                handler.type = handler.type and self.expressions(handler.type)
            if isinstance(node, gast.Try):
                reraise_tracing_errors(node)  # (handled_errors.py)
            return [node]
        if isinstance(node, (gast.Assign, gast.AugAssign)):
            checks = self._outside_write_checks(node) + self._in_place_target(node)
            node = _subscript_assignment(node, self.local,
                                         lambda write: write_keywords(self, write))
            return checks + [self.expressions(node)]
        if self.generated_code and isinstance(node, gast.Expr):
            node = self._restore_assignment(node)
        return [self.expressions(node)]

    def _restore_assignment(self, node):
        """Derivative code's `restore_item(a, i, saved)` -> `a = restore_item(a, i, saved)`
        for a local variable `a`: an undone write, which rebinds `a` as the write did (a NumPy
        array given a traced value becomes a traced one, `_subscript_assignment`)."""
        call = node.value
        if not (isinstance(call, gast.Call) and len(call.args) == 3
                and resolve(call.func, self.namespace) is restore_item
                and isinstance(call.args[0], gast.Name) and call.args[0].id in self.local):
            return node
        return _locate(gast.Assign(targets=[name(call.args[0].id, store=True)], value=call,
                                   type_comment=None), node)

    def _in_place_target(self, node) -> list:
        """`a = in_place_target(a, v, ...)` before the user's `a op= v` where `a` may be an
        array (write_sharing's "array"): a NumPy array given a traced value becomes traced
        first. A `v` that is no name or constant is computed once, before, into a temporary."""
        if not isinstance(node, gast.AugAssign) or not isinstance(node.target, gast.Name) or \
                node.target.id not in self.local or self.unfollowed is None or \
                not self.unfollowed.get(id(node), {}).get("array"):
            return []
        ahead = []
        if not isinstance(node.value, (gast.Name, gast.Constant)):
            operand = self.namer.temporary("operand")
            ahead.append(self.expressions(_locate(gast.Assign(
                targets=[name(operand, store=True)], value=node.value, type_comment=None),
                node)))
            node.value = _locate(name(operand), node)
        call = gast.Call(func=name(helper("in_place_target")),
                         args=[name(node.target.id), node.value],
                         keywords=write_keywords(self, node))
        assign = _locate(gast.Assign(targets=[name(node.target.id, store=True)], value=call,
                                     type_comment=None), node)
        for child in walk(assign):
            setattr(child, _USER, True)
        return ahead + [assign]

    def _outside_write_checks(self, node) -> list:
        """`refuse_outside_write(G, ...)` before `G[i] = v` where G is a global or closure
        variable of the user's function: a traced graph cannot write into an array it does not
        make on every call (derivatives refuse it too: transforms/front/inplace.py)."""
        targets = node.targets if isinstance(node, gast.Assign) else [node.target]
        checks = []
        for target in targets:
            base = base_name(target) if isinstance(target, gast.Subscript) else None
            if base is None or base.id in self.local | self.enclosing or \
                    base.id not in self.namespace:
                continue
            message = outside_write_message(base.id, write_text(node))
            where = self._where(node, statement_text(node))
            call = gast.Call(func=name(helper("refuse_outside_write")),
                             args=[copy_tree(target.value)] + [
                                 gast.Constant(value=text, kind=None)
                                 for text in (message, where)], keywords=[])
            checks.append(_locate(gast.Expr(value=call), node))
        return checks

    def expressions(self, node):
        """Conditional expressions in `node` become `if_exp` calls; a call `g(x)` becomes
        `converted(g)(x)`, so a function it calls is converted too."""
        return _ConditionalExpressions(self).visit(node)

    def _variables(self, statements, statement=None) -> list:
        """The local variables `statements` assign; for the `if`, `while` or `for`
        `statement` they are the body of, also those whose memory they may change in place
        through another name (concrete_writes.written_through)."""
        written = names_calls_write(statements, self.local, self.namespace)
        names = [n for n in assigned_names(statements, written)
                 if n not in self.generated and n in self.local]
        if statement is not None:
            names += [n for n in written_through(self, statement, names)
                      if n not in self.generated and n in self.local]
        return names

    def _where(self, node, header: str) -> str:
        """Where errors about `node` point: the user's line, for generated code too (or, where
        that is not known, the user's function the generated code derives)."""
        user = self.user_lines.get(node.lineno)
        after_jump = getattr(node, GUARDS_AFTER_JUMP, None)
        if user is None and after_jump:
            # (the `if` exits_to_flags wrote around what follows a statement that may jump out,
            # at that statement's line)
            statement = linecache.getline(self.filename, node.lineno).strip()
            if statement:
                return f"{self.filename}:{node.lineno}: {statement} ({after_jump})"
        if user is None:
            origin = f" (in the {self.origin})" if self.origin else ""
            return f"{self.filename}:{node.lineno}{origin}: {header}"
        filename, line = user
        text = linecache.getline(filename, line).strip()
        return f"{filename}:{line}: {text} (derivative code {self.filename}:{node.lineno}: " \
               f"{header})"

    def _function(self, hint: str, parameters: list, body: list, results: list, node):
        function_name = self.namer.temporary(hint)
        self.generated.add(function_name)
        # One template for every such function (its text, parsed once): the name and the
        # parameters are set after.
        definition = replace("def function():\n    pass\n    return results",
                             results=_tuple_of(results))[0]
        definition.name = function_name
        definition.args.args = [gast.Name(id=parameter, ctx=gast.Param(), annotation=None,
                                          type_comment=None) for parameter in parameters]
        # The statements themselves, not a copy (as filling a hole makes): they were made for
        # this function, and nothing else holds them.
        definition.body[:1] = body or [gast.Pass()]
        _locate(definition, node)
        return function_name, definition

    def _helper_call(self, node, kind: str, header: str, leading: str, variables, live,
                     keywords: str = "", **holes) -> list:
        """`(variables) = helper(leading, values, names=..., keywords, live=..., where=...)`,
        the statement `node` becomes; `holes` fill the names in `leading` and `keywords`. The
        names are holes too, so that the template's text is one of a few, each parsed once.
        The variables that may hold a NumPy array the function does not make are named too
        (`outside=`, concrete_writes.outside_names), and those that hold a list or dict it
        makes (`made=`, and `shared=` where another name holds it: concrete_writes.
        made_containers)."""
        outside = outside_names(self, node, variables)
        if outside:
            keywords += "outside=outside_names, "
            holes["outside_names"] = _names_tuple(outside)
        made, shared = made_containers(self, node, variables)
        if made:
            keywords += "made=made_names, "
            holes["made_names"] = _names_tuple(made)
        if shared:
            keywords += "shared=shared_names, "
            holes["shared_names"] = _names_tuple(shared)
        placeholders, placeholder_holes = self._placeholders(variables, kind)
        call = replace_expression(
            f"{helper(kind)}({leading}, values, names=variable_names, "
            f"{keywords}live=live_names, where=where{placeholders})",
            values=_tuple_of(variables), variable_names=_names_tuple(variables),
            live_names=_names_tuple(live),
            where=gast.Constant(value=self._where(node, header), kind=None),
            **placeholder_holes, **holes)
        return self._call(node, variables, call)

    def _call(self, node, variables, call) -> list:
        self.outputs.update(variables)
        if variables:
            statement = replace("targets = call", targets=_tuple_of(variables), call=call)[0]
        else:
            statement = gast.Expr(value=call)
        return [_locate(statement, node)]

    def if_statement(self, node: gast.If, after: set) -> list:
        inside = name_counts([node])
        writes = unfollowed_writes(self, node)
        node.body = self.block(node.body, after)
        node.orelse = self.block(node.orelse, after)
        header = "if " + to_source(node.test).strip() + ":"
        if _jumps(node.body) or _jumps(node.orelse) or \
                self._touches_fixed([node], node, after):
            node.test = self.expressions(node.test)
            if not (isinstance(node.test, gast.Name) and node.test.id in self.flags):
                # (a loop's break flag is a traced loop's business: see `_trailing_stop`)
                node.test = self._python_test(node, header, node.test,
                                              self._why_python([node], "if statement",
                                                               (), node, after))
            return [node]
        variables = self._variables(node.body + node.orelse, node)
        true_name, true_def = self._function("if_true", variables, node.body, variables, node)
        false_name, false_def = self._function("if_false", variables, node.orelse, variables,
                                               node)
        test = checked_test(_Conditions(self).visit(self.expressions(node.test)), writes,
                            variables)
        return [true_def, false_def] + self._helper_call(
            node, "if_stmt", header, "test, if_true, if_false", variables,
            self._live(variables, after, inside), test=test, if_true=true_name,
            if_false=false_name)

    def _live(self, variables, after: set, inside, targets=()) -> list:
        """The variables read after the statement (`after`); a `for` loop's target counts
        only when read outside the loop (inside, each iteration assigns it before reading)."""
        return sorted(v for v in set(variables) & after
                      if v not in targets or self.loads[v] > inside[v])

    def _placeholders(self, variables, kind: str) -> tuple:
        """The keyword naming the variables that may be placeholders (see if_stmt); for
        generated code, also those the user sets to None, which may not: (its text, the holes
        it holds)."""
        if self.generated_code:
            user_nones = [v for v in variables if v in self.user_nones]
            if user_nones:
                return (", placeholders=True, user_nones=user_nones",
                        {"user_nones": _names_tuple(user_nones)})
            return ", placeholders=True", {}
        flags = [v for v in variables if v in self.flags]
        return (", placeholders=flag_names", {"flag_names": _names_tuple(flags)}) if flags \
            else ("", {})

    def _loop_after(self, node, after: set) -> set:
        """A loop's body reads its own variables again in the next iteration."""
        return after | loaded_names([node])

    def _carried(self, node, variables, head, keep=()) -> tuple:
        """The variables a converted loop carries from one iteration to the next, and the
        statements that start its body: `head` (None where unknown) holds the variables read at
        the loop's head, after it or by an iteration before assigning them. Any other variable
        the body assigns is the body's own: it starts each iteration undefined, so a traced loop
        never carries a value that an if in it assigns on one path only."""
        if head is None:
            return variables, []
        carried = [v for v in variables if v in head or v in keep or v in self.closure_reads]
        local = [_locate(_undefined(v), node)
                 for v in variables if v not in carried]
        return carried, local

    def _touches_fixed(self, statements, node, after) -> bool:
        return bool(set(assigned_names(statements)) & (
            self.fixed | captured_at(self.closures, node, self.loops, after)))

    def while_statement(self, node: gast.While, after: set) -> list:
        inside = name_counts([node])
        header = "while " + to_source(node.test).strip() + ":"
        head = self.live_after.get(id(node.body[-1]))
        writes = unfollowed_writes(self, node)
        self.loops.append(node)
        node.body = self.block(node.body, self._loop_after(node, after))
        self.loops.pop()
        stop = trailing_stop(node)
        if stop is not None:
            node.test = gast.BoolOp(op=gast.And(), values=[
                node.test, gast.UnaryOp(op=gast.Not(), operand=name(stop))])
        if node.orelse or _jumps(node.body) or self._touches_fixed(node.body, node, after):
            if stop is not None:
                node.body.append(stop_statement(stop))
            node.test = self._python_test(node, header, self.expressions(node.test),
                                          self._why_python(node.body, "while loop", node.orelse,
                                                           node, after))
            node.orelse = self.block(node.orelse, after)
            return [node]
        variables, local = self._carried(node, self._variables(node.body, node), head)
        test = checked_test(_Conditions(self).visit(self.expressions(node.test)), writes,
                            variables)
        test_name, test_def = self._function("loop_test", variables, [], [], node)
        test_def.body = [_locate(gast.Return(value=test), node)]
        body_name, body_def = self._function("loop_body", variables, local + node.body,
                                             variables, node)
        return [test_def, body_def] + self._helper_call(
            node, "while_stmt", header, "loop_test, loop_body", variables,
            self._live(variables, after, inside), loop_test=test_name, loop_body=body_name)

    def for_statement(self, node: gast.For, after: set) -> list:
        inside = name_counts([node])
        header = f"for {to_source(node.target).strip()} in {to_source(node.iter).strip()}:"
        adjoint = self.generated_code and over_trip_count(node.iter)
        head = self.live_after.get(id(node.body[-1]))
        writes = unfollowed_writes(self, node)
        self.loops.append(node)
        node.body = self.block(node.body, self._loop_after(node, after))
        self.loops.pop()
        made_from, node.iter = loop_sources(node.iter, self.namespace), self.expressions(node.iter)
        stop = trailing_stop(node)
        if node.orelse or _jumps(node.body) or self._touches_fixed([node], node, after):
            if stop is not None:
                node.body.append(stop_statement(stop))
            node.iter = self._python_test(node, header, self._range(node.iter),
                                          self._why_python([node], "for loop", node.orelse, node,
                                                           after),
                                          iterable=True)
            node.orelse = self.block(node.orelse, after)
            return [node]
        item = self.namer.temporary("item")
        bind = _locate(gast.Assign(targets=[node.target], value=name(item), type_comment=None),
                       node)
        targets = self._variables([bind])
        variables, local = self._carried(node, self._variables([bind] + node.body, node), head,
                                         keep=targets + [stop])
        body_name, body_def = self._function("loop_body", [item] + variables,
                                             [bind] + local + node.body, variables, node)
        iterable = checked_test(self._range(node.iter), writes, variables)
        keywords = "targets=target_names, " + ("stop=stop_name, made_from=made_from, " if stop
                                               else "") + ("adjoint=True, " if adjoint else "")
        holes = {"stop_name": gast.Constant(value=stop, kind=None), "made_from": made_from}
        return [body_def] + self._helper_call(
            node, "for_stmt", header, "iterable, loop_body", variables,
            self._live(variables, after, inside, targets), keywords, iterable=iterable,
            loop_body=body_name, target_names=_names_tuple(targets), **(holes if stop else {}))

    def _range(self, iterable):
        """`range(...)` -> `range_(...)`, which is a graph loop's range when a bound is traced."""
        if (isinstance(iterable, gast.Call) and isinstance(iterable.func, gast.Name)
                and resolve(iterable.func, self.namespace) is builtins.range
                and not iterable.keywords):
            return gast.Call(func=name(helper("range_")), args=iterable.args, keywords=[])
        return iterable

    def _why_python(self, statements, statement: str, orelse=(), node=None, after=()) -> str:
        """Why a statement stays Python code, for the error if its condition is traced."""
        graph = "graph cond" if statement.startswith("if") else "graph loop"
        traced = "its range is" if statement.startswith("for") else "its condition is"
        if orelse:
            return (f"this {statement} has an else: block, which cannot be converted to a "
                    f"{graph} when {traced} traced; remove the else and run its statements "
                    f"after the loop (with a flag where a break skips them)")
        fixed = sorted(set(assigned_names(statements)) & self.fixed)
        if fixed:
            return (f"this {statement} assigns the global or nonlocal variable {fixed[0]!r}, "
                    f"which cannot be converted to a {graph} when {traced} traced; pass the "
                    f"value in and return the new one instead")
        captured = sorted(set(assigned_names(statements)) & captured_at(
            self.closures, node, self.loops, after))
        if captured:
            return (f"this {statement} assigns the variable {captured[0]!r}, which a function "
                    f"or lambda defined in this function reads, and cannot be converted to a "
                    f"{graph} when {traced} traced; pass {captured[0]} to that function as an "
                    f"argument instead")
        return (f"this {statement} holds a return, break, continue or yield that cannot be "
                f"converted to a {graph} when {traced} traced; compute the value with "
                f"autotrace.cond or np.where instead")

    def _python_test(self, node, header: str, test, reason: str, iterable: bool = False):
        """`python_test(test, ...)`: the test (or iterable) of a statement left as Python code,
        which raises `reason` if it is traced."""
        keywords = {"where": self._where(node, header), "reason": reason}
        if iterable:
            keywords["iterable"] = True
        call = gast.Call(func=name(helper("python_test")), args=[test], keywords=[
            gast.keyword(arg=key, value=gast.Constant(value=value, kind=None))
            for key, value in keywords.items()])
        return _locate(call, node)


def _subscript_assignment(node, local: set, keywords=lambda node: []):
    """`a[i] = v` -> `a = set_item(a, i, v, **keywords(node))` (and `a[i] += v` likewise), for
    a local variable `a`: a concrete array made in the function and written with traced values
    becomes a traced one (which set_item refuses where other names may share the array). A
    global or closure container is written as it is (assigning it would make it local)."""
    targets = node.targets if isinstance(node, gast.Assign) else [node.target]
    if len(targets) != 1 or not isinstance(targets[0], gast.Subscript) or \
            not isinstance(targets[0].value, gast.Name) or targets[0].value.id not in local:
        return node
    target = targets[0]
    extra = []
    if isinstance(node, gast.AugAssign):  # the item's own `op=` where a is a list or dict
        extra = [gast.keyword(arg="op", value=gast.Constant(value=operator_text(node)[:-1],
                                                            kind=None))]
    call = gast.Call(func=name(helper("set_item")), args=[name(target.value.id), target.slice,
                                                          node.value],
                     keywords=extra + keywords(node))
    assign = gast.Assign(targets=[name(target.value.id, store=True)], value=call,
                         type_comment=None)
    for child in walk(_locate(assign, node)):
        setattr(child, _USER, True)  # keeps its line inside a branch or loop function
    return assign


def _fill_locations(node, parent=None) -> None:
    """Give nodes without a line (the flags exits_to_flags adds) their parent's."""
    if "lineno" in getattr(node, "_attributes", ()):
        if getattr(node, "lineno", None) is None and parent is not None:
            gast.copy_location(node, parent)
        parent = node
    for child in gast.iter_child_nodes(node):
        _fill_locations(child, parent)


def _tuple_of(variables) -> gast.Tuple:
    return gast.Tuple(elts=[name(v) for v in variables], ctx=gast.Load())


def _names_tuple(values) -> gast.Tuple:
    """`('a', 'b', )`: the names `values`, as strings."""
    return gast.Tuple(elts=[gast.Constant(value=v, kind=None) for v in values], ctx=gast.Load())


def _undefined(variable: str):
    """`variable = Undefined('variable')`."""
    return replace("variable = undefined(text)", variable=variable, undefined=helper("Undefined"),
                   text=gast.Constant(value=variable, kind=None))[0]


def _locate(node, origin):
    """Give the generated nodes in `node` `origin`'s line; the user's own nodes (marked by
    `convert`) keep theirs."""
    for child in walk(node):
        if "lineno" in getattr(child, "_attributes", ()) and not getattr(child, _USER, False):
            gast.copy_location(child, origin)
    return node


_USER = USER_NODE
