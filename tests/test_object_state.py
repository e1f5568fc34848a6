"""The state of objects in differentiated code: objects replaced field by field
(`dataclasses.replace`, a namedtuple's `_replace`), and methods or functions that change the
attributes of an object. Each is checked against central differences in every mode (grad,
value_and_grad, vjp, the traced gradient, forward mode, jvp and the gradient of the gradient),
or refused at the user's line: never a zero gradient."""
import collections
import dataclasses
import inspect
import os

import numpy as np
import pytest

import autotrace
from autotrace import TransformError, d
from tests.numeric import central_difference, check_every_mode

THIS_FILE = os.path.abspath(__file__)
X = np.array([0.3, -0.7, 1.1])


def line_of(marker: str) -> int:
    """The line of this file where `marker` is."""
    lines = open(THIS_FILE).read().splitlines()
    return next(number for number, line in enumerate(lines, 1) if marker in line)


# 1. dataclasses.replace and a namedtuple's _replace build a new object from kept fields and
#    given ones (replace crashed in generated code; _replace was refused naming
#    collections/__init__.py).

@dataclasses.dataclass
class Layer:
    w: np.ndarray
    b: float
    scale: float = 2.0


@dataclasses.dataclass(frozen=True)
class FrozenLayer:
    w: np.ndarray
    b: float
    steps: int = dataclasses.field(default=0, init=False)


Point = collections.namedtuple("Point", "w b")


def replace_built_dataclass(x):
    layer = Layer(x * 2.0, x[0])
    changed = dataclasses.replace(layer, w=np.sin(layer.w) * x, scale=x[1])
    return np.sum(changed.w) * changed.b + changed.scale * layer.b


def replace_frozen_dataclass(x):
    layer = FrozenLayer(np.cos(x), x[2])
    changed = dataclasses.replace(layer, b=layer.b * x[0])
    return np.sum(changed.w * x) + changed.b ** 2


def replace_namedtuple(x):
    point = Point(x * 3.0, x[1])
    moved = point._replace(b=point.b * np.sum(x))
    again = moved._replace(w=moved.w ** 2)
    return np.sum(again.w) * again.b + point.b


def test_replace_of_a_dataclass_or_namedtuple_the_function_builds():
    for f in (replace_built_dataclass, replace_frozen_dataclass, replace_namedtuple):
        check_every_mode(f, X)


def test_replace_of_a_dataclass_or_namedtuple_passed_in():
    def of_dataclass(layer, x):
        changed = dataclasses.replace(layer, b=layer.b * x[0])
        return np.sum(changed.w * x) * changed.b

    def of_namedtuple(point, x):
        changed = point._replace(w=point.w * x)
        return np.sum(changed.w) * changed.b

    w = np.array([0.5, -1.5, 2.0])
    # d/dw sum(w x) b x0 = x b x0; d/db = sum(w x) x0; d/dx by differences.
    gradient = autotrace.grad(of_dataclass)(Layer(w, 1.5), X)
    assert type(gradient) is Layer
    np.testing.assert_allclose(gradient.w, X * 1.5 * X[0])
    assert gradient.b == pytest.approx(np.sum(w * X) * X[0])
    assert gradient.scale == 0.0
    np.testing.assert_allclose(autotrace.grad(of_dataclass, wrt=1)(Layer(w, 1.5), X),
                               central_difference(lambda x: of_dataclass(Layer(w, 1.5), x), X),
                               rtol=1e-6)
    check_every_mode(lambda x: of_dataclass(Layer(w * x[1], 1.5), x), X)
    gradient = autotrace.grad(of_namedtuple)(Point(w, 1.5), X)
    assert type(gradient) is Point
    np.testing.assert_allclose(gradient.w, X * 1.5)
    assert gradient.b == pytest.approx(np.sum(w * X))
    check_every_mode(lambda x: of_namedtuple(Point(w * x[1], x[2]), x), X)


@dataclasses.dataclass
class Checked:
    w: float

    def __post_init__(self):
        self.w = self.w * 2.0


def test_replace_keeps_pythons_errors_and_refuses_post_init():
    def bad_field(x):
        return dataclasses.replace(Layer(x, 1.0), v=x).b

    def bad_namedtuple_field(x):
        return Point(x, 1.0)._replace(v=x).b

    def post_init(x):
        return dataclasses.replace(Checked(1.0), w=x).w  # replace of a post_init class

    with pytest.raises(TypeError, match="unexpected keyword argument 'v'"):
        autotrace.grad(bad_field)(1.0)
    with pytest.raises(ValueError, match=r"Got unexpected field names: \['v'\]"):
        autotrace.grad(bad_namedtuple_field)(1.0)
    with pytest.raises(TypeError, match="autotrace cannot differentiate dataclasses.replace on "
                                        "a Checked .* it runs Checked's __post_init__") as error:
        autotrace.grad(post_init)(1.0)
    assert f"{THIS_FILE}, line {inspect.getsourcelines(Checked)[1]}" in str(error.value)


# 2. Methods and functions that change an object's attributes to values that carry gradient
#    (the gradient through them was silently 0 in every mode): refused at the call's line,
#    naming the write; in every mode, whether or not the object carries gradient itself.

class Accumulator:
    def __init__(self, total=0.0):
        self.total = total
        self.calls = 0

    def add(self, v):
        self.total = self.total + v  # write: add

    def add_in_place(self, v):
        self.total += v  # write: add_in_place

    def add_through(self, v):
        self.record(v * 2.0)

    def record(self, v):
        self.total = v + self.total  # write: record

    def count(self, v):
        self.calls += 1  # (no gradient: allowed)
        return v

    def added(self, v):
        return Accumulator(self.total + v)  # (a new object, returned)

    def add_and_return_self(self, v):
        self.total = self.total + v  # write: add_and_return_self
        return self


class Buffer:
    def __init__(self, n):
        self.values = np.zeros(n)
        self.items = []

    def store(self, i, v):
        self.values[i] = v  # write: store

    def keep(self, v):
        self.items.append(v)  # write: keep


def bump(accumulator, v):
    accumulator.total = accumulator.total + v  # write: bump


def summed(x):
    accumulator = Accumulator()
    for i in range(3):
        accumulator.add(x * i)  # call: summed
    return np.sum(accumulator.total)


def summed_in_place(x):
    accumulator = Accumulator()
    for i in range(3):
        accumulator.add_in_place(x * i)  # call: summed_in_place
    return np.sum(accumulator.total)


def result_unused(x):
    accumulator = Accumulator()
    ignored = accumulator.add(x * 2.0)  # noqa: F841 (call: result_unused)
    return np.sum(accumulator.total)


def through_a_helper(x):
    accumulator = Accumulator()
    bump(accumulator, x * 3.0)  # call: through_a_helper
    return np.sum(accumulator.total)


def through_another_method(x):
    accumulator = Accumulator()
    accumulator.add_through(x)  # call: through_another_method
    return np.sum(accumulator.total)


def two_objects(x):
    first, second = Accumulator(), Accumulator()
    second.add(x * 2.0)  # call: two_objects
    first.add(second.total)
    return np.sum(first.total * second.total)


def array_attribute(x):
    buffer = Buffer(3)
    for i in range(3):
        buffer.store(i, x[i] * x[0])  # call: array_attribute
    return np.sum(buffer.values)


def list_attribute(x):
    buffer = Buffer(3)
    buffer.keep(x * 2.0)  # call: list_attribute
    return np.sum(buffer.items[0])


class Running:
    def __init__(self):
        self.mean = 0.0

    def __call__(self, v):
        self.mean = 0.9 * self.mean + 0.1 * v  # write: Running


GLOBAL_ACCUMULATOR = Accumulator()
GLOBAL_RUNNING = Running()


def on_a_global_object(x):
    GLOBAL_ACCUMULATOR.add(x * 2.0)  # call: on_a_global_object
    return np.sum(GLOBAL_ACCUMULATOR.total)


def callable_object(x):
    running = Running()
    running(x)  # call: callable_object
    return np.sum(running.mean)


def global_callable_object(x):
    GLOBAL_RUNNING(x)  # call: global_callable_object
    return np.sum(GLOBAL_RUNNING.mean)


def carried_in(accumulator, x):
    accumulator.add(x * 2.0)  # call: carried_in
    return np.sum(accumulator.total)


STATE_WRITES = [
    (summed, "call: summed", "Accumulator.add", "self.total = ...", "write: add"),
    (summed_in_place, "call: summed_in_place", "Accumulator.add_in_place", "self.total += ...",
     "write: add_in_place"),
    (result_unused, "call: result_unused", "Accumulator.add", "self.total = ...",
     "write: add"),
    (through_a_helper, "call: through_a_helper", "bump", "accumulator.total = ...",
     "write: bump"),
    (through_another_method, "call: through_another_method", "Accumulator.add_through",
     "self.total = ...", "write: record"),
    (two_objects, "call: two_objects", "Accumulator.add", "self.total = ...", "write: add"),
    (array_attribute, "call: array_attribute", "Buffer.store", "self.values[i] = ...",
     "write: store"),
    (list_attribute, "call: list_attribute", "Buffer.keep", "self.items.append(...)",
     "write: keep"),
    (callable_object, "call: callable_object", "Running.__call__", "self.mean = ...",
     "write: Running"),
]


def every_mode(f, *args):
    """Each mode's derivative of f at args, not yet run."""
    direction = tuple(np.ones_like(a) for a in args)
    wrt = len(args) - 1

    def directional(*point):
        return np.sum(autotrace.grad(f, wrt=wrt)(*point))
    return {
        "grad": lambda: autotrace.grad(f, wrt=wrt)(*args),
        "value_and_grad": lambda: autotrace.value_and_grad(f, wrt=wrt)(*args),
        "vjp": lambda: autotrace.vjp(f, *args)[1](1.0),
        "traced grad": lambda: autotrace.function(autotrace.grad(f, wrt=wrt))(*args),
        "forward": lambda: autotrace.forward(f, wrt=wrt)(*args),
        "jvp": lambda: autotrace.jvp(f, args, direction),
        "grad of grad": lambda: autotrace.grad(directional, wrt=wrt)(*args),
    }


@pytest.mark.parametrize("f, call, callee, write, write_marker", STATE_WRITES,
                         ids=[case[0].__name__ for case in STATE_WRITES])
def test_a_call_that_changes_an_attribute_to_a_value_with_gradient_is_refused(
        f, call, callee, write, write_marker):
    for mode, run in every_mode(f, X).items():
        with pytest.raises(TransformError) as caught:
            run()
        error = caught.value
        assert (os.path.abspath(error.filename), error.lineno) == (THIS_FILE, line_of(call)), \
            mode
        assert f"cannot differentiate this call of {callee}: it changes an attribute of " \
               in error.message, mode
        assert f"({write}, {THIS_FILE}, line {line_of(write_marker)}) to a value that " \
               "carries gradient" in error.message, mode
        assert "return the new value (or a new object) from the function instead" in \
            error.message


def _effect_followed_in_every_mode(function, reset, written, slope):
    """`function`'s gradient in every mode, against central differences of it from the
    state `reset()` makes (`slope` everywhere); `written()`: the state after a derivative of a
    derivative, which must have written it once."""
    def fresh(x):
        reset()
        return function(x)
    expected = central_difference(fresh, X)
    np.testing.assert_allclose(expected, np.full_like(X, slope), rtol=1e-7)
    modes = every_mode(function, X)
    for mode in ("grad", "traced grad"):
        np.testing.assert_allclose(modes[mode](), expected, rtol=1e-7)
    np.testing.assert_allclose(modes["value_and_grad"]()[1], expected, rtol=1e-7)
    np.testing.assert_allclose(modes["vjp"]()[0], expected, rtol=1e-7)
    for mode in ("forward", "jvp"):
        assert modes[mode]()[1] == pytest.approx(np.sum(expected), rel=1e-7)
    reset()
    np.testing.assert_allclose(modes["grad of grad"](), np.zeros_like(X), atol=1e-12)
    np.testing.assert_allclose(written(), slope * X, rtol=1e-12)


def test_a_method_called_for_its_effect_on_a_global_object_is_followed():
    # The object carries gradient (the method writes its argument into it): the call is
    # differentiated with respect to it, and the caller's read of what it wrote passes its
    # gradient back through the write, in every mode. A derivative of a derivative runs the
    # call first as a derivative, noting its write, and again from the state before it: the
    # total moves once.
    def reset():
        GLOBAL_ACCUMULATOR.total = 0.0
    _effect_followed_in_every_mode(on_a_global_object, reset,
                                   lambda: GLOBAL_ACCUMULATOR.total, 2.0)


def test_a_global_callable_object_called_for_its_effect_is_followed():
    # `GLOBAL_RUNNING(x)` runs Running.__call__ as `GLOBAL_RUNNING.__call__(x)` would: the
    # object carries gradient, and the caller's read of what the call wrote passes its gradient
    # back through the write, as for a method of a global object called by name (above).
    def reset():
        GLOBAL_RUNNING.mean = 0.0
    _effect_followed_in_every_mode(global_callable_object, reset,
                                   lambda: GLOBAL_RUNNING.mean, 0.1)


def test_an_object_passed_in_changed_by_its_method_is_refused():
    for mode, run in every_mode(carried_in, Accumulator(), X).items():
        with pytest.raises(TransformError) as caught:
            run()
        assert caught.value.lineno == line_of("call: carried_in"), mode
        assert "cannot differentiate this call of Accumulator.add: it changes an attribute" \
            in caught.value.message, mode


def returning_self(x):
    accumulator = Accumulator()
    accumulator = accumulator.add_and_return_self(x).add_and_return_self(x * 2.0)
    return np.sum(accumulator.total)


def test_a_method_that_changes_its_object_and_returns_it():
    # Its result, the object itself, carries gradient: its write into the object's state is
    # followed in reverse mode, the gradient reaching it through the object it returns, and in
    # forward mode, where the method changes its object's tangent in place. A derivative of a
    # derivative runs the method again from the state its first run saw: the sum's gradient
    # is constant, so its gradient is zero.
    expected = np.full_like(X, 3.0)
    np.testing.assert_allclose(central_difference(returning_self, X), expected, rtol=1e-7)
    modes = every_mode(returning_self, X)
    np.testing.assert_allclose(modes["grad"](), expected, rtol=1e-12)
    np.testing.assert_allclose(modes["value_and_grad"]()[1], expected, rtol=1e-12)
    np.testing.assert_allclose(modes["vjp"]()[0], expected, rtol=1e-12)
    np.testing.assert_allclose(modes["traced grad"](), expected, rtol=1e-12)
    assert modes["forward"]()[1] == pytest.approx(np.sum(expected), rel=1e-12)
    assert modes["jvp"]()[1] == pytest.approx(np.sum(expected), rel=1e-12)
    np.testing.assert_array_equal(modes["grad of grad"](), np.zeros_like(X))


class Holding:
    def __init__(self):
        self.items = []
        self.values = np.zeros(3)

    def push(self, v):
        self.items.append(v)  # write: push
        return v * 2.0

    def place(self, v):
        values = self.values
        values[0] = v[0]  # write: place
        return v * 2.0

    def set_named(self, v):
        setattr(self, "total", v)  # write: set_named
        return v * 2.0


def pushed_and_returned(x):
    holding = Holding()
    y = holding.push(x * 1.5)
    return np.sum(y) + np.sum(holding.items[0] * x)


def placed_and_returned(x):
    holding = Holding()
    y = holding.place(x * 1.5)
    return np.sum(y) + np.sum(holding.values * x)


def set_by_name(x):
    holding = Holding()
    y = holding.set_named(x * 1.5)
    return np.sum(y) + np.sum(holding.total * x)


def appended_in_the_function(x):
    holding = Holding()
    holding.items.append(x * 2.0)  # write: appended_in_the_function
    return np.sum(holding.items[0])


# (A write into state held by an object the method was given, the function's own or not, is
# refused where the value written carries gradient: transforms/analysis/given_state_writes.py.)
UNSEEN_MESSAGE = ("autotrace cannot differentiate {what}, a write into the state of the "
                  "argument 'self': it writes a value that carries gradient, in a function "
                  "called by the differentiated one, which does not differentiate it with "
                  "respect to 'self'")

WRITES_INTO_ATTRIBUTES = [
    (pushed_and_returned, "write: push", "self.items.append(...)", None),
    (placed_and_returned, "write: place", "values[0] = ...", "self"),
    (set_by_name, "write: set_named", "setattr(self, 'total', v)", "self"),
    (appended_in_the_function, "write: appended_in_the_function",
     "holding.items.append(...)", "holding"),
]


@pytest.mark.parametrize("f, marker, what, owner", WRITES_INTO_ATTRIBUTES,
                         ids=[case[0].__name__ for case in WRITES_INTO_ATTRIBUTES])
def test_a_write_into_what_an_attribute_holds_is_refused_at_its_line(f, marker, what, owner):
    # The method's result carries gradient, so the method is differentiated: the list or array
    # an attribute holds, changed there, was silently left out of the gradient.
    for mode, run in every_mode(f, X).items():
        if f is placed_and_returned and mode == "traced grad":
            # Traced, the call runs first and writes a traced value into the NumPy array the
            # object holds, which NumPy refuses (writes into arrays made outside the traced
            # function are another matter than the object's state).
            continue
        with pytest.raises(TransformError) as caught:
            run()
        error = caught.value
        assert (os.path.abspath(error.filename), error.lineno) == (THIS_FILE, line_of(marker)), \
            mode
        expected = (UNSEEN_MESSAGE.format(what=what) if owner is None else
                    f"autotrace cannot differentiate {what}: it changes an attribute of "
                    f"{owner!r} (or what one holds) to a value that carries gradient")
        assert error.message.startswith(expected), mode


def test_calls_that_change_no_attribute_to_a_value_with_gradient_are_followed():
    def counted(x):
        accumulator = Accumulator()
        accumulator.count(x)  # changes calls, a number no gradient reaches
        accumulator.count(x * 2.0)
        return np.sum(2.0 * x * x) + accumulator.calls

    def functional(x):
        accumulator = Accumulator()
        for i in range(3):
            accumulator = accumulator.added(x * i)
        return np.sum(accumulator.total * x)

    def method_returning_self(x):
        # A new object with the new total (the method the refusal asks for).
        first = Accumulator().added(x)
        return np.sum(first.added(x * 2.0).added(np.sin(x)).total ** 2)

    # d/dx sum(2x * x) = 4x; d/dx sum((0 + x + 2x) x) = 6x.
    np.testing.assert_allclose(autotrace.grad(counted)(X), 4.0 * X)
    np.testing.assert_allclose(autotrace.grad(functional)(X), 6.0 * X)
    for f in (counted, functional, method_returning_self):
        check_every_mode(f, X)


# 5. A call that writes into a list or array it is given (an out-parameter), where the caller
#    reads it back: a method of an object passed in, found only when the call runs, and a call
#    whose list the same statement reads (`return out, fill(t, out)`). Each gave zeros, or an
#    IndexError in generated code.

class Filler:
    def put_into(self, t, out):
        out.append(t * 2.0)  # (appended)

    def write_into(self, t, out):
        out[:] = t * 2.0  # (written)


def appended_by_a_method_passed_in(filler, x):
    out = []
    filler.put_into(x, out)  # (method call)
    return np.sum(out[0] * x)


def written_by_a_method_passed_in(filler, x):
    out = np.zeros(3)
    filler.write_into(x, out)  # (array method call)
    return np.sum(out * x)


def _fill(t, out):
    out.append(t[0] * 2.0)  # (fill appends)
    return len(out)


def _collect(t):
    out = []
    return out, _fill(t, out)  # (read in the same statement)


def collected(x):
    leaves, count = _collect((x, x * 3.0))
    return np.sum(leaves[0]) * count


@pytest.mark.parametrize("f, call, callee, parameter, write, write_marker", [
    (appended_by_a_method_passed_in, "(method call)", "Filler.put_into", "out",
     "out.append(...)", "(appended)"),
    (written_by_a_method_passed_in, "(array method call)", "Filler.write_into", "out",
     "out[:] = ...", "(written)")])
def test_a_method_found_when_it_runs_that_writes_into_its_argument_is_refused(
        f, call, callee, parameter, write, write_marker):
    for mode, run in every_mode(f, Filler(), X).items():
        with pytest.raises(TransformError) as caught:
            run()
        error = caught.value
        assert (os.path.abspath(error.filename), error.lineno) == (THIS_FILE, line_of(call)), \
            mode
        assert error.message == (
            f"this call of {callee} (found only when it runs) changes its argument "
            f"{parameter!r} in place ({write}, {THIS_FILE}, line {line_of(write_marker)}), "
            "which autotrace does not follow back into the function that calls it: the "
            "gradient of what it writes would be lost; return the new value from "
            f"{callee.split('.')[1]} instead"), mode


def test_a_list_written_by_a_call_and_read_in_the_same_statement_is_refused():
    for mode, run in every_mode(collected, X).items():
        with pytest.raises(TransformError) as caught:
            run()
        line = line_of("(read in the same statement)")
        assert caught.value.message == (
            f"_fill(t, out) changes its argument 'out' in place (out.append(...), {THIS_FILE}, "
            f"line {line_of('(fill appends)')}), which autotrace does not follow into this "
            f"function, and 'out' is read after it on line {line}; return the new value from "
            "_fill instead"), mode


class Tracker:
    def log(self, value, history):
        history.append(value)


def logged(tracker, x):
    history = []  # (written by the method, never read back: nothing to lose)
    loss = np.sum(np.sin(x) ** 2)
    tracker.log(loss, history)
    return loss


def read_before_the_call(x):
    out = [x * 1.0]
    n = np.sum(out[0]) + _fill((x ** 2, x), out)  # (out read before the call runs)
    return n * 2.0


def test_writes_into_arguments_nothing_reads_afterwards_are_followed():
    # (the first form of the refusals above refused these, which were right before)
    check_every_mode(lambda x: logged(Tracker(), x), X)
    check_every_mode(read_before_the_call, X)


class Scale:
    def __init__(self, w):
        self.w = w

    def apply(self, x):
        return self.w * x


@autotrace.register_adjoint(Scale.apply)
def _scale_apply_adjoint(y, self, x):
    d[x] = d[y] * self.w


def scaled_by_an_object_built_here(w, x):
    return np.sum(Scale(w * 1.0).apply(x) ** 2)


def test_a_method_with_a_users_rule_on_an_object_that_carries_gradient():
    # (a method with a rule took its object for one with no gradient: zero)
    expected = central_difference(lambda w: scaled_by_an_object_built_here(float(w[0]), X),
                                  np.array([2.0]))[0]
    assert autotrace.grad(scaled_by_an_object_built_here)(2.0, X) == pytest.approx(expected)


def logged_into_a_dict(tracker, x):
    history = []
    logs = {"loss": history}  # (history is read back through the dict)
    tracker.log(np.sum(x ** 2), history)
    return logs["loss"][-1] * 2.0


def test_a_written_argument_read_back_through_a_container_is_refused():
    # (the list was taken for one nothing reads afterwards: a zero gradient)
    with pytest.raises(TransformError, match=r"this call of Tracker\.log \(found only when it "
                                             r"runs\) changes its argument 'history' in place"):
        autotrace.grad(logged_into_a_dict, wrt=1)(Tracker(), X)
