"""Python tests on a size known only when the graph runs (a dimension None in a Spec, or one
reduce_retracing widened): `x.shape[0] == 1` cannot be answered for every size the trace
serves, so it is refused (runtime/unknown_sizes.py). reduce_retracing then traces for each
size, which computes what NumPy computes; an input_signature's trace names the line."""
import inspect
import re

import numpy as np
import pytest

import autotrace
from autotrace import Spec
from autotrace.runtime.abstract import UnknownSizeError
from tests.numeric import central_difference


def center(x):
    if x.shape[0] == 1:  # a single row: nothing to center
        return x
    return x - x.mean(axis=0)


SIZE_TESTS = {
    "equal": center,
    "not equal": lambda x: x - x.mean(axis=0) if x.shape[0] != 1 else x,
    "tuple": lambda x: x * 2.0 if x.shape == (1, 2) else x,
    "truth": lambda x: x * 2.0 if x.shape[0] - 1 else x,
    "in": lambda x: x * 2.0 if x.shape[0] in (1, 2) else x,
    "len": lambda x: x * 2.0 if len(x) == 1 else x,
    "size": lambda x: x * 2.0 if x.size == 2 else x,
    "np.shape": lambda x: x * 2.0 if np.shape(x)[0] == 1 else x,
    "range": lambda x: sum(x[i] for i in range(x.shape[0])),
    "is None": lambda x: x * 2.0 if x.shape[0] is None else x,  # False, as for every array
    "== None": lambda x: x * 2.0 if x.shape[0] == None else x,  # noqa: E711
}


@pytest.mark.filterwarnings("ignore:.* was traced")  # once for each size, here
@pytest.mark.parametrize("function", SIZE_TESTS.values(), ids=SIZE_TESTS.keys())
def test_reduce_retracing_answers_a_size_test_as_numpy_does(function):
    traced = autotrace.function(function, reduce_retracing=True)
    for rows in (3, 5, 1, 2, 1, 4):
        x = np.arange(rows * 2.0).reshape(rows, 2) + 1.0
        np.testing.assert_array_equal(traced(x), function(x), err_msg=f"{rows} rows")


def test_the_widened_trace_still_serves_sizes_no_python_test_reads():
    traced = autotrace.function(lambda x: x.reshape(x.shape[0], -1) * float(x.shape[1]),
                                reduce_retracing=True)
    for rows in (3, 5, 1, 7):
        x = np.ones((rows, 2, 2))
        np.testing.assert_array_equal(traced(x), x.reshape(rows, -1) * 2.0)
    assert traced.trace_count == 2  # the sizes met first, then one trace for every size


def test_a_traced_gradient_with_reduce_retracing_takes_numpy_branch():
    def loss(x):
        if x.shape[0] == 1:
            return np.sum(x ** 2)
        return np.sum((x - x.mean(axis=0)) ** 3)
    traced = autotrace.function(autotrace.grad(loss), reduce_retracing=True)
    for rows in (3, 5, 1):
        x = np.linspace(0.5, 1.5, rows * 2).reshape(rows, 2)
        np.testing.assert_allclose(traced(x), central_difference(loss, x), rtol=1e-6,
                                   atol=1e-8)


@pytest.mark.parametrize("function, what", [
    (center, "comparing a size with 1 (==, !=, in)"),
    (SIZE_TESTS["tuple"], "comparing a size with 1 (==, !=, in)"),
    (SIZE_TESTS["truth"], "arithmetic on a size"),
    (SIZE_TESTS["in"], "comparing a size with 1 (==, !=, in)"),
    (SIZE_TESTS["np.shape"], "comparing a size with 1 (==, !=, in)"),
    (SIZE_TESTS["range"], "using a size as a Python int (range, np.zeros, an index)"),
    (lambda x: x.sum(axis=0) / x.shape[0], "computing with a size in a traced NumPy call"),
    (lambda x: x * 2.0 if x.shape[0] else x, "testing a size's truth (if x.shape[0]:)"),
    (lambda x: x * 2.0 if x.shape[0] > 1 else x, "ordering a size (<, <=, >, >=)"),
    (lambda x: np.sum(x, axis=x.shape[0]), "giving a size as the axis of numpy.sum"),
])
def test_an_input_signature_refuses_a_size_test_at_the_users_line(function, what):
    traced = autotrace.function(function, input_signature=[Spec((None, 2))])
    with pytest.raises(UnknownSizeError, match=(
            f"^{re.escape(what)} needs the size of axis 0 of a traced array \\(f64\\[\\?,2\\]\\), which "
            f"is known only when the graph runs")) as error:
        traced(np.ones((1, 2)))
    lines, first = inspect.getsourcelines(function)
    assert f'File "{__file__}", line ' in str(error.value)
    line = int(str(error.value).split(f'File "{__file__}", line ')[1].split(",")[0])
    assert first <= line < first + len(lines)


def test_an_input_signature_still_reads_known_sizes_and_passes_shapes_back():
    @autotrace.function(input_signature=[Spec((None, 2))])
    def rows(x):
        assert x.shape[1] == 2 and x.ndim == 2 and x.shape == x.shape
        assert x.shape[0] is not None and x.shape[0] != "rows"
        return x.reshape(x.shape[0], -1) + np.zeros_like(x, shape=x.shape)
    for count in (1, 4):
        np.testing.assert_array_equal(rows(np.ones((count, 2))), np.ones((count, 2)))
    assert rows.trace_count == 1
