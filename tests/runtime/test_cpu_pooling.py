"""Max pooling on the compiled backend (runtime/backends/llvm/cpu_pooling.py): channels_last
max_pool2d and, where windows do not overlap, max_pool2d_scatter of float32 and float64 images
run as one compiled loop each, giving NumPy's results (runtime/primitives/pooling.py) bit for
bit, NaN, infinities and signed zeros included; every other pooling op stays NumPy's."""
import numpy as np
import pytest

import autotrace
from autotrace import nn
from autotrace.runtime.backends.llvm import cpu_pooling
from autotrace.runtime.backends.selection import backend_named
from autotrace.runtime.execution.executor import compile
from autotrace.runtime.primitives import pooling
from autotrace.runtime.tracing.tracer import trace

llvm_backend = backend_named("llvm")
pytestmark = pytest.mark.skipif(llvm_backend.available() is not None,
                                reason=f"no compiled backend here: {llvm_backend.available()}")

# (pool_size, strides, padding): windows that tile the image, that leave pixels out, that
# overflow it ("same" padding), rectangular ones, one pixel, and overlapping ones
GEOMETRIES = [((2, 2), (2, 2), "same"), ((2, 2), (2, 2), "valid"), ((3, 3), (3, 3), "same"),
              ((2, 3), (3, 2), "valid"), ((2, 2), (3, 3), "same"), ((1, 1), (1, 1), "valid"),
              ((3, 3), (1, 1), "same"), ((3, 2), (2, 1), "valid")]
IMAGES = [(8, 8, 32), (4, 4, 64), (7, 5, 3), (5, 6, 1), (9, 9, 5)]


def special_images(shape, dtype, seed):
    """Normal values with many ties (small integers), signed zeros, NaN and infinities."""
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(shape)
    kind = rng.random(shape)
    x[kind > 0.6] = rng.integers(0, 3, shape)[kind > 0.6]
    for low, value in [(0.0, 0.0), (0.05, -0.0), (0.1, np.nan), (0.12, -np.inf), (0.14, np.inf)]:
        x[(kind >= low) & (kind < low + 0.02 + (low < 0.1) * 0.03)] = value
    return x.astype(dtype)


def same_bits(a, b) -> bool:
    a, b = np.ascontiguousarray(a), np.ascontiguousarray(b)
    nan = np.isnan(a) & np.isnan(b)
    return (a.shape == b.shape and a.dtype == b.dtype
            and np.array_equal(np.where(nan, 0, a).view(f"u{a.itemsize}"),
                               np.where(nan, 0, b).view(f"u{b.itemsize}")))


def options(pool_size, strides, padding):
    return dict(pool_size=pool_size, strides=strides, padding=padding,
                data_format="channels_last")


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("image", IMAGES)
def test_compiled_max_pooling_is_numpys_bit_for_bit(dtype, image):
    compared = 0
    for seed, (pool_size, strides, padding) in enumerate(GEOMETRIES):
        if padding == "valid" and (pool_size[0] > image[0] or pool_size[1] > image[1]):
            continue
        x = special_images((3, *image), dtype, seed)
        attrs = options(pool_size, strides, padding)
        pooled = pooling._max_pool2d(x, **attrs)
        assert same_bits(cpu_pooling.max_pool(x, **attrs), pooled), attrs
        g = special_images(pooled.shape, dtype, seed + 100)  # overlapping windows: NumPy's
        with np.errstate(invalid="ignore"):  # where windows overlap, inf + -inf is NaN
            assert same_bits(cpu_pooling.max_pool_scatter(g, x, **attrs),
                             pooling._max_pool2d_scatter(g, x, **attrs)), attrs
        compared += 1
    assert compared >= 6


def test_the_gradient_goes_to_the_first_largest_tap_and_nan_wins():
    # three 2x2 windows side by side
    x = np.array([[1.0, 3.0, np.nan, 2.0, -0.0, 0.0],
                  [3.0, -np.inf, 0.0, np.nan, 0.0, -0.0]]).reshape(1, 2, 6, 1)
    g = np.array([10.0, 20.0, -0.0]).reshape(1, 1, 3, 1)
    attrs = options((2, 2), (2, 2), "valid")
    result = cpu_pooling.max_pool_scatter(g, x, **attrs)[0, :, :, 0]
    # window 1: the first 3.0; window 2: the first NaN; window 3: the first zero, which gets
    # g + 0.0: -0.0 + 0.0 is +0.0
    expected = np.array([[0.0, 10.0, 20.0, 0.0, 0.0, 0.0], [0.0] * 6])
    assert np.array_equal(result, expected)
    assert not np.signbit(result).any()
    pooled = cpu_pooling.max_pool(x, **attrs)[0, 0, :, 0]
    # NumPy's maximum keeps the later of equal zeros: the window (-0.0, 0.0, 0.0, -0.0)
    assert np.isnan(pooled[1]) and pooled[0] == 3.0 and np.signbit(pooled[2])


def net(images, kernel, overlap):
    """A convolution, ReLU and max pooling, as autotrace.layers' Conv2D and MaxPool2D call
    them: the loss of one step."""
    hidden = np.maximum(nn.conv2d(images, kernel, padding="same"), 0.0)
    pooled = nn.max_pool2d(hidden, 3 if overlap else 2, strides=2 if overlap else None,
                           padding="same")
    return np.sum(pooled * pooled)


def ops(graph) -> list:
    return [equation.primitive.name for equation in graph.equations]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("overlap", [False, True])
def test_a_traced_gradient_pools_in_compiled_loops_with_numpys_result(dtype, overlap):
    rng = np.random.default_rng(3)
    images = rng.standard_normal((4, 8, 8, 2)).astype(dtype)
    kernel = rng.standard_normal((3, 3, 2, 8)).astype(dtype)
    gradient = autotrace.grad(lambda i, k: net(i, k, overlap), wrt=1)
    graph, _ = trace(gradient, (images, kernel))
    results = {}
    for name in ("numpy", "llvm"):
        executable = compile(graph, backend_named(name))
        results[name] = executable.run(images, kernel)[0]
        if name == "llvm":
            names = ops(executable.graph)
            assert "max_pool_cpu" in names and "max_pool2d" not in names
            # overlapping windows share pixels: their gradient's sums stay NumPy's
            scatter = "max_pool2d_scatter" if overlap else "max_pool_scatter_cpu"
            assert scatter in names
    assert same_bits(results["llvm"], results["numpy"])
    assert same_bits(results["llvm"], gradient(images, kernel))
    assert results["llvm"].dtype == dtype


def test_channels_first_and_integer_images_stay_numpys():
    x = np.arange(2 * 3 * 4 * 4, dtype=np.float64).reshape(2, 3, 4, 4)
    graph, _ = trace(lambda v: nn.max_pool2d(v, 2, data_format="channels_first"), (x,))
    assert ops(compile(graph, llvm_backend).graph) == ["max_pool2d"]
    ints = np.arange(2 * 4 * 4 * 3).reshape(2, 4, 4, 3)
    graph, _ = trace(lambda v: nn.max_pool2d(v, 2), (ints,))
    executable = compile(graph, llvm_backend)
    assert ops(executable.graph) == ["max_pool2d"]
    assert np.array_equal(executable.run(ints)[0], nn.max_pool2d(ints, 2))


def test_a_traced_function_shows_the_compiled_pooling_it_calls():
    x = np.ones((2, 4, 4, 3))
    before = autotrace.config.cpu_backend()
    autotrace.config.cpu_backend("llvm")
    try:
        traced = autotrace.function(lambda v: nn.max_pool2d(v, 2))
        assert np.array_equal(traced(x), np.ones((2, 2, 2, 3)))
        source = traced.source(x)
    finally:
        autotrace.config.cpu_backend(before)
    assert ("max_pool(a, pool_size=(2, 2), strides=(2, 2), padding='valid', "
            "data_format='channels_last')") in source


def test_the_gradient_of_windows_past_four_taps_stays_numpys():
    """A 3x3 window's gradient loop would take LLVM longer to compile than a kernel may
    (cpu_pooling.MAX_SCATTER_TAPS); its pool is compiled."""
    x = special_images((2, 6, 6, 4), np.float64, 9)
    gradient = autotrace.grad(lambda v: np.sum(nn.max_pool2d(v, 3) ** 2))
    graph, _ = trace(gradient, (np.nan_to_num(x, posinf=5.0, neginf=-5.0),))
    names = ops(compile(graph, llvm_backend).graph)
    assert "max_pool_cpu" in names and "max_pool2d_scatter" in names
    assert "max_pool_scatter_cpu" not in names
