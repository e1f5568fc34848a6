"""What tracing costs: the overhead of a cache hit, and the time to build a graph.

    python benchmarks/trace_overhead.py

1. Cache hit: signature + cache lookup + the compiled call + rebuilding the result, for
   `lambda x: x + 1.0` on a 3-element array, against `x + 1.0` called directly. Target: under
   5 microseconds added per call; through the public `autotrace.function`, under 2.
2. Time to trace, optimize and compile an MLP loss (tanh(X @ W1 + b1) @ W2 + b2, softmax
   cross-entropy; 784-256-10, batch 64), its gradient written out by hand, and (if it traces)
   the gradient autotrace.grad generates. Target: under 50 ms.
Results are checked against eager NumPy before anything is timed.
"""
from __future__ import annotations

import os
import sys
import time
import timeit

for _variable in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_variable, "1")

import numpy as np  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from autotrace.runtime.tracing.cache import TraceCache  # noqa: E402
from autotrace.runtime.execution.executor import compile_graph  # noqa: E402
from autotrace.runtime.passes import optimize  # noqa: E402
from autotrace.runtime.tracing.signature import signature_and_arrays  # noqa: E402
from autotrace.runtime.tracing.tracer import trace  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from grad_speed import make_mlp_loss  # noqa: E402


def cached(function):
    """The cache-hit path the public `autotrace.function` is built on, with nothing added."""
    cache = TraceCache()

    def build(args, kwargs):
        graph, structure = trace(function, args, kwargs)
        compiled, _ = compile_graph(optimize(graph))
        return compiled, structure

    def call(*args, **kwargs):
        key, arrays = signature_and_arrays(args, kwargs)
        entry = cache.get(key)
        if entry is None:
            entry = cache.get_or_build(key, lambda: build(args, kwargs))
        compiled, structure = entry
        return structure.unflatten(compiled(*arrays))
    return call


def per_call(function, number=200_000) -> float:
    return min(timeit.repeat(function, number=number, repeat=7)) / number


def function_hit_us(number=200_000) -> float:
    """Microseconds autotrace.function's cache hit adds to `x + 1.0` on f64[3], called
    directly."""
    import autotrace
    x = np.ones(3)
    public = autotrace.function(lambda x: x + 1.0)
    np.testing.assert_array_equal(public(x), x + 1.0)
    return (per_call(lambda: public(x), number) - per_call(lambda: x + 1.0, number)) * 1e6


mlp_loss = make_mlp_loss(np)


def mlp_loss_and_gradient(W1, b1, W2, b2, X, Y):
    """The loss and its gradient by hand: backpropagation written out."""
    hidden = np.tanh(X @ W1 + b1)
    logits = hidden @ W2 + b2
    shifted = logits - np.max(logits, axis=1, keepdims=True)
    exps = np.exp(shifted)
    sums = np.sum(exps, axis=1, keepdims=True)
    log_probabilities = shifted - np.log(sums)
    loss = -np.mean(np.sum(Y * log_probabilities, axis=1))
    d_logits = (exps / sums - Y) / X.shape[0]
    d_hidden = (d_logits @ W2.T) * (1.0 - hidden * hidden)
    return loss, (X.T @ d_hidden, d_hidden.sum(axis=0), hidden.T @ d_logits, d_logits.sum(0))


def mlp_inputs(rng):
    X = rng.standard_normal((64, 784))
    Y = np.eye(10)[rng.integers(0, 10, 64)]
    return (0.05 * rng.standard_normal((784, 256)), np.zeros(256),
            0.05 * rng.standard_normal((256, 10)), np.zeros(10), X, Y)


def build_time_ms(function, args) -> float:
    """The best of 5: trace, optimize, compile; checked against eager NumPy first."""
    graph, structure = trace(function, args)
    compiled, _ = compile_graph(optimize(graph))
    expected = np.concatenate([np.ravel(a) for a in _leaves(function(*args))])
    result = np.concatenate([np.ravel(a) for a in _leaves(structure.unflatten(compiled(*args)))])
    np.testing.assert_allclose(result, expected, rtol=1e-10, atol=1e-12)
    times = []
    for _ in range(5):
        start = time.perf_counter()
        graph, _ = trace(function, args)
        compile_graph(optimize(graph))
        times.append(time.perf_counter() - start)
    return 1e3 * min(times), len(graph.equations)


def _leaves(tree):
    if isinstance(tree, (tuple, list)):
        return [leaf for item in tree for leaf in _leaves(item)]
    return [tree]


def main() -> int:
    x = np.ones(3)
    add_one = cached(lambda x: x + 1.0)
    np.testing.assert_array_equal(add_one(x), x + 1.0)
    direct = per_call(lambda: x + 1.0)
    through_cache = per_call(lambda: add_one(x))
    added = (through_cache - direct) * 1e6
    print(f"1. cache hit, lambda x: x + 1.0 on f64[3]: direct {direct * 1e6:.2f} us, "
          f"cached {through_cache * 1e6:.2f} us: {added:.2f} us added per call "
          f"({'under' if added < 5 else 'OVER'} the 5 us target)")

    try:
        public_added = function_hit_us()
        print(f"   autotrace.function's cache hit adds {public_added:.2f} us per call "
              f"({'under' if public_added < 2 else 'OVER'} the 2 us target)")
    except ImportError as error:
        print(f"   autotrace.function: n/a ({error})")

    args = mlp_inputs(np.random.default_rng(0))
    print("2. trace + optimize + compile (784-256-10 MLP, batch 64):")
    functions = [("loss", mlp_loss), ("loss and gradient by hand", mlp_loss_and_gradient)]
    try:
        import autotrace
        functions.append(("autotrace.grad(loss)", autotrace.grad(mlp_loss, wrt=(0, 1, 2, 3))))
    except ImportError as error:
        print(f"   autotrace.grad: n/a ({error})")
    worst = 0.0
    for name, function in functions:
        try:
            milliseconds, equations = build_time_ms(function, args)
        except Exception as error:  # noqa: BLE001 - report and go on
            print(f"   {name}: n/a ({type(error).__name__}: {str(error)[:90]}...)")
            continue
        worst = max(worst, milliseconds)
        print(f"   {name}: {milliseconds:.1f} ms ({equations} equations traced)")
    print(f"   {'under' if worst < 50 else 'OVER'} the 50 ms target")
    return 0 if added < 5 and worst < 50 else 1


if __name__ == "__main__":
    sys.exit(main())
