"""autotrace.tree_util: flattening and rebuilding pytrees with JAX's rules (None an empty
subtree, dicts by sorted key, namedtuples and registered types as nodes), structures compared
and printed, tree_map over several trees; and registered types honoured by
autotrace.function (keyed by structure, traced through their leaves) and by grad (the
gradient of one is one)."""
import collections
import dataclasses

import numpy as np
import pytest

import autotrace
import autotrace.tree_util as tu
from tests.numeric import central_difference

Point = collections.namedtuple("Point", "x y")


class Pair:
    """A user type made a pytree node; `label` is aux data."""

    def __init__(self, a, b, label="pair"):
        self.a, self.b, self.label = a, b, label


tu.register_pytree_node(Pair, lambda p: ((p.a, p.b), p.label),
                        lambda label, children: Pair(*children, label=label))


@tu.register_dataclass
@dataclasses.dataclass
class Params:
    w: np.ndarray
    b: float
    activation: str = dataclasses.field(default="tanh", metadata={"static": True})


class Reversed:
    """Registered with its children in another order than its attributes' names sort in."""

    def __init__(self, a, b):
        self.a, self.b = a, b


tu.register_pytree_node(Reversed, lambda r: ((r.b, r.a), None),
                        lambda aux, children: Reversed(children[1], children[0]))


class Computed:
    """Registered with a flatten that computes its child: no attribute holds it."""

    def __init__(self, a):
        self.a = a


tu.register_pytree_node(Computed, lambda c: ((c.a * 1.0,), None),
                        lambda aux, children: Computed(*children))


def test_flatten_order_and_structure():
    tree = {"b": 2.0, "a": (1.0, None, [3.0, Point(4.0, 5.0)])}
    leaves, structure = tu.tree_flatten(tree)
    assert leaves == [1.0, 3.0, 4.0, 5.0, 2.0]  # sorted keys; None holds no leaf
    assert structure.num_leaves == 5
    assert structure.num_nodes == 10
    assert repr(structure) == "PyTreeDef({'a': (*, None, [*, Point(x=*, y=*)]), 'b': *})"
    assert tu.tree_unflatten(structure, [10, 20, 30, 40, 50]) == \
        {"a": (10, None, [20, Point(30, 40)]), "b": 50}
    assert tu.tree_leaves([None, (None,)]) == []
    assert tu.tree_leaves(np.ones(3))[0] is not None and len(tu.tree_leaves(np.ones(3))) == 1


def test_structures_compare_by_kind_keys_and_aux():
    assert tu.tree_structure((1.0, [2.0])) == tu.tree_structure((np.ones(2), [3]))
    assert tu.tree_structure((1.0, [2.0])) != tu.tree_structure((1.0, (2.0,)))
    assert tu.tree_structure({"a": 1}) != tu.tree_structure({"b": 1})
    assert tu.tree_structure(Pair(1, 2)) == tu.tree_structure(Pair(3, 4))
    assert tu.tree_structure(Pair(1, 2, "x")) != tu.tree_structure(Pair(1, 2, "y"))
    assert hash(tu.tree_structure(Pair(1, 2))) == hash(tu.tree_structure(Pair(5, 6)))
    assert repr(tu.tree_structure([Pair(1.0, None)])) == \
        "PyTreeDef([CustomNode(Pair['pair'], [*, None])])"
    assert repr(tu.tree_structure((1,))) == "PyTreeDef((*,))"
    assert repr(tu.tree_structure(3.0)) == "PyTreeDef(*)"


def test_registered_types_flatten_and_rebuild():
    leaves, structure = tu.tree_flatten({"p": Pair(1.0, [2.0, 3.0], "tag")})
    assert leaves == [1.0, 2.0, 3.0]
    rebuilt = structure.unflatten([4.0, 5.0, 6.0])["p"]
    assert (type(rebuilt), rebuilt.a, rebuilt.b, rebuilt.label) == (Pair, 4.0, [5.0, 6.0], "tag")
    params = tu.tree_map(lambda x: x * 2, Params(np.array([1.0]), 0.5, "relu"))
    assert params.activation == "relu" and params.b == 1.0
    assert tu.tree_leaves(Params(np.array([1.0]), 0.5)) == [np.array([1.0]), 0.5]


def test_tree_map_over_several_trees_and_is_leaf():
    params = {"w": np.array([1.0, 2.0]), "b": 0.5}
    grads = {"w": np.array([10.0, 20.0]), "b": 5.0}
    new = tu.tree_map(lambda p, g: p - 0.1 * g, params, grads)
    np.testing.assert_allclose(new["w"], [0.0, 0.0])
    assert new["b"] == 0.0
    # is_leaf stops at a subtree: here each pair is handed to f whole
    assert tu.tree_map(lambda pair: pair[0] + pair[1], [(1, 2), (3, 4)],
                       is_leaf=lambda t: isinstance(t, tuple)) == [3, 7]
    # a second tree may go deeper below the first's leaves: f gets that subtree whole
    assert tu.tree_map(lambda x, y: (x, y), [1, 2], [(5, 6), None]) == [(1, (5, 6)), (2, None)]


def test_errors():
    structure = tu.tree_structure((1, 2))
    with pytest.raises(ValueError, match=r"^PyTreeDef\(\(\*, \*\)\) has 2 leaves; 3 were "
                                         r"given to build it$"):
        structure.unflatten([1, 2, 3])
    with pytest.raises(ValueError, match=r"^the tree does not have the structure "
                                         r"PyTreeDef\(\(\*, \*\)\): it is a list of 2 children$"):
        tu.tree_map(lambda a, b: a, (1, 2), [1, 2])
    with pytest.raises(ValueError, match=r"^the tree at \['b'\] does not have the structure "
                                         r"PyTreeDef\(\(\*,\)\): it is a leaf \(int\)$"):
        tu.tree_map(lambda a, b: a, {"a": 1, "b": (2,)}, {"a": 1, "b": 2})
    with pytest.raises(ValueError, match="^Pair is registered as a pytree node already$"):
        tu.register_pytree_node(Pair, lambda p: ((), None), lambda aux, c: Pair(1, 2))
    with pytest.raises(ValueError, match="^tuple is a pytree node already; it cannot be "
                                         "registered$"):
        tu.register_pytree_node(tuple, lambda p: ((), None), lambda aux, c: ())
    with pytest.raises(TypeError, match=r"^tree_unflatten takes a PyTreeDef"):
        tu.tree_unflatten([1], [1])


def test_function_keys_registered_arguments_by_structure():
    calls = []

    @autotrace.function
    def scaled(p):
        calls.append(p.label)
        return Pair(p.a * 2.0, np.sin(p.b), p.label)

    for a in (1.0, 2.0):  # same structure, other values: one trace
        result = scaled(Pair(np.full(2, a), np.zeros(3)))
        assert type(result) is Pair and result.label == "pair"
        np.testing.assert_allclose(result.a, [2 * a, 2 * a])
        np.testing.assert_allclose(result.b, np.zeros(3))
    assert scaled.trace_count == 1
    scaled(Pair(np.ones(2), np.zeros(3), "other"))  # other aux data: traced again
    scaled(Pair(np.ones(4), np.zeros(3)))  # other shapes: traced again
    assert scaled.trace_count == 3 and calls == ["pair", "other", "pair"]


def test_function_static_fields_of_a_registered_dataclass():
    @autotrace.function
    def apply(p, x):
        y = x @ p.w + p.b
        return np.tanh(y) if p.activation == "tanh" else y
    x = np.array([[1.0, 2.0]])
    np.testing.assert_allclose(apply(Params(np.array([0.5, 0.25]), 0.1), x), np.tanh([1.1]))
    np.testing.assert_allclose(apply(Params(np.array([0.5, 0.25]), 0.1, "linear"), x), [1.1])
    assert apply.trace_count == 2


def pair_loss(p, x):
    return np.sum(np.tanh(x @ p.a) * p.b ** 2)


def test_gradient_of_a_registered_type_is_that_type():
    p = Pair(np.array([0.5, -0.3]), np.array([1.0, 2.0, 3.0]), "weights")
    x = np.array([[1.0, 2.0], [0.5, -1.0], [2.0, 0.1]])
    for gradient in (autotrace.grad(pair_loss)(p, x),
                     autotrace.function(autotrace.grad(pair_loss))(p, x)):
        assert type(gradient) is Pair and gradient.label == "weights"
        np.testing.assert_allclose(
            gradient.a, central_difference(lambda a: pair_loss(Pair(a, p.b), x), p.a),
            rtol=1e-6)
        np.testing.assert_allclose(
            gradient.b, central_difference(lambda b: pair_loss(Pair(p.a, b), x), p.b),
            rtol=1e-6)


def test_gradient_of_a_registered_dataclass_keeps_its_static_fields():
    def loss(p, x):
        return np.sum(np.tanh(x @ p.w + p.b))
    p, x = Params(np.array([0.5, 0.25]), 0.1, "relu"), np.array([[1.0, 2.0], [3.0, -1.0]])
    gradient = autotrace.grad(loss)(p, x)
    assert type(gradient) is Params and gradient.activation == "relu"
    np.testing.assert_allclose(gradient.w, central_difference(
        lambda w: loss(Params(w, 0.1), x), p.w), rtol=1e-6)
    assert gradient.b == pytest.approx(float(central_difference(
        lambda b: loss(Params(p.w, float(b[0])), x), np.array([0.1]))[0]), rel=1e-6)


def test_gradient_of_a_child_no_attribute_holds_is_refused():
    with pytest.raises(TypeError, match=r"^cannot give the gradient of a Computed as one: "
                                        r"autotrace finds the gradient of each child its "
                                        r"flatten function returns by the attribute holding "
                                        r"it, and for child 0 \(a ndarray\) no attribute of "
                                        r"it holds it; make flatten return the attributes "
                                        r"themselves, each held once$"):
        autotrace.grad(lambda c: np.sum(c.a ** 2))(Computed(np.ones(2)))


def test_gradients_of_registered_types_in_containers_and_unused():
    pairs = [Pair(np.array([1.0, 2.0]), 1.5), Pair(np.array([0.5, 0.5]), 3.0)]
    gradients = autotrace.grad(lambda ps: np.sum(ps[0].a * ps[1].b))(pairs)
    assert [type(g) for g in gradients] == [Pair, Pair]
    np.testing.assert_allclose(gradients[0].a, [3.0, 3.0])
    assert gradients[0].b == 0.0 and gradients[1].b == 3.0  # sum(a0) = 3
    np.testing.assert_allclose(gradients[1].a, [0.0, 0.0])
    unused = autotrace.grad(lambda p, x: np.sum(x ** 2))(pairs[0], np.ones(2))
    assert type(unused) is Pair and unused.b == 0.0
    np.testing.assert_allclose(unused.a, [0.0, 0.0])


def test_dict_kinds_keep_their_type():
    counts = collections.defaultdict(list, {"b": 1, "a": 2})
    mapped = tu.tree_map(lambda x: x * 10, counts)
    assert type(mapped) is collections.defaultdict and mapped.default_factory is list
    assert dict(mapped) == {"a": 20, "b": 10}
    assert repr(tu.tree_structure(counts)) == "PyTreeDef(defaultdict({'a': *, 'b': *}))"
    ordered = tu.tree_map(str, collections.OrderedDict(b=1, a=2))
    assert type(ordered) is collections.OrderedDict and list(ordered) == ["a", "b"]


def pair_of(v):
    return Pair(v * 2.0, (np.sum(v ** 2),))


def reversed_of(v):
    return Reversed(v * 2.0, np.sum(v ** 2))


@pytest.mark.parametrize("mode", ["reverse", "forward"])
def test_jacobian_of_a_registered_result(mode):
    x = np.array([0.5, -1.0])
    jacobian = autotrace.jacobian(pair_of, mode=mode)(x)
    assert type(jacobian) is Pair and type(jacobian.b) is tuple
    np.testing.assert_allclose(jacobian.a, 2.0 * np.eye(2))
    np.testing.assert_allclose(jacobian.b[0], 2 * x)
    jacobian = autotrace.jacobian(reversed_of, mode=mode)(x)  # children b, a
    assert type(jacobian) is Reversed
    np.testing.assert_allclose(jacobian.a, 2.0 * np.eye(2))
    np.testing.assert_allclose(jacobian.b, 2 * x)


def test_seed_of_a_registered_result():
    x = np.array([0.5, -1.0])
    gradient = autotrace.grad(reversed_of)(x, dy=Reversed(np.array([1.0, 0.0]), 2.0))
    np.testing.assert_allclose(gradient, [2.0, 0.0] + 2.0 * 2 * x)
    np.testing.assert_allclose(autotrace.grad(reversed_of)(x), 2.0 + 2 * x)  # ones for both


def pair_total(p):
    return np.sum(p.a) + np.sum(p.b)


def test_retrace_explanation_inside_a_registered_argument():
    total = autotrace.function(pair_total)
    with pytest.warns(RuntimeWarning, match=r"the latest because argument 'p'\[1\]: shape "
                                            r"\(4,\) -> \(5,\)\. "):
        for size in range(1, 6):
            total(Pair(np.ones(2), np.ones(size)))
    total = autotrace.function(pair_total)  # (a function warns once)
    with pytest.warns(RuntimeWarning, match=r"the latest because argument 'p': a Pair with "
                                            r"aux data 'e' and 2 children -> a Pair with aux "
                                            r"data 'f' and 2 children\. "):
        for label in "bcdef":
            total(Pair(np.ones(2), np.ones(5), label))
