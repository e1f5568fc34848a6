"""A called function's derivative runs in halves (runtime/derivatives/sweeps.py): its primal
sweep where the call is, its adjoint sweep where the caller's reaches the call. A call inside
an `if` or a loop runs whole, since traced such a branch or loop body is a graph of its own.
Both agree with central differences, eagerly and traced, on traced conditions too."""
import numpy as np
import pytest

import autotrace
from autotrace.runtime.branch_writes import BranchStateError
from tests.numeric import central_difference

X = np.array([0.3, 0.5, 0.9])


class Runs:
    count = 0


RUNS = Runs()


def g(x):
    return np.sin(x) * x


def counted_g(x):
    RUNS.count += 1
    return np.sin(x) * x


def called_at_the_top(x):
    return np.sum(counted_g(x) ** 2)


def called_in_branches_and_loops(x):
    if np.sum(x) > 0:
        y = g(x)
    else:
        y = x * 2.0
    k = 0
    while np.sum(y) < 10.0 and k < 5:
        y = g(y) + 1.0
        k += 1
    return np.sum(y)


@pytest.mark.parametrize("f", [called_at_the_top, called_in_branches_and_loops])
@pytest.mark.parametrize("x", [X, -X], ids=["positive", "negative"])
def test_calls_agree_with_central_differences_eager_and_traced(f, x):
    expected = central_difference(f, x)
    np.testing.assert_allclose(autotrace.grad(f)(x), expected, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(autotrace.function(autotrace.grad(f))(x), expected, rtol=1e-6,
                               atol=1e-8)


def test_a_call_at_the_top_runs_once_and_reads_in_halves():
    RUNS.count = 0
    autotrace.grad(called_at_the_top)(X)
    assert RUNS.count == 1
    source = autotrace.source(autotrace.grad(called_at_the_top))
    assert "_adjoint1 = dcounted_g(x)\n    _t1 = primal_sweep(_adjoint1)" in source
    assert "_grads1 = adjoint_sweep(_adjoint1, " in source


class Counted:
    def __init__(self):
        self.calls = 0

    def step(self, x):
        self.calls += 1  # counted
        return np.tanh(x)


def stepped_in_a_loop(x, model):
    for _ in range(2):
        x = model.step(x)
    return np.sum(x)


def stepped_while_small(x, model):
    while np.sum(x) < 2.0:
        x = model.step(x) + 1.0
    return np.sum(x)


def test_a_function_called_in_a_loop_writes_its_state_once_per_call():
    model = Counted()
    expected = central_difference(lambda x: stepped_in_a_loop(x, Counted()), X)
    np.testing.assert_allclose(autotrace.grad(stepped_in_a_loop)(X, model), expected,
                               rtol=1e-6, atol=1e-8)
    assert model.calls == 2
    traced = autotrace.function(autotrace.grad(stepped_in_a_loop))
    np.testing.assert_allclose(traced(X, model), expected, rtol=1e-6, atol=1e-8)
    assert model.calls == 4  # traced once: a loop over a Python range is unrolled


def test_a_write_in_a_function_called_in_a_traced_loop_is_refused():
    # A loop on a traced value is a graph of its own: its body is traced once, so the Python
    # number the call counts cannot follow how often it runs (runtime/branch_writes.py).
    model = Counted()
    assert autotrace.grad(stepped_while_small)(X, model).shape == X.shape  # eagerly: runs
    with pytest.raises(BranchStateError) as raised:
        autotrace.function(autotrace.grad(stepped_while_small))(X, model)
    line = stepped_while_small.__code__.co_firstlineno + 1
    assert str(raised.value).startswith(
        f"test_split_calls.py:{line}: the body of this while loop on a traced value (while "
        "np.sum(x) < 2.0: ")
    assert "changes the Python number model.calls (from 1 to 2)" in str(raised.value)
