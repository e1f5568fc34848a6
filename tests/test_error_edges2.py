"""More edge cases that crashed or were refused without the user's line: each now computes
what NumPy computes (derivatives equal to finite differences) or is refused naming the user's
file and line and what to write instead."""
import numpy as np
import pytest

import autotrace
from tests.numeric import central_difference

X = np.array([0.5, -1.25, 2.0])
HERE = __file__


def line_of(function, text: str) -> int:
    """The line of this file where `function`'s source has `text`."""
    lines, start = __import__("inspect").getsourcelines(function)
    return start + next(i for i, line in enumerate(lines) if text in line)


# ---- a list holding traced items as the operand of `op=` ----------------------------------

def scaled_by_list(x):
    y = x[:2] * 1.0
    y *= [x[2], 2.0]
    return np.sum(y ** 2)


def row_plus_list(x):
    y = np.reshape(x[:4], (2, 2)) * 1.0
    a, b = x[0] * 2.0, x[1] ** 2
    y[0] += [a, b]
    return np.sum(y * y)


def hessian_by_differences(f, x):
    return np.stack([central_difference(lambda p, i=i: central_difference(f, p)[i], x, eps=1e-4)
                     for i in range(x.size)])


@pytest.mark.parametrize("f, x", [(scaled_by_list, X), (row_plus_list, np.append(X, 0.75))])
def test_in_place_operand_list_of_traced_items(f, x):
    expected = central_difference(f, x)
    options = dict(rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(autotrace.grad(f)(x), expected, **options)
    np.testing.assert_allclose(autotrace.function(autotrace.grad(f))(x), expected, **options)
    xs = np.stack([x, x + 0.5])
    np.testing.assert_allclose(autotrace.vmap(autotrace.grad(f))(xs),
                               np.stack([expected, central_difference(f, x + 0.5)]), **options)
    np.testing.assert_allclose(autotrace.jacrev(autotrace.grad(f))(x),
                               hessian_by_differences(f, x), rtol=1e-4, atol=1e-4)


def test_in_place_list_keeps_numpy_cast_rule():
    def f(x):
        y = np.arange(2)
        y *= [x[0], 2.0]  # NumPy refuses a float result in an integer array
        return np.sum(y * x[:2])
    with pytest.raises(TypeError, match="Cannot cast ufunc 'multiply' output"):
        autotrace.function(autotrace.grad(f))(X)


# ---- a traced value written into an object's NumPy array ----------------------------------

class History:
    def __init__(self):
        self.hist = np.zeros(3)

    def record(self, x):
        self.hist[1] = x.sum()
        return self.hist * 2.0

    def record_copy(self, x):
        hist = self.hist.copy()
        hist[1] = x.sum()
        self.hist = hist
        return self.hist * 2.0


def test_traced_item_written_into_an_attribute_array():
    history = History()
    with pytest.raises(ValueError) as caught:
        autotrace.function(lambda x: history.record(x))(X)
    message = str(caught.value)
    assert "a traced value is written into a NumPy array that is not traced" in message
    assert "hist = self.hist.copy(); hist[i] = value; self.hist = hist" in message
    assert f'File "{HERE}", line {line_of(History.record, "self.hist[1] =")}' in message
    # what the message says to write: the array is the object's state, written every call
    step = autotrace.function(lambda x: history.record_copy(x))
    for scale in (1.0, 2.0, 3.0):
        np.testing.assert_allclose(step(X * scale), [0.0, 2.0 * 1.25 * scale, 0.0])
        np.testing.assert_allclose(history.hist, [0.0, 1.25 * scale, 0.0])


# ---- np.logaddexp.reduce of a list, and with dtype= ---------------------------------------

def logaddexp_of_list(a):
    return np.logaddexp.reduce([a[0], a[1] * a[2]])


def logaddexp_with_dtype(a):
    return np.sum(np.logaddexp.reduce(np.reshape(a, (3, 2)).T, axis=0, dtype=np.float64) ** 2)


def test_logaddexp_reduce_of_a_list_and_its_hessian():
    expected = central_difference(logaddexp_of_list, X)
    np.testing.assert_allclose(autotrace.grad(logaddexp_of_list)(X), expected, rtol=1e-6)
    np.testing.assert_allclose(autotrace.hessian(logaddexp_of_list)(X),
                               hessian_by_differences(logaddexp_of_list, X), rtol=1e-4,
                               atol=1e-4)
    a = np.linspace(-1.0, 1.5, 6)
    np.testing.assert_allclose(autotrace.hessian(logaddexp_with_dtype)(a),
                               hessian_by_differences(logaddexp_with_dtype, a), rtol=1e-4,
                               atol=1e-4)


# ---- jacrev of a value whose shape a mask makes -------------------------------------------

def masked_squares(m):
    return m[m > 0] ** 2


def test_jacrev_of_a_masked_value_is_refused_with_jacobian_advised():
    m = np.array([1.0, -2.0, 3.0])
    with pytest.raises(TypeError) as caught:
        autotrace.jacrev(masked_squares)(m)
    message = str(caught.value)
    assert "dy has shape (2,), but the size of the output (f64[?]) is known only when" in message
    assert "Run it untraced (autotrace.jacobian(f) runs it once per row)" in message
    assert f'File "{HERE}", line {line_of(masked_squares, "return m[m > 0]")}' in message
    np.testing.assert_allclose(autotrace.jacobian(masked_squares)(m),
                               [[2.0, 0.0, 0.0], [0.0, 0.0, 6.0]])


# ---- a property under a second derivative --------------------------------------------------

class Wave:
    def __init__(self, w):
        self.w = w

    @property
    def energy(self):
        return np.sin(self.w) * self.w


def wave_energy(w):
    return np.sum(Wave(w).energy)


def gradient_sum(w):
    return np.sum(autotrace.grad(wave_energy)(w))


@pytest.mark.parametrize("derivative", [autotrace.hessian(wave_energy),
                                        autotrace.grad(gradient_sum)])
def test_property_refused_at_the_users_line(derivative):
    line = line_of(wave_energy, "Wave(w).energy")
    with pytest.raises(TypeError, match=f'^File "{HERE}", line {line}: autotrace cannot '
                                        f'differentiate through the property Wave.energy'):
        derivative(X)


# ---- Variables: a slice's assign, and `op=` ----------------------------------------------

def test_assign_to_a_traced_slice_of_a_variable_says_what_to_write():
    v = autotrace.Variable(np.array([1.0, 2.0, 3.0]), name="v")

    def update(x):
        v[1:].assign(x[1:])
        return np.sum(x)
    with pytest.raises(AttributeError) as caught:
        autotrace.function(update)(X)
    assert str(caught.value) == (
        f'File "{HERE}", line {line_of(update, "v[1:].assign")}: \'Tracer\' object has no '
        f"attribute 'assign': an item or slice of an autotrace.Variable (v[1:]) is an array, "
        f"not a Variable, and has no .assign. Assign the whole new value: `new = "
        f"v.value().copy(); new[1:] = u; v.assign(new)`")


class Model:
    def __init__(self):
        self.v = autotrace.Variable(np.array([1.0, 2.0]), name="v")

    def add(self, x):
        self.v += x
        return np.sum(self.v * x)

    def scale(self):
        self.v *= 2.0
        return np.sum(self.v * self.v)


@pytest.mark.parametrize("mode", ["eager", "function", "grad", "implicit_grad"])
def test_in_place_operator_on_a_variable_is_refused(mode):
    model = Model()
    x = np.array([0.5, 1.5])
    call, symbol, instead, text = {
        "eager": (lambda: model.add(x), "+=", "v.assign_add(x)", "self.v += x"),
        "function": (lambda: autotrace.function(model.add)(x), "+=", "v.assign_add(x)",
                     "self.v += x"),
        "grad": (lambda: autotrace.grad(model.add)(x), "+=", "v.assign_add(x)",
                 "self.v += x"),
        "implicit_grad": (lambda: autotrace.implicit_grad(model.scale)(), "*=",
                          "v.assign(v * x)", "self.v *= 2.0"),
    }[mode]
    method = Model.scale if mode == "implicit_grad" else Model.add
    with pytest.raises(TypeError) as caught:
        call()
    assert str(caught.value) == (
        f'File "{HERE}", line {line_of(method, text)}: `v {symbol} x` on Variable \'v\' is not '
        f"supported: it would replace the Variable with a plain array, which is no longer "
        f"trained or checkpointed. Write {instead} to change the Variable, or `y = v "
        f"{symbol[0]} x` for a new array")
    assert isinstance(model.v, autotrace.Variable)
    np.testing.assert_array_equal(model.v.numpy(), [1.0, 2.0])
