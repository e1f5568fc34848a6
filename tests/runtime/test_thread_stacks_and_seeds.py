"""The per-thread stacks of runtime/state.py (ThreadStack) and the seed a gradient starts from
(runtime/derivatives/structure.py `seed`), in the cases their quick answers cover: a thread
that pushed nothing, a loss that is a NumPy scalar of each inexact dtype; and whether a value
is complex (runtime/derivatives/real_only.py `is_complex`), which every seed and match asks;
and the copy `match` makes of a gradient that shares an argument's memory, and only of one."""
import sys
import threading

import numpy as np
import pytest

import autotrace
from autotrace.runtime.derivatives.fresh_memory import _apart_from_arguments
from autotrace.runtime.derivatives.real_only import is_complex
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


class _OtherLibraryArray:
    """An array of another library, whose dtype is not NumPy's (torch.complex64 prints so)."""

    def __init__(self, dtype_name):
        self.dtype = type("OtherDtype", (), {"__str__": lambda self: dtype_name})()


@pytest.mark.parametrize("value, expected", [
    (np.ones(2, np.complex64), True), (np.complex128(1j), True), (np.ones(2), False),
    (np.float32(1.0), False), (np.arange(3), False), (np.ones(2, bool), False),
    (1j, True), (1.0, False), (3, False), ([1.0, 2j], True), ((1.0, 2.0), False),
    (_OtherLibraryArray("torch.complex64"), True), (_OtherLibraryArray("torch.float32"), False),
])
def test_is_complex_reads_numpy_dtypes_by_kind_and_others_by_name(value, expected):
    assert is_complex(value) is expected


def test_a_float_arguments_gradient_through_complex_values_is_its_real_part():
    gradient = autotrace.grad(lambda x: np.real(np.exp(1j * x)))(0.3)
    assert type(gradient) is float
    assert gradient == pytest.approx(-np.sin(0.3), rel=1e-15)


def test_a_complex_tangent_of_a_real_argument_is_refused():
    with pytest.raises(TypeError, match="the tangent of x is complex, but x is real"):
        autotrace.forward(lambda x: np.sin(x))(np.ones(2), tangent=np.ones(2, np.complex128))


def _gradient_handed_back(gradient, x, others):
    """What `match`'s last step gives back of `gradient` in a derivative of (x, others)."""
    def derivative(x, others, *, dy=None):
        return _apart_from_arguments(gradient, sys._getframe(0))
    return derivative(x, others)


@pytest.mark.parametrize("case", ["the argument", "base of a view argument",
                                  "held in a list argument", "a view of an argument"])
def test_a_gradient_sharing_an_arguments_memory_is_copied(case):
    x, mine = np.arange(4.0), np.arange(4.0) * 2
    gradient, others = {"the argument": (x, []), "base of a view argument": (mine, [mine[1:]]),
                        "held in a list argument": (mine, [mine]),
                        "a view of an argument": (x[::2], [])}[case]
    handed = _gradient_handed_back(gradient, x, others)
    assert handed is not gradient and not np.shares_memory(handed, gradient)
    np.testing.assert_array_equal(handed, gradient)


def test_a_gradient_of_its_own_memory_is_handed_back_as_it_is():
    gradient = np.ones(3)
    assert _gradient_handed_back(gradient, np.ones(3), [np.zeros(2)]) is gradient


def test_the_seed_of_an_array_given_dy_is_dy_itself_or_made_complex_for_a_complex_value():
    dy = np.arange(3.0)
    assert seed(np.ones(3), dy) is dy
    assert seed(np.ones(3, np.complex128), np.ones(3, np.complex64)).dtype == np.complex64
    started = seed(np.ones(3, np.complex64), dy)  # a real dy of a complex output: complex
    assert started.dtype == np.complex128
    np.testing.assert_array_equal(started, dy)
    assert seed(np.arange(3), dy) is dy  # an integer output: no gradient to check


def test_a_seed_of_the_wrong_shape_is_refused_for_arrays_too():
    with pytest.raises(ValueError, match=r"dy has shape \(4,\), but the output has shape "
                                         r"\(3,\): dy is its gradient, shaped like it"):
        seed(np.ones(3), np.ones(4))
