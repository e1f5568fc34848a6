"""Numerical and ML code that writes into arrays it made, checked in every mode."""
import numpy as np
import pytest

import autotrace
from autotrace import TransformError
from autotrace.runtime.object_slots import ObjectStateError

from .numeric import central_difference

def kept_in_an_object_array(x):
    a = x * 1.0
    box = np.empty(1, dtype=object)
    box[0] = a
    a[0] = 5.0 * a[1]
    return np.sum(box[0] ** 2)


def test_an_array_of_objects_holds_what_is_written_into_it():
    with pytest.raises(TransformError, match="'box' shares its memory"):
        autotrace.grad(kept_in_an_object_array)(np.array([0.3, -0.5, 0.7]))


def real_part_assigned(x):
    z = x[:3] + 1j * x[3:]
    z.real = z.real * 2.0
    return np.abs(z) ** 2


def imaginary_part_assigned(x):
    z = x[:3] + 1j * x[3:]
    z.imag = x[:3] ** 2
    return z


def real_part_of_a_real_array_assigned(x):
    y = x * 1.0
    y.real = x[::-1]
    return y


@pytest.mark.parametrize("function", [real_part_assigned, imaginary_part_assigned,
                                      real_part_of_a_real_array_assigned],
                         ids=lambda f: f.__name__)
def test_a_traced_real_or_imaginary_part_assigned_writes_into_the_array(function):
    x = np.array([0.33, -0.57, 0.71, 1.13, -0.24, 0.46])
    expected = function(x)
    traced = autotrace.function(function)(x)
    assert traced.dtype == expected.dtype
    np.testing.assert_array_equal(traced, expected)


def imaginary_part_of_a_real_array_assigned(x):
    y = x * 1.0
    y.imag = x
    return y


def test_a_traced_real_array_has_no_imaginary_part_to_assign():
    with pytest.raises(TypeError, match="^array does not have imaginary part to set$"):
        imaginary_part_of_a_real_array_assigned(np.ones(2))
    with pytest.raises(TypeError, match="array does not have imaginary part to set"):
        autotrace.function(imaginary_part_of_a_real_array_assigned)(np.ones(2))


def running_total(x, totals=[]):
    totals.append(np.sum(x))
    return totals[-1]


def doubled_total(x):
    return running_total(x ** 2) * 2.0


def test_a_traced_value_appended_to_a_default_list_is_refused():
    # The list is one on every call, as a global's is: a traced value kept in it would
    # outlive the trace
    with pytest.raises(ObjectStateError, match=(
            r"test_hunt_alias.py:\d+: a traced value is appended to running_total's default "
            r"totals, a list that outlives the call")):
        autotrace.function(doubled_total)(np.array([0.3, -0.5]))
    assert running_total.__defaults__ == ([],)


def written_by_its_own_method(x):
    a = x * 1.0
    a.__setitem__(slice(0, 2), x[2:4] ** 2)
    return np.sum(a ** 2 * np.arange(1.0, 7.0))


def written_by_a_method_handed_to_map(x):
    a = x * 1.0
    list(map(a.__setitem__, [0, 1], [x[2] * 3.0, x[3] * 4.0]))
    return np.sum(a ** 2 * np.arange(1.0, 7.0))


NO_SETITEM_RULE = ("no derivative rule for the method ndarray.__setitem__ of a value that "
                   "carries gradient; write it without the method")


@pytest.mark.parametrize("function", [written_by_its_own_method,
                                      written_by_a_method_handed_to_map],
                         ids=lambda f: f.__name__)
@pytest.mark.parametrize("mode", ["eager", "traced", "traced forward"])
def test_an_arrays_writing_method_called_as_a_value_is_refused_traced_too(function, mode):
    # A traced array's __setitem__ is the tracer's own Python code: derived from its source,
    # it gave a gradient that missed the write
    x = np.array([0.33, -0.57, 0.71, 1.13, -0.24, 0.46])
    derivative = {"eager": autotrace.grad(function),
                  "traced": autotrace.function(autotrace.grad(function)),
                  "traced forward": autotrace.function(autotrace.hessian(function))}[mode]
    with pytest.raises(TransformError, match=NO_SETITEM_RULE.replace(".", r"\.")):
        derivative(x)


NO_ARGUMENTS = ()


def summed_by_a_method_taken_as_a_value(x):
    a = np.sin(x)
    total = a.sum
    return total(*NO_ARGUMENTS) * 2.0


@pytest.mark.parametrize("mode", ["grad", "jvp"])
def test_an_arrays_method_called_with_unpacked_arguments_is_refused(mode):
    # The object of NumPy's method (a builtin) was no object with gradient: zero gradients
    x = np.array([0.3, -0.5, 0.7])
    with pytest.raises(TransformError, match=(
            r"no derivative rule for the method ndarray\.sum of a value that carries "
            r"gradient")):
        if mode == "grad":
            autotrace.grad(summed_by_a_method_taken_as_a_value)(x)
        else:
            autotrace.jvp(summed_by_a_method_taken_as_a_value, (x,), (np.ones(3),))


def popped_with_unpacked_arguments(x):
    items = [x[0] * 1.0, x[1] * 2.0, x[2] * 3.0]
    take_last = items.pop
    last = take_last(*NO_ARGUMENTS)
    return last + items[0] * 10.0 + len(items) * 100.0


@pytest.mark.parametrize("mode", ["grad", "jvp"])
def test_a_lists_method_called_with_unpacked_arguments_is_refused(mode):
    # It lost the popped item's gradient (IndexError), and forward mode popped twice (a wrong
    # value: 105.1 for NumPy's 205.1)
    x = np.array([0.3, -0.5, 0.7])
    with pytest.raises(TransformError, match=(
            r"no derivative rule for the method list\.pop of a value that carries gradient")):
        if mode == "grad":
            autotrace.grad(popped_with_unpacked_arguments)(x)
        else:
            autotrace.jvp(popped_with_unpacked_arguments, (x,), (np.ones(3),))


def squared_through_an_iterator(x):
    a = x * 1.0
    for v in np.nditer(a, op_flags=["readwrite"]):
        v[...] = v * v
    return np.sum(a * np.arange(1.0, 4.0))


def squared_by_index(x):
    a = x * 1.0
    for i in np.ndindex(a.shape):
        a[i] = a[i] * a[i]
    return np.sum(a * np.arange(1.0, 4.0))


@pytest.mark.parametrize("mode", ["grad", "forward", "traced grad"])
def test_a_write_through_a_writable_nditer_is_refused(mode):
    # It was differentiated as if `v[...] = v * v` gave v alone a new value: the value and the
    # gradient of the array left as it was
    x = np.array([0.3, -0.5, 0.7])
    derivative = {"grad": autotrace.grad, "forward": autotrace.jvp,
                  "traced grad": lambda f: autotrace.function(autotrace.grad(f))}[mode]
    with pytest.raises(TransformError, match=(
            r"test_hunt_alias.py\", line \d+: autotrace cannot differentiate "
            r"np\.nditer\(a, op_flags=\['readwrite'\]\): the loop over it writes into the array "
            r"through the iterator")):
        if mode == "forward":
            derivative(squared_through_an_iterator, (x,), (np.ones(3),))
        else:
            derivative(squared_through_an_iterator)(x)
    np.testing.assert_allclose(autotrace.grad(squared_by_index)(x),
                               2.0 * x * np.arange(1.0, 4.0), rtol=1e-12)


def doubled_in_place_after_a_read(x):
    total = np.sum(x ** 2)
    x *= 2.0
    return total + np.sum(np.sin(x)) * x[0]


@pytest.mark.parametrize("jacobian", [autotrace.jacrev, autotrace.jacfwd, autotrace.grad],
                         ids=lambda f: f.__name__)
def test_a_jacobian_of_a_function_writing_into_its_argument_works_on_a_copy(jacobian):
    # jacrev ran the function on the caller's array to learn its output's shape: the array
    # doubled, and the rows differentiated the function there
    x = np.array([0.3, -0.5, 0.7])
    expected = central_difference(lambda p: doubled_in_place_after_a_read(p.copy()), x)
    np.testing.assert_allclose(jacobian(doubled_in_place_after_a_read)(x), expected,
                               rtol=1e-6, atol=1e-8)
    np.testing.assert_array_equal(x, [0.3, -0.5, 0.7])


def multiplied_into_itself_by_a_held_ufunc(x):
    multiply = np.multiply
    a = x * 1.0
    multiply(a, x, out=a)
    return np.sum(a * np.arange(1.0, 4.0))


def multiplied_into_itself_by_a_ufunc_from_a_dict(x):
    operations = {"times": np.multiply}
    a = x * 1.0
    operations["times"](a, x, a)
    return np.sum(a * np.arange(1.0, 4.0))


@pytest.mark.parametrize("function", [multiplied_into_itself_by_a_held_ufunc,
                                      multiplied_into_itself_by_a_ufunc_from_a_dict],
                         ids=lambda f: f.__name__)
@pytest.mark.parametrize("mode", ["grad", "jvp", "traced grad"])
def test_out_of_a_numpy_function_known_only_when_it_runs_is_refused(function, mode):
    # The call ran for its write into a, which the derivative did not follow: the gradient
    # of x * 1.0, not of x * x
    x = np.array([0.3, -0.5, 0.7])
    with pytest.raises(TransformError, match=(
            r"line \d+: autotrace cannot differentiate this call of numpy\.multiply with out: "
            r"the function is known only when the call runs")):
        if mode == "jvp":
            autotrace.jvp(function, (x,), (np.ones(3),))
        elif mode == "grad":
            autotrace.grad(function)(x)
        else:
            autotrace.function(autotrace.grad(function))(x)
