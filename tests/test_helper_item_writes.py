"""A helper writing one item of the caller's NumPy array with a traced value: refused with its
line and what to do, as the same write in a helper with an `if` is, where NumPy raised
"setting an array element with a sequence"; writes the trace can follow give NumPy's values."""
import numpy as np
import pytest

import autotrace
from autotrace.runtime.tracing.control_scope import ControlFlowError

X = np.array([0.5, -1.0, 2.0])


def fill_first(buf, v):
    buf[0] = v * 2


LINE = fill_first.__code__.co_firstlineno + 1  # the line of its write


def fills_its_own_array(x):
    y = np.ones(3)
    fill_first(y, x[0])
    return y * x


def fills_an_array_made_traced(x):
    y = np.ones_like(x)
    fill_first(y, x[0])
    return y * x


def fills_with_a_constant(x):
    y = np.ones(3)
    fill_first(y, 4.0)
    return y * x


def fills_inline(x):
    y = np.ones(3)
    y[0] = x[0] * 2
    return y * x


def expected_refusal(name: str = "buf") -> str:
    return (f"{__file__}:{LINE}: buf[0] = v * 2\n  this writes traced values into the NumPy "
            f"array {name!r}, which may be the argument 'buf' of fill_first: autotrace cannot "
            "make the caller's array traced in place, and the caller would see the old "
            "contents. Make the array traced where the caller makes it (np.zeros_like(x, "
            "shape=...), x a traced value), or write into a copy made here and return it "
            "(buf = buf.copy())")


@pytest.mark.parametrize("run", [
    lambda f: autotrace.function(f)(X),
    lambda f: autotrace.vmap(f)(np.stack([X, -X])),
], ids=["function", "vmap"])
def test_an_item_write_into_the_callers_numpy_array_is_refused_with_its_line(run):
    with pytest.raises(ControlFlowError) as caught:
        run(fills_its_own_array)
    assert str(caught.value).startswith(expected_refusal())


@pytest.mark.parametrize("f", [fills_an_array_made_traced, fills_with_a_constant, fills_inline],
                         ids=lambda f: f.__name__)
def test_item_writes_the_trace_follows_give_numpys_values(f):
    np.testing.assert_allclose(autotrace.function(f)(X), f(X.copy()), rtol=1e-15)
    batch = np.stack([X, -X, 2.0 * X])
    np.testing.assert_allclose(autotrace.vmap(f)(batch), np.stack([f(row) for row in batch]),
                               rtol=1e-15)
