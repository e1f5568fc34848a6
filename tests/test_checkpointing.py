"""Gradient checkpointing: autotrace.checkpoint (a call recomputed in the adjoint sweep) and
grad(f, checkpoint_every=k) (a loop stored as one snapshot every k iterations)."""
import re

import numpy as np
import pytest

import autotrace as at
from autotrace.testing import check_grads
from tests.numeric import central_difference


@at.checkpoint
def cell(h, w):
    return np.tanh(h * w + np.sin(h))


def plain_cell(h, w):
    return np.tanh(h * w + np.sin(h))


def unrolled(x, w):
    h = x
    for _ in range(3):
        h = cell(h, w)
    return np.sum(h ** 2)


def unrolled_plain(x, w):
    h = x
    for _ in range(3):
        h = plain_cell(h, w)
    return np.sum(h ** 2)


X = np.linspace(0.1, 1.0, 4)
W = np.linspace(-1.0, 1.0, 4)


def close(a, b, tolerance=1e-12):
    for left, right in zip(a, b):
        np.testing.assert_allclose(left, right, rtol=tolerance, atol=tolerance)


# ---- autotrace.checkpoint --------------------------------------------------------------------

def test_checkpointed_gradient_equals_the_plain_one_and_finite_differences():
    checkpointed = at.grad(unrolled, wrt=(0, 1))(X, W)
    close(checkpointed, at.grad(unrolled_plain, wrt=(0, 1))(X, W))
    check_grads(unrolled, (X, W), wrt=(0, 1))


def test_outside_a_transform_the_checkpointed_function_is_the_function():
    np.testing.assert_array_equal(cell(X, W), plain_cell(X, W))
    assert cell.__name__ == "cell" and cell.__wrapped__ is cell.function


def test_source_shows_the_primal_call_and_the_recomputation():
    def f(x, w):
        h = cell(x, w)
        return np.sum(h)
    text = at.source(at.grad(f, wrt=(0, 1)))
    primal, adjoint = text.split("# Adjoint sweep")
    assert "h = cell(x, w)" in primal
    assert ("# checkpoint: cell's primal sweep runs again here, from its inputs, then its "
            "adjoint\n") in adjoint
    assert re.search(r"= recompute_from\(dcell\(recompute_from\(x, bh\), "
                     r"recompute_from\(w, bh\), dy=bh\), bh\)\n", adjoint), adjoint


def test_value_and_grad_and_vjp_through_a_checkpoint():
    value, gradient = at.value_and_grad(unrolled, wrt=1)(X, W)
    assert value == unrolled_plain(X, W)
    np.testing.assert_allclose(gradient, at.grad(unrolled_plain, wrt=1)(X, W), rtol=1e-12)
    value, vjp_function = at.vjp(unrolled, X, W)
    close(vjp_function(2.0), [2 * g for g in at.grad(unrolled_plain, wrt=(0, 1))(X, W)])


def test_forward_mode_takes_the_ordinary_tangent():
    value, tangent = at.jvp(unrolled, (X, W), (W, X))
    expected_value, expected_tangent = at.jvp(unrolled_plain, (X, W), (W, X))
    assert value == expected_value
    np.testing.assert_allclose(tangent, expected_tangent, rtol=1e-12)
    check_grads(unrolled, (X, W), wrt=(0, 1), modes=("forward",))


def test_second_order_through_a_checkpoint():
    x, w = np.array(0.3), np.array(0.8)
    assert abs(at.grad(at.grad(unrolled))(x, w) - at.grad(at.grad(unrolled_plain))(x, w)) \
        < 1e-12
    np.testing.assert_allclose(at.hessian(unrolled)(X, W), at.hessian(unrolled_plain)(X, W),
                               rtol=1e-12, atol=1e-12)
    check_grads(unrolled, (X, W), wrt=(0, 1), order=2)


def test_checkpoint_called_inline_and_on_a_lambda():
    def inline(x, w):
        return np.sum(at.checkpoint(plain_cell)(x, w))

    def with_lambda(x, w):
        step = lambda h: np.tanh(np.sin(h) * h)  # noqa: E731 - the form under test
        return np.sum(at.checkpoint(step)(x) * w)
    close(at.grad(inline, wrt=(0, 1))(X, W),
          at.grad(lambda x, w: np.sum(plain_cell(x, w)), wrt=(0, 1))(X, W))
    check_grads(with_lambda, (X, W), wrt=(0, 1))
    check_grads(inline, (X, W), wrt=(0, 1))
    text = at.source(at.grad(inline, wrt=(0, 1)))
    assert "= plain_cell_checkpointed(x, w)\n" in text
    assert "# checkpoint: plain_cell's primal sweep runs again here" in text
    text = at.source(at.grad(with_lambda, wrt=(0, 1)))
    assert "# checkpoint: with_lambda__step's primal sweep runs again here" in text
    close(at.function(at.grad(with_lambda, wrt=(0, 1)))(X, W),
          at.grad(with_lambda, wrt=(0, 1))(X, W))


def test_a_checkpoint_made_when_the_function_runs_is_recomputed_too():
    def f(x, w, steps):
        cells = [at.checkpoint(plain_cell)]  # known only when f runs: derived by vjp_call
        for _ in range(steps):
            x = cells[0](x, w)
        return np.sum(x)
    close(at.grad(f, wrt=(0, 1))(X, W, 3), at.grad(unrolled_plain_sum, wrt=(0, 1))(X, W, 3))
    traced = at.function(at.grad(f, wrt=(0, 1)))
    close(traced(X, W, 3), at.grad(unrolled_plain_sum, wrt=(0, 1))(X, W, 3))
    assert _count(traced.graph(X, W, 3), "recompute_barrier") == 6 + 6


def unrolled_plain_sum(x, w, steps):
    for _ in range(steps):
        x = plain_cell(x, w)
    return np.sum(x)


def test_containers_through_a_checkpoint():
    @at.checkpoint
    def step(state, w):
        h, c = state
        return (np.tanh(h * w + c), c * 0.5 + h)

    def f(x, w):
        state = (x, x * 2.0)
        for _ in range(2):
            state = step(state, w)
        return np.sum(state[0] * state[1])
    check_grads(f, (X, W), wrt=(0, 1))
    close(at.function(at.grad(f, wrt=(0, 1)))(X, W), at.grad(f, wrt=(0, 1))(X, W))


def _count(graph, operation: str) -> int:
    return len(re.findall(rf"= {operation}\b", str(graph)))


def test_traced_graph_keeps_the_recomputation():
    traced = at.function(at.grad(unrolled, wrt=(0, 1)))
    traced_plain = at.function(at.grad(unrolled_plain, wrt=(0, 1)))
    close(traced(X, W), at.grad(unrolled, wrt=(0, 1))(X, W))
    close(traced_plain(X, W), traced(X, W))
    graph, graph_plain = traced.graph(X, W), traced_plain.graph(X, W)
    # Without checkpoint the passes merge each call's recomputation into its primal run: three
    # sines. With it each of the three calls runs again in the adjoint sweep: six; the barrier
    # (one per input of each recomputed call) keeps them apart; one per gradient a call
    # gives keeps fusion from summing every call's gradient terms in one kernel at the end.
    assert _count(graph_plain, "sin") == 3
    assert _count(graph, "sin") == 6
    assert _count(graph, "recompute_barrier") == 6 + 6
    assert _count(graph_plain, "recompute_barrier") == 0


def test_the_barrier_is_an_identity_that_folding_leaves():
    from autotrace.runtime.primitives.recompute_barrier import recompute_from
    value = np.arange(3.0)
    assert recompute_from(value, 1.0) is value
    assert recompute_from((value, [value], {"a": value}), 1.0)[2]["a"] is value

    def f(x):  # a checkpointed call that carries no gradient is not recomputed
        return np.sum(cell(np.ones(4), 0.5) * x)
    graph = at.function(at.grad(f)).graph(X)
    assert _count(graph, "recompute_barrier") == 0 and _count(graph, "sin") == 0
    np.testing.assert_allclose(at.function(at.grad(f))(X), cell(np.ones(4), 0.5))


def test_checkpoint_of_a_checkpoint_is_itself():
    assert at.checkpoint(cell) is cell


@pytest.mark.parametrize("argument, message", [
    (3, "got 3 (a int), which cannot be called"),
    (np.sin, "numpy.sin has a derivative rule and keeps no intermediate values to recompute; "
             "checkpoint a function of yours that calls it"),
    (dict, "got the class dict; checkpoint a function that computes with arrays"),
])
def test_misuse_names_the_callers_file_and_line(argument, message):
    with pytest.raises(TypeError) as raised:
        at.checkpoint(argument)
    line = raised.traceback[0].lineno + 1  # the line of the call in this file
    assert str(raised.value) == (f"{__file__}:{line}: autotrace.checkpoint takes a Python "
                                 f"function whose calls reverse mode recomputes; {message}")


# ---- grad(f, checkpoint_every=k) -------------------------------------------------------------

def rnn(h, w, xs):
    total = 0.0
    for i in range(xs.shape[0]):
        h = np.tanh(h * w + xs[i])
        total = total + np.sum(h ** 2)
    return total + np.sum(h)


@pytest.mark.parametrize("steps, every", [(12, 3), (12, 5), (12, 1), (5, 8), (0, 4), (7, 7)])
def test_segmented_loops_give_the_same_gradient(steps, every):
    rng = np.random.default_rng(steps)
    args = (rng.normal(size=4), rng.normal(size=4), rng.normal(size=(steps, 4)))
    expected = at.grad(rnn, wrt=(0, 1))(*args)
    close(at.grad(rnn, wrt=(0, 1), checkpoint_every=every)(*args), expected)
    close(at.function(at.grad(rnn, wrt=(0, 1), checkpoint_every=every))(*args), expected)
    value, gradient = at.value_and_grad(rnn, wrt=(0, 1), checkpoint_every=every)(*args)
    assert value == rnn(*args)
    close(gradient, expected)
    close(at.vjp(rnn, *args, checkpoint_every=every)[1](1.0)[:2], expected)
    if steps:
        check_grads(lambda h, w: rnn(h, w, args[2]), args[:2], wrt=(0, 1))


def test_segmented_source_shows_the_segments():
    text = at.source(at.grad(rnn, wrt=1, checkpoint_every=4))
    assert "for position in range(0, _t" in text or "for position in range(0, len(loop), 4)" \
        in text, text
    assert "= rnn__segment(h, total, " in text
    assert "# checkpoint: rnn__segment's primal sweep runs again here" in text


def test_checkpoint_every_none_changes_nothing():
    assert at.source(at.grad(rnn, wrt=1, checkpoint_every=None)) == \
        at.source(at.grad(rnn, wrt=1))


def test_containers_as_loop_state():
    def f(x, w, steps):
        state = [x, x * 0.5]
        trail = []
        for i in range(steps):
            state = [np.tanh(state[0] * w + state[1]), state[1] * 0.9 + state[0] * 0.1]
            trail.append(np.sum(state[0]))
        return np.sum(state[0] * state[1]) + sum(trail)
    for steps, every in ((9, 4), (9, 3), (2, 5)):
        expected = at.grad(f, wrt=(0, 1))(X, W, steps)
        close(at.grad(f, wrt=(0, 1), checkpoint_every=every)(X, W, steps), expected)
    check_grads(lambda x, w: f(x, w, 9), (X, W), wrt=(0, 1))


def test_second_order_through_segments():
    args = (np.array(0.3), np.array(0.7), np.linspace(-1, 1, 7))
    segmented = at.grad(at.grad(rnn, wrt=1, checkpoint_every=3), wrt=1)(*args)
    assert abs(segmented - at.grad(at.grad(rnn, wrt=1), wrt=1)(*args)) < 1e-12


def _peak_arrays(gradient, args, size: int) -> float:
    """The most arrays of `size` float64s a call held at once (tracemalloc counts NumPy's
    allocations): a count of stored values, not a timing."""
    import tracemalloc
    gradient(*args)
    tracemalloc.start()
    tracemalloc.reset_peak()
    before = tracemalloc.get_traced_memory()[0]
    gradient(*args)
    peak = tracemalloc.get_traced_memory()[1] - before
    tracemalloc.stop()
    return peak / (size * 8)


def test_segments_store_the_square_root_of_the_steps():
    size, steps = 5000, 100
    rng = np.random.default_rng(0)
    args = (rng.normal(size=size), rng.normal(size=size), rng.normal(size=(steps, size)))
    stored = _peak_arrays(at.grad(rnn, wrt=1), args, size)
    segmented = _peak_arrays(at.grad(rnn, wrt=1, checkpoint_every=10), args, size)
    # Every step keeps its h (and more); segments of 10 keep 10 snapshots and one segment's
    # 10 steps at a time.
    assert stored > steps
    assert segmented < 40, (stored, segmented)
    traced = _held_arrays(at.function(at.grad(rnn, wrt=1)), args, size)
    traced_segmented = _held_arrays(
        at.function(at.grad(rnn, wrt=1, checkpoint_every=10)), args, size)
    assert traced_segmented < 40 < traced / 2, (traced, traced_segmented)


def _held_arrays(traced, args, size: int) -> float:
    """The most arrays of `size` float64s a traced call held at once: those it made, and those
    its compiled function keeps from call to call (runtime/execution/call_buffers.py)."""
    peak = _peak_arrays(traced, args, size)
    run = traced.get_concrete_function(*args)._entry.run
    kept = sum(buffer.nbytes for name, pool in run.__globals__.items()
               if name.startswith("kept_") for buffers in pool for buffer in buffers)
    return peak + kept / (size * 8)


@pytest.mark.parametrize("every", [0, -2, 2.5, True, "4"])
def test_checkpoint_every_must_be_a_positive_int(every):
    with pytest.raises(ValueError) as raised:
        at.grad(rnn, checkpoint_every=every)
    line = raised.traceback[0].lineno + 1
    assert str(raised.value) == (
        f"{__file__}:{line}: checkpoint_every must be a positive int, the number of loop "
        "iterations between stored snapshots of the loop's state (or None, the default, to "
        f"store every iteration); got {every!r}")


def test_loops_that_cannot_be_segmented_are_refused():
    def leaves_early(x, n):
        for i in range(n):
            x = x * 2.0
            if i > 3:
                break
        return x

    def bound_after(x, n):
        for i in range(n):
            last = x * i
        return last
    with pytest.raises(at.TransformError) as raised:
        at.grad(leaves_early, checkpoint_every=2)(1.0, 5)
    assert "checkpoint_every cannot split this loop into segments: it leaves the loop early " \
           "(`break`); segments run whole" in str(raised.value)
    assert f"{__file__}, line" in str(raised.value) or __file__ in str(raised.value)
    with pytest.raises(at.TransformError) as raised:
        at.grad(bound_after, checkpoint_every=2)(1.0, 5)
    assert "'last' is assigned in the loop and read after it, but not bound before it; " \
           "assign it a value before the loop" in str(raised.value)


def converging(x, a):
    t = 0.0
    k = 0
    while t < a:
        t = t + np.sum(np.sin(x) ** 2) * 0.1
        x = x * 0.9 + 0.1
        k = k + 1
    return np.sum(x) + t * k


@pytest.mark.parametrize("every", [1, 3, 4, 100])
def test_segmented_while_loops(every):
    expected = at.grad(converging)(X, 2.0)
    close(at.grad(converging, checkpoint_every=every)(X, 2.0), expected)
    close([at.function(at.grad(converging, checkpoint_every=every))(X, np.array(2.0))],
          [expected])
    text = at.source(at.grad(converging, checkpoint_every=every))
    assert "while _cond1:" in text and "= converging__segment(k, t, x, a=a)" in text
    check_grads(lambda x: converging(x, 2.0), (X,))


def test_a_segment_carries_an_integer_counter():
    def f(x, n):
        count = 0
        for i in range(n):
            x = np.sin(x) + 0.1 * i
            count = count + 1
        return np.sum(x) * count
    close([at.grad(f, checkpoint_every=2)(X, 5)], [at.grad(f)(X, 5)])


def test_an_integer_passed_along_by_a_helper_gets_no_gradient():
    def step(x, k):
        return x * 0.9, k + 1

    def f(x):
        k = 0
        for _ in range(3):
            x, k = step(x, k)
        return np.sum(x) * k
    np.testing.assert_allclose(at.grad(f)(np.ones(2)), [3 * 0.9 ** 3] * 2, rtol=1e-12)


def test_a_loop_over_an_iterator_is_refused():
    def f(x, xs):
        for row in zip(xs):
            x = x * row[0]
        return np.sum(x)
    with pytest.raises(at.TransformError) as raised:
        at.grad(f, checkpoint_every=2)(X, np.ones((3, 4)))
    assert ("checkpoint_every cannot split this loop into segments: it iterates over "
            "zip(...), which has no len() and cannot be sliced into segments; iterate "
            "over a range, list, tuple or array (`for i in range(len(xs))`)") \
        in str(raised.value)


def test_checkpointed_layer_in_grad_function_and_implicit_grad():
    dense = at.layers.Dense(4, activation="tanh")
    x = np.linspace(-1.0, 1.0, 8).reshape(2, 4)
    dense(x)
    step = at.checkpoint(dense)

    def f(x):
        for _ in range(3):
            x = step(x)
        return np.sum(x ** 2)

    def plain(x):
        for _ in range(3):
            x = dense(x)
        return np.sum(x ** 2)
    expected = at.grad(plain)(x)
    np.testing.assert_allclose(at.grad(f)(x), expected, rtol=1e-12)
    np.testing.assert_allclose(at.function(at.grad(f))(x), expected, rtol=1e-12)
    value, gradients = at.implicit_value_and_grad(f)(x)
    expected_value, expected_gradients = at.implicit_value_and_grad(plain)(x)
    assert value == expected_value and len(gradients) == len(expected_gradients) == 2
    for (gradient, variable), (expected_gradient, expected_variable) in zip(
            gradients, expected_gradients):
        assert variable is expected_variable
        np.testing.assert_allclose(gradient, expected_gradient, rtol=1e-12)


def test_a_loop_that_appends_its_carried_array_to_a_list():
    # The segments take the list and the array it holds: `trail.append(h)` changes the list
    # alone, so their sharing memory is no write into shared memory.
    def f(h, w, steps):
        trail = []
        for i in range(steps):
            h = np.cos(h * w)
            trail.append(h)
        return np.sum(np.stack(trail) ** 2)
    for steps, every in ((4, 2), (7, 3), (5, 8)):
        expected = at.grad(f, wrt=(0, 1))(X, W, steps)
        close(at.grad(f, wrt=(0, 1), checkpoint_every=every)(X, W, steps), expected)
        close(at.function(at.grad(f, wrt=(0, 1), checkpoint_every=every))(X, W, steps),
              expected)
    check_grads(lambda h, w: f(h, w, 5), (X, W), wrt=(0, 1))


def test_appending_an_argument_to_a_list_argument_that_holds_it():
    def f(trail, h):
        trail.append(np.sin(h))
        trail.append(h)
        return np.sum(np.stack(trail) ** 2)
    h = np.array([0.3, -0.4])
    expected = central_difference(lambda v: f([h], v), h)  # trail's item is another argument
    close(at.grad(f, wrt=1)([h], h), expected, 1e-8)
    close(at.function(at.grad(f, wrt=1))([h], h), expected, 1e-8)


def test_a_list_argument_whose_arrays_are_written_is_still_refused_where_shared():
    def f(trail, h):
        trail.append(h * 2.0)
        first = trail[0]
        first += 1.0  # NumPy writes into h too, which trail holds
        return np.sum(np.stack(trail) * h)
    h = np.array([0.3, -0.4])
    with pytest.raises(at.TransformError, match="argument 'h' shares its memory"):
        at.grad(f, wrt=1)([h], h)


# ---- NumPy random draws in recomputed code ---------------------------------------------------

DRAWS = np.random.default_rng(0)


@at.checkpoint
def dropout(x):
    mask = DRAWS.random(x.shape) < 0.5
    return np.where(mask, x * 2.0, 0.0)


def noise(x):
    return x * np.random.rand(*x.shape)


@at.checkpoint
def noisy_twice(x):
    return noise(x) * 2.0


def draws_in_its_loop(x):
    for _ in range(4):
        mask = DRAWS.random(x.shape) < 0.5
        x = np.where(mask, x * 2.0, x * 0.5)
    return np.sum(x)


RECOMPUTED = ("draws random numbers in {what}, which reverse mode runs again in the adjoint "
              "sweep, from its inputs: the draw would give other numbers there, and the "
              "gradient would belong to them, not to the value; draw the numbers outside it "
              "and pass them in as an argument")
MARKED = "a function that autotrace.checkpoint marks"


@pytest.mark.parametrize("differentiate, drawn, line, what", [
    (lambda: at.value_and_grad(lambda x: np.sum(dropout(x) ** 2))(np.ones(8)),
     "DRAWS.random", "mask = DRAWS.random(x.shape) < 0.5\n    return np.where", MARKED),
    (lambda: at.grad(lambda x: np.sum(noisy_twice(x)))(np.ones(3)),
     "np.random.rand", "return x * np.random.rand", MARKED),
    (lambda: at.grad(lambda x: np.sum(at.checkpoint(noise)(x)))(np.ones(3)),
     "np.random.rand", "return x * np.random.rand", MARKED),
    (lambda: at.value_and_grad(draws_in_its_loop, checkpoint_every=2)(np.ones(4)),
     "DRAWS.random", "        mask = DRAWS.random", "a segment of the loop that "
     "checkpoint_every splits"),
], ids=["checkpoint", "called-by-it", "checkpoint-call", "checkpoint_every"])
def test_numpy_draws_in_recomputed_code_are_refused(differentiate, drawn, line, what):
    with pytest.raises(at.TransformError) as refused:
        differentiate()
    source = open(__file__).read()
    expected_line = source[:source.index(line)].count("\n") + 1
    assert refused.value.message == f"{drawn} " + RECOMPUTED.format(what=what)
    assert refused.value.filename == __file__
    assert refused.value.lineno == expected_line


def draws_before_its_loop(x):
    DRAWS.random(3)  # (outside the segments: runs once)
    for _ in range(3):
        x = x * 2.0
    return np.sum(x)


def test_draws_outside_recomputed_code_are_taken():
    np.testing.assert_allclose(at.grad(draws_before_its_loop, checkpoint_every=2)(np.ones(2)),
                               [8.0, 8.0])


def dropout_helper(x):
    mask = DRAWS.random(x.shape) < 0.5
    return np.where(mask, x * 2.0, 0.0)


def loss_with_dropout(x):
    return np.sum((dropout_helper(x) * x) ** 2)


def reseed_draws():
    DRAWS.bit_generator.state = np.random.default_rng(0).bit_generator.state


def grad_of_grad_rows(x):
    """The Hessian of loss_with_dropout, a row a grad of grad, DRAWS reseeded before each."""
    rows = []
    for k in range(x.size):
        reseed_draws()
        rows.append(at.grad(lambda x: at.grad(loss_with_dropout)(x)[k])(x))
    return np.stack(rows)


@pytest.mark.parametrize("differentiate", [
    lambda x: at.hessian(loss_with_dropout)(x), grad_of_grad_rows,
], ids=["hessian", "grad-of-grad"])
def test_numpy_draws_in_a_function_differentiated_twice_are_those_of_one_call(differentiate):
    # its second derivative runs dropout_helper again, from the state DRAWS had before the
    # call: the mask the value applied (sum(4 x ** 4) over the kept entries, by hand)
    x = np.array([1.0, -2.0, 0.5, 3.0])
    reseed_draws()
    mask = DRAWS.random(4) < 0.5
    after = DRAWS.bit_generator.state
    reseed_draws()
    np.testing.assert_allclose(differentiate(x), np.diag(48 * x ** 2 * mask), rtol=1e-12)
    assert DRAWS.bit_generator.state == after


def test_numpy_draws_in_a_function_differentiated_once_are_taken():
    # one run of dropout_helper, its derivative in halves: the gradient of the mask applied
    (value, gradient) = at.value_and_grad(loss_with_dropout)(np.ones(8))
    assert value == pytest.approx(np.sum(gradient) / 4)
