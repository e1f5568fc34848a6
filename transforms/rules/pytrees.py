"""Rules of autotrace.tree_util's functions (runtime/pytrees.py), both modes: a tree's leaves
carry its gradient, and its structure none.

tree_flatten, tree_leaves and PyTreeDef.flatten_up_to take a tree's gradient apart into its
leaves' (leaf_gradients), tree_unflatten and PyTreeDef.unflatten build a tree's from its
leaves' (tree_gradient); the two are linear and each other's transpose, so derivatives of
derivatives take the same pair. tree_map is derived from its source, which calls these.
"""
from __future__ import annotations

from ...runtime.derivatives.tree_gradients import (PyTreeDef, leaf_gradients, tree_flatten,
                                                   tree_gradient, tree_leaves, tree_structure,
                                                   tree_unflatten)
from .core import adjoint, constant, d, tangent
from .declarations import linear

constant(tree_structure)


@linear(leaf_gradients)
def _leaf_gradients(y, gradient, tree, structure):
    d[gradient] = tree_gradient(d[y], tree, structure)


@linear(tree_gradient)
def _tree_gradient(y, gradients, tree, structure):
    d[gradients] = leaf_gradients(d[y], tree, structure)


@adjoint(tree_flatten)
def _tree_flatten(y, tree, is_leaf=None):
    d[tree] = tree_gradient(d[y][0], tree, y[1])


@tangent(tree_flatten)
def _tree_flatten_tangent(y, tree, is_leaf=None):
    d[y] = (leaf_gradients(d[tree], tree, y[1]), None)


@adjoint(tree_leaves)
def _tree_leaves(y, tree, is_leaf=None):
    d[tree] = tree_gradient(d[y], tree, tree_structure(tree, is_leaf))


@tangent(tree_leaves)
def _tree_leaves_tangent(y, tree, is_leaf=None):
    d[y] = leaf_gradients(d[tree], tree, tree_structure(tree, is_leaf))


@adjoint(tree_unflatten, PyTreeDef.unflatten)
def _tree_unflatten(y, structure, leaves):
    d[leaves] = leaf_gradients(d[y], y, structure)


@tangent(tree_unflatten, PyTreeDef.unflatten)
def _tree_unflatten_tangent(y, structure, leaves):
    d[y] = tree_gradient(d[leaves], y, structure)


@adjoint(PyTreeDef.flatten_up_to)
def _flatten_up_to(y, structure, tree):
    d[tree] = tree_gradient(d[y], tree, structure)


@tangent(PyTreeDef.flatten_up_to)
def _flatten_up_to_tangent(y, structure, tree):
    d[y] = leaf_gradients(d[tree], tree, structure)
