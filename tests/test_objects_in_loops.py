"""Objects of the user's in loops, and names of the function's own that builtins have.

- `for v in obj` iterates by the object's `__iter__` or `__getitem__`, whose derivatives are not
  followed: a gradient or tangent reaching the values is refused, saying to index the object
  (runtime/derivatives/items.py); indexing differentiates `__getitem__`.
- A parameter, variable or comprehension variable named like a builtin (`abs`, `max`) is
  what the function's scope makes it (transforms/front/parsing.py resolve).
- A method raising in a branch of a traced `if`, whose derivative runs in halves, keeps the
  branch's error (transforms/front/exits.py).
"""
import re

import numpy as np
import pytest

import autotrace
from tests.numeric import check_every_mode

X = np.array([0.3, -1.2, 0.8])


class Vec:
    def __init__(self, v):
        self.v = v


class Doubled:
    def __init__(self, rows):
        self.rows = rows

    def __len__(self):
        return len(self.rows)

    def __getitem__(self, index):
        if index >= len(self.rows):
            raise IndexError(index)
        return self.rows[index] * 2.0


def iterates_over_an_object(x):
    total = 0.0
    for row in Doubled([x, x * 3.0]):
        total = total + np.sum(row * x)
    return total


def indexes_an_object_in_a_loop(x):
    doubled = Doubled([x, x * 3.0])
    total = 0.0
    for index in range(len(doubled)):
        total = total + np.sum(doubled[index] * x)
    return total


def lists_an_object(x):
    rows = list(Doubled([x, x * 3.0]))
    return np.sum(rows[0] * rows[1])


def sums_an_object(x):
    return np.sum(sum(Doubled([x, x * 3.0])) * x)


def test_a_loop_over_an_object_a_gradient_reaches_is_refused_and_indexing_is_taken():
    # by __getitem__, which iteration does not differentiate: it crashed in the adjoint
    assert iterates_over_an_object(X) == pytest.approx(8.0 * np.sum(X * X))
    message = ("the values of an object of class Doubled are iterated over (`for v in obj`, "
               "`a, b = obj`, list(obj), sum(obj), by its __iter__ or __getitem__), and a "
               "gradient or tangent reaches them")
    for function in (iterates_over_an_object, lists_an_object, sums_an_object):
        for derivative in (autotrace.grad(function), autotrace.function(autotrace.grad(function))):
            with pytest.raises(TypeError, match=re.escape(message)):
                derivative(X)
    for function in (iterates_over_an_object, lists_an_object, sums_an_object):
        with pytest.raises(TypeError, match=re.escape(message)):
            autotrace.jvp(function, (X,), (np.ones(3),))
    assert autotrace.function(iterates_over_an_object)(X) == pytest.approx(
        iterates_over_an_object(X))
    check_every_mode(indexes_an_object_in_a_loop, X)  # (16 x, against finite differences)


class Pair:
    """Iterates over its two values; its items by index are something else."""

    def __init__(self, a, b):
        self.a, self.b = a, b

    def __iter__(self):
        return iter((self.a, self.b))

    def __getitem__(self, index):
        return self.a * (index + 5.0)


def unpacks_an_object(x):
    a, b = Pair(x, x * 2.0)  # by __iter__, as Python unpacks: (x, 2 x)
    return np.sum(a * b)


def unpacks_an_object_it_does_not_differentiate(x):
    a, b = Pair(np.sum(x), 3.0)
    return a * b


def test_unpacking_an_object_iterates_over_it():
    # It was read as `a = obj[0]; b = obj[1]`: a crash without __getitem__, and with one that
    # differs from iteration, a value other than Python's.
    message = ("the values of an object of class Pair are iterated over (`for v in obj`, "
               "`a, b = obj`, list(obj), sum(obj), by its __iter__ or __getitem__)")
    for derivative in (autotrace.grad(unpacks_an_object),
                       autotrace.function(autotrace.grad(unpacks_an_object)),
                       lambda x: autotrace.jvp(unpacks_an_object, (x,), (np.ones(3),))):
        with pytest.raises(TypeError, match=re.escape(message)):
            derivative(X)
    with pytest.raises(TypeError, match=re.escape(message)):
        autotrace.grad(unpacks_an_object_it_does_not_differentiate)(X)
    assert autotrace.function(unpacks_an_object)(X) == pytest.approx(2.0 * np.sum(X * X))


def squared_norm(vec):
    return np.sum(vec.v ** 2)


def calls_a_parameter_named_abs(x, abs=squared_norm):
    return abs(Vec(x * 2.0))  # the parameter, not the builtin: no __abs__


def calls_a_variable_named_abs(x):
    abs = squared_norm
    return abs(Vec(x * 2.0))


@pytest.mark.parametrize("function", [calls_a_parameter_named_abs, calls_a_variable_named_abs])
def test_a_variable_named_like_a_builtin_is_the_variable(function):
    # taken for the builtin abs, it became Vec.__abs__ and crashed ('<' between Vec and int)
    assert function(X) == pytest.approx(4.0 * np.sum(X * X))
    check_every_mode(function, X)


def a_comprehension_variable_named_max(x):
    first = [max for max in (1.0, 2.0)][0]
    return max(x[0], x[1]) * first  # the builtin: the comprehension's max is its own


def test_a_comprehension_variable_leaves_the_builtin_of_its_name_to_the_function():
    np.testing.assert_allclose(autotrace.grad(a_comprehension_variable_named_max)(X),
                               [1.0, 0.0, 0.0])  # X[0] > X[1]
    with pytest.raises(TypeError, match=re.escape("built-in max() compares values as Python "
                                                  "values, and a traced value has none")):
        autotrace.function(autotrace.grad(a_comprehension_variable_named_max))(X)


class Checked:
    def __init__(self, w):
        self.w = w

    def scaled(self, x):
        if np.sum(x) > -100.0:
            y = x * self.w
        else:
            raise ValueError("too small")
        return y


def calls_a_method_that_raises_in_a_branch(x):
    return np.sum(Checked(2.0).scaled(x) ** 2)


def test_a_method_raising_in_a_traced_branch_says_so_in_a_traced_gradient():
    np.testing.assert_allclose(autotrace.grad(calls_a_method_that_raises_in_a_branch)(X),
                               8.0 * X)
    with pytest.raises(ValueError, match=re.escape(
            "the false branch of this traced `if` fails while it is traced")):
        autotrace.function(autotrace.grad(calls_a_method_that_raises_in_a_branch))(X)
