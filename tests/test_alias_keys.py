"""Items of lists, tuples and dicts by key in the alias analysis
(transforms/analysis/alias_keys.py).

`d["w"]` of `d = {"w": u, "b": x[::-1]}` is u alone: a write into it changes u, not x, so it
is differentiated where x is read afterwards (each function against finite differences in
every mode). Whatever may change which item a key gives (a store through another name or on
one path, another index, `+=`, a method, `del`, a function called, a later run of a loop)
makes it any item again.
"""
import inspect
import re
import textwrap

import gast
import numpy as np
import pytest

import autotrace
from autotrace.transforms.errors import TransformError

from autotrace.transforms.analysis.memory_sharing import memory_sharing
from tests.test_alias_refusals import Box
from tests.numeric import check_every_mode

X = np.array([0.3, -0.7, 1.1, 0.4])


def writes_the_item_of_a_key_beside_a_view(x):
    u = x * 1.0
    d = {"w": u, "b": x[::-1]}
    w = d["w"]
    w[0] = 0.5
    return np.sum(w * x) + np.sum(x ** 2)


def writes_an_item_of_a_list_by_position(x):
    rows = [np.sin(x), x]
    first = rows[-2]
    first[1] = 3.0
    return np.sum(first * x) + np.sum(x ** 2)


def writes_the_item_of_a_key_stored_again(x):
    d = {"w": np.cos(x), "b": x}
    d["w"] = x * 2.0
    w = d["w"]
    w[2] = 1.5
    return np.sum(w * x) + np.sum(x)


def writes_into_a_sum_taken_by_key(x):
    s = np.dot(x, x)
    box = Box(np.cos(x), s)
    v = box.value() + box.w  # new: an array, or a list holding what box holds, never s
    d = {"w": v, "b": x}
    w = d["w"]
    w[3] = 0.5  # writes into v alone, not into what v may hold
    return np.sum(w ** 2) + np.sum(x) * s


def scales_an_item_beside_its_repeat(x):
    s = np.dot(x, x)
    box = Box(np.cos(x), s)
    v = box.value() + box.w  # an array, or a list holding what box holds
    items = [v, x + x]
    r = items[0] * (x * 1.0).sum()  # an array, or v's items repeated: never v itself
    items[0] *= np.sin(x)  # changes v (an array in place, or a list), not what v holds
    return np.sum(r ** 2) + np.sum(items[0] * x) + s


def takes_an_item_of_a_reversed_view(x):
    v = x * 2.0
    total = np.concatenate([v[2:], v[:2]]).sum()  # a list held v for a moment
    a = v[::-1][1]  # a NumPy number: `v +=` leaves it as it was
    v += np.sin(a) * total
    return np.sum(v ** 2) * a


class _Reverser:
    def sum(self, items):  # named as NumPy's method, but reverses the list it is given
        items.reverse()
        return 1.0


def a_method_named_sum_reverses_a_list(x):
    A, B = x * 2.0, x * 3.0
    rows = [A, B]
    _Reverser().sum(rows)  # rows is [B, A]: its key notes are forgotten
    rows[0] *= np.cos(x)  # changes B in place
    return np.sum(B * x) + np.sum(A)


def writes_one_of_two_items_of_one_array_and_reads_it(x):
    v = np.sin(x) * 2.0
    rows = [v, v]
    rows[0] *= np.cos(x)  # changes rows[1] too, which is never read
    return np.sum(rows[0] * x) + np.sum(x ** 2)


@pytest.mark.parametrize("function", [writes_the_item_of_a_key_beside_a_view,
                                      writes_an_item_of_a_list_by_position,
                                      writes_the_item_of_a_key_stored_again,
                                      writes_into_a_sum_taken_by_key,
                                      scales_an_item_beside_its_repeat,
                                      takes_an_item_of_a_reversed_view,
                                      writes_one_of_two_items_of_one_array_and_reads_it],
                         ids=lambda f: f.__name__)
def test_an_item_taken_by_key_is_that_item_alone(function):
    check_every_mode(function, X)


# --- the model's answer: which names w may share memory with ---------------------------------

def test_a_method_of_what_may_be_no_array_may_change_a_list_whatever_its_name():
    # (its source says that it reverses the list, which rows is read after: the call itself is
    # refused, before the write into what the list held then)
    with pytest.raises(TransformError, match=r"this call of _Reverser.sum \(found only when it "
                       r"runs\) changes its argument 'items' in place \(items.reverse\(\.\.\.\)"):
        autotrace.grad(a_method_named_sum_reverses_a_list)(X)


def names_sharing_w(source: str) -> set:
    """The names that w may share memory with at the end of `source` (the body of a function
    of x), as the model finds them (transforms/analysis/memory_sharing.py)."""
    body = gast.parse(textwrap.dedent(source)).body
    return memory_sharing(body, ["x"], {"np": np}, lambda statement: False).names_sharing("w")


def test_an_item_by_key_shares_only_what_that_item_holds():
    assert names_sharing_w("""
        u = x * 1.0
        d = {"w": u, "b": x[::-1]}
        w = d["w"]
        """) == {"w", "u", "d"}
    assert names_sharing_w("""
        rows = (x, np.sin(x), [x])
        w = rows[-2]
        """) == {"w", "rows"}
    assert names_sharing_w("""
        d = {"w": x * 1.0, "b": x}
        u = np.sin(x)
        n = u.sum() + u.max()  # NumPy's methods of an array change no container
        w = d["w"]
        """) == {"w", "d"}


CHANGED = {
    "a method": """
        d = {"w": x * 1.0, "b": x}
        d.update({"w": x})
        w = d["w"]
        """,
    "a store through another name": """
        d = {"w": x * 1.0}
        e = d
        e["w"] = x
        w = d["w"]
        """,
    "another index": """
        d = {"w": x * 1.0}
        k = "w"
        d[k] = x
        w = d["w"]
        """,
    "del": """
        rows = [x * 1.0, x]
        del rows[0]
        w = rows[0]
        """,
    "reverse": """
        rows = [x * 1.0, x]
        rows.reverse()
        w = rows[0]
        """,
    "a function called": """
        d = {"w": x * 1.0, "b": x}
        swap(d)
        w = d["w"]
        """,
    "a store on one path": """
        d = {"w": x * 1.0}
        if x[0] > 0:
            d["w"] = x
        w = d["w"]
        """,
    "a later run of a loop": """
        d = {"w": x * 1.0, "b": x}
        for _ in range(2):
            w = d["w"]
            d["w"] = d["b"]
        """,
    "+=": """
        rows = [x * 1.0]
        rows += [x]
        w = rows[-1]
        """,
}


@pytest.mark.parametrize("source", CHANGED.values(), ids=CHANGED.keys())
def test_a_key_whose_item_may_have_changed_may_be_any_item(source):
    assert "x" in names_sharing_w(source)


def writes_an_item_another_item_views(x):
    A = x * 2.0
    rows = [A, A[1:]]
    rows[0] *= 2.0  # changes A in place, and with it rows[1]
    return np.sum(rows[1] * x[1:])


def test_an_item_changed_in_place_that_another_item_views_is_refused():
    with pytest.raises(TransformError, match=re.escape(
            "rows[0] *= ... changes the item rows[0] in place where it is an array, and rows[1] "
            "may share its memory, read after it on line")):
        autotrace.grad(writes_an_item_another_item_views)(X)


class _Accumulator:
    def __init__(self, total):
        self.total = total

    def __iadd__(self, v):
        self.total += v  # into the array it holds
        return self

    def __add__(self, v):
        return _Accumulator(self.total + v)


def adds_into_an_object(x):
    A = x * 2.0
    acc = _Accumulator(A)
    acc += np.sin(x)  # Python runs __iadd__: A changes
    return np.sum(A * x)


def adds_into_an_object_in_a_list(x):
    A = x * 2.0
    rows = [_Accumulator(A), x]
    rows[0] += np.sin(x)
    return np.sum(A * x)


@pytest.mark.parametrize("function, shown", [(adds_into_an_object, "acc"),
                                             (adds_into_an_object_in_a_list, "rows[0]")])
def test_an_objects_own_in_place_operator_is_refused(function, shown):
    with pytest.raises(TransformError, match=re.escape(
            f"{shown} += ... runs _Accumulator.__iadd__, which may change the object and what "
            f"it holds in place; autotrace differentiates {shown} = {shown} + ... instead")):
        autotrace.grad(function)(X)
    assert autotrace.function(function)(X) == pytest.approx(function(X))  # traced: NumPy's


def adds_into_an_argument_object(x, acc):
    held = acc.total
    acc += np.sin(x)  # Python runs __iadd__: held changes
    return np.sum(held * x)


def adds_into_an_object_a_function_made(x):
    acc = _made(x * 2.0)
    held = acc.total
    acc += np.sin(x)
    return np.sum(held * x)


def _made(total):
    return _Accumulator(total)


@pytest.mark.parametrize("function, arguments", [
    (adds_into_an_argument_object, lambda: (_Accumulator(X * 2.0),)),
    (adds_into_an_object_a_function_made, lambda: ())], ids=["argument", "call"])
def test_an_objects_own_in_place_operator_is_refused_when_run(function, arguments):
    source, first = inspect.getsourcelines(function)
    line = first + next(k for k, text in enumerate(source) if "acc +=" in text)
    message = re.escape(f'test_alias_keys.py", line {line}: acc += ... changes \'acc\' in '
                        f"place, and 'held' shares its memory (held = acc.total, line "
                        f"{line - 1}), read after it on line {line + 1}")
    for transform in (autotrace.grad, lambda f: autotrace.function(autotrace.grad(f))):
        with pytest.raises(TransformError, match=message):
            transform(function)(X, *arguments())
    if not arguments():  # (a trace cannot write into an argument's NumPy array)
        assert autotrace.function(function)(X) == pytest.approx(function(X))  # NumPy's
