"""Containers of classes other than list, tuple and dict in derivatives: a defaultdict keeps
its default_factory where the derivative copies it or builds its gradient (each against finite
differences in every mode), and building a subclass of list or dict (or a container class of
the standard library) from values that carry gradient is refused at the user's line, where
the gradient was silently zero before.
"""
import collections
import re

import numpy as np
import pytest

import autotrace
from autotrace.transforms.errors import TransformError
from tests.numeric import check_every_mode

X = np.array([0.3, -0.7, 1.1])


class Items(list):
    pass


class Entries(dict):
    pass


def sums_into_a_defaultdict(x):
    totals = collections.defaultdict(float)
    totals["a"] += x * 2.0
    totals["b"] = totals["a"] * x
    return np.sum(totals["b"] + totals["c"])


def writes_into_a_defaultdict_argument(x, totals):
    totals["k"] += x
    return np.sum(totals["k"] * totals["j"])


def builds_a_list_subclass(x):
    items = Items([x, x * 2.0])
    return np.sum(items[0] * items[1])


def builds_a_dict_subclass(x):
    entries = Entries(a=x * 2.0)
    return np.sum(entries["a"])


def builds_an_ordered_dict(x):
    entries = collections.OrderedDict(a=x * 2.0)
    return np.sum(entries["a"])


def appends_to_an_empty_list_subclass(x):
    items = Items()
    items.append(x * 3.0)
    return np.sum(items[0] * x)


def reads_a_list_subclass(items):
    return np.sum(items[0] * items[1])


def test_a_defaultdict_built_in_the_function_in_every_mode():
    check_every_mode(sums_into_a_defaultdict, X)


def test_a_defaultdict_argument_keeps_its_factory_and_is_not_changed():
    totals = collections.defaultdict(float, {"k": X * 1.0, "j": X * 2.0})
    gradient_x, gradient_totals = autotrace.grad(writes_into_a_defaultdict_argument,
                                                 argnums=(0, 1))(X, totals)
    # sum((k + x) * j): d/dx = j, d/dk = j, d/dj = k + x
    np.testing.assert_allclose(gradient_x, 2.0 * X)
    np.testing.assert_allclose(gradient_totals["k"], 2.0 * X)
    np.testing.assert_allclose(gradient_totals["j"], 2.0 * X)
    assert type(gradient_totals) is collections.defaultdict
    np.testing.assert_array_equal(totals["k"], X)  # the caller's is unchanged
    assert sorted(totals) == ["j", "k"]


@pytest.mark.parametrize("function, line, built", [
    (builds_a_list_subclass, 41, "Items"),
    (builds_a_dict_subclass, 46, "Entries"),
    (builds_an_ordered_dict, 51, "OrderedDict")])
def test_building_a_container_subclass_from_values_with_gradient_is_refused(
        function, line, built):
    for derivative in (lambda: autotrace.grad(function)(X),
                       lambda: autotrace.jvp(function, (X,), (np.ones(3),)),
                       lambda: autotrace.function(autotrace.grad(function))(X)):
        with pytest.raises(TransformError) as raised:
            derivative()
        assert re.search(rf'test_container_classes.py", line {line}: autotrace cannot '
                         rf'differentiate building a {built} from values that carry gradient',
                         str(raised.value))
    assert function(X) == pytest.approx(np.sum(X * X * 2.0) if function is
                                        builds_a_list_subclass else np.sum(X * 2.0))


def test_a_list_subclass_built_empty_or_passed_in_is_differentiated():
    check_every_mode(appends_to_an_empty_list_subclass, X)
    gradient = autotrace.grad(reads_a_list_subclass)(Items([X, X * 2.0]))
    np.testing.assert_allclose(gradient[0], 2.0 * X)
    np.testing.assert_allclose(gradient[1], X)


def multiplies_counts(counts):
    return counts["a"] * counts["b"]


def reads_a_defaultdict(totals):
    return np.sum(totals["a"] * totals["b"])


def test_a_counter_and_a_defaultdict_argument_in_traced_functions():
    counts = collections.Counter(a=1.5, b=2.0)
    for derivative in (autotrace.grad(multiplies_counts),
                       autotrace.function(autotrace.grad(multiplies_counts))):
        gradient = derivative(counts)  # d(ab)/da = b, d(ab)/db = a
        assert type(gradient) is collections.Counter
        assert dict(gradient) == {"a": 2.0, "b": 1.5}
    totals = collections.defaultdict(float, {"a": X, "b": X * 2.0})
    assert autotrace.function(reads_a_defaultdict)(totals) == pytest.approx(
        reads_a_defaultdict(totals))
    gradient = autotrace.function(autotrace.grad(reads_a_defaultdict))(totals)
    assert type(gradient) is collections.defaultdict and gradient.default_factory is float
    np.testing.assert_allclose(gradient["a"], 2.0 * X)
    np.testing.assert_allclose(gradient["b"], X)


class Frozen(dict):
    def __setitem__(self, key, value):
        raise TypeError("a Frozen is not changed")


class Converted(dict):
    def __setitem__(self, key, value):
        super().__setitem__(key, np.asarray(value, float))


def doubles_an_entry(entries):
    return np.sum(entries["a"] * 2.0)


def gives_back(entries):
    return entries


def test_dict_classes_are_rebuilt_without_their_own_setitem():
    frozen = Frozen(a=X)
    assert autotrace.function(doubles_an_entry)(frozen) == pytest.approx(np.sum(X) * 2.0)
    np.testing.assert_allclose(autotrace.grad(doubles_an_entry)(frozen)["a"], 2.0 * np.ones(3))
    returned = autotrace.function(gives_back)(Converted(a=X))
    assert type(returned) is Converted
    np.testing.assert_array_equal(returned["a"], X)
