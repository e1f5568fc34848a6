"""A Python value of an object's state other than a number (a tuple, a string, None, a bool, an
array, another object, an attribute set or deleted on one path) that the two branches of a
traced `if` leave different, or that a traced loop's body changes, is refused at the statement
as numbers are; one both branches leave alike keeps that value (runtime/branch_writes.py). A
user's module named like one of the standard library's is the user's code
(runtime/python_modules.py)."""
import collections
import dataclasses
import importlib.util
import inspect
import re
import sys

import numpy as np
import pytest

import autotrace
from autotrace.runtime.branch_writes import BranchStateError


@dataclasses.dataclass(frozen=True)
class Settings:
    k: float = 1.0


class Holder:
    def __init__(self):
        self.n, self.t, self.mode, self.option, self.flag = 1.0, (1.0, 2.0), "eval", None, False
        self.array, self.items = np.array(1.0), [1, 1]
        self.pair = (np.array(1.0), np.array(2.0))
        self.settings = Settings()

    def train(self):
        self.mode = "train"


holder = Holder()
CONFIG = {"mode": "a"}


def _set_in_branch(x):
    h = holder
    if np.sum(x) > 0:
        h.t = (6.0, 2.0)
    return x * h.t[0]


def _first_set_in_branch(x):
    if np.sum(x) > 0:
        holder.added = 6.0
    return x * getattr(holder, "added", 1.0)


def _deleted_in_branch(x):
    if np.sum(x) > 0:
        del holder.n
    return x * getattr(holder, "n", 6.0)


def _type_changed_in_branch(x):
    if np.sum(x) > 0:
        holder.t = 6.0
    return x * (holder.t if isinstance(holder.t, float) else 1.0)


def _method_in_branch(x):
    if np.sum(x) > 0:
        holder.train()
    return x * (6.0 if holder.mode == "train" else 1.0)


def _none_in_branch(x):
    if np.sum(x) > 0:
        holder.option = 6.0
    return x * (1.0 if holder.option is None else holder.option)


def _flag_in_branch(x):
    if np.sum(x) > 0:
        holder.flag = True
    return x * (6.0 if holder.flag else 1.0)


def _dict_text_in_branch(x):
    if np.sum(x) > 0:
        CONFIG["mode"] = "b"
    return x * (6.0 if CONFIG["mode"] == "b" else 1.0)


def _replaced_in_branch(x):
    if np.sum(x) > 0:
        holder.settings = dataclasses.replace(holder.settings, k=6.0)
    return x * holder.settings.k


def _array_in_branch(x):
    if np.sum(x) > 0:
        holder.array = np.array(6.0)
    return x * holder.array


def _list_in_branch(x):
    if np.sum(x) > 0:
        holder.items = [6, 1]
    return x * holder.items[0]


def _arrays_in_branch(x):
    if np.sum(x) > 0:
        holder.pair = (np.array(6.0), np.array(2.0))
    return x * holder.pair[0]


def _expression(x):
    y = (holder.train() or x) if np.sum(x) > 0 else x
    return y * (6.0 if holder.mode == "train" else 1.0)


def _in_loop(x):
    y = x
    while np.sum(y) < 10.0:
        y = y * 2.0
        holder.t = (6.0, 2.0)
    return y * holder.t[0]


def _first_set_in_loop(x):
    y = x
    for _ in range(np.sum(-x).astype(int)):
        y = y * 2.0
        holder.added = "set"
    return y * (6.0 if hasattr(holder, "added") else 1.0)


def _line(function, text: str) -> int:
    lines, first = inspect.getsourcelines(function)
    return first + next(i for i, line in enumerate(lines) if text in line)


@pytest.mark.parametrize("function, label, first, second", [
    (_set_in_branch, "holder.t", "(6.0, 2.0)", "(1.0, 2.0)"),
    (_first_set_in_branch, "holder.added", "6.0", "not set"),
    (_deleted_in_branch, "holder.n", "not set", "1.0"),
    (_type_changed_in_branch, "holder.t", "6.0", "(1.0, 2.0)"),
    (_method_in_branch, "holder.mode", "'train'", "'eval'"),
    (_none_in_branch, "holder.option", "6.0", "None"),
    (_flag_in_branch, "holder.flag", "True", "False"),
    (_dict_text_in_branch, "CONFIG['mode']", "'b'", "'a'"),
    (_replaced_in_branch, "holder.settings",
     "Settings(k=6.0)", "Settings(k=1.0)"),
    (_array_in_branch, "holder.array", "array(6.)", "array(1.)"),
    (_list_in_branch, "holder.items", "[6, 1]", "[1, 1]"),
    (_arrays_in_branch, "holder.pair", "(array(6.), array(2.))", "(array(1.), array(2.))"),
])
def test_a_value_the_branches_leave_different_is_refused_and_kept_as_it_was(
        function, label, first, second):
    global holder
    holder, CONFIG["mode"] = Holder(), "a"
    np.testing.assert_allclose(function(np.array([-1.0, -2.0])), [-1.0, -2.0])  # NumPy
    with pytest.raises(BranchStateError) as caught:
        autotrace.function(function)(np.array([-1.0, -2.0]))
    assert str(caught.value).startswith(
        f"test_branch_state_more.py:{_line(function, 'if np.sum')}: the two branches of this "
        f"`if` on a traced value (if np.sum(x) > 0:) leave {label} different ({first} and "
        f"{second}): ")
    fresh = Holder()
    assert vars(holder).keys() == vars(fresh).keys() and CONFIG == {"mode": "a"}
    assert holder.t == (1.0, 2.0) and holder.mode == "eval" and holder.n == 1.0


def test_the_message_names_the_value_and_what_to_write():
    global holder
    holder = Holder()
    with pytest.raises(BranchStateError) as caught:
        autotrace.function(_expression)(np.array([1.0, 2.0]))
    assert str(caught.value).partition("\n")[0] == (
        f"test_branch_state_more.py:{_line(_expression, 'np.sum')}: the two branches of this "
        "conditional expression on a traced value (holder.train() or x if np.sum(x) > 0 else "
        "x) leave holder.mode different ('train' and 'eval'): autotrace traces both branches, "
        "running their writes into Python values while tracing, and a Python value cannot "
        "hold what the branch the graph takes on each call leaves. Set holder.mode alike on "
        "both paths, or compute what it holds as an array (np.where(condition, new, old)) and "
        "write it after the conditional expression")


@pytest.mark.parametrize("function, statement, label, change", [
    (_in_loop, "while np.sum", "holder.t", "from (1.0, 2.0) to (6.0, 2.0)"),
    (_first_set_in_loop, "for _ in", "holder.added", "from not set to 'set'"),
])
def test_a_value_a_traced_loop_changes_is_refused_at_the_loop(function, statement, label,
                                                               change):
    global holder
    holder = Holder()
    with pytest.raises(BranchStateError, match=re.escape(
            f"test_branch_state_more.py:{_line(function, statement)}: the body of this ") +
            r".* changes " + re.escape(f"{label} ({change}): ")):
        autotrace.function(function)(np.array([1.0, 2.0]))
    assert holder.t == (1.0, 2.0) and not hasattr(holder, "added")


def test_values_both_branches_leave_alike_are_kept():
    global holder
    holder = Holder()

    def f(x):
        if np.sum(x) > 0:
            holder.t, holder.mode, y = (3.0, 2.0), "train", x * 2.0
        else:
            holder.t, holder.mode, y = (3.0, 2.0), "train", x
        return y * holder.t[0] * (2.0 if holder.mode == "train" else 1.0)

    np.testing.assert_allclose(autotrace.function(f)(np.array([1.0, 2.0])), [12.0, 24.0])
    assert holder.t == (3.0, 2.0) and holder.mode == "train"


class Scale(autotrace.Module):
    def build(self, input_shape):
        self.add_weight("factor", (input_shape[-1],), initializer="ones")

    def call(self, x):
        return x * self.factor


def test_a_module_first_called_in_both_branches_builds_once():
    scale = Scale()

    def f(x):
        if np.sum(x) > 0:
            return scale(x) * 2.0
        return -scale(x)

    traced = autotrace.function(f)
    np.testing.assert_allclose(traced(np.array([1.0, 2.0])), [2.0, 4.0])
    np.testing.assert_allclose(traced(np.array([-1.0, -2.0])), [1.0, 2.0])
    assert len(scale.variables) == 1 and scale.variables[0] is scale.factor


_USER_MODULE = '''
STORE = {}


def keep(h):
    STORE["h"] = h
    return h


class Counter:
    def __init__(self):
        self.n = 1.0

    def up(self):
        self.n = 6.0
'''


@pytest.fixture
def user_module_named_as_standard_library(tmp_path, monkeypatch):
    """A user's file `tabnanny.py`, imported under the name of the standard library's."""
    path = tmp_path / "tabnanny.py"
    path.write_text(_USER_MODULE)
    spec = importlib.util.spec_from_file_location("tabnanny", path)
    module = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, "tabnanny", module)
    spec.loader.exec_module(module)
    return module


def test_a_store_by_a_user_module_named_as_the_standard_librarys_is_refused(
        user_module_named_as_standard_library):
    helpers = user_module_named_as_standard_library

    def f(x):
        helpers.keep(np.sin(x) * 2.0)
        return np.sum(helpers.STORE["h"] * x)

    with pytest.raises(autotrace.TransformError, match=re.escape(
            "autotrace cannot differentiate this call of keep: it sets an item of the global "
            f"'STORE' (STORE['h'] = ..., {helpers.__file__}, line 6) to a value that carries "
            "gradient")):
        autotrace.grad(f)(np.array([0.3, 0.7]))


def test_the_state_of_an_object_of_a_user_module_named_as_the_standard_librarys_is_watched(
        user_module_named_as_standard_library):
    counter = user_module_named_as_standard_library.Counter()

    def f(x):
        if np.sum(x) > 0:
            counter.up()
        return x * counter.n

    with pytest.raises(BranchStateError, match=re.escape(
            "leave different Python numbers in counter.n (6.0 and 1.0)")):
        autotrace.function(f)(np.array([-1.0, -2.0]))
    assert counter.n == 1.0


@dataclasses.dataclass(frozen=True)
class Spec:
    units: int


class Remember(autotrace.layers.Layer):
    """Writes a new dict, list and frozen dataclass, equal on each call."""

    def call(self, x, training=None):
        self.last_call, self.shapes = dict(training=training), [x.shape]
        self.spec = Spec(units=x.shape[-1])
        return x * 2.0


class Lazy(autotrace.Module):
    """Makes its sub-layer on its first call (no build method)."""

    def __init__(self):
        super().__init__()
        self.head = None

    def __call__(self, x):
        if self.head is None:
            self.head = autotrace.layers.Dense(1, kernel_initializer="ones")
        return self.head(x)


class FlexibleDense(autotrace.Module):
    """Makes its Variables on its first call, under a flag of its own."""

    def __init__(self):
        super().__init__()
        self.is_built = False

    def __call__(self, x):
        if not self.is_built:
            self.w = autotrace.Variable(np.full((x.shape[-1], 2), 0.5))
            self.is_built = True
        return x @ self.w


class CachedFunction:
    def __init__(self):
        self.function = None

    def get(self):
        if self.function is None:
            self.function = autotrace.function(lambda v: v * 3.0)
        return self.function


def _both_branches(layer):
    def f(x):
        if np.sum(x) > 0:
            return layer(x)
        return -layer(x)
    return f


def _first_branch(layer):
    def f(x):
        y = x * 4.0
        if np.sum(x) > 0:
            y = layer(x)
        return y
    return f


def _cached(holder):
    def f(x):
        if np.sum(x) > 0:
            return holder.get()(x)
        return -x
    return f


@pytest.mark.parametrize("make, positive, negative", [
    (lambda: _both_branches(Remember()), [[2.0, 4.0]], [[2.0, 4.0]]),
    (lambda: _both_branches(Lazy()), [[3.0]], [[3.0]]),
    (lambda: _both_branches(FlexibleDense()), [[1.5, 1.5]], [[1.5, 1.5]]),
    (lambda: _first_branch(FlexibleDense()), [[1.5, 1.5]], [[-4.0, -8.0]]),
    (lambda: _cached(CachedFunction()), [[3.0, 6.0]], [[1.0, 2.0]]),
])
def test_equal_plain_data_and_objects_made_in_a_branch_are_kept(make, positive, negative):
    traced, x = autotrace.function(make()), np.array([[1.0, 2.0]])
    np.testing.assert_allclose(traced(x), positive)
    np.testing.assert_allclose(traced(-x), negative)


def test_the_objects_a_lazy_layer_makes_in_one_branch_are_those_both_use():
    lazy = Lazy()
    traced = autotrace.function(_both_branches(lazy))
    np.testing.assert_allclose(traced(np.array([[1.0, 2.0]])), [[3.0]])
    lazy.head.kernel.assign(np.full((2, 1), 2.0))  # the graph of the else-branch reads it
    np.testing.assert_allclose(traced(np.array([[-1.0, -2.0]])), [[6.0]])


def test_an_object_on_one_path_and_plain_data_on_the_other_is_refused():
    global holder
    holder, variable = Holder(), autotrace.Variable(np.array(6.0))

    def f(x):
        if np.sum(x) > 0:
            holder.option = variable
        else:
            holder.option = None
        return x

    with pytest.raises(BranchStateError, match=re.escape(
            "leave holder.option different (<autotrace.Variable")):
        autotrace.function(f)(np.array([1.0, 2.0]))
    assert holder.option is None


class Cell(autotrace.layers.Layer):
    def call(self, h):
        self.spec, self.state_size = Spec(units=h.shape[-1]), [h.shape[-1]]
        return np.tanh(h)


def test_a_loop_body_writing_equal_plain_data_or_a_memo_is_kept():
    cell, cache = Cell(), {}

    def basis(n):
        if n not in cache:
            cache[n] = np.arange(1.0, n + 1)
        return cache[n]

    def f(h, n):
        i = 0
        while i < n:
            h = cell(h) * basis(2)
            cache["last"] = "done"
            i += 1
        return h

    cell(np.ones((1, 2)))
    h = np.array([[0.5, -0.3]])
    np.testing.assert_allclose(autotrace.function(f)(h, np.array(2)),
                               np.tanh(np.tanh(h) * [1.0, 2.0]) * [1.0, 2.0])
    assert cell.state_size == [2] and cache["last"] == "done"


def test_a_count_a_loop_body_keeps_in_a_counter_is_refused_at_the_loop():
    global holder
    holder = Holder()
    holder.counts = collections.Counter()

    def f(x, n):
        i = 0
        while i < n:
            holder.counts["steps"] += 1
            x, i = x + 1.0, i + 1
        return x * holder.counts["steps"]

    with pytest.raises(BranchStateError, match=re.escape(
            f"test_branch_state_more.py:{_line(f, 'while i')}: the body of this while loop on a "
            "traced value (while i < n:) changes holder.counts['steps'] (from not set to 1): ")):
        autotrace.function(f)(np.array([1.0, 2.0]), np.array(2))
    assert holder.counts == collections.Counter()
