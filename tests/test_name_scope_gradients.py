"""`with autotrace.name_scope(...)` inside functions given to the derivative transforms: the
same derivatives as without the scope, the `with` kept in the primal sweep and the tangents,
the adjoint run in "gradients/<name>", and every other `with` refused."""
from __future__ import annotations

import contextlib
import re

import numpy as np
import pytest

import autotrace
import autotrace as at
from autotrace import name_scope
from autotrace.runtime import scopes
from autotrace.testing import check_grads
from autotrace.transforms.errors import TransformError


# --- scoped functions, each beside the same function without its scopes ----------------------

def nested(x, w):
    with at.name_scope("outer"):
        with name_scope("inner"):
            h = np.sin(x) * w
        z = h + 1.0
    return np.sum(z * z)


def nested_plain(x, w):
    h = np.sin(x) * w
    z = h + 1.0
    return np.sum(z * z)


def early_return(x, w):
    with autotrace.name_scope("block"):
        y = x * w
        if np.sum(y) > 0:
            return np.sum(np.sin(y))
        y = y * y
    return np.sum(y)


def early_return_plain(x, w):
    y = x * w
    if np.sum(y) > 0:
        return np.sum(np.sin(y))
    y = y * y
    return np.sum(y)


def scope_per_step(x, w):
    s = 0.0
    for i in range(4):
        with autotrace.name_scope(f"step{i}"):
            s = s + np.sum(np.cos(x * w * i))
            if i == 2:
                break
    return s


def scope_per_step_plain(x, w):
    s = 0.0
    for i in range(4):
        s = s + np.sum(np.cos(x * w * i))
        if i == 2:
            break
    return s


def scope_in_while(x, w):
    k = 0
    while k < 4:
        with autotrace.name_scope(name="body"):
            x = x * w
            k = k + 1
            if k == 2:
                continue
            x = np.sin(x)
    return np.sum(x)


def scope_in_while_plain(x, w):
    k = 0
    while k < 4:
        x = x * w
        k = k + 1
        if k == 2:
            continue
        x = np.sin(x)
    return np.sum(x)


def returns_inside(x, w):
    with autotrace.name_scope("model"):
        with autotrace.name_scope("layer"):
            return np.sum(np.tanh(x * w) ** 2)


def returns_inside_plain(x, w):
    return np.sum(np.tanh(x * w) ** 2)


PAIRS = [(nested, nested_plain), (early_return, early_return_plain),
         (scope_per_step, scope_per_step_plain), (scope_in_while, scope_in_while_plain),
         (returns_inside, returns_inside_plain)]
IDS = [scoped.__name__ for scoped, _ in PAIRS]
X = np.array([0.3, -0.2, 0.5])
W = np.array([1.5, 0.7, -0.4])
ARGUMENT_SETS = [(X, W), (-X, W)]  # (early_return takes both paths)


@pytest.mark.parametrize("scoped, plain", PAIRS, ids=IDS)
def test_derivatives_through_scopes_match_finite_differences_in_both_modes_to_order_two(
        scoped, plain):
    for args in ARGUMENT_SETS:
        check_grads(scoped, args, wrt=(0, 1), order=2, modes=("reverse", "forward"))


@pytest.mark.parametrize("scoped, plain", PAIRS, ids=IDS)
def test_derivatives_through_scopes_equal_those_without_them(scoped, plain):
    for x, w in ARGUMENT_SETS:
        expected = at.grad(plain, wrt=(0, 1))(x, w)
        for gradient in (at.grad(scoped, wrt=(0, 1))(x, w),
                         at.function(at.grad(scoped, wrt=(0, 1)))(x, w)):
            for got, want in zip(gradient, expected):
                np.testing.assert_allclose(got, want, rtol=1e-13, atol=1e-15)
        value, gradient = at.value_and_grad(scoped)(x, w)
        assert value == pytest.approx(plain(x, w), rel=1e-14)
        np.testing.assert_allclose(gradient, expected[0], rtol=1e-13, atol=1e-15)
        _, vjp_function = at.vjp(scoped, x, w)
        for got, want in zip(vjp_function(1.0), expected):
            np.testing.assert_allclose(got, want, rtol=1e-13, atol=1e-15)
        value, tangent = at.jvp(scoped, (x, w), (np.ones(3), np.zeros(3)))
        assert value == pytest.approx(plain(x, w), rel=1e-14)
        assert tangent == pytest.approx(np.sum(expected[0]), rel=1e-12)
        np.testing.assert_allclose(at.hessian(scoped)(x, w), at.hessian(plain)(x, w),
                                   rtol=1e-12, atol=1e-14)
        assert scopes.current() == ""  # every scope opened was closed


def test_a_scoped_gradient_by_hand():
    # d/dx sum((sin(x) * w + 1)^2) = 2 (sin(x) w + 1) w cos(x)
    by_hand = 2.0 * (np.sin(X) * W + 1.0) * W * np.cos(X)
    np.testing.assert_allclose(at.grad(nested)(X, W), by_hand, rtol=1e-14)


# --- what the traced graph records -------------------------------------------------------------

def scopes_of(graph) -> list:
    return [(equation.primitive.name, equation.scope) for equation in graph.equations]


def test_a_traced_gradient_runs_forward_ops_in_the_scope_and_their_adjoints_in_gradients():
    def layer(x):
        with autotrace.name_scope("layer1"):
            h = np.sin(x) * x
        return np.sum(h)

    graph = at.function(at.grad(layer)).graph(X, optimized=False)
    # d(sin(x) x) = 1 * sin(x) + (1 * x) cos(x), all of it in the gradient scope
    assert scopes_of(graph) == [
        ("sin", "layer1"), ("multiply", "layer1"), ("reduce_sum", ""),
        ("multiply", "gradients/layer1"), ("multiply", "gradients/layer1"),
        ("cos", "gradients/layer1"), ("multiply", "gradients/layer1"),
        ("add", "gradients/layer1")]


def test_gradients_of_nested_scopes_nest_under_one_gradients_scope():
    graph = at.function(at.grad(nested)).graph(X, W, optimized=False)
    recorded = scopes_of(graph)
    assert [entry for entry in recorded if entry[1] and not entry[1].startswith("gradients")] \
        == [("sin", "outer/inner"), ("multiply", "outer/inner"), ("add", "outer")]
    gradient_scopes = [scope for _, scope in recorded if scope.startswith("gradients")]
    assert gradient_scopes == ["gradients/outer/inner"] * len(gradient_scopes)  # cos * w


def test_each_steps_gradient_runs_in_that_steps_scope():
    graph = at.function(at.grad(scope_per_step)).graph(X, W, optimized=False)
    seen = []
    for _, scope in scopes_of(graph):
        if scope and (not seen or seen[-1] != scope):
            seen.append(scope)
    assert seen == ["step0", "step1", "step2", "gradients/step2", "gradients/step1",
                    "gradients/step0"]


def test_a_gradient_taken_inside_a_scope_goes_under_it():
    with autotrace.name_scope("train"):
        graph = at.function(at.grad(returns_inside)).graph(X, W, optimized=False)
    assert {scope for _, scope in scopes_of(graph)} == {
        "train/model/layer", "train/gradients/model/layer"}


def test_gradient_scope_names():
    seen = []
    with scopes.gradient_scope("outer"):
        seen.append(scopes.current())
        with scopes.gradient_scope("inner"):
            seen.append(scopes.current())
    with name_scope("train"), scopes.gradient_scope("layer1"):
        seen.append(scopes.current())
    seen.append(scopes.current())
    assert seen == ["gradients/outer", "gradients/outer/inner", "train/gradients/layer1", ""]


def test_a_modules_own_call_is_differentiated_with_its_scope():
    class Scaled(autotrace.Module):
        def __init__(self):
            super().__init__(name="scaled")
            self.w = autotrace.Variable(np.array([2.0, 3.0]), name="w")

        def __call__(self, x):
            return super().__call__(x) * 2.0

        def call(self, x):
            return np.sin(self.w * x)

    model = Scaled()

    def loss(x):
        return np.sum(model(x) ** 2)

    x = np.array([0.5, -1.0])
    # d/dx sum((2 sin(w x))^2) = 8 sin(w x) cos(w x) w = 4 w sin(2 w x)
    by_hand = 4.0 * np.array([2.0, 3.0]) * np.sin(2.0 * np.array([2.0, 3.0]) * x)
    np.testing.assert_allclose(at.grad(loss)(x), by_hand, rtol=1e-14)
    traced = at.function(at.grad(loss))
    np.testing.assert_allclose(traced(x), by_hand, rtol=1e-14)
    recorded = scopes_of(traced.graph(x, optimized=False))
    assert recorded[:2] == [("multiply", "scaled"), ("sin", "scaled")]
    assert ("cos", "gradients/scaled") in recorded


# --- the generated source -------------------------------------------------------------------

def test_forward_mode_keeps_the_tangents_inside_the_with():
    def layer(x):
        with at.name_scope("layer1"):
            h = np.sin(x) * x
        return np.sum(h * h)

    lines = at.source(at.forward(layer)).splitlines()
    start = lines.index("    with at.name_scope('layer1'):")
    assert lines[start:start + 4] == [
        "    with at.name_scope('layer1'):",
        "        _t1 = np.sin(x)",
        "        h = _t1 * x",
        "        dh = read_as_array(dx) * np.cos(x) * x + dx * _t1",
    ]


def test_a_scope_named_by_an_expression_is_named_again_in_the_adjoint():
    lines = at.source(at.grad(scope_per_step)).splitlines()
    assert "        _t1 = f'step{i}'" in lines
    assert "        with autotrace.name_scope(_t1):" in lines
    assert "        with gradient_scope(_t1):" in lines
    # The adjoint reads each iteration's name: it is saved as the loop overwrites it.
    assert "        _stack1.append(_t1)" in lines and "        _t1 = _stack1.pop()" in lines


def test_the_second_derivative_keeps_the_gradient_scope_in_both_sweeps():
    def layer(x):
        with at.name_scope("layer1"):
            h = np.sin(x) * x
        return np.sum(h * h)

    lines = at.source(at.grad(at.grad(layer))).splitlines()
    assert [line.strip() for line in lines if line.strip().startswith("with")] == [
        "with at.name_scope('layer1'):", "with gradient_scope('layer1'):",
        "with gradient_scope('layer1'):", "with gradient_scope('layer1'):"]


# --- refusals ----------------------------------------------------------------------------------

@contextlib.contextmanager
def timer():
    yield


def with_own_context_manager(x):
    with timer():
        y = x * 2.0
    return np.sum(y)


def with_two_scopes(x):
    with autotrace.name_scope("a"), autotrace.name_scope("b"):
        y = x * 2.0
    return np.sum(y)


def with_scope_as(x):
    with autotrace.name_scope("a") as path:
        y = x * len(path)
    return np.sum(y)


def with_scope_inside_another_with(x):
    with autotrace.name_scope("a"):
        with open(__file__):
            y = x * 2.0
    return np.sum(y)




def other(manager):
    return (f"autotrace cannot differentiate this with statement: {manager} may swallow an "
            "exception (its __exit__ is not known to return a false value), which decides "
            "which statements of the block run; autotrace differentiates a with statement of "
            "autotrace.name_scope, np.errstate, warnings.catch_warnings or a context manager "
            "whose __exit__ returns a false constant; call the function inside the with block "
            "instead")


REFUSALS = [
    # (a contextlib.contextmanager's generator may catch the exception)
    (with_own_context_manager, "with timer()", "with", other("timer()")),
    (with_scope_as, "as path", "with as",
     "autotrace cannot differentiate `with autotrace.name_scope(...) as name:`; leave out "
     "`as name` (the scope's path is autotrace.runtime.scopes.current(), read outside the "
     "differentiated function)"),
    (with_scope_inside_another_with, "with open", "with", other("open(__file__)")),
]


@pytest.mark.parametrize("function, marker, construct, message", REFUSALS,
                         ids=[refusal[0].__name__ for refusal in REFUSALS])
@pytest.mark.parametrize("transform", [at.grad, at.forward], ids=["reverse", "forward"])
def test_other_with_statements_are_refused(transform, function, marker, construct, message):
    with pytest.raises(TransformError) as raised:
        transform(function)(X)
    error = raised.value
    assert error.message == message
    assert error.construct == construct
    assert error.filename == __file__
    line = next(number for number, text in enumerate(open(__file__), start=1)
                if marker in text and "def " not in text and "REFUSALS" not in text
                and text.lstrip().startswith("with"))
    assert error.lineno == line


def test_two_scopes_in_one_with_are_nested():
    assert at.grad(with_two_scopes)(X) == pytest.approx(np.full_like(X, 2.0))
    assert at.jvp(with_two_scopes, (X,), (X,))[1] == pytest.approx(np.sum(X * 2.0))


def test_other_with_statements_still_run_under_autotrace_function():
    # Tracing runs the with as Python (a side effect while tracing): nothing to refuse.
    assert at.function(with_own_context_manager)(X) == pytest.approx(np.sum(X * 2.0))


def test_a_scope_name_is_checked_when_the_derivative_runs():
    def bad(x):
        with at.name_scope(""):
            y = x * 2.0
        return np.sum(y)

    with pytest.raises(ValueError, match=re.escape(
            "autotrace.name_scope: the name must be a non-empty string, got ''")):
        at.grad(bad)(X)
    assert scopes.current() == ""


def test_control_flow_conversion_keeps_the_with_and_converts_its_block_once(monkeypatch,
                                                                            capsys):
    def branchy(x):
        with autotrace.name_scope("layer1"):
            h = np.tanh(x)
            if np.sum(h) > 0:
                h = h * 2.0
        return np.sum(h)

    monkeypatch.setenv("AUTOTRACE_DEBUG", "control_flow")
    traced = at.function(branchy)
    assert traced(X) == pytest.approx(np.sum(np.tanh(X) * 2.0))
    converted = capsys.readouterr().out.splitlines()
    assert converted[3:5] == [
        "    with _autotrace_unsuppressing(_autotrace_converted(autotrace.name_scope)"
        "('layer1')):",
        "        h = _autotrace_converted(np.tanh)(x)"]
    assert scopes_of(traced.graph(X, optimized=False))[:2] == [("tanh", "layer1"),
                                                               ("reduce_sum", "layer1")]


def test_a_layers_gradient_runs_in_gradients_under_its_scope():
    """A layer's call opens its scope; its derivative runs in gradients/<scope>, nested as the
    layers are (a Sequential's layers inside the Sequential's), in reverse mode traced and
    eager, with the gradients of the same model unscoped."""
    model = autotrace.layers.Sequential([autotrace.layers.Dense(4, activation="relu"),
                                         autotrace.layers.Dense(2)])
    x = np.random.default_rng(3).standard_normal((3, 5))
    model(x)

    def loss(x):
        return np.sum(model(x) ** 2)

    def plain_loss(x):
        h = np.maximum(x @ model.layers[0].kernel + model.layers[0].bias, 0.0)
        return np.sum((h @ model.layers[1].kernel + model.layers[1].bias) ** 2)

    traced = at.function(at.grad(loss))
    np.testing.assert_allclose(traced(x), at.grad(plain_loss)(x), rtol=1e-13)
    np.testing.assert_allclose(at.grad(loss)(x), at.grad(plain_loss)(x), rtol=1e-13)
    first, second = (f"{model.name}/{layer.name}" for layer in model.layers)
    recorded = {scope for _, scope in scopes_of(traced.graph(x, optimized=False))}
    assert recorded == {"", first, second, f"gradients/{first}", f"gradients/{second}"}
