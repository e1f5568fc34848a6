"""`r.sum(...)`, `r.clip(...)`, `r.T` where `r` may be no array: a module (`xp.sum(x)`), or an
object whose method has an ndarray method's name. A-normal form writes an array's methods as
NumPy's functions (transforms/front/method_receivers.py); for any other receiver the gradient
must be that of what really runs, in every mode, or a clear refusal."""
import inspect
import re

import numpy as np
import pytest

import autotrace
from tests.numeric import central_difference, check_every_mode
from tests.variable_helpers import check_variable_gradients

X = np.array([0.5, -1.0, 2.0])


# --- receivers that are modules ------------------------------------------------------------------

def get_np():
    return np


def prod_of_returned_module(x):
    return get_np().prod(x)


def namespace(x):
    return np


def array_api_style(x):
    xp = namespace(x)
    return xp.sum(x * x)


def module_by_default(x, xp=np):
    return xp.sum(x * x) + xp.max(x)


def module_or_given(x, xp=None):
    xp = namespace(x) if xp is None else xp
    return xp.sum(x * x)


def module_passed_in(x, xp):
    return xp.sum(x * x)


def module_function_named_first(x, xp):
    xp_sum = xp.sum
    return xp_sum(x * x)


def test_a_method_of_a_module_a_function_returns_is_the_module_function():
    np.testing.assert_allclose(autotrace.grad(prod_of_returned_module)(X), [-2.0, 1.0, -0.5])
    check_every_mode(prod_of_returned_module, X)
    check_every_mode(array_api_style, X)
    check_every_mode(module_by_default, X)
    check_every_mode(module_or_given, X)
    check_every_mode(lambda x: module_function_named_first(x, np), X)
    # known from the source: called as they are, no NumPy function made of them
    source = autotrace.source(autotrace.grad(array_api_style))
    assert "xp.sum" in source and "np.sum(xp" not in source


# --- receivers that are objects of the user's -------------------------------------------------

class Scaler:
    def clip(self, v):
        return np.minimum(v, 1.0) * 3.0

    def sum(self, v, axis=None):
        return np.sum(v * v, axis=axis)


SCALER = Scaler()


def method_of_object_passed_in(x, s):
    return np.sum(s.clip(x) ** 2)


def method_through_its_class(x, s):
    return np.sum(Scaler.clip(s, x) ** 2)


def method_of_global_object(x):
    return np.sum(SCALER.clip(x) ** 2) + SCALER.sum(x, axis=0)


def method_of_object_built_here(x):
    s = Scaler()
    return np.sum(s.clip(x) ** 2)


class Holder:
    def __init__(self, T):
        self.T = T


class Softened:
    """A callable object whose attribute `T` (a temperature) is no transpose."""

    def __init__(self, T):
        self.T = T

    def __call__(self, x):
        return np.sum(np.exp(x / self.T))


def attribute_t_of_object_passed_in(x, holder):
    return np.sum(x / holder.T)


def attribute_t_read_by_getattr(x, holder):
    return np.sum(x / getattr(holder, "T"))


def test_a_method_of_an_object_known_from_the_source_is_its_own():
    check_every_mode(method_of_global_object, X)
    check_every_mode(method_of_object_built_here, X)
    check_every_mode(lambda x: method_through_its_class(x, SCALER), X)
    check_every_mode(Softened(2.0), X)
    check_every_mode(lambda x: attribute_t_read_by_getattr(x, Holder(2.0)), X)


def _line(function) -> tuple:
    lines, first = inspect.getsourcelines(function)
    return __file__, first + len(lines) - 1, lines[-1].strip()


def _refusal(function, read, numpy, held, what, instead) -> str:
    filename, line, text = _line(function)
    return (f"{filename}, line {line} (`{text}`): autotrace reads `{read}`, on a value passed "
            f"in, as {numpy}, but {held} is {what}; to use that, write `{instead}`")


def _every_mode(f, x):
    """Each mode's derivative of f at x, run: the refusals are the same in all."""
    direction = np.ones_like(x)
    return {
        "grad": lambda: autotrace.grad(f)(x),
        "value_and_grad": lambda: autotrace.value_and_grad(f)(x),
        "vjp": lambda: autotrace.vjp(f, x),
        "forward": lambda: autotrace.forward(f)(x, tangent=direction),
        "jvp": lambda: autotrace.jvp(f, (x,), (direction,)),
        "traced gradient": lambda: autotrace.function(autotrace.grad(f))(x),
        "gradient of a gradient": lambda: autotrace.grad(
            lambda p: np.sum(autotrace.grad(f)(p)))(x),
        "vmap": lambda: autotrace.vmap(autotrace.grad(f))(np.stack([x, x])),
    }


REFUSED = [
    (lambda x: method_of_object_passed_in(x, SCALER), method_of_object_passed_in,
     ("s.clip(...)", "the array method np.clip(s, ...)", "s",
      "a Scaler, whose clip is its own method", "Scaler.clip(s, ...)")),
    (lambda x: module_passed_in(x, np), module_passed_in,
     ("xp.sum(...)", "the array method np.sum(xp, ...)", "xp",
      "the module numpy, whose sum is its function", "xp_sum = xp.sum`, then `xp_sum(...)")),
    (lambda x: attribute_t_of_object_passed_in(x, Holder(2.0)), attribute_t_of_object_passed_in,
     ("holder.T", "the array's transpose np.transpose(holder)", "holder",
      "a Holder, whose T is its own attribute", "getattr(holder, 'T')")),
]


@pytest.mark.parametrize("f, function, parts", REFUSED, ids=["object", "module", "T"])
def test_an_array_method_of_what_is_passed_in_refuses_any_other_value(f, function, parts):
    message = _refusal(function, *parts)
    for mode, run in _every_mode(f, X).items():
        with pytest.raises(TypeError) as raised:
            run()
        assert str(raised.value) == message, mode
    # the primal, traced, runs the method as Python does
    assert autotrace.function(f)(X) == pytest.approx(f(X))


# --- receivers that a call returns, whose kind only the run tells -------------------------------

def identity(value):
    return value


def array_returned_by_a_call(x):
    return identity(x * 2.0).prod() + identity(x).sum(axis=0) + identity(x).T.sum()


def object_returned_by_a_call(x):
    return np.sum(identity(SCALER).clip(x) ** 2) + identity(SCALER).sum(x)


def test_a_receiver_a_call_returns_is_asked_what_it_is_when_the_code_runs():
    check_every_mode(array_returned_by_a_call, X)
    check_every_mode(object_returned_by_a_call, X)
    source = autotrace.source(autotrace.grad(object_returned_by_a_call))
    assert "is_array_method(_t1, 'clip')" in source and "np.clip(_t1, x)" in source


# --- arrays: NumPy's functions, as before ------------------------------------------------------

def array_methods(x):
    return x.sum(axis=0) + x.clip(0, 1).sum() + x.reshape(3, 1).T.sum() + (x * x).mean()


def annotated(x: np.ndarray):
    return x.sum() * x.max()


class Layer:
    def __init__(self):
        self.w = np.array([1.0, -2.0, 0.5])

    def __call__(self, x):
        return (self.w * x).sum() + self.w.sum() * x.T.sum()


class VariableLayer:
    def __init__(self):
        self.w = autotrace.Variable(np.array([1.0, -2.0, 0.5]), name="w")

    def loss(self, x):
        return np.sum(self.w.reshape(3, 1).T * x) + self.w.sum() ** 2


def variable_loss(layer, x):
    return layer.loss(x)


def test_array_methods_of_arrays_stay_numpy_functions():
    for f in (array_methods, annotated, Layer()):
        check_every_mode(f, X)
    check_variable_gradients(variable_loss, VariableLayer(), X)
    source = autotrace.source(autotrace.grad(array_methods))
    # a parameter is checked once where its method is read; what NumPy returns needs no check
    assert "check_array_method(x, 'sum')\n    _t1 = np.sum(x, axis=0)" in source
    assert "np.clip(x, 0, 1)" in source and "np.reshape(x, (3, 1))" in source
    assert source.count("check_array_method") == 3 and "is_array_method" not in source
    assert "check_array_method" not in autotrace.source(autotrace.grad(annotated))


def items_of_a_list(xs):
    return sum([x.sum() * x.max() for x in xs])


def test_items_of_what_is_passed_in_are_checked_as_it_is():
    xs = [X, 1.5 * X]
    gradient = autotrace.grad(items_of_a_list)(xs)
    for index in range(2):
        def of_item(x, index=index):
            return items_of_a_list([x if i == index else item for i, item in enumerate(xs)])
        np.testing.assert_allclose(gradient[index], central_difference(of_item, xs[index]),
                                   rtol=1e-6)
    assert "check_array_method(x_1, 'sum')" in autotrace.source(autotrace.grad(items_of_a_list))


class Forwarding:
    """An object whose attributes come from `__getattr__`: its `sum` is what that makes."""

    def __getattr__(self, attribute):
        if attribute == "sum":
            return lambda: 1.0
        raise AttributeError(attribute)


def test_the_check_passes_arrays_numbers_and_traced_values():
    from autotrace.transforms.front.method_receivers import is_array_method
    for value in (X, np.float64(1.0), 2.0, 3, np.ma.masked_array(X)):
        assert is_array_method(value, "sum") and is_array_method(value, "T")
    assert not is_array_method(np, "sum") and not is_array_method(SCALER, "clip")
    assert not is_array_method(Holder(1.0), "T") and is_array_method(SCALER, "mean")
    assert not is_array_method(Forwarding(), "sum") and is_array_method(Forwarding(), "max")
    assert is_array_method(autotrace.Variable(X), "sum")
    traced = autotrace.function(autotrace.grad(array_methods))
    np.testing.assert_allclose(traced(X), central_difference(array_methods, X), rtol=1e-6)
    batched = autotrace.vmap(autotrace.grad(array_methods))(np.stack([X, 1.5 * X]))
    np.testing.assert_allclose(batched[1], central_difference(array_methods, 1.5 * X),
                               rtol=1e-6)
    assert re.search(r"np\.sum\(x, axis=0\)", autotrace.source(autotrace.grad(array_methods)))


# --- kinds that do not depend on the order names are settled in ----------------------------------

def sum_of_outer_rebound(x):
    t = np.sum(x, axis=1)
    t = np.outer(t, t)
    t = t.sum()  # t holds np.outer's array here, whatever order the names are looked at in
    return t * np.sum(x ** 2)


def kinds_of(function, order) -> dict:
    """ReceiverKinds' kinds of `function`'s names, its names settled in `order`."""
    from autotrace.transforms.front import method_receivers
    from autotrace.transforms.front.parsing import parse_function
    settle = method_receivers.settle
    method_receivers.settle = lambda kinds, targets, reads, kind_of: settle(
        kinds, order(list(targets)), reads, kind_of)
    try:
        parsed = parse_function(function)
        return method_receivers.ReceiverKinds(parsed.node, parsed.namespace).kinds
    finally:
        method_receivers.settle = settle


def test_receiver_kinds_are_the_same_in_every_order_of_the_names():
    # A name read before its own kind was known was taken as unknown for good, so the kinds,
    # and the generated code, changed with the order of a set of names (PYTHONHASHSEED).
    forward = kinds_of(sum_of_outer_rebound, sorted)
    backward = kinds_of(sum_of_outer_rebound, lambda names: sorted(names, reverse=True))
    assert forward == backward == {"x": "passed", "t": "array"}
    gradient = autotrace.grad(sum_of_outer_rebound)
    source = autotrace.source(gradient)
    assert "is_array_method" not in source and "t = np.sum(t)" in source, source
    x = np.array([[0.5, -1.0], [2.0, 0.25]])
    np.testing.assert_allclose(gradient(x), central_difference(sum_of_outer_rebound, x),
                               rtol=1e-6)
