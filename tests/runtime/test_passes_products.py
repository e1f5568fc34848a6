"""StackedProducts (runtime/passes/products.py): the small matmuls of an unrolled loop that share
an operand become one, with the unmerged graph's results to rounding."""
import numpy as np
import pytest

import autotrace
from autotrace.runtime.execution.executor import compile_graph
from autotrace.runtime.passes import CommonSubexpressions, DeadCode, StackedProducts, optimize
from autotrace.runtime.passes import products
from autotrace.runtime.passes.products import MIN_PRODUCTS
from autotrace.runtime.tracing.tracer import trace

rng = np.random.default_rng(0)
STEPS, BATCH, INPUTS, HIDDEN = 5, 3, 4, 6
W = rng.standard_normal((INPUTS, HIDDEN))
XS = rng.standard_normal((STEPS, BATCH, INPUTS))
DS = [rng.standard_normal((BATCH, HIDDEN)) for _ in range(STEPS)]
HS = [rng.standard_normal((BATCH, INPUTS)) for _ in range(STEPS)]


def stacked(function, *args):
    """(graph before, graph after StackedProducts and DeadCode) of `function` traced."""
    graph = CommonSubexpressions().run(trace(function, args)[0])
    return graph, DeadCode().run(StackedProducts().run(graph))


def names(graph):
    return [equation.primitive.name for equation in graph.equations]


def run(graph, *args):
    return compile_graph(graph)[0](*args)


def slices_times_weights(w, xs):
    return [np.tanh(x @ w) for x in xs]


def summed_products(xs, *ds):
    total = np.zeros((xs.shape[2], ds[0].shape[1]))
    for t in reversed(range(len(ds))):  # the reverse sweep's order
        total = total + xs[t].T @ ds[t]
    return total


def summed_separate_products(*pairs):
    hs, ds = pairs[:len(pairs) // 2], pairs[len(pairs) // 2:]
    total = np.zeros((hs[0].shape[1], ds[0].shape[1]))
    for h, d in zip(hs, ds):
        total = total + h.T @ d
    return total


def test_the_products_of_every_slice_by_one_matrix_are_one_product():
    before, after = stacked(slices_times_weights, W, XS)
    assert names(before).count("matmul") == STEPS
    assert names(after)[:3] == ["reshape", "matmul", "reshape"]
    assert names(after).count("matmul") == 1
    assert str(after.equations[1].inputs[0].aval) == f"f64[{STEPS * BATCH},{INPUTS}]"
    for got, want, x in zip(run(after, W, XS), run(before, W, XS), XS):
        np.testing.assert_allclose(got, want, rtol=1e-13, atol=1e-15)
        np.testing.assert_allclose(got, np.tanh(x @ W), rtol=1e-13, atol=1e-15)


def test_rows_of_a_matrix_times_one_matrix_are_one_product():
    rows = XS[:, 0, :]  # each slice a vector: xs[t] @ w is a row
    before, after = stacked(slices_times_weights, W, rows)
    assert names(after)[:1] == ["matmul"] and names(after).count("matmul") == 1
    for got, row in zip(run(after, W, rows), rows):
        np.testing.assert_allclose(got, np.tanh(row @ W), rtol=1e-13, atol=1e-15)


def test_a_sum_of_products_of_slices_is_one_product_of_the_stacked_terms():
    before, after = stacked(summed_products, XS, *DS)
    assert names(before).count("matmul") == STEPS
    assert names(after) == ["concatenate", "reshape", "transpose", "matmul", "add"]
    # the d_t stacked in the order of the slices they multiply, not the sum's
    assert after.equations[0].inputs == tuple(before.inputs[1:])
    want = sum(x.T @ d for x, d in zip(XS, DS))
    (got,) = run(after, XS, *DS)
    np.testing.assert_allclose(got, want, rtol=1e-13, atol=1e-14)
    np.testing.assert_allclose(got, run(before, XS, *DS)[0], rtol=1e-13, atol=1e-14)


def test_a_sum_of_products_of_separate_arrays_stacks_both_sides():
    before, after = stacked(summed_separate_products, *HS, *DS)
    assert names(after) == ["concatenate", "concatenate", "transpose", "matmul", "add"]
    want = sum(h.T @ d for h, d in zip(HS, DS))
    np.testing.assert_allclose(run(after, *HS, *DS)[0], want, rtol=1e-13, atol=1e-14)


def test_two_sums_of_the_same_right_operands_read_one_concatenation_of_them():
    def two_sums(xs, *pairs):
        hs, ds = pairs[:STEPS], pairs[STEPS:]
        separate = summed_separate_products(*hs, *ds)  # in the order t = 0, 1, ...
        return summed_products(xs, *ds), separate      # in the order t = S - 1, ..., 0
    before, after = stacked(two_sums, XS, *HS, *DS)
    concatenations = [equation for equation in after.equations
                      if equation.primitive.name == "concatenate"]
    assert len(concatenations) == 2
    d_inputs = after.inputs[1 + STEPS:]
    assert concatenations[0].inputs == d_inputs  # the order of the slices of xs
    assert names(after).count("matmul") == 2
    by_slices, by_separate = run(after, XS, *HS, *DS)
    np.testing.assert_allclose(by_slices, sum(x.T @ d for x, d in zip(XS, DS)), rtol=1e-13)
    np.testing.assert_allclose(by_separate, sum(h.T @ d for h, d in zip(HS, DS)), rtol=1e-13)


def test_a_partial_sum_read_elsewhere_ends_the_chain_there():
    def with_a_partial_sum(xs, *ds):
        total = np.zeros((xs.shape[2], ds[0].shape[1]))
        for t in range(len(ds)):
            total = total + xs[t].T @ ds[t]
            if t == 1:
                early = total
        return total, early
    xs = rng.standard_normal((MIN_PRODUCTS + 2, BATCH, INPUTS))
    ds = [rng.standard_normal((BATCH, HIDDEN)) for _ in range(MIN_PRODUCTS + 2)]
    before, after = stacked(with_a_partial_sum, xs, *ds)
    # the first two terms are summed apart; the rest (MIN_PRODUCTS of them) start from that sum
    assert names(after).count("matmul") == 3 and names(after).count("concatenate") == 2
    total, early = run(after, xs, *ds)
    np.testing.assert_allclose(early, xs[0].T @ ds[0] + xs[1].T @ ds[1], rtol=1e-13)
    np.testing.assert_allclose(total, sum(x.T @ d for x, d in zip(xs, ds)), rtol=1e-13)


@pytest.mark.parametrize("function, args", [
    # too few products
    (slices_times_weights, (W, XS[:MIN_PRODUCTS - 1])),
    (summed_products, (XS[:MIN_PRODUCTS - 1], *DS[:MIN_PRODUCTS - 1])),
    # not every slice: the stacked product would compute rows nobody reads
    (lambda w, xs: [xs[t] @ w for t in range(len(xs)) if t != 2], (W, XS)),
    # the weights on the left
    (lambda w, xs: [w.T @ x.T for x in xs], (W, XS)),
    # integers: NumPy's own loop, no BLAS call to save
    (slices_times_weights, (W.astype(np.int64), XS.astype(np.int64))),
    # a product read twice is not a term of the sum alone: too few terms are left
    (lambda xs, *ds: summed_products(xs, *ds) + xs[0].T @ ds[0],
     (XS[:MIN_PRODUCTS], *DS[:MIN_PRODUCTS])),
])
def test_other_products_are_left_alone(function, args):
    before, after = stacked(function, *args)
    assert str(StackedProducts().run(before)) == str(before)


def test_stacks_past_the_size_limit_are_left_alone(monkeypatch):
    monkeypatch.setattr(products, "MAX_STACKED_ELEMENTS", STEPS * BATCH * HIDDEN - 1)
    for function, args in ((slices_times_weights, (W, XS)), (summed_products, (XS, *DS))):
        before, _ = stacked(function, *args)
        assert str(StackedProducts().run(before)) == str(before)


def test_results_of_the_stacked_product_are_never_written_into():
    def reads_and_returns_slices(w, xs):
        products = [x @ w for x in xs]
        return products[0], products[1], sum(np.exp(p) for p in products)
    graph = optimize(trace(reads_and_returns_slices, (W, XS))[0])
    assert names(graph).count("matmul") == 1
    first, second, total = run(graph, W, XS)
    assert not np.shares_memory(first, second)
    np.testing.assert_allclose(first, XS[0] @ W, rtol=1e-13)
    np.testing.assert_allclose(second, XS[1] @ W, rtol=1e-13)
    np.testing.assert_allclose(total, sum(np.exp(x @ W) for x in XS), rtol=1e-13)


def rnn_loss(wx, wh, xs, h0):
    h = h0
    for x in xs:
        h = np.tanh(x @ wx + h @ wh)
    return np.sum(h ** 2)


def rnn_gradient(wx, wh, xs, h0):
    """The RNN's gradient by hand, in float64, one product a step."""
    states, h = [h0], h0
    for x in xs:
        h = np.tanh(x @ wx + h @ wh)
        states.append(h)
    dh, dwx, dwh = 2.0 * h, np.zeros_like(wx), np.zeros_like(wh)
    for t in reversed(range(len(xs))):
        d = dh * (1.0 - states[t + 1] ** 2)
        dwx, dwh, dh = dwx + xs[t].T @ d, dwh + states[t].T @ d, d @ wh.T
    return dwx, dwh


@pytest.mark.parametrize("backend", ["numpy", "llvm"])
@pytest.mark.parametrize("dtype, tolerance", [(np.float64, 1e-12), (np.float32, 2e-5)])
def test_an_rnn_gradient_with_stacked_products(backend, dtype, tolerance):
    wx, wh = 0.5 * W, 0.3 * rng.standard_normal((HIDDEN, HIDDEN))
    h0 = np.zeros((BATCH, HIDDEN))
    args = [np.asarray(a, dtype) for a in (wx, wh, XS, h0)]
    autotrace.config.cpu_backend(backend)
    try:
        gradient = autotrace.function(autotrace.grad(rnn_loss, wrt=(0, 1)))
        got = gradient(*args)
        graph = str(gradient.graph(*args))
    finally:
        autotrace.config.cpu_backend("auto")
    # forward: one product by wx; backward: one for each weight's sum
    assert graph.count("= matmul ") == 1 + STEPS + (STEPS - 1) + 2
    # the states stacked, and the d_t once for both sums
    assert graph.count("= concatenate") == 2
    for result, want in zip(got, rnn_gradient(wx, wh, XS, h0)):
        assert result.dtype == dtype
        np.testing.assert_allclose(result, want, rtol=tolerance, atol=tolerance)


def test_an_rnn_gradient_with_stacked_products_on_another_array_library():
    xp = pytest.importorskip("array_api_strict", reason="array_api_strict is not installed")
    wx, wh = 0.5 * W, 0.3 * rng.standard_normal((HIDDEN, HIDDEN))
    h0 = np.zeros((BATCH, HIDDEN))
    gradient = autotrace.function(autotrace.grad(rnn_loss, wrt=(0, 1)))
    args = [xp.asarray(a) for a in (wx, wh, XS, h0)]
    got = gradient(*args)
    assert str(gradient.graph(*args)).count("= concatenate") == 2
    for result, want in zip(got, rnn_gradient(wx, wh, XS, h0)):
        np.testing.assert_allclose(np.from_dlpack(result), want, rtol=1e-12, atol=1e-12)
