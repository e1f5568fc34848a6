"""Edges of the model stack (layers, Variables, optimizers, implicit gradients) where a value
was wrong or an error did not fit, each checked against eager NumPy, finite differences or a
value computed by hand."""
import numpy as np
import pytest

import autotrace as at
from autotrace import layers

_EMBEDDING_MESSAGE = ("Embedding 'e': argument `inputs` must be in [0, 4) (input_dim), got "
                      "values from {} to {}")


def _embedding():
    embedding = layers.Embedding(4, 2, name="e")
    embedding(np.array([0]))
    return embedding


@pytest.mark.parametrize("ids, low, high", [([0, -1], -1, 0), ([1, 4], 1, 4), ([-5], -5, -5)])
@pytest.mark.parametrize("form", ["value", "gradient", "value_and_gradient"])
@pytest.mark.parametrize("traced", [False, True])
def test_embedding_refuses_an_index_out_of_range_traced_as_eagerly(ids, low, high, form,
                                                                    traced):
    embedding = _embedding()
    function = {"value": embedding,
                "gradient": at.implicit_grad(lambda ids: np.sum(embedding(ids))),
                "value_and_gradient": at.implicit_value_and_grad(
                    lambda ids: np.sum(embedding(ids) ** 2))}[form]
    if traced:
        function = at.function(function)
    with pytest.raises(IndexError) as raised:
        function(np.array(ids))
    assert isinstance(raised.value, ValueError)  # as eager Embedding's error always was
    message = str(raised.value)
    assert message.splitlines()[0] == _EMBEDDING_MESSAGE.format(low, high)
    if traced:  # the user's line that called the layer
        assert __file__ in message


def test_embedding_in_range_traced_gives_the_rows_and_their_gradient():
    embedding = _embedding()
    table = np.array(embedding.embeddings)
    ids = np.array([[3, 0], [3, 1]])
    np.testing.assert_array_equal(at.function(embedding)(ids), table[ids])
    gradient = at.function(at.implicit_grad(lambda ids: np.sum(embedding(ids) ** 2)))
    (rows, variable), = gradient(ids)
    expected = np.zeros((4, 2))
    np.add.at(expected, ids, 2 * table[ids])
    assert variable is embedding.embeddings
    np.testing.assert_allclose(rows, expected, rtol=1e-12)


def test_embedding_under_vmap_checks_every_example():
    embedding = _embedding()
    table = np.array(embedding.embeddings)
    batched = at.function(at.vmap(embedding))
    np.testing.assert_array_equal(batched(np.array([[1], [2]])), table[[[1], [2]]])
    with pytest.raises(IndexError, match=r"got values from -1 to 2"):
        batched(np.array([[-1], [2]]))


def test_minimize_refuses_a_var_list_of_which_none_is_trainable():
    v = at.Variable(np.ones(2), trainable=False, name="v")
    u = at.Variable(np.ones(2), trainable=False, name="u")
    optimizer = at.optimizers.SGD(0.1)
    with pytest.raises(ValueError) as raised:
        optimizer.minimize(lambda: np.sum(v ** 2 + u), var_list=[v, u])
    assert str(raised.value) == (
        "SGD.minimize: no Variable of var_list (['v', 'u']) is trainable (trainable=False), so "
        "no gradient is taken for any; make the ones to train trainable (Variable(..., "
        "trainable=True)), or pass those that are")
    for variable in (v, u):  # nothing was updated
        np.testing.assert_array_equal(variable.numpy(), np.ones(2))


@pytest.mark.parametrize("traced", [False, True])
def test_minimize_trains_the_trainable_variables_of_var_list_and_leaves_the_others(traced):
    # Keras's `var_list=model.variables`, with a BatchNormalization's moving averages in it
    v = at.Variable(np.ones(2), trainable=False, name="v")
    w = at.Variable(np.array([1.0, 2.0]), name="w")
    optimizer = at.optimizers.SGD(0.1)

    def step():
        return optimizer.minimize(lambda: np.sum(w ** 2 * v), var_list=[w, v])

    step = at.function(step) if traced else step
    step()
    np.testing.assert_allclose(w.numpy(), [0.8, 1.6])  # w - 0.1 * 2 w v
    np.testing.assert_array_equal(v.numpy(), np.ones(2))


def test_minimize_with_a_var_list_whose_trainable_variables_the_loss_does_not_read():
    v = at.Variable(np.ones(2), trainable=False, name="v")
    w = at.Variable(np.ones(2), name="w")
    optimizer = at.optimizers.SGD(0.1)
    with pytest.raises(ValueError) as raised:
        optimizer.minimize(lambda: np.sum(v ** 2), var_list=[v, w])
    assert str(raised.value) == (
        "SGD.minimize: the loss reads none of the trainable Variables of var_list (['v', 'w']), "
        "so there is no gradient to apply; pass the Variables the loss reads, or leave "
        "var_list out for all of them")


def test_minimize_with_a_var_list_the_loss_does_not_read():
    v, w = at.Variable(np.ones(2), name="v"), at.Variable(np.ones(2), name="w")
    optimizer = at.optimizers.SGD(0.1)
    with pytest.raises(ValueError) as raised:
        optimizer.minimize(lambda: np.sum(w ** 2), var_list=[v])
    assert str(raised.value) == (
        "SGD.minimize: the loss reads none of the trainable Variables of var_list (['v']), so "
        "there is no gradient to apply; pass the Variables the loss reads, or leave var_list "
        "out for all of them")
    optimizer.minimize(lambda: np.sum(w ** 2 + v), var_list=[v])  # d/dv = 1
    np.testing.assert_allclose(v.numpy(), [0.9, 0.9])
    np.testing.assert_array_equal(w.numpy(), [1.0, 1.0])


def _finite_difference(function, value, step=1e-6):
    return (function(value + step) - function(value - step)) / (2 * step)


@pytest.mark.parametrize("verb, delta", [("assign_add", 0.5), ("assign_sub", -0.5)])
@pytest.mark.parametrize("trainable", [False, True])
@pytest.mark.parametrize("traced", [False, True])
def test_a_variable_read_after_assign_add_in_an_implicit_gradient(verb, delta, trainable,
                                                                   traced):
    # the read sees the new value; its gradient (to w, and to c where it is trainable, as
    # GradientTape sends it) is that of the loss with c's new value put in by hand
    c = at.Variable(1.0, name="c", trainable=trainable)
    w = at.Variable(0.7, name="w")
    x = 1.5

    def loss(x):
        getattr(c, verb)(0.5)
        return np.sin(w * c) * x

    def by_hand(w_value, c_value):
        return np.sin(w_value * c_value) * x

    function = at.implicit_value_and_grad(loss)
    if traced:
        function = at.function(function)
    for step in range(2):  # the second call starts from the value the first one left
        old = 1.0 + step * delta
        value, grads = function(x)
        new = old + delta
        assert c.numpy() == new
        np.testing.assert_allclose(value, by_hand(0.7, new), rtol=1e-12)
        gradients = {variable.name: gradient for gradient, variable in grads}
        assert sorted(gradients) == (["c", "w"] if trainable else ["w"])
        np.testing.assert_allclose(
            gradients["w"], _finite_difference(lambda w: by_hand(w, new), 0.7), rtol=1e-7)
        if trainable:
            np.testing.assert_allclose(
                gradients["c"], _finite_difference(lambda c: by_hand(0.7, c), new), rtol=1e-7)


class _Holder:
    def __init__(self, seed):
        self.dropout = layers.Dropout(0.5, seed=seed)


def _dropout_loss(seed):
    holders = [_Holder(seed)]

    def loss(x):
        return np.sum(np.tanh(holders[0].dropout(x, training=True)) ** 2)
    return loss, holders[0].dropout.generator.key


def _kept(seed, shape):
    # the mask of the first draw of a Dropout(0.5) layer seeded `seed`
    from autotrace.runtime.primitives.keyed_random import draw
    return draw(np.uint64(seed), shape, np.float64, "uniform") >= 0.5


_X = np.array([0.3, -0.2, 0.5, 0.8, 0.1, 0.9, -0.4, 0.2])


def _fixed_mask_gradient(kept, x):
    # d/dx of sum(tanh(2 x)^2) where kept, by hand
    u = np.tanh(2 * x)
    return np.where(kept, 4 * u * (1 - u ** 2), 0.0)


@pytest.mark.parametrize("traced", [False, True])
def test_hessian_through_a_dropout_layer_held_in_a_list(traced):
    seed = 5
    loss, key = _dropout_loss(seed)
    hessian = at.hessian(loss)
    if traced:
        hessian = at.function(hessian)
    result = hessian(_X)
    kept = _kept(seed, _X.shape)
    assert 0 < kept.sum() < kept.size
    step = 1e-6  # finite differences of the fixed-mask gradient, one column a unit vector
    expected = np.stack([(_fixed_mask_gradient(kept, _X + step * e) -
                          _fixed_mask_gradient(kept, _X - step * e)) / (2 * step)
                         for e in np.eye(_X.size)], axis=1)
    np.testing.assert_allclose(result, expected, rtol=1e-6, atol=1e-8)
    assert key.numpy() == seed + 1  # one mask drawn


@pytest.mark.parametrize("form", ["grad", "value_and_grad"])
def test_traced_gradient_through_a_dropout_layer_uses_the_mask_of_its_value(form):
    # the adjoint sweep runs the layer's call again: it draws the mask the value was made of
    seed = 7
    loss, key = _dropout_loss(seed)
    function = at.function(getattr(at, form)(loss))
    kept = _kept(seed, _X.shape)
    result = function(_X)
    gradient = result[1] if form == "value_and_grad" else result
    np.testing.assert_allclose(gradient, _fixed_mask_gradient(kept, _X), rtol=1e-12)
    if form == "value_and_grad":
        np.testing.assert_allclose(result[0], np.sum(np.tanh(np.where(kept, 2 * _X, 0)) ** 2),
                                   rtol=1e-12)
    assert key.numpy() == seed + 1
    # the next call draws the next mask, for value and gradient alike
    kept = _kept(seed + 1, _X.shape)
    result = function(_X)
    gradient = result[1] if form == "value_and_grad" else result
    np.testing.assert_allclose(gradient, _fixed_mask_gradient(kept, _X), rtol=1e-12)
    assert key.numpy() == seed + 2


def test_a_traced_assign_keeps_its_own_copy_of_an_argument():
    v = at.Variable(np.zeros(3), name="v")
    assign = at.function(lambda x: v.assign(x))
    x = np.ones(3)
    assign(x)
    x[0] = 100.0  # the caller's array, written after the call
    np.testing.assert_array_equal(v.numpy(), [1.0, 1.0, 1.0])
    tail = at.function(lambda x: v.assign(x[1:]))
    x = np.arange(4.0)
    tail(x)
    x[:] = -1.0  # through a view of it
    np.testing.assert_array_equal(v.numpy(), [1.0, 2.0, 3.0])


def test_a_traced_assign_keeps_its_own_copy_of_the_result_and_of_another_variable():
    v, u = at.Variable(np.zeros(3), name="v"), at.Variable(np.zeros(3), name="u")

    def step(x):
        doubled = x * 2
        v.assign(doubled)
        u.assign(doubled)
        return doubled

    result = at.function(step)(np.ones(3))
    result[0] = 50.0
    np.testing.assert_array_equal(v.numpy(), [2.0, 2.0, 2.0])
    np.testing.assert_array_equal(u.numpy(), [2.0, 2.0, 2.0])


@pytest.mark.parametrize("hand_out", [
    np.asarray, lambda v: v.value(), lambda v: v[1:], lambda v: v.reshape(3, 1),
    np.ravel, lambda v: next(iter(at.Variable(np.ones((2, 3)))))])
@pytest.mark.parametrize("traced_assign", [False, True])
def test_an_array_a_variable_hands_out_cannot_change_it(hand_out, traced_assign):
    # as `v[0] = 1` is refused, a write through an array that is the Variable's memory is
    v = at.Variable(np.zeros(3), name="v")
    if traced_assign:  # (a value a traced function wrote)
        at.function(lambda x: v.assign(x * 2))(np.arange(3.0))
    before = v.numpy()
    array = hand_out(v)
    with pytest.raises(ValueError, match="read-only"):
        array[0] = 100.0
    np.testing.assert_array_equal(v.numpy(), before)
    copy = v.numpy()  # a copy, to write freely
    copy[0] = 100.0
    np.testing.assert_array_equal(v.numpy(), before)


def test_an_exported_embedding_checks_its_indices(tmp_path):
    import importlib.util
    embedding = _embedding()
    path = at.export(lambda ids: embedding(ids), np.array([1, 2]), tmp_path / "lookup.py")
    spec = importlib.util.spec_from_file_location("lookup", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    np.testing.assert_array_equal(module.lambda_(np.array([3, 0])),
                                  np.array(embedding.embeddings)[[3, 0]])
    with pytest.raises(IndexError, match=r"got values from -1 to 2"):
        module.lambda_(np.array([-1, 2]))


def test_traced_gradient_through_batch_normalization_updates_its_averages_once():
    # the adjoint sweep runs the layer's call again: its update of the moving averages is
    # the call's, made once, as a call of the layer makes it
    x = np.array([[1.0, 2.0], [3.0, 5.0], [0.5, -1.0]])

    def make_loss():
        holders = [layers.BatchNormalization(momentum=0.5)]

        def loss(x):
            return np.sum(np.tanh(holders[0](x, training=True)) ** 2)
        return loss, holders[0]

    loss, layer = make_loss()
    gradient = at.function(at.grad(loss))(x)
    expected_mean = 0.5 * np.mean(x, axis=0)  # from 0, momentum 0.5, one update
    np.testing.assert_allclose(layer.moving_mean.numpy(), expected_mean, rtol=1e-12)
    reference, _ = make_loss()  # (training=True: the value does not read the averages)
    step = 1e-6
    expected = np.zeros_like(x)
    for index in np.ndindex(x.shape):
        e = np.zeros_like(x)
        e[index] = step
        expected[index] = (reference(x + e) - reference(x - e)) / (2 * step)
    np.testing.assert_allclose(gradient, expected, rtol=1e-6, atol=1e-9)


def test_traced_hessian_through_batch_normalization_updates_its_averages_once():
    # a Hessian runs the gradient once a column: each later run reads the averages as the
    # first did and leaves them as the first left them
    x = np.array([[1.0, 2.0], [3.0, 5.0], [0.5, -1.0]])

    def make_loss():
        holders = [layers.BatchNormalization(momentum=0.5)]
        holders[0](x)  # built (training=False: the averages stay as they start)

        def loss(x):
            return np.sum(np.tanh(holders[0](x, training=True)) ** 2)
        return loss, holders[0]

    loss, layer = make_loss()
    hessian = at.function(at.hessian(loss))(x)
    np.testing.assert_allclose(layer.moving_mean.numpy(), 0.5 * np.mean(x, axis=0),
                               rtol=1e-12)
    reference, _ = make_loss()
    gradient = at.function(at.grad(reference))
    step = 1e-6
    expected = np.zeros(x.shape + x.shape)
    for index in np.ndindex(x.shape):
        e = np.zeros_like(x)
        e[index] = step
        expected[(...,) + index] = (gradient(x + e) - gradient(x - e)) / (2 * step)
    np.testing.assert_allclose(hessian, expected, rtol=1e-5, atol=1e-8)


def test_a_traced_call_leaves_the_arrays_of_the_users_objects_as_they_are():
    # A plain attribute a traced call writes holds the array as the assignment in the source
    # does: writable, and the user's own (a Variable's array alone is read-only).
    class Stats:
        def __init__(self):
            self.mean = np.zeros(2)
            self.seen = None
            self.v = at.Variable(np.zeros(2))

        def update(self, x):
            self.mean = self.mean + x
            self.seen = x
            self.v.assign(x)
            return np.sum(self.mean)

    stats = Stats()
    update = at.function(stats.update)
    x = np.array([1.0, 2.0])
    assert update(x) == 3.0
    assert update(x) == 6.0
    stats.mean[:] = 0.0  # (raised "assignment destination is read-only")
    assert update(x) == 3.0
    np.testing.assert_array_equal(stats.mean, [1.0, 2.0])
    x[0] = 5.0  # the slot holds the argument itself, as NumPy's assignment does; v a copy
    np.testing.assert_array_equal(stats.seen, [5.0, 2.0])
    np.testing.assert_array_equal(stats.v.numpy(), [1.0, 2.0])
    assert stats.mean.flags.writeable and not np.asarray(stats.v).flags.writeable
