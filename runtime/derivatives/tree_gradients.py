"""The gradient of a pytree and the gradients of its leaves, each made from the other: what the
rules of autotrace.tree_util's functions move (transforms/rules/pytrees.py).

A tree's gradient has the form generated code gives every value's (structure.py): the same
tuples, lists, dicts and namedtuples, and for an instance of a registered type an
ObjectGradient, under the attributes that hold its children; None where no gradient reached.
Its leaves' gradients are a list, in the order tree_flatten gives the leaves, zeros where none
reached. The two functions are linear and each other's transpose.

The functions whose rules read these are named here too, for those rules to name them.
"""
from __future__ import annotations

from ..containers import (field_names, is_dataclass_instance, map_fields,  # noqa: F401 (for
                          new_dataclass, rebuild, zeros_like)  # transforms: custom_gradients)
from ..held_state import holds_state
from ..pytrees import (PyTreeDef, dict_keys, node_of, registered, tree_flatten,  # noqa: F401 (the
                       tree_leaves, tree_structure, tree_unflatten)  # functions of the rules)
from .objects import ObjectGradient
from .structure import NO_GRADIENT, by_attribute, holder_of


def leaf_gradients(gradient, tree, structure) -> list:
    """The gradients of the leaves of `tree` (of `structure` down to its leaves, which may be
    subtrees: PyTreeDef.flatten_up_to), given `gradient`, tree's."""
    found: list = []
    _gather(gradient, tree, structure, found)
    return found


def _gather(gradient, tree, structure, found: list) -> None:
    if gradient is NO_GRADIENT:
        gradient = None
    if structure.kind is None:
        found.append(zeros_like(tree) if gradient is None else gradient)
        return
    children = node_of(tree)[0]
    keys = dict_keys(structure) if isinstance(tree, dict) else None
    for index, (child, below) in enumerate(zip(children, structure.children)):
        _gather(_child_gradient(gradient, tree, index, child, keys), child, below, found)


def _child_gradient(gradient, tree, index: int, child, keys):
    """The gradient of child number `index` of the node `tree` (in node_of's order), within
    tree's `gradient`; keys: a dict node's, in that order."""
    if gradient is None:
        return None
    if isinstance(gradient, ObjectGradient):  # a registered type's, by attribute
        return gradient.get(holder_of(tree, index, child))
    if registered(type(tree)) is not None and type(gradient) is type(tree):
        return node_of(gradient)[0][index]  # (one given as an instance of its type)
    if keys is not None:
        return gradient.get(keys[index])
    return gradient[index]


def tree_gradient(gradients, tree, structure):
    """The gradient of `tree` (of `structure` down to its leaves) whose leaves have
    `gradients`, in order: leaf_gradients's transpose."""
    gradients = list(gradients)
    if len(gradients) != structure.num_leaves:
        raise ValueError(f"internal: {len(gradients)} gradients for the "
                         f"{structure.num_leaves} leaves of {structure}")
    return _built(iter(gradients), tree, structure)


def _built(gradients, tree, structure):
    if structure.kind is None:
        gradient = next(gradients)
        return zeros_like(tree) if gradient is None or gradient is NO_GRADIENT else gradient
    children = node_of(tree)[0]
    built = [_built(gradients, child, below)
             for child, below in zip(children, structure.children)]
    if registered(type(tree)) is not None:
        if is_dataclass_instance(tree) and not holds_state(tree):
            # a dataclass of gradients, as zeros_like makes one (register_dataclass's)
            zero = zeros_like(tree)
            fields = {name: getattr(zero, name) for name in field_names(type(tree))}
            fields.update((holder_of(tree, index, child), gradient)
                          for index, (child, gradient) in enumerate(zip(children, built)))
            return new_dataclass(type(tree), fields)
        return by_attribute(tree, built)
    if tree is None:
        return None
    if isinstance(tree, dict):
        by_key = dict(zip(dict_keys(structure), built))
        return rebuild(tree, ((key, by_key[key]) for key in tree))
    return rebuild(tree, built)
