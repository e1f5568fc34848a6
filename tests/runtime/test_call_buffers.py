"""Buffers a compiled graph keeps from one call to the next (runtime/execution/call_buffers.py):
only arrays that die inside the call live there, never what the caller gets back."""
import re
import threading

import numpy as np
import pytest

from autotrace.runtime.backends.selection import backend_named
from autotrace.runtime.execution.executor import compile_graph
from autotrace.runtime.passes import optimize
from autotrace.runtime.tracing.control import while_loop
from autotrace.runtime.tracing.tracer import trace

rng = np.random.default_rng(7)
m34 = rng.standard_normal((3, 4))
m45 = rng.standard_normal((4, 5))
NUMPY = backend_named("numpy")


def _compiled(function, *args, backend=NUMPY):
    graph, _ = trace(function, args)
    return compile_graph(optimize(graph, backend=backend), name="g", backend=backend)


def test_an_array_that_dies_in_the_call_is_written_into_a_kept_buffer():
    run, source = _compiled(lambda x, w: np.sum(np.tanh(x @ w) * 2.0, axis=0), m34, m45)
    name = source.splitlines()[0][len("def "):source.index("(")]
    assert source.splitlines()[1:] == [
        f"    _kept = kept_{name}.pop() if kept_{name} else new_kept_{name}()",
        "    _kept0, = _kept",
        "    c = np.matmul(a, b, out=_kept0)  # f64[3,5]",
        "    d = np.tanh(c, out=c)  # f64[3,5]",
        "    e = np.multiply(d, 2.0, out=d)  # f64[3,5]",
        "    f = np.add.reduce(e, axis=(0,))  # f64[5]",
        "    del c, d, e",
        f"    kept_{name}.append(_kept)",
        "    return (f,)",
    ]
    for x in (m34, -m34):
        np.testing.assert_array_equal(run(x, m45)[0], np.sum(np.tanh(x @ m45) * 2.0, axis=0))


def test_only_results_surely_c_contiguous_are_kept():
    """NumPy gives a ufunc's result its inputs' memory order, and sums it in that order: a
    Fortran-ordered input's product, summed, has other roundings in a C-ordered buffer."""
    def function(x):
        return np.sum(x * 3.0), np.sum(np.tanh(x @ x.T) * 3.0)
    x = np.asfortranarray(rng.standard_normal((37, 53)))
    run, source = _compiled(function, x)
    assert "np.multiply(a, 3.0)" in source  # x's layout is not known: a new array, as NumPy's
    assert "out=_kept0)" in source  # the matmul's is
    for value in (x, np.ascontiguousarray(x), x[:, ::-1]):
        got, expected = run(value), function(value)
        assert got[0] == expected[0] and got[1] == expected[1]


def test_results_stay_the_callers_across_calls():
    def function(x, w):
        hidden = np.tanh(x @ w)
        return hidden * 2.0, np.sum(hidden * hidden)
    run, source = _compiled(function, m34, m45)
    assert "out=_kept" in source
    first = run(m34, m45)
    kept_first = [np.copy(value) for value in first]
    second = run(-m34, m45)
    for value, expected in zip(first, kept_first):
        np.testing.assert_array_equal(value, expected)  # not overwritten by the second call
    hidden = np.tanh(-m34 @ m45)
    np.testing.assert_array_equal(second[0], hidden * 2.0)
    assert second[1] == np.sum(hidden * hidden)


def test_a_returned_view_of_an_intermediate_is_never_kept():
    def function(x, w):
        product = x @ w
        return (product * 2.0).T, (product + 1.0)[1:], np.sum(np.exp(product))
    run, source = _compiled(function, m34, m45)
    assert source.count("out=_kept") == 1  # the exp, alone
    first = run(m34, m45)
    run(-m34, m45)
    np.testing.assert_array_equal(first[0], (m34 @ m45 * 2.0).T)
    np.testing.assert_array_equal(first[1], (m34 @ m45 + 1.0)[1:])


def test_arrays_of_one_shape_share_a_buffer_once_the_first_is_dead():
    def function(x, w):
        h = x @ w
        a = np.exp(h)
        b = np.sum(a * a)     # a and a * a die here
        c = np.sin(h) * b     # the next arrays of their shape take their buffers
        return np.sum(np.cos(c) + c)
    run, source = _compiled(function, m34, m45)
    assert "_kept0, _kept1 = _kept" in source  # two serve every [3,5] intermediate
    assert "np.exp(c, out=_kept1)" in source and "np.cos(h, out=_kept1)" in source
    expected = function(m34, m45)
    for _ in range(3):
        assert run(m34, m45)[0] == expected


def test_concurrent_calls_each_get_their_own_buffers():
    x, w = rng.standard_normal((200, 30)), rng.standard_normal((30, 300))

    def function(x, s):
        h = x @ w
        return np.sum(np.tanh(h * s) * h, axis=1)
    run, source = _compiled(function, x, np.float64(1.0))
    assert "out=_kept" in source
    scales = [np.float64(0.5 + index) for index in range(8)]
    expected = [function(x, s) for s in scales]
    results = {}

    def work(index):
        for _ in range(20):
            results[index] = run(x, scales[index])[0]
            np.testing.assert_array_equal(results[index], expected[index])
    threads = [threading.Thread(target=work, args=(index,)) for index in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    for index in range(8):
        np.testing.assert_array_equal(results[index], expected[index])


def test_values_a_loop_carries_are_not_kept():
    def function(x, w):
        start = (x @ w) * 2.0
        return while_loop(lambda state: state[0] < 3, lambda state: (state[0] + 1, state[1] * 0.5),
                          (0, start))
    run, source = _compiled(function, m34, m45)
    assert "out=_kept" not in source
    for _ in range(2):
        np.testing.assert_array_equal(run(m34, m45)[1], (m34 @ m45) * 2.0 * 0.5 * 0.5 * 0.5)


@pytest.mark.parametrize("backend_name", ["numpy", "llvm"])
def test_traced_gradient_in_kept_buffers_matches_eager(backend_name):
    import autotrace
    backend = backend_named(backend_name)
    if backend.available() is not None:
        pytest.skip(f"the {backend_name} backend is not available here: {backend.available()}")
    x = rng.standard_normal((64, 48))
    w = rng.standard_normal((48, 40))

    def loss(x, w):
        h = np.tanh(x @ w)
        e = np.exp(h - np.max(h, axis=-1, keepdims=True))  # row kernels write kept buffers too
        softmax = e / np.sum(e, axis=-1, keepdims=True)
        return np.sum(0.5 * h * (1.0 + np.tanh(h * h))) + np.sum(softmax * h)
    eager = autotrace.grad(loss, wrt=(0, 1))
    before = autotrace.config.cpu_backend()
    autotrace.config.cpu_backend(backend_name)
    try:
        traced = autotrace.function(autotrace.grad(loss, wrt=(0, 1)))
        results = [traced(x * scale, w) for scale in (1.0, -1.0, 1.0)]
        source = traced.get_concrete_function(x, w).source
    finally:
        autotrace.config.cpu_backend(before)
    for result, scale in zip(results, (1.0, -1.0, 1.0)):
        for got, expected in zip(result, eager(x * scale, w)):
            np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-12)
    assert results[0][0] is not results[2][0]
    assert "out=_kept" in source
    if backend_name == "llvm":  # a fused kernel writes its results into kept buffers too
        assert "fused_" in source and "y0=_kept" in source


# -- joins made in place ------------------------------------------------------------------

def _steps(x, w, count):
    """`count` states of a small recurrence, each a new array that dies inside the call."""
    states, h = [], x
    for _ in range(count):
        h = np.tanh(h @ w)
        states.append(h)
    return states


def test_a_join_of_arrays_that_die_in_the_call_is_written_in_place():
    w = rng.standard_normal((4, 4)) * 0.5

    def function(x, w):
        states = _steps(x, w, 3)
        return np.sum(np.concatenate([x] + states, axis=0).T @ np.ones((12, 2)))
    x = rng.standard_normal((3, 4))
    run, source = _compiled(function, x, w)
    assert "np.concatenate" not in source
    # the join's result is a kept buffer, each state made in its rows (the tanh written into
    # the matmul's rows), and x, the graph's input, copied into its own
    lines = source.splitlines()
    [join] = [index for index, line in enumerate(lines)
              if re.fullmatch(r"    \w+ = _kept\d+  # f64\[12,4\]", line)]
    assert re.fullmatch(r"    np\.copyto\(_kept\d+, a\)", lines[join + 1]), source
    assert sum("np.matmul(" in line and "out=_kept" in line for line in lines) == 4
    for value in (x, -x, 2.0 * x):
        assert run(value, w)[0] == function(value, w)


@pytest.mark.parametrize("join", [
    lambda parts: np.stack(parts, axis=0),
    lambda parts: np.concatenate(parts, axis=0)])
def test_joins_in_place_give_numpys_values_bit_for_bit(join):
    w = rng.standard_normal((5, 5)) * 0.5

    def function(x, w):
        states = _steps(x, w, 4)
        joined = join(states)
        return np.sum(np.exp(joined) * 2.0, axis=0), states[1] @ w
    x = rng.standard_normal((6, 5))
    run, source = _compiled(function, x, w)
    assert "np.stack" not in source and "np.concatenate" not in source
    for value in (x, -x):
        for got, expected in zip(run(value, w), function(value, w)):
            np.testing.assert_array_equal(got, expected)


def test_a_part_written_into_later_is_copied_not_joined_in_place():
    """tanh(h2) writes into h2's buffer once the join has read it: were h2 made in the join's
    rows, that write would change the join."""
    w = rng.standard_normal((4, 4)) * 0.5

    def function(x, w):
        h1, h2 = _steps(x, w, 2)
        joined = np.concatenate([h1, h2], axis=0)
        later = np.tanh(h2)
        return np.sum(joined @ w, axis=0), np.sum(later * 3.0)
    x = rng.standard_normal((3, 4))
    run, source = _compiled(function, x, w)
    assert "out=" in source.split("np.tanh(")[-1].split("\n")[0]  # the write in place
    for value in (x, -x):
        for got, expected in zip(run(value, w), function(value, w)):
            np.testing.assert_array_equal(got, expected)


def test_joins_the_caller_sees_or_along_other_axes_are_left_to_numpy():
    w = rng.standard_normal((4, 4)) * 0.5

    def returned(x, w):
        return np.concatenate(_steps(x, w, 2), axis=0)

    def other_axis(x, w):
        return np.sum(np.concatenate(_steps(x, w, 2), axis=1) * 2.0)
    x = rng.standard_normal((3, 4))
    for function in (returned, other_axis):
        run, source = _compiled(function, x, w)
        assert "np.concatenate" in source
        np.testing.assert_array_equal(run(x, w)[0], function(x, w))


def test_a_part_of_a_join_left_to_numpy_is_copied_into_a_later_join_made_in_place():
    """p, of a length-1 axis, leaves its first join to NumPy; the second join, made in place,
    must still copy it into its rows (twice, or once where p is written into afterwards)."""
    w = rng.standard_normal((5, 5))

    def twice(x, w):
        p = np.tanh(x[:1] @ w)
        first = np.concatenate([p, np.exp(p)], axis=0)
        second = np.concatenate([np.sin(x @ w), p, p], axis=0)
        return np.sum(first * 3.0, axis=0), np.sum(second * 2.0, axis=0)

    def written_after(x, w):
        p = np.tanh(x[:1] @ w)
        first = np.concatenate([p, np.exp(p)], axis=0)
        total = np.sum(first @ w, axis=0)
        second = np.concatenate([np.sin(x @ w), p], axis=0)
        later = np.cos(p)
        return total, np.sum(later * 2.0) + np.sum(second @ w, axis=0)
    x = rng.standard_normal((3, 5))
    for function in (twice, written_after):
        run, source = _compiled(function, x, w)
        assert "np.copyto(" in source, source
        for value in (x, -x, 2.0 * x):
            for got, expected in zip(run(value, w), function(value, w)):
                np.testing.assert_array_equal(got, expected)


def test_a_fused_kernel_that_runs_numpys_calls_still_writes_its_rows_of_a_join():
    """Under a non-default NumPy error state, or where the kernel meets an overflow, a fused
    region runs its NumPy calls instead (runtime/backends/llvm/cpu_calls.py); their results
    must land in the rows of the join the kernel's would have been written into."""
    llvm = backend_named("llvm")
    if llvm.available() is not None:
        pytest.skip(f"the llvm backend is not available here: {llvm.available()}")
    w = rng.standard_normal((64, 64)) * 0.1

    def function(x, w):
        h = x @ w
        fused = np.exp(h) * 2.0 + 1.0  # one kernel, written into its rows of the join
        return np.sum(np.concatenate([fused, np.sin(h)], axis=0), axis=0)
    x = rng.standard_normal((200, 64))
    run, source = _compiled(function, x, w, backend=llvm)
    assert "np.concatenate" not in source and "fused_" in source
    overflowing = x.copy()
    overflowing[3, :] = 1e4  # exp overflows: the kernel reports it and NumPy's calls run
    with np.errstate(all="ignore"):
        expected = [function(value, w) for value in (x, -x, overflowing)]
        for value, want in zip((x, -x), expected):  # NumPy's calls: its results, bit for bit
            np.testing.assert_array_equal(run(value, w)[0], want)
    with pytest.warns(RuntimeWarning, match="overflow"):
        np.testing.assert_array_equal(run(overflowing, w)[0], expected[2])
