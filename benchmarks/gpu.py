"""GPU: traced gradients on CuPy arrays against the GPU's memory bandwidth, jax.jit(jax.grad) on
the same GPU, and the CPU, in one run.

    python benchmarks/gpu.py            # needs a CUDA GPU and CuPy (pip install -e '.[gpu]')

1. GELU chain, 1e7 elements, d/dx of sum(gelu(x)), in float64 and in float32: the traced
   gradient (autotrace's fused kernels), the CuPy primal, jax.jit(jax.grad) on the GPU. The
   bound: a gradient must read x and write dx, twice the element's bytes, at the bandwidth of
   a device-to-device copy measured in the same run. Target: the traced gradient within 1.3x
   of that bound. Beside them, two one-line ElementwiseKernels over the same x, called the
   same way: `y = x` (what a kernel that reads and writes once costs) and `y = tanh(x)` (and
   with one tanh).
2. An MLP training step (batch 512, 784-1024-1024-10, ReLU, softmax cross entropy, Adam, one
   traced step with the optimizer's update in it), with float64 and with float32 weights and
   images, on the GPU and on the CPU (BLAS threads printed): milliseconds a step and the
   ratio.

GPU times are of whole calls, each synchronized with the device (the time a user waits), best
of several runs.
"""
from __future__ import annotations

import os
import sys
import time

os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")  # JAX shares the GPU with CuPy

import numpy

import autotrace
from autotrace import layers

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from grad_speed import gelu_grad, make_gelu_loss  # noqa: E402
from traced_speed import load_jax  # noqa: E402


def gpu_seconds(call, cupy, repeat: int = 5, minimum: float = 0.2) -> float:
    """Seconds per call of `call` with the device synchronized after each batch of calls: the
    best of `repeat` batches, each at least `minimum` seconds."""
    call()
    cupy.cuda.Device().synchronize()
    number = 1
    while True:
        start = time.perf_counter()
        for _ in range(number):
            call()
        cupy.cuda.Device().synchronize()
        elapsed = time.perf_counter() - start
        if elapsed >= minimum:
            break
        number *= 2
    best = elapsed / number
    for _ in range(repeat - 1):
        start = time.perf_counter()
        for _ in range(number):
            call()
        cupy.cuda.Device().synchronize()
        best = min(best, (time.perf_counter() - start) / number)
    return best


def copy_bandwidth(cupy, nbytes: int = 1 << 30) -> float:
    """Bytes a second of a device-to-device copy, counting bytes read and written."""
    source = cupy.ones(nbytes // 8)
    target = cupy.empty_like(source)
    seconds = gpu_seconds(lambda: cupy.copyto(target, source), cupy)
    return 2 * source.nbytes / seconds


# (relative, absolute) tolerances of a GELU gradient against the hand-written float64 one
TOLERANCES = {numpy.dtype(numpy.float64): (1e-12, 1e-12),
              numpy.dtype(numpy.float32): (1e-4, 1e-5)}


def gelu_row(cupy, jax, jax_numpy, dtype) -> dict:
    size, dtype = 10_000_000, numpy.dtype(dtype)
    x_host = numpy.random.default_rng(0).standard_normal(size).astype(dtype)
    x = cupy.asarray(x_host)
    traced = autotrace.function(autotrace.grad(make_gelu_loss(numpy)))
    gradient = traced(x)
    assert isinstance(gradient, cupy.ndarray), type(gradient)
    assert gradient.dtype == dtype, gradient.dtype
    relative, absolute = TOLERANCES[dtype]
    expected = gelu_grad(x_host.astype(numpy.float64))
    numpy.testing.assert_allclose(cupy.asnumpy(gradient), expected, rtol=relative,
                                  atol=absolute)
    graph = traced.graph(x)
    kernels = sum(equation.primitive.name == "fused_gpu" for equation in graph.equations)
    print(f"\ngelu, 1e7 {dtype.name}: the traced gradient is {len(graph.equations)} ops, "
          f"{kernels} of them fused kernels:")
    print("  " + traced.source(x).replace("\n", "\n  ").rstrip())
    primal = make_gelu_loss(cupy)
    times = {"autotrace": gpu_seconds(lambda: traced(x), cupy),
             "cupy primal": gpu_seconds(lambda: primal(x), cupy)}
    if jax is not None:
        jax_gradient = jax.jit(jax.grad(make_gelu_loss(jax_numpy)))
        x_jax = jax.device_put(x_host, jax.devices("gpu")[0])
        numpy.testing.assert_allclose(numpy.asarray(jax_gradient(x_jax)), expected,
                                      rtol=relative, atol=absolute)
        times["jax.jit(grad)"] = gpu_seconds(
            lambda: jax_gradient(x_jax).block_until_ready(), cupy)
    bandwidth = copy_bandwidth(cupy)
    bound = 2 * dtype.itemsize * size / bandwidth
    copy_kernel = cupy.ElementwiseKernel(f"{dtype.name} x0", f"{dtype.name} y0", "y0 = x0",
                                         "copy_kernel")
    times["copy kernel"] = gpu_seconds(lambda: copy_kernel(x), cupy)
    tanh_kernel = cupy.ElementwiseKernel(f"{dtype.name} x0", f"{dtype.name} y0",
                                         "y0 = tanh(x0)", "tanh_kernel")
    times["tanh kernel"] = gpu_seconds(lambda: tanh_kernel(x), cupy)
    print(f"  device-to-device copy: {bandwidth / 1e12:.2f} TB/s; the bound "
          f"({2 * dtype.itemsize} bytes an element): {bound * 1e6:.0f} us")
    for name, seconds in times.items():
        print(f"  {name:14s} {seconds * 1e6:8.0f} us   {seconds / bound:5.2f}x the bound")
    ratio = times["autotrace"] / bound
    print(f"  target: the traced gradient within 1.3x of the bound: "
          f"{'PASS' if ratio <= 1.3 else 'MISS'} ({ratio:.2f}x)")
    return times


class MLP(autotrace.Module):
    def __init__(self, dtype):
        super().__init__()
        self.hidden1 = layers.Dense(1024, activation="relu", dtype=dtype)
        self.hidden2 = layers.Dense(1024, activation="relu", dtype=dtype)
        self.logits = layers.Dense(10, dtype=dtype)

    def call(self, x):
        return self.logits(self.hidden2(self.hidden1(x)))


def training_step_seconds(device: str, dtype, cupy) -> float:
    """Seconds a traced training step takes on `device` (synchronized on a GPU)."""
    rng = numpy.random.default_rng(0)
    images = rng.standard_normal((512, 784)).astype(dtype)
    labels = rng.integers(0, 10, 512)
    autotrace.random.set_seed(0)
    with autotrace.device(device):
        images, labels = autotrace.to_device((images, labels), device)
        model = MLP(numpy.dtype(dtype).name)
        optimizer = autotrace.optimizers.Adam(learning_rate=1e-3)
        gradients = autotrace.implicit_value_and_grad(
            lambda x, y: autotrace.losses.sparse_softmax_cross_entropy(y, model(x)))

        @autotrace.function
        def step(x, y):
            value, grads_and_vars = gradients(x, y)
            optimizer.apply_gradients(grads_and_vars)
            return value

        first = float(step(images, labels))
        if device == "cpu":
            start, calls = time.perf_counter(), 0
            while time.perf_counter() - start < 1.0 or calls < 3:
                step(images, labels)
                calls += 1
            seconds = (time.perf_counter() - start) / calls
        else:
            seconds = gpu_seconds(lambda: step(images, labels), cupy, repeat=3)
        last = float(step(images, labels))
    assert step.trace_count == 1 and last < first, (step.trace_count, first, last)
    assert {variable.dtype for variable in model.trainable_variables} == {numpy.dtype(dtype)}
    return seconds


def main() -> int:
    if autotrace.num_gpus() == 0:
        print("No CUDA GPU (or CuPy) here: benchmarks/gpu.py needs one.")
        return 0
    import cupy
    properties = cupy.cuda.runtime.getDeviceProperties(0)
    print(f"GPU: {properties['name'].decode()}, CuPy {cupy.__version__}, numpy "
          f"{numpy.__version__}, {os.cpu_count()} CPUs, BLAS threads "
          f"{os.environ.get('OPENBLAS_NUM_THREADS', 'default (all)')}")
    jax, jax_numpy = load_jax()
    if jax is not None and not any(d.platform == "gpu" for d in jax.devices()):
        print("jax sees no GPU: its column is skipped.")
        jax = None
    for dtype in (numpy.float64, numpy.float32):
        gelu_row(cupy, jax, jax_numpy, dtype)
    print("\nMLP training step (batch 512, 784-1024-1024-10, Adam, traced):")
    for dtype in (numpy.float64, numpy.float32):
        gpu = training_step_seconds("gpu:0", dtype, cupy)
        cpu = training_step_seconds("cpu", dtype, cupy)
        print(f"  {numpy.dtype(dtype).name}: GPU {gpu * 1e3:7.2f} ms, CPU {cpu * 1e3:7.2f} ms "
              f"a step: the GPU {cpu / gpu:5.1f}x faster")
    return 0


if __name__ == "__main__":
    sys.exit(main())
