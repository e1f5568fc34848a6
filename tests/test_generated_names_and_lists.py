"""Generated names that are never Python keywords nor hide builtins, a seed keyword that never
clashes with the user's parameters, lists given to NumPy's functions, and checkpointed loops
writing into a buffer: each once crashed in some mode. Values are checked against central
differences (and second derivatives against differences of the eager gradient)."""
import numpy as np
import pytest

import autotrace
from autotrace.testing import check_grads, check_vjp
from tests.numeric import central_difference

TOLERANCE = dict(rtol=1e-6, atol=1e-8)


def hessian_by_differences(f, x, eps=1e-5):
    """The Hessian of the scalar `f` at `x`: central differences of its eager gradient."""
    gradient = autotrace.grad(f)
    return np.stack([(gradient(x + eps * e) - gradient(x - eps * e)) / (2 * eps)
                     for e in np.eye(x.size)])


# --- names: `d` + `el` is `del`, `b` + `reak` is `break`, `f` + `rom` is `from` ---------------

def sum_of_squared_sines(xs):
    total = 0.0
    for el in xs:
        total = total + np.sin(el) ** 2
    return total


def named_like_keywords(x):
    ef = np.tanh(x)
    reak = ef * x
    lass = np.sum(reak ** 2)
    inally = lass + np.sum(np.cos(ef))
    return inally


def rom(x):  # its forward-mode derivative was `from`
    return np.sin(x) * x


def el(x):  # its reverse-mode derivative was `del`
    return np.cos(x) ** 2


def calls_keyword_named_functions(x):
    return np.sum(rom(x) + el(x))


def named_like_builtins(x):
    ict = np.sin(x)  # its tangent was `dict`
    ool = ict * 2.0  # its gradient was `bool`
    return np.sum(ool * ict)


XS = np.array([0.3, -1.2, 2.0])


@pytest.mark.parametrize("f", [sum_of_squared_sines, named_like_keywords,
                               calls_keyword_named_functions, named_like_builtins])
def test_keyword_like_names_in_every_mode(f):
    expected = central_difference(f, XS)
    np.testing.assert_allclose(autotrace.grad(f)(XS), expected, **TOLERANCE)
    np.testing.assert_allclose(autotrace.function(autotrace.grad(f))(XS), expected, **TOLERANCE)
    value, tangent = autotrace.jvp(f, (XS,), (np.ones(3),))
    assert value == pytest.approx(f(XS))
    assert tangent == pytest.approx(np.sum(expected), rel=1e-6)
    np.testing.assert_allclose(autotrace.jacfwd(f)(XS), expected, **TOLERANCE)
    np.testing.assert_allclose(autotrace.hessian(f)(XS), hessian_by_differences(f, XS),
                               rtol=1e-5, atol=1e-6)


def test_the_tangent_of_el_over_a_loop():
    _, tangent = autotrace.jvp(sum_of_squared_sines, (XS,), (np.ones(3),))
    assert tangent == pytest.approx(np.sum(np.sin(2 * XS)))  # -0.8676...
    assert tangent == pytest.approx(-0.8676232, abs=1e-6)


def test_no_generated_name_is_a_keyword_or_a_builtin():
    for derivative in (autotrace.grad(named_like_keywords), autotrace.forward(named_like_keywords),
                       autotrace.forward(named_like_builtins), autotrace.grad(named_like_builtins),
                       autotrace.forward(sum_of_squared_sines)):
        source = autotrace.source(derivative)
        compile(source, "<generated>", "exec")  # a keyword as a name is a SyntaxError
        for hidden in ("dict", "bool", "del", "def", "break", "finally"):
            assert f"{hidden} = " not in source


def deep(x):
    h = x
    for i in range(30):
        h = np.tanh(h * (1.0 + 0.01 * i)) + 0.1 * h
    return np.sum(h ** 2)


X2 = np.stack([np.linspace(-1, 1, 4)] * 2)


def summed_over_a_batch(w):
    return np.sum(autotrace.vmap(lambda w, x: deep(w * x), in_axes=(None, 0))(w, X2))


def test_forward_mode_over_a_large_trace():
    # The trace names its values with two letters, `ef` among them: its tangent was `def`.
    w = np.array([1.0, 0.8, -0.6, 1.2])
    expected = central_difference(lambda w: np.sum([deep(w * x) for x in X2]), w)
    np.testing.assert_allclose(autotrace.jacfwd(summed_over_a_batch)(w), expected,
                               rtol=1e-5, atol=1e-9)


# --- a parameter named like the seed keyword ---------------------------------------------------

def weighted_sines(x, tangent):
    return np.sum(np.sin(x) * tangent)


def weighted_cosines(x, dy):
    return np.sum(np.cos(x) * dy)


X = np.array([1.0, 2.0])
WEIGHTS = np.array([0.5, 0.25])


def test_jvp_linearize_and_hvp_of_a_function_with_a_tangent_parameter():
    value, tangent = autotrace.jvp(weighted_sines, (X, WEIGHTS), (np.ones(2), np.zeros(2)))
    assert value == pytest.approx(weighted_sines(X, WEIGHTS))
    assert tangent == pytest.approx(np.sum(np.cos(X) * WEIGHTS))
    _, tangent = autotrace.jvp(weighted_sines, (np.array([1., 2.]), np.array([.5, .5])),
                               (np.ones(2), np.zeros(2)))
    assert tangent == pytest.approx(np.sum(np.cos([1., 2.]) * 0.5))
    _, linearized = autotrace.linearize(weighted_sines, X, WEIGHTS)
    assert linearized(np.zeros(2), np.ones(2)) == pytest.approx(np.sum(np.sin(X)))
    np.testing.assert_allclose(autotrace.hvp(weighted_sines)(X, WEIGHTS, np.ones(2)),
                               -np.sin(X) * WEIGHTS)
    np.testing.assert_allclose(autotrace.jacfwd(weighted_sines)(X, WEIGHTS),
                               np.cos(X) * WEIGHTS)
    np.testing.assert_allclose(autotrace.hessian(weighted_sines)(X, WEIGHTS),
                               np.diag(-np.sin(X) * WEIGHTS))


def test_hvp_and_checks_of_a_function_with_a_dy_parameter():
    np.testing.assert_allclose(autotrace.hvp(weighted_cosines)(X, WEIGHTS, np.ones(2)),
                               -np.cos(X) * WEIGHTS)
    check_vjp(weighted_cosines, autotrace.grad(weighted_cosines), (X, WEIGHTS))
    check_grads(weighted_cosines, (X, WEIGHTS), order=2)
    check_grads(weighted_sines, (X, WEIGHTS), order=2)


# --- a list given to NumPy's functions ---------------------------------------------------------

def squared_errors(w, X, y):
    losses = []
    for i in range(X.shape[0]):
        losses.append((X[i] @ w - y[i]) ** 2)
    return np.mean(losses)


# Each builds its list itself (so the transform sees it is one) and gives it to NumPy.
def list_mean(w, X):
    items = []
    for i in range(X.shape[0]):
        items.append(np.tanh(X[i] @ w))
    return np.mean(items)


def list_max(w, X):
    items = []
    for i in range(X.shape[0]):
        items.append(np.tanh(X[i] @ w))
    return np.max(items) + np.min(items)


def list_var_std(w, X):
    items = []
    for i in range(X.shape[0]):
        items.append(np.tanh(X[i] @ w))
    return np.var(items) + np.std(items)


def list_prod(w, X):
    items = []
    for i in range(X.shape[0]):
        items.append(np.tanh(X[i] @ w))
    return np.prod(items)


def list_dot(w, X):
    items = []
    for i in range(X.shape[0]):
        items.append(np.tanh(X[i] @ w))
    return np.dot(items, items) + np.dot(items, X[:, 0])


def list_cumsum_square(w, X):
    items = []
    for i in range(X.shape[0]):
        items.append(np.tanh(X[i] @ w))
    return np.sum(np.cumsum(items) ** 2) + np.sum(np.square(items))


def list_times_an_int(w, X):
    # A list's tangent times 2 repeated the list, and its mean was half the right one.
    items = []
    for i in range(X.shape[0]):
        items.append(np.tanh(X[i] @ w))
    return np.mean(np.multiply(2, items)) + np.mean(np.add(items, items))


def list_of_rows(w, X):
    rows = []
    for i in range(X.shape[0]):
        rows.append(np.tanh(X[i] * w))
    return np.sum(np.mean(rows, axis=0) ** 2)


def list_display(w, X):
    a, b = np.tanh(X[0] @ w), np.sin(X[1] @ w)
    return np.max([a, b * 2.0]) + np.var([a, b])


def growing_list(w, X):
    items = []
    total = 0.0
    for i in range(X.shape[0]):
        items.append(np.tanh(X[i] @ w))
        total = total + np.mean(items) * np.max(items)
    return total


LIST_FUNCTIONS = [list_mean, list_max, list_var_std, list_prod, list_dot, list_cumsum_square,
                  list_times_an_int, list_of_rows, list_display, growing_list]
RNG = np.random.default_rng(0)
W, DATA, TARGETS = RNG.standard_normal(3), RNG.standard_normal((4, 3)), RNG.standard_normal(4)
BATCH = RNG.standard_normal((2, 4, 3))


def test_the_mean_of_a_list_traced():
    expected = central_difference(lambda w: squared_errors(w, DATA, TARGETS), W)
    np.testing.assert_allclose(expected, [1.6853, -0.1397, 1.0659], atol=1e-4)
    for gradient in (autotrace.grad(squared_errors),
                     autotrace.function(autotrace.grad(squared_errors)),
                     autotrace.grad(autotrace.function(squared_errors))):
        np.testing.assert_allclose(gradient(W, DATA, TARGETS), expected, **TOLERANCE)
    source = autotrace.source(autotrace.grad(squared_errors))
    assert "losses_array = np.asarray(losses)" in source


@pytest.mark.parametrize("f", LIST_FUNCTIONS)
def test_numpy_functions_of_a_list_in_every_mode(f):
    expected = central_difference(lambda w: f(w, DATA), W)
    np.testing.assert_allclose(autotrace.grad(f)(W, DATA), expected, **TOLERANCE)
    np.testing.assert_allclose(autotrace.function(autotrace.grad(f))(W, DATA), expected,
                               **TOLERANCE)
    np.testing.assert_allclose(autotrace.jacrev(f)(W, DATA), expected, **TOLERANCE)
    np.testing.assert_allclose(autotrace.jacfwd(f)(W, DATA), expected, **TOLERANCE)
    _, tangent = autotrace.jvp(lambda w: f(w, DATA), (W,), (np.ones(3),))
    assert tangent == pytest.approx(np.sum(expected), rel=1e-6)
    batched = autotrace.vmap(autotrace.grad(f), in_axes=(None, 0))(W, BATCH)
    for example, gradient in zip(BATCH, batched):
        np.testing.assert_allclose(gradient, central_difference(lambda w: f(w, example), W),
                                   **TOLERANCE)
    hessian = hessian_by_differences(lambda w: f(w, DATA), W)
    np.testing.assert_allclose(autotrace.function(autotrace.hessian(f))(W, DATA), hessian,
                               rtol=1e-5, atol=1e-6)


def test_a_list_argument_still_gets_a_list_gradient():
    gradient = autotrace.grad(lambda xs: np.max(xs) + np.mean(xs))([1.0, 3.0, 2.0])
    assert isinstance(gradient, list)
    assert gradient == pytest.approx([1 / 3, 1 + 1 / 3, 1 / 3])


# --- checkpointed loops writing into a buffer ----------------------------------------------------

def written_into_a_buffer(w, xs):
    outs = np.zeros(xs.shape[0])
    h = 0.0
    for t in range(xs.shape[0]):
        h = np.tanh(w * xs[t] + h)
        outs[t] = h
    return np.sum(outs ** 2)


def rows_written_into_a_buffer(w, xs):
    outs = np.zeros((xs.shape[0], w.shape[0]))
    h = np.zeros(w.shape[0])
    for t in range(xs.shape[0]):
        h = np.tanh(w * xs[t] + 0.5 * h)
        outs[t] = h
    return np.sum(outs ** 2)


STEPS = np.array([0.5, -1.0, 2.0, 0.3])


@pytest.mark.parametrize("every", [1, 2, 3])
def test_a_checkpointed_loop_writing_a_buffer_traced_and_batched(every):
    gradient = autotrace.grad(written_into_a_buffer, checkpoint_every=every)
    expected = central_difference(lambda w: written_into_a_buffer(w[0], STEPS), np.array([0.7]))
    assert gradient(0.7, STEPS) == pytest.approx(expected[0], rel=1e-6)
    assert gradient(0.7, STEPS) == pytest.approx(2.12694, abs=1e-5)
    assert autotrace.function(gradient)(0.7, STEPS) == pytest.approx(expected[0], rel=1e-6)
    points = np.array([0.7, -0.2])
    batched = autotrace.vmap(gradient, in_axes=(0, None))(points, STEPS)
    np.testing.assert_allclose(batched, [gradient(w, STEPS) for w in points], rtol=1e-12)


def test_second_derivatives_of_a_checkpointed_loop_writing_rows():
    w = np.array([0.3, -0.4, 0.8])
    gradient = autotrace.grad(rows_written_into_a_buffer, checkpoint_every=2)
    expected = central_difference(lambda w: rows_written_into_a_buffer(w, STEPS), w)
    np.testing.assert_allclose(gradient(w, STEPS), expected, **TOLERANCE)
    np.testing.assert_allclose(autotrace.function(gradient)(w, STEPS), expected, **TOLERANCE)
    hessian = hessian_by_differences(lambda w: rows_written_into_a_buffer(w, STEPS), w)
    np.testing.assert_allclose(autotrace.jacfwd(gradient)(w, STEPS), hessian, rtol=1e-5,
                               atol=1e-6)
    np.testing.assert_allclose(autotrace.function(autotrace.jacfwd(gradient))(w, STEPS), hessian,
                               rtol=1e-5, atol=1e-6)
