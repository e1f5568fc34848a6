"""Every tangent rule against central differences and against its adjoint rule.

For each entry of tests/rule_table.py (plus the structure helpers and builtins below), with a
random direction v for each differentiable input x taken alone:
    jvp(v)  ~=  (f(x + eps v) - f(x - eps v)) / (2 eps)      elementwise, in float64,
and the tangent has the structure and shapes of f's result. Then, with every input moved at once
and a random cotangent u of the result:
    <jvp(v), u>  ==  <v, vjp(u)>                              to rounding,
which pins each tangent rule to its adjoint rule: a sign or a transpose cannot hide there.
"""
from __future__ import annotations

import builtins
import itertools
import zlib
from collections import namedtuple

import gast
import numpy as np
import pytest

import autotrace.transforms.rules  # noqa: F401  (fills the registries)
from autotrace.runtime.derivatives import (built_objects, items, objects, sequences,
                                           snapshots, state_log, state_writes, structure, sweeps)
from autotrace.runtime.derivatives import (called_objects, matrix_chains, tangent_ops,
                                           tree_gradients)
from autotrace.runtime.derivatives import general_eigen
from autotrace.runtime.primitives import adjugates
from autotrace.runtime.derivatives.adjoint_products import einsum_adjoint_cross
from autotrace.runtime.derivatives.structure import zeros_like
from autotrace.runtime.primitives.index import add_at
from autotrace.runtime.primitives.out_writes import checked_out, checked_out_item
from autotrace.runtime.primitives.recompute_barrier import recompute_from
from tests.rule_table import TABLE, Entry, away_from_zero, normal
from tests.test_rules import parameter_of
from autotrace.transforms.analysis.calls import BINARY_OPERATORS, UNARY_OPERATORS
from autotrace.transforms.codegen.codegen import load_function, to_source
from autotrace.transforms.rules.core import (adjoint_rules, constant_functions, instantiate_tangent,
                                             tangent_rules)
from autotrace.transforms.rule_evaluation import rule_jvp, rule_vjp
from autotrace.transforms.codegen.templates import name

EPS = 1e-6
FINITE_DIFFERENCE_TOLERANCE = 1e-7  # relative to the size of the derivative
ADJOINT_TOLERANCE = 1e-10  # relative to the size of the products' terms

# Functions with an adjoint rule but no tangent rule, each with the reason.
_KEYS_A_BINARY_OPERATOR = ("keys reverse mode's rule for `+` or `*` on operands that may be "
                           "lists; never called, and forward mode differentiates the operator")
NO_TANGENT_RULE: dict = {
    sequences.concatenate: _KEYS_A_BINARY_OPERATOR,
    sequences.add_or_concatenate: _KEYS_A_BINARY_OPERATOR,
    sequences.repeat: _KEYS_A_BINARY_OPERATOR,
    sequences.multiply_or_repeat: _KEYS_A_BINARY_OPERATOR,
}
# Functions tangent or adjoint bodies call that have no rules: only third derivatives of einsum
# and of matrix chains, fourth derivatives of det, and second derivatives through
# np.linalg.eig (refused, naming eigvals) reach them.
NOT_CLOSED = {einsum_adjoint_cross, tangent_ops.einsum_jvp_cross,
              matrix_chains.multi_dot_adjoint_cross, matrix_chains.multi_dot_jvp_cross,
              matrix_chains.matrix_power_adjoint_cross, matrix_chains.matrix_power_jvp_cross,
              adjugates.cofactors_jvp_cross, general_eigen.eig_adjoint,
              general_eigen.eig_vectors_tangent}

# --- Structure helpers and builtins (the rule table holds the NumPy functions) -----------------

E = Entry
Point = namedtuple("Point", "x y")


def _n(*shape):
    return lambda rng: rng.standard_normal(shape)


def _TREE(rng):
    return {"b": rng.standard_normal(2), "a": (_float(rng), None, rng.standard_normal(3))}


_STRUCTURE = tree_gradients.tree_structure({"b": 0, "a": (0, None, 0)})
_TOP = tree_gradients.tree_structure({"b": 0, "a": 0})


def _with(*makers):
    return lambda rng: tuple(m(rng) if callable(m) else m for m in makers)


def _float(rng):
    return float(rng.standard_normal())


_PAIR = namedtuple("_PAIR", "first second")


class _Holder:
    """An object a differentiated function builds (runtime/derivatives/built_objects.py)."""


def _holding(**attributes):
    holder = _Holder()
    holder.__dict__.update(attributes)
    return holder


class _Scaler:
    """An object whose method a call `owner.scale(x)` runs (derivatives/called_objects.py)."""

    def scale(self, x):
        return x


def _layer_gradient(rng):
    """The gradient of an object holding a layer, as the calls of its layer take it."""
    return objects.ObjectGradient(layer=objects.ObjectGradient(w=rng.standard_normal(3)))


_MODEL = _holding(layer=_holding(w=np.ones(3)))


def _fields(rng):
    return {"w": rng.standard_normal(3), "b": _float(rng)}


def _attributes(result, y):
    """An object's attributes, which its tangent (an ObjectGradient) holds."""
    return dict(vars(result))

STRUCTURE_TABLE = [
    E("callee_tangent/method", called_objects.callee_tangent, _with(_n(3), "scale", _Scaler()),
      wrt=(0,)),
    E("callee_tangent/held", called_objects.callee_tangent,
      _with(_layer_gradient, "layer", _MODEL), wrt=(0,)),
    E("callee_gradient/held", called_objects.callee_gradient,
      _with(_layer_gradient, "layer", _MODEL), wrt=(0,)),
    E("with_callee_gradient/method", called_objects.with_callee_gradient,
      _with(_n(3), "scale", _Scaler(), _n(3)), wrt=(3,)),
    E("seed", structure.seed, normal((3,), (3,))),
    E("seed/default", structure.seed, _with(_n(3), None)),
    E("tangent_seed", tangent_ops.tangent_seed, normal((3,), (3,))),
    E("tangent_like", tangent_ops.tangent_like, normal((1, 3), (2, 3)), wrt=(0,)),
    E("tangent_like/same-shape", tangent_ops.tangent_like, normal((2, 3), (2, 3)), wrt=(0,)),
    E("read_as_array/list", tangent_ops.read_as_array,
      _with(lambda rng: [_float(rng), _float(rng), _float(rng)])),
    E("read_as_array/tuple-of-rows", tangent_ops.read_as_array,
      _with(lambda rng: (rng.standard_normal(2), rng.standard_normal(2)))),
    E("read_as_array/array", tangent_ops.read_as_array, normal((2, 3))),
    E("match", structure.match, lambda rng: (np.float64(rng.standard_normal()), 1.5), wrt=(0,)),
    E("match_for_caller", structure.match_for_caller,
      lambda rng: (np.float64(rng.standard_normal()), 1.5), wrt=(0,)),
    E("unmatch", structure.unmatch,
      _with(lambda rng: [_float(rng), _float(rng)], np.zeros(2)), wrt=(0,)),
    E("unmatch/rows", structure.unmatch,
      _with(lambda rng: [rng.standard_normal(3), rng.standard_normal(3)], np.zeros((2, 3))),
      wrt=(0,)),
    E("recompute_from", recompute_from, normal((3,), (3,)), wrt=(0,)),
    E("fresh_tangent", structure.fresh_tangent, _with(_n(3)), wrt=(0,)),
    E("fresh_gradients", structure.fresh_gradients,
      _with(lambda rng: (rng.standard_normal(3), rng.standard_normal(2))), wrt=(0,)),
    E("checked_out", checked_out, _with(_n(3), np.zeros(3), "multiply"), wrt=(0,)),
    E("checked_out_item", checked_out_item,
      _with(_n(3), np.zeros((2, 3)), 1, "multiply", "model.py", 7), wrt=(0,)),
    E("build_object", built_objects.build_object, _with(lambda rng: _Holder, _fields), wrt=(1,),
      align=_attributes, note="an object's attributes against finite differences"),
    E("field_gradients", built_objects.field_gradients,
      _with(lambda rng: objects.ObjectGradient(w=rng.standard_normal(3)), _fields,
            lambda rng: _Holder),
      wrt=(0,)),
    E("object_gradient", built_objects.object_gradient, _with(lambda rng: _Holder, _fields),
      wrt=(1,)),
    E("write_state", state_writes.write_state,
      _with(lambda rng: _holding(w=np.zeros(3)), ".", ("w",), _n(3)), wrt=(3,),
      align=_attributes, note="an object's attributes against finite differences"),
    E("state_gradient", state_writes.state_gradient,
      _with(lambda rng: objects.ObjectGradient(w=rng.standard_normal(3)),
            _holding(w=np.ones(3)), ".", ("w",), np.ones(3)), wrt=(0,)),
    E("without_state", state_writes.without_state,
      _with(lambda rng: objects.ObjectGradient(w=rng.standard_normal(3),
                                               b=rng.standard_normal(2)),
            _holding(w=np.ones(3), b=np.ones(2)), ("w",)), wrt=(0,)),
    E("unwritten_state", state_writes.unwritten_state,
      _with(lambda rng: objects.ObjectGradient(w=rng.standard_normal(3),
                                               b=rng.standard_normal(2)), ("w",)), wrt=(0,)),
    E("sent_object_gradient", sweeps.sent_object_gradient,
      _with(lambda rng: objects.ObjectGradient(w=rng.standard_normal(3)), _holding(w=np.ones(3))),
      wrt=(0,)),
    E("sent_object_gradient/array", sweeps.sent_object_gradient,
      _with(_n(3), np.ones(3)), wrt=(0,)),
    E("add_recomputed", state_log.add_recomputed,
      _with(lambda rng: objects.ObjectGradient(w=rng.standard_normal(3)),
            lambda rng: objects.ObjectGradient(w=rng.standard_normal(3),
                                               b=rng.standard_normal(2))), wrt=(0, 1)),
    E("restored_state", state_writes.restored_state,
      _with(lambda rng: objects.ObjectGradient(b=rng.standard_normal(2)),
            _holding(w=np.ones(3), b=np.ones(2)), ".", ("w",)), wrt=(0,)),
    E("placed_state", state_writes.placed_state,
      _with(_n(3), _holding(w=np.ones(3)), ".", ("w",), np.ones(3)), wrt=(0,)),
    E("state_tangent", state_writes.state_tangent,
      _with(lambda rng: objects.ObjectGradient(b=rng.standard_normal(2)),
            _holding(w=np.ones(3), b=np.ones(2)), ".", ("w",), _n(3)), wrt=(0, 4)),
    E("object_tangent", state_writes.object_tangent,
      _with(lambda rng: objects.ObjectGradient(w=rng.standard_normal(3)),
            _holding(w=np.ones(3))), wrt=(0,)),
    E("attribute_tangent", items.attribute_tangent,
      _with(lambda rng: objects.ObjectGradient(w=rng.standard_normal(3)), "w",
            _holding(w=np.ones(3))), wrt=(0,)),
    E("attribute_tangent/method", items.attribute_tangent,
      _with(lambda rng: objects.ObjectGradient(w=rng.standard_normal(3)), "__dir__",
            _holding(w=np.ones(3))), wrt=(0,),
      note="the tangent of a method of an object is the object's"),
    E("builtin:super", super, _with(lambda rng: dict, _fields), wrt=(1,),
      align=lambda result, y: result.__self__,
      note="super(C, obj) stands for obj when its methods are called"),
    E("add", structure.add, lambda rng: ([rng.standard_normal(2), None],
                                         [rng.standard_normal(2), _float(rng)])),
    E("build_namedtuple", items.build_namedtuple,
      lambda rng: (_PAIR, (rng.standard_normal(3), rng.standard_normal(2))), wrt=(1,)),
    E("namedtuple_fields", items.namedtuple_fields,
      lambda rng: (_PAIR(rng.standard_normal(3), rng.standard_normal(2)),)),
    E("accumulate", structure.accumulate, normal((2, 3), (2, 3))),
    E("accumulate/broadcast", structure.accumulate, normal((2, 3), (3,))),
    E("accumulate_item", items.accumulate_item, _with(_n(3, 4), 1, _n(4))),
    E("add_at", add_at, _with(_n(5), np.array([0, 3, 3]), _n(3))),
    E("add_at/rows", add_at, _with(_n(3, 2), (slice(None, 2),), _n(2, 2))),
    E("accumulate_item/new-key", items.accumulate_item,
      _with(lambda rng: {"a": rng.standard_normal(2)}, "b", _n(2))),
    E("gradient_item", items.gradient_item,
      _with(lambda rng: [rng.standard_normal(2), rng.standard_normal(3)], 1, _n(3)), wrt=(0,)),
    E("gradient_item/missing-key", items.gradient_item,
      _with(lambda rng: {"a": rng.standard_normal(2)}, "b", _n(3)), wrt=(0,)),
    E("accumulate_attribute", items.accumulate_attribute,
      _with(lambda rng: Point(rng.standard_normal(2), 1.5), "x", _n(2))),
    E("attribute_gradient", items.attribute_gradient,
      _with(lambda rng: Point(rng.standard_normal(2), 1.5), "x", _n(2)), wrt=(2,)),
    E("getattr", getattr, _with(lambda rng: Point(rng.standard_normal(2), _float(rng)), "x")),
    E("read_attribute", items.read_attribute,
      _with(lambda rng: Point(rng.standard_normal(2), _float(rng)), "y")),
    E("item_gradient", items.item_gradient, _with(_n(3, 4), 1, _n(4)), wrt=(0,)),
    E("item_gradient/to-float", items.item_gradient, _with(_n(3, 4), 1, 1.5), wrt=(0,)),
    E("kept_by_write", items.kept_by_write, _with(_n(3), np.zeros(4)), wrt=(0,)),
    E("kept_by_write/integers", items.kept_by_write, _with(_n(3), np.zeros(4, dtype=int)),
      wrt=(0,)),
    E("kept_by_write/list", items.kept_by_write, _with(_n(3), [0, 1]), wrt=(0,)),
    E("place_item", items.place_item, _with(_n(3, 4), 1, _n(4)), wrt=(2,)),
    E("clear_item", items.clear_item,
      _with(lambda rng: [rng.standard_normal(2), rng.standard_normal(3)], 0)),
    E("clear_item/like", items.clear_item,
      _with(lambda rng: [[rng.standard_normal(2)], rng.standard_normal(3)], 0,
            [[1.0, 2.0], np.zeros(3)]), wrt=(0,)),
    E("read_item", items.read_item, _with(_n(3, 4), 2)),
    E("read_item/dict", items.read_item,
      _with(lambda rng: {"a": rng.standard_normal(2), "b": _float(rng)}, "b")),
    E("sequence", items.sequence,
      _with(lambda rng: (rng.standard_normal(2), rng.standard_normal(3)))),
    E("sequence/array", items.sequence, normal((3, 2))),
    E("sequence/dict", items.sequence, _with(lambda rng: {"a": rng.standard_normal(2)}),
      note="iterating over a dict gives its keys: no tangent"),
    E("sequence_gradient", items.sequence_gradient,
      _with(lambda rng: [rng.standard_normal(2), rng.standard_normal(3)],
            lambda rng: (1.0, rng.standard_normal(3))), wrt=(0,)),
    E("like_container", structure.like_container,
      _with(lambda rng: [rng.standard_normal(2), rng.standard_normal(2)], _n(2, 2)), wrt=(0,)),
    E("dict_values", items.dict_values,
      _with(lambda rng: {"a": rng.standard_normal(2), "b": _float(rng)})),
    E("dict_items", items.dict_items,
      _with(lambda rng: {"a": rng.standard_normal(2), "b": _float(rng)})),
    E("items_gradient", items.items_gradient,
      _with(lambda rng: [(None, rng.standard_normal(2)), (None, _float(rng))],
            {"a": 1.0, "b": 2.0}), wrt=(0,)),
    E("pairs_gradient", items.pairs_gradient,
      _with(lambda rng: {"a": rng.standard_normal(2), "b": _float(rng)})),
    E("values_gradient", items.values_gradient,
      _with(lambda rng: [rng.standard_normal(2), _float(rng)], {"a": 1.0, "b": 2.0}), wrt=(0,)),
    E("shallow_copy", items.shallow_copy, normal((2, 3))),
    E("shallow_copy/list", items.shallow_copy,
      _with(lambda rng: [rng.standard_normal(2), _float(rng)])),
    E("shallow_copy/dict", items.shallow_copy,
      _with(lambda rng: {"a": rng.standard_normal(2), "b": _float(rng)})),
    E("snapshot", snapshots.snapshot, normal((2, 3))),
    E("snapshot/float", snapshots.snapshot, lambda rng: (_float(rng),)),
    E("argument_snapshot", snapshots.argument_snapshot, normal((2, 3))),
    E("astype", items.astype, normal((3,)), dict(dtype=np.float64)),
    E("astype/int", items.astype, lambda rng: (rng.uniform(0.2, 0.8, 3) + np.arange(3),),
      dict(dtype=np.int64), note="an integer result has a zero tangent"),
    E("cast_like", structure.cast_like, _with(_n(3), np.arange(3)), wrt=(0,)),
    E("item", items.item, normal((1,))),
    E("extremum_gradient", items.extremum_gradient,
      _with(_float, 2.5, (1.0, 2.5, 0.3)), wrt=(0,)),
    E("sum_gradient", items.sum_gradient,
      _with(_n(3), lambda rng: [rng.standard_normal((2, 3)), 1.5]), wrt=(0,)),
    E("sequences:first_items", sequences.first_items,
      _with(lambda rng: [rng.standard_normal(2), _float(rng), rng.standard_normal(3)],
            (1.0, 2.0)), wrt=(0,)),
    E("sequences:last_items", sequences.last_items,
      _with(lambda rng: (rng.standard_normal(2), _float(rng), rng.standard_normal(3)),
            [1.0, np.ones(3)]), wrt=(0,)),
    E("sequences:sum_copies", sequences.sum_copies,
      _with(lambda rng: [rng.standard_normal(2), _float(rng)] * 3, [np.ones(2), 1.0]),
      wrt=(0,)),
    E("sequences:sum_copies/count", sequences.sum_copies,
      _with(lambda rng: [rng.standard_normal(2), _float(rng)], 2), wrt=(0,),
      note="the count of a repetition has a zero gradient"),
    E("sequences:append_zeros_like", sequences.append_zeros_like,
      _with(lambda rng: (rng.standard_normal(2), _float(rng)), _n(3)), wrt=(0,)),
    E("sequences:place_first", sequences.place_first,
      _with(lambda rng: (rng.standard_normal(2),), (np.ones(2), 1.0)), wrt=(0,)),
    E("sequences:place_last", sequences.place_last,
      _with(lambda rng: [_float(rng)], [np.ones(2), 1.0]), wrt=(0,)),
    E("sequences:copies", sequences.copies,
      _with(lambda rng: [rng.standard_normal(2)], [np.ones(2)] * 3, [np.ones(2)]), wrt=(0,)),
    E("sequences:copies/count", sequences.copies, _with(_float, [np.ones(2)] * 2, 2),
      wrt=(0,), note="the count of a repetition has a zero gradient"),
    E("builtin:float", float, normal(())),
    E("builtin:abs", abs, lambda rng: (float(away_from_zero(rng, ())),)),
    E("builtin:max", max, lambda rng: (1.5, float(rng.uniform(2.0, 3.0)), -0.5)),
    E("builtin:min/iterable", min, lambda rng: ([1.5, float(rng.uniform(-1.0, 0.0)), 0.7],)),
    E("builtin:sum", sum, lambda rng: ([rng.standard_normal(2), rng.standard_normal(2)],)),
    E("builtin:sum/start", sum, lambda rng: ([_float(rng), _float(rng)], 0.5), wrt=(0,),
      note="the adjoint rule gives `start` no gradient"),
    E("builtin:list", list, lambda rng: ((rng.standard_normal(2), 1.5),)),
    E("builtin:tuple/array", tuple, normal((2, 3))),
    E("tangent_ops:seed_tangent", tangent_ops.seed_tangent, normal((3,), (3,), (3,)), wrt=(0,)),
    E("tangent_ops:seed_tangent/default", tangent_ops.seed_tangent, _with(_n(3), _n(3), None),
      wrt=(0,)),
    E("tangent_ops:extremum_tangent", tangent_ops.extremum_tangent,
      _with(lambda rng: (_float(rng), _float(rng), 0.5), 2.5, (1.0, 2.5, 0.3)), wrt=(0,)),
    E("tangent_ops:extremum_tangent/iterable", tangent_ops.extremum_tangent,
      _with(lambda rng: ([_float(rng), _float(rng)],), 2.5, ([2.5, 1.0],)), wrt=(0,)),
    E("tangent_ops:iteration_tangent", tangent_ops.iteration_tangent,
      _with(lambda rng: [rng.standard_normal(2), rng.standard_normal(3)],
            [np.ones(2), np.ones(3)], (np.ones(2), np.ones(3))), wrt=(0,)),
    E("tangent_ops:iteration_tangent/dict", tangent_ops.iteration_tangent,
      _with(lambda rng: {"a": rng.standard_normal(2)}, {"a": np.ones(2)}, ["a"]), wrt=(0,)),
    E("tangent_ops:sum_tangent", tangent_ops.sum_tangent,
      _with(lambda rng: [rng.standard_normal(3), rng.standard_normal(3)],
            [np.ones(3), np.ones(3)], _n(3)), wrt=(0, 2)),
    # autotrace.tree_util's (transforms/rules/pytrees.py): a dict, a tuple, a None node
    E("pytrees:tree_flatten", tree_gradients.tree_flatten, _with(_TREE)),
    E("pytrees:tree_leaves", tree_gradients.tree_leaves, _with(_TREE)),
    E("pytrees:tree_leaves/is_leaf", tree_gradients.tree_leaves,
      _with(_TREE, lambda rng: (lambda node: isinstance(node, tuple))), wrt=(0,)),
    E("pytrees:tree_unflatten", tree_gradients.tree_unflatten,
      _with(_STRUCTURE, lambda rng: [rng.standard_normal(2), _float(rng), _n(3)(rng)]),
      wrt=(1,)),
    E("pytrees:PyTreeDef.unflatten", tree_gradients.PyTreeDef.unflatten,
      _with(_STRUCTURE, lambda rng: [rng.standard_normal(2), _float(rng), _n(3)(rng)]),
      wrt=(1,)),
    E("pytrees:PyTreeDef.flatten_up_to", tree_gradients.PyTreeDef.flatten_up_to,
      _with(_TOP, _TREE), wrt=(1,)),
    E("pytrees:leaf_gradients", tree_gradients.leaf_gradients,
      _with(_TREE, {"b": np.ones(2), "a": (1.0, None, np.ones(3))}, _STRUCTURE), wrt=(0,)),
    E("pytrees:tree_gradient", tree_gradients.tree_gradient,
      _with(lambda rng: [rng.standard_normal(2), _float(rng), _n(3)(rng)],
            {"b": np.ones(2), "a": (1.0, None, np.ones(3))}, _STRUCTURE), wrt=(0,)),
]
ALL_ENTRIES = TABLE + STRUCTURE_TABLE


# --- Nested values: float leaves by path -----------------------------------------------------

def is_float(value) -> bool:
    if type(value) is float:
        return True
    return isinstance(value, (np.ndarray, np.floating)) and value.dtype.kind == "f"


def is_number(value) -> bool:
    return (isinstance(value, (int, float, np.ndarray, np.number))
            and not isinstance(value, bool) and getattr(value, "dtype", None) != bool)


def float_paths(value, path=()):
    """The paths (tuples of indices and keys) to the float leaves of `value`."""
    if is_float(value):
        yield path
    elif isinstance(value, (list, tuple)):
        for index, item in enumerate(value):
            yield from float_paths(item, path + (index,))
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from float_paths(item, path + (key,))


def get(value, path):
    for key in path:
        value = value[key]
    return value


def put(value, path, new):
    """`value` with the leaf at `path` replaced by `new` (containers are rebuilt)."""
    if not path:
        return new
    key, rest = path[0], path[1:]
    if isinstance(value, dict):
        out = dict(value)
        out[key] = put(value[key], rest, new)
        return type(value)(out)
    items = list(value)
    items[key] = put(items[key], rest, new)
    return rebuild(value, items)


def rebuild(value, items):
    """A list, tuple or namedtuple like `value` holding `items`."""
    if isinstance(value, tuple) and hasattr(type(value), "_fields"):
        return type(value)(*items)
    return type(value)(items)


def random_like(value, rng):
    """Random floats in the structure of `value`; zeros for integers, None for the rest."""
    if isinstance(value, (list, tuple)):
        return rebuild(value, [random_like(v, rng) for v in value])
    if isinstance(value, dict):
        return {k: random_like(v, rng) for k, v in value.items()}
    if type(value) is float:
        return float(rng.standard_normal())
    if is_float(value):
        return rng.standard_normal(np.shape(value))
    if is_number(value):
        return np.zeros(np.shape(value))
    return None


def inner(a, b) -> float:
    if a is None or b is None:
        return 0.0
    if isinstance(a, dict):
        return sum(inner(a[k], b.get(k)) for k in a)
    if isinstance(a, (list, tuple)):
        return sum(inner(x, y) for x, y in zip(a, b))
    return float(np.sum(np.asarray(a, dtype=float) * np.asarray(b, dtype=float)))


def size(value) -> float:
    return float(np.sqrt(inner(value, value)))


# --- Evaluating a tangent rule ---------------------------------------------------------------

def jvp(func, args, kwargs, directions: dict):
    """The tangent rule of `func` at (args, kwargs), with the tangent directions[path] at each
    float leaf named by path (its first element: a position or keyword) and zeros elsewhere."""
    tangents = {}
    for path, direction in directions.items():
        key, rest = path[0], path[1:]
        value = args[key] if isinstance(key, int) else kwargs[key]
        tangents[key] = put(tangents[key] if key in tangents else zeros_like(value), rest,
                            direction)
    positional = [tangents.get(i) for i in range(len(args))]
    keywords = {k: t for k, t in tangents.items() if isinstance(k, str)}
    # rule_jvp names the result's tangent `dy`, which a parameter `dy` (seed's) would shadow.
    if not keywords and "dy" not in tangent_rules[func].signature.parameters:
        return rule_jvp(func, args, positional, **kwargs)[1]
    return keyword_jvp(func, args, kwargs, positional, keywords)


def keyword_jvp(func, args, kwargs, positional, keywords):
    """rule_jvp with tangents for keyword arguments too (rule_jvp reads those as zeros), and
    the result's tangent named `tangent_of_y`."""
    rule = tangent_rules[func]
    values, tangent_nodes = {}, {}

    def bind(value, prefix):
        identifier = f"{prefix}{len(values)}"
        values[identifier] = value
        return name(identifier)

    arg_nodes = [bind(a, "arg") for a in args]
    kwarg_nodes = {k: bind(v, "arg") for k, v in kwargs.items()}
    for node, value, tangent in zip(arg_nodes, args, positional):
        tangent_nodes[node.id] = bind(zeros_like(value) if tangent is None else tangent,
                                      "tangent")
    for key, tangent in keywords.items():
        tangent_nodes[kwarg_nodes[key].id] = bind(tangent, "tangent")

    def tangent_of(parameter, bound):
        if isinstance(bound, gast.Tuple):
            return gast.Tuple(elts=[tangent_of(parameter, e) for e in bound.elts],
                              ctx=gast.Load())
        return tangent_nodes.get(getattr(bound, "id", None), name("_zero_tangent"))

    counter = itertools.count()
    statements = instantiate_tangent(rule, name("y"), arg_nodes, kwarg_nodes,
                                     lambda hint: f"{hint}_{next(counter)}", tangent_of,
                                     "tangent_of_y")
    source = (f"def jvp(y, {', '.join(values)}):\n"
              + "".join("    " + line + "\n" for line in to_source(statements).splitlines())
              + "    return tangent_of_y\n")
    namespace = dict(rule.namespace, _zero_tangent=0.0)
    function = load_function(source, "jvp", namespace, hint="tangent rule")
    return function(func(*args, **kwargs), **values)


# --- The checker ------------------------------------------------------------------------------

def compare(tangent, plus, minus, where: str) -> None:
    """Assert `tangent` has the structure of the result and matches its central difference."""
    if isinstance(plus, (list, tuple)):
        assert isinstance(tangent, (list, tuple)) and len(tangent) == len(plus), (
            f"{where}: the tangent is {type(tangent).__name__}, the result a "
            f"{type(plus).__name__} of {len(plus)}")
        for index, (t, p, m) in enumerate(zip(tangent, plus, minus)):
            compare(t, p, m, f"{where}[{index}]")
    elif isinstance(plus, dict):
        assert isinstance(tangent, dict) and set(tangent) == set(plus), where
        for key in plus:
            compare(tangent[key], plus[key], minus[key], f"{where}[{key!r}]")
    elif is_number(plus):
        assert tangent is not None and np.shape(tangent) == np.shape(plus), (
            f"{where}: the tangent has shape {np.shape(tangent)}, the result {np.shape(plus)}")
        numeric = (np.asarray(plus, dtype=float) - np.asarray(minus, dtype=float)) / (2 * EPS)
        error = np.max(np.abs(np.asarray(tangent, dtype=float) - numeric), initial=0.0)
        scale = np.max(np.abs(numeric), initial=0.0)
        assert error <= FINITE_DIFFERENCE_TOLERANCE * (1.0 + scale), (
            f"{where}: the rule gives\n{np.asarray(tangent)}\nfinite differences\n{numeric}")


def gradient_at(gradients, where, path):
    """The adjoint rule's gradient of the leaf at `path` (None: no gradient, a zero)."""
    parameter, position = where[path[0]]
    gradient = gradients.get(parameter)
    for key in ((position,) if position is not None else ()) + path[1:]:
        if gradient is None:
            return None
        gradient = gradient[key]
    return gradient


def check_entry(entry: Entry) -> None:
    rng = np.random.default_rng(zlib.crc32(entry.name.encode()))
    args, kwargs = entry.arguments(rng)
    y = entry.func(*args, **kwargs)
    inputs = {**dict(enumerate(args)), **kwargs}
    paths = [p for p in float_paths(inputs) if entry.wrt is None or p[0] in entry.wrt]
    assert paths, f"{entry.name}: no differentiable argument"
    # Finite differences move along admissible directions (symmetric ones for cholesky and
    # eigh); the comparison with the adjoint rule holds along any direction.
    free = {path: random_like(get(inputs, path), rng) for path in paths}
    directions = {path: entry.direction(v) if entry.direction else v for path, v in free.items()}

    def output(step, path):
        x = get(inputs, path)
        moved = x + step * directions[path]
        moved = put(inputs, path, type(x)(moved) if type(x) is float else moved)
        result = entry.func(*[moved[i] for i in range(len(args))],
                            **{k: moved[k] for k in kwargs})
        return entry.align(result, y) if entry.align else result

    for path in paths:
        tangent = jvp(entry.func, args, kwargs, {path: directions[path]})
        compare(tangent, output(EPS, path), output(-EPS, path), f"{entry.name} along {path}")

    # All inputs at once, against the adjoint rule.
    directions = free
    tangent = jvp(entry.func, args, kwargs, directions)
    cotangent = random_like(y, rng)
    gradients = rule_vjp(entry.func, *args, **kwargs)[1](cotangent)
    where = parameter_of(entry.func, args, kwargs)
    forward = inner(tangent, cotangent)
    terms = [(gradient_at(gradients, where, path), directions[path]) for path in paths]
    reverse = sum(inner(gradient, direction) for gradient, direction in terms)
    scale = size(tangent) * size(cotangent) + sum(size(g) * size(v) for g, v in terms)
    assert abs(forward - reverse) <= ADJOINT_TOLERANCE * (1.0 + scale), (
        f"{entry.name}: <jvp(v), u> = {forward!r} but <v, vjp(u)> = {reverse!r}")


@pytest.mark.parametrize("entry", ALL_ENTRIES, ids=[entry.name for entry in ALL_ENTRIES])
def test_tangent_rule(entry):
    check_entry(entry)


# --- Coverage and closure ---------------------------------------------------------------------

def label(func) -> str:
    return getattr(func, "__name__", repr(func))


def ours(rules: dict) -> dict:
    """The rules written in transforms/rules/ (not those that importing autotrace adds for its
    run-time helpers, nor a user's), so these tests do not depend on what else was imported."""
    return {f: rule for f, rule in rules.items()
            if rule.template.__module__.startswith("autotrace.transforms.rules.")}


def test_every_adjoint_rule_has_a_tangent_rule():
    missing = [label(f) for f in ours(adjoint_rules) if f not in tangent_rules
               and f not in NO_TANGENT_RULE]
    assert not missing, f"no tangent rule for {missing}"


def test_every_tangent_rule_is_checked():
    checked = {entry.func for entry in ALL_ENTRIES}
    unchecked = [label(f) for f in ours(tangent_rules) if f not in checked]
    assert not unchecked, unchecked


def test_tangent_signatures_mirror_adjoint_signatures():
    differ = [label(f) for f, rule in ours(tangent_rules).items()
              if f in adjoint_rules and rule.signature != adjoint_rules[f].signature]
    assert not differ, differ


def callee(node, namespace):
    """What a call, operator or subscript in a template body calls (None: unknown)."""
    if isinstance(node, gast.BinOp):
        return BINARY_OPERATORS.get(type(node.op))
    if isinstance(node, gast.UnaryOp):
        return UNARY_OPERATORS.get(type(node.op))
    target = node.func
    path = []
    while isinstance(target, gast.Attribute):
        path.insert(0, target.attr)
        target = target.value
    if not isinstance(target, gast.Name):
        return None
    value = namespace.get(target.id, getattr(builtins, target.id, None))
    for attribute in path:
        value = getattr(value, attribute, None)
    return value


def calls_in(rule):
    for statement in rule.body:
        for node in gast.walk(statement):
            if isinstance(node, (gast.Call, gast.BinOp, gast.UnaryOp)):
                yield node, callee(node, rule.namespace)


def test_functions_called_in_tangent_bodies_have_both_rules():
    """Forward over forward needs their tangent rules, reverse over forward their adjoints."""
    problems = []
    for func, rule in ours(tangent_rules).items():
        for node, target in calls_in(rule):
            if target is None:
                problems.append((rule.template.__name__, gast.dump(node)))
            elif target not in constant_functions and target not in NOT_CLOSED and (
                    target not in tangent_rules or target not in adjoint_rules):
                problems.append((rule.template.__name__, label(target)))
    assert not problems, problems


def test_functions_called_in_adjoint_bodies_have_tangent_rules():
    """Forward over reverse (a Hessian) differentiates adjoint bodies in forward mode."""
    problems = []
    for func, rule in ours(adjoint_rules).items():
        for node, target in calls_in(rule):
            if target is None:
                problems.append((rule.template.__name__, gast.dump(node)))
            elif target not in constant_functions and target not in NOT_CLOSED \
                    and target not in tangent_rules:
                problems.append((rule.template.__name__, label(target)))
    assert not problems, problems


def test_every_tangent_body_inlines():
    """Each template instantiates with every parameter bound to a name."""
    for func, rule in ours(tangent_rules).items():
        args = [name(p) for p, parameter in rule.signature.parameters.items()
                if parameter.kind in (parameter.POSITIONAL_ONLY, parameter.POSITIONAL_OR_KEYWORD)]
        instantiate_tangent(rule, name("y"), args, {}, lambda hint: hint + "_0",
                            lambda parameter, bound: name("d_" + parameter), "dy")


# --- Conventions ------------------------------------------------------------------------------

def test_ties_share_the_tangent():
    x = np.array([1.0, 3.0, 3.0, 2.0])
    assert rule_jvp(np.max, (x,), (np.array([0.0, 1.0, 3.0, 5.0]),))[1] == 2.0
    _, tangent = rule_jvp(np.maximum, (x, 3.0), (np.ones(4), 1.0))
    np.testing.assert_allclose(tangent, [1.0, 1.0, 1.0, 1.0])
    _, tangent = rule_jvp(np.maximum, (x, 3.0), (np.ones(4), 0.0))
    np.testing.assert_allclose(tangent, [0.0, 0.5, 0.5, 0.0])


def test_zero_tangents_keep_the_result_shape():
    """An input without a tangent reads as zeros; the result's tangent is still full-shaped."""
    for func, args in [(np.add, (np.ones((3, 1)), np.ones(4))),
                       (np.multiply, (np.ones((3, 1)), np.ones(4))),
                       (np.where, (np.ones(4) > 0, 1.0, np.ones((3, 4)))),
                       (np.clip, (np.linspace(-1, 1, 5), -0.5, 0.5))]:
        y, tangent = rule_jvp(func, args, [None] * len(args))
        assert np.shape(tangent) == np.shape(y), label(func)
        assert not np.any(tangent), label(func)


def test_clip_bounds_without_tangents():
    a = np.array([-2.0, 0.0, 2.0])
    _, tangent = rule_jvp(np.clip, (a, None, 1.0), (np.ones(3), None, 5.0))
    np.testing.assert_allclose(tangent, [1.0, 1.0, 5.0])
