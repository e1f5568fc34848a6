"""Errors are for people: each one names the file, the line and the construct, and says what to do.

Every unsupported construct has a function below that uses it. The tests check the whole
message, and that the error points at this file and at the line of the construct. The line is
found by searching the function's source for a marker, so moving the functions keeps the
tests right.
"""
import inspect
import math
import os
import textwrap
import warnings

import numpy as np
import pytest

import autotrace
from autotrace import TransformError, d

THIS_FILE = os.path.abspath(__file__)


def line_of(func, marker: str) -> int:
    """The line of this file where `marker` occurs in the source of `func` (exactly once)."""
    lines, first = inspect.getsourcelines(func)
    found = [first + i for i, line in enumerate(lines) if marker in line]
    assert len(found) == 1, f"{marker!r} occurs {len(found)} times in {func.__name__}"
    return found[0]


def transform_error(func, wrt=0) -> TransformError:
    with pytest.raises(TransformError) as caught:
        autotrace.grad(func, wrt)
    return caught.value


def assert_points_at(error: TransformError, func, marker: str, construct: str | None):
    assert error.filename is not None and os.path.abspath(error.filename) == THIS_FILE
    assert error.lineno == line_of(func, marker), str(error)
    assert error.construct == construct
    assert str(error) == f'File "{error.filename}", line {error.lineno}: {error.message}'


# --- Functions that use each unsupported construct --------------------------------------------

def uses_try(x):
    try:
        y = x * 2.0
    except ValueError:
        y = x
    return y


def uses_with(x, path):
    with open(path) as stream:
        y = x * len(stream.read())
    return y


def uses_yield(x):
    yield x * 2.0


def uses_global(x):
    global SCALE
    SCALE = 2.0
    return x * SCALE


def uses_nonlocal(x):
    y = x

    def set_y(t):
        nonlocal y
        y = t
        return t
    set_y(x * 2.0)
    return y


def uses_class(x):
    class Point:
        pass
    return x * 2.0


def uses_del(x):
    y = x * 2.0
    z = y + 1.0
    del y
    return z


def uses_import(x):
    import math
    return x * math.pi


def uses_walrus(x):
    if x > 0.0 and (y := x * 2.0) > 1.0:  # (hoisted from an if test, not from under `and`)
        return y
    return x


def uses_match(x, kind):
    match kind:
        case "double":
            return x * 2.0
    return x


async def async_function(x):
    return x * 2.0


def uses_async_def(x):
    async def inner(t):
        return t
    return x * 2.0


def uses_for_else(x):
    for i in range(3):
        x = x * 2.0
    else:
        x = x + 1.0
    return x


def uses_while_else(x):
    while np.sum(x) < 10.0:
        x = x * 2.0
    else:
        x = x + 1.0
    return x


def starred_assignment(x):
    total = 0.0
    for first, *rest in [x, x]:
        total = total + first * 2.0
    return total


class Accumulator:
    def __init__(self):
        self.total = 0.0

    def add(self, x):
        self.total = self.total + x
        return self.total


def updates_a_dict_argument(p):
    p.update(w=1.0)
    return p["w"]


def calls_fft(x):
    spectrum = np.fft.hfft(x)
    return np.sum(spectrum.real)


def calls_math_ulp(x):
    return math.ulp(x) * 2.0


def fft_helper(x):
    y = x * 2.0
    return np.fft.hfft(y)


def calls_fft_helper(x):
    return np.sum(fft_helper(x))


def nested_function_as_value(x, y):
    def scale(t):
        return t * y
    apply = scale
    return apply(x)


def nested_function_passed_to_map(x, y):
    def scale(t):
        return t * y
    return np.sum(list(map(scale, x)))


def two_parameters(x, y):
    return x * y


# --- Unsupported constructs --------------------------------------------------------------------

def extends_as_a_value(x):
    items = [x]
    nothing = items.extend([x * 2.0])
    return items[1] * (nothing is None)


def merges_dicts(x):
    d = {"a": x * 2.0}
    e = d | {"b": x * 3.0}  # (it raised KeyError BitOr inside autotrace)
    return np.sum(e["a"] * e["b"])


UNSUPPORTED = [
    (uses_try, "try:", "try",
     "autotrace cannot differentiate a try statement; move the error handling outside the "
     "differentiated function"),
    (uses_with, "with open", "with",
     "autotrace cannot differentiate this with statement: open(path) may swallow an exception "
     "(its __exit__ is not known to return a false value), which decides which statements of "
     "the block run; autotrace differentiates a with statement of autotrace.name_scope, "
     "np.errstate, warnings.catch_warnings or a context manager whose __exit__ returns a "
     "false constant; call the function inside the with block instead"),
    (uses_yield, "yield x", "yield",
     "autotrace cannot differentiate yield (generators cannot be differentiated; return a "
     "list)"),
    (uses_global, "global SCALE", "global",
     "autotrace cannot differentiate a global statement (assigning globals is a side effect "
     "the gradient cannot see; pass the value as an argument)"),
    (uses_nonlocal, "nonlocal y", "nonlocal",
     "autotrace cannot differentiate a nonlocal statement (assigning an enclosing function's "
     "variable) in a function that returns a value or is used otherwise than called as a "
     "statement; return the new value and assign it at the call (total = add(total, v))"),
    (uses_class, "class Point", "class",
     "autotrace cannot differentiate a class definition inside the function; define it at "
     "module level"),
    (uses_import, "import math", "import",
     "autotrace cannot differentiate an import inside the function; import at module level"),
    (uses_walrus, ":=", ":=",
     "autotrace cannot differentiate an assignment expression (:=); assign on its own line"),
    (uses_match, "match kind", "match",
     "autotrace cannot differentiate a match statement; use if/elif"),
    (starred_assignment, "*rest", "starred assignment",
     "autotrace cannot differentiate a starred target (a, *rest) of a loop or comprehension; "
     "unpack the item in a statement of its own (a, *rest = item)"),
    (updates_a_dict_argument, "p.update", "mutation of an argument",
     "the function changes its argument 'p' in place (.update); work on a copy, e.g. "
     "p = dict(p)"),
    (nested_function_as_value, "apply = scale", "nested function as a value",
     "the nested function 'scale' reads the enclosing function's variables y and is used as "
     "a value; autotrace differentiates such functions only where they are called directly. "
     "Pass those variables as arguments instead"),
    (extends_as_a_value, "items.extend", ".extend",
     "autotrace follows .extend(...) only as a statement of its own (it returns None); call "
     "it on its own line"),
    (merges_dicts, "d | {", "operator",
     "autotrace cannot differentiate `|` of values that carry gradient: it differentiates "
     "arithmetic operators (for dicts, which `|` merges, copy one and assign the other's "
     "items: e = dict(d); e[k] = v)"),
]


@pytest.mark.parametrize("func, marker, construct, message", UNSUPPORTED,
                         ids=[case[0].__name__ for case in UNSUPPORTED])
def test_unsupported_construct(func, marker, construct, message):
    error = transform_error(func)
    assert error.message == message
    assert_points_at(error, func, marker, construct)


@pytest.mark.parametrize("func, expected", [(uses_for_else, 8.0), (uses_while_else, 16.0)])
def test_loop_else_is_differentiated(func, expected):
    # (once refused: the else body is written out after the loop, loop_else.py)
    assert autotrace.grad(func)(1.0) == expected


def test_nested_function_passed_to_map_is_called():
    # map(scale, x) read whole is [scale(v) for v in x] (maps_and_filters.py): a direct call
    gx, gy = autotrace.grad(nested_function_passed_to_map, argnums=(0, 1))(
        np.array([1.0, 2.0]), 3.0)
    np.testing.assert_allclose(gx, [3.0, 3.0])
    assert gy == 3.0


def test_attribute_assignment_in_a_method():
    # The method differentiated writes into its object's state and reads it back: followed.
    accumulator = Accumulator()
    assert autotrace.grad(accumulator.add)(2.0) == 1.0
    assert accumulator.total == 2.0


class Seen:
    last = None


SEEN = Seen()


def remember(x):
    SEEN.last = x * 2.0
    return x


def test_attribute_assignment_in_a_called_function_into_a_global():
    error = transform_error(lambda x: remember(x) * 3.0)
    assert error.message == (
        "autotrace cannot differentiate SEEN.last = ..., a write into the state of the global "
        "'SEEN': it writes a value that carries gradient, in a function called by the "
        "differentiated one, and what reads it back after the call would not carry that "
        "gradient; write it in the function you differentiate, or in a method of that object "
        "called through it (SEEN.method(...)), which is differentiated with respect to the "
        "object, return the value instead, or write autotrace.stop_gradient(value) if its "
        "gradient is not wanted")
    assert_points_at(error, remember, "SEEN.last =", "write into an object's state")


# Constructs rejected at the right place, whose messages do not yet say what to do instead.
LOCATED_ONLY = [
    (uses_del, "del y", "del"),
    (uses_async_def, "async def inner", "async def"),
]


@pytest.mark.parametrize("func, marker, construct", LOCATED_ONLY,
                         ids=[case[0].__name__ for case in LOCATED_ONLY])
def test_unsupported_construct_is_located(func, marker, construct):
    error = transform_error(func)
    assert_points_at(error, func, marker, construct)
    assert error.message.startswith("autotrace cannot differentiate ")


@pytest.mark.parametrize("func", [uses_del, uses_async_def])
def test_unsupported_construct_message_says_what_to_do(func):
    message = transform_error(func).message
    assert ";" in message  # "autotrace cannot differentiate X; do Y instead", like the others


def test_async_function_passed_to_grad():
    error = transform_error(async_function)
    assert_points_at(error, async_function, "async def async_function", "async def")
    assert "async" in error.message


def test_error_is_raised_when_grad_is_called_not_when_the_gradient_runs():
    with pytest.raises(TransformError):
        autotrace.grad(uses_try)


# --- Calls without a derivative rule ---------------------------------------------------------

def no_rule_message(label: str, short: str, parameters: str = "x") -> str:
    """The message for a function whose first parameter is `parameters`' first."""
    first = parameters.split(",")[0]
    return (f"no derivative rule for {label}. Register one:\n\n"
            f"    @autotrace.register_adjoint({label})\n"
            f"    def {short}_adjoint(y, {parameters}):\n"
            f"        d[{first}] = d[y] * ...   # the gradient of {first}, given d[y], the "
            f"gradient of y\n")


# NumPy's functions without rules are refused with a reason (transforms/rules/refused.py).
FFT_REFUSED = ("no derivative rule for numpy.fft.hfft: a transform of a Hermitian-symmetric "
               "spectrum, which has no rule: write np.fft.hfft(a, n) as "
               "np.fft.irfft(np.conj(a), n) * n, which is differentiated")


def test_numpy_function_without_rule_says_why():
    error = transform_error(calls_fft)
    assert error.message == FFT_REFUSED
    assert_points_at(error, calls_fft, "np.fft.hfft(x)", "numpy.fft.hfft")


def test_builtin_c_function_without_rule():
    error = transform_error(calls_math_ulp)
    assert error.message == no_rule_message("math.ulp", "ulp")
    assert_points_at(error, calls_math_ulp, "math.ulp(x)", "math.ulp")


def test_missing_rule_in_a_called_function_points_at_that_function():
    error = transform_error(calls_fft_helper)
    assert error.message == FFT_REFUSED
    assert_points_at(error, fft_helper, "np.fft.hfft(y)", "numpy.fft.hfft")


def calls_dist(x):
    return math.dist([x, 1.0], [2.0, x * x])


def test_suggested_rules_take_the_function_s_own_parameters():
    error = transform_error(calls_dist)
    assert error.message == (
        "no derivative rule for math.dist. Register one:\n\n"
        "    @autotrace.register_adjoint(math.dist)\n"
        "    def dist_adjoint(y, p, q):\n"
        "        d[p] = d[y] * ...   # the gradient of p, given d[y], the gradient of y\n"
        "        d[q] = d[y] * ...\n")
    with pytest.raises(TransformError) as caught:
        autotrace.forward(calls_dist)
    assert caught.value.message == (
        "no tangent (forward-mode) rule for math.dist. Register one:\n\n"
        "    @autotrace.register_tangent(math.dist)\n"
        "    def dist_tangent(y, p, q):\n"
        "        d[y] = d[p] * ... + d[q] * ...   # the tangent of y, given d[p], d[q], the "
        "tangents of p, q\n")
    assert_points_at(caught.value, calls_dist, "math.dist", "math.dist")
    compile(suggested_registration(error.message), "<message>", "exec")
    compile(suggested_registration(caught.value.message), "<message>", "exec")


def ediff1d_unless_single(x):
    return np.sum(np.ediff1d(x)) if x.shape[0] > 1 else 0.0


@pytest.mark.parametrize("transform", [autotrace.grad, autotrace.forward])
def test_missing_rule_inside_a_conditional_expression_is_located(transform):
    with pytest.raises(TransformError) as caught:
        transform(ediff1d_unless_single)
    assert_points_at(caught.value, ediff1d_unless_single, "np.sum(np.ediff1d(x)) if",
                     "numpy.ediff1d")


erf = np.frompyfunc(math.erf, 1, 1)  # a ufunc from outside NumPy, like scipy.special.erf


def calls_foreign_ufunc(x):
    return np.sum(erf(x))


class Doubler:
    def __call__(self, x):
        return x * 2.0


doubler = Doubler()


def calls_callable_object(x):
    return np.sum(doubler(x))


def suggested_registration(message: str) -> str:
    """The code the no-rule message suggests (its `...` filled in), dedented."""
    return textwrap.dedent(message.split("\n\n", 1)[1]).replace("...", "1.0")


def test_suggested_registration_is_valid_python():
    message = transform_error(calls_math_ulp).message
    compile(suggested_registration(message), "<message>", "exec")


def test_missing_rule_for_a_foreign_ufunc():
    error = transform_error(calls_foreign_ufunc)
    assert "numpy.erf" not in error.message
    compile(suggested_registration(error.message), "<message>", "exec")


twice_each = np.vectorize(lambda v: v * 2.0)


def calls_vectorized(x):
    return np.sum(twice_each(x))


def test_missing_rule_for_a_vectorized_function():
    error = transform_error(calls_vectorized)
    assert " object at 0x" not in error.message
    assert "def twice_each_adjoint(y, v):" in error.message  # the parameters of its function
    assert_points_at(error, calls_vectorized, "twice_each(x)", "twice_each")
    compile(suggested_registration(error.message), "<message>", "exec")


def calls_a_new_callable_object(x):
    return np.sum(Doubler()(x) * x)


@pytest.mark.parametrize("function", [calls_callable_object, calls_a_new_callable_object])
def test_a_callable_object_is_differentiated_through_its_call_method(function):
    """Its class's __call__ is differentiated from its source, as a method is."""
    from autotrace.testing import check_grads
    x = np.array([0.5, -1.0, 2.0])
    check_grads(function, (x,), order=2, modes=("reverse", "forward"))


# --- Functions autotrace cannot read -----------------------------------------------------------

def exec_function(name: str):
    namespace = {"np": np}
    exec(f"def {name}(x):\n    return x * 2.0\n", namespace)
    return namespace[name]


def test_function_defined_with_exec_is_differentiated_from_a_trace():
    """Its source cannot be read: grad says so once, and differentiates a trace of it
    (tests/test_interactive.py tests this in depth)."""
    twice = exec_function("twice")
    with pytest.warns(autotrace.TracedSourceWarning,
                      match="the source of 'twice' cannot be read"):
        gradient = autotrace.grad(lambda x: np.sum(twice(x)))
    np.testing.assert_array_equal(gradient(np.ones(3)), [2.0, 2.0, 2.0])


def test_registering_a_rule_for_a_function_without_source_works():
    """The advice of the message above, followed."""
    triple = exec_function("triple")

    @autotrace.register_adjoint(triple)
    def triple_adjoint(y, x):
        d[x] = d[y] * 2.0

    def calls_triple(x):
        return np.sum(triple(x))

    np.testing.assert_array_equal(autotrace.grad(calls_triple)(np.ones(3)), [2.0, 2.0, 2.0])


def calls_exec_function(x):
    return np.sum(EXEC_DEFINED(x))


EXEC_DEFINED = exec_function("exec_defined")


def test_function_without_source_called_from_user_code_is_traced_with_its_caller():
    with pytest.warns(autotrace.TracedSourceWarning):
        gradient = autotrace.grad(calls_exec_function)
    np.testing.assert_array_equal(gradient(np.ones(3)), [2.0, 2.0, 2.0])


@pytest.mark.parametrize("func, label", [(len, "'len' (builtin_function_or_method)"),
                                         (math.ulp, "'ulp' (builtin_function_or_method)")])
def test_builtin_passed_to_grad(func, label):
    error = transform_error(func)
    assert error.message.startswith(
        f"cannot read the source of {label}: autotrace differentiates Python functions "
        "written in source files.")
    assert error.filename is None and error.lineno is None


def test_builtin_passed_to_grad_suggests_wrapping_it():
    assert "lambda" in transform_error(math.ulp).message


RULE_FUNCTIONS = [  # a function with a derivative rule, its first and second derivative
    (np.sin, np.cos, lambda x: -np.sin(x)),
    (math.sin, math.cos, lambda x: -math.sin(x)),
    (math.exp, math.exp, math.exp),
    (np.tanh, lambda x: 1.0 - np.tanh(x) ** 2,
     lambda x: -2.0 * np.tanh(x) * (1.0 - np.tanh(x) ** 2)),
    (math.log, lambda x: 1.0 / x, lambda x: -1.0 / x ** 2),
]


@pytest.mark.parametrize("function, first, second", RULE_FUNCTIONS,
                         ids=lambda f: getattr(f, "__qualname__", "").split(".")[-1])
def test_a_function_with_a_rule_passed_to_grad_is_differentiated_by_its_rule(
        function, first, second):
    """np.sin has no source, and tracing it is not needed: its rule gives the derivative,
    in every mode, with no warning about functions typed at a prompt."""
    x = 0.7
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert autotrace.grad(function)(x) == pytest.approx(first(x), rel=1e-14)
        assert autotrace.forward(function)(x)[1] == pytest.approx(first(x), rel=1e-14)
        assert autotrace.grad(autotrace.grad(function))(x) == pytest.approx(second(x),
                                                                             rel=1e-14)
        assert autotrace.hessian(function)(x) == pytest.approx(second(x), rel=1e-14)
        assert autotrace.function(autotrace.grad(function))(x) == pytest.approx(first(x),
                                                                                rel=1e-14)
    assert "np.cos(x)" in autotrace.source(autotrace.grad(np.sin))


def test_numpy_functions_with_rules_take_their_arguments_by_the_rules_names():
    x = np.array([0.3, -0.5])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        np.testing.assert_allclose(autotrace.grad(np.prod)(x), [-0.5, 0.3])
        np.testing.assert_allclose(autotrace.grad(np.sum, wrt="a")(x, keepdims=True), [1, 1])
        assert autotrace.grad(np.arctan2, wrt=(0, 1))(0.3, 0.4) == pytest.approx((1.6, -1.2))
        np.testing.assert_allclose(autotrace.grad(np.linalg.det)(2.0 * np.eye(2)),
                                   2.0 * np.eye(2))


def test_wrapping_a_builtin_works():
    assert autotrace.grad(lambda x: np.sin(x))(0.0) == 1.0


# --- wrt ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("wrt, message", [
    (2, "wrt=2 is out of range: two_parameters has 2 parameters ('x', 'y')"),
    (-3, "wrt=-3 is out of range: two_parameters has 2 parameters ('x', 'y')"),
    ((0, 5), "wrt=5 is out of range: two_parameters has 2 parameters ('x', 'y')"),
    ("z", "wrt='z' is not a parameter of two_parameters; its parameters are ('x', 'y')"),
    (("x", "w"), "wrt='w' is not a parameter of two_parameters; its parameters are "
                 "('x', 'y')"),
])
def test_wrt_not_a_parameter(wrt, message):
    with pytest.raises(ValueError) as caught:
        autotrace.grad(two_parameters, wrt)
    assert str(caught.value) == message


@pytest.mark.parametrize("wrt", [True, 1.5, None])
def test_wrt_of_the_wrong_type(wrt):
    with pytest.raises(TypeError) as caught:
        autotrace.grad(two_parameters, wrt)
    assert str(caught.value) == ("wrt must be a parameter index or name, or a tuple of those; "
                                 f"got {wrt!r}")


def test_negative_wrt_counts_from_the_end():
    assert autotrace.grad(two_parameters, wrt=-1)(2.0, 3.0) == 2.0


# --- integer arguments ----------------------------------------------------------------------------

def square(x):
    return x * x


def plus(x, y):
    return x + y


INTEGER_REFUSING_MODES = {
    "grad": lambda function, args: autotrace.grad(function)(*args),
    "value_and_grad": lambda function, args: autotrace.value_and_grad(function)(*args),
    "forward": lambda function, args: autotrace.forward(function)(*args),
    "forward with a tangent": lambda function, args: autotrace.forward(function)(
        *args, tangent=np.ones_like(args[0], dtype=float)),
    "jvp": lambda function, args: autotrace.jvp(
        function, args, [np.ones_like(a, dtype=float) for a in args]),
    "jacobian": lambda function, args: autotrace.jacobian(function)(*args),
    "jacobian, forward mode": lambda function, args: autotrace.jacobian(
        function, mode="forward")(*args),
    "hessian": lambda function, args: autotrace.hessian(function)(*args),
    "hvp": lambda function, args: autotrace.hvp(function)(
        *args, np.ones_like(args[0], dtype=float)),
}


@pytest.mark.parametrize("mode", INTEGER_REFUSING_MODES.values(),
                         ids=INTEGER_REFUSING_MODES.keys())
def test_an_integer_argument_differentiated_with_respect_to_is_refused(mode):
    # Whatever the code does with it: `x * x` would give a gradient, `x + y` none. Every mode
    # keeps grad's rule and message.
    for function, args, message in [
        (square, (3,), "argument 'x' is the int 3: gradients are taken with respect to "
                       "floating-point values; pass 3.0 instead, or leave 'x' out of `wrt`"),
        (plus, (1, 2.0), "argument 'x' is the int 1: gradients are taken with respect to "
                         "floating-point values; pass 1.0 instead, or leave 'x' out of `wrt`"),
        (square, (np.arange(3),), "argument 'x' is an array of int64: gradients are taken "
                                  "with respect to floating-point values; pass "
                                  "x.astype(float) instead, or leave 'x' out of `wrt`"),
        (square, (np.int32(2),), "argument 'x' is the int32 2: gradients are taken with "
                                 "respect to floating-point values; pass 2.0 instead, or "
                                 "leave 'x' out of `wrt`"),
    ]:
        with pytest.raises(TypeError) as raised:
            mode(function, args)
        assert str(raised.value) == message
    with pytest.raises(TypeError, match="argument 'x' is an array of int64"):
        autotrace.function(lambda x: mode(square, (x,)))(np.arange(3))


def test_integers_a_forward_derivative_is_not_taken_with_respect_to_are_free():
    # Integers inside a differentiated container get a zero, and other arguments are free.
    assert autotrace.grad(lambda p: p[0] * p[1])((2.0, 3)) == (3.0, 0.0)
    assert autotrace.grad(plus, wrt=1)(1, 2.0) == 1.0
    assert autotrace.forward(plus, wrt=1)(1, 2.0) == (3.0, 1.0)
    assert autotrace.forward(lambda p: p[0] * p[1])((2.0, 3), tangent=(1.0, 0.0)) == (6.0, 3.0)


def scaled_sum_of_squares(x, k):
    return k * np.sum(x * x)


def sum_of_powers(x):
    total = 0.0
    for k in range(1, 3):          # an integer passed on to a called function
        total = total + scaled_sum_of_squares(x, k)
    return total


def test_integers_passed_between_the_users_functions_are_not_refused():
    x = np.array([1.0, -2.0])
    # d/dx of 3 * sum(x * x) is 6 x; its tangent along ones is 6 * sum(x).
    assert np.allclose(autotrace.grad(sum_of_powers)(x), 6 * x)
    assert np.isclose(autotrace.forward(sum_of_powers)(x)[1], 6 * np.sum(x))
    assert np.allclose(autotrace.hessian(sum_of_powers)(x), 6 * np.eye(2))


# --- Writes autotrace does not follow --------------------------------------------------------

def sine_into_out_inside_a_sum(x):
    out = np.empty(3)
    return np.sum(np.sin(x, out=out))


def doubles_into_a_list_item(x):
    rows = [x * 1.0]
    np.multiply(x, 2.0, rows[0])
    return np.sum(rows[0])


def clips_into_out_inside_a_product(x):
    y = np.empty(3)
    return np.sum(x.clip(0.0, 1.0, out=y) * x)


def sorts_in_place(x):
    A = x * 2.0
    A.sort()
    return A[0]


OUT_AND_IN_PLACE_METHODS = [
    (sine_into_out_inside_a_sum, "np.sin(x, out=out)", "out=",
     "autotrace follows a call's out argument only where the call is a statement of its own, "
     "or the whole value of an assignment or return, and out is a variable, an item of an "
     "array variable or made by a call (out=y, out=H[t + 1], out=np.zeros_like(x)); here np.sin(x, out=out): write it as a statement "
     "of its own: out[...] = np.sin(x)"),
    (doubles_into_a_list_item, "2.0, rows[0])", "out=",
     "autotrace follows a call's out argument only where the call is a statement of its own, "
     "or the whole value of an assignment or return, and out is a variable, an item of an "
     "array variable or made by a call (out=y, out=H[t + 1], out=np.zeros_like(x)); here np.multiply(x, 2.0, rows[0]): write it as a "
     "statement of its own: rows[0] = np.multiply(x, 2.0)"),
    (clips_into_out_inside_a_product, "out=y", "out=",
     "autotrace follows a call's out argument only where the call is a statement of its own, "
     "or the whole value of an assignment or return, and out is a variable, an item of an "
     "array variable or made by a call (out=y, out=H[t + 1], out=np.zeros_like(x)); here x.clip(0.0, 1.0, out=y): write it as a "
     "statement of its own: y[...] = x.clip(0.0, 1.0)"),
    (sorts_in_place, "A.sort()", ".sort",
     "autotrace cannot differentiate .sort(), which changes 'A' in place; compute a new value "
     "instead: A = np.sort(A) for an array, A = sorted(A) for a list"),
]


@pytest.mark.parametrize("func, marker, construct, message", OUT_AND_IN_PLACE_METHODS,
                         ids=[case[0].__name__ for case in OUT_AND_IN_PLACE_METHODS])
def test_writes_into_out_and_in_place_methods(func, marker, construct, message):
    error = transform_error(func)
    assert error.message == message
    assert_points_at(error, func, marker, construct)


def doubles_a_view_of_its_argument(x):
    y = x[:2]
    y *= 2
    return np.sum(x)


def writes_a_view_of_a_local(x):
    A = x * 2
    v = A[:2]
    v[0] = 100.0
    return np.sum(A)


def fills_a_row(x):
    A = np.zeros((2, 3))
    row = A[0]
    row[:] = x
    return np.sum(A * x)


def adds_to_each_row(x):
    A = np.zeros((2, 3))
    for r in A:
        r += x
    return np.sum(A ** 2)


def writes_a_transpose(x):
    A = np.outer(x, x)
    At = A.T
    At[0, 1] = 0.0
    return np.sum(A)


def copied_back(base, view, shown, direct="") -> str:
    """The advice for a write through `view` (bound to `shown`, a view of `base`): to change
    `base` as NumPy does, write into it (`direct`) or assign a changed copy back."""
    return (f"for {base!r} to change as NumPy changes it, {direct}change a copy and assign it "
            f"back: {view} = {shown}.copy(); ...; {shown} = {view}; if {base!r} should keep "
            f"its old values, work on the copy alone")


WRITES_THROUGH_VIEWS = [
    (writes_a_view_of_a_local, "v[0] = 100.0", "v = A[:2]", "return np.sum(A)", "v[0] = ...",
     "v", "A", copied_back("A", "v", "A[:2]")),
    (fills_a_row, "row[:] = x", "row = A[0]", "return np.sum(A * x)", "row[:] = ...", "row",
     "A", copied_back("A", "row", "A[0]")),
    (adds_to_each_row, "r += x", "for r in A", "return np.sum(A ** 2)", "r += ...", "r", "A",
     "if 'A' should keep its old values, work on a copy, e.g. r = r.copy() (first thing in "
     "the loop); if it should change too, as in NumPy, write into 'A' itself"),
    (writes_a_transpose, "At[0, 1] = 0.0", "At = A.T", "return np.sum(A)", "At[0, 1] = ...",
     "At", "A", "for 'A' to change as NumPy changes it, change a copy and assign it back: "
     "At = A.T.copy(); ...; A[...] = At.T; if 'A' should keep its old values, work on the "
     "copy alone"),
]


def view_message(func, bound, read, write, view, base, advice) -> str:
    shown = bound + ":" if bound.startswith("for") else bound
    return (f"{write} writes into {view!r}, which may share its memory with {base!r} "
            f"({shown}, line {line_of(func, bound)}), read after it on line "
            f"{line_of(func, read)}: the write changes {base!r} too, which autotrace does not "
            f"follow; {advice}")


@pytest.mark.parametrize("func, marker, bound, read, write, view, base, advice",
                         WRITES_THROUGH_VIEWS, ids=[case[0].__name__ for case in
                                                    WRITES_THROUGH_VIEWS])
def test_writes_through_a_view(func, marker, bound, read, write, view, base, advice):
    error = transform_error(func)
    assert error.message == view_message(func, bound, read, write, view, base, advice)
    assert_points_at(error, func, marker, "write into shared memory")


def test_a_write_in_place_only_for_arrays_is_refused_when_it_runs():
    # `y *= 2` changes x where x is an array, and not where it is a list (y is then a copy):
    # the source does not say which, so the derivative checks when it runs.
    derivative = autotrace.grad(doubles_a_view_of_its_argument)
    with pytest.raises(TransformError) as caught:
        derivative(np.ones(3))
    assert caught.value.message == view_message(
        doubles_a_view_of_its_argument, "y = x[:2]", "return np.sum(x)", "y *= ...", "y", "x",
        copied_back("x", "y", "x[:2]", direct="write into it, x[:2] = x[:2] * ..., or "))
    assert_points_at(caught.value, doubles_a_view_of_its_argument, "y *= 2",
                     "write into shared memory")


def adds_to_an_aliased_array(x):
    A = np.zeros(3)
    B = A
    A += x
    return np.sum(B * x)


def test_augmented_assignment_to_an_array_another_name_shares():
    error = transform_error(adds_to_an_aliased_array)
    assert error.message == (
        "A += ... changes 'A' in place, and 'B' shares its memory (B = A, line "
        f"{line_of(adds_to_an_aliased_array, 'B = A')}), read after it on line "
        f"{line_of(adds_to_an_aliased_array, 'return')}; autotrace gives 'A' alone a new "
        "value. Write A = A + ... if 'B' should keep the old value, or update 'B' too")
    assert_points_at(error, adds_to_an_aliased_array, "A += x", "write into shared memory")


# --- The seed dy ---------------------------------------------------------------------------------

def doubles(x):
    return x * 2


def doubles_and_squares(x):
    return x * 2, np.sum(x ** 2)


def keyed(x):
    return {"twice": x * 2, "total": np.sum(x)}


@pytest.mark.parametrize("func, dy, error, message", [
    (doubles, np.ones(4), ValueError,
     "dy has shape (4,), but the output has shape (3,): dy is its gradient, shaped like it"),
    (doubles, np.ones((2, 3)), ValueError,
     "dy has shape (2, 3), but the output has shape (3,): dy is its gradient, shaped like it"),
    (doubles, [1.0, 1.0, 1.0], TypeError,
     "dy must have the structure of the output, an array of shape (3,); got a list of 3"),
    (doubles_and_squares, np.ones(3), TypeError,
     "dy must have the structure of the output, a tuple of 2; got an array of shape (3,)"),
    (doubles_and_squares, (np.ones(3), np.ones(2)), ValueError,
     "dy[1] has shape (2,), but output[1] has shape (): dy[1] is its gradient, shaped like it"),
    (keyed, {"twice": np.ones(3)}, TypeError,
     "dy must have the structure of the output, a dict with keys 'twice', 'total'; got a dict "
     "with keys 'twice'"),
], ids=["longer", "more-axes", "list-for-array", "array-for-tuple", "tuple-item", "dict-keys"])
def test_a_seed_of_the_wrong_shape_or_structure(func, dy, error, message):
    with pytest.raises(error) as caught:
        autotrace.grad(func)(np.ones(3), dy=dy)
    assert str(caught.value) == message


def test_a_seed_of_the_right_shape_scales_the_gradient():
    np.testing.assert_allclose(autotrace.grad(doubles)(np.ones(3), dy=np.arange(3.0)),
                               [0.0, 2.0, 4.0])
    gradient = autotrace.grad(doubles_and_squares)(np.ones(3), dy=(np.ones(3), 2.0))
    np.testing.assert_allclose(gradient, [6.0, 6.0, 6.0])


def jvp_of_a_closure(x, a):
    _, tangent = autotrace.jvp(lambda z: z * a, (x,), (x,))  # closure as a value
    return np.sum(tangent)


def test_a_closure_passed_as_a_value_is_refused_at_its_line():
    with pytest.raises(TransformError) as raised:
        autotrace.grad(jvp_of_a_closure)(np.ones(3), 2.0)
    error = raised.value
    assert error.message == (
        "a lambda reads the enclosing function's variables a and is used as a value; autotrace "
        "differentiates such functions only where they are called directly. Pass those "
        "variables as arguments instead")
    assert error.lineno == jvp_of_a_closure.__code__.co_firstlineno + 1


def _sine_scaled(x):
    return np.sin(x) * x[0]


def test_a_jacobian_differentiated_again_says_what_nests():
    # (it failed deep inside autotrace: "no derivative rule for vars", in structure.py)
    hint = ("the function autotrace.jacobian (or autotrace.hessian) returns is not "
            "differentiated again; nest autotrace.jacfwd and autotrace.jacrev instead: "
            "jacfwd(jacrev(f)) is the Hessian, jacfwd(jacfwd(jacrev(f))) the third derivative")
    line = inspect.currentframe().f_lineno + 2
    with pytest.raises(TransformError) as caught:
        autotrace.jacobian(autotrace.jacobian(_sine_scaled))
    assert (caught.value.filename, caught.value.lineno) == (THIS_FILE, line)
    assert caught.value.message == f"autotrace cannot differentiate jacobian__sine_scaled: {hint}"
    jacobian = autotrace.jacobian(_sine_scaled)

    def loss(x):
        return np.sum(jacobian(x) ** 2)
    with pytest.raises(TransformError, match=r"line \d+: no derivative rule for jacobian: "
                                             + hint.replace("(", r"\(").replace(")", r"\)")):
        autotrace.grad(loss)(np.array([0.3, 0.7]))
    x = np.array([0.3, 0.7, 1.1])
    np.testing.assert_allclose(  # what the hint says to write
        autotrace.jacfwd(autotrace.jacrev(lambda v: np.sum(_sine_scaled(v))))(x),
        autotrace.hessian(lambda v: np.sum(_sine_scaled(v)))(x), rtol=1e-12)
