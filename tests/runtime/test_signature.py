"""Trace signatures, one rule a test, the text that explains a retrace, and how
reduce_retracing widens a signature."""
import collections
import gc

import numpy as np

import autotrace
from autotrace.runtime.tracing.identity_keys import (StrongIdentity, WeakIdentity, is_alive,
                                                     with_release_hook)
from autotrace.runtime.tracing.signature import (describe_difference, is_array_key,
                                         signature_and_arrays, signature_of)
from autotrace.runtime.tracing.spec import RetracingReducer, general_avals, placeholders_for
from autotrace.runtime.tracing.tracer import trace

Pair = collections.namedtuple("Pair", "first second")


class Thing:
    """Any object; all things are equal, so only identity can tell them apart."""

    def __eq__(self, other):
        return True

    __hash__ = object.__hash__


def key(*args, **kwargs):
    return signature_of(args, kwargs)


def test_arrays_by_shape_dtype_and_device_not_values():
    assert key(np.zeros(3)) == key(np.ones(3))
    assert key(np.zeros(3)) != key(np.zeros(4))
    assert key(np.zeros(3)) != key(np.zeros(3, np.float32))
    assert key(np.zeros(3)) == (((("array", (3,), np.dtype("float64"), "cpu"),)), ())


def test_numpy_scalars_are_arrays():
    assert key(np.float64(1.0)) == key(np.float64(2.0))
    assert key(np.float32(1.0)) != key(np.float64(1.0))
    # a 0-d array is traced apart: `**` on it is the power ufunc, on a NumPy scalar C's pow
    assert key(np.zeros(())) == key(np.ones(())) != key(np.float64(1.0))
    assert is_array_key(key(np.zeros(()))[0][0])


def test_python_scalars_by_type_and_value():
    assert key(1) == key(1) and key(1.5) == key(1.5)
    assert len({key(1), key(1.0), key(True)}) == 3
    assert key(1) != key(2)


def test_nan_and_negative_zero():
    assert key(float("nan")) == key(float("nan"))
    assert key(0.0) != key(-0.0)


def test_strings_and_none_by_value():
    assert key("relu") == key("re" + "lu") and key("relu") != key("tanh")
    assert key(None) == key(None) != key("None")


def test_containers_recursively():
    assert key((np.zeros(2), 1)) == key((np.ones(2), 1))
    assert key((np.zeros(2), 1)) != key([np.zeros(2), 1])
    assert key(Pair(1, 2)) != key((1, 2))
    assert key({"a": [1, (2.0, None)]}) != key({"a": [1, (2.0, "x")]})


def test_dicts_by_keys_and_their_order_keywords_by_name():
    # iterating a dict reads its order; keyword arguments are bound by name
    assert key({"a": 1, "b": 2.0}) == key({"a": 1, "b": 2.0})
    assert key({"a": 1, "b": 2.0}) != key({"b": 2.0, "a": 1})
    assert key(x=1, y=2) == key(y=2, x=1)


def test_other_objects_by_identity():
    first, second = Thing(), Thing()
    assert first == second
    assert key(first) == key(first) and key(first) != key(second)
    assert isinstance(key(first)[0][0], WeakIdentity)


def test_objects_are_held_weakly_and_release_runs_a_hook():
    thing = Thing()
    released = []
    stored = with_release_hook(key(thing), released.append)
    assert is_alive(stored)
    del thing
    gc.collect()
    assert len(released) == 1 and not is_alive(stored)


def test_objects_without_weak_references_are_held_strongly():
    token = object()
    stored = key(token)
    assert isinstance(stored[0][0], StrongIdentity) and stored[0][0].value is token
    assert stored == key(token) and stored != key(object())


def test_arrays_come_in_graph_input_order():
    a, b, c, d = (np.full(1, i) for i in range(4))
    args, kwargs = ({"z": a, "y": b}, [c]), {"w": d}
    _, arrays = signature_and_arrays(args, kwargs)
    assert [array[0] for array in arrays] == [1, 0, 2, 3]  # dict keys sorted, then kwargs
    graph, _ = trace(lambda p, l, w: p["z"] * 10 + p["y"] * 100 + l[0] + w * 1000, args, kwargs)
    inputs = {id(var): position for position, var in enumerate(graph.inputs)}
    first = graph.equations[0].inputs[0]  # p["z"], the second input
    assert inputs[id(first)] == 1


def test_describe_difference():
    names = ("x", "params")
    old = key(np.zeros(3), {"w": np.zeros((2, 2))})
    assert describe_difference(old, key(np.zeros(4), {"w": np.zeros((2, 2))}), names) == (
        "argument 'x': shape (3,) -> (4,)")
    assert describe_difference(old, key(np.zeros(3, np.float32), {"w": np.zeros((2, 2))}),
                               names) == "argument 'x': dtype float64 -> float32"
    assert describe_difference(old, key(np.zeros(3), {"w": np.zeros(2)}), names) == (
        "argument 'params'['w']: shape (2, 2) -> (2,)")
    assert describe_difference(old, key(np.zeros(3), {"v": np.zeros(2)}), names) == (
        "argument 'params': keys ['w'] -> ['v']")
    assert describe_difference(key(1), key(2), names) == "argument 'x': int 1 -> int 2"
    assert describe_difference(key(1), key(1.0), names) == "argument 'x': int 1 -> float 1.0"
    assert describe_difference(key(np.zeros(3)), key(3.0), names) == (
        "argument 'x': an array f64[3] -> float 3.0")
    assert describe_difference(key(1, scale=1), key(1, scale=2), names) == (
        "argument 'scale': int 1 -> int 2")
    assert describe_difference(key(1), key(1, 2), names) == (
        "number of positional arguments: 1 -> 2")


def test_describe_difference_of_dicts_with_keys_of_mixed_types():
    """Keys that Python cannot order (0 and "bias") in the one order pytrees use."""
    first = key({0: np.zeros(2), "bias": np.ones(2)})
    assert describe_difference(first, key({"bias": np.ones(2), 0: np.zeros(2)}), ("d",)) == (
        "argument 'd': the order of its keys [0, 'bias'] -> ['bias', 0]")
    assert describe_difference(first, key({1: np.zeros(2), "bias": np.ones(2)}), ("d",)) == (
        "argument 'd': keys ['bias', 0] -> ['bias', 1]")


def test_a_traced_function_retraced_for_a_dict_with_keys_of_mixed_types():
    total = autotrace.function(lambda d: d[0] + 2.0 * d["bias"])
    for d in ({0: np.zeros(2), "bias": np.ones(2)}, {"bias": np.ones(2), 0: np.zeros(2)},
              {0: np.ones(2), "bias": np.ones(2)}):
        np.testing.assert_array_equal(total(d), d[0] + 2.0 * d["bias"])


# --- reduce_retracing: widening a signature ----------------------------------------------------

def test_a_dimension_seen_with_two_sizes_becomes_unknown():
    reducer = RetracingReducer()
    assert reducer.generalize(key(np.zeros((2, 3)), 1)) is None      # first: as it is
    assert reducer.generalize(key(np.zeros((2, 3)), 1)) is None      # the same sizes
    general = reducer.generalize(key(np.zeros((5, 3)), 1))
    assert general == ((("array", (None, 3), np.dtype("float64"), "cpu"), (int, 1)), ())
    assert reducer.generalize(key(np.zeros((7, 3)), 1)) == general  # later sizes: the same
    assert reducer.generalize(key(np.zeros((7, 4)), 1)) == (
        (("array", (None, None), np.dtype("float64"), "cpu"), (int, 1)), ())


def test_families_are_apart_by_everything_but_sizes():
    reducer = RetracingReducer()
    reducer.generalize(key(np.zeros(2), "relu"))
    assert reducer.generalize(key(np.zeros(3), "tanh")) is None       # another string
    assert reducer.generalize(key(np.zeros((3, 1)), "relu")) is None  # another rank
    assert reducer.generalize(key(np.zeros(3, np.float32), "relu")) is None  # another dtype
    assert reducer.generalize(key(np.zeros(3), "relu")) is not None


def test_a_family_given_up_is_traced_with_its_sizes():
    reducer = RetracingReducer()
    reducer.generalize(key(np.zeros(2)))
    reducer.give_up(key(np.zeros(3)))
    assert reducer.generalize(key(np.zeros(4))) is None


def test_the_families_remembered_are_bounded():
    reducer = RetracingReducer(maxsize=2)
    for n in range(3):
        reducer.generalize(key(np.zeros(2), n))
    assert reducer.generalize(key(np.zeros(3), 0)) is None            # forgotten: first again
    assert reducer.generalize(key(np.zeros(3), 2)) is not None


def test_placeholders_take_the_widened_types_in_graph_input_order():
    args, kwargs = ({"z": np.zeros((2, 3)), "y": np.zeros(4, np.int32)}, 1.5), {"w": np.zeros(2)}
    general = (((("dict", ("y", ("array", (None,), np.dtype("int32"), "cpu")),
                  ("z", ("array", (None, 3), np.dtype("float64"), "cpu"))), (float, 1.5)),
                (("w", ("array", (2,), np.dtype("float64"), "cpu")),)))
    assert [str(aval) for aval in general_avals(general)] == ["i32[?]", "f64[?,3]", "f64[2]"]
    traced_args, traced_kwargs = placeholders_for(args, kwargs, general)
    assert str(traced_args[0]["z"].aval) == "f64[?,3]" and traced_args[1] == 1.5
    assert str(traced_args[0]["y"].aval) == "i32[?]" and str(traced_kwargs["w"].aval) == "f64[2]"
    graph, _ = trace(lambda p, s, w: p["z"] * s, traced_args, traced_kwargs)
    assert str(graph).startswith("{ lambda a:i32[?] b:f64[?,3] w:f64[2] ;")  # w: its keyword
