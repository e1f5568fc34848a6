"""UniformConstants and IntegerPowers (runtime/passes/scalars.py): the graphs they make, their
values against NumPy's (special values and dtypes included), and where they must not fire."""
import numpy as np
import pytest

import autotrace
from autotrace.runtime.graph import Constant
from autotrace.runtime.passes import PASSES, BufferReuse, optimize
from autotrace.runtime.passes.scalars import scalar_exponent_agrees
from autotrace.runtime.tracing.tracer import trace
from tests.runtime.helpers import compiled

SPECIAL = [np.inf, -np.inf, np.nan, 0.0, -0.0]
rng = np.random.default_rng(7)
# Spread over signs and magnitudes, away from results below the smallest normal number.
SPREAD = np.concatenate([rng.standard_normal(200) * 10.0, rng.uniform(-1e-3, 1e-3, 50),
                         [1.0, -1.0, 2.0, 1e15, -3e-9]])
VALUES = np.concatenate([SPREAD, SPECIAL])


def optimized_text(function, *args) -> str:
    """The graph after every pass but BufferReuse, whose `out=` would only add noise here."""
    passes = [graph_pass for graph_pass in PASSES if not isinstance(graph_pass, BufferReuse)]
    return str(optimize(trace(function, args)[0], passes))


def body(function, *args) -> list:
    """The optimized graph's equations, one string each (the golden form of these tests)."""
    return [line.strip() for line in optimized_text(function, *args).splitlines()[1:-1]]


def assert_like_numpy(result, expected, rtol):
    """Same dtype and shape; inf, nan and the sign of every value (zeros too) as NumPy's; finite
    values within `rtol`."""
    result, expected = np.asarray(result), np.asarray(expected)
    assert result.dtype == expected.dtype and result.shape == expected.shape
    if result.dtype.kind in "iub":
        np.testing.assert_array_equal(result, expected)
        return
    if result.dtype.kind == "c":
        assert_like_numpy(result.real, expected.real, rtol)
        assert_like_numpy(result.imag, expected.imag, rtol)
        return
    np.testing.assert_array_equal(np.isnan(result), np.isnan(expected))
    np.testing.assert_array_equal(np.isinf(result), np.isinf(expected))
    np.testing.assert_array_equal(np.signbit(result), np.signbit(expected))
    finite = np.isfinite(expected)
    np.testing.assert_allclose(result[finite], expected[finite], rtol=rtol, atol=0)


def power_of(exponent):
    return lambda x: np.power(x, exponent)


# --- integer powers -----------------------------------------------------------------------------

def test_a_cube_is_a_square_and_a_multiply():
    assert body(lambda x: x ** 3, VALUES) == ["b:f64[260] = square a",
                                              "c:f64[260] = multiply a b"]


@pytest.mark.parametrize("exponent, equations", [
    (2, ["b:f64[3] = square a"]),
    (4, ["b:f64[3] = square a", "c:f64[3] = square b"]),
    (6, ["b:f64[3] = square a", "c:f64[3] = square b", "d:f64[3] = multiply b c"]),
    (7, ["b:f64[3] = square a", "c:f64[3] = multiply a b", "d:f64[3] = square b",
         "e:f64[3] = multiply c d"]),
    (-1, ["b:f64[3] = divide 1.0 a"]),
    (-3, ["b:f64[3] = divide 1.0 a", "c:f64[3] = square b", "d:f64[3] = multiply b c"]),
    (0.5, ["b:f64[3] = sqrt a"]),
])
def test_power_graphs(exponent, equations):
    assert body(power_of(exponent), np.ones(3)) == equations


EXPONENTS = [2, 3, 4, 5, 6, 7, 8, 11, 16, -1, -2, -3, -5, -8, -16, 2.0, 3.0, -1.0, 0.5]


@pytest.mark.parametrize("exponent", EXPONENTS)
@pytest.mark.parametrize("dtype, rtol", [(np.float64, 1e-13), (np.float32, 4e-6)])
def test_powers_as_multiplies_agree_with_numpy(exponent, dtype, rtol):
    x = VALUES.astype(dtype)
    if abs(exponent) > 8:
        x = np.concatenate([x[np.abs(x) < 30.0], SPECIAL]).astype(dtype)  # stays in range
    call, source = compiled(power_of(exponent), x)
    assert "np.power" not in source
    with np.errstate(all="ignore"):
        assert_like_numpy(call(x), np.power(x, exponent), rtol)


@pytest.mark.parametrize("x, exponent, expected", [
    (np.inf, 3, np.inf), (-np.inf, 3, -np.inf), (np.nan, 3, np.nan), (-0.0, 3, -0.0),
    (0.0, -1, np.inf), (-0.0, -1, -np.inf), (-0.0, -3, -np.inf), (-0.0, -2, np.inf),
    (-np.inf, -3, -0.0), (np.inf, -2, 0.0), (-0.0, 0.5, -0.0),
])
def test_special_values_of_powers(x, exponent, expected):
    array = np.array([x, 1.0])
    call, _ = compiled(power_of(exponent), array)
    with np.errstate(all="ignore"):
        result = call(array)
        assert_like_numpy(result, np.power(array, exponent), 0)
    assert_like_numpy(result[:1], np.array([expected]), 0)


def test_a_zero_dimensional_constant_exponent_of_the_same_kind():
    x = VALUES
    call, source = compiled(lambda x: np.power(x, np.int64(3)), x)
    assert "np.power" not in source
    assert_like_numpy(call(x), np.power(x, np.int64(3)), 1e-13)


def test_integer_powers_of_integer_arrays_wrap_as_numpy_does():
    for x in (np.arange(-50, 50, dtype=np.int8), np.arange(-5, 5) * 100_003):
        for exponent in (2, 3, 5, 16):
            call, source = compiled(power_of(exponent), x)
            assert "np.power" not in source
            assert_like_numpy(call(x), np.power(x, exponent), 0)


@pytest.mark.parametrize("function, x", [
    (power_of(-2), np.arange(1, 4)),                              # NumPy raises: kept
    (power_of(3.0), np.arange(1, 4)),                             # an int array to a float
    (power_of(np.float64(3.0)), np.ones(3, np.float32)),          # f32 ** f64 scalar is f64
    (power_of(3), np.ones(3, np.float16)),                        # rounds at each multiply
    (power_of(3), np.ones(3, np.longdouble)),
    (power_of(3), np.ones(3, np.complex128)),
    (power_of(17), np.ones(3)), (power_of(-17), np.ones(3)),      # too many multiplies
    (power_of(2.5), np.ones(3)), (power_of(-0.5), np.ones(3)), (power_of(0), np.ones(3)),
    (power_of(2), np.ones(3, bool)),                              # bool ** 2 is int8
    (lambda x: np.power(x, x), np.ones(3)),
    (lambda x: np.power(2.0, x), np.ones(3)),
])
def test_powers_that_stay(function, x):
    assert any(" = power " in line for line in body(function, x))
    call, _ = compiled(function, x)
    try:
        with np.errstate(all="ignore"):
            expected = function(x)
    except ValueError as error:
        with pytest.raises(ValueError, match=str(error)):
            call(x)
        return
    assert_like_numpy(call(x), expected, 0)


# --- uniform constants --------------------------------------------------------------------------

x3 = np.array([1.5, -2.0, 0.25])


@pytest.mark.parametrize("function, x, equations", [
    (lambda x: x * np.full(3, 2.0), x3, ["b:f64[3] = multiply a 2.0"]),
    (lambda x: np.full((2, 3), 0.5) - x, x3, ["b:f64[2,3] = subtract const0:f64[2,3] a"]),
    (lambda x: x * np.full(3, 3), np.arange(3), ["b:i64[3] = multiply a 3"]),
    # NumPy 2: f32 array * f64 array is f64, as with an f64 scalar; with a Python float, f32
    (lambda x: x * np.ones(3), x3.astype(np.float32), ["b:f64[3] = multiply a 1.0:f64[]"]),
    (lambda x: x + np.full(3, 5), np.arange(3, dtype=np.int8), ["b:i64[3] = add a 5:i64[]"]),
    (lambda x: x * np.full(3, 0.5, np.float32), np.arange(3, dtype=np.int16),
     ["b:f32[3] = multiply a 0.5:f32[]"]),
    (lambda x: x + np.full(3, 0.5, np.float16), x3.astype(np.float32),
     ["b:f32[3] = add a 0.5"]),
    # x + -0.0 is x; NumPy's result is a new array, so the output is a copy (FreshOutputs)
    (lambda x: x + np.full(3, -0.0), x3, ["b:f64[3] = copy a"]),
    (lambda x: x * np.full(3, np.nan), x3, ["b:f64[3] = multiply a nan"]),
    (lambda x: x * np.array([0.0, -0.0, 0.0]), x3, ["b:f64[3] = multiply a const0:f64[3]"]),
    (lambda x: x * np.ones(3), np.float64(2.0), ["b:f64[3] = multiply a const0:f64[3]"]),
    (lambda x: np.maximum(x, np.zeros(3)), x3, ["b:f64[3] = maximum a 0.0"]),
    # an array `full` makes from a traced one (a derivative's zero gradient) is read so too,
    # and made no more; 0.0 + -0.0 is still 0.0
    (lambda x: np.zeros_like(x) + x * 2.0, np.array([1.0, -0.0, np.inf]),
     ["b:f64[3] = multiply a 2.0", "c:f64[3] = add 0.0 b"]),
    (lambda x: np.zeros_like(x, dtype=np.float64) + x, x3.astype(np.float32),
     ["b:f64[3] = add 0.0:f64[] a"]),
    (lambda x: np.zeros_like(x) @ x + x, np.ones((2, 2)),
     ["b:f64[2,2] = full[dtype=float64 fill_value=0 shape=(2, 2)]", "c:f64[2,2] = matmul b a",
      "d:f64[2,2] = add c a"]),
    (lambda x: np.divmod(x, np.full(3, 2.0))[1], x3, ["b:f64[3] c:f64[3] = divmod a 2.0"]),
    (lambda x: x * np.full(3, 2 - 1j), x3 + 0j, ["b:c128[3] = multiply a (2-1j)"]),
    (lambda x: x * np.full(3, complex(np.nan, 1.0)), x3 + 0j,
     ["b:c128[3] = multiply a (nan+1j):c128[]"]),
])
def test_uniform_constants_as_scalars(function, x, equations):
    assert body(function, x) == equations
    call, _ = compiled(function, x)
    assert_like_numpy(call(x), function(x), 0)


def test_a_uniform_exponent_stays_an_array_where_numpy_computes_a_scalar_one_apart():
    # NumPy 2 computes x ** (one scalar 0.5) as sqrt(x): -0.0 for -0.0 and nan for -inf, where
    # pow, and so x ** (an array of 0.5), gives 0.0 and inf.
    x = np.array([-0.0, -np.inf, 4.0, np.inf])
    function = power_of(np.full(4, 0.5))
    kept = "const0:f64[4]" in optimized_text(function, x)
    assert kept == (not scalar_exponent_agrees("power", np.dtype(np.float64), np.float64(0.5)))
    call, _ = compiled(function, x)
    with np.errstate(all="ignore"):
        assert_like_numpy(call(x), function(x), 0)
    assert "const0" not in optimized_text(power_of(np.full(4, 3.0)), x)


def test_the_passes_keep_every_output_type():
    functions = [
        (lambda x: (x ** 2, x ** -1, x * np.ones(4), np.ones(4) * 1.0), np.ones(4, np.float32)),
        (lambda x: (x ** 3, x * np.ones(4, np.int8), np.float64(2.0) * x), np.arange(4)),
        (lambda x: (x * np.ones((2, 4)), x + np.zeros(4, np.float32)), np.ones(4, np.float16)),
    ]
    for function, x in functions:
        graph = trace(function, (x,))[0]
        optimized = optimize(graph)
        assert [value.aval for value in optimized.outputs] == [
            value.aval for value in graph.outputs]
        call, _ = compiled(function, x)
        for result, expected in zip(call(x), function(x)):
            assert_like_numpy(result, expected, 1e-6)


# --- seeds of ones in traced gradients ----------------------------------------------------------

def gelu_loss(x):
    y = 0.5 * x * (1.0 + np.tanh(0.7978845608028654 * (x + 0.044715 * x ** 3)))
    return np.sum(y)


def test_the_gelu_gradient_has_no_seed_array_and_no_power():
    x = np.linspace(-4.0, 4.0, 100)  # below the llvm backend's fusion: one op a line
    traced = autotrace.function(autotrace.grad(gelu_loss))
    assert str(traced.graph(x)) == "\n".join([
        "{ lambda x:f64[100] ;",
        "  b:f64[100] = multiply 0.5 x",
        "  c:f64[100] = square x",
        "  d:f64[100] = multiply x c",
        "  e:f64[100] = multiply[out=1] 0.044715 d",
        "  f:f64[100] = add[out=1] x e",
        "  g:f64[100] = multiply[out=1] 0.7978845608028654 f",
        "  h:f64[100] = tanh[out=0] g",
        "  i:f64[100] = add 1.0 h",
        "  j:f64[100] = multiply[out=0] h h",
        "  k:f64[100] = subtract[out=1] 1.0 j",
        "  l:f64[100] = multiply[out=0] b k",
        "  m:f64[100] = multiply[out=0] l 0.7978845608028654",
        "  n:f64[100] = multiply m 0.044715",
        "  o:f64[100] = multiply[out=0] n 3",
        "  p:f64[100] = multiply[out=0] o c",
        "  q:f64[100] = add[out=0] m p",
        "  r:f64[100] = multiply[out=0] i 0.5",
        "  s:f64[100] = add[out=0] q r",
        "  in (s) }"])
    eager = autotrace.grad(gelu_loss)(x)
    np.testing.assert_allclose(traced(x), eager, rtol=1e-13, atol=1e-15)
    by_hand = 0.5 * (1 + np.tanh(0.7978845608028654 * (x + 0.044715 * x ** 3))) + 0.5 * x * (
        1 - np.tanh(0.7978845608028654 * (x + 0.044715 * x ** 3)) ** 2) * 0.7978845608028654 * (
        1 + 3 * 0.044715 * x ** 2)
    np.testing.assert_allclose(traced(x), by_hand, rtol=1e-12)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_the_seed_of_a_sum_folds_away(dtype):
    x = np.linspace(-1.0, 1.0, 5).astype(dtype)
    traced = autotrace.function(autotrace.grad(lambda x: np.sum(np.sin(x) * x ** 2)))
    text = str(traced.graph(x))
    assert "const" not in text and "power" not in text
    result, eager = traced(x), autotrace.grad(lambda x: np.sum(np.sin(x) * x ** 2))(x)
    assert result.dtype == eager.dtype == dtype
    np.testing.assert_allclose(result, np.cos(x) * x ** 2 + 2 * x * np.sin(x),
                               rtol=1e-13 if dtype == np.float64 else 1e-6)


def softmax_of_arguments(*arguments):
    scores = arguments[0] * arguments[1]
    exponentials = np.exp(scores - np.max(scores, axis=-1, keepdims=True))
    return np.sum(np.log(exponentials / np.sum(exponentials, axis=-1, keepdims=True)) ** 2)


def test_the_gradient_of_a_function_of_star_args_makes_no_zeros():
    x, scale = rng.standard_normal((64, 32)), rng.standard_normal((64, 32))
    traced = autotrace.function(autotrace.grad(softmax_of_arguments))
    assert "full" not in str(traced.graph(x, scale))
    assert "zeros" not in traced.source(x, scale)
    np.testing.assert_allclose(traced(x, scale), autotrace.grad(softmax_of_arguments)(x, scale),
                               rtol=1e-13, atol=1e-13)


def test_constants_other_than_operands_stay():
    # An output that is a constant of ones (the gradient of a sum) is returned as an array.
    traced = autotrace.function(autotrace.grad(lambda x: np.sum(x)))
    x = np.ones((2, 3))
    # It is copied on every call (a caller may write into it; the next call's must be ones).
    (copied,) = optimize(trace(autotrace.grad(lambda x: np.sum(x)), (x,))[0]).equations[-1:]
    assert copied.primitive.name == "copy" and isinstance(copied.inputs[0], Constant)
    assert_like_numpy(traced(x), np.ones((2, 3)), 0)
