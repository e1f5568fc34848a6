"""implicit_grad reaches every Variable the function reads: held by a class (read through an
object, the class, or `type(self)`), given as a parameter's default (also a partial's bound
keyword), in an object's slots, or in a module's attributes; in a closure's containers and
objects, a partial's bound arguments, behind a property or __getattr__, in a traced helper, a
loop, a comprehension, or a dataclass. Each loss reads its Variables as
`sum(sin(x * w))`, whose gradient in w is `x * cos(x * w)`; checked eagerly and traced, through
implicit_grad, implicit_value_and_grad and an optimizer's minimize, in float64 and float32."""
import collections
import dataclasses
import functools
import sys
import types

import numpy as np
import pytest

import autotrace


def _part(x, w):
    return np.sum(np.sin(x * w))


def _class_attribute(v):
    class Model:
        w = v()

        def loss(self, x):
            return np.sum(np.sin(x * self.w))
    model = Model()

    def loss(x):
        return model.loss(x)
    return loss, [Model.w]


def _read_through_the_class(v):
    class Model:
        w = v()

    def loss(x):
        return np.sum(np.sin(x * Model.w))
    return loss, [Model.w]


def _read_through_type_of_self(v):
    class Model:
        w, b = v(), v()

        def loss(self, x):
            cls = type(self)
            return np.sum(np.sin(x * type(self).w)) + np.sum(np.sin(x * cls.b))
    model = Model()

    def loss(x):
        return model.loss(x)
    return loss, [Model.w, Model.b]


def _module_class_attribute(v):
    class Layer(autotrace.Module):
        w = v()

        def call(self, x):
            return np.sum(np.sin(x * self.w))
    layer = Layer()
    assert layer.trainable_variables == []  # as tf.Module: its instance attributes only

    def loss(x):
        return layer(x)
    return loss, [Layer.w]


def _default_argument(v):
    w, k = v(), v()

    def inner(x, w=w, *, k=k):
        return np.sum(np.sin(x * w)) + np.sum(np.sin(x * k))

    def loss(x):
        return inner(x)
    return loss, [w, k]


def _default_argument_of_the_loss(v):
    w = v()

    def loss(x, w=w):
        return np.sum(np.sin(x * w))
    return loss, [w]


def _container_default(v):
    w0, w1 = v(), v()

    def inner(x, ws=(w0, w1)):
        return np.sum(np.sin(x * ws[0])) + np.sum(np.sin(x * ws[1]))

    def loss(x):
        return inner(x)
    return loss, [w0, w1]


def _partial_keyword(v):
    bound = functools.partial(_part, w=v())

    def loss(x):
        return bound(x)
    return loss, [bound.keywords["w"]]


def _slots(v):
    class Holder:
        __slots__ = ("w",)

        def __init__(self):
            self.w = v()
    holder = Holder()

    def loss(x):
        return np.sum(np.sin(x * holder.w))
    return loss, [holder.w]


def _module_attribute(v):
    settings = types.ModuleType("reach_settings")
    settings.W = v()
    sys.modules["reach_settings"] = settings

    def loss(x):
        return np.sum(np.sin(x * settings.W))
    return loss, [settings.W]


def _closure_containers_and_objects(v):
    held = {"w": v()}, [v()], (v(),)

    class Holder:
        def __init__(self):
            self.w = v()
    objects = [Holder()]

    def loss(x):
        return (np.sum(np.sin(x * held[0]["w"])) + np.sum(np.sin(x * held[1][0]))
                + np.sum(np.sin(x * held[2][0])) + np.sum(np.sin(x * objects[0].w)))
    return loss, [held[0]["w"], held[1][0], held[2][0], objects[0].w]


def _partial_positional(v):
    bound = functools.partial(_part_first, v())

    def loss(x):
        return bound(x)
    return loss, [bound.args[0]]


def _part_first(w, x):
    return np.sum(np.sin(x * w))


def _property_and_getattr(v):
    class Holder:
        def __init__(self):
            self._w, self._more = v(), {"k": v()}

        @property
        def w(self):
            return self._w

        def __getattr__(self, name):
            try:
                return self.__dict__["_more"][name]
            except KeyError:
                raise AttributeError(name) from None
    holder = Holder()

    def loss(x):
        return np.sum(np.sin(x * holder.w)) + np.sum(np.sin(x * holder.k))
    return loss, [holder._w, holder._more["k"]]


def _traced_helper_loop_and_comprehension(v):
    w, ws = v(), [v(), v()]

    @autotrace.function
    def helper(x):
        return np.sum(np.sin(x * w))

    def loss(x):
        total = helper(x)
        for item in ws[:1]:
            total = total + np.sum(np.sin(x * item))
        return total + sum([np.sum(np.sin(x * item)) for item in ws[1:]])
    return loss, [w] + ws


def _dataclass_field(v):
    @dataclasses.dataclass
    class Holder:
        w: object
    holder = Holder(v())

    def loss(x):
        return np.sum(np.sin(x * holder.w))
    return loss, [holder.w]


CASES = [_class_attribute, _read_through_the_class, _read_through_type_of_self,
         _module_class_attribute, _default_argument, _default_argument_of_the_loss,
         _container_default, _partial_keyword, _slots, _module_attribute,
         _closure_containers_and_objects, _partial_positional, _property_and_getattr,
         _traced_helper_loop_and_comprehension, _dataclass_field]


def _pairs_by(way, loss, x):
    """(value, [(gradient, Variable)]) of loss at x, the way named."""
    if way.endswith("minimize"):  # SGD with rate 1 moves each Variable by minus its gradient
        variables = [v for v in _made]
        before = [v.numpy().copy() for v in variables]
        optimizer = autotrace.optimizers.SGD(1.0)

        def step():
            return optimizer.minimize(functools.partial(loss, x))
        value = (autotrace.function(step) if way == "traced minimize" else step)()
        pairs = [(b - v.numpy(), v) for b, v in zip(before, variables)
                 if not np.array_equal(b, v.numpy())]
        for b, v in zip(before, variables):
            v.assign(b)
        return value, pairs
    gradient = autotrace.implicit_value_and_grad(loss)
    if way == "traced":
        gradient = autotrace.function(gradient)
    return gradient(x)


_made = []


@pytest.mark.parametrize("way, dtype", [("eager", np.float64), ("traced", np.float32),
                                        ("minimize", np.float64),
                                        ("traced minimize", np.float32)])
@pytest.mark.parametrize("case", CASES, ids=lambda case: case.__name__.strip("_"))
def test_every_variable_read_gets_its_gradient(case, way, dtype):
    _made.clear()

    def variable():
        _made.append(autotrace.Variable(np.array([1.0, 2.0], dtype) * (1 + len(_made))))
        return _made[-1]
    loss, read = case(variable)
    x = np.array([0.3, 0.6], dtype)
    value, pairs = _pairs_by(way, loss, x)
    assert [v for _, v in pairs] == read
    for gradient, v in pairs:
        assert gradient.dtype == dtype and gradient.shape == (2,)
        expected = x * np.cos(x * v.numpy())
        np.testing.assert_allclose(gradient, expected, rtol=1e-5 if dtype == np.float32
                                   else 1e-12)
    assert np.isclose(float(value), sum(np.sum(np.sin(x * v.numpy())) for v in read),
                      rtol=1e-6)


_GLOBAL = autotrace.Variable(np.array([1.0, 2.0]), name="global")


def _through_globals(x):
    return np.sum(np.sin(x * globals()["_GLOBAL"]))


def test_a_variable_read_through_globals_is_refused_naming_the_line():
    line = _through_globals.__code__.co_firstlineno + 1
    with pytest.raises(autotrace.TransformError) as error:
        autotrace.implicit_grad(_through_globals)(np.array([0.3, 0.6]))
    assert str(error.value).startswith(
        f'File "{__file__}", line {line}: autotrace cannot differentiate a call of globals() '
        "under implicit_grad: the Variables read through the dict it returns get no "
        "gradient; read each global by its name")


@pytest.mark.parametrize("container", [types.MappingProxyType, collections.deque])
def test_a_variable_in_a_container_autotrace_does_not_follow_is_refused(container):
    held = container({"w": autotrace.Variable(np.array([1.0, 2.0]))} if container is
                     types.MappingProxyType else [autotrace.Variable(np.array([1.0, 2.0]))])
    key = "w" if container is types.MappingProxyType else 0

    def loss(x):
        return np.sum(np.sin(x * held[key]))
    with pytest.raises(TypeError, match="^a gradient reached an item of a value that is no "
                                        "array, list, tuple or dict"):
        autotrace.implicit_grad(loss)(np.array([0.3, 0.6]))


def _as_array(v):
    return v if type(v) is np.ndarray else np.asarray(v, dtype=float) * 10.0


def test_type_of_an_array_is_the_builtins_in_a_traced_implicit_step():
    """Only `type(x).name` is read as `x.__class__.name`: `type(v) is np.ndarray` on a traced
    array stays True inside autotrace.function, so the step takes the branch NumPy takes."""
    w = autotrace.Variable(np.array([1.0, 2.0]))
    x = np.array([0.3, 0.6])

    def loss(x):
        return np.sum(np.sin(_as_array(x * w)))

    value, [(gradient, variable)] = autotrace.function(
        autotrace.implicit_value_and_grad(loss))(x)
    assert variable is w
    assert value == pytest.approx(np.sum(np.sin(x * w.numpy())), rel=1e-14)
    np.testing.assert_allclose(gradient, x * np.cos(x * w.numpy()), rtol=1e-14)


class _Scorer:
    """A callable object held in a global, whose class holds the Variable it reads."""

    w = autotrace.Variable(np.array([1.0, 2.0]))

    def __call__(self, x):
        return np.sum(np.sin(x * self.w))


class _OtherScorer:
    w = autotrace.Variable(np.array([3.0, 0.5]))

    def __call__(self, x):
        return 2.0 * np.sum(np.sin(x * self.w))


scorer = _Scorer()


def _score(x):
    return scorer(x)


def test_a_global_callable_object_rebound_between_steps_gives_the_new_objects_gradient():
    global scorer
    x = np.array([0.3, 0.6])
    step = autotrace.implicit_value_and_grad(_score)
    try:
        for made, scale in ((_Scorer, 1.0), (_OtherScorer, 2.0), (_Scorer, 1.0)):
            scorer = made()
            value, [(gradient, variable)] = step(x)
            assert variable is made.w
            w = made.w.numpy()
            assert value == pytest.approx(scale * np.sum(np.sin(x * w)), rel=1e-14)
            np.testing.assert_allclose(gradient, scale * x * np.cos(x * w), rtol=1e-14)
    finally:
        scorer = _Scorer()


def test_what_a_class_holds_is_looked_at_again_on_each_step():
    """A Variable given to a class, or a base class, after a step (in place of a number of
    the same value, which `==` would take for it), or added to a list the class holds, gets
    its gradient on the next step."""
    class Base:
        k = 1.0

    class Model(Base):
        w = 2.0
        ws: list = []

        def loss(self, x):
            return np.sum(np.sin(x * self.w)) + np.sum(np.sin(x * self.k)) + sum(
                [np.sum(np.sin(x * w)) for w in self.ws])
    holder = types.SimpleNamespace(model=Model())

    def loss(x):
        return holder.model.loss(x)
    x = np.array([0.3, 0.6])
    step = autotrace.implicit_value_and_grad(loss)
    assert step(x)[1] == []
    given = [autotrace.Variable(np.array([2.0, 2.0]))]
    Model.w = given[0]
    given.append(autotrace.Variable(np.array([1.0, 1.0])))
    Base.k = given[1]
    given.append(autotrace.Variable(np.array([0.5, 1.5])))
    Model.ws.append(given[2])
    value, pairs = step(x)
    assert [v for _, v in pairs] == given
    for gradient, v in pairs:
        np.testing.assert_allclose(gradient, x * np.cos(x * v.numpy()), rtol=1e-14)
    assert value == pytest.approx(sum(np.sum(np.sin(x * v.numpy())) for v in given),
                                  rel=1e-14)


class _ByName(type):
    """A metaclass making classes of one name equal (a registry letting a class defined again
    replace the first)."""

    def __eq__(cls, other):
        return isinstance(other, _ByName) and cls.__name__ == other.__name__

    def __hash__(cls):
        return hash(cls.__name__)


def test_slots_of_a_class_equal_to_an_earlier_one_are_its_own():
    x = np.array([0.3, 0.6])

    class Model(metaclass=_ByName):
        __slots__ = ("scale",)

        def __init__(self):
            self.scale = 1.0

        def loss(self, x):
            return np.sum(np.sin(x * self.scale))

    first = Model()
    autotrace.implicit_grad(lambda x: first.loss(x))(x)

    class Model(metaclass=_ByName):  # noqa: F811 (the class defined again)
        __slots__ = ("w",)

        def __init__(self):
            self.w = autotrace.Variable(np.array([1.0, 2.0]))

        def loss(self, x):
            return np.sum(np.sin(x * self.w))

    second = Model()
    value, pairs = autotrace.implicit_value_and_grad(lambda x: second.loss(x))(x)
    assert len(pairs) == 1 and pairs[0][1] is second.w
    np.testing.assert_allclose(pairs[0][0], x * np.cos(x * np.array([1.0, 2.0])))
