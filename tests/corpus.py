"""A corpus of small user functions, written the way NumPy users write them.

Each entry of `CASES` is a `Case(function, make_args, wrt, order)`:
    function: the function to differentiate.
    make_args(rng): the positional arguments, drawn from a numpy Generator.
    wrt: what to differentiate with respect to (index, name, or a tuple of those).
    order: 2 where second derivatives are worth checking, else 1.

The same table serves the reverse-mode tests, and later forward mode and tracing. Inputs are
chosen away from points where a function is not differentiable (ties of a max, zeros of an
abs, thresholds of a branch or a loop condition); tests/test_corpus.py checks that by finite
differences at several step sizes.

Sections follow the constructs they exercise: assignment, augmented assignment, unpacking,
conditionals, for loops, while loops, break/continue/return, calls, nested functions,
recursion, closures and globals, containers, attributes, array methods, subscripts,
subscript assignment, and a few complete models.
"""
from collections import namedtuple
from typing import Any, Callable, NamedTuple

import numpy as np

from tests import corpus_helpers
from tests.corpus_helpers import affine, softplus


class Case(NamedTuple):
    function: Callable
    make_args: Callable[[np.random.Generator], tuple]
    wrt: Any = 0
    order: int = 2


def normal(*shapes):
    """make_args drawing one standard-normal array per shape."""
    return lambda rng: tuple(rng.standard_normal(shape) for shape in shapes)


def uniform(low, high, *shapes):
    """make_args drawing one uniform array per shape."""
    return lambda rng: tuple(rng.uniform(low, high, shape) for shape in shapes)


# --- Reassignment and overwriting ---------------------------------------------------------

def reassign_variable(x):
    y = x * 2.0
    y = np.sin(y)
    y = y * x
    return np.sum(y)


def overwrite_arguments(x, y):
    x = x * y
    y = np.exp(0.5 * x)
    x = x + y
    return np.sum(x * y)


def overwrite_float_arguments(a, b):
    a = a * a
    a = a + b
    b = a * b
    return a * b


def overwrite_then_read_old_value(x):
    y = x
    x = np.cos(x)
    return np.sum(x * y)


def reuse_name_with_new_shape(X):
    t = X.sum(axis=1)
    t = np.outer(t, t)
    t = t.sum()
    return t * np.sum(X ** 2)


def rebind_in_loop(x):
    y = x
    for _ in range(3):
        y = np.sin(y) * x
    return y


ASSIGNMENT = [
    Case(reassign_variable, normal(5)),
    Case(overwrite_arguments, normal(4, 4), wrt=(0, 1)),
    Case(overwrite_float_arguments, lambda rng: (0.7, -1.3), wrt=("a", "b")),
    Case(overwrite_then_read_old_value, normal(4)),
    Case(reuse_name_with_new_shape, normal((3, 2))),
    Case(rebind_in_loop, normal(4)),
]


# --- Augmented assignment -----------------------------------------------------------------

def augmented_add_in_loop(x):
    total = 0.0
    for value in x:
        total += value ** 2
    return total


def augmented_subtract(x, y):
    z = 2.0 * x
    z -= np.sin(y)
    z -= x * y
    return np.sum(z ** 2)


def augmented_multiply(x):
    product = 1.0
    for i in range(3):
        product *= x[i] + 2.0
    return product


def augmented_divide(x):
    y = x ** 2 + 1.0
    y /= np.sum(y)
    return y * np.arange(1.0, 1.0 + x.size)


def augmented_power(a, b):
    c = a + 1.0
    c **= b
    c **= 2
    return c


def augmented_matmul(x, W):
    h = np.tanh(x)
    h @= W
    h = np.tanh(h)
    h @= W
    return np.sum(h)


def augmented_float_arguments(a, b):
    a += b
    a *= a
    a -= b
    a /= 1.0 + b * b
    return a


def augmented_chain(x, y):
    z = np.exp(x)
    z += y
    z *= y
    z -= x
    z /= 2.0 + y ** 2
    z **= 2
    return np.sum(z)


AUGMENTED = [
    Case(augmented_add_in_loop, normal(5)),
    Case(augmented_subtract, normal(4, 4), wrt=(0, 1)),
    Case(augmented_multiply, normal(4)),
    Case(augmented_divide, normal(4)),
    Case(augmented_power, lambda rng: (0.6, 1.7), wrt=(0, 1)),
    Case(augmented_matmul, normal(3, (3, 3)), wrt=(0, 1)),
    Case(augmented_float_arguments, lambda rng: (0.4, -0.9), wrt=(0, 1)),
    Case(augmented_chain, normal(4, 4), wrt=(0, 1)),
]


# --- Tuple unpacking ----------------------------------------------------------------------

def unpack_tuple(x):
    a, b = np.sin(x), np.cos(x)
    return np.sum(a * b + a)


def unpack_nested(x, y):
    (a, b), c = (x, y), x * y
    return np.sum(a * c - b ** 2)


def swap_floats_in_loop(a, b):
    for _ in range(4):
        a, b = b, 0.5 * a + np.sin(b)
    return a * b


def swap_arrays(x, y):
    x, y = y, x
    return np.sum(x ** 3 * y)


def unpack_function_result(x):
    mean, spread = corpus_helpers.mean_and_spread(x)
    return spread / (1.0 + mean ** 2)


def unpack_array_rows(X):
    first, second, third = X
    return np.sum(first * second + np.sin(third))


def unpack_shape(X):
    rows, cols = X.shape
    return np.sum(X) / (rows * cols) + np.sum(X ** 2)


UNPACKING = [
    Case(unpack_tuple, normal(5)),
    Case(unpack_nested, normal(3, 3), wrt=(0, 1)),
    Case(swap_floats_in_loop, lambda rng: (0.3, 1.1), wrt=(0, 1)),
    Case(swap_arrays, normal(4, 4), wrt=(0, 1)),
    Case(unpack_function_result, normal(6)),
    Case(unpack_array_rows, normal((3, 4))),
    Case(unpack_shape, normal((2, 3))),
]


# --- Conditionals -------------------------------------------------------------------------

def branch_on_sum(x):
    if x.sum() > 0:
        y = x ** 2
    else:
        y = -x ** 3
    return np.sum(y)


def branch_on_sum_negative(x):
    if np.sum(x) > 0:
        return np.sum(np.sqrt(x * x + 1.0))
    else:
        y = np.exp(x) * x
    return np.sum(y)


def branches_per_row(X):
    total = 0.0
    for row in X:
        s = row.mean()
        if s > 0.5:
            total += np.sum(np.exp(row))
        elif s > -0.5:
            total += np.sum(np.sin(row)) * s
        else:
            total -= np.sum(row ** 2)
    return total


def if_elif_else(x):
    s = x.mean()
    if s > 1.0:
        y = np.exp(x)
    elif s > -1.0:
        y = np.sin(x) * s
    else:
        y = x ** 2
    return y


def conditional_expression_arrays(x, y):
    z = x if x.sum() > y.sum() else y
    return np.sum(z ** 2 * (x + y))


def conditional_expression_scalar(a, x):
    scale = a * 2.0 if a > 0 else -a
    return scale * np.sum(x ** 2)


def conditional_expression_else_taken(a, x):
    scale = 1.0 + a if a > 0 else np.exp(a)
    return np.sum(np.sin(scale * x))


def if_without_else(x):
    y = 2.0 * x
    if np.max(x) > 0.5:
        y = y * x
    return np.sum(y)


def nested_if(x, y):
    if x.sum() > 0:
        if y.sum() > 0:
            z = x * y
        else:
            z = x - y
    else:
        z = x + y ** 2
    return np.sum(z ** 2)


def if_on_integer_argument(x, n):
    if n > 2:
        y = x ** n
    else:
        y = np.exp(x)
    return np.sum(y)


def if_with_boolean_operators(x, y):
    if x.sum() > 0 and not y.max() > 10.0:
        z = x * y
    elif x.sum() < -5.0 or y.min() > 3.0:
        z = x
    else:
        z = y
    return np.sum(np.sin(z))


def if_inside_loop(x):
    total = 0.0
    for i in range(len(x)):
        if x[i] > 0:
            total += x[i] ** 2
        else:
            total -= 0.5 * x[i] ** 3
    return total


def branch_assigns_different_variables(x):
    a = x
    b = 2.0 * x
    if np.sum(x) > 0:
        a = np.sin(x)
    else:
        b = np.cos(x)
    return np.sum(a * b)


CONDITIONALS = [
    Case(branch_on_sum, uniform(0.2, 1.0, 4)),
    Case(branch_on_sum_negative, uniform(-1.0, -0.2, 4)),
    Case(branches_per_row,
         lambda rng: (0.1 * rng.standard_normal((3, 4)) + np.array([[1.5], [0.0], [-1.5]]),)),
    Case(if_elif_else, uniform(-0.5, 0.5, 5)),
    Case(conditional_expression_arrays, uniform(1.0, 2.0, 3, 3), wrt=(0, 1)),
    Case(conditional_expression_scalar, lambda rng: (0.7, rng.standard_normal(3)), wrt=(0, 1)),
    Case(conditional_expression_else_taken, lambda rng: (-0.6, rng.standard_normal(3)),
         wrt=(0, 1)),
    Case(if_without_else, uniform(0.6, 1.0, 4)),
    Case(nested_if, lambda rng: (rng.uniform(0.1, 1.0, 3), rng.uniform(-1.0, -0.1, 3)),
         wrt=(0, 1)),
    Case(if_on_integer_argument, lambda rng: (rng.standard_normal(4), 3)),
    Case(if_with_boolean_operators, lambda rng: (rng.uniform(0.1, 1.0, 3),
                                                 rng.standard_normal(3)), wrt=(0, 1)),
    Case(if_inside_loop, normal(6)),
    Case(branch_assigns_different_variables, uniform(-1.0, -0.1, 4)),
]


# --- for loops ----------------------------------------------------------------------------

def loop_range_stop(x):
    y = x
    for i in range(3):
        y = y * np.cos(y) + x
    return np.sum(y)


def loop_range_start_stop(x):
    total = 0.0
    for i in range(1, len(x)):
        total += x[i] * x[i - 1]
    return total


def loop_range_step(x):
    total = 0.0
    for i in range(0, len(x), 2):
        total += np.sin(x[i]) * x[i + 1]
    return total


def loop_reversed_range(x):
    result = 0.0
    for i in range(len(x) - 1, -1, -1):
        result = result * 0.5 + x[i] ** 2
    return result


def loop_over_rows(X, w):
    total = 0.0
    for row in X:
        total += np.tanh(np.dot(row, w))
    return total


def loop_over_list_literal(x, y):
    total = 0.0
    for z in [x, y, x * y]:
        total = total + np.sum(z ** 2)
    return total


def loop_over_list_argument(xs):
    total = 0.0
    for x in xs:
        total += np.sum(np.sin(x))
    return total * total


def loop_zip(xs, ys):
    total = 0.0
    for a, b in zip(xs, ys):
        total += a * b ** 2
    return total


def loop_enumerate(X):
    total = 0.0
    for i, row in enumerate(X):
        total += (i + 1) * np.sum(row ** 2)
    return total


def loop_nested(X, v):
    total = 0.0
    for i in range(X.shape[0]):
        for j in range(X.shape[1]):
            total += X[i, j] * v[j] ** (i + 1)
    return total


def loop_nested_triangular(x):
    total = 0.0
    for i in range(len(x)):
        for j in range(i):
            total += x[i] * np.cos(x[j])
    return total


def loop_enumerate_zip(xs, ys):
    total = 0.0
    for i, (a, b) in enumerate(zip(xs, ys)):
        total += i * a * b + np.exp(a)
    return total


def loop_dict_items(params):
    total = 0.0
    for name, value in params.items():
        total += np.sum(value ** 2) * len(name)
    return total


def loop_over_constant_list(x):
    y = 0.0
    for c in [0.5, -1.0, 2.0]:
        y = y * x + c
    return y


FOR_LOOPS = [
    Case(loop_range_stop, normal(4)),
    Case(loop_range_start_stop, normal(6)),
    Case(loop_range_step, normal(6)),
    Case(loop_reversed_range, normal(5)),
    Case(loop_over_rows, normal((4, 3), 3), wrt=(0, 1)),
    Case(loop_over_list_literal, normal(3, 3), wrt=(0, 1)),
    Case(loop_over_list_argument, lambda rng: ([rng.standard_normal(2), rng.standard_normal(3),
                                                rng.standard_normal((2, 2))],)),
    Case(loop_zip, normal(4, 4), wrt=(0, 1)),
    Case(loop_enumerate, normal((3, 2))),
    Case(loop_nested, normal((3, 4), 4), wrt=(0, 1)),
    Case(loop_nested_triangular, normal(5)),
    Case(loop_enumerate_zip, normal(4, 4), wrt=("xs", "ys")),
    Case(loop_dict_items, lambda rng: ({"w": rng.standard_normal(3),
                                        "bias": rng.standard_normal((2, 2))},)),
    Case(loop_over_constant_list, normal(4)),
]


# --- while loops --------------------------------------------------------------------------

def while_counter(x):
    i = 0
    while i < 4:
        x = np.sin(x) + x
        i += 1
    return np.sum(x)


def while_data_dependent(x):
    while np.sum(x ** 2) < 50.0:
        x = x * 1.3
    return np.sum(x ** 3)


def while_float_condition(a, b):
    s = a
    while s < 10.0:
        s = s * 1.5 + b
    return s * a


def while_newton_sqrt(a):
    y = a
    while abs(y * y - a) > 1e-6:
        y = 0.5 * (y + a / y)
    return y


def while_true_break(x):
    i = 0
    while True:
        x = np.tanh(x) * 2.0
        i += 1
        if i >= 3:
            break
    return x


def while_continue(x):
    i = 0
    total = 0.0
    while i < len(x):
        i += 1
        if x[i - 1] < 0:
            continue
        total += np.exp(x[i - 1])
    return total


WHILE_LOOPS = [
    Case(while_counter, normal(4)),
    Case(while_data_dependent, normal(4)),
    Case(while_float_condition, lambda rng: (1.3, 0.8), wrt=(0, 1)),
    Case(while_newton_sqrt, lambda rng: (3.7,)),
    Case(while_true_break, normal(4)),
    Case(while_continue, normal(6)),
]


# --- break, continue, early return --------------------------------------------------------

def break_on_counter(x, n):
    total = 0.0
    for i in range(10):
        if i >= n:
            break
        total += x[i] ** 2
    return total


def break_on_data(X):
    total = 0.0
    for row in X:
        total += np.sum(row ** 2)
        if total > 5.0:
            break
    return total


def continue_in_for(x):
    total = 0.0
    for i in range(len(x)):
        if x[i] < 0:
            continue
        total += x[i] ** 3
    return total


def early_return(x):
    if x.sum() < 0:
        return -np.sum(x ** 3)
    y = np.exp(x)
    return np.sum(y * x)


def early_return_chain(x):
    s = np.sum(x)
    if s > 2.0:
        return s ** 2
    if s > 0.0:
        return np.sum(np.sin(x)) * s
    return np.sum(x ** 2)


def return_inside_loop(x):
    for i in range(10):
        x = x * 1.5
        if np.sum(x ** 2) > 20.0:
            return np.sum(np.sin(x))
    return np.sum(x)


def return_inside_nested_loop(X):
    total = 0.0
    for i in range(X.shape[0]):
        for j in range(X.shape[1]):
            total += X[i, j] ** 2
            if total > 4.0:
                return total * X[i, j]
    return total


def break_out_of_inner_loop(X):
    total = 0.0
    for row in X:
        for value in row:
            if value < 0:
                break
            total += np.exp(value)
    return total


def continue_and_break(x):
    total = 0.0
    for i, value in enumerate(x):
        if i % 2 == 1:
            continue
        if i > 6:
            break
        total += value * x[i + 1]
    return total


EXITS = [
    Case(break_on_counter, lambda rng: (rng.standard_normal(10), 4)),
    Case(break_on_data, normal((5, 3))),
    Case(continue_in_for, normal(6)),
    Case(early_return, lambda rng: (rng.standard_normal(4) - 1.0,)),
    Case(early_return_chain, uniform(0.05, 0.4, 4)),
    Case(return_inside_loop, normal(3)),
    Case(return_inside_nested_loop, normal((3, 3))),
    Case(break_out_of_inner_loop, normal((3, 4))),
    Case(continue_and_break, normal(10)),
]


# --- Calls to user functions --------------------------------------------------------------

def square(x):
    return x * x


def cube_via_square(x):
    return square(x) * x


def call_helper_twice(x, y):
    return np.sum(square(x) + square(np.sin(y)))


def call_chain(x):
    return np.sum(cube_via_square(np.tanh(x)))


def scaled_tanh(x, scale=2.0):
    return scale * np.tanh(x / scale)


def call_with_keywords(x):
    return np.sum(scaled_tanh(x, scale=3.0) + scaled_tanh(x) + scaled_tanh(x=x, scale=0.5))


def call_helper_with_loop(x, coefficients):
    return np.sum(corpus_helpers.horner(coefficients, x))


def call_other_module(x):
    return np.sum(corpus_helpers.softplus(x) * corpus_helpers.shifted_square(x))


def call_imported_names(x, W, b):
    return np.sum(softplus(affine(x, W, b)))


def call_other_module_chain(x, W, b):
    h = corpus_helpers.layer(x, W, b)
    return np.sum(corpus_helpers.normalize(h) ** 3 + h)


def call_with_default_argument(x):
    return np.sum(corpus_helpers.smooth_abs(x))


def call_recursive_helper(x):
    return corpus_helpers.repeated_sine(x, 3)


CALLS = [
    Case(call_helper_twice, normal(3, 3), wrt=(0, 1)),
    Case(call_chain, normal(4)),
    Case(call_with_keywords, normal(4)),
    Case(call_helper_with_loop, lambda rng: (rng.standard_normal(3), [0.5, -1.0, 2.0]),
         wrt=(0, 1)),
    Case(call_other_module, normal(4)),
    Case(call_imported_names, normal(3, (3, 2), 2), wrt=(0, 1, 2)),
    Case(call_other_module_chain, normal(3, (3, 4), 4), wrt=("x", "W", "b")),
    Case(call_with_default_argument, normal(5)),
    Case(call_recursive_helper, normal(3)),
]


# --- Nested functions and lambdas ---------------------------------------------------------

def nested_def_reads_enclosing(x, y):
    def scale(z):
        return z * y
    return np.sum(scale(x) + scale(x * x))


def lambda_reads_enclosing(x, a):
    activation = lambda z: np.tanh(a * z)  # noqa: E731
    return np.sum(activation(x) * activation(2.0 * x))


def nested_def_in_loop(x):
    def step(z, k):
        return np.sin(z) + k * z
    for k in range(3):
        x = step(x, 0.5 * k)
    return np.sum(x)


def nested_def_with_default(x, w):
    def penalty(v, strength=0.1):
        return strength * np.sum(v ** 2)
    return np.sum(x * w) + penalty(w) + penalty(x, 0.5)


def apply_twice(f, x):
    return f(f(x))


def lambda_passed_to_helper(x):
    return np.sum(apply_twice(lambda z: np.sin(z) * 1.5, x))


def ufunc_passed_to_helper(x):
    return np.sum(apply_twice(np.sin, x))


def nested_def_reads_computed_value(x):
    total = np.sum(x ** 2)

    def normalized(v):
        return v / total
    return np.sum(normalized(x) ** 3)


NESTED = [
    Case(nested_def_reads_enclosing, normal(3, 3), wrt=(0, 1)),
    Case(lambda_reads_enclosing, lambda rng: (rng.standard_normal(4), 0.8), wrt=(0, 1)),
    Case(nested_def_in_loop, normal(3)),
    Case(nested_def_with_default, normal(3, 3), wrt=(0, 1)),
    Case(lambda_passed_to_helper, normal(4)),
    Case(ufunc_passed_to_helper, normal(4)),
    Case(nested_def_reads_computed_value, normal(4)),
]


# --- Recursion ----------------------------------------------------------------------------

def power(x, n):
    return 1.0 if n == 0 else x * power(x, n - 1)


def recursive_sum_of_list(xs):
    if len(xs) == 0:
        return 0.0
    return np.sum(xs[0] ** 2) + recursive_sum_of_list(xs[1:])


def recursive_depth(x, depth):
    if depth == 0:
        return np.tanh(x)
    return recursive_depth(np.sin(x) * x + x, depth - 1)


RECURSION = [
    Case(power, lambda rng: (rng.standard_normal(3), 4)),
    Case(recursive_sum_of_list, lambda rng: ([rng.standard_normal(2), rng.standard_normal(3),
                                              rng.standard_normal(1)],)),
    Case(recursive_depth, lambda rng: (rng.standard_normal(3), 3)),
]


# --- Closures and globals -----------------------------------------------------------------

WEIGHTS = np.array([0.5, -1.0, 2.0, 0.25])
DECAY = 0.9
ACTIVATIONS = {"sin": np.sin, "cos": np.cos}


def global_constant_array(x):
    return np.sum(WEIGHTS * np.sin(x))


def global_constant_scalar(x):
    y = x
    for _ in range(3):
        y = DECAY * y + (1.0 - DECAY) * np.tanh(y)
    return y


def make_scaled(k):
    def scaled(x):
        return k * np.sum(x ** 2)
    return scaled


scaled = make_scaled(3.0)


def make_polynomial(coefficients):
    def polynomial(x):
        return corpus_helpers.horner(coefficients, x)
    return polynomial


cubic = make_polynomial([1.0, -2.0, 0.5, 3.0])


def make_layer_loss(W, b):
    def layer_loss(x):
        return np.sum(np.tanh(x @ W + b) ** 2)
    return layer_loss


fixed_layer_loss = make_layer_loss(np.linspace(-1.0, 1.0, 12).reshape(3, 4),
                                   np.linspace(0.0, 1.0, 4))


def global_function_table(x):
    total = 0.0
    for name in ("sin", "cos"):
        total += np.sum(ACTIVATIONS[name](x))
    return total


GLOBALS = [
    Case(global_constant_array, normal(4)),
    Case(global_constant_scalar, normal(4)),
    Case(scaled, normal(3)),
    Case(cubic, normal(3)),
    Case(fixed_layer_loss, normal(3)),
    Case(global_function_table, normal(4), order=1),
]


# --- Containers as arguments and results --------------------------------------------------

def tuple_argument(pair):
    a, b = pair
    return np.sum(a * np.sin(b))


def list_argument(xs):
    return np.sum(xs[0] * xs[1]) + np.sum(xs[2] ** 2)


def dict_argument(params, x):
    return np.sum(np.tanh(x @ params["W"] + params["b"]))


def nested_dict_of_tuples(params, x):
    W1, b1 = params["hidden"]
    W2, b2 = params["output"]
    h = np.tanh(x @ W1 + b1)
    return np.sum((h @ W2 + b2) ** 2)


def list_of_dicts(layers, x):
    h = x
    for layer in layers:
        h = np.tanh(h @ layer["W"] + layer["b"])
    return np.sum(h)


def dict_with_float_and_int(config, x):
    return config["scale"] * np.sum(x ** config["power"])


def tuple_of_floats(ab):
    a, b = ab
    return a ** 2 * b + np.sin(b)


def returns_tuple(x, y):
    return np.sin(x) * y, np.sum(x * y)


def returns_dict(x):
    return {"mean": np.mean(x), "squares": x ** 2}


def returns_list(x):
    return [np.sin(x), np.cos(x) * x]


def returns_nested(x, y):
    return {"pair": (x * y, np.sum(y)), "rest": [np.exp(x)]}


def builds_dict_and_reads(x):
    stats = {}
    stats["sum"] = np.sum(x)
    stats["squares"] = np.sum(x ** 2)
    return stats["squares"] - stats["sum"] ** 2 / x.size


def builds_tuple_and_indexes(x):
    parts = (np.sin(x), np.cos(x), x ** 2)
    return np.sum(parts[0] * parts[2] + parts[-2])


def _mlp_params(rng):
    return {"hidden": (rng.standard_normal((3, 4)), rng.standard_normal(4)),
            "output": (rng.standard_normal((4, 2)), rng.standard_normal(2))}


CONTAINERS = [
    Case(tuple_argument, lambda rng: ((rng.standard_normal(3), rng.standard_normal(3)),)),
    Case(list_argument, lambda rng: ([rng.standard_normal(3), rng.standard_normal(3),
                                      rng.standard_normal(2)],)),
    Case(dict_argument, lambda rng: ({"W": rng.standard_normal((3, 2)),
                                      "b": rng.standard_normal(2)}, rng.standard_normal(3)),
         wrt="params"),
    Case(nested_dict_of_tuples, lambda rng: (_mlp_params(rng), rng.standard_normal(3)),
         wrt=(0, 1)),
    Case(list_of_dicts, lambda rng: ([{"W": rng.standard_normal((3, 3)),
                                       "b": rng.standard_normal(3)} for _ in range(2)],
                                     rng.standard_normal(3)), wrt=(0, 1)),
    Case(dict_with_float_and_int, lambda rng: ({"scale": 1.5, "power": 3},
                                               rng.standard_normal(4)), wrt=(0, 1)),
    Case(tuple_of_floats, lambda rng: ((0.7, -0.3),)),
    Case(returns_tuple, normal(3, 3), wrt=(0, 1)),
    Case(returns_dict, normal(4)),
    Case(returns_list, normal(4)),
    Case(returns_nested, normal(3, 3), wrt=(0, 1)),
    Case(builds_dict_and_reads, normal(5)),
    Case(builds_tuple_and_indexes, normal(4)),
]


# --- Attribute reads ----------------------------------------------------------------------

Params = namedtuple("Params", ["W", "b"])


def namedtuple_argument(params, x):
    return np.sum(np.tanh(x @ params.W + params.b) ** 2)


class Regressor:
    def __init__(self, W, scale):
        self.W = W
        self.scale = scale

    def predict(self, x):
        return np.tanh(x @ self.W)

    def loss(self, x):
        return self.scale * np.sum((x @ self.W) ** 2)

    def residual_loss(self, x, y):
        return np.mean((self.predict(x) - y) ** 2)

    def penalty(self, x, strength):
        return strength * np.sum(self.W ** 2) + np.sum(np.exp(x @ self.W) * self.scale)


REGRESSOR = Regressor(np.linspace(-1.0, 1.0, 6).reshape(3, 2), 0.5)


ATTRIBUTES = [
    Case(namedtuple_argument, lambda rng: (Params(rng.standard_normal((3, 2)),
                                                  rng.standard_normal(2)),
                                           rng.standard_normal(3)), wrt=(0, 1)),
    Case(REGRESSOR.loss, normal(3)),
    Case(REGRESSOR.residual_loss, normal((4, 3), (4, 2)), wrt=(0, 1)),
    Case(Regressor.penalty, lambda rng: (REGRESSOR, rng.standard_normal(3), 0.3), wrt=(1, 2)),
]


# --- Array methods, properties and NumPy functions -----------------------------------------

def method_sum(x):
    return x.sum() * np.sin(x).sum()


def method_sum_axis(X):
    return np.sin(X.sum(axis=0))


def method_sum_keepdims(X):
    return X / X.sum(axis=1, keepdims=True)


def method_mean(X):
    return np.sum((X - X.mean(axis=0)) ** 2) + X.mean() ** 2


def property_T(X, Y):
    return np.sum((X.T @ Y) ** 2)


def method_reshape(x):
    M = x.reshape(2, 3)
    return M @ M.T


def method_reshape_minus_one(X):
    return np.sum(X.reshape((X.shape[0], -1)) ** 2, axis=1)


def property_shape(x):
    n = x.shape[0]
    return np.sum(x) / n + x[n - 1] ** 2


def method_dot(x, W, y):
    return x.dot(W).dot(y) ** 2


def method_max(x):
    return x.max() * np.sum(x)


def method_max_axis(X):
    return X.max(axis=1) ** 2


def method_min(X):
    return np.sum(X.min(axis=0) ** 2)


def method_prod(x):
    return x.prod()


def method_ravel(X):
    v = X.ravel()
    return np.sum(v ** 2 * np.arange(v.size))


def method_flatten(X):
    return np.sin(X.flatten())[1:4]


def method_transpose(X):
    Y = X.transpose(2, 0, 1)
    Z = X.transpose()
    return np.sum(Y[1] ** 2) + np.sum(Z[0] * Z[1])


def method_clip(x):
    return np.sum(x.clip(-1.0, 1.0) ** 2 * x)


def method_var(X):
    return X.var() + np.sum(X.var(axis=0))


def method_std(x):
    return x.std()


def method_chain(X):
    return (X.T.reshape(-1) ** 2).mean()


def cumulative_sum(x):
    return np.sum(np.cumsum(x) ** 2)


def argmax_as_index(x):
    i = x.argmax()
    return x[i] * np.sum(x ** 2)


def numpy_where(x):
    return np.sum(np.where(x > 0, x ** 2, np.sin(x)))


def numpy_maximum(x, y):
    return np.sum(np.maximum(x, y) ** 2)


def numpy_concatenate_and_stack(x, y):
    z = np.concatenate([x, 2.0 * y])
    s = np.stack([x, y]).sum(axis=0)
    return np.sum(z ** 2) + np.sum(s * x)


def numpy_outer_and_trace(x, y):
    return np.trace(np.outer(x, y) @ np.outer(y, x))


def numpy_exp_log_sqrt(x):
    return np.sum(np.log(x) * np.sqrt(x) + np.exp(-x))


def numpy_linalg_norm(x):
    return np.linalg.norm(x) * x


def numpy_abs(x):
    return np.sum(np.abs(x) ** 1.5)


ARRAY_METHODS = [
    Case(method_sum, normal(4)),
    Case(method_sum_axis, normal((3, 4))),
    Case(method_sum_keepdims, uniform(0.5, 1.5, (3, 4))),
    Case(method_mean, normal((3, 4))),
    Case(property_T, normal((3, 2), (3, 4)), wrt=(0, 1)),
    Case(method_reshape, normal(6)),
    Case(method_reshape_minus_one, normal((2, 3, 2))),
    Case(property_shape, normal(4)),
    Case(method_dot, normal(3, (3, 4), 4), wrt=(0, 1, 2)),
    Case(method_max, normal(5)),
    Case(method_max_axis, normal((3, 4))),
    Case(method_min, normal((3, 4))),
    Case(method_prod, uniform(0.5, 1.5, 4)),
    Case(method_ravel, normal((2, 3))),
    Case(method_flatten, normal((2, 3))),
    Case(method_transpose, normal((2, 3, 4))),
    Case(method_clip, lambda rng: (np.array([-1.7, -0.4, 0.3, 0.8, 1.4]),)),
    Case(method_var, normal((3, 4))),
    Case(method_std, normal(5)),
    Case(method_chain, normal((2, 3))),
    Case(cumulative_sum, normal(5)),
    Case(argmax_as_index, normal(5)),
    Case(numpy_where, normal(6)),
    Case(numpy_maximum, normal(5, 5), wrt=(0, 1)),
    Case(numpy_concatenate_and_stack, normal(3, 3), wrt=(0, 1)),
    Case(numpy_outer_and_trace, normal(3, 3), wrt=(0, 1)),
    Case(numpy_exp_log_sqrt, uniform(0.5, 2.0, 4)),
    Case(numpy_linalg_norm, normal(3)),
    Case(numpy_abs, normal(5)),
]


# --- Subscripts as reads ------------------------------------------------------------------

def index_int(x):
    return x[0] * x[2] ** 2


def index_negative(x):
    return np.sin(x[-1]) * x[-2]


def slice_with_step(x):
    return np.sum(x[::2] * x[1::2])


def slice_reversed(x):
    return np.sum(x[::-1] * x ** 2)


def multi_axis_slice(X):
    return np.sum(X[1:3, ::2] ** 2)


def row_and_column(X):
    return np.sum(X[1] * X[:, 2])


def scalar_elements(X):
    return X[1, 2] * X[0, 0] + X[-1, -1] ** 2


def index_ellipsis(X):
    return np.sum(X[..., 1] ** 2) + X[0, ...].sum() ** 2


def index_newaxis(x, y):
    return np.sum((x[:, None] - y[None, :]) ** 2)


def index_integer_array(x):
    idx = np.array([0, 2, 2, 4])
    return np.sum(x[idx] ** 2)


def index_integer_list(X):
    return np.sum(X[[0, 2]] * X[[1, 1]])


def index_boolean_mask(x):
    return np.sum(x[x > 0] ** 2)


def index_mask_from_other(x, y):
    mask = y > 0.5
    return np.sum(np.exp(x[mask]))


def index_with_computed_int(x):
    middle = len(x) // 2
    return x[middle] * np.sum(x[:middle] ** 2)


SUBSCRIPTS = [
    Case(index_int, normal(4)),
    Case(index_negative, normal(4)),
    Case(slice_with_step, normal(8)),
    Case(slice_reversed, normal(5)),
    Case(multi_axis_slice, normal((4, 5))),
    Case(row_and_column, normal((4, 4))),
    Case(scalar_elements, normal((3, 3))),
    Case(index_ellipsis, normal((2, 3, 4))),
    Case(index_newaxis, normal(3, 4), wrt=(0, 1)),
    Case(index_integer_array, normal(5)),
    Case(index_integer_list, normal((3, 2))),
    Case(index_boolean_mask, normal(6)),
    Case(index_mask_from_other, lambda rng: (rng.standard_normal(6),
                                             np.array([0.1, 0.9, 0.7, -0.3, 1.2, 0.2]))),
    Case(index_with_computed_int, normal(5)),
]


# --- Subscript assignment into local arrays -----------------------------------------------

def rnn_hidden_states(x, W):
    T, n = x.shape
    h = np.zeros((T + 1, n))
    for t in range(T):
        h[t + 1] = np.tanh(h[t] @ W + x[t])
    return h


def subscript_augmented(x):
    out = np.zeros(3)
    for i in range(len(x)):
        out[i % 3] += x[i] ** 2
    return np.sum(np.sin(out))


def slice_assignment(x):
    y = np.zeros(6)
    y[1:4] = x[:3] ** 2
    y[4:] = np.sin(x[3:5])
    return y


def overwrite_element_read_later(x):
    y = x.copy()
    y[0] = y[0] * y[1]
    y[1] = np.sin(y[0]) + y[2]
    return np.sum(y ** 2)


def list_append_then_stack(x, W):
    states = []
    h = x
    for _ in range(3):
        h = np.tanh(h @ W)
        states.append(h)
    return np.stack(states)


def list_append_scalars(x):
    values = []
    for i in range(len(x)):
        values.append(x[i] * x[-1 - i])
    return np.array(values)


def mask_assignment(x):
    y = x.copy()
    y[y < 0] = 0.0
    return np.sum(y ** 2 * x)


def column_assignment(X, w):
    out = np.zeros_like(X)
    for j in range(X.shape[1]):
        out[:, j] = X[:, j] * w[j] ** 2
    return np.sum(np.sin(out))


def recurrence_in_place(x):
    y = np.zeros_like(x)
    y[0] = x[0]
    for i in range(1, len(x)):
        y[i] = 0.5 * y[i - 1] + x[i] ** 2
    return y


SUBSCRIPT_ASSIGNMENT = [
    Case(rnn_hidden_states, lambda rng: (rng.standard_normal((4, 3)),
                                         0.5 * rng.standard_normal((3, 3))), wrt=(0, 1)),
    Case(subscript_augmented, normal(7)),
    Case(slice_assignment, normal(5)),
    Case(overwrite_element_read_later, normal(4)),
    Case(list_append_then_stack, lambda rng: (rng.standard_normal(3),
                                              rng.standard_normal((3, 3))), wrt=(0, 1)),
    Case(list_append_scalars, normal(5)),
    Case(mask_assignment, normal(6)),
    Case(column_assignment, normal((3, 4), 4), wrt=(0, 1)),
    Case(recurrence_in_place, normal(5)),
]


# --- Complete models ----------------------------------------------------------------------

def logistic_regression_loss(w, b, X, y):
    logits = X @ w + b
    return np.mean(np.log1p(np.exp(-y * logits)))


def mlp_softmax_cross_entropy(params, X, labels):
    W1, b1, W2, b2 = params
    h = np.tanh(X @ W1 + b1)
    logits = h @ W2 + b2
    logits = logits - logits.max(axis=1, keepdims=True)
    log_probs = logits - np.log(np.sum(np.exp(logits), axis=1, keepdims=True))
    return -np.mean(log_probs[np.arange(len(labels)), labels])


def rnn_loss(params, xs, targets):
    h = np.zeros(params["Wh"].shape[0])
    loss = 0.0
    for x, target in zip(xs, targets):
        h = np.tanh(x @ params["Wx"] + h @ params["Wh"] + params["b"])
        loss += np.sum((h @ params["Wy"] - target) ** 2)
    return loss / len(xs)


def gaussian_log_likelihood(mu, log_sigma, x):
    sigma = np.exp(log_sigma)
    z = (x - mu) / sigma
    return np.sum(-0.5 * z ** 2 - log_sigma - 0.5 * np.log(2 * np.pi))


def rosenbrock(x):
    return np.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2)


def softplus_network(params, x):
    h = x
    for W, b in params:
        h = corpus_helpers.softplus(h @ W + b)
    return np.sum(h)


def logsumexp(x):
    m = np.max(x)
    return m + np.log(np.sum(np.exp(x - m)))


def logsumexp_rows(X):
    m = X.max(axis=1, keepdims=True)
    return (m + np.log(np.sum(np.exp(X - m), axis=1, keepdims=True))).ravel()


def layer_norm(x, gamma, beta):
    mean = x.mean(axis=-1, keepdims=True)
    var = x.var(axis=-1, keepdims=True)
    return gamma * (x - mean) / np.sqrt(var + 1e-5) + beta


def attention(Q, K, V):
    scores = Q @ K.T / np.sqrt(Q.shape[1])
    scores = scores - scores.max(axis=1, keepdims=True)
    weights = np.exp(scores)
    weights /= weights.sum(axis=1, keepdims=True)
    return weights @ V


def conv1d_loop(x, kernel):
    n = len(x) - len(kernel) + 1
    out = np.zeros(n)
    for i in range(n):
        out[i] = np.dot(x[i:i + len(kernel)], kernel)
    return np.sum(np.tanh(out))


def unrolled_gradient_descent(w, X, y):
    for _ in range(3):
        residual = X @ w - y
        w = w - 0.1 * X.T @ residual / len(y)
    return np.sum((X @ w - y) ** 2)


def huber_loss(prediction, target):
    r = prediction - target
    return np.sum(np.where(np.abs(r) <= 1.0, 0.5 * r ** 2, np.abs(r) - 0.5))


def kl_divergence(p_logits, q_logits):
    p = np.exp(p_logits) / np.sum(np.exp(p_logits))
    log_p = p_logits - np.log(np.sum(np.exp(p_logits)))
    log_q = q_logits - np.log(np.sum(np.exp(q_logits)))
    return np.sum(p * (log_p - log_q))


loss_as_lambda = lambda w: logistic_regression_loss(  # noqa: E731
    w, 0.1, np.linspace(-1.0, 1.0, 12).reshape(4, 3), np.array([1.0, -1.0, 1.0, -1.0]))


def _labels_and_signs(rng, n):
    return np.where(rng.standard_normal(n) > 0, 1.0, -1.0)


MODELS = [
    Case(logistic_regression_loss, lambda rng: (rng.standard_normal(3), 0.2,
                                                rng.standard_normal((8, 3)),
                                                _labels_and_signs(rng, 8)), wrt=(0, 1)),
    Case(mlp_softmax_cross_entropy,
         lambda rng: ((rng.standard_normal((3, 5)), rng.standard_normal(5),
                       rng.standard_normal((5, 4)), rng.standard_normal(4)),
                      rng.standard_normal((6, 3)), np.array([0, 3, 1, 2, 3, 0])),
         wrt="params"),
    Case(rnn_loss, lambda rng: ({"Wx": 0.5 * rng.standard_normal((2, 3)),
                                 "Wh": 0.5 * rng.standard_normal((3, 3)),
                                 "b": rng.standard_normal(3),
                                 "Wy": rng.standard_normal((3, 1))},
                                rng.standard_normal((4, 2)), rng.standard_normal((4, 1))),
         wrt=(0, 1)),
    Case(gaussian_log_likelihood, lambda rng: (0.3, -0.2, rng.standard_normal(10)),
         wrt=(0, 1)),
    Case(rosenbrock, lambda rng: (rng.uniform(-1.0, 1.0, 5),)),
    Case(softplus_network, lambda rng: ([(rng.standard_normal((3, 4)), rng.standard_normal(4)),
                                         (rng.standard_normal((4, 2)), rng.standard_normal(2))],
                                        rng.standard_normal(3)), wrt=(0, 1)),
    Case(logsumexp, lambda rng: (3.0 * rng.standard_normal(6),)),
    Case(logsumexp_rows, normal((3, 4))),
    Case(layer_norm, normal((2, 5), 5, 5), wrt=(0, 1, 2)),
    Case(attention, normal((3, 4), (5, 4), (5, 2)), wrt=(0, 1, 2)),
    Case(conv1d_loop, normal(7, 3), wrt=(0, 1)),
    Case(unrolled_gradient_descent, normal(3, (6, 3), 6), wrt=(0, 1, 2)),
    Case(huber_loss, lambda rng: (np.array([-2.3, -0.6, 0.1, 0.7, 1.8]), np.zeros(5)),
         wrt=(0, 1)),
    Case(kl_divergence, normal(4, 4), wrt=(0, 1)),
    Case(loss_as_lambda, normal(3)),
]


CASES = (ASSIGNMENT + AUGMENTED + UNPACKING + CONDITIONALS + FOR_LOOPS + WHILE_LOOPS + EXITS
         + CALLS + NESTED + RECURSION + GLOBALS + CONTAINERS + ATTRIBUTES + ARRAY_METHODS
         + SUBSCRIPTS + SUBSCRIPT_ASSIGNMENT + MODELS)
