"""A traced function answers as the eager one does about what its arguments are: the methods
their fields hold, the attributes a traced value has, and which arguments are one object."""
import collections
import dataclasses

import numpy as np
import pytest

import autotrace
from autotrace.runtime.tracing.type_checks import TracerAttributeError
from tests.exported import import_exported


# ---- 1. a method held in a declared field reads the trace's copy of its object ---------------

@dataclasses.dataclass
class Linear:
    W: object

    def forward(self, x):
        return np.tanh(x @ self.W)


@dataclasses.dataclass
class Block:
    layer: Linear
    act: object = None

    def __post_init__(self):
        self.act = self.layer.forward


@dataclasses.dataclass(slots=True)
class SlottedBlock:
    layer: Linear
    act: object = None

    def __post_init__(self):
        self.act = self.layer.forward


@dataclasses.dataclass(frozen=True)
class FrozenBlock:
    layer: Linear
    act: object = None

    def __post_init__(self):
        object.__setattr__(self, "act", self.layer.forward)


@dataclasses.dataclass
class OwnMethodBlock:
    W: np.ndarray
    act: object = None

    def __post_init__(self):
        self.act = self.forward

    def forward(self, x):
        return np.tanh(x @ self.W)

    @property
    def layer(self):  # (the object whose weights change, as for the others)
        return self


NamedBlock = collections.namedtuple("NamedBlock", "layer act")

W0 = np.array([[0.5, -1.0], [2.0, 0.25]])
X = np.array([0.3, -0.7])


def _named_block(layer):
    return NamedBlock(layer, layer.forward)


MAKERS = [Block, SlottedBlock, FrozenBlock, _named_block,
          lambda layer: OwnMethodBlock(layer.W)]
MAKER_IDS = ["dataclass", "slots", "frozen", "namedtuple", "own-method"]


def block_loss(block, x):
    return np.sum(block.act(x) ** 2)


@pytest.mark.parametrize("make", MAKERS, ids=MAKER_IDS)
def test_a_method_in_a_declared_field_reads_the_weights_of_each_call(make):
    block = make(Linear(W0.copy()))
    traced = autotrace.function(block_loss)
    assert traced(block, X) == block_loss(block, X)
    block.layer.W = 3.0 * W0  # a new array
    assert traced(block, X) == block_loss(block, X) != block_loss(make(Linear(W0)), X)
    block.layer.W[0, 0] = -4.0  # changed in place
    assert traced(block, X) == block_loss(block, X)
    assert traced.trace_count == 1


@pytest.mark.parametrize("make", MAKERS, ids=MAKER_IDS)
def test_a_method_in_a_declared_field_has_the_gradient_of_its_object(make):
    block, h = make(Linear(W0.copy())), 1e-6
    traced = autotrace.function(autotrace.grad(block_loss))
    for weights in (W0, 3.0 * W0):
        block.layer.W = weights.copy()
        expected = np.zeros_like(weights)
        for index in np.ndindex(weights.shape):
            step = np.zeros_like(weights)
            step[index] = h
            expected[index] = (block_loss(make(Linear(weights + step)), X) - block_loss(
                make(Linear(weights - step)), X)) / (2 * h)
        gradient = traced(block, X)
        np.testing.assert_allclose(gradient.layer.W, expected, rtol=1e-6)
        np.testing.assert_array_equal(gradient.layer.W, autotrace.grad(block_loss)(
            block, X).layer.W)
    by_x = autotrace.function(autotrace.grad(block_loss, wrt=1))
    np.testing.assert_array_equal(by_x(block, X), autotrace.grad(block_loss, wrt=1)(block, X))


def test_a_method_in_a_declared_field_reads_a_variable_after_an_optimizer_step():
    block = Block(Linear(autotrace.Variable(W0.copy())))
    traced = autotrace.function(block_loss)
    assert traced(block, X) == block_loss(block, X)
    block.layer.W.assign_sub(0.5 * W0)
    assert traced(block, X) == block_loss(block, X)


@pytest.mark.parametrize("make", [Block, _named_block], ids=["dataclass", "namedtuple"])
def test_a_returned_block_holds_the_method_of_the_layer_it_returns(make):
    def returned(block, x):
        return block, block_loss(block, x)
    block, traced = make(Linear(W0.copy())), autotrace.function(returned)
    for _ in range(2):  # traced, then from the cache
        made, value = traced(block, X)
        assert made.act.__self__ is made.layer
        assert type(made.layer.W) is np.ndarray
        np.testing.assert_array_equal(made.act(X), block.act(X))
        assert value == block_loss(block, X)


def test_vmap_of_a_method_in_a_declared_field():
    block, rows = Block(Linear(W0.copy())), np.stack([X, 2.0 * X, -X])
    batched = autotrace.vmap(block_loss, in_axes=(None, 0))
    np.testing.assert_allclose(batched(block, rows), [block_loss(block, row) for row in rows],
                               rtol=1e-15)


# ---- 2. hasattr and getattr on a traced value answer as on the NumPy value -------------------

# Names code tests to tell one kind of array from another (JAX's, CuPy's, array-API ones), the
# tracer's own attributes, and ndarray's that a traced value cannot give (its memory's layout)
DUCK_TYPING_NAMES = [
    "aval", "shape", "dtype", "__jax_array__", "__cuda_array_interface__",
    "__array_namespace__", "__dlpack__", "__dlpack_device__", "device", "mT", "to_device",
    "__array_interface__", "__array_struct__", "flags", "ctypes", "data", "base", "strides",
    "__torch_function__", "weak_type", "primal", "tangent", "numpy", "item", "tolist",
    "graph_var", "view_base", "is_traced_array", "is_zero_d_array", "may_be_array",
    "__slots__", "__getattr__", "__round__", "__copy__", "__deepcopy__", "__contains__",
    "__array_wrap__", "__array_finalize__", "__class_getitem__", "__setstate__", "__dict__",
    "__weakref__", "__index__", "__float__", "__len__", "__iter__", "__hash__"]
NAMES = sorted(set(dir(np.ndarray)) | set(DUCK_TYPING_NAMES))


def _answer(value, name):
    try:
        return hasattr(value, name)
    except Exception as error:  # noqa: BLE001 - NumPy's own (x.mT of a 0-d array: ValueError)
        return f"{type(error).__name__}: {error}"


@pytest.mark.parametrize("example", [
    np.ones((2, 3)), np.ones(3, np.float32), np.ones((2, 2), bool), np.array(2.5),
    np.float64(1.5), np.int32(2), np.complex64(1j)], ids=repr)
def test_hasattr_on_a_traced_value_answers_as_numpy(example):
    answers = {}

    def asks(x):
        for name in NAMES:
            answers[name] = _answer(x, name)
        return x + 1

    autotrace.function(asks)(example)
    eager = {name: _answer(example, name) for name in NAMES}
    assert {name: answers[name] for name in NAMES if answers[name] != eager[name]} == {}
    assert not eager["aval"] and eager["__array_namespace__"]


def jax_or_numpy(x):
    """Code that tells a JAX array from NumPy's by the attributes it has."""
    if hasattr(x, "aval") or hasattr(x, "__jax_array__"):
        return x * 0.0
    return x * 2.0 + getattr(x, "aval", 1.0) + (0.0 if hasattr(x, "flags") else 5.0)


def test_code_that_tells_jax_arrays_by_aval_takes_numpy_s_branch():
    x = np.array([1.0, -2.0])
    np.testing.assert_array_equal(autotrace.function(jax_or_numpy)(x), jax_or_numpy(x))
    np.testing.assert_array_equal(jax_or_numpy(x), [3.0, -3.0])


def test_getattr_of_an_attribute_numpy_lacks_is_numpy_s_error():
    def reads(x):
        return getattr(x, "aval")
    with pytest.raises(AttributeError, match="^'numpy.ndarray' object has no attribute 'aval'$"):
        reads(np.ones(2))
    with pytest.raises(AttributeError, match="^'numpy.ndarray' object has no attribute 'aval'$"):
        autotrace.function(reads)(np.ones(2))


def test_an_ndarray_attribute_a_traced_value_lacks_is_refused():
    def layout(x):
        return x * (1.0 if getattr(x, "strides", None) is None else 2.0)
    with pytest.raises(TracerAttributeError, match="x.strides of a traced array is not known"):
        autotrace.function(layout)(np.ones(2))


# ---- 3. one array passed as two arguments is one object in the trace, as eagerly -------------

def identity_answers(x, y):
    same = 2.0 if x is y else 3.0
    same_id = 10.0 if id(x) == id(y) else 0.0
    return x * same + same_id


def test_one_array_passed_twice_is_one_object_in_the_trace():
    a, b = np.array([1.0, 2.0]), np.array([1.0, 2.0])
    traced = autotrace.function(identity_answers)
    for args in [(a, a), (a, b), (a, a), (b, b), (b, a)]:
        np.testing.assert_array_equal(traced(*args), identity_answers(*args))
    assert traced.trace_count == 2
    scalar = np.float64(1.5)  # a NumPy scalar object passed twice too
    assert traced(scalar, scalar) == identity_answers(scalar, scalar) == 13.0
    assert traced(scalar, np.float64(1.5)) == identity_answers(scalar, np.float64(1.5)) == 4.5


@pytest.mark.parametrize("call", [
    lambda f, a, b: f([a, b]), lambda f, a, b: f({"x": a, "y": b}),
    lambda f, a, b: f(a, y=b), lambda f, a, b: f(None, (a, 1.0, b))],
    ids=["list", "dict", "keyword", "nested"])
def test_one_array_twice_in_containers_and_keywords(call):
    def leaves(first, y=None):
        if isinstance(first, list):
            return identity_answers(*first)
        if isinstance(first, dict):
            return identity_answers(first["x"], first["y"])
        if first is None:
            return identity_answers(y[0], y[2])
        return identity_answers(first, y)
    a, b = np.array([1.0, 2.0]), np.array([1.0, 2.0])
    traced = autotrace.function(leaves)
    for first, second in [(a, a), (a, b), (a, a)]:
        np.testing.assert_array_equal(call(traced, first, second), call(leaves, first, second))


def test_the_gradient_of_one_array_passed_twice_is_the_eager_one():
    def loss(x, y):
        return np.sum(x * y * 3.0) if x is y else np.sum(x + y)
    a = np.array([1.0, -2.0])
    gradient = autotrace.grad(loss, wrt=(0, 1))
    traced = autotrace.function(gradient)
    for args in [(a, a), (a, a.copy()), (a, a)]:
        for got, want in zip(traced(*args), gradient(*args)):
            np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(traced(a, a)[0], 3.0 * a)  # d/dx of 3 x*y is 3 y, y = x


def test_a_retrace_for_one_array_passed_twice_is_explained():
    from autotrace.runtime.tracing.signature import describe_difference, signature_and_arrays
    a, b = np.ones(2), np.ones(2)
    separate, same = (signature_and_arrays(args, {})[0] for args in [(a, b), (a, a)])
    assert describe_difference(separate, same, ("x", "y")) == \
        "array arguments that are one object: none -> leaves 1 and 2"
    assert describe_difference(same, separate, ("x", "y")) == \
        "array arguments that are one object: leaves 1 and 2 -> none"


def test_setting_an_item_to_the_object_it_holds_changes_nothing_as_eagerly():
    def set_again(x, batch):
        batch[1][0] = x  # (batch[1][0] is x: the list stays as it was)
        return np.sum(x) + np.sum(batch[1][0])
    x = np.array([0.5, 1.5])
    batch = [x, [x, 1.0]]
    assert autotrace.function(set_again)(x, batch) == set_again(x, batch) == 4.0
    assert batch[1][0] is x


# ---- traces served to other arguments than their own read each argument apart ---------------

def _made_by_exec(text: str):
    """A function whose source cannot be read: its derivative is built from a trace."""
    namespace = {"np": np}
    exec(text, namespace)
    return namespace["f"]


def test_a_gradient_from_a_trace_of_one_array_passed_twice_is_each_argument_s():
    f = _made_by_exec("def f(a, b):\n    return np.sum(a * 2.0 * b + a)\n")
    x = np.array([1.0, 2.0])
    with pytest.warns(autotrace.TracedSourceWarning):
        da, db = autotrace.grad(f, argnums=(0, 1))(x, x)
    # d/da = 2b + 1, d/db = 2a
    np.testing.assert_allclose(da, 2.0 * x + 1.0)
    np.testing.assert_allclose(db, 2.0 * x)
    with pytest.warns(autotrace.TracedSourceWarning):
        da, db = autotrace.function(autotrace.grad(f, argnums=(0, 1)))(x, x)
    np.testing.assert_allclose(da, 2.0 * x + 1.0)
    np.testing.assert_allclose(db, 2.0 * x)


def test_an_export_traced_with_one_array_passed_twice_reads_each_argument(tmp_path):
    @autotrace.function
    def combine(a, b):
        return a + 2.0 * b

    x = np.ones(2)
    autotrace.export(combine, x, x, tmp_path / "combine.py")
    module = import_exported(tmp_path / "combine.py")
    np.testing.assert_array_equal(module.combine(x, np.zeros(2)), [1.0, 1.0])
    np.testing.assert_array_equal(module.combine(x, x), [3.0, 3.0])


def test_vmap_of_one_array_passed_twice_then_of_two():
    mapped = autotrace.vmap(lambda a, b: a + 2.0 * b)
    A, B = np.ones((3, 2)), np.zeros((3, 2))
    np.testing.assert_array_equal(mapped(A, A), np.full((3, 2), 3.0))
    np.testing.assert_array_equal(mapped(A, B), np.full((3, 2), 1.0))


def test_a_concrete_function_got_for_one_array_twice_serves_two_arrays():
    function = autotrace.function(lambda a, b: a + 2.0 * b)
    x, y = np.ones(2), np.zeros(2)
    concrete = function.get_concrete_function(x, x)
    np.testing.assert_array_equal(concrete(x, y), [1.0, 1.0])
    np.testing.assert_array_equal(concrete(x, x), [3.0, 3.0])
    np.testing.assert_array_equal(function(x, y), [1.0, 1.0])  # its trace, found in the cache
