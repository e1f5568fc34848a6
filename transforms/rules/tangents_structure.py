"""Tangent rules of the helpers generated code calls (runtime/derivatives/structure.py) and of
builtins.

A tangent has the structure of its value: a container's tangent is the same container of tangents,
a namedtuple's a namedtuple. Most helpers are linear in the gradient they move and are their own
tangent. The helpers of runtime/derivatives/tangent_ops.py, which these rules call, get both
rules here, so derivative code stays differentiable in either mode.
"""
from __future__ import annotations

import numpy as np

from autotrace.runtime.derivatives.adjoint_ops import unbroadcast
from ...runtime.derivatives.state_log import add_recomputed
from ...runtime.derivatives.sweeps import sent_object_gradient
from ...runtime.derivatives.state_writes import (object_tangent, placed_state, restored_state,
                                                state_gradient, state_tangent, unwritten_state,
                                                without_state, write_state)
from autotrace.runtime.derivatives.built_objects import (build_object, field_gradients,
                                                         object_gradient)
from autotrace.runtime.derivatives.items import (accumulate_attribute, accumulate_item, astype,
                                                 attribute_gradient, attribute_tangent,
                                                 build_namedtuple, clear_item, dict_items,
                                                 dict_values, extremum_gradient, gradient_item,
                                                 item, item_gradient, items_gradient,
                                                 namedtuple_fields, pairs_gradient, place_item,
                                                 read_attribute, read_item, sequence,
                                                 sequence_gradient, shallow_copy, sum_gradient,
                                                 values_gradient)
from autotrace.runtime.derivatives.structure import (accumulate, add, cast_like, fresh_gradients,
                                                     fresh_tangent, like_container, match,
                                                     match_for_caller, seed, snapshot,
                                                     tangent_like, tangent_seed)
from autotrace.runtime.derivatives.tangent_ops import (extremum_tangent, iteration_tangent,
                                                       seed_tangent)
from autotrace.runtime.recompute import recompute_from
from ...runtime.ops_index import checked_out
from autotrace.transforms.rules.core import adjoint, d, tangent


@tangent(seed)
def _seed(y, value, dy):
    d[y] = seed_tangent(d[dy], value, dy)


@tangent(sent_object_gradient)
def _sent_object_gradient(y, after, value):
    d[y] = seed_tangent(d[after], value, after)


@tangent(tangent_seed)
def _tangent_seed(y, value, tangent):
    d[y] = seed_tangent(d[tangent], value, tangent)


@tangent(tangent_like)
def _tangent_like(y, tangent, value):
    d[y] = tangent_like(d[tangent], value)


@tangent(match, match_for_caller)
def _match(y, gradient, value):
    d[y] = match_for_caller(d[gradient], value)


@tangent(fresh_gradients)
def _fresh_gradients(y, gradients):
    d[y] = d[gradients]


@tangent(fresh_tangent)
def _fresh_tangent(y, value):
    d[y] = d[value]


@tangent(add, accumulate, add_recomputed)
def _add(y, a, b):
    d[y] = add(d[a], d[b])


@tangent(build_namedtuple)
def _build_namedtuple(y, cls, values):
    d[y] = build_namedtuple(cls, d[values])


@tangent(namedtuple_fields)
def _namedtuple_fields(y, gradient):
    d[y] = namedtuple_fields(d[gradient])


@tangent(accumulate_item)
def _accumulate_item(y, gradient, index, value):
    d[y] = accumulate_item(d[gradient], index, d[value])


@tangent(gradient_item)
def _gradient_item(y, gradient, index, like):
    d[y] = gradient_item(d[gradient], index, like)


@tangent(accumulate_attribute)
def _accumulate_attribute(y, gradient, attribute, value, owner=None):
    d[y] = accumulate_attribute(d[gradient], attribute, d[value], owner)


@tangent(attribute_gradient)
def _attribute_gradient(y, value, attribute, gradient):
    d[y] = attribute_gradient(value, attribute, d[gradient])


@tangent(getattr)
def _getattr(y, value, attribute):
    d[y] = attribute_tangent(d[value], attribute, value)


@tangent(read_attribute)
def _read_attribute(y, value, attribute):
    d[y] = attribute_tangent(d[value], attribute, value)


@tangent(item_gradient)
def _item_gradient(y, gradient, index, value):
    d[y] = item_gradient(d[gradient], index, value)


@tangent(place_item)
def _place_item(y, like, index, gradient):
    d[y] = place_item(like, index, d[gradient])


@tangent(clear_item)
def _clear_item(y, gradient, index, like=None):
    d[y] = clear_item(d[gradient], index, y)


@tangent(read_item)
def _read_item(y, container, index):
    d[y] = read_item(d[container], index)


@tangent(sequence)
def _sequence(y, iterable):
    d[y] = iteration_tangent(d[iterable], iterable, y)


@tangent(sequence_gradient)
def _sequence_gradient(y, gradient, iterable):
    d[y] = sequence_gradient(d[gradient], iterable)


@tangent(like_container)
def _like_container(y, gradient, iterable):
    d[y] = like_container(d[gradient], iterable)


@tangent(dict_values)
def _dict_values(y, mapping):
    d[y] = dict_values(d[mapping])


@tangent(dict_items)
def _dict_items(y, mapping):
    # (key, value) pairs: the keys carry no tangent (None, as in pairs_gradient).
    d[y] = pairs_gradient(d[mapping])


@tangent(items_gradient)
def _items_gradient(y, gradient, mapping):
    d[y] = items_gradient(d[gradient], mapping)


@tangent(pairs_gradient)
def _pairs_gradient(y, gradient):
    d[y] = pairs_gradient(d[gradient])


@tangent(values_gradient)
def _values_gradient(y, gradient, mapping):
    d[y] = values_gradient(d[gradient], mapping)


@tangent(shallow_copy)
def _shallow_copy(y, value):
    d[y] = shallow_copy(d[value])


@tangent(snapshot)
def _snapshot(y, value):
    d[y] = snapshot(d[value])


@tangent(recompute_from)
def _recompute_from(y, value, after):
    d[y] = d[value]


@tangent(astype)
def _astype(y, value, dtype):
    # In y's floating dtype; unbroadcast gives an integer result a zero tangent.
    d[y] = unbroadcast(cast_like(d[value], y), y)


@tangent(cast_like)
def _cast_like(y, gradient, value):
    d[y] = cast_like(d[gradient], value)


@tangent(checked_out)
def _checked_out(y, value, out, function_name):
    d[y] = d[value]


@tangent(item)
def _item(y, value):
    d[y] = item(d[value])


# Builtins.


@tangent(float)
def _float(y, x=0.0):
    d[y] = float(d[x])


@tangent(abs)
def _abs(y, x):
    d[y] = d[x] * np.sign(x)


@tangent(max, min)
def _extremum(y, *args):
    d[y] = extremum_tangent(d[args], y, args)


@tangent(sum)
def _sum(y, iterable, start=0):
    d[y] = sum(d[iterable], d[start])


@tangent(sum_gradient)
def _sum_gradient(y, gradient, iterable):
    d[y] = sum_gradient(d[gradient], iterable)


@tangent(list, tuple)
def _list(y, iterable=()):
    d[y] = iteration_tangent(d[iterable], iterable, y)


# The helpers these rules call: each is linear in its first argument.


@tangent(seed_tangent)
def _seed_tangent(z, tangent, value, dy):
    d[z] = seed_tangent(d[tangent], value, dy)


@adjoint(seed_tangent)
def _seed_tangent_adjoint(z, tangent, value, dy):
    d[tangent] = seed_tangent(d[z], tangent, dy)


@tangent(extremum_tangent)
def _extremum_tangent(z, tangents, result, args):
    d[z] = extremum_tangent(d[tangents], result, args)


@adjoint(extremum_tangent)
def _extremum_tangent_adjoint(z, tangents, result, args):
    d[tangents] = extremum_gradient(d[z], result, args)


@tangent(extremum_gradient)
def _extremum_gradient(z, gradient, result, args):
    d[z] = extremum_gradient(d[gradient], result, args)


@adjoint(extremum_gradient)
def _extremum_gradient_adjoint(z, gradient, result, args):
    d[gradient] = extremum_tangent(d[z], result, args)


@tangent(iteration_tangent)
def _iteration_tangent(z, tangent, iterable, result):
    d[z] = iteration_tangent(d[tangent], iterable, result)


@adjoint(iteration_tangent)
def _iteration_tangent_adjoint(z, tangent, iterable, result):
    d[tangent] = sequence_gradient(d[z], iterable)


@tangent(build_object)
def _build_object(y, cls, fields):
    d[y] = object_gradient(cls, d[fields], y)


@tangent(write_state)
def _write_state(y, root, kinds, keys, value, symbol=None, where="", carries_gradient=True,
                 in_callee=False, again=False):
    d[y] = state_tangent(d[root], root, kinds, keys, d[value], symbol, where, in_callee)


@tangent(state_gradient)
def _state_gradient(y, gradient, root, kinds, keys, value, symbol=None, where=""):
    d[y] = state_gradient(d[gradient], root, kinds, keys, value, symbol, where)


@tangent(without_state)
def _without_state(y, gradient, root, keys, symbol=None, value=None, where="",
                   carries_gradient=True):
    d[y] = without_state(d[gradient], root, keys, symbol, value, where, carries_gradient)


@tangent(placed_state)
def _placed_state(y, gradient, root, kinds, keys, value, symbol=None):
    d[y] = placed_state(d[gradient], root, kinds, keys, value, symbol)


@tangent(restored_state)
def _restored_state(y, gradient, root, kinds, keys, symbol=None, value=None):
    d[y] = restored_state(d[gradient], root, kinds, keys, symbol, value)


@tangent(unwritten_state)
def _unwritten_state(y, gradient, keys, symbol=None, value=None):
    d[y] = unwritten_state(d[gradient], keys, symbol, value)


@tangent(object_tangent)
def _object_tangent(y, tangent, value):
    d[y] = object_tangent(d[tangent], value)


@tangent(state_tangent)
def _state_tangent(y, tangent, root, kinds, keys, value_tangent, symbol=None, where="",
                   in_callee=False):
    d[y] = state_tangent(d[tangent], root, kinds, keys, d[value_tangent], symbol, where,
                         in_callee)


@tangent(field_gradients)
def _field_gradients(y, gradient, fields, cls, built=None):
    d[y] = field_gradients(d[gradient], fields, cls)


@tangent(object_gradient)
def _object_gradient(y, cls, gradients, like=None):
    d[y] = object_gradient(cls, d[gradients], like)


@tangent(super)
def _super(y, cls, instance):
    d[y] = d[instance]


@tangent(attribute_tangent)
def _attribute_tangent(y, tangent, attribute, owner):
    d[y] = attribute_tangent(d[tangent], attribute, owner)
