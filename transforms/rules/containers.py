"""Rules of the helpers generated code calls (runtime/derivatives/structure.py, items.py,
built_objects.py, state_writes.py, tangent_ops.py) and of Python builtins, both modes.

Generated code is differentiated again for higher derivatives, so every helper it calls has
rules here. A tangent has the structure of its value: a container's tangent is the same
container of tangents, a namedtuple's a namedtuple. Most helpers are linear in the gradient they
move, their own tangents (declarations.py); those that pass a value through unchanged as far as
derivatives go are declared `identity`.

`+` and `*` on lists and tuples: reverse mode inlines `concatenate`'s rule for `a + b` on
operands it knows are lists or tuples, and `add_or_concatenate`'s where it cannot tell
(transforms/analysis/list_operators.py): that one decides when it runs. `*` has the same pair, for repetition.
"""
from __future__ import annotations

import numpy as np  # noqa: F401  (named in partials' expressions)

# unbroadcast is named in partials
from ...runtime.derivatives.adjoint_ops import unarray, unbroadcast  # noqa: F401
from ...runtime.derivatives.called_objects import (callee_gradient, callee_tangent,
                                                   with_callee_gradient)
from ...runtime.derivatives.built_objects import (build_object, field_gradients, object_gradient,
                                                  replaced_dataclass_fields,
                                                  replaced_namedtuple_fields)
from ...runtime.derivatives.items import (accumulate_attribute, accumulate_item, astype,
                                          attribute_gradient, attribute_tangent, build_namedtuple,
                                          clear_item, dict_items, dict_keys, dict_values,
                                          extremum_gradient, gradient_item, item, item_gradient,
                                          items_gradient, kept_by_write, namedtuple_fields,
                                          pairs_gradient,
                                          place_item, read_attribute, read_item, sequence,
                                          sequence_gradient, shallow_copy, shape_only, sort_order,
                                          sum_gradient, values_gradient)
from ...runtime.derivatives.sequences import (add_or_concatenate, append_zeros_like, concatenate,
                                              concatenates, copies, first_items, last_items,
                                              multiply_or_repeat, place_first, place_last, repeat,
                                              repeats, sum_copies)
from ...runtime.derivatives.state_log import add_recomputed
from ...runtime.derivatives.state_writes import (object_tangent, placed_state, restored_state,
                                                 state_gradient, state_tangent, unwritten_state,
                                                 without_state, write_state)
from ...runtime.derivatives.structure import (accumulate, add, cast_like, fresh_gradients,
                                              fresh_tangent, like_container, match,
                                              match_for_caller, ones_like,
                                              refuse_integral_argument, seed, unmatch,
                                              zero_seed, zeros_like)
from ...runtime.derivatives.given_checks import check_tangents
from ...runtime.derivatives.complex_parts import abs_slope, real_if_real
from ...runtime.derivatives.real_only import refuse_real_part
from ...runtime.derivatives.snapshots import argument_snapshot, in_place_result, snapshot
from ...runtime.derivatives.sweeps import sent_object_gradient
from ...runtime.derivatives.tangent_ops import (extremum_tangent, iteration_tangent,
                                                read_as_array, seed_tangent, sum_tangent,
                                                tangent_like, tangent_seed)
from ...runtime.primitives.index import add_at, indexes_a_view
from ...runtime.primitives.out_writes import checked_out, checked_out_item
from ...runtime.primitives.keyed_random import draw
from ...runtime.primitives.recompute_barrier import recompute_from
from .core import adjoint, constant, d, other_calls, tangent
from .declarations import identity, linear

# shape_only's result is read for its shape alone (transforms/codegen/cleanup.py);
# refuse_integral_argument, check_tangents and refuse_real_part check values and give nothing;
# the replaced_*_fields give the names of fields.
# (transforms/front/inplace.py declares its refuse_shared_write and refuse_shared_item so.)
constant(zeros_like, zero_seed, ones_like, dict_keys, draw, shape_only, sort_order,
         refuse_integral_argument, check_tangents, refuse_real_part,
         replaced_dataclass_fields, replaced_namedtuple_fields, indexes_a_view)


@adjoint(seed)
def _seed(y, value, dy):
    d[dy] = d[y]


@tangent(seed)
def _seed_tangent(y, value, dy):
    d[y] = seed_tangent(d[dy], value, dy)


@adjoint(sent_object_gradient)
def _sent_object_gradient(y, after, value):
    d[after] = d[y]


@tangent(sent_object_gradient)
def _sent_object_gradient_tangent(y, after, value):
    d[y] = seed_tangent(d[after], value, after)


# A real value's gradient of a complex one is its real part: a tangent keeps the real part of
# the tangent, and a gradient of it is the gradient's real part (runtime/derivatives/
# complex_parts.py). The gradient of a list argument that a rule computed as one array is that
# array again (unmatch).
@adjoint(match, match_for_caller)
def _match(y, gradient, value):
    d[gradient] = unmatch(real_if_real(d[y], value), gradient)


@tangent(match, match_for_caller)
def _match_tangent(y, gradient, value):
    d[y] = match_for_caller(d[gradient], value)


@linear(unmatch)
def _unmatch(y, g, gradient):
    d[g] = match_for_caller(d[y], g)


@identity(fresh_gradients)
def _fresh_gradients(y, gradients):
    d[gradients] = d[y]


@identity(fresh_tangent)
def _fresh_tangent(y, value):
    d[value] = d[y]


@linear(add, accumulate, add_recomputed)
def _add(y, a, b):
    d[a] = d[y]
    d[b] = d[y]


@linear(build_namedtuple)
def _build_namedtuple(y, cls, values):
    d[values] = namedtuple_fields(d[y])


@linear(namedtuple_fields)
def _namedtuple_fields(y, gradient):
    d[gradient] = like_container(d[y], gradient)


@linear(accumulate_item)
def _accumulate_item(y, gradient, index, value):
    d[gradient] = d[y]
    d[value] = gradient_item(d[y], index, value)


@linear(add_at)  # readable graphs (runtime/execution/graph_python.py) write np.add.at into a copy so
def _add_at(y, x, index, value):
    d[x] = d[y]
    d[value] = gradient_item(d[y], index, value)


@linear(gradient_item)
def _gradient_item(y, gradient, index, like):
    d[gradient] = accumulate_item(zeros_like(gradient), index, d[y])


@linear(accumulate_attribute)
def _accumulate_attribute(y, gradient, attribute, value, owner=None):
    d[gradient] = d[y]
    d[value] = attribute_tangent(d[y], attribute, owner)


@adjoint(read_attribute)
def _read_attribute(y, value, attribute):
    d[value] = attribute_gradient(value, attribute, d[y])


@tangent(read_attribute)
def _read_attribute_tangent(y, value, attribute):
    d[y] = attribute_tangent(d[value], attribute, value)


@adjoint(getattr)
def _getattr(y, value, attribute):
    d[value] = attribute_gradient(value, attribute, d[y])


@tangent(getattr)
def _getattr_tangent(y, value, attribute):
    d[y] = attribute_tangent(d[value], attribute, value)


@linear(attribute_gradient)
def _attribute_gradient(y, value, attribute, gradient):
    d[gradient] = attribute_tangent(d[y], attribute, value)


@linear(item_gradient)
def _item_gradient(y, gradient, index, value):
    d[gradient] = place_item(gradient, index, d[y])


@linear(kept_by_write)
def _kept_by_write(y, derivative, target):
    d[derivative] = kept_by_write(d[y], target)


@linear(place_item)
def _place_item(y, like, index, gradient):
    d[gradient] = item_gradient(d[y], index, gradient)


@linear(clear_item, call="gradient, index, y")
def _clear_item(y, gradient, index, like=None):
    d[gradient] = clear_item(d[y], index, gradient)


@linear(read_item)
def _read_item(y, container, index):
    d[container] = accumulate_item(zeros_like(container), index, d[y])


@adjoint(sequence)
def _sequence(y, iterable):
    d[iterable] = sequence_gradient(d[y], iterable)


@tangent(sequence)
def _sequence_tangent(y, iterable):
    d[y] = iteration_tangent(d[iterable], iterable, y)


@linear(sequence_gradient)
def _sequence_gradient(y, gradient, iterable):
    d[gradient] = d[y]


linear(like_container)(_sequence_gradient)


@linear(dict_values)
def _dict_values(y, mapping):
    d[mapping] = values_gradient(d[y], mapping)


@adjoint(dict_items)
def _dict_items(y, mapping):
    d[mapping] = items_gradient(d[y], mapping)


@tangent(dict_items)
def _dict_items_tangent(y, mapping):
    # (key, value) pairs: the keys carry no tangent (None, as in pairs_gradient).
    d[y] = pairs_gradient(d[mapping])


@linear(items_gradient)
def _items_gradient(y, gradient, mapping):
    d[gradient] = pairs_gradient(d[y])


@linear(pairs_gradient)
def _pairs_gradient(y, gradient):
    d[gradient] = items_gradient(d[y], gradient)


@linear(values_gradient)
def _values_gradient(y, gradient, mapping):
    d[gradient] = dict_values(d[y])


@linear(shallow_copy)
def _shallow_copy(y, value):
    d[value] = d[y]


@linear(snapshot)
def _snapshot(y, value):
    d[value] = d[y]


@adjoint(argument_snapshot)
def _argument_snapshot(y, value):
    d[value] = d[y]


@tangent(argument_snapshot)
def _argument_snapshot_tangent(y, value):
    # (a tangent is no array of the caller's: its copy is writeable, as the derivative writes)
    d[y] = snapshot(d[value])


@identity(recompute_from)
def _recompute_from(y, value, after):
    d[value] = d[y]


# (order, casting and subok change no value; copy=False may give `value` itself, which the
# alias analysis knows: transforms/analysis/alias_calls.py)
@adjoint(astype)
def _astype(y, value, dtype, order="K", casting="unsafe", subok=True, copy=True):
    refuse_real_part(value, y, "astype")
    # An integer (or bool) y carries no gradient, whatever reached it: unbroadcast makes it 0.
    d[value] = cast_like(unbroadcast(d[y], y), value)


@tangent(astype)
def _astype_tangent(y, value, dtype, order="K", casting="unsafe", subok=True, copy=True):
    # In y's floating dtype; unbroadcast gives an integer result a zero tangent.
    d[y] = unbroadcast(cast_like(d[value], y), y)


@linear(cast_like)
def _cast_like(y, gradient, value):
    d[gradient] = cast_like(d[y], gradient)


@linear(in_place_result)
def _in_place_result(y, result, target):
    d[result] = cast_like(d[y], result)  # (in the dtype of `x op v`, from x's)


@identity(checked_out)
def _checked_out(y, value, out, function_name, filename="<unknown>", line=None,
                 casting=None):
    d[value] = d[y]


@identity(checked_out_item)
def _checked_out_item(y, value, base, index, function_name, filename, line,
                      casting=None):
    d[value] = d[y]


@linear(item)
def _item(y, value):
    d[value] = match(d[y], value)


other_calls(item, "autotrace differentiates x.item(), not x.item(i) with an index: write "
                  "x.ravel()[i] (x[i, j] for x.item(i, j)), a NumPy scalar")


@linear(float, call="x")
def _float(y, x=0.0):
    d[x] = match(d[y], x)


# |x| of a Python number, as np.abs's (elementwise.py).
@adjoint(abs)
def _abs(y, x):
    d[x] = np.real(d[y]) * abs_slope(x)


@tangent(abs)
def _abs_tangent(y, x):
    d[y] = np.real(d[x] * abs_slope(x))


@adjoint(max, min)
def _extremum(y, *args):
    d[args] = extremum_gradient(d[y], y, args)


@tangent(max, min)
def _extremum_tangent(y, *args):
    d[y] = extremum_tangent(d[args], y, args)


@adjoint(sum)
def _sum(y, iterable, start=0):
    d[iterable] = sum_gradient(d[y], iterable)
    d[start] = unbroadcast(d[y], start)


@tangent(sum)
def _sum_tangent(y, iterable, start=0):
    d[y] = sum_tangent(d[iterable], iterable, d[start])


@linear(sum_tangent)
def _sum_tangent_rule(z, tangent, iterable, start):
    d[tangent] = sum_gradient(d[z], iterable)
    d[start] = d[z]


@linear(sum_gradient)
def _sum_gradient(y, gradient, iterable):
    d[gradient] = sum(d[y])


@adjoint(list, tuple)
def _list(y, iterable=()):
    d[iterable] = like_container(d[y], iterable)


@tangent(list, tuple)
def _list_tangent(y, iterable=()):
    d[y] = iteration_tangent(d[iterable], iterable, y)


@linear(read_as_array)
def _read_as_array(y, tangent):
    d[tangent] = unarray(d[y], tangent)  # np.asarray's adjoint


@adjoint(tangent_seed)
def _tangent_seed(y, value, tangent):
    # The seed is the tangent given (ones, which no value changes, where none is).
    d[tangent] = d[y]


@tangent(tangent_seed)
def _tangent_seed_tangent(y, value, tangent):
    d[y] = seed_tangent(d[tangent], value, tangent)


@linear(tangent_like)
def _tangent_like(y, tangent, value):
    d[tangent] = unbroadcast(d[y], tangent)


@adjoint(build_object)
def _build_object(y, cls, fields):
    d[fields] = field_gradients(d[y], fields, cls, y)


@tangent(build_object)
def _build_object_tangent(y, cls, fields):
    d[y] = object_gradient(cls, d[fields], y)


@adjoint(write_state)
def _write_state(y, root, kinds, keys, value, symbol=None, where="", carries_gradient=True,
                 in_callee=False, again=False):
    d[value] = state_gradient(d[y], y, kinds, keys, value, symbol, where)
    d[root] = without_state(d[y], y, keys, symbol, value, where, carries_gradient)


@tangent(write_state)
def _write_state_tangent(y, root, kinds, keys, value, symbol=None, where="", carries_gradient=True,
                 in_callee=False, again=False):
    d[y] = state_tangent(d[root], root, kinds, keys, d[value], symbol, where, in_callee)


# (For a derivative of a derivative: the helpers of the rule above, and of its tangent rule.)
@linear(state_gradient)
def _state_gradient(y, gradient, root, kinds, keys, value, symbol=None, where=""):
    d[gradient] = placed_state(d[y], root, kinds, keys, value, symbol)


@linear(without_state)
def _without_state(y, gradient, root, keys, symbol=None, value=None, where="",
                   carries_gradient=True):
    d[gradient] = restored_state(d[y], root, "", keys, symbol, value)


@linear(placed_state)
def _placed_state(y, gradient, root, kinds, keys, value, symbol=None):
    d[gradient] = state_gradient(d[y], root, kinds, keys, value, symbol)


@linear(restored_state)
def _restored_state(y, gradient, root, kinds, keys, symbol=None, value=None):
    d[gradient] = unwritten_state(d[y], keys, symbol, value)


@linear(unwritten_state)
def _unwritten_state(y, gradient, keys, symbol=None, value=None):
    d[gradient] = restored_state(d[y], None, "", keys, symbol, value)


@linear(object_tangent)
def _object_tangent(y, tangent, value):
    d[tangent] = d[y]


@linear(state_tangent)
def _state_tangent(y, tangent, root, kinds, keys, value_tangent, symbol=None, where="",
                   in_callee=False):
    d[tangent] = restored_state(d[y], root, kinds, keys, symbol, value_tangent)
    d[value_tangent] = state_gradient(d[y], root, kinds, keys, value_tangent, symbol, where)


@linear(field_gradients, call="gradient, fields, cls")
def _field_gradients(y, gradient, fields, cls, built=None):
    d[gradient] = object_gradient(cls, d[y], built)


@linear(object_gradient)
def _object_gradient(y, cls, gradients, like=None):
    d[gradients] = field_gradients(d[y], gradients, cls)


# `super(C, self)` (zero-argument super() is written so: transforms/reverse/built_objects_and_super.py) stands for self
# when its methods are called: the gradient of those calls' self is self's.
@identity(super)
def _super(y, cls, instance):
    d[instance] = d[y]


@linear(attribute_tangent)
def _attribute_tangent(y, tangent, attribute, owner):
    d[tangent] = attribute_gradient(owner, attribute, d[y])


# The object a call `owner.attribute(...)` runs a method of (runtime/derivatives/called_objects.py):
# reading its gradient out of the owner's, and putting it back, are linear.
@linear(callee_tangent)
def _callee_tangent(y, tangent, attribute, owner):
    d[tangent] = with_callee_gradient(None, attribute, owner, d[y])


@linear(callee_gradient)
def _callee_gradient(y, gradient, attribute, owner):
    d[gradient] = with_callee_gradient(None, attribute, owner, d[y])


@linear(with_callee_gradient)
def _with_callee_gradient(y, gradient, attribute, owner, called):
    d[gradient] = with_callee_gradient(d[y], attribute, owner, None)
    d[called] = callee_gradient(d[y], attribute, owner)


# The helpers of runtime/derivatives/tangent_ops.py that these rules call: each is linear in its
# first argument.


@linear(seed_tangent)
def _seed_tangent_rule(z, tangent, value, dy):
    d[tangent] = seed_tangent(d[z], tangent, dy)


@linear(extremum_tangent)
def _extremum_tangent_rule(z, tangents, result, args):
    d[tangents] = extremum_gradient(d[z], result, args)


@linear(extremum_gradient)
def _extremum_gradient_rule(z, gradient, result, args):
    d[gradient] = extremum_tangent(d[z], result, args)


@linear(iteration_tangent)
def _iteration_tangent_rule(z, tangent, iterable, result):
    d[tangent] = sequence_gradient(d[z], iterable)


# `+` and `*` on lists and tuples.

constant(concatenates, repeats)


@adjoint(concatenate)
def concatenate_rule(y, x1, x2):
    d[x1] = first_items(d[y], x1)
    d[x2] = last_items(d[y], x2)


@adjoint(add_or_concatenate)
def add_or_concatenate_rule(y, x1, x2):
    d[x1] = first_items(d[y], x1) if concatenates(x1, x2) else unbroadcast(d[y], x1)
    d[x2] = last_items(d[y], x2) if concatenates(x1, x2) else unbroadcast(d[y], x2)


@adjoint(repeat)
def repeat_rule(y, x1, x2):
    d[x1] = sum_copies(d[y], x1)
    d[x2] = sum_copies(d[y], x2)


@adjoint(multiply_or_repeat)
def multiply_or_repeat_rule(y, x1, x2):
    d[x1] = sum_copies(d[y], x1) if repeats(x1, x2) else unbroadcast(d[y] * x2, x1)
    d[x2] = sum_copies(d[y], x2) if repeats(x1, x2) else unbroadcast(d[y] * x1, x2)


# The helpers are linear in their first argument, their own tangents: each one's adjoint is
# another of them.

@linear(first_items)
def first_items_rule(y, gradient, like):
    d[gradient] = place_first(d[y], gradient)


@linear(last_items)
def last_items_rule(y, gradient, like):
    d[gradient] = place_last(d[y], gradient)


@linear(sum_copies)
def sum_copies_rule(y, gradient, like):
    d[gradient] = copies(d[y], gradient, like)


@linear(place_first)
def place_first_rule(y, gradient, like):
    d[gradient] = first_items(d[y], gradient)


@linear(place_last)
def place_last_rule(y, gradient, like):
    d[gradient] = last_items(d[y], gradient)


@linear(copies)
def copies_rule(y, gradient, like, repeated):
    d[gradient] = sum_copies(d[y], gradient)


@linear(append_zeros_like)
def append_zeros_like_rule(y, gradient, value):
    d[gradient] = first_items(d[y], gradient)

