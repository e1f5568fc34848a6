"""Refusals that name what the user wrote, and np.take's boolean indices under vmap.

A call that writes an object's state inside a traced loop, under a second derivative traced
by autotrace.function, is refused with what it writes and where, not with the internal record
generated code keeps. np.take reads boolean indices as 0 and 1 (not as a mask, as indexing
does), batched too. A traced np.bincount of booleans asks for minlength=2."""
import os

import numpy as np
import pytest

import autotrace
from autotrace.runtime.primitives.registry import UntraceableError
from autotrace.runtime.tracing.control import ControlFlowError
from tests.numeric import central_difference


class _Counter:
    def __init__(self):
        self.n = 0

    def step(self, v):
        self.n += 1  # the write the refusal names
        return v * 1.1


def _count_until_large(x):
    counter, v = _Counter(), x[0]
    for i in range(6):  # the loop the refusal names
        v = counter.step(v) + x[1] * x[2]
        if v > 1.0:
            break
    return v * counter.n


def _line_of(text: str) -> int:
    with open(__file__) as source:
        return next(number for number, line in enumerate(source, 1) if text in line)


@pytest.mark.parametrize("second", [autotrace.hessian,
                                    lambda f: autotrace.jacfwd(autotrace.grad(f))])
def test_a_state_write_in_a_traced_loop_under_a_second_derivative_names_the_write(second):
    x = np.array([0.3, -0.4, 0.5])
    with pytest.raises(ControlFlowError) as error:
        autotrace.function(second(_count_until_large))(x)
    message = str(error.value)
    loop, write = _line_of("# the loop the refusal"), _line_of("# the write the refusal")
    assert message.startswith(f"{__file__}:{loop}: for i in range(6):  # the loop the refusal names "
                              f"(derivative code ")
    assert (f"a call in this for loop writes into an object's state (attribute 'n' of a "
            f"_Counter, written at {os.path.basename(__file__)}:{write}), and autotrace "
            f"cannot trace a second derivative (a derivative of a derivative under "
            f"autotrace.function) of a call that writes state inside a traced loop or if: its "
            f"writes would be noted once, while the body is traced, and read back for every "
            f"run of it. Move the state write (or the call) out of the for loop, or take the "
            f"second derivative eagerly: autotrace.hessian(f) without autotrace.function"
            ) in message
    assert "_written" not in message and "StateLog" not in message


X = np.array([[0.3, -1.2, 0.8], [1.5, 0.25, -0.6]])
M = np.array([True, False, True, True])  # np.take reads it as the indices 1, 0, 1, 1


def _flat(x):
    return np.sum(np.take(x, M) * np.arange(4.0))


def _axis1(x):
    return np.sum(np.take(x, M, axis=1) * np.arange(8.0).reshape(2, 4))


def _method(x):
    return np.sum(x.take(M, axis=0) ** 2 * np.arange(12.0).reshape(4, 3))


def _traced_mask(x):
    return np.sum(np.take(x, x[0] > 0, axis=1) * np.arange(6.0).reshape(2, 3))


def _scalar(x):
    return np.take(x, True) * x[1, 1]


@pytest.mark.parametrize("f", [_flat, _axis1, _method, _traced_mask, _scalar])
def test_vmap_of_take_with_boolean_indices_is_a_loop_of_it(f):
    batch = np.stack([X, -0.5 * X, X[::-1]])
    expected = np.stack([autotrace.grad(f)(x) for x in batch])
    np.testing.assert_allclose(expected[0], central_difference(f, X), rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(autotrace.vmap(autotrace.grad(f))(batch), expected, rtol=1e-12)
    np.testing.assert_allclose(autotrace.vmap(f)(batch), [f(x) for x in batch], rtol=1e-12)


def test_traced_bincount_of_booleans_asks_for_minlength_2():
    def counts(x):
        return np.sum(np.bincount(x > 0) * 1.0)

    with pytest.raises(UntraceableError) as error:
        autotrace.function(counts)(X[0])
    assert ("np.bincount of a traced boolean x: the length of its result, max(x) + 1, is 1 or "
            "2 by the values of x, not known while tracing; give minlength=2 (bins for False "
            "and True)") in str(error.value)
    fixed = autotrace.function(lambda x: np.sum(np.bincount(x > 0, minlength=2) * np.array([1.0, 3.0])))
    assert fixed(X[0]) == 7.0


def test_a_traced_array_of_ints_times_a_list_multiplies_element_by_element():
    # a 0-d traced int times a list is refused (Python would repeat the list); an array of
    # ints of one or more dimensions is multiplied by it element by element, as NumPy does
    def counts_weighted(x):
        return np.bincount(x > 0, minlength=2) * [1.0, 3.0]
    x = np.array([0.5, -1.0, 2.0])
    result = autotrace.function(counts_weighted)(x)
    np.testing.assert_array_equal(result, [1.0, 6.0])
    assert result.dtype == counts_weighted(x).dtype
