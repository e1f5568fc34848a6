"""Pytrees: what is a node of a tree of values and what is a leaf, stated once.

A node is a tuple, a list, a dict (its children in sorted key order), a namedtuple, None (a
node with no children), or an instance of a type registered here (`register_pytree_node`,
`register_dataclass`); anything else is a leaf. `node_of(value)` says which, and how to build
the node again from other children; autotrace.tree_util's functions are built on it, and so
are the walks over arguments and results that tracing does (runtime/tracing/trees.py,
runtime/tracing/signature.py), which take a registered type apart the same way.

    flat, structure = tree_flatten({"b": 2.0, "a": (1.0, None)})
    flat                     # [1.0, 2.0]
    structure                # PyTreeDef({'a': (*, None), 'b': *})
    structure.unflatten([3.0, 4.0])   # {'a': (3.0, None), 'b': 4.0}

The registry is filled by the user's registrations, at import of their modules.
"""
from __future__ import annotations

import collections
import dataclasses
from typing import Callable

from .containers import is_namedtuple


@dataclasses.dataclass(frozen=True)
class NodeType:
    """How a registered type is taken apart and built again: `flatten(value)` gives
    (children, aux_data), `unflatten(aux_data, children)` the value again."""

    cls: type
    flatten: Callable
    unflatten: Callable


# Registered type -> its NodeType. Filled by register_pytree_node as the user's modules load.
_REGISTERED: dict = {}


def register_pytree_node(cls: type, flatten: Callable, unflatten: Callable) -> None:
    """Make instances of `cls` nodes of pytrees, as jax.tree_util.register_pytree_node does.

    Arguments:
        cls: the type (not a tuple, list, dict, namedtuple or None, which are nodes already).
        flatten: `flatten(value) -> (children, aux_data)`: the children (an iterable of
            subtrees) and hashable data that says the rest (compared to tell structures
            apart, and part of the cache key of a traced function taking one).
        unflatten: `unflatten(aux_data, children) -> value`.

    Examples:
        >>> class Pair:
        ...     def __init__(self, a, b):
        ...         self.a, self.b = a, b
        >>> register_pytree_node(Pair, lambda p: ((p.a, p.b), None),
        ...                      lambda aux, children: Pair(*children))
        >>> autotrace.tree_util.tree_leaves(Pair(1.0, np.ones(2)))
        [1.0, array([1., 1.])]
        >>> autotrace.grad(lambda p: p.a * np.sum(p.b))(Pair(2.0, np.ones(2))).b
        array([2., 2.])
    """
    if not isinstance(cls, type):
        raise TypeError(f"register_pytree_node takes a type, not {cls!r}")
    if cls in _BUILT_IN or is_namedtuple_type(cls):
        raise ValueError(f"{cls.__name__} is a pytree node already; it cannot be registered")
    if cls in _REGISTERED:
        raise ValueError(f"{cls.__qualname__} is registered as a pytree node already")
    if not callable(flatten) or not callable(unflatten):
        raise TypeError(f"register_pytree_node({cls.__name__}, flatten, unflatten): flatten "
                        "and unflatten must be functions")
    _REGISTERED[cls] = NodeType(cls, flatten, unflatten)


def register_dataclass(cls: type = None, data_fields=None, meta_fields=None):
    """Register the dataclass `cls` as a pytree node, as jax.tree_util.register_dataclass:
    its `data_fields` are its children, its `meta_fields` (hashable) are its aux data. Without
    them, the fields whose metadata has `static=True` are meta fields and the others data.
    Usable as a decorator; returns `cls`.

    Examples:
        >>> @register_dataclass
        ... @dataclasses.dataclass
        ... class Params:
        ...     w: np.ndarray
        ...     activation: str = dataclasses.field(default="tanh", metadata={"static": True})
    """
    if cls is None:  # @register_dataclass(data_fields=..., meta_fields=...)
        return lambda cls: register_dataclass(cls, data_fields, meta_fields)
    if not dataclasses.is_dataclass(cls) or not isinstance(cls, type):
        raise TypeError(f"register_dataclass takes a dataclass, not {cls!r}")
    fields = [field for field in dataclasses.fields(cls) if field.init]
    if data_fields is None and meta_fields is None:
        meta_fields = [f.name for f in fields if f.metadata.get("static", False)]
        data_fields = [f.name for f in fields if not f.metadata.get("static", False)]
    elif data_fields is None or meta_fields is None:
        raise TypeError(f"register_dataclass({cls.__name__}): give both data_fields and "
                        "meta_fields, or neither (then static=True metadata marks meta fields)")
    data_fields, meta_fields = tuple(data_fields), tuple(meta_fields)
    missing = {f.name for f in fields} - set(data_fields) - set(meta_fields)
    if missing:
        raise ValueError(f"register_dataclass({cls.__name__}): the fields {sorted(missing)} are "
                         "in neither data_fields nor meta_fields")

    def flatten(value):
        return ([getattr(value, name) for name in data_fields],
                tuple(getattr(value, name) for name in meta_fields))

    def unflatten(meta, children):
        return cls(**dict(zip(data_fields, children)), **dict(zip(meta_fields, meta)))
    register_pytree_node(cls, flatten, unflatten)
    return cls


def is_namedtuple_type(cls: type) -> bool:
    return issubclass(cls, tuple) and hasattr(cls, "_fields")


def registered(cls: type) -> NodeType | None:
    """The NodeType of a registered type, or None."""
    return _REGISTERED.get(cls)


def any_registered() -> bool:
    """Whether any type is registered (walks that only look for them can stop at once)."""
    return bool(_REGISTERED)


def sorted_keys(mapping: dict) -> list:
    """A dict's keys in the one order pytrees, signatures and traces all use."""
    try:
        return sorted(mapping)
    except TypeError:
        return sorted(mapping, key=repr)


_BUILT_IN = (tuple, list, dict, type(None))


def node_of(value):
    """(children, aux_data, rebuild) where `value` is a pytree node, `rebuild(children)` making
    one like it from other children; None for a leaf."""
    kind = type(value)
    node_type = _REGISTERED.get(kind)
    if node_type is not None:
        children, aux = node_type.flatten(value)
        return list(children), aux, lambda children: node_type.unflatten(aux, children)
    if kind is tuple or kind is list:
        return list(value), None, kind
    if kind is collections.defaultdict:  # its default factory is aux data too
        keys = sorted_keys(value)
        factory = value.default_factory
        return ([value[key] for key in keys], (factory, tuple(keys)),
                lambda children: kind(factory, zip(keys, children)))
    if kind is dict or isinstance(value, dict):
        keys = sorted_keys(value)
        return ([value[key] for key in keys], tuple(keys),
                lambda children: kind(zip(keys, children)))
    if value is None:
        return [], None, lambda children: None
    if is_namedtuple(value):
        return list(value), None, lambda children: kind(*children)
    if isinstance(value, (tuple, list)):  # a subclass of its own
        return list(value), None, lambda children: kind(children)
    return None


class PyTreeDef:
    """The structure of a pytree: its nodes, with a hole (`*`) for each leaf.

    num_leaves: how many leaves it holds; num_nodes: its nodes and leaves together.
    Two are equal where their nodes are of one type with equal aux data, in the same places.

    Examples:
        >>> leaves, structure = autotrace.tree_util.tree_flatten({"w": np.ones(2), "n": (3, None)})
        >>> structure
        PyTreeDef({'n': (*, None), 'w': *})
        >>> structure.num_leaves, structure.num_nodes
        (2, 5)
    """

    __slots__ = ("kind", "aux", "children", "num_leaves", "num_nodes", "_rebuild")

    def __init__(self, kind, aux, children: tuple, rebuild):
        self.kind, self.aux, self.children, self._rebuild = kind, aux, children, rebuild
        self.num_leaves = 1 if kind is None else sum(c.num_leaves for c in children)
        self.num_nodes = 1 + sum(c.num_nodes for c in children)

    def unflatten(self, leaves):
        """The tree of this structure holding `leaves`, in order."""
        leaves = list(leaves)
        if len(leaves) != self.num_leaves:
            raise ValueError(f"{self} has {self.num_leaves} leaves; "
                             f"{len(leaves)} were given to build it")
        return self._build(iter(leaves))

    def _build(self, leaves):
        if self.kind is None:
            return next(leaves)
        return self._rebuild([child._build(leaves) for child in self.children])

    def flatten_up_to(self, tree) -> list:
        """The subtrees of `tree` where this structure has its leaves (`tree` has this
        structure down to them); a ValueError where it has not."""
        found: list = []
        self._up_to(tree, found, "")
        return found

    def _up_to(self, tree, found: list, path: str) -> None:
        if self.kind is None:
            found.append(tree)
            return
        node = node_of(tree)
        if node is None or type(tree) is not self.kind or len(node[0]) != len(self.children) \
                or node[1] != self.aux:
            raise ValueError(f"the tree{' at ' + path if path else ''} does not have the "
                             f"structure {self}: it is {_describe(tree)}")
        for index, (child, subtree) in enumerate(zip(self.children, node[0])):
            child._up_to(subtree, found, f"{path}[{_child_label(self, index)}]")

    def __eq__(self, other) -> bool:
        return isinstance(other, PyTreeDef) and self.kind is other.kind and \
            self.aux == other.aux and self.children == other.children

    def __hash__(self) -> int:
        return hash((self.kind, _hashable(self.aux), self.children))

    def __repr__(self) -> str:
        return f"PyTreeDef({self._text()})"

    def _text(self) -> str:
        kind, children = self.kind, [child._text() for child in self.children]
        if kind is None:
            return "*"
        if kind is type(None):
            return "None"
        if kind is tuple:
            return f"({children[0]},)" if len(children) == 1 else f"({', '.join(children)})"
        if kind is list:
            return f"[{', '.join(children)}]"
        if issubclass(kind, dict) and kind not in _REGISTERED:
            items = ", ".join(f"{key!r}: {text}" for key, text in zip(dict_keys(self), children))
            return "{" + items + "}" if kind is dict else f"{kind.__name__}({{{items}}})"
        if is_namedtuple_type(kind) and kind not in _REGISTERED:
            fields = ", ".join(f"{name}={text}" for name, text in zip(kind._fields, children))
            return f"{kind.__name__}({fields})"
        if kind in _REGISTERED:
            return f"CustomNode({kind.__name__}[{self.aux!r}], [{', '.join(children)}])"
        return f"{kind.__name__}([{', '.join(children)}])"


def dict_keys(structure: PyTreeDef) -> tuple:
    """The keys of a dict node, in the order of its children."""
    return structure.aux[1] if structure.kind is collections.defaultdict else structure.aux


def _hashable(aux):
    try:
        hash(aux)
    except TypeError:
        return repr(aux)
    return aux


def _child_label(structure: PyTreeDef, index: int) -> str:
    if issubclass(structure.kind, dict) and structure.kind not in _REGISTERED:
        return repr(dict_keys(structure)[index])
    return str(index)


def _describe(tree) -> str:
    node = node_of(tree)
    if node is None:
        return f"a leaf ({type(tree).__name__})"
    return f"a {type(tree).__name__} of {len(node[0])} children"


def tree_flatten(tree, is_leaf: Callable | None = None) -> tuple[list, PyTreeDef]:
    """(the leaves of `tree` in order, its structure). is_leaf(subtree) True stops there:
    that subtree is a leaf.

    Examples:
        >>> leaves, structure = tree_flatten({"w": np.ones(2), "n": (3, None)})
        >>> leaves                                  # None is a node with no leaves
        [3, array([1., 1.])]
        >>> structure
        PyTreeDef({'n': (*, None), 'w': *})
    """
    leaves: list = []
    return leaves, _flatten(tree, leaves, is_leaf)


def _flatten(tree, leaves: list, is_leaf) -> PyTreeDef:
    node = None if is_leaf is not None and is_leaf(tree) else node_of(tree)
    if node is None:
        leaves.append(tree)
        return _LEAF
    children, aux, rebuild = node
    return PyTreeDef(type(tree), aux,
                     tuple(_flatten(child, leaves, is_leaf) for child in children), rebuild)


_LEAF = PyTreeDef(None, None, (), None)


def tree_unflatten(structure: PyTreeDef, leaves) -> object:
    """The tree of `structure` holding `leaves` (as structure.unflatten).

    Examples:
        >>> leaves, structure = autotrace.tree_util.tree_flatten({"a": 1, "b": (2, 3)})
        >>> tree_unflatten(structure, [10, 20, 30])
        {'a': 10, 'b': (20, 30)}
    """
    if not isinstance(structure, PyTreeDef):
        raise TypeError(f"tree_unflatten takes a PyTreeDef (from tree_flatten or "
                        f"tree_structure) first, not {type(structure).__name__}")
    return structure.unflatten(leaves)


def tree_leaves(tree, is_leaf: Callable | None = None) -> list:
    """The leaves of `tree`, in order (None holds none).

    Examples:
        >>> tree_leaves([1, (2, {"a": 3}), None])
        [1, 2, 3]
    """
    return tree_flatten(tree, is_leaf)[0]


def tree_structure(tree, is_leaf: Callable | None = None) -> PyTreeDef:
    """The structure of `tree`.

    Examples:
        >>> tree_structure([1, (2, {"a": 3})])
        PyTreeDef([*, (*, {'a': *})])
    """
    return tree_flatten(tree, is_leaf)[1]


def tree_map(f: Callable, tree, *rest, is_leaf: Callable | None = None):
    """A tree of `tree`'s structure whose leaves are `f(leaf, *leaves of rest there)`; each of
    `rest` has tree's structure (or more below its leaves, which f is given whole).

    Examples:
        >>> tree_map(lambda x, y: x + y, {"a": 1, "b": (2, 3)}, {"a": 10, "b": (20, 30)})
        {'a': 11, 'b': (22, 33)}
    """
    # (derivatives of it are derived from this source: transforms/rules/pytrees.py has the
    # rules of what it calls)
    leaves, structure = tree_flatten(tree, is_leaf)
    others = [structure.flatten_up_to(other) for other in rest]
    mapped = [f(leaf, *[other[index] for other in others]) for index, leaf in enumerate(leaves)]
    return tree_unflatten(structure, mapped)
