"""A product by what NumPy reduces an array to (`A * v.sum()`, `A * np.mean(v)`) is a new array,
not a list repeated that holds A's items, where the operands are surely arrays or numbers;
views stay views. Under implicit_grad a Variable of a class read through `k = type(o); k.w`
gets its gradient, and a class's constant read so carries none."""
import numpy as np
import pytest

import autotrace
from tests.numeric import central_difference

X = np.array([0.3, -0.4, 0.8, 0.5])


class Box:
    def __init__(self, w, b):
        self.w = w
        self.b = b

    def value(self):
        return self.w * self.b


def product_by_a_sum(x):
    box = Box(np.exp(x), np.mean(np.cos(x)))
    v2 = box.value() + box.w
    v5 = v2.T
    v6 = v5 * v2.sum()
    v5[1] *= np.mean(x)
    return np.sum(np.sin(v6)) + np.sum(v5 * x)


def product_by_a_maximum(x):
    box = Box(np.exp(x), np.max(np.cos(x)))
    v2 = box.value() + box.w
    v5 = v2.T
    v6 = v5 * np.max(v2) + v2.copy()
    v5[1] *= np.mean(x)
    return np.sum(np.sin(v6)) + np.sum(v5 * x)


def view_of_a_sum(x):
    box = Box(np.exp(x), np.mean(np.cos(x)))
    v2 = box.value() + box.w
    v5 = v2.reshape(2, 2)
    v6 = v5 * v2.sum()
    v2[1] *= np.mean(x)
    return np.sum(np.sin(v6)) + np.sum(v5)


@pytest.mark.parametrize("f", [product_by_a_sum, product_by_a_maximum],
                         ids=lambda f: f.__name__)
def test_a_product_by_a_reduction_shares_no_memory(f):
    expected = central_difference(f, X)
    np.testing.assert_allclose(autotrace.grad(f)(X), expected, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(autotrace.function(autotrace.grad(f))(X), expected, rtol=1e-6,
                               atol=1e-8)


def test_a_view_of_an_array_reduced_is_still_refused():
    line = view_of_a_sum.__code__.co_firstlineno
    with pytest.raises(autotrace.TransformError) as error:
        autotrace.grad(view_of_a_sum)(X)
    assert str(error.value) == (
        f'File "{__file__}", line {line + 5}: v2[1] = ... changes \'v2\' in place, and \'v5\' '
        f"shares its memory (v5 = v2.reshape(2, 2), line {line + 3}), read after it on line "
        f"{line + 6}; autotrace gives 'v2' alone a new value. Give 'v5' a copy if it should "
        "keep the old value (v2.copy()), or write into 'v5' too")


class Model:
    w = autotrace.Variable(np.array([1.0, 2.0]))
    scale = 2.0


MODEL = Model()


def class_named(x):
    k = type(MODEL)
    return np.sum(np.sin(x * k.w)) * k.scale


def class_of_an_argument(model, x):
    total = 0.0
    for o in [model, model]:
        cls = type(o)
        total = total + np.sum(np.sin(x * cls.w))
    return total


def class_compared(x):
    k = type(MODEL)
    if k is Model:
        return np.sum(np.sin(x * k.w))
    return np.sum(x)


@pytest.mark.parametrize("traced", [False, True], ids=["eager", "traced"])
@pytest.mark.parametrize("f, args, times", [(class_named, (), 2.0),
                                            (class_of_an_argument, (MODEL,), 2.0)],
                         ids=["global", "argument"])
def test_a_variable_read_through_a_name_bound_to_type_gets_its_gradient(f, args, times,
                                                                       traced):
    x = np.array([0.3, 0.6])
    gradient = autotrace.implicit_value_and_grad(f)
    if traced:
        gradient = autotrace.function(gradient)
    value, [(dw, variable)] = gradient(*args, x)
    assert variable is Model.w
    np.testing.assert_allclose(dw, times * x * np.cos(x * np.array([1.0, 2.0])), rtol=1e-12)
    assert float(value) == pytest.approx(times * np.sum(np.sin(x * np.array([1.0, 2.0]))))


def test_a_name_bound_to_type_and_read_otherwise_is_refused():
    line = class_compared.__code__.co_firstlineno
    with pytest.raises(autotrace.TransformError) as error:
        autotrace.implicit_grad(class_compared)(np.array([0.3, 0.6]))
    assert str(error.value) == (
        f'File "{__file__}", line {line + 2}: under implicit_grad, \'k\' (k = type(MODEL), '
        f"line {line + 1}) is read both as a class (k.w) and otherwise, so a Variable of the "
        "class would get no gradient through it; read the Variable as type(MODEL).w")
