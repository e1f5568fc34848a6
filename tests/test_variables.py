"""autotrace.Variable and autotrace.Module: values, assignment, tracking, and state in traces."""
import re

import numpy as np
import pytest

import autotrace
from autotrace.tracking import tracked_variables
from autotrace.runtime.state import StateError


def test_a_variable_behaves_as_its_value():
    v = autotrace.Variable(np.array([1.0, 2.0]), name="v")
    assert np.array_equal(v * 2, [2.0, 4.0]) and type(v * 2) is np.ndarray
    assert np.array_equal(3.0 - v, [2.0, 1.0])
    assert np.array_equal(np.sin(v), np.sin([1.0, 2.0]))
    assert np.array_equal(np.stack([v, v]), [[1.0, 2.0], [1.0, 2.0]])
    assert v.sum() == 3.0 and v[1] == 2.0 and len(v) == 2
    assert np.array_equal(np.ones((3, 2)) @ v, [3.0, 3.0, 3.0])
    assert (v.shape, v.dtype, v.ndim, v.name) == ((2,), np.float64, 1, "v")
    assert np.array_equal(v > 1.5, [False, True])


def test_python_numbers_become_float64_and_int64():
    assert autotrace.Variable(5.0).dtype == np.float64
    assert autotrace.Variable(3).dtype == np.int64
    assert autotrace.Variable(3, dtype=np.float32).dtype == np.float32
    assert autotrace.Variable(lambda: np.zeros(2)).shape == (2,)


def test_assign_replaces_the_value_and_keeps_earlier_arrays_intact():
    v = autotrace.Variable(np.array([1.0, 2.0]))
    before = v.value()
    v.assign([5.0, 6.0])
    v.assign_add(1.0)
    v.assign_sub(np.array([0.5, 0.5]))
    assert np.array_equal(v.numpy(), [5.5, 6.5])
    assert np.array_equal(before, [1.0, 2.0])
    copy = v.numpy()
    copy[0] = 100.0
    assert v.numpy()[0] == 5.5


def test_assign_checks_shape_and_dtype():
    v = autotrace.Variable(np.ones((2, 3)), name="w")
    with pytest.raises(ValueError, match=re.escape(
            "Variable 'w' has shape (2, 3); cannot assign a value of shape (3,)")):
        v.assign(np.ones(3))
    with pytest.raises(TypeError, match=re.escape(
            "Variable 'w' has dtype float64; cannot assign a value of dtype complex128 "
            "(cast it first)")):
        v.assign(np.ones((2, 3)) * 1j)
    v.assign(0.0)  # a scalar fills
    assert np.array_equal(v.numpy(), np.zeros((2, 3)))


@pytest.mark.parametrize("traced", [False, True])
def test_assign_add_and_sub_check_the_shape_before_numpy_broadcasts(traced):
    v = autotrace.Variable(np.zeros(2), name="v")
    run = autotrace.function if traced else (lambda f: f)
    with pytest.raises(ValueError, match=re.escape(
            "Variable 'v' has shape (2,); cannot assign_add a value of shape (3,)")):
        run(lambda: v.assign_add(np.ones(3)))()
    with pytest.raises(ValueError, match=re.escape(
            "Variable 'v' has shape (2,); cannot assign_sub a value of shape (1,)")):
        run(lambda: v.assign_sub(np.ones(1)))()  # (NumPy would broadcast it)
    with pytest.raises(TypeError, match=re.escape(
            "Variable 'v' has dtype float64; cannot assign_add a value of dtype complex128 "
            "(cast it first)")):
        run(lambda: v.assign_add(np.ones(2) * 1j))()
    run(lambda: v.assign_add(np.array([1.0, 2.0])))()
    run(lambda: v.assign_sub(0.5))()  # a scalar, as for assign
    assert np.array_equal(v.numpy(), np.array([1.0, 2.0]) - 0.5)


def test_assign_refuses_what_is_not_numbers_by_the_variables_name():
    v = autotrace.Variable(np.zeros(2), name="v")
    with pytest.raises(TypeError, match=re.escape(
            "Variable 'v' holds numbers (dtype float64); cannot assign 'x', a str")):
        v.assign("x")
    with pytest.raises(TypeError, match=re.escape(
            "Variable 'v' holds numbers (dtype float64); cannot assign None")):
        v.assign(None)  # (NumPy reads None as NaN in float64)
    with pytest.raises(TypeError, match=re.escape(
            "Variable 'v' holds numbers (dtype float64); cannot assign_add an array of "
            "dtype <U1")):
        v.assign_add(np.array(["a", "b"]))
    assert np.array_equal(v.numpy(), [0.0, 0.0])


def test_item_assignment_and_out_are_refused_with_advice():
    v = autotrace.Variable(np.ones(2), name="v")
    with pytest.raises(TypeError, match=r"does not support item assignment.*\.assign"):
        v[0] = 3.0
    with pytest.raises(TypeError, match=r"cannot be a ufunc's out="):
        np.add(1.0, 1.0, out=v)


def test_variables_are_unhashable_but_have_references():
    a, b = autotrace.Variable(1.0), autotrace.Variable(1.0)
    with pytest.raises(TypeError):
        {a}
    refs = {a.ref(): "a", b.ref(): "b"}
    assert refs[a.ref()] == "a" and a.ref().deref() is a and a.ref() != b.ref()


class Scale(autotrace.Module):
    def __init__(self, units, name=None):
        super().__init__(name)
        self.units = units

    def build(self, input_shape):
        self.add_weight("kernel", (input_shape[-1], self.units), initializer="ones")

    def call(self, x):
        return x @ self.kernel


class Stack(autotrace.Module):
    def __init__(self):
        super().__init__()
        self.blocks = [Scale(2), {"last": Scale(3)}]
        self.offset = autotrace.Variable(0.5, name="offset", trainable=False)

    def call(self, x):
        return self.blocks[1]["last"](self.blocks[0](x)) + self.offset


def test_modules_build_lazily_and_track_nested_variables_in_order():
    stack = Stack()
    assert stack.variables == [stack.offset]
    out = stack(np.ones((1, 4)))
    assert np.array_equal(out, np.full((1, 3), 8.5))
    assert [v.shape for v in stack.trainable_variables] == [(4, 2), (2, 3)]
    assert stack.non_trainable_variables == [stack.offset]
    paths = [path for path, _ in tracked_variables(stack, "model")]
    assert paths == ["model/blocks/0/kernel", "model/blocks/1/last/kernel", "model/offset"]
    assert [m.units for m in stack.submodules] == [2, 3]


def test_module_names_are_numbered_per_class():
    first, second = Scale(1, name="scale_layer"), Scale(1)
    assert first.name == "scale_layer" and re.fullmatch(r"scale(_\d+)?", second.name)
    second(np.ones((1, 2)))
    assert second.kernel.name == f"{second.name}/kernel"


# --- state in traced functions ------------------------------------------------------------------

def test_a_traced_function_reads_and_updates_variables_every_call():
    total = autotrace.Variable(np.zeros(3), name="total")
    calls = autotrace.Variable(0, name="calls")

    @autotrace.function
    def accumulate(x):
        total.assign_add(x * 2.0)
        calls.assign_add(1)
        return np.sum(total)

    results = [float(accumulate(np.full(3, float(i)))) for i in range(1, 4)]
    assert results == [6.0, 18.0, 36.0]
    assert np.array_equal(total.numpy(), [12.0, 12.0, 12.0]) and int(calls) == 3
    assert accumulate.trace_count == 1
    total.assign(np.ones(3))  # changed outside: the graph reads the new value
    assert float(accumulate(np.zeros(3))) == 3.0


def test_variables_are_graph_inputs_and_their_new_values_outputs():
    v = autotrace.Variable(np.ones(2), name="v")

    @autotrace.function
    def bump(x):
        v.assign(v * x)
        return x

    assert str(bump.graph(np.ones(2))) == (
        "{ lambda x:f64[2] b:f64[2] ;\n"
        "  c:f64[2] = multiply b x\n"
        "  in (x, c) }")


def test_variables_made_on_the_first_trace_only():
    @autotrace.function
    def scaled(x):
        return autotrace.Variable(np.full(x.shape, 2.0), name="scale") * x

    with pytest.raises(StateError) as raised:  # eagerly each call would make a new one
        scaled(np.ones(2))
    assert str(raised.value) == (
        "scaled makes a new Variable ('scale') on every call: a traced function may make "
        "Variables on its first call only, and traced again it made this one again. Make it "
        "outside the function, or keep it in an object that makes it once (as layers do: "
        "self.v = ... only if not made yet)")

    made = {}

    @autotrace.function
    def counted(x):
        if x.shape not in made:
            made[x.shape] = autotrace.Variable(np.zeros(x.shape), name="count")
        made[x.shape].assign_add(x)
        return made[x.shape] * 1.0

    assert np.array_equal(counted(np.ones(2)), [1.0, 1.0])
    assert np.array_equal(counted(np.ones(2)), [2.0, 2.0])  # one Variable, kept and updated
    assert counted.trace_count == 1 and len(made) == 1
    with pytest.raises(StateError, match="created inside a traced function on a later trace"):
        counted(np.ones(3))


def test_a_variable_initialized_from_a_traced_value_is_an_error():
    @autotrace.function
    def bad(x):
        return autotrace.Variable(x * 2.0, name="made_inside") + x

    with pytest.raises(StateError, match=re.escape(
            "the initial value of Variable 'made_inside' depends on an argument of the traced "
            "function; make it from shapes")):
        bad(np.ones(2))


def test_assigning_inside_a_traced_branch_names_the_line():
    v = autotrace.Variable(np.zeros(2), name="acc")

    @autotrace.function
    def conditional(x):
        if np.sum(x) > 0:
            v.assign(x)
        return x

    with pytest.raises(StateError) as caught:
        conditional(np.ones(2))
    message = str(caught.value)
    assert "Variable 'acc' is assigned inside a traced `if` or loop" in message
    assert "test_variables.py" in message and "v.assign(x)" in message
