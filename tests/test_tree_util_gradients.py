"""Gradients through autotrace.tree_util: a loss that takes its parameters apart with
tree_flatten, tree_leaves or flatten_up_to, builds them again with tree_unflatten, or maps over
them with tree_map, as JAX code does with jax.tree_util. Each is checked in every mode (reverse,
forward, traced, second order) against finite differences."""
import collections

import numpy as np
import pytest

import autotrace
import autotrace.tree_util as tu
from tests.numeric import central_difference, check_every_mode
from tests.test_tree_util import Params  # (a registered dataclass)

Point = collections.namedtuple("Point", "x y")


class Pair:
    """A registered node whose children are two of its attributes; `label` is aux data."""

    def __init__(self, a, b, label="pair"):
        self.a, self.b, self.label = a, b, label


tu.register_pytree_node(Pair, lambda p: ((p.b, p.a), p.label),
                        lambda label, children: Pair(children[1], children[0], label))


def _tree(x):
    """A tree of every node kind, its leaves computed from x (and constants)."""
    return {"z": (x * 2.0, None), "a": [Point(x ** 2, 3), Pair(np.sin(x), x[0], "p")],
            "m": Params(x * x[1], 0.5), "n": None}


def flatten_loss(x):
    leaves, structure = tu.tree_flatten(_tree(x))
    return sum(np.sum(np.cos(leaf) * (index + 1)) for index, leaf in enumerate(leaves))


def leaves_loss(x):
    return sum(np.sum(leaf ** 2) for leaf in tu.tree_leaves(_tree(x)))


def unflatten_loss(x):
    leaves, structure = tu.tree_flatten(_tree(x))
    rebuilt = tu.tree_unflatten(structure, [leaf * 1.5 for leaf in leaves])
    return np.sum(rebuilt["a"][1].a * rebuilt["m"].w) + np.sum(rebuilt["z"][0] ** 3)


def structure_unflatten_loss(x):
    leaves, structure = tu.tree_flatten({"b": x, "a": (x ** 2, x[2])})
    rebuilt = structure.unflatten([np.tanh(leaf) for leaf in leaves])
    return np.sum(rebuilt["a"][0] * rebuilt["b"]) * rebuilt["a"][1]


def map_loss(x):
    scaled = tu.tree_map(lambda leaf: leaf * 3.0, _tree(x))
    return np.sum(scaled["m"].w * scaled["a"][0].x) + np.sum(np.exp(scaled["z"][0] / 10.0))


def map_of_two_trees_loss(x):
    params = {"w": x, "b": (x[0], x ** 2)}
    grads = {"w": np.sin(x), "b": (x[1] * 2.0, x * 0.5)}
    updated = tu.tree_map(lambda p, g: p - 0.1 * g * p, params, grads)
    return np.sum(updated["w"] ** 2) + updated["b"][0] * np.sum(updated["b"][1])


def up_to_loss(x):
    structure = tu.tree_structure({"a": 0, "b": 0})
    pieces = structure.flatten_up_to({"b": (x, x ** 2), "a": x * 3.0})
    return np.sum(pieces[0] * pieces[1][1]) + np.sum(pieces[1][0])


def weight_decay_loss(x):
    params = {"layer": {"w": x.reshape(2, 2), "b": x[:2]}, "out": x[3]}
    penalty = sum(np.sum(p ** 2) for p in tu.tree_leaves(params))
    return np.sum(np.tanh(params["layer"]["w"] @ params["layer"]["b"])) * params["out"] \
        + 0.01 * penalty


def is_leaf_loss(x):
    tree = {"pair": (x, x * 2.0), "single": x ** 2}
    leaves = tu.tree_leaves(tree, is_leaf=lambda node: isinstance(node, tuple))
    return np.sum(leaves[0][0] * leaves[0][1]) + np.sum(leaves[1])


@pytest.mark.parametrize("loss", [
    flatten_loss, leaves_loss, unflatten_loss, structure_unflatten_loss, map_loss,
    map_of_two_trees_loss, up_to_loss, weight_decay_loss, is_leaf_loss])
def test_losses_over_pytrees_in_every_mode(loss):
    check_every_mode(loss, np.array([0.3, -0.7, 1.1, 0.4]))


def test_gradient_with_respect_to_a_tree_mapped_over():
    def loss(params, batch):
        squashed = tu.tree_map(np.tanh, params)
        return sum(np.sum(batch @ leaf) for leaf in tu.tree_leaves(squashed))
    params = {"first": np.array([0.5, -0.2]), "second": Pair(np.array([0.1, 0.3]),
                                                              np.array([1.0, 2.0]))}
    batch = np.array([[1.0, 2.0], [0.5, -1.0]])
    gradient = autotrace.grad(loss)(params, batch)
    traced = autotrace.function(autotrace.grad(loss))(params, batch)
    for got in (gradient, traced):
        assert type(got["second"]) is Pair
        np.testing.assert_allclose(got["first"], central_difference(
            lambda w: loss({**params, "first": w}, batch), params["first"]), rtol=1e-6)
        np.testing.assert_allclose(got["second"].a, central_difference(
            lambda a: loss({**params, "second": Pair(a, params["second"].b)}, batch),
            params["second"].a), rtol=1e-6)


def test_leaves_with_no_gradient_get_zeros():
    def loss(x):
        leaves = tu.tree_leaves({"used": x, "unused": x * 2.0, "count": 3, "name": "n"})
        return np.sum(leaves[3] ** 2)  # (sorted keys: count, name, unused, used)
    np.testing.assert_allclose(autotrace.grad(loss)(np.array([1.0, 2.0])), [2.0, 4.0])
