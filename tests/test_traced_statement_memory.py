"""What a traced `if` or loop changes in place, and who else sees it.

A traced statement is one graph op: its variables come in as traced values, lists and dicts as
new ones holding traced values. NumPy and Python change memory in place, and every other name
for it sees the change:
- `a op= v` into a NumPy array that another name read afterwards shares (an alias, a view, a
  list holding it) is refused, as the statement would give `a` alone a new traced value;
- a NumPy array the statement reaches other than as a variable (a helper writing into its
  argument, `o.a += v`, `np.copyto`) is held read-only while the body is traced: NumPy's change
  would be made once, while tracing. The error names the user's line; the array is writeable
  again after;
- a list or dict the function makes, which another name holds too, is changed in place after
  the statement, so that every name sees the new items; where that cannot be followed (one
  branch changes it, the other binds a new one; two of the statement's names hold it) it is
  an error.
"""
import numpy as np
import pytest

import autotrace
from autotrace.runtime.tracing.control_scope import ControlFlowError

X = np.array([0.5, -1.0, 2.0])
N = np.int64(3)  # a traced trip count: the loops below are graph loops


def check_numpy(function, n=N):
    expected = function(X.copy(), int(n))
    traced = autotrace.function(function)
    np.testing.assert_allclose(traced(X, n), expected, rtol=1e-12)
    np.testing.assert_allclose(traced(X, np.int64(0)), function(X.copy(), 0), rtol=1e-12)


# --- `a op= v` into memory another name shares: refused --------------------------------------

def alias_added_in_a_loop(x, n):
    a = np.zeros(3)
    b = a
    for i in range(n):
        a += x
    return b


def view_read_after(x, n):
    a = np.zeros(3)
    v = a[:2]
    for i in range(n):
        a *= 2.0
        a += x
    return v


def written_through_a_view(x, n):
    a = np.zeros(3)
    v = a[1:]
    for i in range(n):
        v += x[1:]
    return a


def held_by_a_list(x, n):
    a = np.zeros(3)
    items = [a]
    k = 0
    while k < n:
        a += x
        k += 1
    return items[0]


def alias_under_a_traced_if(x, n):
    a = np.zeros(3)
    b = a
    if n > 1:
        a += x
    return b


def dict_item_shared(x, n):
    d = {"a": np.zeros(3)}
    b = d["a"]
    for i in range(n):
        d["a"] += x
    return b


def held_by_an_attribute_written(x, n):
    a = np.zeros(3)
    box = Box()
    box.a = a  # (the model of memory follows the attribute: box holds a)
    for i in range(n):
        a += x
    return box.a


def held_by_an_attribute_set_by_name(x, n):
    a = np.zeros(3)
    box = Box()
    setattr(box, "a", a)  # (the model does not read setattr: asked when the loop runs)
    for i in range(n):
        a += x
    return box.a


REFUSED = [
    (alias_added_in_a_loop, r"a \+= x\n  this writes traced values into the NumPy array 'a' "
                            r"\(a = np.zeros\(3\), line \d+\), whose memory 'b' shares"),
    (view_read_after, r"(?s)a \*= 2.0\n.*whose memory 'v' shares \(v = a\[:2\], line \d+\)"),
    (written_through_a_view, r"(?s)v \+= x\[1:\]\n.*whose memory 'a' shares"),
    (held_by_a_list, r"whose memory 'items' shares \(items = \[a\], line \d+\)"),
    (alias_under_a_traced_if, r"(?s)a \+= x\n.*`if n > 1:` runs on a traced value"),
    (dict_item_shared, r"d\['a'\] \+= x\n  this writes traced values into an item of 'd'.*"
                       r"whose memory 'b' shares"),
    (held_by_an_attribute_written, r"a \+= x\n  this writes traced values into the NumPy array "
                                   r"'a' \(a = np.zeros\(3\), line \d+\), whose memory 'box' "
                                   r"shares \(box.a = a, line \d+\)"),
    (held_by_an_attribute_set_by_name, r"a \+= x\n  this changes the NumPy array 'a' in place, "
                                       r"and 'box', which is read after it, holds its memory too"),
]


@pytest.mark.parametrize("function, message", REFUSED, ids=[f.__name__ for f, _ in REFUSED])
def test_an_in_place_change_another_name_would_miss_is_refused(function, message):
    function(X.copy(), 3)  # NumPy's runs
    with pytest.raises(ControlFlowError, match=message) as refused:
        autotrace.function(function)(X, N)
    assert str(refused.value).startswith(f"{__file__}:")
    assert "np.zeros_like(x, shape=" in str(refused.value)


def accumulated(x, n):
    total = np.zeros(3)
    scale = 1.0
    for i in range(n):
        total += x * scale
        scale *= 0.5
    return total


def accumulated_under_an_if(x, n):
    total = np.zeros(3)
    if n > 2:
        total += x
    else:
        total -= x
    return total


def made_traced(x, n):
    a = np.zeros_like(x)
    b = a
    for i in range(n):
        a += x
    return b


def a_number_read_from_it(x, n):
    a = np.zeros(3)
    b = a[0]  # a NumPy scalar: a copy, whatever the source says
    c = a[[0, 1, 2]]  # a copy too
    for i in range(n):
        a += x
    return a + b + c


def add_into(a, v):
    a += v


def through_a_helper(x, n):
    a = np.zeros(3)
    for i in range(n):
        add_into(a, 1.0)  # a call writing into a: the loop carries a
    return a + x


@pytest.mark.parametrize("function", [accumulated, accumulated_under_an_if, made_traced,
                                      a_number_read_from_it, through_a_helper])
def test_an_in_place_change_no_other_name_sees_is_followed(function):
    check_numpy(function)


# --- NumPy arrays the body reaches but does not carry: held read-only -------------------------

class Box:
    pass


def through_an_attribute(x, n):
    box = Box()
    box.a = np.zeros(3)
    for i in range(n):
        box.a += 1.0
    return box.a + x


def through_a_method(x, n):
    a = np.zeros(3)
    for i in range(n):
        a.__iadd__(1.0)
    return a + x


GLOBAL = np.zeros(3)


def into_a_global(x, n):
    if n > 1:
        np.copyto(GLOBAL, 1.0)
    return x + 1.0


def bump(buffer=np.zeros(3)):
    buffer += 1.0
    COUNTS[0] += 1.0


COUNTS = np.zeros(1)


def through_a_global_function(x, n):
    for i in range(n):
        bump()
    return x * 2.0


class Slotted:
    __slots__ = ("a",)

    def __init__(self):
        self.a = np.zeros(3)


def through_a_slot(x, n):
    box = Slotted()
    for i in range(n):
        box.a -= 1.0
    return box.a + x


HELD = [  # (function, the line of the write, NumPy's words)
    (through_an_attribute, "        box.a += 1.0", "output array is read-only"),
    (into_a_global, "        np.copyto(GLOBAL, 1.0)", "assignment destination is read-only"),
    (through_a_global_function, "    buffer += 1.0", "output array is read-only"),
    (through_a_slot, "        box.a -= 1.0", "output array is read-only"),
]


def test_a_write_by_an_in_place_method_called_by_name_is_made_on_every_run():
    # (a.__iadd__(v) is read as the write into a that it is, as `a += v` is)
    traced = autotrace.function(through_a_method)
    for n in (N, np.int64(5), np.int64(1)):
        np.testing.assert_array_equal(traced(X, n), through_a_method(X, n))


@pytest.mark.parametrize("function, line, numpy", HELD, ids=[f.__name__ for f, _, _ in HELD])
def test_a_write_the_graph_would_make_once_is_refused(function, line, numpy):
    with open(__file__) as source:
        number = source.read().splitlines().index(line) + 1
    with pytest.raises(ControlFlowError) as refused:
        autotrace.function(function)(X, N)
    message = str(refused.value)
    assert message.startswith(f"{__file__}:{number}: NumPy refused to write into a read-only "
                              f"array ({numpy}).")
    assert "traces once as a graph op" in message
    assert GLOBAL.flags.writeable and COUNTS.flags.writeable  # given back as they were
    assert bump.__defaults__[0].flags.writeable
    np.testing.assert_array_equal(GLOBAL, np.zeros(3))
    np.testing.assert_array_equal(COUNTS, np.zeros(1))


def test_arrays_held_read_only_are_writeable_after_a_trace():
    kept = np.zeros(3)
    view = kept[1:]

    def reads(x, n):
        total = x * 0.0
        for i in range(n):
            total = total + kept[0] + view[0]
        return total

    np.testing.assert_array_equal(autotrace.function(reads)(X, N), np.zeros(3))
    assert kept.flags.writeable and view.flags.writeable
    kept[1] = 2.0  # (the view sees it, as before)
    assert view[0] == 2.0


class Cache:
    pass


def test_views_of_read_only_arrays_and_views_the_body_keeps_are_left_as_numpy_leaves_them():
    base = np.arange(4.0)
    view = base[1:]  # writeable, of a base made read-only after
    base.flags.writeable = False
    other = np.ones(4)[1:]
    cache = Cache()

    def reads(x, n):
        total = x * 0.0
        for i in range(n):
            cache.row = other[:3]  # a view taken while `other` is held
            total = total + view + other
        return total

    np.testing.assert_array_equal(autotrace.function(reads)(X, N), 3.0 * (view + other))
    assert view.flags.writeable and other.flags.writeable and not base.flags.writeable
    assert cache.row.flags.writeable  # as NumPy's view of a writeable array is


# --- lists and dicts another name holds: changed in place after the statement ----------------

def dict_item_set_in_a_loop(x, n):
    d = {"a": x * 0.0, "b": x}
    d2 = d
    for i in range(n):
        d["a"] = d["a"] + x * i
    return d2["a"] + d2["b"]


def list_item_set_in_a_while_loop(x, n):
    items = [x * 0.0, 1.0]
    alias = items
    k = 0
    while k < n:
        items[0] = items[0] + x
        k += 1
    return alias[0] * alias[1]


def list_item_set_under_an_if(x, n):
    items = [x * 0.0]
    alias = items
    if n > 1:
        items[0] = items[0] + x
    return alias[0]


def nested_list_changed(x, n):
    inner = [x * 0.0]
    outer = [inner, x]
    for i in range(n):
        inner[0] = inner[0] + x
    return outer[0][0] + outer[1]


def held_in_a_changed_list(x, n):
    inner = [x * 0.0]
    outer = [inner]
    for i in range(n):
        outer[0][0] = outer[0][0] + x
    return inner[0]


def one_branch_gives_a_new_list(x, n):
    items = [x * 0.0]
    if n > 1:
        items[0] = items[0] + x
    else:
        items = [x]  # no other name holds the old one: the same either way
    return items[0]


def items_removed_and_added(x, n):
    d = {"a": x * 0.0, "b": x}
    items = [x, x * 2.0]
    d2, alias = d, items
    if n > 1:
        del d["b"]
        items.pop()
        items.insert(0, x * 3.0)
    else:
        del d["b"]
        items.pop(0)
        items.append(x * 0.5)
    return sum(d2.values()) * len(d2) + sum(alias) * len(alias)


def held_by_an_attribute(x, n):
    d = [x * 0.0]
    box = Cache()
    box.d = d
    for i in range(n):
        d[0] = d[0] + x
    return box.d[0]


def held_by_a_tuple(x, n):
    d = [x * 0.0]
    pair = (d, x)
    same = pair
    for i in range(n):
        pair[0][0] = pair[0][0] + pair[1]
    return same[0][0] + d[0]


@pytest.mark.parametrize("function", [
    dict_item_set_in_a_loop, list_item_set_in_a_while_loop, list_item_set_under_an_if,
    nested_list_changed, held_in_a_changed_list, one_branch_gives_a_new_list,
    items_removed_and_added, held_by_an_attribute, held_by_a_tuple])
def test_a_list_or_dict_changed_in_place_is_seen_through_every_name(function):
    check_numpy(function)


def branches_disagree(x, n):
    d = {"a": x * 0.0}
    e = d
    if n > 1:
        d["a"] = d["a"] + x
    else:
        d = {"a": x}
    return e["a"]


def two_names_changed(x, n):
    d = [x * 0.0]
    d2 = d
    for i in range(n):
        d[0] = d[0] + x
        d2[0] = d2[0] * 2.0
    return d[0]


def other_name_read_inside(x, n):
    d = [x * 0.0, x]
    d2 = d
    for i in range(n):
        d2[0] = d[0] + d[1]
    return d[0]


def changed_then_replaced(x, n):
    d = [x * 0.0]
    d2 = d
    for i in range(n):
        d[0] = d[0] + x
        d = [d[0] * 2.0]
    return d2[0] + d[0]


CONTAINERS_REFUSED = [
    (branches_disagree, r"if n > 1:\n  variable 'd' holds a dict that one branch of this "
                        r"traced `if` changes in place and the other replaces with a new dict"),
    (two_names_changed, r"for i in range\(n\):\n  this traced statement changes in place the "
                        r"list that 'd' holds, and 'd2', which the statement reads too"),
    (other_name_read_inside, r"changes in place the list that 'd2' holds, and 'd', which the "
                             r"statement reads too"),
    (changed_then_replaced, r"changes the list that 'd' holds in place and then gives the name "
                            r"a new list"),
]


@pytest.mark.parametrize("function, message", CONTAINERS_REFUSED,
                         ids=[f.__name__ for f, _ in CONTAINERS_REFUSED])
def test_a_list_change_the_graph_cannot_follow_is_refused(function, message):
    function(X.copy(), 3)
    with pytest.raises(ControlFlowError, match=message) as refused:
        autotrace.function(function)(X, N)
    assert str(refused.value).startswith(f"{__file__}:")


# --- lists and dicts the body reaches but does not carry: a traced value put there, refused --
# (Python values alone are a side effect made while tracing, as tf.function's: test_autograph.py)

LOG = []


class Recorder:
    def __init__(self):
        self.seen = []

    def record(self, value):
        self.seen.append(value)


def appends_to_a_global(x, n):
    for i in range(n):
        LOG.append(x * 2.0)
    return x * 2.0


def appends_through_a_closure(x, n):
    found = []

    def keep(value):
        found.append(value)
    total = x * 0.0
    for i in range(n):
        total = total + x
        keep(total)
    return total * len(found)


def appends_through_a_method(x, n):
    recorder = Recorder()
    if n > 1:
        recorder.record(x)
    return x * len(recorder.seen)


def changes_then_replaces_a_list_an_object_holds(x, n):
    d = [x * 0.0]
    box = Box()
    box.d = d
    for i in range(n):
        d[0] = d[0] + x
        d = [d[0] * 1.0]
    return box.d[0] + d[0]


@pytest.mark.parametrize("function, reached", [
    (appends_to_a_global, "'LOG'"), (appends_through_a_closure, "'found'"),
    (appends_through_a_method, "'recorder'")])
def test_a_list_the_body_changes_other_than_as_a_variable_is_refused_and_restored(
        function, reached):
    with pytest.raises(ControlFlowError, match=f"this body puts a traced value into a list that "
                                               f"it reaches through {reached}, not as one of "
                                               f"the statement's variables") as refused:
        autotrace.function(function)(X, N)
    assert str(refused.value).startswith(f"{__file__}:")
    assert LOG == []  # what it held, back


def test_a_list_an_object_holds_changed_then_replaced_is_refused():
    with pytest.raises(ControlFlowError, match="changes the list that 'd' holds in place and "
                                               "then gives the name a new list"):
        autotrace.function(changes_then_replaces_a_list_an_object_holds)(X, N)
