"""The names whose values an expression reads, of those that may carry gradient.

Not those it reads only a description of (`x.shape`, `len(x)`, `np.zeros_like(x)`), nor
those it turns into a Python number or text (`float(loss)`, `v.item()`, `str(v)`), which carry
no gradient, nor those in the branch of `a if False else b` that never runs.
transforms/analysis/unvaried_writes.py reads with it which names hold values made from the
arguments, and transforms/analysis/outside_writes.py which writes outside the function store
values that carry gradient.
"""
from __future__ import annotations

import gast
import numpy as np

from .activity import DESCRIPTIVE_ATTRIBUTES
from ..codegen.nodes import walk
from ..front.parsing import MISSING, resolve

# Functions whose result holds no value of their arguments (a shape, an array of constants).
SHAPE_ONLY = (len, np.zeros, np.ones, np.empty, np.zeros_like, np.ones_like, np.empty_like,
              np.eye, np.identity)
# Builtins and methods that make a Python number or text of what they are given.
_PLAIN_CALLS = ("float", "int", "bool", "str", "len", "repr", "round", "format")
_PLAIN_METHODS = ("item", "tolist")


def value_reads(node, namespace: dict | None = None) -> set:
    """The names `node` reads a value of that may carry gradient (see the module docstring);
    namespace: the function's, to know the functions of SHAPE_ONLY by any name."""
    skipped = set()
    for inner in walk(node):
        if isinstance(inner, gast.Attribute) and inner.attr in DESCRIPTIVE_ATTRIBUTES:
            skipped.add(id(inner.value))
        elif isinstance(inner, gast.IfExp) and isinstance(inner.test, gast.Constant):
            skipped.add(id(inner.orelse if inner.test.value else inner.body))
        elif isinstance(inner, gast.Call) and (
                isinstance(inner.func, gast.Name) and inner.func.id in _PLAIN_CALLS or
                isinstance(inner.func, gast.Attribute) and inner.func.attr in _PLAIN_METHODS):
            skipped.add(id(inner))
        elif isinstance(inner, gast.Call) and namespace is not None and \
                _shape_only(inner.func, namespace):
            skipped.update(id(a) for a in inner.args)
    names, stack = set(), [node]
    while stack:
        inner = stack.pop()
        if id(inner) in skipped:
            continue
        if isinstance(inner, gast.Name) and isinstance(inner.ctx, gast.Load):
            names.add(inner.id)
        stack.extend(gast.iter_child_nodes(inner))
    return names


def _shape_only(func, namespace: dict) -> bool:
    value = resolve(func, namespace)
    return value is not MISSING and any(value is known for known in SHAPE_ONLY)
