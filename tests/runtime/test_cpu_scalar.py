"""Scalar graphs compiled into one native function (runtime/backends/llvm/cpu_scalar.py): values
against the graph's NumPy version to 1e-13, inf and nan as NumPy gives them, the fallback to
NumPy where it would warn, and repeated blocks rolled into loops
(runtime/backends/llvm/scalar_loops) with the adjoint reading the forward loop's tape backwards.
"""
import math
import time
import warnings

import numpy as np
import pytest

import autotrace
from autotrace.runtime.backends.llvm import compiler as llvm, cpu_scalar, cpu_scalar_ir
from autotrace.runtime.backends.llvm import scalar_loops
from autotrace.runtime.backends.llvm.scalar_loops import find_loops
from autotrace.runtime.execution.executor import compile_graph
from autotrace.runtime.ops import primitives
from autotrace.runtime.passes import optimize
from autotrace.runtime.tracing.tracer import trace

if not llvm.available():
    print("tests/runtime/test_cpu_scalar.py: skipped, llvmlite is not installed")
    pytest.skip("llvmlite is not installed: no compiled scalar graphs", allow_module_level=True)


@pytest.fixture(autouse=True)
def kernel_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("AUTOTRACE_CACHE_DIR", str(tmp_path))


def scalar_loop(x):
    for _ in range(100):
        x = np.sin(x) * 0.9 + 0.1 * x ** 2
    return x


def graph_of(function, *args):
    graph, _ = trace(function, args)
    return optimize(graph)


def assert_close(result, expected, rtol=1e-13):
    """Equal to `rtol` relative, with nan where NumPy has nan and infinities of its sign."""
    assert len(result) == len(expected)
    for got, want in zip(result, expected):
        assert type(got) is type(want), (got, want)
        if isinstance(want, np.bool_) or not np.isfinite(want):
            assert got == want or (np.isnan(got) and np.isnan(want)), (got, want)
        else:
            assert abs(got - want) <= rtol * abs(want), (got, want)


def scalar_loop_gradient_graph():
    gradient = autotrace.function(autotrace.grad(scalar_loop))
    return gradient.graph(np.asarray(0.5))


def test_scalar_loop_gradient_matches_numpy_rolled_and_straight():
    graph = scalar_loop_gradient_graph()
    numpy_version, _ = compile_graph(graph)
    # By hand: d/dx of x -> sin(x) * 0.9 + 0.1 * x**2, chained over the iterations.
    x, derivative = 0.5, 1.0
    for _ in range(100):
        derivative *= 0.9 * math.cos(x) + 0.2 * x
        x = math.sin(x) * 0.9 + 0.1 * x * x
    for roll in (False, True):
        run = cpu_scalar.compile_scalar_graph(graph, roll=roll)
        for value in (0.5, -1.25, 0.0, 3.0):
            assert_close(run(np.asarray(value)), numpy_version(np.asarray(value)))
        (gradient,) = run(np.asarray(0.5))
        assert abs(gradient - derivative) <= 1e-12 * abs(derivative)


def test_scalar_loop_gradient_rolls_forward_and_adjoint_with_a_reversed_tape():
    graph = scalar_loop_gradient_graph()
    forward, adjoint = find_loops(graph)
    assert (forward.period, adjoint.period) == (5, 6)  # (`b * 0.1 * 2` folded: `b * 0.2`)
    assert forward.count >= 98 and adjoint.count >= 97
    tape_steps = {source[5] for sources in adjoint.sources for source in sources
                  if source[0] == "tape"}
    assert tape_steps == {-1}  # iteration k of the adjoint reads iteration N - 1 - k's value
    assert forward.taped  # the values the adjoint reads are kept


def test_compile_time_of_the_scalar_loop_gradient_rolled_and_straight():
    graph = scalar_loop_gradient_graph()
    for roll in (False, True):
        ir, _ = cpu_scalar.scalar_kernel_ir(graph, "timed", roll, signal=True)
        start = time.perf_counter()
        llvm._compile_object(ir)
        print(f"scalar loop gradient ({len(graph.equations)} equations), roll={roll}: "
              f"{ir.count(chr(10))} lines of IR, compiled in "
              f"{1e3 * (time.perf_counter() - start):.1f} ms")


def reversed_sum(x):
    """A forward loop whose values a second loop reads last first: order matters (acc * 0.7)."""
    values = []
    for _ in range(40):
        x = np.sin(x) * 0.5 + 0.3
        values.append(x)
    total = x * 0.0
    for value in reversed(values):
        total = total * 0.7 + np.cos(value)
    return total


def test_a_loop_reading_an_earlier_loop_backwards_reads_its_tape_in_reverse():
    x = np.asarray(0.8)
    graph = graph_of(reversed_sum, x)
    loops = find_loops(graph)
    assert len(loops) == 2
    steps = {source[5] for sources in loops[1].sources for source in sources
             if source[0] == "tape"}
    assert steps == {-1}
    run = cpu_scalar.compile_scalar_graph(graph, roll=True)
    assert_close(run(x), (reversed_sum(x),))
    forwards = np.asarray(0.0)  # the same sum read first to last differs: the test can fail
    values = [x]
    for _ in range(40):
        values.append(np.sin(values[-1]) * 0.5 + 0.3)
    for value in values[1:]:
        forwards = forwards * 0.7 + np.cos(value)
    assert abs(run(x)[0] - forwards) > 1e-3


def nearly_repeated(x):
    for step in range(60):
        x = np.sin(x) * (0.91 if step == 30 else 0.9) + 0.1
    return x


def test_a_block_that_changes_once_is_not_rolled_over_the_change():
    x = np.asarray(0.3)
    graph = graph_of(nearly_repeated, x)
    changed = [index for index, equation in enumerate(graph.equations)
               if any(getattr(value, "value", None) == 0.91 for value in equation.inputs)]
    assert len(changed) == 1
    for loop in find_loops(graph):
        assert not loop.start <= changed[0] < loop.stop
    run = cpu_scalar.compile_scalar_graph(graph, roll=True)
    assert_close(run(x), (nearly_repeated(x),))


def reads_two_back(x):
    y = x * 0.5
    for _ in range(40):
        x, y = y * 0.9 + 0.1, x
    return x + y


def test_a_graph_without_a_repeating_data_flow_stays_straight_line():
    x = np.asarray(0.3)
    graph = graph_of(lambda a: np.sin(a) * 2.0 + np.exp(a) / 3.0 - a ** 3, x)
    assert find_loops(graph) == []
    run = cpu_scalar.compile_scalar_graph(graph, roll=True)
    assert_close(run(x), (np.sin(x) * 2.0 + np.exp(x) / 3.0 - x ** 3,))
    graph = graph_of(reads_two_back, x)  # each step reads the value of two steps back
    run = cpu_scalar.compile_scalar_graph(graph, roll=True)
    assert_close(run(x), (reads_two_back(x),))


# --- every op, on random expressions and special values -----------------------------------------

UNARY = ["sin", "cos", "tan", "arctan", "sinh", "cosh", "tanh", "exp", "expm1", "log", "log1p",
         "log2", "log10", "sqrt", "absolute", "negative", "square", "reciprocal", "cbrt", "exp2",
         "arcsinh"]
BINARY = ["add", "subtract", "multiply", "divide", "maximum", "minimum", "power", "arctan2",
          "hypot"]
COMPARISONS = ["less", "less_equal", "greater", "greater_equal", "equal", "not_equal"]
SPECIAL = [0.0, -0.0, 1.0, -2.5, 0.5, 1e-310, -1e308, 1e308, np.inf, -np.inf, np.nan, 3.0]


def random_expression(rng, depth):
    """A function of (x, y) built from random ops, and its text."""
    if depth == 0:
        choice = rng.integers(3)
        if choice == 2:
            constant = float(rng.choice([0.5, 2.0, -1.5, 3.0]))
            return (lambda x, y: constant), repr(constant)
        return ((lambda x, y: x), "x") if choice == 0 else ((lambda x, y: y), "y")
    kind = rng.integers(4)
    left, left_text = random_expression(rng, depth - 1)
    if kind == 0:
        name = str(rng.choice(UNARY))
        op = getattr(np, name)
        return (lambda x, y: op(left(x, y))), f"{name}({left_text})"
    right, right_text = random_expression(rng, depth - 1)
    if kind == 3:
        compare = getattr(np, str(rng.choice(COMPARISONS)))
        return ((lambda x, y: np.where(compare(left(x, y), right(x, y)), left(x, y), x)),
                f"where({compare.__name__}({left_text}, {right_text}), {left_text}, x)")
    name = str(rng.choice(BINARY))
    op = getattr(np, name)
    return (lambda x, y: op(left(x, y), right(x, y))), f"{name}({left_text}, {right_text})"


def test_random_expressions_on_special_values_match_numpy():
    rng = np.random.default_rng(7)
    compiled = 0
    for _ in range(40):
        expression, text = random_expression(rng, 3)

        def function(x, y):
            return expression(x, y), np.greater(x, y) | np.less(y, 0.0), x * 2.0

        x, y = np.asarray(0.7), np.asarray(-1.3)
        with np.errstate(all="ignore"):
            graph = graph_of(function, x, y)
        run = cpu_scalar.compile_scalar_graph(graph)
        if run is None:  # folded to constants, or an op without a lowering
            continue
        compiled += 1
        numpy_version, _ = compile_graph(graph)
        for a in SPECIAL:
            for b in SPECIAL[::3]:
                arguments = (np.asarray(a), np.asarray(b))
                with np.errstate(all="ignore"):
                    expected = numpy_version(*arguments)
                try:
                    assert_close(run(*arguments), expected, rtol=1e-13)
                except AssertionError as error:
                    raise AssertionError(f"{text} at x={a!r}, y={b!r}: {error}") from None
    assert compiled >= 30


def test_the_power_of_two_numbers_is_numpys_scalar_power():
    # `x ** y` on 0-d values is NumPy's scalar `**` (C's pow), not the power ufunc, which
    # takes a square root for ** 0.5: (-inf) ** 0.5 is inf, (-0.0) ** 0.5 is 0.0
    def function(x, y):
        return x ** y, (x * 2.0) ** 0.5, 2.0 ** x

    graph = graph_of(function, np.float64(0.7), np.float64(-1.3))  # NumPy scalars
    assert [e.primitive.name for e in graph.equations].count("scalar_power") == 3
    numpy_version, _ = compile_graph(graph)
    run = cpu_scalar.compile_scalar_graph(graph, fallback=numpy_version)
    assert run is not None
    for a in SPECIAL:
        for b in SPECIAL:
            x, y = np.float64(a), np.float64(b)
            with np.errstate(all="ignore"):
                expected = (x ** y, (x * 2.0) ** 0.5, 2.0 ** x)
                got = run(x, y)
            for mine, want in zip(got, expected):
                assert np.array_equal(mine, want, equal_nan=True), (a, b, mine, want)
                assert np.isnan(want) or np.signbit(mine) == np.signbit(want), (a, b)
    # on 0-d arrays `**` is the power ufunc; (x * 2.0) is a NumPy scalar all the same
    names = [e.primitive.name for e in graph_of(function, np.asarray(0.7),
                                                  np.asarray(-1.3)).equations]
    assert names.count("scalar_power") == 1 and names.count("power") == 2


def test_every_supported_op_is_in_the_random_table_or_tested_elsewhere():
    tested = set(UNARY) | set(BINARY) | set(COMPARISONS) | {"where", "bitwise_or",
                                                           "scalar_power"}
    supported = {name for name, primitive in primitives.items()
                 if cpu_scalar_ir.lowers(primitive)}
    rest = supported - tested
    assert rest <= {"positive", "fabs", "arcsin", "arccos", "arccosh", "arctanh", "logical_and",
                    "logical_xor", "logical_not", "bitwise_and", "bitwise_xor", "invert",
                    "logical_or", "full", "floor", "ceil", "trunc", "rint", "fmax", "fmin"}


def test_less_common_ops_match_numpy():
    def function(x, y):
        inside = np.clip(x, -0.9, 0.9) if False else x / (np.abs(x) + 1.0)
        flags = np.logical_and(x > y, np.logical_not(y > 0.0)) ^ (x < 0.0)
        flags = np.logical_or(np.logical_xor(flags, x > 1.0), ~(y < x) & (x > -1.0))
        return (np.arcsin(inside) + np.arccos(inside) + np.arctanh(inside)
                + np.arccosh(np.abs(x) + 1.0) + np.positive(y) + np.fabs(y), flags,
                np.floor(x) + np.ceil(y) + np.trunc(x) + np.rint(y * 2.5),
                np.fmax(x, y) + np.fmin(y, x))

    x, y = np.asarray(0.3), np.asarray(-0.2)
    graph = graph_of(function, x, y)
    run = cpu_scalar.compile_scalar_graph(graph)
    numpy_version, _ = compile_graph(graph)
    for a in SPECIAL:
        for b in SPECIAL:
            arguments = (np.asarray(a), np.asarray(b))
            with np.errstate(all="ignore"):
                expected = numpy_version(*arguments)
            assert_close(run(*arguments), expected)


# --- where NumPy would warn, it runs --------------------------------------------------------------

def test_with_a_fallback_an_inf_or_nan_runs_numpy_which_warns():
    graph = graph_of(lambda x: np.log(x) * 2.0 + np.exp(x), np.asarray(1.0))
    numpy_version, _ = compile_graph(graph)
    run = cpu_scalar.compile_scalar_graph(graph, fallback=numpy_version)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert_close(run(np.asarray(2.0)), numpy_version(np.asarray(2.0)))
    with pytest.warns(RuntimeWarning, match="divide by zero encountered in log"):
        (result,) = run(np.asarray(0.0))
    assert result == -np.inf
    without = cpu_scalar.compile_scalar_graph(graph)  # values only, as NumPy's
    assert without(np.asarray(0.0)) == (-np.inf,)


def test_with_a_fallback_numpy_decides_when_underflow_is_not_ignored():
    graph = graph_of(lambda x: x * 1e-300 * 1e-300 + 1.0, np.asarray(1.0))
    numpy_version, _ = compile_graph(graph)
    run = cpu_scalar.compile_scalar_graph(graph, fallback=numpy_version)
    assert run(np.asarray(1.0)) == (1.0,)
    with np.errstate(under="raise"):
        with pytest.raises(FloatingPointError, match="underflow"):
            run(np.asarray(1.0))


def test_graphs_it_does_not_take():
    vector = graph_of(lambda x: np.sin(x) * 2.0, np.ones(3))
    assert cpu_scalar.compile_scalar_graph(vector) is None
    float16 = graph_of(lambda x: np.sin(x) * 2.0, np.asarray(1.0, np.float16))
    assert cpu_scalar.compile_scalar_graph(float16) is None
    reduction = graph_of(lambda x: np.sum(x) * 2.0, np.asarray(1.0))
    assert cpu_scalar.compile_scalar_graph(reduction) is None


def test_outputs_that_are_inputs_constants_and_several_values():
    def function(x, y):
        return x, y * 2.0, np.sin(y), y > 0.5

    x, y = np.asarray(0.25), np.asarray(0.75)
    graph = graph_of(function, x, y)
    run = cpu_scalar.compile_scalar_graph(graph)
    result = run(x, y)
    assert result[0] is x
    assert_close(result[1:], (np.float64(1.5), np.sin(y), np.True_))


def test_inputs_the_equations_do_not_read_pass_through():
    def function(x, table, flag):
        return np.cos(x) * 3.0, table, np.logical_not(flag)

    x, table, flag = np.asarray(0.5), np.arange(3.0), np.asarray(True)
    graph = graph_of(function, x, table, flag)
    run = cpu_scalar.compile_scalar_graph(graph)
    cosine, same_table, negated = run(x, table, flag)
    assert same_table is table and negated == np.False_ and type(negated) is np.bool_
    assert abs(cosine - np.cos(0.5) * 3.0) <= 1e-15


# --- random loops: gradients rolled, straight-line and NumPy agree -------------------------------

STEPS = [  # contracting maps of (x, y), so that 30 iterations stay well conditioned
    lambda x, y: 0.5 * np.sin(x) + 0.25 * y,
    lambda x, y: 0.5 * np.tanh(x * y) + 0.1,
    lambda x, y: np.where(x > y, 0.5 * x, 0.25 * y * y),
    lambda x, y: 0.3 * np.cos(y) - 0.2 * x / (1.0 + x * x),
    lambda x, y: 0.5 * np.exp(-x * x) + 0.1 * np.maximum(x, y),
    lambda x, y: 0.25 * np.sqrt(x * x + 1.0) - 0.1 * np.log1p(y * y),
]


def random_loop(rng):
    first, second = rng.choice(len(STEPS), 2)
    steps = int(rng.integers(8, 30))
    f, g = STEPS[first], STEPS[second]

    def loop(x, y):
        for _ in range(steps):
            x, y = f(x, y), g(x, y)
        return x * y + x
    return loop, f"steps {first}, {second} x{steps}"


def test_random_loop_gradients_rolled_straight_and_numpy_agree():
    rng = np.random.default_rng(3)
    rolled_loops = 0
    for _ in range(12):
        loop, text = random_loop(rng)
        gradient = autotrace.function(autotrace.grad(loop, wrt=(0, 1)))
        arguments = (np.asarray(0.3), np.asarray(-0.4))
        graph = gradient.graph(*arguments)
        numpy_version, _ = compile_graph(graph)
        rolled_loops += len(find_loops(graph)) > 0
        rolled = cpu_scalar.compile_scalar_graph(graph, roll=True)
        straight = cpu_scalar.compile_scalar_graph(graph, roll=False)
        for values in ((0.3, -0.4), (1.1, 0.7), (-2.0, 0.05)):
            arguments = tuple(map(np.asarray, values))
            expected = numpy_version(*arguments)
            try:
                assert_close(rolled(*arguments), expected, rtol=1e-13)
                assert_close(straight(*arguments), expected, rtol=1e-13)
            except AssertionError as error:
                raise AssertionError(f"{text} at {values}: {error}") from None
    assert rolled_loops >= 8


def scaled_loop(x, w):
    for _ in range(30):
        x = np.sin(x) * w + 0.1
    return x


def test_a_value_from_before_the_loop_read_by_every_iteration():
    gradient = autotrace.function(autotrace.grad(scaled_loop, wrt=(0, 1)))
    arguments = (np.asarray(0.4), np.asarray(0.8))
    graph = gradient.graph(*arguments)
    kinds = {source[0] for loop in find_loops(graph) for sources in loop.sources
             for source in sources}
    assert {"outer", "carried", "tape"} <= kinds  # w, read by every iteration, is "outer"
    run = cpu_scalar.compile_scalar_graph(graph, roll=True)
    numpy_version, _ = compile_graph(graph)
    for values in ((0.4, 0.8), (-1.0, 0.3), (2.0, -0.9)):
        arguments = tuple(map(np.asarray, values))
        assert_close(run(*arguments), numpy_version(*arguments))


def growing(x):
    for _ in range(40):
        x = np.exp(x * 0.5) * 0.5 - 1.0
    return x


def test_an_overflow_inside_a_rolled_loop_runs_numpy_which_warns():
    x = np.asarray(0.1)
    graph = graph_of(growing, x)
    assert find_loops(graph)
    numpy_version, _ = compile_graph(graph)
    run = cpu_scalar.compile_scalar_graph(graph, fallback=numpy_version, roll=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert_close(run(x), numpy_version(x))
    with np.errstate(all="ignore"):
        expected = numpy_version(np.asarray(2000.0))
    with pytest.warns(RuntimeWarning, match="overflow encountered in exp"):
        result = run(np.asarray(2000.0))
    assert result == expected == (np.inf,)


@pytest.mark.parametrize("name", ["maximum", "minimum"])
def test_maximum_and_minimum_of_signed_zeros_are_numpys(name):
    """Of two equal values NumPy's maximum and minimum give the second: -0.0 for (0.0, -0.0)."""
    function = getattr(np, name)

    def f(x, y):
        return function(x * 1.0, y * 1.0)

    graph = optimize(trace(f, (np.asarray(0.0), np.asarray(-0.0)))[0])
    run = cpu_scalar.compile_scalar_graph(graph)
    for x, y in [(0.0, -0.0), (-0.0, 0.0), (1.0, 1.0), (np.nan, 0.0), (0.0, np.nan)]:
        [got] = run(np.asarray(x), np.asarray(y))
        wanted = function(np.float64(x), np.float64(y))
        assert np.array_equal(got, wanted, equal_nan=True) and \
            np.signbit(got) == np.signbit(wanted), (x, y, got, wanted)


def where_loop(a):
    s = a
    for _ in range(300):
        s = np.where(s > 0.3, np.sin(s * 1.01) + 0.2, np.cos(s) * 1.5)
    return s


def test_the_search_for_loops_walks_a_bounded_number_of_equations(monkeypatch):
    """Blocks whose keys repeat but whose loops are refused (a bool value read after the loop
    cannot be taped) must not be walked again from every equation."""
    traced = autotrace.function(autotrace.grad(where_loop))
    x = np.array(0.7)
    graph = traced.graph(x)
    walked = [0]
    fits = scalar_loops._fits

    def counting(*args):
        walked[0] += 1
        return fits(*args)

    monkeypatch.setattr(scalar_loops, "_fits", counting)
    find_loops(graph, taped_ok=lambda var: var.aval.dtype == np.float64)
    assert walked[0] <= scalar_loops.SEARCH_BUDGET * len(graph.equations) + \
        scalar_loops.MAX_PERIOD, (walked[0], len(graph.equations))
    np.testing.assert_allclose(traced(x), autotrace.grad(where_loop)(x), rtol=1e-13)
