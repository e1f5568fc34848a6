"""An object a traced `if` binds per branch, items a branch or a traced loop's body appends to
a list of the state, and a count a loop's body keeps in a dict: refused at the statement where
the graph could not give NumPy's value; objects alike on both paths, a layer or Variable made
on one path only, and items appended alike are kept (runtime/branch_writes.py)."""
import inspect
import re

import numpy as np
import pytest

import autotrace
from autotrace.runtime.branch_writes import BranchStateError


class Double:
    def __call__(self, x):
        return 2.0 * x

    def __repr__(self):
        return "Double()"


class Negate:
    def __call__(self, x):
        return -3.0 * x

    def __repr__(self):
        return "Negate()"


class Holder:
    act = None


holder, log, counts, registry = Holder(), [], {}, {}


def _chosen(x):
    if np.sum(x) > 0:
        holder.act = Double()
    else:
        holder.act = Negate()
    return holder.act(x)


def _chosen_where_nothing_was(x):
    if np.sum(x) > 0:
        registry["act"] = np.tanh
    else:
        registry["act"] = np.sin
    return registry["act"](x)


def _replaced_on_one_path(x):
    if np.sum(x) > 0:
        holder.act = Negate()
    return holder.act(x)


def _chosen_in_loop(x, n):
    i = 0
    while i < n:
        holder.act = Negate() if type(holder.act) is Double else Double()
        x, i = holder.act(x), i + 1
    return x


def _appended(x):
    if np.sum(x) > 0:
        log.append(1.0)
    else:
        log.append(-5.0)
    return x * log[-1]


def _objects_appended(x):
    if np.sum(x) > 0:
        log.append(Double())
    else:
        log.append(Negate())
    return log[-1](x)


def _appended_on_one_path(x):
    if np.sum(x) > 0:
        log.append(1.0)
    return x * len(log)


def _appended_in_loop(x, n):
    i = 0
    while i < n:
        log.append(2.0)
        x, i = x + 1.0, i + 1
    return x * len(log)


def _counted_in_loop(x, n):
    i = 0
    while i < n:
        counts["steps"] = counts.get("steps", 0) + 1
        x, i = x + 1.0, i + 1
    return x * counts["steps"]


def _line(function, text: str) -> int:
    lines, first = inspect.getsourcelines(function)
    return first + next(i for i, line in enumerate(lines) if text in line)


_BOTH = "the two branches of this `if` on a traced value (if np.sum(x) > 0:) leave "
_LOOP = "the body of this while loop on a traced value (while i < n:) "


@pytest.mark.parametrize("function, at, message", [
    (_chosen, "if np", _BOTH + "holder.act bound to different objects (a Double and a Negate)"
     ": autotrace traces both branches, running their writes into Python values while "
     "tracing, and a Python attribute cannot hold the object of the branch the graph takes on "
     "each call. Choose the object outside the `if` (on a Python value), or call both and "
     "select the result: autotrace.cond(condition, first, second, x) or "
     "np.where(condition, first(x), second(x))"),
    (_chosen_where_nothing_was, "if np", _BOTH + "registry['act'] bound to different objects "
     "(the function tanh and the function sin)"),
    (_replaced_on_one_path, "if np", _BOTH + "holder.act bound to different objects (a Negate "
     "and a Double)"),
    (_chosen_in_loop, "while", _LOOP + "binds holder.act to another object (from a Double to a "
     "Negate): autotrace traces the body once, and the number of iterations is known only when "
     "the graph runs, so a Python attribute cannot follow it. Make the object before the loop "
     "and keep it there"),
    (_appended, "if np", _BOTH + "log different ([1.0] and [-5.0]): autotrace traces both "
     "branches, running their writes into Python values while tracing, and a Python value "
     "cannot hold what the branch the graph takes on each call leaves. Append to log alike on "
     "both paths, or return what it should get and append it after the traced call"),
    (_objects_appended, "if np", _BOTH + "log different ([Double()] and [Negate()])"),
    (_appended_on_one_path, "if np", _BOTH + "log different ([1.0] and [])"),
    (_appended_in_loop, "while", _LOOP + "changes log (from [] to [2.0]): autotrace traces "
     "the body once, and the number of iterations is known only when the graph runs, so a "
     "Python value cannot follow it. Return what the loop computes and append it to log after "
     "the traced call"),
    (_counted_in_loop, "while", _LOOP + "changes counts['steps'] (from not set to 1)"),
])
def test_state_the_graph_cannot_follow_is_refused_at_the_statement(function, at, message):
    holder.act = Double() if function is _replaced_on_one_path else None
    log.clear()
    counts.clear()
    registry.clear()
    before = holder.act
    args = (np.array([-1.0, -2.0]),) + ((np.array(2),) if "loop" in function.__name__ else ())
    if function is _chosen_in_loop:
        holder.act = before = Double()
    with pytest.raises(BranchStateError, match=re.escape(
            f"test_branch_state_objects.py:{_line(function, at)}: {message}")):
        autotrace.function(function)(*args)
    assert holder.act is before and log == [] and counts == {} == registry  # as they were


def test_objects_alike_on_both_paths_and_items_appended_alike_are_kept():
    def f(x):
        if np.sum(x) > 0:
            holder.act, y = Double(), x
        else:
            holder.act, y = Double(), -x
        log.append(("called", 1.0))
        if np.sum(y) > 2.0:
            log.append(("called", 1.0))
        else:
            log.append(("called", 1.0))
        if np.sum(y) > 2.0:
            log.append("large")  # (a log's message: both branches' are kept)
        else:
            log.append("small")
        return holder.act(y)

    log.clear()
    traced = autotrace.function(f)
    np.testing.assert_allclose(traced(np.array([-1.0, -2.0])), [2.0, 4.0])
    np.testing.assert_allclose(traced(np.array([1.0, 2.0])), [2.0, 4.0])
    assert type(holder.act) is Double  # (traced once)
    assert log == [("called", 1.0), ("called", 1.0), "large", "small"]


def test_choosing_by_a_traced_value_without_state_gives_numpys_value():
    def f(x):
        return autotrace.cond(np.sum(x) > 0, Double(), Negate(), x)

    traced = autotrace.function(f)
    np.testing.assert_allclose(traced(np.array([-1.0, -2.0])), [3.0, 6.0])
    np.testing.assert_allclose(traced(np.array([1.0, 2.0])), [2.0, 4.0])


class Tracked(autotrace.Module):
    """Makes its Variable on its first call and tracks it in a list of its own."""

    def __init__(self):
        super().__init__()
        self.tracked, self.w = [], None

    def __call__(self, x):
        if self.w is None:
            self.w = autotrace.Variable(np.full(x.shape[-1], 0.5))
            self.tracked.append(self.w)
        return x * self.w


@pytest.mark.parametrize("on_first_path", [True, False])
def test_a_variable_a_lazy_layer_tracks_in_a_list_is_made_once(on_first_path):
    layer = Tracked()

    def f(x):
        if (np.sum(x) > 0) == on_first_path:
            return layer(x)
        return -x

    traced = autotrace.function(f)
    x = np.array([1.0, 2.0]) if on_first_path else np.array([-1.0, -2.0])
    np.testing.assert_allclose(traced(x), x * 0.5)
    np.testing.assert_allclose(traced(-x), x)
    assert len(layer.tracked) == 1 and layer.tracked[0] is layer.w
