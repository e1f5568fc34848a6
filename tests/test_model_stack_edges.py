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


_NOT_TRAINABLE = ("SGD.minimize: Variable 'v' of var_list is not trainable (trainable=False), "
                  "so no gradient is taken for it; make it trainable (Variable(..., "
                  "trainable=True)) to train it, or leave it out of var_list")


@pytest.mark.parametrize("loss_reads, var_list", [("v", ["v"]), ("v", ["v", "w"]),
                                                  ("w", ["w", "v"])])
def test_minimize_refuses_a_variable_that_is_not_trainable(loss_reads, var_list):
    variables = {"v": at.Variable(np.ones(2), trainable=False, name="v"),
                 "w": at.Variable(np.ones(2), name="w")}
    optimizer = at.optimizers.SGD(0.1)
    with pytest.raises(ValueError) as raised:
        optimizer.minimize(lambda: np.sum(variables[loss_reads] ** 2),
                           var_list=[variables[name] for name in var_list])
    assert str(raised.value) == _NOT_TRAINABLE
    for variable in variables.values():  # nothing was updated
        np.testing.assert_array_equal(variable.numpy(), np.ones(2))


def test_minimize_with_a_var_list_the_loss_does_not_read():
    v, w = at.Variable(np.ones(2), name="v"), at.Variable(np.ones(2), name="w")
    optimizer = at.optimizers.SGD(0.1)
    with pytest.raises(ValueError) as raised:
        optimizer.minimize(lambda: np.sum(w ** 2), var_list=[v])
    assert str(raised.value) == (
        "SGD.minimize: the loss reads none of the Variables of var_list (['v']), so there is "
        "no gradient to apply; pass the Variables the loss reads, or leave var_list out for "
        "all of them")
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
