"""autotrace.implicit_grad: gradients of the Variables a function reads, checked against finite
differences, through every way a function can reach a Variable, eagerly and traced."""
import re

import numpy as np
import pytest

import autotrace
from autotrace.runtime.state import StateError
from tests.variable_helpers import check_variable_gradients


# --- the eager guide's linear regression ----------------------------------------------------------

class Model(object):
    def __init__(self):
        self.W = autotrace.Variable(5., name="weight")
        self.B = autotrace.Variable(10., name="bias")

    def predict(self, inputs):
        return inputs * self.W + self.B


def regression_loss(model, inputs, targets):
    error = model.predict(inputs) - targets
    return np.mean(np.square(error))


def regression_data():
    rng = np.random.default_rng(0)
    inputs = rng.standard_normal(1000)
    return inputs, inputs * 3 + 2 + rng.standard_normal(1000)


def test_the_guide_model_trains_to_w_3_b_2():
    inputs, targets = regression_data()
    model = Model()
    gradients = autotrace.implicit_grad(regression_loss)
    first_loss = regression_loss(model, inputs, targets)
    for _ in range(201):
        for gradient, variable in gradients(model, inputs, targets):
            variable.assign_sub(0.01 * gradient)
    assert regression_loss(model, inputs, targets) < first_loss / 50
    assert abs(float(model.W) - 3.0) < 0.2 and abs(float(model.B) - 2.0) < 0.2


def test_the_reference_sgd_loop_ends_near_w_3_b_2():
    inputs, targets = regression_data()
    model = Model()
    optimizer = autotrace.optimizers.SGD(0.01)
    for _ in range(201):
        optimizer.apply_gradients(autotrace.implicit_grad(regression_loss)(model, inputs,
                                                                             targets))
    assert abs(float(model.W) - 3.0) < 0.2 and abs(float(model.B) - 2.0) < 0.2
    assert int(optimizer.iterations) == 201


def test_gradients_are_pairs_in_creation_order_with_exact_values():
    inputs, targets = regression_data()
    model = Model()
    pairs = autotrace.implicit_grad(regression_loss)(model, inputs, targets)
    assert [variable for _, variable in pairs] == [model.W, model.B]
    error = 5.0 * inputs + 10.0 - targets
    np.testing.assert_allclose(pairs[0][0], np.mean(2 * error * inputs), rtol=1e-12)
    np.testing.assert_allclose(pairs[1][0], np.mean(2 * error), rtol=1e-12)
    value, same = autotrace.implicit_value_and_grad(regression_loss)(model, inputs, targets)
    assert value == regression_loss(model, inputs, targets)
    assert [g for g, _ in same] == [g for g, _ in pairs]


def test_the_traced_training_step_runs_from_the_cache():
    inputs, targets = regression_data()
    eager, traced = Model(), Model()
    gradients = autotrace.implicit_grad(regression_loss)

    @autotrace.function
    def train_step(model, inputs, targets):
        for gradient, variable in gradients(model, inputs, targets):
            variable.assign_sub(0.01 * gradient)
        return regression_loss(model, inputs, targets)

    for _ in range(20):
        for gradient, variable in gradients(eager, inputs, targets):
            variable.assign_sub(0.01 * gradient)
        loss = train_step(traced, inputs, targets)
    assert train_step.trace_count == 1
    np.testing.assert_allclose([float(traced.W), float(traced.B)],
                               [float(eager.W), float(eager.B)], rtol=1e-12)
    np.testing.assert_allclose(loss, regression_loss(eager, inputs, targets), rtol=1e-12)


# --- every way to reach a Variable ----------------------------------------------------------------

GLOBAL_W = autotrace.Variable(np.array([1.0, -2.0, 0.5]), name="global_w")


def uses_global_through_a_helper(x):
    return np.sum(np.tanh(x * GLOBAL_W))


def reads_a_global(x):
    return uses_global_through_a_helper(x) + np.sum(GLOBAL_W ** 2)


def test_globals_read_directly_and_in_called_functions():
    pairs = check_variable_gradients(reads_a_global, np.array([0.3, -1.0, 2.0]))
    assert [v for _, v in pairs] == [GLOBAL_W]


def test_closures():
    scale = autotrace.Variable(np.array([2.0, 3.0]), name="scale")

    def loss(x):
        return np.sum(np.sin(scale * x))

    check_variable_gradients(loss, np.array([0.1, 0.7]))


def test_variables_passed_directly_lists_and_dicts():
    a = autotrace.Variable(np.array([1.0, 2.0]), name="a")
    b = autotrace.Variable(np.array([[0.5], [1.5]]), name="b")
    frozen = autotrace.Variable(np.array([3.0, 4.0]), name="frozen", trainable=False)

    def loss(first, rest):
        return np.sum(first * rest["b"] ** 2) + np.sum(rest["frozen"] * first)

    pairs = check_variable_gradients(loss, a, {"b": b, "frozen": frozen})
    assert [v for _, v in pairs] == [a, b]  # a non-trainable Variable gets no gradient


class Affine(autotrace.Module):
    def __init__(self, units, seed):
        super().__init__()
        self.units, self.seed = units, seed

    def build(self, input_shape):
        rng = np.random.default_rng(self.seed)
        self.add_weight("kernel", (input_shape[-1], self.units), rng=rng)
        self.add_weight("bias", (self.units,), initializer="random_normal", rng=rng)

    def call(self, x):
        return np.tanh(x @ self.kernel + self.bias)


class Chain(autotrace.Module):
    def __init__(self):
        super().__init__()
        self.layers = [Affine(3, 0), Affine(2, 1)]

    def call(self, x):
        for layer in self.layers:
            x = layer(x)
        return x


def test_nested_modules_in_a_list_built_on_the_first_call():
    chain = Chain()
    x = np.random.default_rng(2).standard_normal((4, 5))

    def loss(model, x):
        return np.sum(model(x) ** 2)

    pairs = check_variable_gradients(loss, chain, x)
    assert [v.name for _, v in pairs] == [v.name for v in chain.trainable_variables]
    assert len(pairs) == 4


def test_a_global_module_called_in_the_loss():
    x = np.random.default_rng(3).standard_normal((2, 5))
    assert len(check_variable_gradients(loss_of_global_chain, x)) == 4


GLOBAL_CHAIN = Chain()


def loss_of_global_chain(x):
    return np.mean(GLOBAL_CHAIN(x))


def test_a_variable_used_twice_sums_its_gradients():
    w = autotrace.Variable(np.array(1.5), name="w")

    def loss(x):
        y = w * x
        for _ in range(3):
            y = y * w
        return y

    pairs = check_variable_gradients(loss, 2.0)
    np.testing.assert_allclose(pairs[0][0], 4 * 1.5 ** 3 * 2.0)


def test_the_generated_code_shows_where_gradients_go():
    value_and_gradients = autotrace.implicit_value_and_grad(reads_a_global)
    value_and_gradients(np.ones(3))
    (derivative,) = value_and_gradients.__autotrace_implicit__.values()
    source = autotrace.source(derivative)
    assert "deposit(GLOBAL_W, bGLOBAL_W)" in source


def test_plain_grad_with_respect_to_a_model_says_to_use_implicit_grad():
    with pytest.raises(StateError, match=re.escape(
            "autotrace.grad cannot differentiate with respect to a Model that holds Variables "
            "(it has no gradient of its own); use autotrace.implicit_grad(f)")):
        autotrace.grad(regression_loss)(Model(), np.ones(3), np.ones(3))


def test_plain_grad_through_a_variable_attribute_says_to_use_implicit_grad():
    model = Model()
    with pytest.raises(StateError, match=re.escape(
            "a gradient reached Variable 'weight' through an attribute or a global, where "
            "autotrace.grad returns none; use autotrace.implicit_grad(f)")):
        autotrace.grad(lambda model, x: model.W * x)(model, 2.0)


def test_plain_grad_through_an_attribute_holding_no_variable_is_still_an_error():
    class Holder:
        def __init__(self):
            self.w = np.ones(2)

    def loss(holder):
        return np.sum(holder.w ** 2)

    with pytest.raises(TypeError, match="cannot take a gradient through attribute 'w' of a "
                                        "Holder"):
        autotrace.grad(loss)(Holder())


# --- state changed while differentiating: random draws and running statistics ------------------

class NoisyScale(autotrace.Module):
    """Drops half its inputs at random and counts its calls: state written while
    differentiated."""

    def __init__(self):
        super().__init__()
        self.w = autotrace.Variable(np.ones(6), name="w")
        self.generator = autotrace.random.Generator(seed=0)
        self.calls = autotrace.Variable(0, name="calls", trainable=False)

    def call(self, x):
        keep = self.generator.uniform(x.shape) >= 0.5
        self.calls.assign_add(1)
        return np.sum(np.where(keep, x * self.w * 2.0, 0.0) ** 2)


def test_writes_happen_once_and_both_sweeps_see_the_same_random_numbers():
    model, x = NoisyScale(), np.arange(1.0, 7.0)
    keep = np.random.Generator(np.random.Philox(key=0)).random(6) >= 0.5
    value, [(gradient, variable)] = autotrace.implicit_value_and_grad(model)(x)
    assert variable is model.w and int(model.calls) == 1 and int(model.generator.key) == 1
    assert value == np.sum(np.where(keep, 2.0 * x, 0.0) ** 2)
    np.testing.assert_array_equal(gradient, np.where(keep, 8.0 * x * x, 0.0))


def test_a_traced_step_draws_new_numbers_on_every_call():
    model, x = NoisyScale(), np.arange(1.0, 7.0)

    @autotrace.function
    def step(x):
        return autotrace.implicit_value_and_grad(model)(x)[1][0][0]

    gradients = [step(x) for _ in range(3)]
    for key, gradient in enumerate(gradients):
        keep = np.random.Generator(np.random.Philox(key=key)).random(6) >= 0.5
        np.testing.assert_array_equal(gradient, np.where(keep, 8.0 * x * x, 0.0))
    assert step.trace_count == 1 and int(model.calls) == 3 and int(model.generator.key) == 3


def test_random_draws_reproduce_from_a_seed():
    first, second = autotrace.random.Generator(7), autotrace.random.Generator(7)
    np.testing.assert_array_equal(first.normal((2, 3)), second.normal((2, 3)))
    assert not np.array_equal(first.uniform(4), first.uniform(4))
    assert first.uniform((2,), low=5.0, high=6.0).min() >= 5.0


# --- found in review: each of these was silently wrong once --------------------------------------

class Holder:
    def __init__(self, variable):
        self.W = variable


def keyword_loss(x, w=None, model=None):
    return np.sum(w ** 2 * x) + np.sum(getattr(model, "W") * x)


def test_keyword_arguments_and_getattr_reach_variables():
    w = autotrace.Variable(np.array([1.0, 2.0]), name="w")
    v = autotrace.Variable(np.array([3.0, -1.0]), name="v")
    x = np.array([0.5, -1.0])
    pairs = check_variable_gradients(lambda: keyword_loss(x, w=w, model=Holder(v)))
    assert [variable for _, variable in pairs] == [w, v]
    direct = autotrace.implicit_grad(keyword_loss)(x, w=w, model=Holder(v))
    np.testing.assert_allclose(direct[0][0], 2 * w.numpy() * x)
    np.testing.assert_allclose(direct[1][0], x)


def test_a_variable_read_after_its_assignment_gives_the_new_value():
    w = autotrace.Variable(np.array([1.0, 2.0]), name="doubled")
    x = np.array([3.0, -1.0])

    def loss(x):
        w.assign(w * 2.0)
        return np.sum(w * x)  # reads [2, 4]; its gradient goes to w, as with GradientTape

    value, [(gradient, variable)] = autotrace.implicit_value_and_grad(loss)(x)
    assert variable is w and value == 2.0
    np.testing.assert_array_equal(gradient, x)
    np.testing.assert_array_equal(w.numpy(), [2.0, 4.0])  # assigned once, when it returned


def test_a_variable_read_only_before_its_assignment_keeps_its_old_value_in_the_adjoint():
    w = autotrace.Variable(np.array([1.0, 2.0]), name="w")
    x = np.array([3.0, -1.0])

    def loss(x):
        value = np.sum(np.sin(w * x))  # the adjoint sweep reads w again: the old value
        w.assign(w + 10.0)
        return value

    [(gradient, _)] = autotrace.implicit_grad(loss)(x)
    np.testing.assert_allclose(gradient, np.cos(np.array([1.0, 2.0]) * x) * x)
    np.testing.assert_array_equal(w.numpy(), [11.0, 12.0])


def test_a_plain_gradient_inside_the_loss_does_not_end_its_forward_pass():
    w = autotrace.Variable(np.array([1.0, 2.0]), name="w")
    x = np.array([3.0, -1.0])

    def cube_sum(z):
        return np.sum(z ** 3)

    def loss(x):
        before = np.sum(w * x)                # w read before its assignment...
        w.assign(w * 2.0)
        inner = autotrace.grad(cube_sum)(x)   # (its adjoint sweep starts and ends here)
        return before + np.sum(w * x) + np.sum(inner)  # ...and after it: the new value

    value, [(gradient, _)] = autotrace.implicit_value_and_grad(loss)(x)
    assert value == np.sum(np.array([1.0, 2.0]) * x) + np.sum(np.array([2.0, 4.0]) * x) + \
        np.sum(3 * x ** 2)
    np.testing.assert_allclose(gradient, 2 * x)


def test_a_variable_read_before_and_after_its_assignment_and_in_the_adjoint_is_an_error():
    # Reads in the forward pass alone are fine: the gradient of `w * x` does not read w.
    w = autotrace.Variable(np.array([1.0, 2.0]), name="twice_read")

    def loss(x):
        before = np.sum(w ** 2)  # power's rule reads w in the adjoint sweep
        w.assign(w * 2.0)
        return before + np.sum(w * x)

    with pytest.raises(StateError, match=re.escape(
            "Variable 'twice_read' is read both before and after it is assigned in a function "
            "implicit_grad differentiates, and that function's adjoint sweep reads it again, "
            "so it cannot tell which value to use; read it once into a name and use that "
            "name, before or after the assignment (to update it from its own value, "
            "`assign_add` or `assign_sub` reads it for the update only: `v.assign_add(d)`, "
            "not `v.assign(v + d)`)")):
        autotrace.implicit_grad(loss)(np.ones(2))
    np.testing.assert_array_equal(w.numpy(), [1.0, 2.0])  # nothing was half done


def test_random_numbers_drawn_twice_in_a_loss_are_the_same_in_the_recomputations():
    generator = autotrace.random.Generator(seed=11)
    w = autotrace.Variable(np.array([0.5, -1.0, 2.0]), name="w")

    def noisy(v):
        return v + 0.1 * generator.normal(v.shape)

    def loss(x):
        return np.sum(np.sin(noisy(w * x)) * noisy(x))

    x = np.array([1.0, 2.0, -0.5])
    gradients = autotrace.implicit_grad(loss)
    [(gradient, _)] = gradients(x)
    assert int(generator.key) == 13
    generator.key.assign(np.uint64(11))
    first, second = generator.normal((3,)), generator.normal((3,))
    expected = np.cos(w.numpy() * x + 0.1 * first) * x * (x + 0.1 * second)
    np.testing.assert_allclose(gradient, expected)


def test_differentiating_implicit_gradients_again_is_an_error_naming_the_line():
    w = autotrace.Variable(np.array([1.0, 2.0]), name="w")
    gradients = autotrace.implicit_grad(lambda x: np.sum(np.sin(w * x)))

    def norm_of_gradient(x):
        return np.sum(gradients(x)[0][0] ** 2)

    with pytest.raises(autotrace.TransformError) as caught:
        autotrace.grad(norm_of_gradient)(np.ones(2))
    assert "cannot be differentiated again" in str(caught.value)
    assert "test_implicit.py" in str(caught.value)
    with pytest.raises(autotrace.TransformError, match="cannot be differentiated again"):
        autotrace.implicit_grad(lambda: np.sum(gradients(np.ones(2))[0][0]))()


def branching_loss(w, x):
    h = np.tanh(x @ w)
    if np.sum(h) > 0:
        return np.sum(h) * 2.0
    return np.sum(h)


def test_a_traced_implicit_gradient_converts_control_flow():
    w = autotrace.Variable(np.random.default_rng(0).standard_normal((3, 2)), name="w")

    @autotrace.function
    def traced(x):
        return autotrace.implicit_grad(lambda x: branching_loss(w, x))(x)[0][0]

    for x in (np.ones((4, 3)), -np.ones((4, 3))):
        expected = autotrace.implicit_grad(lambda x: branching_loss(w, x))(x)[0][0]
        np.testing.assert_allclose(traced(x), expected, rtol=1e-12)
    assert traced.trace_count == 1


def test_source_of_implicit_gradients_shows_recomputations_as_of_their_calls():
    dropout = autotrace.layers.Dropout(0.5, seed=1)
    w = autotrace.Variable(np.ones(3), name="w")

    def loss(x):
        return np.sum(dropout(w * x, training=True) * dropout(x, training=True))

    gradients = autotrace.implicit_grad(loss)
    with pytest.raises(TypeError, match=re.escape(
            "'loss' has not been called yet: implicit_grad generates its derivative on the "
            "first call")):
        autotrace.source(gradients)
    gradients(np.ones(3))
    lines = [line.strip() for line in autotrace.source(gradients).splitlines()]
    assert lines[lines.index("_t1 = w * x") + 1:][:4] == [
        "_state1 = state_version()", "_t2 = dropout(_t1, training=True)",
        "_state2 = state_version()", "_t3 = dropout(x, training=True)"]
    assert lines[lines.index("with state_as_of(_state2):") + 1].startswith(
        "_grads1 = vjp_call(dropout, (x,)")
    assert lines[lines.index("with state_as_of(_state1):") + 1].startswith(
        "_grads2 = vjp_call(dropout, (_t1,)")
    assert "deposit(w, bw)" in lines


BRANCH_SCALE = autotrace.Variable(0.5, name="branch_scale")


class BranchModel:
    def __init__(self):
        self.b = autotrace.Variable(0.5, name="b")
        self.w = autotrace.Variable(np.array([1.0, 2.0]), name="w")


BRANCH_MODEL = BranchModel()


def scaled_when_large(x):
    h = x
    if h > 1.0:
        h = h * BRANCH_SCALE
    return h


def test_a_global_variable_read_in_a_branch_not_taken_gets_no_gradient():
    [(gradient, variable)] = autotrace.implicit_grad(scaled_when_large)(2.0)
    assert variable is BRANCH_SCALE and gradient == 2.0
    [(gradient, _)] = autotrace.implicit_grad(scaled_when_large)(0.5)  # was an UnboundLocalError
    assert gradient == 0.0


def attribute_in_branch(x):
    h = np.sum(BRANCH_MODEL.w * x)
    if h > 10.0:
        h = h * BRANCH_MODEL.b
    return h


def attribute_read_before_branch(x):
    b = BRANCH_MODEL.b
    h = np.sum(BRANCH_MODEL.w * x)
    if h > 10.0:
        h = h * b
    return h


def test_traced_implicit_gradients_through_a_data_dependent_branch():
    with pytest.raises(StateError, match=re.escape(
            "Variable 'b' is read inside a traced `if` or loop only, so its gradient is made "
            "inside it, where a traced implicit gradient cannot hand it out; read the Variable "
            "into a name before the statement (w = model.w) and use the name inside")):
        autotrace.function(autotrace.implicit_grad(attribute_in_branch))(np.ones(2))
    step = autotrace.function(autotrace.implicit_grad(attribute_read_before_branch))
    for x, expected_b in ((np.ones(2), 0.0), (10 * np.ones(2), 30.0)):
        eager = autotrace.implicit_grad(attribute_read_before_branch)(x)
        traced = step(x)
        assert [v for _, v in traced] == [BRANCH_MODEL.b, BRANCH_MODEL.w]
        assert float(traced[0][0]) == float(eager[0][0]) == expected_b
        np.testing.assert_allclose(traced[1][0], eager[1][0])
    assert step.trace_count == 1
