"""Derivatives of functions that call autotrace.vmap, and of Jacobians.

A call of a vmapped function inside a function autotrace differentiates is derived from its
batched trace (transforms/dynamic_calls.py, autotrace/from_trace.py): the gradient of a loss
over per-example values, its Hessian, forward mode; and jacrev and jacfwd, which vmap, nest as
JAX's do (jacfwd(jacrev(f)) is a Hessian). Each is checked against central differences of the
same function written with a Python loop over the examples.
"""
import warnings

import numpy as np
import pytest

import autotrace
from tests.numeric import central_difference

RNG = np.random.default_rng(7)
X = RNG.normal(size=(4, 3))
W = RNG.normal(size=3)


def per_example(x, w):
    return np.sum(np.tanh(x * w) ** 2)


def loss(w, x):
    return np.sum(autotrace.vmap(per_example, in_axes=(0, None))(x, w) ** 2)


def loss_by_loop(w, x):
    return sum(per_example(row, w) ** 2 for row in x)


def loss_of_mapped(x, w):
    return np.sum(np.sin(autotrace.vmap(per_example, in_axes=(0, None))(x, w)))


def loss_of_mapped_by_loop(x, w):
    return np.sum(np.sin([per_example(row, w) for row in x]))


def loss_out_axis_1(w, x):
    return np.sum(autotrace.vmap(lambda row, w: row * w, in_axes=(0, None), out_axes=1)(x, w)
                  ** 3)


def loss_of_a_dict(params, x):
    scaled = autotrace.vmap(lambda row, p: np.sum(row * p["a"]) * p["b"], in_axes=(0, None))
    return np.sum(scaled(x, params) ** 2)


@pytest.mark.parametrize("traced", [False, True], ids=["eager", "traced"])
def test_the_gradient_through_a_vmap_is_the_loops(traced):
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # (no warning: the vmap's trace is autotrace's own)
        gradient = autotrace.grad(loss)
        gradient = autotrace.function(gradient) if traced else gradient
        got = gradient(W, X)
    np.testing.assert_allclose(got, central_difference(lambda w: loss_by_loop(w, X), W),
                               rtol=1e-6, atol=1e-8)


def test_the_gradient_of_the_mapped_argument():
    want = central_difference(lambda x: loss_of_mapped_by_loop(x, W), X)
    np.testing.assert_allclose(autotrace.grad(loss_of_mapped)(X, W), want, rtol=1e-6,
                               atol=1e-8)


def test_out_axes_and_a_dict_argument():
    want = central_difference(lambda w: np.sum((X * w) ** 3), W)
    np.testing.assert_allclose(autotrace.grad(loss_out_axis_1)(W, X), want, rtol=1e-6)
    params = {"a": W, "b": 1.5}
    got = autotrace.grad(loss_of_a_dict)(params, X)
    np.testing.assert_allclose(got["a"], central_difference(
        lambda a: loss_of_a_dict({"a": a, "b": 1.5}, X), W), rtol=1e-6)
    assert got["b"] == pytest.approx(2.0 * 1.5 * np.sum((X @ W) ** 2))


def test_forward_mode_and_second_order_through_a_vmap():
    tangent = np.array([1.0, -2.0, 0.5])
    want = central_difference(lambda w: loss_by_loop(w, X), W) @ tangent
    assert autotrace.jvp(loss, (W, X), (tangent, np.zeros_like(X)))[1] == pytest.approx(want)
    hessian = np.array([central_difference(
        lambda w: autotrace.grad(loss)(w, X)[i], W, eps=1e-5) for i in range(3)])
    np.testing.assert_allclose(autotrace.hessian(loss)(W, X), hessian, rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(autotrace.jacfwd(autotrace.grad(loss))(W, X), hessian,
                               rtol=1e-5, atol=1e-7)


BATCHED = autotrace.vmap(per_example, in_axes=(0, None))  # made once, read as a global


def loss_of_a_global_vmap(w, x):
    return np.sum(BATCHED(x, w) ** 2)


def test_a_vmap_the_function_reads_as_a_global():
    want = central_difference(lambda w: loss_by_loop(w, X), W)
    np.testing.assert_allclose(autotrace.grad(loss_of_a_global_vmap)(W, X), want, rtol=1e-6,
                               atol=1e-8)
    tangent = np.array([0.5, 1.0, -1.0])
    _, got = autotrace.jvp(loss_of_a_global_vmap, (W, X), (tangent, np.zeros_like(X)))
    assert got == pytest.approx(want @ tangent)


def test_the_gradient_through_a_vmap_of_a_gradient():
    per_gradient = autotrace.grad(per_example, wrt=1)

    def norms(w, x):
        return np.sum(autotrace.vmap(per_gradient, in_axes=(0, None))(x, w) ** 2)

    want = central_difference(
        lambda w: np.sum(np.array([per_gradient(row, w) for row in X]) ** 2), W)
    np.testing.assert_allclose(autotrace.grad(norms)(W, X), want, rtol=1e-6, atol=1e-8)


def field(x):
    return np.sin(x) * x[0] + x ** 2 * x[2]


NESTED = {
    "jacfwd(jacrev)": lambda f: autotrace.jacfwd(autotrace.jacrev(f)),
    "jacrev(jacfwd)": lambda f: autotrace.jacrev(autotrace.jacfwd(f)),
    "jacrev(jacrev)": lambda f: autotrace.jacrev(autotrace.jacrev(f)),
    "jacfwd(jacfwd)": lambda f: autotrace.jacfwd(autotrace.jacfwd(f)),
    "function(jacfwd(jacrev))": lambda f: autotrace.function(
        autotrace.jacfwd(autotrace.jacrev(f))),
}


@pytest.mark.parametrize("nested", NESTED.values(), ids=NESTED.keys())
def test_jacobians_nest(nested):
    x = np.array([0.5, -1.0, 2.0])
    # The Jacobian of the Jacobian, column by column, from central differences of jacrev's.
    jacobian = autotrace.jacrev(field)
    want = np.stack([(jacobian(x + step) - jacobian(x - step)) / 2e-6
                     for step in 1e-6 * np.eye(3)], axis=-1)
    np.testing.assert_allclose(nested(field)(x), want, rtol=1e-6, atol=1e-8)
    scalar = lambda x: np.sum(np.tanh(x) * x[1])  # noqa: E731
    np.testing.assert_allclose(nested(scalar)(x), autotrace.hessian(scalar)(x), rtol=1e-10)


SCALE = autotrace.Variable(np.array([1.0, 2.0, 3.0]))


def scaled(row, w):
    return np.sum(row * w * SCALE)


def loss_reading_a_variable(w, x):
    return np.sum(autotrace.vmap(scaled, in_axes=(0, None))(x, w))


def test_a_vmap_reading_variables_is_refused_with_what_to_do():
    loss_reading_a_variable(W, X)  # runs
    with pytest.raises(autotrace.TransformError, match=(
            r"autotrace differentiates a call of <autotrace.vmap of scaled> \(inside a "
            r"function it differentiates\) by tracing the batch, but it reads or writes "
            r"autotrace.Variables, which a derivative built from a trace does not follow yet\. "
            r"Pass their values as arguments\.$")):
        autotrace.grad(loss_reading_a_variable)(W, X)


@autotrace.custom_gradient
def _halved(x):
    return x * 1.0, lambda dy: dy * 0.5


def _per_example_stopped(w, x):
    return np.sum(x * w) * autotrace.stop_gradient(np.sum(w))


def _per_example_halved(w, x):
    return np.sum(_halved(x * w))


@pytest.mark.parametrize("per, name", [(_per_example_stopped, "stop_gradient"),
                                       (_per_example_halved, "_halved")],
                         ids=["stop_gradient", "custom_gradient"])
def test_gradients_the_user_wrote_inside_a_vmap_are_refused(per, name):
    # A trace keeps their values, not their gradients: the derivative would be the plain one.
    def total(w, x):
        return np.sum(autotrace.vmap(per, in_axes=(None, 0))(w, x))

    message = (rf"autotrace differentiates a call of <autotrace.vmap of {per.__name__}> "
               rf"\(inside a function it differentiates\) by tracing the batch, but it calls "
               rf"{name}, whose gradient you wrote .* Differentiate inside the vmap instead")
    for derivative in (lambda: autotrace.grad(total)(W, X),
                       lambda: autotrace.jvp(total, (W, X), (W, X))):
        with pytest.raises(autotrace.TransformError, match=message):
            derivative()
    # inside the vmap, the rule holds
    want = np.sum([autotrace.grad(per)(W, row) for row in X], axis=0)
    np.testing.assert_allclose(np.sum(autotrace.vmap(autotrace.grad(per), in_axes=(None, 0))(
        W, X), axis=0), want, rtol=1e-12)


FACTOR = 1.0


def _per_example_reading_a_global(x):
    return np.sum(np.sin(FACTOR * x))


def _loss_of_a_new_vmap(w, x):
    return np.sum(autotrace.vmap(_per_example_reading_a_global)(x * w))


def test_a_vmap_made_each_call_reads_globals_as_they_are(monkeypatch):
    for factor in (1.0, 3.0):
        monkeypatch.setitem(globals(), "FACTOR", factor)
        want = central_difference(lambda w: _loss_of_a_new_vmap(w, X), W)
        np.testing.assert_allclose(autotrace.grad(_loss_of_a_new_vmap)(W, X), want,
                                   rtol=1e-6, atol=1e-8)


class _Scaled:
    def __init__(self, scale):
        self.scale = scale

    @autotrace.vmap
    def rows(self, x):
        return np.sin(x) * self.scale


class _Rows:
    def __init__(self, scale):
        self.scale = scale

    def __call__(self, x):
        return np.sum(np.tanh(x * self.scale))


def test_a_vmapped_function_holding_values_that_carry_gradient_is_refused():
    def total(w, x):
        return np.sum(_Scaled(w).rows(x) ** 2)

    def through_a_callable_object(w, x):
        return np.sum(autotrace.vmap(_Rows(w))(x) ** 2)

    for function, name in ((total, "_Scaled.rows"), (through_a_callable_object, "_Rows")):
        for derivative in (lambda: autotrace.grad(function)(W, X),
                           lambda: autotrace.jvp(function, (W, X), (W, X))):
            with pytest.raises(autotrace.TransformError, match=(
                    rf"autotrace differentiates a call of <autotrace.vmap of {name}> by tracing "
                    r"the batch, and a trace takes what the mapped function holds \(an object's "
                    r"attributes, a bound method's object\) for constants, where it holds "
                    r"values that carry gradient here: pass them as arguments of the vmapped "
                    r"function instead")):
                derivative()  # (it gave zeros)
    fixed = _Scaled(2.0)  # an object whose attributes carry none: followed
    np.testing.assert_allclose(autotrace.grad(lambda x: np.sum(fixed.rows(x) ** 2))(X),
                               8.0 * np.sin(X) * np.cos(X), rtol=1e-12)


def test_jacobians_of_a_gradient_seed_it_by_its_own_keyword():
    # grad(grad(f)) takes its seed as dy_ (dy is grad(f)'s): jacrev passed dy, and crashed
    # ("shape mismatch") or, traced, seeded the inner gradient.
    def p(w):
        return np.sum(np.tanh(X @ w))

    hessian = autotrace.hessian(p)(W)
    for jacobian in (autotrace.jacrev(autotrace.grad(p)), autotrace.jacfwd(autotrace.grad(p)),
                     autotrace.function(autotrace.jacrev(autotrace.grad(p))),
                     autotrace.jacobian(autotrace.grad(p), mode="forward")):
        np.testing.assert_allclose(jacobian(W), hessian, rtol=1e-12, atol=1e-15)


def _per_example_softmax(w, x):
    return np.sum(autotrace.nn.softmax(x * w) * np.arange(3.0))


def test_autotrace_s_own_functions_inside_a_vmap_differentiate():
    # softmax shifts by a stop_gradient of the max, which changes no gradient: not refused
    def total(w, x):
        return np.sum(autotrace.vmap(_per_example_softmax, in_axes=(None, 0))(w, x))

    want = central_difference(lambda w: sum(_per_example_softmax(w, row) for row in X), W)
    np.testing.assert_allclose(autotrace.grad(total)(W, X), want, rtol=1e-6, atol=1e-9)


def test_functions_made_by_exec_that_the_user_stops_are_refused():
    namespace = {"np": np, "autotrace": autotrace}
    exec("def stopped(x):\n    return np.sum(x * autotrace.stop_gradient(x))\n"
         "def softmax_sum(x):\n    return np.sum(autotrace.nn.softmax(x) * np.arange(3.0))\n",
         namespace)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (TracedSourceWarning: no source to read)
        with pytest.raises(autotrace.TransformError, match=(
                r"the source of 'stopped' cannot be read .* but it calls stop_gradient, whose "
                r"gradient you wrote")):
            autotrace.grad(namespace["stopped"])(W)  # (it gave 2 x for x)
        want = central_difference(namespace["softmax_sum"], W)
        np.testing.assert_allclose(autotrace.grad(namespace["softmax_sum"])(W), want,
                                   rtol=1e-6, atol=1e-9)


def branching(x):
    if x[0] > 0:  # (a traced `if` under a trace of jacrev: f ran as written, and raised)
        return np.sin(x) * x[1]
    return x ** 2


def test_jacrev_of_a_function_with_a_traced_if_under_a_trace():
    for x in (np.array([1.0, 2.0, 3.0]), np.array([-1.0, 2.0, 3.0])):
        expected = np.stack([central_difference(lambda v: branching(v)[i], x)
                             for i in range(3)])
        np.testing.assert_allclose(autotrace.function(autotrace.jacrev(branching))(x),
                                   expected, rtol=1e-6, atol=1e-8)
    batch = np.array([[1.0, 2.0, 3.0], [-1.0, 2.0, 3.0]])
    np.testing.assert_allclose(autotrace.vmap(autotrace.jacfwd(branching))(batch),
                               np.stack([autotrace.jacrev(branching)(x) for x in batch]),
                               rtol=1e-12)


def test_jacrev_and_jacfwd_refuse_a_container_argument_clearly():
    def g(x, params):
        return params["w"] * x
    for caller in ("jacrev", "jacfwd"):
        with pytest.raises(TypeError, match=rf"^autotrace\.{caller}\('g'\) is taken with respect "
                                            r"to argument 1, a dict: it takes one array or "
                                            r"number;"):
            getattr(autotrace, caller)(g, 1)(np.ones(3), {"w": np.ones(3)})


def test_an_op_with_no_batched_form_over_an_empty_batch():
    # (np.kron runs once per example: with none, an IndexError inside autotrace)
    def f(x):
        return np.kron(x[:2], x[1:]).sum() * x
    result = autotrace.vmap(f)(np.zeros((0, 3)))
    assert result.shape == (0, 3) and result.dtype == np.float64
    gradients = autotrace.vmap(autotrace.grad(lambda x: np.sum(f(x))))(np.zeros((0, 3)))
    assert gradients.shape == (0, 3)


def test_jacrev_of_a_list_of_numbers_is_taken_as_an_array():
    np.testing.assert_allclose(autotrace.jacrev(lambda p: p[0] * p[1])([2.0, 3.0]), [3.0, 2.0])


def powered(x, scale=1.0, *, power=2):
    return scale * np.sin(x) ** power


@pytest.mark.parametrize("caller", ["jacrev", "jacfwd"])
def test_keyword_arguments_are_passed_to_f_and_held_fixed(caller):
    # (as JAX's: they are not differentiated, and not batched by the vmap over the basis)
    x = np.array([0.5, -1.0, 2.0])
    expected = np.stack([central_difference(lambda v: powered(v, 3.0, power=3)[i], x)
                         for i in range(3)])
    np.testing.assert_allclose(getattr(autotrace, caller)(powered)(x, scale=3.0, power=3),
                               expected, rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("nested", NESTED.values(), ids=NESTED.keys())
def test_keyword_arguments_reach_f_through_nested_jacobians(nested):
    x = np.array([0.5, -1.0, 2.0])
    jacobian = autotrace.jacrev(powered)
    want = np.stack([(jacobian(x + step, 3.0, power=3) - jacobian(x - step, 3.0, power=3))
                     / 2e-6 for step in 1e-6 * np.eye(3)], axis=-1)
    np.testing.assert_allclose(nested(powered)(x, power=3, scale=3.0), want, rtol=1e-6,
                               atol=1e-8)


def test_keyword_arguments_of_a_traced_jacobian_retrace_by_value():
    jacobian = autotrace.function(autotrace.jacrev(powered))
    x = np.array([0.5, -1.0])
    for scale in (np.array(2.0), np.array(5.0), 7.0):
        np.testing.assert_allclose(jacobian(x, scale=scale, power=3),
                                   np.diag(3.0 * scale * np.sin(x) ** 2 * np.cos(x)),
                                   rtol=1e-12)
    batched = autotrace.vmap(autotrace.jacfwd(powered))(np.stack([x, 2 * x]),
                                                        scale=np.array([1.0, 4.0]))
    np.testing.assert_allclose(batched, [np.diag(2 * np.sin(x) * np.cos(x)),
                                         np.diag(8 * np.sin(2 * x) * np.cos(2 * x))],
                               rtol=1e-12)
