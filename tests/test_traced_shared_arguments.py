"""Arguments that share memory in traced gradients: a gradient that writes into (a copy of) an
argument refuses, as the eager gradient does, where the caller passes it memory another
argument or item shares (transforms/front/shared_items.py), also in autotrace.function, vmap,
a trace with an input_signature, a concrete function, a traced loop, and a gradient taken
inside a traced function; where the arrays share no element, each gives NumPy's gradient
(computed by hand here).
"""
import re

import numpy as np
import pytest

import autotrace
from autotrace.runtime.tracing.signature import describe_difference, signature_and_arrays
from autotrace.transforms.errors import TransformError


def scaled_product(x, y):
    x *= 2.0
    return np.sum(x * y)


def product(x, y):
    return np.sum(x * y)


def first_item_scaled(L):
    L[0] *= 2.0
    return np.sum(L[0] * L[1])


def first_item_scaled_in_a_loop(L, n):
    for i in range(n):
        L[0] *= 2.0
    return np.sum(L[0] * L[1])


def gradient_of_overlapping_items(M):
    return autotrace.grad(first_item_scaled)([M[:3], M[1:4]])


def gradient_of_disjoint_items(M):
    return autotrace.grad(first_item_scaled)([M[:3], M[3:]])


def gradient_of_overlapping_items_in_a_loop(M, n):
    return autotrace.grad(first_item_scaled_in_a_loop)([M[:3], M[1:4]], n)


ARGUMENT_REFUSAL = (r"line 19: the function changes argument 'x' in place \(x \*= \.\.\.\), "
                    r"and argument 'y' shares its memory")
ITEM_REFUSAL = r"L\[0\] \*= \.\.\. changes the item L\[0\] in place where it is an array"


def _message(call) -> str:
    with pytest.raises(TransformError) as raised:
        call()
    return str(raised.value)


def test_a_traced_gradient_refuses_one_array_passed_twice_as_the_eager_one_does():
    x = np.array([1.0, 2.0, 3.0])
    traced = autotrace.function(autotrace.grad(scaled_product))
    np.testing.assert_array_equal(traced(x, x.copy()), 2.0 * x)  # d/dx sum(2x * y) = 2y
    eager = _message(lambda: autotrace.grad(scaled_product)(x, x))
    assert re.search(ARGUMENT_REFUSAL, eager)
    assert _message(lambda: traced(x, x)) == eager
    # The trace for separate arrays still serves them; the caller's arrays are unchanged.
    np.testing.assert_array_equal(traced(x, x.copy()), 2.0 * x)
    np.testing.assert_array_equal(x, [1.0, 2.0, 3.0])
    assert _message(lambda: traced(x, x)) == eager


def test_overlapping_views_are_refused_and_disjoint_views_of_one_array_are_not():
    M = np.arange(1.0, 7.0)
    traced = autotrace.function(autotrace.grad(scaled_product))
    assert re.search(ARGUMENT_REFUSAL, _message(lambda: traced(M[:3], M[1:4])))
    assert re.search(ARGUMENT_REFUSAL, _message(lambda: traced(M[:4:2], M[2::2])))
    np.testing.assert_array_equal(traced(M[:3], M[3:]), 2.0 * M[3:])
    np.testing.assert_array_equal(traced(M[::2], M[1::2]), 2.0 * M[1::2])
    np.testing.assert_array_equal(M, np.arange(1.0, 7.0))


def test_a_traced_gradient_refuses_list_items_that_share_memory():
    M = np.arange(1.0, 7.0)
    traced = autotrace.function(autotrace.grad(first_item_scaled))
    a, b = M[:3], M[3:]
    got = traced([a, b])  # d/da sum(2a * b) = 2b, d/db = 2a
    np.testing.assert_array_equal(got[0], 2.0 * b)
    np.testing.assert_array_equal(got[1], 2.0 * a)
    for items in ([M[:3], M[:3]], [M[:3], M[1:4]]):
        eager = _message(lambda: autotrace.grad(first_item_scaled)(items))
        assert re.search(ITEM_REFUSAL, eager)
        assert _message(lambda: traced(items)) == eager


def test_a_traced_loop_refuses_list_items_that_share_memory():
    M = np.arange(1.0, 7.0)
    n = np.int64(2)  # a traced loop: L[0] is scaled by 4
    traced = autotrace.function(autotrace.grad(first_item_scaled_in_a_loop))
    got = traced([M[:3], M[3:]], n)
    np.testing.assert_array_equal(got[0], 4.0 * M[3:])
    np.testing.assert_array_equal(got[1], 4.0 * M[:3])
    for items in ([M[:3], M[:3]], [M[:3], M[1:4]]):
        assert re.search(ITEM_REFUSAL, _message(lambda: traced(items, n)))
    # Views of one array made inside the traced function, taken into the loop
    assert re.search(ITEM_REFUSAL, _message(
        lambda: autotrace.function(gradient_of_overlapping_items_in_a_loop)(M, n)))


def test_a_gradient_inside_a_traced_function_refuses_items_viewing_one_array():
    M = np.arange(1.0, 7.0)
    for function in (gradient_of_overlapping_items, autotrace.function(
            gradient_of_overlapping_items)):
        assert re.search(ITEM_REFUSAL, _message(lambda: function(M)))
    got = autotrace.function(gradient_of_disjoint_items)(M)
    np.testing.assert_array_equal(got[0], 2.0 * M[3:])
    np.testing.assert_array_equal(got[1], 2.0 * M[:3])


def test_vmap_of_a_gradient_refuses_arguments_that_share_memory():
    B = np.arange(1.0, 7.0).reshape(2, 3)
    batched = autotrace.vmap(autotrace.grad(scaled_product))
    np.testing.assert_array_equal(batched(B, B.copy()), 2.0 * B)
    assert re.search(ARGUMENT_REFUSAL, _message(lambda: batched(B, B)))
    assert re.search(ARGUMENT_REFUSAL, _message(lambda: batched(B[:, :2], B[:, 1:])))
    # Reading alone, one array twice is two arguments: d/dx sum(x * y) = y
    np.testing.assert_array_equal(autotrace.vmap(autotrace.grad(product))(B, B), B)


def test_an_input_signature_trace_refuses_arrays_that_share_memory():
    x = np.array([1.0, 2.0, 3.0])
    spec = autotrace.Spec((3,))
    traced = autotrace.function(autotrace.grad(scaled_product), input_signature=[spec, spec])
    np.testing.assert_array_equal(traced(x, x.copy()), 2.0 * x)
    with pytest.raises(TypeError, match=r"this call passes arrays that share memory \(array "
                                        r"arguments 1 and 2, counted from 1\)"):
        traced(x, x)
    reading = autotrace.function(autotrace.grad(product), input_signature=[spec, spec])
    np.testing.assert_array_equal(reading(x, x), x)


def test_a_concrete_function_refuses_arrays_that_share_memory_where_it_writes():
    x = np.array([1.0, 2.0, 3.0])
    spec = autotrace.Spec((3,))
    concrete = autotrace.function(autotrace.grad(scaled_product)).get_concrete_function(
        spec, spec)
    np.testing.assert_array_equal(concrete(x, x.copy()), 2.0 * x)
    with pytest.raises(TypeError, match="this call differs in array arguments that share "
                                        "memory: none -> leaves 1 and 2"):
        concrete(x, x)
    reading = autotrace.function(autotrace.grad(product)).get_concrete_function(spec, spec)
    np.testing.assert_array_equal(reading(x, x), x)


def test_functions_that_only_read_keep_one_trace_for_arrays_that_share_memory():
    x = np.array([1.0, 2.0, 3.0])
    for function, want in ((product, 14.0), (autotrace.grad(product), x)):
        traced = autotrace.function(function)
        np.testing.assert_array_equal(traced(x, x.copy()), want)
        np.testing.assert_array_equal(traced(x[:], x), want)
        assert traced.trace_count == 1
        # (one array passed twice is keyed apart all the same: `x is y` answers True there)
        np.testing.assert_array_equal(traced(x, x), want)
        assert traced.trace_count == 2


def test_the_signature_keys_arrays_that_share_memory_where_asked():
    x, y = np.ones(3), np.ones(3)
    separate, _ = signature_and_arrays((x, y), {}, memory=True)
    same, _ = signature_and_arrays((x, x), {}, memory=True)
    views, _ = signature_and_arrays((x[:2], 1.0, x[1:], x[2:], y), {}, memory=True)
    assert len(separate) == 2 and same[2] == ((0, 1),) and views[2] == ((0, 1), (1, 2))
    # not asked: keyed as before, but for one array passed twice (`x is y`: same_objects)
    from autotrace.runtime.tracing.signature import SAME_OBJECTS
    assert signature_and_arrays((x[:2], 1.0, x[1:], x[2:], y), {})[0] == \
        signature_and_arrays((x[:2], 1.0, x[1:], x[2:].copy(), y), {})[0]
    assert signature_and_arrays((x, x), {})[0] == (*separate, (SAME_OBJECTS, ((0, 1),)))
    assert describe_difference(separate, same, ("x", "y")) == \
        "array arguments that share memory: none -> leaves 1 and 2"


def scales_an_item_read_with_the_third(L):
    L[0] *= 2.0
    return np.sum(L[0] * L[2])


def gradient_of_views_of_arguments(x, y):
    return autotrace.grad(scaled_product)(x[:2], y[2:])


def gradient_of_a_view_chosen_by_a_condition(M, offset):
    if np.sum(M) > 0.0:
        a = M[:3]
    else:
        a = M[6:9]
    return autotrace.grad(first_item_scaled)([a, M[offset:offset + 3]])


def gradient_of_reshaped_views(A, start):
    return autotrace.grad(first_item_scaled)([A.reshape(-1)[:3], np.ravel(A)[start:start + 3]])


def test_views_of_an_array_passed_twice_are_followed_element_by_element():
    A = np.arange(1.0, 5.0)
    traced = autotrace.function(gradient_of_views_of_arguments)
    np.testing.assert_array_equal(traced(A, A), 2.0 * A[2:])  # A[:2] and A[2:]: disjoint
    np.testing.assert_array_equal(A, np.arange(1.0, 5.0))
    # Items that share memory with a third one alone, not with each other: followed
    M = np.arange(1.0, 8.0)
    got = autotrace.function(autotrace.grad(scales_an_item_read_with_the_third))(
        [M[:3], M[2:5], M[4:7]])
    np.testing.assert_array_equal(got[0], 2.0 * M[4:7])
    np.testing.assert_array_equal(got[2], 2.0 * M[:3])


def test_views_chosen_by_a_traced_condition_or_reshaped_are_followed():
    M = np.arange(1.0, 10.0)
    traced = autotrace.jit(gradient_of_a_view_chosen_by_a_condition, static_argnums=1)
    got = traced(M, 3)  # M[:3] (the condition holds) or M[6:9], beside M[3:6]: disjoint
    np.testing.assert_array_equal(got[0], 2.0 * M[3:6])
    np.testing.assert_array_equal(got[1], 2.0 * M[:3])
    assert re.search(ITEM_REFUSAL, _message(lambda: traced(M, 1)))  # M[1:4] meets M[:3]
    A = np.arange(1.0, 10.0).reshape(3, 3)
    reshaped = autotrace.jit(gradient_of_reshaped_views, static_argnums=1)
    got = reshaped(A, 6)
    np.testing.assert_array_equal(got[0], 2.0 * A.reshape(-1)[6:])
    assert re.search(ITEM_REFUSAL, _message(lambda: reshaped(A, 2)))


def test_vmap_follows_memory_shared_example_by_example():
    B = np.arange(1.0, 13.0).reshape(4, 3)
    batched = autotrace.vmap(autotrace.grad(scaled_product))
    # Example k pairs rows k and k + 1: the batches overlap, no example's arrays do
    np.testing.assert_array_equal(batched(B[:3], B[1:]), 2.0 * B[1:])
    assert re.search(ARGUMENT_REFUSAL, _message(lambda: batched(B[:3], B[:3])))
    # The same arrays' pairs sharing memory, the same shapes: keyed by the examples' sharing
    np.testing.assert_array_equal(batched(B[:3], B[1:]), 2.0 * B[1:])
    assert re.search(ARGUMENT_REFUSAL, _message(lambda: batched(B[1:], B[1:])))
    # vmap inside a traced function: its leaves are traced values
    traced = autotrace.function(autotrace.vmap(autotrace.grad(scaled_product)))
    np.testing.assert_array_equal(traced(B, B.copy()), 2.0 * B)
    assert re.search(ARGUMENT_REFUSAL, _message(lambda: traced(B, B)))


def test_zero_d_arrays_subclasses_and_strided_views_that_share_memory_are_refused():
    from numpy.lib.stride_tricks import as_strided
    M = np.arange(9.0)
    traced = autotrace.function(autotrace.grad(scaled_product))
    zero_d = np.array(3.0)
    mapped = M[:3].view(np.memmap)  # an ndarray subclass
    pairs = [(zero_d, zero_d), (mapped, mapped),
             (as_strided(M, (3,), (8,)), as_strided(M[1:], (3,), (8,)))]
    for x, y in pairs:
        eager = _message(lambda: autotrace.grad(scaled_product)(x, y))
        assert re.search(ARGUMENT_REFUSAL, eager)
        assert _message(lambda: traced(x, y)) == eager
    disjoint = as_strided(M, (3,), (16,)), as_strided(M[1:], (3,), (16,))
    np.testing.assert_array_equal(traced(*disjoint), 2.0 * M[1::2][:3])


class Holder:
    def __init__(self, array):
        self.array = array


def scales_and_reads_the_holder(y, holder):
    z = y * 1.0
    y[0] = 5.0
    return np.sum(z * holder.array)


HOLDER_REFUSAL = (r"the function changes argument 'y' in place \(y\[0\] = \.\.\.\), and "
                  r"argument 'holder' shares its memory")


def test_an_object_holding_the_array_written_is_refused_traced_as_eagerly():
    y = np.array([1.0, 2.0, 3.0])
    eager = _message(lambda: autotrace.grad(scales_and_reads_the_holder)(y, Holder(y)))
    assert re.search(HOLDER_REFUSAL, eager)
    traced = autotrace.function(autotrace.grad(scales_and_reads_the_holder))
    assert _message(lambda: traced(y, Holder(y))) == eager
    assert _message(lambda: traced(y, Holder(y[::-1]))) == eager  # a view of it too
    # a holder of another array: d/dy sum(y * a) = a, NumPy's (the 5.0 goes to y alone)
    holder = Holder(np.array([2.0, 0.5, -1.0]))
    np.testing.assert_array_equal(traced(y, holder), holder.array)
    # the same holder made to hold y: the trace for separate memory does not serve it
    holder.array = y
    assert _message(lambda: traced(y, holder)) == eager
    np.testing.assert_array_equal(traced(y, Holder(y.copy())), y)
    np.testing.assert_array_equal(y, [1.0, 2.0, 3.0])  # the caller's array is unchanged


def test_the_signature_keys_arrays_an_object_argument_holds():
    x, y = np.ones(3), np.ones(3)
    apart, _ = signature_and_arrays((x, Holder(y)), {}, memory=True)
    holder = Holder([y, x[1:]])
    held, _ = signature_and_arrays((y, x, holder), {}, memory=True)
    assert len(apart) == 2 and held[2:] == ((), (0, 1))
    assert describe_difference(signature_and_arrays((y, x, Holder([])), {}, memory=True)[0],
                               held, ("y", "x", "holder")) != "no difference"


class Named:
    def __init__(self, array):
        self.params = [("w", array)]


def scales_and_reads_a_named_parameter(y, named):
    z = y * 1.0
    y[0] = 5.0
    return np.sum(z * named.params[0][1])


def test_an_array_an_object_holds_in_a_list_of_pairs_is_found():
    y = np.array([1.0, 2.0, 3.0])
    traced = autotrace.function(autotrace.grad(scales_and_reads_a_named_parameter))
    np.testing.assert_array_equal(traced(y, Named(np.array([2.0, 0.5, -1.0]))),
                                  [2.0, 0.5, -1.0])
    with pytest.raises(TransformError, match="argument 'named' shares its memory"):
        traced(y, Named(y))
