"""autotrace.vmap against jax.vmap on the same NumPy inputs (float64): in_axes and out_axes
forms, nesting, and per-example gradients. Each function is written once, over the array
module it is given (NumPy for autotrace, jax.numpy for JAX)."""
import types

import numpy as np
import pytest

import autotrace

jax = pytest.importorskip("jax", reason="JAX is not installed: nothing to compare vmap with")
jax.config.update("jax_enable_x64", True)
jnp = jax.numpy

rng = np.random.default_rng(7)


def functions(np):
    """The functions of these tests, over the array module `np`."""
    def loss(w, x, y):
        return np.mean((np.tanh(x @ w) - y) ** 2)

    def affine(x, w, b):
        return np.sin(x @ w) + b

    def pair(x, y):
        return x * np.exp(-y), np.sum(x ** 2) + np.max(y)

    def dot(u, v):
        return np.sum(u * v) + np.cos(u[0])

    def tree(params, x):
        return np.tanh(x * params["scale"]) + params["shift"][0] * params["shift"][1]

    def where(x, t):
        return np.where(x > t, np.log(1.0 + x ** 2), x * t)
    return types.SimpleNamespace(**{f.__name__: f for f in
                                    (loss, affine, pair, dot, tree, where)})


AT, JAX = functions(np), functions(jnp)


def assert_same(ours, theirs):
    """autotrace's result and JAX's: the same structure, shapes and values."""
    if isinstance(theirs, (tuple, list)):
        assert isinstance(ours, tuple) and len(ours) == len(theirs)
        for mine, other in zip(ours, theirs):
            assert_same(mine, other)
        return
    if isinstance(theirs, dict):
        assert isinstance(ours, dict) and set(ours) == set(theirs)
        for key in theirs:
            assert_same(ours[key], theirs[key])
        return
    theirs = np.asarray(theirs)
    assert np.shape(ours) == theirs.shape and theirs.dtype == np.float64
    np.testing.assert_allclose(ours, theirs, rtol=1e-12, atol=1e-13)


@pytest.mark.parametrize("name, in_axes, out_axes, shapes", [
    ("affine", 0, 0, [(4, 3), (4, 3, 2), (4, 2)]),
    ("affine", (0, None, None), 0, [(5, 3), (3, 2), (2,)]),
    ("affine", (-1, None, 0), 1, [(3, 5), (3, 2), (5, 2)]),
    ("affine", (None, 2, None), -1, [(3,), (3, 2, 4), (2,)]),
    ("pair", (1, 0), 0, [(3, 4), (4, 3)]),
    ("pair", 0, (1, 0), [(4, 3), (4, 3)]),
    ("tree", ({"scale": 0, "shift": (None, 0)}, 1), 0, [{"scale": (4, 3), "shift": [(3,),
                                                                                     (4, 3)]},
                                                        (3, 4)]),
    ("where", (0, None), 0, [(6, 3), ()]),
])
def test_in_axes_and_out_axes_as_jax(name, in_axes, out_axes, shapes):
    def made(shape):
        if isinstance(shape, dict):
            return {key: made(item) for key, item in shape.items()}
        if isinstance(shape, list):
            return tuple(made(item) for item in shape)
        return rng.standard_normal(shape)
    args = made(shapes)
    ours = autotrace.vmap(getattr(AT, name), in_axes=in_axes, out_axes=out_axes)(*args)
    theirs = jax.vmap(getattr(JAX, name), in_axes=in_axes, out_axes=out_axes)(*args)
    assert_same(ours, theirs)


def test_out_axes_none_for_an_output_the_same_for_every_example():
    def scaled(x, w):
        return x * np.sum(w), np.cos(w)

    def scaled_jax(x, w):
        return x * jnp.sum(w), jnp.cos(w)
    x, w = rng.standard_normal((5, 3)), rng.standard_normal(3)
    ours = autotrace.vmap(scaled, in_axes=(0, None), out_axes=(0, None))(x, w)
    theirs = jax.vmap(scaled_jax, in_axes=(0, None), out_axes=(0, None))(x, w)
    assert_same(ours, theirs)


def test_keyword_arguments_are_mapped_over_axis_0_as_jax():
    x, w, b = rng.standard_normal((4, 3)), rng.standard_normal((3, 2)), rng.standard_normal(2)
    ours = autotrace.vmap(AT.affine, in_axes=(0, None))(x, w, b=np.stack([b] * 4))
    theirs = jax.vmap(JAX.affine, in_axes=(0, None))(x, w, b=np.stack([b] * 4))
    assert_same(ours, theirs)


def test_nested_vmap_as_jax():
    u, v = rng.standard_normal((4, 3)), rng.standard_normal((5, 3))
    ours = autotrace.vmap(autotrace.vmap(AT.dot, in_axes=(0, None)), in_axes=(None, 0))(u, v)
    theirs = jax.vmap(jax.vmap(JAX.dot, in_axes=(0, None)), in_axes=(None, 0))(u, v)
    assert_same(ours, theirs)
    assert ours.shape == (5, 4)
    # mapped over the same axis twice: a batch of batches
    batches = rng.standard_normal((2, 4, 3))
    ours = autotrace.vmap(autotrace.vmap(AT.dot))(batches, batches[::-1])
    theirs = jax.vmap(jax.vmap(JAX.dot))(batches, batches[::-1])
    assert_same(ours, theirs)


def test_per_example_gradients_as_jax():
    w, x, y = rng.standard_normal(3), rng.standard_normal((6, 4, 3)), rng.standard_normal((6, 4))
    ours = autotrace.vmap(autotrace.grad(AT.loss), in_axes=(None, 0, 0))(w, x, y)
    theirs = jax.vmap(jax.grad(JAX.loss), in_axes=(None, 0, 0))(w, x, y)
    assert_same(ours, theirs)
    assert ours.shape == (6, 3)
    # with respect to several arguments, and with the value
    ours = autotrace.vmap(autotrace.value_and_grad(AT.loss, wrt=(0, 1)),
                          in_axes=(None, 0, 0))(w, x, y)
    theirs = jax.vmap(jax.value_and_grad(JAX.loss, argnums=(0, 1)),
                      in_axes=(None, 0, 0))(w, x, y)
    assert_same(ours, theirs)


def test_per_example_jacobians_and_a_vmap_inside_vmap_as_jax():
    x = rng.standard_normal((4, 3))
    w = rng.standard_normal((3, 2))
    b = rng.standard_normal(2)
    for ours_jacobian, theirs_jacobian in ((autotrace.jacrev, jax.jacrev),
                                           (autotrace.jacfwd, jax.jacfwd)):
        ours = autotrace.vmap(ours_jacobian(AT.affine), in_axes=(0, None, None))(x, w, b)
        theirs = jax.vmap(theirs_jacobian(JAX.affine), in_axes=(0, None, None))(x, w, b)
        assert_same(ours, theirs)

    # a function that calls a vmapped one, itself vmapped
    def batch_loss(w, xs):
        return np.sum(autotrace.vmap(AT.dot, in_axes=(0, None))(xs, w))

    def batch_loss_jax(w, xs):
        return jnp.sum(jax.vmap(JAX.dot, in_axes=(0, None))(xs, w))
    assert_same(autotrace.vmap(batch_loss, in_axes=(0, None))(x, x),
                jax.vmap(batch_loss_jax, in_axes=(0, None))(x, x))
