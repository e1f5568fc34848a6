"""Pytrees, as jax.tree_util: nested tuples, lists, dicts, namedtuples, None and the types you
register, taken apart into leaves and built again.

    import autotrace.tree_util as tu
    leaves, structure = tu.tree_flatten({"w": w, "b": (b, None)})
    tu.tree_map(lambda p, g: p - 0.1 * g, params, grads)

A registered type is a node everywhere autotrace walks arguments and results: an argument of
`autotrace.function` is keyed by its structure and traced through its leaves, and its
gradient is an instance of the type. The registry lives in autotrace.runtime.pytrees.
"""
from autotrace.runtime.pytrees import (PyTreeDef, register_dataclass, register_pytree_node,
                                       tree_flatten, tree_leaves, tree_map, tree_structure,
                                       tree_unflatten)

__all__ = ["PyTreeDef", "register_dataclass", "register_pytree_node", "tree_flatten",
           "tree_leaves", "tree_map", "tree_structure", "tree_unflatten"]
__dir__ = __all__.copy  # what dir(module) lists (sorted): the public names, not imports
