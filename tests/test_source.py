"""The generated source: golden text for small functions, and how it is registered and run.

Each golden is a file tests/golden/<name>.py holding exactly what `autotrace.source` prints for
a function of tests/golden_functions.py. Read a golden as a person would before accepting it:
the primal sweep, then the adjoint sweep; each adjoint block under a `# Grad of line N: ...`
comment quoting the user's line; the gradient of `x` named `bx`; nothing pushed that the
adjoint sweep does not pop and read. When the generated code changes on purpose, rewrite the
goldens with

    AUTOTRACE_UPDATE_GOLDENS=1 python -m pytest tests/test_source.py

and review the diff of tests/golden/ like any other code change.
"""
import collections
import inspect
import linecache
import os
import re
import traceback
from pathlib import Path

import numpy as np
import pytest

import autotrace
from autotrace.testing import check_grads
from tests import golden_functions as functions

GOLDEN_DIR = Path(__file__).resolve().parent / "golden"
UPDATE = os.environ.get("AUTOTRACE_UPDATE_GOLDENS") == "1"


def arguments(rng):
    """Arguments for each golden function, by name."""
    return {
        "straight_line": (rng.standard_normal(3), rng.standard_normal(3)),
        "branch": (rng.standard_normal(4),),
        "loop": (rng.standard_normal(3), 3),
        "while_loop": (rng.uniform(0.5, 1.0, 3),),
        "calls_user_function": (rng.standard_normal(3), rng.standard_normal(3)),
        "fill_from_dot": (rng.uniform(-0.5, 0.5, 3),),
        "slices": (rng.standard_normal((3, 4)),),
        "name_scopes": (rng.standard_normal(3), rng.standard_normal(3)),
    }


ARGUMENTS = arguments(np.random.default_rng(0))

# (golden file name, function, grad keyword arguments)
GOLDENS = [
    ("straight_line", functions.straight_line, {}),
    ("straight_line_unoptimized", functions.straight_line, {"optimized": False}),
    ("branch", functions.branch, {}),
    ("loop", functions.loop, {}),
    ("while_loop", functions.while_loop, {}),
    ("calls_user_function", functions.calls_user_function, {}),
    ("fill_from_dot", functions.fill_from_dot, {}),
    ("slices", functions.slices, {}),
    ("name_scopes", functions.name_scopes, {}),
]


def assert_matches_golden(name: str, source: str):
    path = GOLDEN_DIR / f"{name}.py"
    if UPDATE:
        GOLDEN_DIR.mkdir(exist_ok=True)
        path.write_text(source)
    assert path.exists(), f"no golden {path}; run with AUTOTRACE_UPDATE_GOLDENS=1 to write it"
    assert source == path.read_text()


@pytest.mark.parametrize("name, function, options", GOLDENS, ids=[g[0] for g in GOLDENS])
def test_generated_source_matches_golden(name, function, options):
    assert_matches_golden(name, autotrace.source(autotrace.grad(function, **options)))


def test_derivative_of_called_user_function_matches_golden():
    """calls_user_function's gradient calls a generated `dscale_by_cosine`, for `a` only."""
    derivative = autotrace.grad(functions.calls_user_function)
    # autotrace's own names are closure variables of the derivative (its globals are those
    # of the user's module).
    called = inspect.getclosurevars(derivative).nonlocals["dscale_by_cosine"]
    assert_matches_golden("scale_by_cosine", autotrace.source(called))


@pytest.mark.parametrize("function", [g[1] for g in GOLDENS[::2]] + [functions.slices],
                         ids=lambda f: f.__name__)
def test_golden_functions_have_right_gradients(function):
    """A golden is only worth freezing if the code it shows is right."""
    check_grads(function, ARGUMENTS[function.__name__], order=2)


def golden_texts():
    return [(path.name, path.read_text()) for path in sorted(GOLDEN_DIR.glob("*.py"))]


def test_every_golden_is_tested():
    names = {g[0] for g in GOLDENS} | {"scale_by_cosine"}
    assert {path.stem for path in GOLDEN_DIR.glob("*.py")} == names


@pytest.mark.parametrize("name, text", golden_texts(), ids=[n for n, _ in golden_texts()])
def test_golden_comments_quote_the_user_lines(name, text):
    """`# Grad of line N: <code>` quotes line N of golden_functions.py, and comes after the
    primal sweep; `# Primal sweep` comes before `# Adjoint sweep`."""
    compile(text, name, "exec")
    assert text.index("# Primal sweep") < text.index("# Adjoint sweep")
    quoted = re.findall(r"# Grad of line (\d+): (.*)", text)
    assert quoted
    for line, code in quoted:
        assert text.index(f"# Grad of line {line}:") > text.index("# Adjoint sweep")
        assert linecache.getline(functions.__file__, int(line)).strip() == code


def test_multi_axis_subscripts_print_as_python():
    source = autotrace.source(autotrace.grad(functions.slices))
    for subscript in ("x[1:3, ::2]", "x[..., None]", "x[:, 0]"):
        assert subscript in source
    # The adjoint passes the same subscripts to helpers as values.
    for value in ("(slice(1, 3), slice(None, None, 2))", "(..., None)", "(slice(None, None), 0)"):
        assert value in source
    compile(source, "<slices>", "exec")


# --- How generated code is registered and run ------------------------------------------------

def divide(x, y):
    return np.sum(x / y)


def test_generated_source_is_registered_with_linecache():
    derivative = autotrace.grad(functions.straight_line)
    filename = derivative.__code__.co_filename
    assert re.fullmatch(r"<autotrace dstraight_line #\d+>", filename)
    assert inspect.getsource(derivative) == autotrace.source(derivative)
    assert "".join(linecache.getlines(filename)) == autotrace.source(derivative)


def test_traceback_shows_the_generated_line():
    derivative = autotrace.grad(divide)
    source = autotrace.source(derivative)
    division = [line.strip() for line in source.splitlines()
                if "x / y" in line and not line.strip().startswith("#")]
    assert len(division) == 1, source
    with pytest.raises(ValueError):
        try:
            derivative(np.ones(3), np.ones(4))
        except ValueError:
            shown = traceback.format_exc()
            raise
    assert f'File "{derivative.__code__.co_filename}", line ' in shown
    assert division[0] in shown


def test_source_of_a_plain_function_is_refused():
    with pytest.raises(TypeError, match="was not generated by autotrace"):
        autotrace.source(divide)


def test_value_and_grad_returns_value_and_gradient():
    x, y = ARGUMENTS["straight_line"]
    value, gradient = autotrace.value_and_grad(functions.straight_line)(x, y)
    assert value == functions.straight_line(x, y)
    np.testing.assert_array_equal(gradient, autotrace.grad(functions.straight_line)(x, y))
    value, gradients = autotrace.value_and_grad(functions.straight_line, wrt=(0, 1))(x, y)
    assert isinstance(gradients, tuple) and len(gradients) == 2


def test_gradient_of_a_python_float_is_a_python_float():
    gradient = autotrace.grad(functions.straight_line, wrt=1)(np.ones(3), 0.5)
    assert type(gradient) is float
    assert gradient == pytest.approx(2 * np.sum(np.ones(3) * 0.5 + np.sin(1.0)))
    value, gradient = autotrace.value_and_grad(functions.while_loop)(2.0)
    assert type(gradient) is float


@pytest.mark.parametrize("function", [g[1] for g in GOLDENS[::2]] + [functions.slices],
                         ids=lambda f: f.__name__)
def test_unoptimized_source_is_longer_and_gives_the_same_gradient(function):
    args = ARGUMENTS[function.__name__]
    optimized = autotrace.grad(function)
    unoptimized = autotrace.grad(function, optimized=False)
    assert len(autotrace.source(unoptimized)) > len(autotrace.source(optimized))
    np.testing.assert_allclose(unoptimized(*args), optimized(*args), rtol=1e-12, atol=1e-12)


# --- Known problems ------------------------------------------------------------------------

def scatter(x):
    out = np.zeros(3)
    for i in range(3):
        out[i] = x[i] * 2.0
    return out


def test_value_and_grad_of_a_function_returning_an_array_filled_in_a_loop():
    x = np.array([1.0, 2.0, 3.0])
    value, gradient = autotrace.value_and_grad(scatter)(x)
    np.testing.assert_array_equal(gradient, [2.0, 2.0, 2.0])
    np.testing.assert_array_equal(value, [2.0, 4.0, 6.0])


def test_no_restore_when_the_adjoint_does_not_read_the_array():
    source = autotrace.source(autotrace.grad(scatter))
    assert "read_item" not in source and "restore_item" not in source


SQUARES_AND_CUBES = {"square": lambda x: x * x,
                     "cube": lambda x: x ** 3}


def test_lambdas_inside_multi_line_expressions_are_found():
    assert autotrace.grad(SQUARES_AND_CUBES["cube"])(2.0) == 12.0
    assert autotrace.grad(SQUARES_AND_CUBES["square"])(2.0) == 4.0
    largest = max(0.0,
                  autotrace.grad(lambda y: y * y * y)(3.0))
    assert largest == 27.0


# --- Values the adjoint sweep reads only the shape of -------------------------------------------

def recurrence(W, b, xs):
    # The adjoint sweep reads `pre` (and `h @ W`) only through unbroadcast, for their shapes;
    # it reads h's values (in tanh's rule and the product's). b broadcasts h from (4,) to (2, 4)
    # in the first step, so the gradients of `pre` and `b` are sums over broadcast rows.
    h = np.zeros(W.shape[0])
    for x in xs:
        pre = h @ W + x
        h = np.tanh(pre + b)
    return np.sum(h ** 2)


def test_values_read_only_for_their_shape_are_pushed_as_shape_only():
    source = autotrace.source(autotrace.grad(recurrence))
    pushes = re.findall(r"_stack1\.append\((.*)\)", source)
    assert pushes == ["shape_only(_t5)", "shape_only(pre)", "h"]


def test_shape_only_pushes_give_the_gradients_of_full_pushes():
    rng = np.random.default_rng(3)
    W, xs = 0.3 * rng.standard_normal((4, 4)), rng.standard_normal((6, 4))
    b = 0.1 * rng.standard_normal((2, 4))       # makes h (and `pre`) 2x4 after the first step
    for wrt in (0, 1, 2):
        optimized = autotrace.grad(recurrence, wrt=wrt)(W, b, xs)
        unoptimized = autotrace.grad(recurrence, wrt=wrt, optimized=False)(W, b, xs)
        np.testing.assert_allclose(optimized, unoptimized, rtol=1e-12)
    check_grads(recurrence, (W, b, xs), wrt=(0, 1, 2), order=2, modes=("reverse", "forward"))


def test_shape_only_keeps_no_array_alive():
    from autotrace.runtime.derivatives.items import shape_only
    x = np.arange(12.0).reshape(3, 4)
    stand_in = shape_only(x)
    assert stand_in.shape == (3, 4) and stand_in.dtype == np.float64
    assert stand_in.strides == (0, 0) and not stand_in.flags.writeable
    assert not np.shares_memory(stand_in, x) and np.all(stand_in == 0)
    assert shape_only(np.ones((3, 4), np.float32)).dtype == np.float32
    for kept in (2.5, [1.0, 2.0], np.ones(1), np.float64(3.0), np.ones((2, 2), bool)[:0]):
        assert shape_only(kept) is kept


# --- Local names shadow globals -----------------------------------------------------------------

def _doubled(z):
    return 2.0 * z


def _hundredfold(z):
    return 100.0 * z


apply_scale = _hundredfold  # a global that the local name below shadows


def shadowed_call(x):
    apply_scale = _doubled
    return apply_scale(x) * 1.0


def parameter_call(apply_scale, x):
    return apply_scale(x) * x


def test_a_local_name_is_not_resolved_as_the_global_it_shadows():
    assert shadowed_call(3.0) == 6.0
    assert autotrace.grad(shadowed_call)(3.0) == 2.0
    value, tangent = autotrace.jvp(shadowed_call, (3.0,), (1.0,))
    assert (value, tangent) == (6.0, 2.0)
    assert autotrace.grad(parameter_call, wrt=1)(_doubled, 3.0) == 12.0


# --- Namedtuples built inside the function ------------------------------------------------------

Point = collections.namedtuple("Point", "a b c", defaults=(1.0,))


def through_points(x):
    p = Point(x * 3.0, b=x * x)          # keyword and default fields too
    q = Point(p.a * 2.0, p.b, c=p.c)
    return np.sum(q.a + q.b * p.c + np.sin(p.a))


def test_a_namedtuple_built_inside_carries_its_fields_gradients():
    x = np.array([0.5, -1.0, 2.0])
    np.testing.assert_allclose(autotrace.grad(through_points)(x), 6 + 2 * x + 3 * np.cos(3 * x))
    assert "build_namedtuple(Point, (" in autotrace.source(autotrace.grad(through_points))
    check_grads(through_points, (x,), order=2, modes=("reverse", "forward"))
    np.testing.assert_allclose(autotrace.function(autotrace.grad(through_points))(x),
                               autotrace.grad(through_points)(x))


def flattened_then_written(x):
    y = x.flatten()
    y[0] = 0.0      # flatten copies: x keeps its values
    return np.sum(y * x.flatten())


def test_flatten_is_a_copy_that_may_be_written():
    x = np.arange(1.0, 7.0).reshape(2, 3)
    expected = 2 * x
    expected[0, 0] = 0.0
    for gradient in (autotrace.grad(flattened_then_written),
                     autotrace.function(autotrace.grad(flattened_then_written))):
        np.testing.assert_allclose(gradient(x), expected)
        np.testing.assert_array_equal(x, np.arange(1.0, 7.0).reshape(2, 3))
    check_grads(flattened_then_written, (x,), modes=("reverse", "forward"))


def flattened_then_written_then_flattened_again(x):
    y = x.flatten()
    y[0] = 100.0  # the copy only: x.flatten() below still starts with x[0, 0]
    return np.sum(y * x.flatten())


def test_flatten_copies_in_the_derivative_too():
    x = np.arange(1.0, 7.0).reshape(2, 3)
    expected = 2 * x
    expected[0, 0] = 100.0
    for transformed in (autotrace.value_and_grad(flattened_then_written_then_flattened_again),
                        autotrace.function(autotrace.value_and_grad(
                            flattened_then_written_then_flattened_again))):
        value, gradient = transformed(x)
        assert value == flattened_then_written_then_flattened_again(x) == 190.0
        np.testing.assert_allclose(gradient, expected)
        np.testing.assert_array_equal(x, np.arange(1.0, 7.0).reshape(2, 3))
