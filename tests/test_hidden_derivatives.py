"""Code whose derivative autotrace cannot see, refused where it gave zeros before: eval, exec,
locals() and vars() (which read the function's variables by name), np.fromiter and set (whose
items autotrace does not follow); a function whose output carries no gradient (None, text,
booleans, integers); and a str argument with respect to which a gradient is asked.

Each refusal is checked in every mode: grad, value_and_grad, forward mode and jvp, the traced
gradient, the gradient of the traced function and the batched gradient."""
import re

import numpy as np
import pytest

import autotrace
from tests.numeric import assert_gradients_in_both_orders, central_difference, check_every_mode

X = np.array([0.3, 0.7, 1.1])


def _modes(f, x, wrt=0):
    """Each way of asking for f's derivative at the arguments `x` (a tuple), by name."""
    tangents = tuple(np.ones_like(a) if i == wrt else a for i, a in enumerate(x))
    batched = tuple(np.stack([a, a]) if i == 0 else a for i, a in enumerate(x))
    return {
        "grad": lambda: autotrace.grad(f, wrt)(*x),
        "value_and_grad": lambda: autotrace.value_and_grad(f, wrt)(*x),
        "forward": lambda: autotrace.forward(f, wrt)(*x),
        "jvp": lambda: autotrace.jvp(f, x, tangents),
        "function(grad)": lambda: autotrace.function(autotrace.grad(f, wrt))(*x),
        "grad(function)": lambda: autotrace.grad(autotrace.function(f), wrt)(*x),
        "vmap(grad)": lambda: autotrace.vmap(autotrace.grad(f, wrt), in_axes=(0,) + (None,) * (
            len(x) - 1))(*batched),
    }


# Names read by text or through a dict of the function's variables.

def squares_by_eval(x):
    return np.sum(eval("x * x"))


def scales_through_locals(x):
    return np.sum(locals()["x"] * 3.0)


def scales_through_vars(x):
    return np.sum(vars()["x"] * 3.0)


def appends_by_exec(x):
    out = []
    exec("out.append(x * x)")
    return np.sum(out[0])


def _line(function) -> str:
    """The line of function's body that makes the call refused (the one after its def)."""
    return str(function.__code__.co_firstlineno + (2 if function is appends_by_exec else 1))


BY_NAME = {
    squares_by_eval: "a call of eval: the names its text reads are hidden from the gradient; "
                     "write the expression directly",
    scales_through_locals: "a call of locals(): the variables read through the dict it "
                           "returns are hidden from the gradient; read each variable by its "
                           "name",
    scales_through_vars: "a call of vars() without an argument, which is locals(): the "
                         "variables read through the dict it returns are hidden from the "
                         "gradient; read each variable by its name",
    appends_by_exec: "a call of exec: the names its text reads and assigns are hidden from "
                     "the gradient; write the statements directly",
}


@pytest.mark.parametrize("function", list(BY_NAME), ids=lambda f: f.__name__)
def test_reading_variables_by_name_is_refused_in_every_mode(function):
    message = (f'File "{__file__}", line {_line(function)}: autotrace cannot differentiate '
               f"{BY_NAME[function]}")
    for mode, call in _modes(function, (X,)).items():
        with pytest.raises(autotrace.TransformError, match=re.escape(message)):
            call()


def squares_directly(x):
    return np.sum(x * x)


def test_the_expression_written_directly_is_differentiated():
    check_every_mode(squares_directly, X)


class Holder:
    def __init__(self, w):
        self.w = w


def reads_global_module(x):
    return np.sum(globals()["np"].sin(x))


def test_globals_and_vars_of_an_object_are_not_refused_as_reads_by_name():
    """globals() reads module variables, which carry no gradient: what it gives is followed."""
    assert_gradients_in_both_orders(reads_global_module, X)


# Items autotrace does not follow.

def sums_from_iterator(x):
    return np.sum(np.fromiter([x[0], x[1] * x[1]], float))


def sums_from_array(x):
    return np.sum(np.array([x[0], x[1] * x[1]]))


def sums_a_set(x):
    return sum(set([x[0] * 3.0, x[1]]))


FROMITER = ("no {kind} for numpy.fromiter: autotrace follows no iterator: write np.array(items) "
            "of a list of the items (np.stack for arrays), which is differentiated")
SET = ("no {kind} for set: autotrace follows no values through a set: keep them in a list "
       "(or an array)")


@pytest.mark.parametrize("function, message", [(sums_from_iterator, FROMITER),
                                               (sums_a_set, SET)],
                         ids=["fromiter", "set"])
def test_items_not_followed_are_refused_in_every_mode(function, message):
    for mode, call in _modes(function, (X,)).items():
        kind = "tangent rule" if mode in ("forward", "jvp") else "derivative rule"
        expected = (f'File "{__file__}", line {function.__code__.co_firstlineno + 1}: '
                    + message.format(kind=kind))
        with pytest.raises(autotrace.TransformError, match=re.escape(expected)):
            call()


def test_what_the_refusal_of_fromiter_says_to_write_is_differentiated():
    check_every_mode(sums_from_array, X)


def counts_distinct_labels(x):
    return np.sum(x) * len(set(["a", "b", "a"]))


def test_a_set_of_values_without_gradient_is_not_refused():
    check_every_mode(counts_distinct_labels, X)


# Outputs that carry no gradient.

def forgets_its_return(x):
    y = np.sum(x * x)  # noqa: F841


def returns_text(x):
    return "loss"


def returns_a_test(x):
    return np.sum(x) > 0.5


def returns_a_python_bool(x):
    return True


def returns_an_int(x):
    return 3


def returns_indices(x):
    return np.argmax(x)


def returns_integers_computed_from_x(x):
    return (x * 10.0).astype(int)


_NEEDS = ("a gradient is taken of a floating-point output (a float or a float array, or a "
          "tuple, list or dict of them)")
OUTPUTS = {
    forgets_its_return: f"forgets_its_return returned None: {_NEEDS}; did forgets_its_return "
                        "forget its `return`?",
    returns_text: f"returns_text returned the str 'loss': {_NEEDS}; text carries no gradient",
    returns_a_test: f"returns_a_test returned a value of dtype bool: {_NEEDS}; booleans (a "
                    "comparison's result) carry no gradient: return the floating-point values "
                    "compared",
    returns_a_python_bool: f"returns_a_python_bool returned the bool True: {_NEEDS}; booleans "
                           "(a comparison's result) carry no gradient: return the "
                           "floating-point values compared",
    returns_indices: f"returns_indices returned a value of dtype int64: {_NEEDS}; integers "
                     "carry no gradient: return a floating-point value (float(n), "
                     "n.astype(float))",
    returns_integers_computed_from_x: f"returns_integers_computed_from_x returned a value of "
                                      f"dtype int64: {_NEEDS}; integers carry no gradient: "
                                      "return a floating-point value (float(n), "
                                      "n.astype(float))",
}
REVERSE_MODES = ("grad", "value_and_grad", "function(grad)", "grad(function)", "vmap(grad)")


@pytest.mark.parametrize("function", list(OUTPUTS), ids=lambda f: f.__name__)
def test_an_output_without_gradient_is_a_type_error_in_every_reverse_mode(function):
    modes = _modes(function, (X,))
    for mode in REVERSE_MODES:
        with pytest.raises(TypeError, match=re.escape(OUTPUTS[function])):
            modes[mode]()


@pytest.mark.parametrize("function", [forgets_its_return, returns_a_test],
                         ids=lambda f: f.__name__)
def test_an_output_without_gradient_is_a_type_error_with_has_aux(function):
    def with_aux(x):
        return function(x), 1.0
    message = OUTPUTS[function].replace(function.__name__, with_aux.__qualname__)
    for call in (autotrace.grad(with_aux, has_aux=True),
                 autotrace.value_and_grad(with_aux, has_aux=True),
                 autotrace.function(autotrace.grad(with_aux, has_aux=True))):
        with pytest.raises(TypeError, match=re.escape(message)):
            call(X)


W = autotrace.Variable(np.array([1.0, 2.0]), name="W")


def trains_without_return():
    loss = np.sum(W * W)  # noqa: F841


def test_implicit_gradients_of_an_output_without_gradient_are_a_type_error():
    message = OUTPUTS[forgets_its_return].replace("forgets_its_return",
                                                   "trains_without_return")
    for call in (autotrace.implicit_grad(trains_without_return),
                 autotrace.implicit_value_and_grad(trains_without_return),
                 autotrace.function(autotrace.implicit_value_and_grad(trains_without_return))):
        with pytest.raises(TypeError, match=re.escape(message)):
            call()


def returns_a_constant_float(x):
    return 3.0


def returns_floor(x):
    return np.sum(np.floor(x * 3.0))


def returns_a_tuple_with_a_count(x):
    return np.sum(x * x), 3


Y = np.array([1.0, -1.0, -1.0])
FEATURES = np.array([[1.0, 2.0], [-1.0, 0.5], [0.3, -2.0]])


def hinge(w):
    """The int 0 where every margin holds (nothing added to it), a float elsewhere."""
    total = 0
    for i in range(3):
        margin = Y[i] * (FEATURES[i] @ w)
        if margin < 1:
            total = total + (1 - margin)
    return total


def test_a_python_int_returned_on_some_path_has_zero_gradients_in_every_mode():
    """A number literal the function returned where nothing was added to it: zeros, as the
    traced gradient gives (its other path's float joins it), not a TypeError at those inputs
    alone."""
    held = np.array([3.0, 3.0])
    for mode in REVERSE_MODES:
        result = _modes(hinge, (held,))[mode]()
        gradient = result[1] if mode == "value_and_grad" else result
        np.testing.assert_array_equal(gradient, np.zeros((2, 2)) if mode == "vmap(grad)"
                                      else np.zeros(2))
    violated = np.array([0.1, -0.2])
    np.testing.assert_allclose(autotrace.grad(hinge)(violated), central_difference(hinge, violated),
                               rtol=1e-6)


@pytest.mark.parametrize("function", [returns_a_constant_float, returns_floor, returns_an_int],
                         ids=lambda f: f.__name__)
def test_a_floating_point_output_without_gradient_has_zero_gradients(function):
    for mode in REVERSE_MODES:
        result = _modes(function, (X,))[mode]()
        gradient = result[1] if mode == "value_and_grad" else result
        np.testing.assert_array_equal(gradient, np.zeros_like(X) if mode != "vmap(grad)"
                                      else np.zeros((2, 3)))


def test_an_integer_in_a_returned_tuple_gives_nothing_and_the_rest_is_differentiated():
    np.testing.assert_allclose(autotrace.grad(returns_a_tuple_with_a_count)(X), 2 * X)
    traced = autotrace.function(autotrace.grad(returns_a_tuple_with_a_count))
    np.testing.assert_allclose(traced(X), 2 * X)


def test_an_output_without_gradient_is_differentiated_from_a_given_seed():
    """With a seed given (dy), the user says what the output's gradient is: no refusal."""
    np.testing.assert_array_equal(autotrace.grad(returns_an_int)(X, dy=1.0), np.zeros(3))


# A str argument with respect to which a gradient is asked.

def scales_by_length(x, label):
    return np.sum(x) * len(label)


def test_a_text_argument_in_wrt_is_a_type_error_in_every_mode():
    message = ("argument 'label' is the str 'ab': gradients are taken with respect to "
               "floating-point values; pass a float or an array of floats instead, or leave "
               "'label' out of `wrt`")
    for mode, call in _modes(scales_by_length, (X, "ab"), wrt=1).items():
        with pytest.raises(TypeError, match=re.escape(message)):
            call()
    with pytest.raises(TypeError, match=re.escape(message)):
        autotrace.vjp(scales_by_length, X, "ab")[1](1.0)


def test_a_text_argument_left_out_of_wrt_is_read():
    np.testing.assert_allclose(autotrace.grad(scales_by_length)(X, "ab"), 2.0 * np.ones(3))
