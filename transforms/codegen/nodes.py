"""Walking, copying and converting syntax trees: what `gast.walk`, `copy.deepcopy` and
`gast.gast_to_ast` do, made fast.

Generating a derivative walks and copies the same trees many times (every cleanup pass counts
the names a body reads; every template filled copies its holes), and the standard library's
generic versions spend most of their time in generators and `__reduce_ex__`; gast's converter
to the standard library's nodes, which every printed and compiled tree goes through, costs six
times the unparsing of the tree it converts. These give the same results in the same order.
"""
from __future__ import annotations

import ast
import copy
import sys

import gast

_AST = gast.AST
# Values copy_tree keeps as they are, as copy.deepcopy does (it copies none of these types).
_ATOMS = frozenset({type(None), bool, int, float, complex, str, bytes, type(Ellipsis)})


def walk(node):
    """`node` and every node under it, breadth first: `gast.walk` (ast.walk), order and all.
    As there, a node's children are listed before the node is handed out, so a caller that
    changes the node still walks the children it had."""
    todo = [node]
    append = todo.append
    fields_of = NODE_FIELDS
    for node in todo:  # the list grows as it is read: a queue
        # (add_children written out here and in nodes_of: a call a node costs a fifth)
        for field in fields_of[type(node)]:
            value = getattr(node, field, None)
            if value is None:
                continue
            if isinstance(value, _AST):
                append(value)
            elif isinstance(value, list):
                for item in value:  # (a loop: a generator per list costs more than its items)
                    if isinstance(item, _AST):
                        append(item)
        yield node


# The fields of a statement that hold blocks of statements (a try's handlers hold their own).
STATEMENT_BLOCKS = ("body", "orelse", "finalbody")


def rewrite_statements(root, rewrite, innermost_first: bool = False) -> None:
    """Replace, in place, each statement of each block under `root` (bodies, else and finally
    clauses, nested functions' too) by the statements `rewrite(statement)` gives, or keep it
    where that is None. Blocks are rewritten outermost first (or innermost first); the
    statements a rewrite makes are not walked, the statements it keeps inside them are."""
    nodes = _holders(root)
    for node in reversed(nodes) if innermost_first else nodes:
        for field in STATEMENT_BLOCKS:
            block = getattr(node, field, None)
            if not isinstance(block, list):
                continue
            replacements = [rewrite(statement) for statement in block]
            if any(replacement is not None for replacement in replacements):
                setattr(node, field, [new for statement, replacement in zip(block, replacements)
                                      for new in (replacement if replacement is not None
                                                  else (statement,))])


# The fields through which a statement is reached: blocks, a try's handlers, a match's cases.
_HOLDING = frozenset(STATEMENT_BLOCKS + ("handlers", "cases"))


def _holders(root) -> list:
    """The nodes under `root` that may hold a block, in walk's order: statements, handlers and
    cases, found through those fields alone (no expression holds a statement). Each is one
    level below the node it is found in, as in walk, so that breadth first they come in
    walk's order, expressions left out."""
    todo = [root]
    for node in todo:
        todo += _held(node)
    return todo


def _held(node) -> list:
    """The nodes in the fields of `node` that may hold a block (_HOLDING), in their order."""
    held = []
    for field in NODE_FIELDS[type(node)]:
        if field in _HOLDING:
            value = getattr(node, field, None)
            if isinstance(value, list):
                held += [item for item in value if isinstance(item, _AST)]
    return held


def nodes_of(node) -> list:
    """The nodes `walk(node)` hands out, in its order, as a list: for a caller that reads
    every node of a tree it does not change, which costs less than resuming a generator once
    a node."""
    todo = [node]
    append = todo.append
    fields_of = NODE_FIELDS
    for node in todo:  # the list grows as it is read: a queue
        for field in fields_of[type(node)]:
            value = getattr(node, field, None)
            if value is None:
                continue
            if isinstance(value, _AST):
                append(value)
            elif isinstance(value, list):
                for item in value:
                    if isinstance(item, _AST):
                        append(item)
    return todo


# Fields that hold a name, a number or a constant's value, never a node, by class name (gast's
# and ast's alike): a walk need not read them. (Not ExceptHandler's `name`: a Name in gast.)
_ATOM_FIELDS = {
    "Name": ("id", "type_comment"), "Constant": ("value", "kind"), "Attribute": ("attr",),
    "keyword": ("arg",), "alias": ("name", "asname"), "ClassDef": ("name",),
    "FunctionDef": ("name", "type_comment"), "AsyncFunctionDef": ("name", "type_comment"),
    "Global": ("names",), "Nonlocal": ("names",), "ImportFrom": ("module", "level"),
    "FormattedValue": ("conversion",), "comprehension": ("is_async",),
    "AnnAssign": ("simple",), "Assign": ("type_comment",), "For": ("type_comment",),
    "AsyncFor": ("type_comment",), "With": ("type_comment",), "AsyncWith": ("type_comment",),
}


class _FieldsByClass(dict):
    """node class -> its fields that may hold nodes, in `_fields`' order: found on the first
    look-up of each class."""

    def __missing__(self, kind) -> tuple:
        atoms = _ATOM_FIELDS.get(kind.__name__, ())
        fields = self[kind] = tuple(f for f in kind._fields if f not in atoms)
        return fields


NODE_FIELDS = _FieldsByClass()


def add_children(node, append) -> None:
    """append(child) for each node directly under `node`, in ast.iter_child_nodes' order."""
    for field in NODE_FIELDS[type(node)]:
        value = getattr(node, field, None)
        if value is None:
            continue
        if isinstance(value, _AST):
            append(value)
        elif isinstance(value, list):
            for item in value:
                if isinstance(item, _AST):
                    append(item)


def children(node) -> list:
    """The nodes directly under `node`: `ast.iter_child_nodes(node)`, order and all, as a
    list."""
    found = []
    add_children(node, found.append)
    return found


def fill_missing_locations(root):
    """`ast.fix_missing_locations(root)` for a tree of the standard library's nodes, without
    its recursion and generators: each node without a position takes its parent's, nodes met
    in the same order (depth first, in source order), so a node met twice ends as it does
    there. Returns `root`."""
    todo = [(root, 1, 0, 1, 0)]
    pop, push = todo.pop, todo.append
    while todo:
        node, lineno, col_offset, end_lineno, end_col_offset = pop()
        attributes = node._attributes
        if attributes:
            if "lineno" in attributes:
                if not hasattr(node, "lineno"):
                    node.lineno = lineno
                else:
                    lineno = node.lineno
            if "end_lineno" in attributes:
                if getattr(node, "end_lineno", None) is None:
                    node.end_lineno = end_lineno
                else:
                    end_lineno = node.end_lineno
            if "col_offset" in attributes:
                if not hasattr(node, "col_offset"):
                    node.col_offset = col_offset
                else:
                    col_offset = node.col_offset
            if "end_col_offset" in attributes:
                if getattr(node, "end_col_offset", None) is None:
                    node.end_col_offset = end_col_offset
                else:
                    end_col_offset = node.end_col_offset
        # the children pushed last to first, so that the first is taken next
        for field in reversed(node._fields):
            value = getattr(node, field, None)
            if isinstance(value, ast.AST):
                push((value, lineno, col_offset, end_lineno, end_col_offset))
            elif isinstance(value, list):
                for item in reversed(value):
                    if isinstance(item, ast.AST):
                        push((item, lineno, col_offset, end_lineno, end_col_offset))
    return root


def fill_statement_lines(root):
    """Give each statement (and handler) under `root` that has no line its enclosing one's, as
    `fill_missing_locations` gives it (1 at the top), and leave every other node as it is: all
    the unparser reads of a location is a statement's line, to find its `# type: ignore`
    comment. Walks the blocks alone, not the expressions in them. Returns `root`."""
    todo = [(root, 1)]
    pop, push = todo.pop, todo.append
    while todo:
        node, lineno = pop()
        if "lineno" in node._attributes:
            if not hasattr(node, "lineno"):
                node.lineno = lineno
            else:
                lineno = node.lineno
        for item in _held(node):
            push((item, lineno))
    return root


def copy_tree(value, memo: dict | None = None):
    """A deep copy of a tree (a node, or a list of them): `copy.deepcopy(value)`, node for node,
    every attribute copied (marks that passes set too), a node or list met twice copied once.
    Values other than nodes, lists and atoms go to copy.deepcopy, with the same memo."""
    if memo is None:
        memo = {}
    return _copy(value, memo)


def _copy(value, memo: dict):
    kind = type(value)
    if kind in _ATOMS:
        return value
    copied = memo.get(id(value))
    if copied is not None:
        return copied
    if isinstance(value, _AST):
        # as copy.deepcopy makes it: made by the class's __new__ (no __init__, which has
        # nothing to do here), its __dict__ filled
        copied = kind.__new__(kind)
        memo[id(value)] = copied
        state = copied.__dict__
        for key, item in value.__dict__.items():
            state[key] = item if type(item) in _ATOMS else _copy(item, memo)
        return copied
    if kind is list:
        copied = []
        memo[id(value)] = copied
        for item in value:
            copied.append(item if type(item) in _ATOMS else _copy(item, memo))
        return copied
    return copy.deepcopy(value, memo)


def to_ast(node):
    """The standard library's tree of a gast tree (a node, or a list of them): what
    `gast.gast_to_ast(node)` makes, node for node, attributes and locations alike (save that
    contexts and operators, which hold nothing, are shared, as ast.parse shares them)."""
    return _to_ast(node) if _OWN_CONVERTER else gast.gast_to_ast(node)


_MISSING = object()


def _to_ast(value):
    if isinstance(value, list):
        return [_to_ast(item) for item in value]
    if not isinstance(value, _AST):
        return value
    return _CONVERTERS[type(value)](value)


def _plain(kind):
    """The converter of the gast class `kind` whose ast class has the same name and fields:
    each field converted, the attributes (its location) copied. The node is made as
    copy.deepcopy makes nodes (the class called with no arguments, its __dict__ filled), which
    costs less than the constructor's keywords."""
    target = getattr(ast, kind.__name__, None)
    if target is None:  # a node only gast has: dropped, as gast drops it
        return lambda node: None
    fields, attributes = kind._fields, kind._attributes
    if not fields and not attributes:  # a context or operator: one serves every node
        shared = target()
        return lambda node: shared
    converters = _CONVERTERS

    def converted(node):
        new = target()
        state = new.__dict__
        for field in fields:
            value = getattr(node, field, _MISSING)
            if value is _MISSING:
                continue
            kind = type(value)
            if kind in _ATOMS:
                state[field] = value
            elif kind is list:  # (a node's list holds nodes: each converted without a call)
                state[field] = [converters[type(item)](item) if isinstance(item, _AST)
                                else _to_ast(item) for item in value]
            else:
                state[field] = _to_ast(value)
        for attribute in attributes:
            value = getattr(node, attribute, _MISSING)  # (end_lineno: None where unset)
            if value is not _MISSING:
                state[attribute] = value
        return new
    return converted


def _located(converted, node):
    """`ast.copy_location(converted, node)` for the nodes below (all four attributes in both
    classes): lineno and col_offset where set, the end positions where set or None."""
    state = converted.__dict__
    value = getattr(node, "lineno", None)
    if value is not None:
        state["lineno"] = value
    value = getattr(node, "col_offset", None)
    if value is not None:
        state["col_offset"] = value
    value = getattr(node, "end_lineno", _MISSING)
    if value is not _MISSING:
        state["end_lineno"] = value
    value = getattr(node, "end_col_offset", _MISSING)
    if value is not _MISSING:
        state["end_col_offset"] = value
    return converted


def _name(node):
    """A Name: gast's extra fields left out."""
    context = node.ctx
    return _located(ast.Name(node.id, _CONVERTERS[type(context)](context)), node)


def _argument(node):
    """A parameter: gast's Name, ast's arg."""
    if node is None:
        return None
    return _located(ast.arg(_to_ast(node.id), _to_ast(node.annotation),
                            _to_ast(node.type_comment)), node)


def _except_handler(node):
    if not node.name:
        return _plain(type(node))(node)
    return _located(ast.ExceptHandler(_to_ast(node.type), node.name.id, _to_ast(node.body)),
                    node)


def _function(kind):
    def converted(node):
        return _located(kind(_to_ast(node.name), _to_ast(node.args), _to_ast(node.body),
                             _to_ast(node.decorator_list), _to_ast(node.returns),
                             _to_ast(node.type_comment)), node)
    return converted


# The nodes gast's converter builds by hand (gast/ast3.py GAstToAst3, Python 3.10 and 3.11:
# gast's extra fields left out, parameters as ast.arg), by class name as gast dispatches.
_SPECIAL = {
    "Name": _name,
    "Assign": lambda node: _located(ast.Assign(_to_ast(node.targets), _to_ast(node.value)),
                                    node),
    "ExceptHandler": _except_handler,
    "FunctionDef": _function(ast.FunctionDef),
    "AsyncFunctionDef": _function(ast.AsyncFunctionDef),
    "ClassDef": lambda node: _located(ast.ClassDef(
        _to_ast(node.name), _to_ast(node.bases), _to_ast(node.keywords), _to_ast(node.body),
        _to_ast(node.decorator_list)), node),
    "arguments": lambda node: ast.arguments(
        [_argument(a) for a in node.posonlyargs], [_argument(a) for a in node.args],
        _argument(node.vararg), [_argument(a) for a in node.kwonlyargs],
        _to_ast(node.kw_defaults), _argument(node.kwarg), _to_ast(node.defaults)),
}


class _ConvertersByClass(dict):
    """gast node class -> the function that converts its nodes: found on the first look-up of
    each class."""

    def __missing__(self, kind):
        converter = self[kind] = _SPECIAL.get(kind.__name__) or _plain(kind)
        return converter


_CONVERTERS = _ConvertersByClass()

# Later Pythons' nodes have type parameters, which gast converts too: its own converter there.
_OWN_CONVERTER = sys.version_info < (3, 12)
