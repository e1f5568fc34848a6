"""Dicts under the transforms: built with dict(...), read with .get, changed with .setdefault,
.update, .pop and item writes, in every mode.

autotrace follows a dict through literals, comprehensions, reads `d[k]` and writes `d[k] = v`;
dict(...) and the methods become those (transforms/front/dict_methods.py). Expected values are
worked out by hand (each function's docstring says what it computes) and checked against
finite differences to second order, in reverse and forward mode, and traced by
autotrace.function.
"""
import numpy as np
import pytest

import autotrace
from autotrace import TransformError
from autotrace.testing import check_grads

X = np.array([0.5, -1.0, 2.0])


def keywords(x):
    """x * 2x = 2 x**2."""
    d = dict(a=x, b=x * 2.0)
    return np.sum(d["a"] * d["b"])


def zipped(x):
    """x * x**2 = x**3."""
    d = dict(zip(["a", "b"], [x, x * x]))
    return np.sum(d["a"] * d["b"])


def pairs_and_keywords(x):
    """x * x**2 * 3x = 3 x**4."""
    d = dict([("a", x), ("b", x * x)], c=3.0 * x)
    return np.sum(d["a"] * d["b"] * d["c"])


def from_a_mapping(x):
    """dict of a dict, of its items and of a call's result: x * 2x * 3x * 4x = 24 x**4."""
    first = dict({"a": x, "b": 2.0 * x})
    second = dict(first.items())
    third = dict(scaled(x))
    return np.sum(first["a"] * second["b"] * third["c"] * third["d"])


def scaled(x):
    return {"c": 3.0 * x, "d": 4.0 * x}


def with_default(x):
    """x * 1 * x (the missing key gives its default) + 5 * x = x**2 + 5x."""
    d = {"a": x}
    return np.sum(d.get("a", 0.0) * d.get("b", 1.0) * x + d.get("c", 5.0 * x))


def set_default(x):
    """a stays x (setdefault keeps it), b is x**2: x * x**2 = x**3."""
    d = {"a": x}
    kept = d.setdefault("a", 100.0 * x)
    d.setdefault("b", x * x)
    return np.sum(kept * d["b"])


def updated(x):
    """a = 3x (update overwrites it), b = x**2, c = x: 3x * x**2 * x = 3 x**4."""
    d = {}
    d.setdefault("a", x)
    d.update({"b": x * x}, a=x * 3.0)
    d.update(zip(["c"], [x]))
    return np.sum(d["a"] * d["b"] * d["c"])


def popped(x):
    """v = x**2, then d = {a: x}; w = x (the default): x**2 * x * x + len(d) = x**4 + 1."""
    d = {"a": x, "b": x * x}
    v = d.pop("b")
    w = d.pop("c", x)
    return np.sum(v * d["a"] * w) + len(d)


def in_a_loop(x):
    """s = 0 + x + 2x = 3x, and d["2"] = x: 3 x**2."""
    d = {}
    for i in range(3):
        d.setdefault("s", 0.0 * x)
        d["s"] = d["s"] + x * i
        d.update({str(i): x})
    return np.sum(d["s"] * d["2"])


def popped_in_a_loop(x):
    """Items 0, x, 2x; the first two popped: 2x * x = 2 x**2."""
    d = {}
    for i in range(3):
        d[str(i)] = x * i
    for key in ["0", "1"]:
        d.pop(key)
    return np.sum(d["2"] * x) + len(d)


def copied(x):
    """The copy is changed, the dict is not: x * x**2 = x**3."""
    d = {"a": x}
    e = d.copy()
    e["a"] = x * x
    return np.sum(d["a"] * e["a"])


def added_into(x):
    """d["a"] += x**2 gives x + x**2; twice that is 2x + 2 x**2."""
    d = {"a": x}
    d["a"] += x * x
    return np.sum(d["a"] * 2.0)


def methods_of_unnamed_dicts(x):
    """.get, .setdefault, .pop and .copy of dicts that no name holds (a literal, a dict(...)
    call): x * x**2 * 3x * x = 3 x**5."""
    first = {"a": x}.get("a")
    second = {"a": x}.setdefault("b", x * x)
    third = dict(c=3.0 * x).pop("c")
    fourth = {"e": x}.copy()["e"] * dict(e=1.0).copy().get("e", 2.0)
    return np.sum(first * second * third * fourth)


def made(x):
    return {"a": x, "b": 2.0 * x}


class Scaled:
    """Not a mapping, with a get method of its own."""

    def __init__(self, value):
        self.value = value

    def get(self, scale, offset=0.0):
        return self.value * scale + offset


def get_of_call_results(x):
    """.get of a dict a call returns, and of an object that is no mapping: 2x * x * 3x =
    6 x**3."""
    return np.sum(made(x).get("b") * made(x).get("a", 0.0) * Scaled(x).get(3.0))


DICT_FUNCTIONS = [  # each with its derivative at a float x
    (keywords, lambda x: 4 * x),
    (zipped, lambda x: 3 * x ** 2),
    (pairs_and_keywords, lambda x: 12 * x ** 3),
    (from_a_mapping, lambda x: 96 * x ** 3),
    (with_default, lambda x: 2 * x + 5),
    (set_default, lambda x: 3 * x ** 2),
    (updated, lambda x: 12 * x ** 3),
    (popped, lambda x: 4 * x ** 3),
    (in_a_loop, lambda x: 6 * x),
    (popped_in_a_loop, lambda x: 4 * x),
    (copied, lambda x: 3 * x ** 2),
    (added_into, lambda x: 2 + 4 * x),
    (methods_of_unnamed_dicts, lambda x: 15 * x ** 4),
    (get_of_call_results, lambda x: 18 * x ** 2),
]


@pytest.mark.parametrize("function, derivative", DICT_FUNCTIONS,
                         ids=[f.__name__ for f, _ in DICT_FUNCTIONS])
def test_dict_building_and_methods_in_every_mode(function, derivative):
    x = 1.3
    assert autotrace.grad(function)(x) == pytest.approx(derivative(x), rel=1e-12)
    assert autotrace.forward(function)(x)[1] == pytest.approx(derivative(x), rel=1e-12)
    assert autotrace.function(autotrace.grad(function))(x) == pytest.approx(derivative(x),
                                                                             rel=1e-12)
    assert autotrace.function(autotrace.forward(function))(x)[1] == pytest.approx(
        derivative(x), rel=1e-12)
    np.testing.assert_allclose(autotrace.grad(function)(X), derivative(X), rtol=1e-12)
    np.testing.assert_allclose(autotrace.function(autotrace.grad(function))(X), derivative(X),
                               rtol=1e-12)
    check_grads(function, (X,), order=2, modes=("reverse", "forward"))


def weights_from(params, x):
    """params["w"] * x + params.get("z", x) * 2: the missing key gives x."""
    return np.sum(params.get("w", 1.0) * x + params.get("z", x) * 2.0)


def changed_copy_of_an_argument(params, x):
    params = dict(params)
    params.update(b=x * x)
    params.setdefault("a", 100.0)
    return np.sum(params["a"] * params["b"])


def test_dicts_passed_in_read_with_get_and_copied_before_changes():
    params = {"w": np.array([2.0, -1.0, 0.5])}
    gradient = autotrace.grad(weights_from, wrt=(0, 1))(params, X)
    np.testing.assert_allclose(gradient[0]["w"], X)
    np.testing.assert_allclose(gradient[1], params["w"] + 2.0)
    check_grads(weights_from, (params, X), wrt=(0, 1), order=2)
    params = {"a": 2.0}
    gradient = autotrace.grad(changed_copy_of_an_argument, wrt=(0, 1))(params, 3.0)
    assert gradient[0] == {"a": pytest.approx(9.0)} and gradient[1] == pytest.approx(12.0)
    assert params == {"a": 2.0}  # the argument is not changed
    check_grads(changed_copy_of_an_argument, (params, 3.0), wrt=(0, 1), order=2)


def filled_in_a_loop_then_read_by_items(x):
    """A dict filled by a loop, read after it through .items(): x**2 * x = x**3."""
    squares = {"a": x * x}
    others = {}
    for key, value in {"b": x}.items():
        others[key] = value
    for key, value in others.items():
        squares[key] = value
    return squares["a"] * squares["b"]


def comprehension_then_written(x):
    built = {key: x for key in "ab"}
    built["a"] = x * x
    return built["a"] * built["b"]


def list_comprehension_then_written(x):
    built = [x for _ in range(2)]
    built[0] = x * x
    return built[0] * built[1]


def test_second_derivatives_through_dicts_filled_and_written():
    # the sum of two gradients of a dict had the keys of the first alone: a second
    # derivative through a dict filled in a loop lost the term of its later keys
    assert autotrace.grad(autotrace.grad(filled_in_a_loop_then_read_by_items))(3.0) == \
        pytest.approx(18.0)
    # grad of grad of a comprehension written into: no temporary sharing the dict
    assert autotrace.grad(autotrace.grad(comprehension_then_written))(3.0) == \
        pytest.approx(18.0)
    assert autotrace.grad(autotrace.grad(list_comprehension_then_written))(3.0) == \
        pytest.approx(18.0)


# --- What is refused -----------------------------------------------------------------------

def changes_an_argument(params, x):
    params.update(b=x)
    return params["b"]


def changes_a_dict_from_a_call(x):
    d = scaled(x)
    d.setdefault("e", x)
    return d["e"]


def changes_a_shared_dict(x):
    d = {"a": x}
    alias = d
    d["a"] = x * x
    return alias["a"]


def changes_a_dict_in_a_list(x):
    d = {"a": x}
    held = [d]
    d.update(a=x * x)
    return held[0]["a"]


def changes_a_dict_a_loop_shares(x):
    d = {"a": x}
    held = []
    for i in range(2):
        d["a"] = d["a"] * x
        for j in range(2):
            held.append(d)
    return held[0]["a"]


def pops_inside_an_expression(x):
    d = {"a": x}
    return 2.0 * d.pop("a")


def pops_a_dict_from_a_call(x):
    d = scaled(x)
    value = d.pop("c")
    return value


def refusal(function, *args) -> str:
    with pytest.raises((TransformError, TypeError)) as caught:
        autotrace.grad(function, wrt=len(args) - 1)(*args)
    return str(caught.value)


def line_of(function, text: str) -> int:
    import inspect
    lines, first = inspect.getsourcelines(function)
    return first + next(i for i, line in enumerate(lines) if text in line)


def test_changes_autotrace_cannot_follow_are_refused_naming_the_line():
    here = __file__
    message = refusal(changes_an_argument, {"a": 1.0}, 2.0)
    assert message == (f'File "{here}", line {line_of(changes_an_argument, "update")}: the '
                       "function changes its argument 'params' in place (.update); work on a "
                       "copy, e.g. params = dict(params)")
    message = refusal(changes_a_dict_from_a_call, 2.0)
    assert message == (
        f'File "{here}", line {line_of(changes_a_dict_from_a_call, "setdefault")}: autotrace '
        "cannot differentiate d.setdefault(): it changes 'd' in place, and 'd' is not built "
        "here (autotrace follows changes to a dict the function builds itself, with a literal, "
        "a comprehension or dict(...)); change a copy with a name of its own, e.g. new = "
        "dict(d)")
    for function, shared, changed in [(changes_a_shared_dict, "alias = d", 'd["a"] ='),
                                      (changes_a_dict_in_a_list, "held = [d]", "update"),
                                      (changes_a_dict_a_loop_shares, "held.append(d)",
                                       'd["a"] =')]:
        assert refusal(function, 2.0) == (
            f'File "{here}", line {line_of(function, shared)}: the dict \'d\' is shared here, '
            f"and changed in place on line {line_of(function, changed)}: the change would "
            "reach the other holder, where autotrace cannot follow it; share a copy (dict(d)), "
            "or make the change a new dict")
    assert refusal(pops_inside_an_expression, 2.0) == (
        f'File "{here}", line {line_of(pops_inside_an_expression, "d.pop")}: autotrace follows '
        "d.pop(...) as a statement of its own, or assigned to a name (value = d.pop(...)); call "
        "it on its own line")
    assert refusal(pops_a_dict_from_a_call, 2.0) == (
        f'File "{here}", line {line_of(pops_a_dict_from_a_call, "d.pop")}: autotrace cannot '
        "differentiate d.pop(key) of a dict that the function does not build itself (with a "
        "literal, a comprehension or dict(...)); change a copy with a name of its own, e.g. "
        "new = dict(d)")


def with_an_unused_parameter(x, unused):
    d = {"a": x}
    d.update(b=x)
    return d["a"] * d["b"]


def test_a_parameter_never_named_is_no_dict_of_the_function():
    assert autotrace.grad(with_an_unused_parameter)(3.0, None) == pytest.approx(6.0)
