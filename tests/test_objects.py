"""Objects in differentiated code: objects the function builds (plain classes and
dataclasses), their methods, `super()`, callable objects, dataclasses as `wrt`, modules that
define `__call__`; each against finite differences in reverse mode, forward mode, traced and
second order, and the refusals for what autotrace cannot follow."""
import abc
import collections
import dataclasses
import gc
import inspect
import os
import weakref

import numpy as np
import pytest

import autotrace
from autotrace import TransformError
from tests.numeric import central_difference

THIS_FILE = os.path.abspath(__file__)


def check_all_modes(f, x: np.ndarray, second_order: bool = True) -> None:
    """f's gradient at x (f: array -> float) from grad, the traced gradient, forward mode
    along a random direction, and the gradient of <grad f, v>, against central differences."""
    expected = central_difference(f, x)
    np.testing.assert_allclose(autotrace.grad(f)(x), expected, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(autotrace.function(autotrace.grad(f))(x), expected,
                               rtol=1e-6, atol=1e-8)
    direction = np.random.default_rng(0).standard_normal(x.shape)
    value, tangent = autotrace.forward(f)(x, tangent=direction)
    assert value == pytest.approx(f(x))
    assert tangent == pytest.approx(np.sum(expected * direction), rel=1e-6, abs=1e-8)
    if second_order:
        def directional(point):
            return np.sum(autotrace.grad(f)(point) * direction)
        np.testing.assert_allclose(
            autotrace.grad(lambda point: np.sum(autotrace.grad(f)(point) * direction))(x),
            central_difference(directional, x), rtol=1e-5, atol=1e-6)


def refusal(f, *args, marker: str, error=TransformError) -> Exception:
    """The error that grad(f)(*args) raises, checked to name this file and the line where
    `marker` is (in this module's source)."""
    with pytest.raises(error) as caught:
        autotrace.grad(f)(*args)
    if error is TransformError:
        lines = open(THIS_FILE).read().splitlines()
        assert os.path.abspath(caught.value.filename) == THIS_FILE
        assert marker in lines[caught.value.lineno - 1]
    return caught.value


# 1. Objects the function builds: their attributes carry gradient (they were silently zero).

class Holder:
    def __init__(self, w):
        self.w = w


@dataclasses.dataclass
class Pair:
    w: np.ndarray
    scale: float = 3.0


class Affine:
    def __init__(self, W, b=None, shift=0.5):
        self.W = W
        self.b = np.zeros(W.shape[0]) if b is None else b * 1.0
        self.rows = self.W.shape[0]
        self.shift = shift

    def __call__(self, x):
        return np.sum(self.hidden(x) ** 2) + self.rows * self.shift

    def hidden(self, x):
        return np.tanh(self.W @ x + self.b)


X = np.array([0.7, -1.2])
W0 = np.array([[0.3, -0.2], [0.5, 0.1], [-0.4, 0.8]])


def test_attribute_of_an_object_built_inside_the_function():
    f = lambda x: np.sum(Holder(x * 2.0).w ** 2)  # noqa: E731
    np.testing.assert_allclose(autotrace.grad(f)(np.array([1.0, 2.0])), [8.0, 16.0])
    check_all_modes(f, X)


def test_field_of_a_dataclass_built_inside_the_function():
    f = lambda x: np.sum(Pair(x * 2.0).w ** 2)  # noqa: E731
    np.testing.assert_allclose(autotrace.grad(f)(np.array([1.0, 2.0])), [8.0, 16.0])
    check_all_modes(lambda x: np.sum(Pair(x * 2.0, scale=x[0]).w * Pair(x).scale ** 2), X)
    check_all_modes(lambda x: Pair(np.sin(x), scale=x[1] ** 2).scale * np.sum(x), X)


def lin_of(W, x):
    return Affine(W)(x)


def test_callable_object_built_from_the_differentiated_argument():
    gradient = autotrace.grad(lin_of)(W0, X)
    np.testing.assert_allclose(gradient, central_difference(lambda W: lin_of(W, X), W0),
                               rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(autotrace.function(autotrace.grad(lin_of))(W0, X), gradient,
                               rtol=1e-12)
    check_all_modes(lambda W: lin_of(W.reshape(3, 2), X), W0.ravel())
    check_all_modes(lambda x: lin_of(W0, x), X)


def test_methods_defaults_keywords_and_reads_of_attributes_set_in_init():
    def f(b):
        model = Affine(W0, b=b, shift=b[0])
        return model.hidden(X)[1] * model(X) + model.shift * model.b[2]
    check_all_modes(f, np.array([0.1, -0.3, 0.2]))


def build(x):
    return Holder(x * 3.0)


def test_object_returned_by_a_function_and_passed_to_another():
    def read(holder):
        return np.sum(np.sin(holder.w))
    check_all_modes(lambda x: read(build(x)) + np.sum(build(x).w * x), X)


class Scaled:
    def __init__(self, w, k=2.0):
        self.w = w * k
        if k > 1.0:
            self.first = w


class Shifted(Scaled):
    def __init__(self, w):
        super().__init__(w, k=3.0)
        self.v = self.w + self.first


class Outer(Shifted):
    def __init__(self, w, z):
        super().__init__(w * z)
        self.z = z

    def out(self):
        return np.sum(self.v * self.z + np.sin(self.w))


def test_init_calling_the_init_of_its_base_classes():
    assert autotrace.grad(lambda x: Shifted(x).v)(2.0) == 4.0
    check_all_modes(lambda x: Outer(x[0], x[1]).out(), X)


# 2. super() in a differentiated method (it raised "__class__ cell not found").

class Base:
    def __init__(self, w):
        self.w = w

    def val(self, x):
        return self.w * x * x


class Child(Base):
    def val(self, x):
        return super().val(x) * 2.0 + self.w


class Plain:
    def val(self, x):
        return x * x


class PlainChild(Plain):
    def val(self, x):
        return super().val(x) * 2.0


def test_zero_argument_super():
    assert autotrace.grad(lambda x: PlainChild().val(x))(3.0) == 12.0
    assert autotrace.grad(PlainChild().val)(3.0) == 12.0
    assert autotrace.forward(lambda x: PlainChild().val(x))(3.0) == (18.0, 12.0)
    assert autotrace.grad(autotrace.grad(lambda x: PlainChild().val(x)))(3.0) == 4.0
    # The method super() reaches reads an attribute that carries gradient.
    check_all_modes(lambda w: Child(w[0] * w[1]).val(w[1]), X)


# 3. grad of a callable object differentiates its __call__ (it was refused).

class Cube:
    def __init__(self, k):
        self.k = k

    def __call__(self, x):
        return self.k * x ** 3


def test_grad_of_a_callable_object():
    cube = Cube(2.0)
    assert autotrace.grad(cube)(2.0) == pytest.approx(24.0)
    assert autotrace.value_and_grad(cube)(2.0) == pytest.approx((16.0, 24.0))
    assert autotrace.forward(cube)(2.0) == pytest.approx((16.0, 24.0))
    assert autotrace.grad(autotrace.grad(cube))(2.0) == pytest.approx(24.0)
    assert float(autotrace.function(autotrace.grad(cube))(np.float64(2.0))) == \
        pytest.approx(24.0)
    assert autotrace.hessian(cube)(2.0) == pytest.approx(24.0)


# 4. An autotrace.Module that defines __call__ instead of call (tf.Module style).

class Quadratic(autotrace.Module):
    def __init__(self):
        super().__init__()
        self.w = autotrace.Variable(np.array([2.0, 3.0]), name="w")

    def __call__(self, x):
        return np.sum(self.w * x * x)


class CheckedCall(autotrace.Module):
    def build(self, input_shape):
        self.add_weight("w", (input_shape[-1],), initializer="ones")

    def __call__(self, x):
        if x.ndim != 1:
            raise ValueError("expected a vector")
        return super().__call__(x) * 2.0

    def call(self, x):
        return np.sum(self.w * x * x)


def test_module_defining_its_own_call_under_implicit_grad_and_minimize():
    model, x = Quadratic(), np.array([1.0, 2.0])
    loss, [(gradient, variable)] = autotrace.implicit_value_and_grad(lambda: model(x))()
    assert loss == 14.0 and variable is model.w
    np.testing.assert_allclose(gradient, x * x)
    assert autotrace.optimizers.SGD(0.1).minimize(lambda: model(x)) == 14.0
    np.testing.assert_allclose(model.w.numpy(), [1.9, 2.6])

    checked = CheckedCall()
    loss, [(gradient, _)] = autotrace.implicit_value_and_grad(lambda: checked(x))()
    assert loss == 10.0
    np.testing.assert_allclose(gradient, 2.0 * x * x)


def test_object_built_from_a_variable_under_implicit_grad():
    v = autotrace.Variable(np.array([1.0, 2.0]), name="v")
    x = np.array([3.0, 4.0])

    def loss():
        return np.sum(Holder(v * 2.0).w * x) + np.sum(Holder(v).w ** 2)
    value, [(gradient, _)] = autotrace.implicit_value_and_grad(loss)()
    assert value == pytest.approx(27.0)
    np.testing.assert_allclose(gradient, 2.0 * x + 2.0 * v.numpy())


# 5. A dataclass as `wrt` gets a dataclass of gradients, as a JAX pytree does.

@dataclasses.dataclass
class Params:
    w: float
    b: float


@dataclasses.dataclass(frozen=True)
class Frozen:
    w: np.ndarray
    b: float
    label: str = "layer"


def affine(p, x):
    return p.w * x + p.b * p.b


def test_dataclass_as_wrt():
    assert autotrace.grad(affine)(Params(2.0, 3.0), 4.0) == Params(w=4.0, b=6.0)
    assert autotrace.function(autotrace.grad(affine))(Params(2.0, 3.0), 4.0) == \
        Params(w=4.0, b=6.0)
    assert autotrace.grad(lambda p, x: x * 2.0)(Params(2.0, 3.0), 4.0) == Params(0.0, 0.0)
    assert autotrace.forward(affine)(Params(2.0, 3.0), 4.0) == (17.0, 10.0)
    assert autotrace.grad(autotrace.grad(affine, wrt=1))(Params(2.0, 3.0), 4.0) == \
        Params(w=1.0, b=0.0)


def test_frozen_dataclass_as_wrt():
    p = Frozen(np.array([1.0, 2.0]), 3.0)
    gradient = autotrace.grad(lambda p, x: np.sum(p.w * x) + p.b ** 3)(p, np.array([4.0, 5.0]))
    assert type(gradient) is Frozen and gradient.label is None
    np.testing.assert_allclose(gradient.w, [4.0, 5.0])
    assert gradient.b == pytest.approx(27.0)


# 6. Refusals, each at the user's line: never a silent zero.

class CallsBaseInit(Pair):
    def __init__(self, w):
        super().__init__(w)  # refused: base __init__


class CallsMethodInInit:
    def __init__(self, w):
        self.w = self.halve(w)  # refused: method in __init__

    def halve(self, w):
        return w / 2


class Slotted:
    __slots__ = ("w",)

    def __init__(self, w):
        self.w = w


@dataclasses.dataclass
class PostInit:
    w: float

    def __post_init__(self):
        self.w = self.w * 2


class Scales:
    def __init__(self, w):
        self.w = w

    def scale(self, factor):
        self.w = self.w * factor


def scale_for_effect(x):
    holder = Scales(x)
    holder.scale(2.0)  # refused: for its effect
    return holder.w


def scale_and_keep_result(x):
    holder = Scales(x)
    ignored = holder.scale(2.0)  # noqa: F841 (refused: kept result)
    return holder.w


def test_objects_that_cannot_be_followed_are_refused_at_their_line():
    error = refusal(lambda x: CallsBaseInit(x).w, 1.0, marker="refused: base __init__")
    assert "it calls the __init__ of Pair, which autotrace cannot read" in error.message
    error = refusal(lambda x: CallsMethodInInit(x).w, 1.0, marker="refused: method in __init__")
    assert "it reads self.halve" in error.message
    for cls, why in [(Slotted, "__slots__"), (PostInit, "__post_init__")]:
        f = lambda x: cls(x).w * 1.0  # noqa: E731 (refused: construction)
        error = refusal(f, 1.0, marker="refused: construction")
        assert why in error.message
    error = refusal(scale_for_effect, 1.0, marker="refused: for its effect")
    assert "this call of Scales.scale: it changes an attribute of 'self' (self.w = ..., " \
        in error.message
    with pytest.raises(TransformError, match="this call of Scales.scale: it changes"):
        autotrace.forward(scale_for_effect)(1.0)
    # Its result kept, the call still changes holder.w: refused when the call runs, at its line.
    error = refusal(scale_and_keep_result, 1.0, marker="refused: kept result")
    assert "this call of Scales.scale: it changes an attribute of 'self' (self.w = ..., " \
           f"{THIS_FILE}, line {inspect.getsourcelines(Scales.scale)[1] + 1})" in error.message


class Scorer(abc.ABC):
    def __init__(self, w):
        self.w = w

    @abc.abstractmethod
    def score(self, x):
        """The score of x."""


class LinearScorer(Scorer):
    def score(self, x):
        return np.sum(self.w * x)


class Settings(collections.UserDict):
    pass


def test_abstract_base_classes_are_the_users_and_standard_library_classes_are_refused():
    check_all_modes(lambda x: LinearScorer(x ** 2).score(x), X)
    f = lambda x: Settings(a=x)["a"] * 2.0  # noqa: E731 (refused: standard library)
    error = refusal(f, 1.0, marker="refused: standard library")
    assert "a class of the standard library" in error.message


def test_plain_object_as_wrt_is_still_refused():
    with pytest.raises(TypeError, match="cannot take a gradient through attribute 'w' of a "
                                        "Holder; pass arrays, or a namedtuple, dict or "
                                        "dataclass of arrays"):
        autotrace.grad(lambda holder: np.sum(holder.w ** 2))(Holder(np.ones(2)))


def test_objects_in_lists_and_dicts_and_chosen_by_a_branch():
    def in_a_list(x):
        holders = [Holder(x), Holder(x * 2.0)]
        total = 0.0
        for holder in holders:
            total = total + np.sum(holder.w ** 2)
        return total
    check_all_modes(in_a_list, X)

    def in_a_dict(x):
        layers = {"a": Affine(W0 * x[0]), "b": Affine(W0 * x[1])}
        return layers["a"](X) * layers["b"](X)
    check_all_modes(in_a_dict, X)

    def chosen(x):
        first = Holder(x)
        other = first if x[0] > 0 else Holder(x * 3.0)
        return np.sum(other.w * first.w)
    for point in (X, -X):
        np.testing.assert_allclose(autotrace.grad(chosen)(point),
                                   central_difference(chosen, point), rtol=1e-6)


REGISTRY = []


class Registered:
    def __init__(self, w):
        self.w = w
        REGISTRY.append(self)


def test_the_object_built_is_the_one_its_init_made():
    def f(x):
        registered = Registered(2.0)
        return registered.w * x * float(REGISTRY[-1] is registered)
    assert autotrace.grad(f)(3.0) == 2.0


def test_dataclass_through_a_traced_gradient_is_read_on_every_call():
    @dataclasses.dataclass
    class Weights:
        w: np.ndarray
        b: float

    def loss(p, x):
        return np.sum(p.w * x) ** 2 + p.b * p.b
    step = autotrace.function(autotrace.grad(loss))
    p, x = Weights(np.array([1.0, 2.0]), 3.0), np.array([1.0, 1.0])
    for _ in range(2):
        gradient = step(p, x)
        assert type(gradient) is Weights
        np.testing.assert_allclose(gradient.w, autotrace.grad(loss)(p, x).w)
        assert gradient.b == 2.0 * p.b
        p.w, p.b = np.array([5.0, 5.0]), 1.0  # the next call reads the new fields
    assert step.trace_count == 2  # one per value of the float field


def test_method_of_a_builtin_container_that_carries_gradient_is_an_error():
    def f(x):
        values = [x, 2.0 * x]
        return values.__getitem__(1) * 2.0   # was silently 0
    with pytest.raises(TransformError, match=r"no derivative rule for the method list\.__getitem__ "
                                             r"of a value that carries gradient; write it without"):
        autotrace.grad(f)(3.0)


def test_assigning_an_attribute_of_a_built_object_in_the_function_is_refused():
    def f(x):
        holder = Holder(x)
        holder.w = holder.w * 2.0  # refused: attribute assignment
        return holder.w
    error = refusal(f, 1.0, marker="refused: attribute assignment")
    assert "assignment to an attribute (holder.w = ...)" in error.message


@dataclasses.dataclass
class WithClassConstant:
    w: float
    scale = 5.0

    def times(self, x):
        return self.w * self.scale * x


class Rectangle:
    factor = 5.0

    def __init__(self, w, h):
        self.w = w
        self.h = h * self.factor / 5.0  # a class attribute read in __init__

    @property
    def area(self):
        return self.w * self.h

    def scaled_area(self, x):
        return self.w * self.h * self.factor * x


def test_class_attributes_are_constants_and_properties_are_refused():
    check_all_modes(lambda x: WithClassConstant(x[0]).times(x[1]), X)
    check_all_modes(lambda x: Rectangle(x[0], x[1]).scaled_area(x[0]), X)
    assert autotrace.grad(lambda p, x: p.times(x))(WithClassConstant(2.0), 3.0) == \
        WithClassConstant(w=15.0)
    with pytest.raises(TypeError, match=r"cannot differentiate through the property "
                                        r"Rectangle\.area of an object whose attributes carry "
                                        r"gradient; make it a method"):
        autotrace.grad(lambda x: Rectangle(x, 3.0).area)(2.0)
    with pytest.raises(TypeError, match="the property Rectangle.area"):
        autotrace.forward(lambda x: Rectangle(x, 3.0).area)(2.0)


# --- a class of the user's called through a variable (an argument, say) ----------------------

class Scaled:
    def __init__(self, values, scale=1.0):
        self.values = values * scale
        self.k = 2.0


@dataclasses.dataclass
class Held:
    values: np.ndarray
    tags: list = dataclasses.field(default_factory=list)
    k: float = 2.0


def builds_what_it_is_given(make, x):
    built = make(x)
    return np.sum(built.values ** 3) * built.k


@pytest.mark.parametrize("make", [Scaled, Held], ids=["class", "dataclass"])
def test_a_class_passed_in_carries_the_gradient_through_its_fields(make):
    x = np.array([0.5, -1.2, 2.0])
    k = 2.0
    np.testing.assert_allclose(autotrace.grad(builds_what_it_is_given, wrt=1)(make, x),
                               3.0 * k * x ** 2, rtol=1e-12)
    np.testing.assert_allclose(
        autotrace.function(autotrace.grad(builds_what_it_is_given, wrt=1))(make, x),
        3.0 * k * x ** 2, rtol=1e-12)
    _, tangent = autotrace.forward(builds_what_it_is_given, wrt=1)(make, x, tangent=x)
    np.testing.assert_allclose(tangent, np.sum(3.0 * k * x ** 3), rtol=1e-12)
    np.testing.assert_allclose(autotrace.hessian(builds_what_it_is_given, wrt=1)(make, x),
                               np.diag(6.0 * k * x), rtol=1e-12)


def _classes_made_here():
    class Scaled:
        def __init__(self, values):
            self.values = values * 2.0

    @dataclasses.dataclass
    class Held:
        values: np.ndarray

    return Scaled, Held


def test_a_class_passed_in_goes_when_the_user_drops_it():
    # what autotrace makes to build it is kept on the class, not in a table that keeps it alive
    x = np.array([0.5, -1.2])
    classes = _classes_made_here()
    for make in classes:
        autotrace.hessian(lambda x, make=make: np.sum(make(x).values ** 3), wrt=0)(x)
        autotrace.grad(builds_what_it_is_given_squared, wrt=1)(make, x)
    references = [weakref.ref(make) for make in classes]
    del classes, make
    gc.collect()
    assert [reference() for reference in references] == [None, None]


def builds_what_it_is_given_squared(make, x):
    return np.sum(make(x).values ** 2)


class Stepper:
    def __init__(self, a):
        self.a = a

    def step(self, x):
        return Stepper(self.a * np.sin(x))


def stepped_in_a_loop(x):
    state = Stepper(x)
    for _ in range(2):
        state = state.step(x)  # the object a method returns, rebound in the loop
    return np.sum(state.a)


def test_a_gradient_of_a_gradient_through_objects_a_loop_rebinds():
    """The second sweep gives the first's calls no gradient of the object they return (its
    zeros are None): the call's derivative starts from zeros, not from a seed of ones."""
    x = np.array([0.3, 0.5])
    outer = lambda x: np.sum(autotrace.grad(stepped_in_a_loop)(x))  # noqa: E731
    expected = central_difference(
        lambda x: np.sum(central_difference(stepped_in_a_loop, x, eps=1e-5)), x, eps=1e-4)
    np.testing.assert_allclose(autotrace.grad(outer)(x), expected, rtol=1e-4)
    np.testing.assert_allclose(autotrace.function(autotrace.grad(outer))(x), expected,
                               rtol=1e-4)
    np.testing.assert_allclose(autotrace.grad(outer)(x),
                               np.sum(autotrace.hessian(stepped_in_a_loop)(x), axis=0),
                               rtol=1e-12)


def test_a_vjp_function_given_none_seeds_ones_as_a_gradient_does():
    x = np.array([0.3, 0.5, -0.7])
    helper = lambda v: np.sum(np.sin(v) * v)  # noqa: E731
    f = lambda v: helper(v) * 2.0 + helper(v * v)  # noqa: E731
    _, vjp_fn = autotrace.vjp(f, x)
    np.testing.assert_allclose(vjp_fn(None)[0], autotrace.grad(f)(x), rtol=1e-12)
