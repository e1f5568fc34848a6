"""autotrace.function and lists, dicts and dataclass objects passed as arguments.

A trace works on its own copy of each such argument, and its graph gives only the function's
result: changing one in place would change the caller's container eagerly, but not traced. The
change is refused, naming the argument, the change and the line; reading them, rebinding the
name and changing containers made inside the function still trace.
"""
import collections
import dataclasses
import functools
import re

import numpy as np
import pytest

import autotrace as at
from autotrace.runtime.tracing.tracer import ArgumentChangedError

HERE = re.escape(__file__)


def append_to_argument(x, values):
    values.append(x * 2.0)
    return np.sum(x)


def set_a_key(x, params):
    params["b"] = x * 3.0
    return np.sum(params["w"] * x)


def rebind_an_item(x, params):
    params["w"] = params["w"] * 2.0
    return np.sum(params["w"] * x)


def delete_a_key(x, params):
    del params["w"]
    return np.sum(x)


def extend_by_operator(x, values):
    values += [x]
    return np.sum(x)


def set_an_item_of_a_nested_list(x, batch):
    batch[1][0] = x
    return np.sum(x)


def sort_python_numbers(x, values):
    values.sort()
    return np.sum(x) * values[0]


@dataclasses.dataclass
class Params:
    w: np.ndarray
    steps: int = 0


def set_a_field(x, params):
    params.w = params.w - 0.1 * x
    return np.sum(params.w)


def count_in_a_field(x, params):
    params.steps += 1
    return np.sum(params.w * x)


def _line(function, text: str) -> int:
    import inspect
    lines, first = inspect.getsourcelines(function)
    return first + next(index for index, line in enumerate(lines) if text in line)


@pytest.mark.parametrize("function, argument, shown, change, kind, text", [
    (append_to_argument, lambda x: [x], "'values'", "adds items to it", "list",
     "values.append"),
    (set_a_key, lambda x: {"w": x}, "'params'", "sets its key 'b'", "dict", "params[\"b\"]"),
    (rebind_an_item, lambda x: {"w": x}, "'params'", "sets its key 'w'", "dict",
     "params[\"w\"] ="),
    (delete_a_key, lambda x: {"w": x}, "'params'", "deletes its key 'w'", "dict", "del params"),
    (extend_by_operator, lambda x: [x], "'values'", "adds items to it", "list", "+="),
    (set_an_item_of_a_nested_list, lambda x: [x, [x * 1.0, 1.0]], "'batch'[1]",
     "sets its item [0]", "list", "batch[1][0]"),
    (sort_python_numbers, lambda x: [3.0, 1.0, 2.0], "'values'", "sets its item [0]", "list",
     "values.sort"),
    (set_a_field, lambda x: Params(x * 1.0), "'params'", "sets its attribute w", "object",
     "params.w ="),
    (count_in_a_field, lambda x: Params(x * 1.0), "'params'", "sets its attribute steps",
     "object", "params.steps"),
])
def test_changing_a_container_argument_is_refused_and_loses_nothing(
        function, argument, shown, change, kind, text):
    x = np.linspace(0.5, 1.5, 3)
    container = argument(x)
    before = repr(container)
    with pytest.raises(ArgumentChangedError, match=(
            f"^the traced function changes argument {re.escape(shown)} in place "
            f"\\({re.escape(change)}\\): called eagerly, that changes the caller's {kind}, but "
            f"a traced call works on a copy of it, so the change would be lost. Make a new "
            f"{kind} and return it instead .*\n  File \"{HERE}\", line "
            f"{_line(function, text)}, in {function.__name__}")):
        at.function(function)(x, container)
    assert repr(container) == before  # the caller's container is as it was


def test_a_keyword_argument_and_an_item_of_star_args_are_named():
    def by_keyword(x, *, log):
        log.append(x)
        return x

    def star_args(x, *rest):
        rest[0]["k"] = x
        return x

    x = np.ones(2)
    with pytest.raises(ArgumentChangedError, match="changes argument 'log' in place"):
        at.function(by_keyword)(x, log=[])
    with pytest.raises(ArgumentChangedError, match=r"changes argument 'rest'\[0\] in place "
                                                   r"\(sets its key 'k'\)"):
        at.function(star_args)(x, {})


def read_and_rebind(x, values, params):
    values = values + [x * 2.0]  # a new list: the caller's is untouched
    params = {**params, "b": x}
    made = [x]
    made.append(values[-1] + params["w"])
    table = {"a": x}
    table["a"] = table["a"] * 3.0
    return np.sum(made[-1] * table["a"]) + len(values)


def test_reading_rebinding_and_changing_containers_made_inside_trace():
    x = np.linspace(0.5, 1.5, 3)
    values, params = [x], {"w": x * 2.0}
    traced = at.function(read_and_rebind)
    for _ in range(2):
        np.testing.assert_allclose(traced(x, values, params),
                                   read_and_rebind(x, values, params))
    assert len(values) == 1 and list(params) == ["w"]


def test_an_object_in_a_list_argument_keeps_its_state():
    class Layer:
        def __init__(self):
            self.w = np.ones(3)

    def step(x, layers):
        layers[0].w = layers[0].w - 0.5 * x
        return np.sum(layers[0].w)

    x = np.linspace(0.5, 1.5, 3)
    eager, traced = [Layer()], [Layer()]
    function = at.function(step)
    for _ in range(3):
        np.testing.assert_allclose(function(x, traced), step(x, eager))
        np.testing.assert_allclose(traced[0].w, eager[0].w)


def test_the_gradient_of_a_function_changing_a_list_argument_traces():
    # The derivative changes its own copy of the argument, eagerly and traced: the caller's
    # list stays as it was in both.
    def f(x, values):
        values.append(x * x)
        return np.sum(values[-1] * values[0])

    x = np.linspace(0.5, 1.5, 3)
    eager_values, traced_values = [x * 1.0], [x * 1.0]
    expected = at.grad(f)(x, eager_values)
    np.testing.assert_allclose(at.function(at.grad(f))(x, traced_values), expected)
    np.testing.assert_allclose(expected, 2.0 * x * x)
    assert len(eager_values) == 1 and len(traced_values) == 1


def test_a_list_of_pairs_is_compared_item_by_item_not_by_value():
    # Its items are tuples of traced values: telling whether it changed must not compare them
    # with ==, which gives a traced value.
    def total(x, pairs):
        return sum(np.sum(a * b) for a, b in pairs) * np.sum(x)

    def append_a_pair(x, pairs):
        pairs.append((x, x))
        return np.sum(x)

    x = np.linspace(0.5, 1.5, 3)
    pairs = [(x, x * 2.0), (x * 3.0, x)]
    np.testing.assert_allclose(at.function(total)(x, pairs), total(x, pairs))
    with pytest.raises(ArgumentChangedError, match="changes argument 'pairs' in place "
                                                   r"\(adds items to it\)"):
        at.function(append_a_pair)(x, pairs)
    assert len(pairs) == 2


@dataclasses.dataclass
class Doubling:
    a: np.ndarray

    def doubled(self):
        self.a = self.a + self.a
        return self


def sum_doubled(x, p):
    q = p.doubled()
    return np.sum(q.a * x)


def test_a_method_changing_a_dataclass_argument_is_refused_at_the_call_in_the_gradient():
    x = np.ones(3)
    p = Doubling(np.arange(3.0))
    np.testing.assert_allclose(at.grad(sum_doubled)(x, p), [0.0, 2.0, 4.0])
    np.testing.assert_allclose(p.a, [0.0, 2.0, 4.0])  # changed eagerly, as NumPy's call does
    with pytest.raises(ArgumentChangedError, match=(
            "changes argument 'p' in place \\(sets its attribute a\\).*\n  File "
            f"\"{HERE}\", line {_line(sum_doubled, 'p.doubled()')}\n    q = p.doubled\\(\\)")):
        at.function(at.grad(sum_doubled))(x, Doubling(np.arange(3.0)))


def change_in_a_traced_if(x, params):
    if np.sum(x) > 0.0:  # traced: a graph's branch, which works on copies of its variables
        params["w"] = params["w"] * 2.0
    return np.sum(params["w"])


def append_in_a_traced_loop(x, values):
    i = 0
    while i < np.sum(x):  # traced
        values[0] = values[0] + 1.0
        i += 1
    return np.sum(x)


@pytest.mark.parametrize("function, text, change", [
    (change_in_a_traced_if, 'params["w"] =', "sets its key 'w'"),
    (append_in_a_traced_loop, "values[0] =", "sets its item [0]"),
])
def test_a_change_in_a_traced_if_or_loop_is_refused(function, text, change):
    # The statement's body changed its own copy, and the change was lost with no error
    x = np.linspace(0.5, 1.5, 3)
    container = {"w": x} if function is change_in_a_traced_if else [x]
    with pytest.raises(ArgumentChangedError, match=(
            f"in place \\({re.escape(change)}\\).*\n  File \"{HERE}\", line "
            f"{_line(function, text)}")):
        at.function(function)(x, container)


class Pair:
    def __init__(self, a, b):
        self.a, self.b = a, b


at.tree_util.register_pytree_node(Pair, lambda pair: ((pair.a, pair.b), None),
                                  lambda aux, children: Pair(*children))


class Tagged(list):
    pass


class Tracked(dict):
    """A dict whose attributes a trace's copy of it shares with it (containers.rebuild)."""

    def __init__(self, *args):
        super().__init__(*args)
        self.history = []


def set_a_registered_nodes_attribute(x, pair):
    pair.a = pair.a * 2.0
    return np.sum(pair.a)


def tag_a_list(x, values):
    values.tag = "seen"
    return np.sum(values[0] * x)


def append_to_a_list_a_dict_holds(x, tracked):
    tracked.history.append(x)
    return np.sum(tracked["w"] * x)


@pytest.mark.parametrize("function, argument, shown, change", [
    (set_a_registered_nodes_attribute, lambda x: Pair(x, x), "'pair'", "sets its attribute a"),
    (tag_a_list, lambda x: Tagged([x]), "'values'", "sets its attribute tag"),
    (append_to_a_list_a_dict_holds, lambda x: Tracked({"w": x}), "'tracked'.history",
     "adds items to it"),
])
def test_changes_to_registered_nodes_list_attributes_and_shared_lists_are_refused(
        function, argument, shown, change):
    x = np.linspace(0.5, 1.5, 3)
    given = argument(x)
    with pytest.raises(ArgumentChangedError, match=(
            f"changes argument {re.escape(shown)} in place \\({re.escape(change)}\\)")):
        at.function(function)(x, given)
    assert not getattr(given, "history", [])  # no traced value left in the caller's list


@dataclasses.dataclass
class Cached:
    w: np.ndarray

    @functools.cached_property
    def total(self):
        return np.sum(self.w)


def test_a_cached_property_read_on_the_copy_traces():
    x = np.linspace(0.5, 1.5, 3)
    read_cached = at.function(lambda x, p: p.total * np.sum(x))
    np.testing.assert_allclose(read_cached(x, Cached(x * 2.0)), np.sum(x * 2.0) * np.sum(x))


def test_a_falsy_callable_object_keeps_its_arguments_protected():
    class Sequence:
        def __init__(self):
            self.layers = []

        def __len__(self):
            return len(self.layers)

        def __call__(self, x, values):
            values.append(x)
            return np.sum(x)

    x = np.ones(3)
    with pytest.raises(ArgumentChangedError, match="changes argument 'values' in place"):
        at.function(Sequence())(x, [x])


def test_the_line_named_is_one_making_the_change_found():
    def keep_ten(x, history):
        if len(history) > 10:
            history.pop(0)
        history.append(x)
        return np.sum(x)

    def helper(values, x):
        values.extend([x])

    def through_a_helper(x, values):
        n = len(values)
        helper(values, x)
        return np.sum(x) * n

    x = np.ones(3)
    for function, text in ((keep_ten, "history.append"), (through_a_helper, "helper(values")):
        with pytest.raises(ArgumentChangedError, match=(
                f"\n  File \"{HERE}\", line {_line(function, text)}, in {function.__name__}")):
            at.function(function)(x, [x])


def test_a_gradient_built_from_a_trace_changes_its_own_copy_as_from_source():
    # A function typed at a prompt (no source): its derivative is built from a trace, which
    # leaves the caller's list as it was, as the derivative from source does
    namespace = {"np": np}
    exec("def f(x, values):\n    values.append(x * x)\n"
         "    return np.sum(values[-1] * values[0])\n", namespace)
    x = np.linspace(0.5, 1.5, 3)
    values = [x * 1.0]
    with pytest.warns(at.TracedSourceWarning):
        gradient = at.grad(namespace["f"])(x, values)
    np.testing.assert_allclose(gradient, 2.0 * x * x)
    assert len(values) == 1


def test_a_deleted_field_is_named_deleted():
    def forget(x, params):
        del params.w
        return np.sum(x)

    with pytest.raises(ArgumentChangedError, match=r"\(deletes its attribute w\)"):
        at.function(forget)(np.ones(3), Params(np.ones(3)))


@dataclasses.dataclass
class Layer:
    w: np.ndarray
    cache: list


def change_objects_in_a_list_under_a_traced_if(x):
    layers = [Layer(x * 1.0, [x * 2.0])]
    first = layers[0]
    if np.sum(x) > 0.0:
        layers[0].w = x * 3.0
        layers[0].cache[0] = x * 4.0
    return np.sum(first.w) + np.sum(first.cache[0]) + np.sum(layers[0].w)


def change_objects_in_a_list_in_a_traced_loop(x):
    layers = [Layer(x * 1.0, [x * 2.0])]
    first = layers[0]
    i = 0
    while i < np.sum(x):  # traced
        layers[0].w = layers[0].w + 1.0
        layers[0].cache[0] = layers[0].cache[0] * 2.0
        i += 1
    return np.sum(first.w) + np.sum(first.cache[0]) + np.sum(layers[0].w)


def change_a_list_a_dataclass_argument_holds_under_a_traced_if(x, layers):
    if np.sum(x) > 0.0:
        layers[0].cache[0] = x * 2.0
    return np.sum(layers[0].cache[0])


def test_a_traced_if_or_loop_changing_dataclass_objects_in_a_list_changes_them_in_place():
    # The statement changed its own copies of the objects, and `first`, which holds the object
    # the list holds, kept the old fields (36.0 for 60.0, 26.0 for 143.0 here)
    x = np.array([1.0, 2.0, 0.5])
    for changes in (change_objects_in_a_list_under_a_traced_if,
                    change_objects_in_a_list_in_a_traced_loop):
        traced = at.function(changes)
        for point in (x, -x):
            assert traced(point) == pytest.approx(changes(point))
    function = change_a_list_a_dataclass_argument_holds_under_a_traced_if
    with pytest.raises(ArgumentChangedError, match=(
            r"changes argument 'layers'\[0\].cache in place \(sets its item \[0\]\).*\n  File "
            f"\"{HERE}\", line {_line(function, 'layers[0].cache[0] =')}")):
        at.function(function)(x, [Layer(x, [x])])


@dataclasses.dataclass
class Scaled:
    w: np.ndarray
    scale: float = 2.0

    def __post_init__(self):  # attributes beside the fields
        self.n = self.w.shape[0]
        self.w2 = self.w * self.scale


def mean_of_scaled(x, p):
    return np.sum(p.w2 * x) / p.n


def scaled_of(x, p):
    return Scaled(p.w * x, p.scale)


def test_attributes_a_dataclass_sets_beside_its_fields_are_traced_as_its_fields():
    traced = at.function(mean_of_scaled)
    x = np.array([1.0, 2.0, 3.0])
    w = np.array([0.5, 1.0, 2.0])
    # w2 is an input (another array, the same trace); n and scale are fixed in the trace
    for p, count in [(Scaled(w), 1), (Scaled(w + 1.0), 1), (Scaled(w, 3.0), 2)]:
        assert traced(x, p) == pytest.approx(np.sum(p.w * p.scale * x) / 3)
        assert traced.trace_count == count
    np.testing.assert_allclose(at.function(at.grad(mean_of_scaled))(x, Scaled(w)),
                               w * 2.0 / 3)
    made = at.function(scaled_of)(x, Scaled(w))
    assert type(made) is Scaled and made.n == 3
    np.testing.assert_allclose(made.w2, w * x * 2.0)
    np.testing.assert_allclose(at.vmap(mean_of_scaled, in_axes=(0, None))(
        np.stack([x, 2 * x]), Scaled(w)), [np.sum(w * 2 * x) / 3, np.sum(w * 4 * x) / 3])


def append_to_a_deque(x, history):
    history.append(x * 2.0)
    return np.sum(x)


def add_to_a_set(x, seen):
    seen.add(len(seen))
    return np.sum(x)


def test_a_deque_or_set_argument_changed_in_place_is_refused_and_kept_as_it_was():
    # passed as it is, not copied: the change would happen once, while tracing (the deque
    # keeping a traced value), and never on the calls the trace serves
    history, seen = collections.deque([1.0]), {7}
    for function, argument, kind, instead in [
            (append_to_a_deque, history, "deque", "a copy, collections.deque(history)"),
            (add_to_a_set, seen, "set", "new = seen | {...} or a copy, set(seen)")]:
        name = "history" if kind == "deque" else "seen"
        with pytest.raises(ArgumentChangedError, match=re.escape(
                f"the traced function changes argument {name!r} in place (adds items to it): "
                f"called eagerly, that changes the caller's {kind}, but a traced call makes "
                f"the change once, while it traces, and never on the calls the trace serves. "
                f"Make a new {kind} and return it instead ({instead})")):
            at.function(function)(np.ones(3), argument)
    assert list(history) == [1.0] and seen == {7}


@dataclasses.dataclass
class Signed:
    w: np.ndarray

    def __post_init__(self):  # the same attributes, set in another order
        if self.w[0] > 0:
            self.a, self.b = 1.0, 2.0
        else:
            self.b, self.a = 1.0, 2.0


@dataclasses.dataclass
class Node:
    w: np.ndarray
    children: list = dataclasses.field(default_factory=list)

    def __post_init__(self):  # what it holds beside its fields: kept as it is, by identity
        self.parent, self.history = None, [float(i) for i in range(50)]
        for child in self.children:
            child.parent = self


def weighted_by_signed(x, q):
    return np.sum(x * q.w) * q.a + q.b


def sum_of_nodes(x, node):
    return np.sum(node.w * x) + sum(np.sum(child.w * x) for child in node.children)


def test_a_dataclass_is_keyed_by_the_names_of_its_attributes_and_holds_references_as_they_are():
    x = np.array([1.0, 2.0, 3.0])
    traced = at.function(weighted_by_signed)
    for q in (Signed(np.ones(3)), Signed(-np.ones(3))):  # 8.0, then -11.0
        assert traced(x, q) == pytest.approx(weighted_by_signed(x, q))
    assert traced.trace_count == 2
    root = Node(x, [Node(2 * x), Node(3 * x)])  # children refer back to it
    summed = at.function(sum_of_nodes)
    assert summed(x, root) == pytest.approx(sum_of_nodes(x, root))
    np.testing.assert_allclose(at.function(at.grad(sum_of_nodes))(x, root), 6.0 * x)
    root.history.append(1.0)  # what it holds is keyed by value: a new trace, the same value
    assert summed(x, root) == pytest.approx(84.0) and summed.trace_count == 2


def has_a(x, flags):
    return np.sum(x) * (2.0 if "a" in flags else 1.0)


def first_times(x, values):
    return np.sum(x * values[0])


def test_sets_and_deques_are_keyed_by_what_they_hold_and_deques_of_arrays_refused():
    x, flags = np.ones(3), {"a", "b"}
    traced = at.function(has_a)
    assert traced(x, flags) == 6.0
    flags.discard("a")
    assert traced(x, flags) == 3.0 and traced.trace_count == 2
    values = collections.deque([2.0])
    times = at.function(first_times)
    assert times(x, values) == 6.0
    values[0] = 5.0
    assert times(x, values) == 15.0
    with pytest.raises(TypeError, match=re.escape(
            "an argument holds an array where a trace keeps values as they are: in a set or a "
            "deque")):
        at.function(first_times)(x, collections.deque([x * 2.0]))
    # NumPy numbers are taken by value; sets by their items in order, numbers by their text
    assert at.function(first_times)(x, collections.deque([np.float64(2.0)])) == 6.0
    first_item = at.function(lambda x, items: x[next(iter(items))])
    assert [first_item(np.arange(10.0), items) for items in ({1, 9}, {9, 1})] == [
        first_item.python_function(np.arange(10.0), items) for items in ({1, 9}, {9, 1})]
    signed = at.function(lambda x, items: np.arctan2(x * min(items), -1.0))
    assert [signed(1.0, {zero}) for zero in (0.0, -0.0)] == [np.pi, -np.pi]


@dataclasses.dataclass
class Labelled:
    w: np.ndarray

    def __post_init__(self):  # a dict, and a tuple back to itself, beside its fields
        self.meta, self.me = {"kind": "batch"}, (self,)


@dataclasses.dataclass
class Tracking:
    w: np.ndarray

    def __post_init__(self):
        self.stats = Running()


class Running:
    def __init__(self):
        self.mean = np.zeros(3)


def tracks_a_mean(x, tracking):
    tracking.stats.mean = 0.9 * tracking.stats.mean + 0.1 * x
    return np.sum(tracking.w * x)


def test_what_a_dataclass_keeps_beside_its_fields_is_keyed_by_value_and_followed():
    x = np.array([1.0, 2.0, 3.0])
    traced = at.function(lambda w, batch: np.sum(w * batch.w) + len(batch.meta["kind"]))
    batch = Labelled(x)
    for scale in (1.0, 2.0, 3.0):  # new weights in the one object: one trace
        batch.w = scale * x
        assert traced(x, batch) == pytest.approx(scale * 14.0 + 5.0)
    batch.meta["kind"] = "test"  # read as it is now: a new trace
    assert traced(x, batch) == pytest.approx(42.0 + 4.0) and traced.trace_count == 2
    # an object it holds is state, written as the Python function writes it
    tracking, eager = Tracking(np.ones(3)), Tracking(np.ones(3))
    step = at.function(tracks_a_mean)
    for scale in (1.0, 2.0, 3.0):
        assert step(scale * x, tracking) == tracks_a_mean(scale * x, eager)
    np.testing.assert_allclose(tracking.stats.mean, eager.stats.mean)


@dataclasses.dataclass
class Summed:
    w: np.ndarray

    def __post_init__(self):
        self.history = [np.sum(self.w)]


def test_a_dataclass_made_in_a_trace_holding_a_traced_value_beside_its_fields_is_refused():
    with pytest.raises(TypeError, match=re.escape(
            "an object of class Summed holds a traced value in its attribute 'history', a "
            "list set beside its fields")):
        at.function(lambda x: Summed(x * 2.0))(np.ones(3))


def first_value_times(x, params):
    return x * list(params.values())[0]


def test_a_dict_in_another_order_is_another_trace():
    # its arrays are inputs by sorted key, but iterating it reads its own order
    x = np.array([1.0, 2.0, 3.0])
    traced = at.function(first_value_times)
    for params in ({"a": 1.0, "b": 2.0}, {"b": 2.0, "a": 1.0}, {"a": x, "b": 2.0 * x},
                   {"b": 2.0 * x, "a": x}):
        np.testing.assert_array_equal(traced(x, params), first_value_times(x, params))
    assert traced.trace_count == 4


@dataclasses.dataclass
class Noted:
    w: np.ndarray

    def __post_init__(self):
        self.notes, self.count = {}, 2


def test_each_call_returns_a_dataclass_with_containers_of_its_own():
    made = at.function(lambda x: Noted(x * 2.0))
    first = made(np.ones(2))
    first.notes["seen"] = True  # the Python function makes a new dict on each call
    second = made(np.ones(2))
    assert second.notes == {} and second.count == 2 and second.notes is not first.notes
    np.testing.assert_array_equal(second.w, [2.0, 2.0])
