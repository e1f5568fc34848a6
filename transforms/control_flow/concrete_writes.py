"""The checks converted code makes of the user's writes `a[i] = v` that autotrace could not
follow, should `a` be a NumPy array and the write traced (transforms/analysis/write_sharing.py
says which): set_item's keywords, and the test of an `if` or loop holding such a write.

    y = set_item(y, 0, x[0], where='f.py:4: z[0] = x[0]', unfollowed='...')
    (z,) = if_stmt(refuse_traced_writes(x.sum() > 0, (z,), ('f.py:6: ...',)), ...)

A traced `if` or loop traces its variables as graph values, a NumPy array too: every write in
it is traced, a NumPy value's as well, so its test refuses the arrays written there that other
names may share (runtime/tracing/control_concrete_arrays.py). Its variables that may hold,
after it, a NumPy array the function does not make are named to it (`outside=`), as is a
conditional expression that may give one: where one does, the traced result refuses writes
(runtime/tracing/control_aliases.may_be_outside_array). Code autotrace generated is checked
by its sweeps instead: it gets none of these.
"""
from __future__ import annotations

import gast

from ...runtime.primitives.memory import OTHER_NAME
from ..analysis.argument_writes import statement_text
from ..analysis.write_sharing import converted_write, name_in_place, written_name
from ..codegen.codegen import to_source
from ..codegen.naming import walk_scope
from ..codegen.nodes import walk
from ..codegen.templates import name
from .control_flow_calls import helper

# The refusal of a write where the model of memory could not read the function.
_UNREAD = ("autotrace could not read which names share this array's memory, and makes the "
           "name written alone a new traced value; make the array traced where it is made "
           "(np.zeros_like(x, shape=...), x a traced value)")


# The refusal of a write that the model saw no other name share, where, when the statement
# runs, one does (OTHER_NAME: its name, put in then).
_WATCHED = ("this changes the NumPy array {name!r} in place, and {other}, which is read after "
            "it, holds its memory too (as an attribute, an item or a view): autotrace makes "
            "{name!r} alone a new traced value, and {other} would keep the old contents. Make "
            "the array traced where it is made (np.zeros_like(x, shape=...), x a traced value), "
            "so that a write through any name is followed")


def write_keywords(converter, node) -> list:
    """The keywords of set_item for the user's `a[i] = v` (`node`, a ControlFlowConverter's
    statement): where it is and why a traced write there is not followed, where it may not be
    (none where it is, as for a NumPy array only the written name holds)."""
    if converter.generated_code:
        return []
    known = {} if converter.unfollowed is None else converter.unfollowed.get(id(node), {})
    if converter.unfollowed is None:
        keywords = {"unfollowed": _UNREAD}
    else:
        keywords = {key: value for key, value in known.items() if key == "unfollowed"}
    if not keywords:
        return []
    keywords = {"where": converter._where(node, statement_text(node)), **keywords}
    found = [gast.keyword(arg=key, value=gast.Constant(value=value, kind=None))
             for key, value in keywords.items() if value is not None]
    if known.get("holders") and keywords.get("unfollowed"):
        # (`u, un = un, u`: the others are apart from it, and refuse it only where one of
        # them, when it runs, may hold an array)
        found.append(gast.keyword(arg="holders", value=gast.Tuple(
            elts=[_value_of(other) for other in known["holders"]], ctx=gast.Load())))
    return found


def _value_of(identifier: str) -> gast.Lambda:
    """`lambda: identifier`, read when a check runs (a name not bound yet holds nothing)."""
    return gast.Lambda(args=gast.arguments(args=[], posonlyargs=[], vararg=None, kwonlyargs=[],
                                           kw_defaults=[], kwarg=None, defaults=[]),
                       body=name(identifier))


def unfollowed_writes(converter, statement) -> list:
    """[(written name, refusal)] for the writes in `statement` (not yet converted) that are
    not followed where it becomes a graph op; `header` is the statement's first line."""
    if converter.generated_code:
        return []
    header = to_source(statement).strip().splitlines()[0]
    found = []
    for node in (n for part in statement.body + statement.orelse for n in walk_scope(part)):
        if not (converted_write(node) or name_in_place(node)):
            continue
        known = {} if converter.unfollowed is None else converter.unfollowed.get(id(node), {})
        reason = _UNREAD if converter.unfollowed is None else known.get("unfollowed")
        written = written_name(node)
        sharers = known.get("sharers", ())
        if reason is None and known.get("watched"):
            # no name the model follows shares it: whether one does is asked when it runs
            reason, sharers = _WATCHED.format(name=written, other=OTHER_NAME), known["watched"]
        if reason is None:
            continue
        found.append((written, f"{converter._where(node, statement_text(node))}\n  "
                               f"{reason}\n  (`{header}` runs on a traced value: autotrace "
                               f"makes it one graph op, in which every write is traced.)",
                      sharers))
    return found


def written_through(converter, statement, variables) -> list:
    """The names whose memory the `if`, `while` or `for` `statement` may change in place
    without assigning them (`items = [v]; items[0] -= w` in it changes v), but where none of
    its `variables` may share or hold that memory on entry (the change is carried out with
    that variable, and views follow it): a traced statement takes them as its variables too."""
    if converter.generated_code:
        return _restore_sources(statement, variables) if isinstance(statement, gast.If) else []
    if converter.unfollowed is None:
        return []
    written = converter.unfollowed.get(id(statement), {}).get("written", {})
    return [name for name, holders in written.items()
            if name not in variables and not set(holders) & set(variables)]


def _restore_sources(statement: gast.If, variables) -> list:
    """In code autotrace generated, the names an `if` gives back to another by name (`v =
    _t24`, a restore from a name: transforms/codegen/restores.py), which the adjoint may then
    write into (restore_item(v, ...)): a traced `if` takes them as its variables, so that such
    a write changes the value the branch was given, not one of the enclosing trace."""
    found = []
    for node in walk(statement):
        if isinstance(node, gast.Assign) and len(node.targets) == 1 and isinstance(
                node.targets[0], gast.Name) and isinstance(node.value, gast.Name):
            source = node.value.id
            if source not in variables and source not in found and \
                    source != node.targets[0].id:
                found.append(source)
    return found


def outside_names(converter, statement, variables) -> list:
    """The `variables` of the `if`, `while` or `for` `statement` that may hold memory the
    function does not make after it (all of them where the model could not read the
    function)."""
    if converter.generated_code:
        return []
    if converter.unfollowed is None:
        return list(variables)
    flagged = converter.unfollowed.get(id(statement), {}).get("outside", ())
    return [variable for variable in variables if variable in flagged]


def made_containers(converter, statement, variables) -> tuple[list, list]:
    """The `variables` of the `if`, `while` or `for` `statement` that hold, on entry, a list or
    dict the function makes, and those of them another name holds too: one the statement
    changes in place is changed in place after it (runtime/tracing/control_containers.py).
    Not one it may not make (a global's, an argument's object's), which a trace cannot change
    for every call."""
    if converter.generated_code or converter.unfollowed is None:
        return [], []
    known = converter.unfollowed.get(id(statement), {})
    return ([variable for variable in variables if variable in known.get("made", ())],
            [variable for variable in variables if variable in known.get("shared", ())])


def checked_test(test, writes: list, variables) -> gast.expr:
    """`refuse_traced_writes(test, (a, ...), (refusal, ...), ((("b", lambda: b), ...), ...))`
    for the `writes` into the statement's `variables` (those a graph op takes), else `test`
    itself. Where a refusal names the other names that may share the array (`sharers`), a
    lambda gives each one's value, which the run-time check looks at (None where it refuses in
    any case)."""
    # (the names the check asks of the others sharing an array written: not the statement's
    # own variables, whose values change in it; the source's refusal names them where they do)
    writes = [(written, refusal, sharers if OTHER_NAME not in refusal else tuple(
        other for other in sharers if other not in variables))
        for written, refusal, sharers in writes if written in variables]
    writes = [write for write in writes if OTHER_NAME not in write[1] or write[2]]
    if not writes:
        return test

    def values_of(sharers):
        if not sharers:
            return gast.Constant(value=None, kind=None)
        return gast.Tuple(elts=[gast.Tuple(elts=[
            gast.Constant(value=other, kind=None), _value_of(other)], ctx=gast.Load())
            for other in sharers], ctx=gast.Load())
    return gast.Call(func=name(helper("refuse_traced_writes")), args=[
        test, gast.Tuple(elts=[name(written) for written, _, _ in writes], ctx=gast.Load()),
        gast.Tuple(elts=[gast.Constant(value=refusal, kind=None) for _, refusal, _ in writes],
                   ctx=gast.Load()),
        gast.Tuple(elts=[values_of(sharers) for _, _, sharers in writes], ctx=gast.Load())],
        keywords=[])
