"""The per-thread stacks of runtime/state.py (ThreadStack) and the seed a gradient starts from
(runtime/derivatives/structure.py `seed`), in the cases their quick answers cover: a thread
that pushed nothing, and a loss that is a NumPy scalar of each inexact dtype."""
import threading

import numpy as np
import pytest

import autotrace
from autotrace.runtime.derivatives.structure import ones_like, seed
from autotrace.runtime.state import ThreadStack


def test_a_thread_stack_is_empty_in_each_new_thread_and_keeps_its_own_items():
    stack = ThreadStack()
    assert stack.top() is None
    seen = {}

    def other():
        seen["before"] = stack.top()
        with stack.pushed("other"):
            seen["inside"] = stack.top()
        seen["after"] = stack.top()

    with stack.pushed("outer"):
        with stack.pushed("inner"):
            thread = threading.Thread(target=other)
            thread.start()
            thread.join()
            assert stack.top() == "inner"
        assert stack.top() == "outer"
    assert stack.top() is None
    assert seen == {"before": None, "inside": "other", "after": None}


def test_a_thread_stack_pops_what_an_error_left():
    stack = ThreadStack()
    with pytest.raises(KeyError):
        with stack.pushed(1):
            raise KeyError("x")
    assert stack.top() is None


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64, np.longdouble,
                                   np.complex64, np.complex128])
def test_the_seed_of_a_numpy_scalar_is_one_of_its_dtype(dtype):
    value = dtype(2.5)
    started = seed(value, None)
    assert type(started) is dtype and started == 1
    general = ones_like(value)  # what the general path gives
    assert type(general) is type(started) and general == started


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
def test_gradients_of_scalar_losses_keep_the_dtype(dtype):
    x = np.array([0.5, -1.0, 2.0], dtype=dtype)
    gradient = autotrace.grad(lambda x: np.sum(x * x) / 2)(x)
    assert gradient.dtype == dtype
    np.testing.assert_array_equal(gradient, x)


def test_a_loss_of_integers_is_still_refused_without_dy():
    with pytest.raises(TypeError, match="integers carry no gradient"):
        autotrace.grad(lambda x: np.sum(x > 0) + np.int64(1))(np.ones(3))
