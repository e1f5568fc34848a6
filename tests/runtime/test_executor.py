"""Compiled graphs compute what eager NumPy computes: a table of small functions, each traced,
optimized and compiled, then compared with calling the function directly (values, shapes and
dtypes, float32 included). Plus the generated source itself: one line per equation, `out=` where
buffers are reused, registered with linecache.
"""
import inspect
import linecache
import math
import re
import tracemalloc
import warnings

import numpy as np
import pytest

from autotrace.runtime.backends.selection import backend_named
from autotrace.runtime.execution.executor import compile_graph as compile_for
from autotrace.runtime.passes.floats import float_template, math_matches_numpy
from autotrace.runtime.passes import optimize
from autotrace.runtime.tracing.tracer import trace
from tests.runtime.helpers import assert_same, compiled


def compile_graph(graph, name="graph"):
    """The executor's Python as the NumPy backend has it (the llvm backend runs a graph of
    scalars as native code; tests/runtime/test_cpu_scalar.py tests that)."""
    return compile_for(graph, name, backend=backend_named("numpy"))

rng = np.random.default_rng(0)
v3 = rng.standard_normal(3)
v4 = rng.standard_normal(4)
m34 = rng.standard_normal((3, 4))
m44 = rng.standard_normal((4, 4))
spd = m44 @ m44.T + 4 * np.eye(4)
t234 = rng.standard_normal((2, 3, 4))
f32 = rng.standard_normal((3, 4)).astype(np.float32)
i34 = rng.integers(-5, 5, (3, 4))
positive = np.abs(m34) + 0.5

CASES = [
    # ufuncs and operators
    ("arithmetic", lambda x, y: (x + y) * (x - y) / (1.0 + y ** 2), (v3, v3[::-1].copy())),
    ("reflected", lambda x: 2.0 - x, (v3,)),
    ("reflected_ops", lambda x: (3 / (1 + x ** 2), 2 ** x, 1 - x), (v3,)),
    ("floor_mod", lambda x: (x // 0.3, x % 0.3, np.floor_divide(x, 2)), (m34,)),
    ("negation_abs", lambda x: (-x, abs(x), +x), (m34,)),
    ("comparisons", lambda x, y: (x < y, x <= y, x > y, x >= y, x == y, x != y), (v3, v4[:3])),
    ("logical", lambda x: np.logical_and(x > 0, x < 1) | np.logical_not(x > -1), (m34,)),
    ("math", lambda x: np.exp(x) + np.log(x) + np.sqrt(x) + np.sin(x) * np.cos(x), (positive,)),
    ("more_math", lambda x: (np.tanh(x), np.sign(x), np.floor(x), np.logaddexp(x, 0.5)), (m34,)),
    ("extrema_where", lambda x, y: np.where(x > 0, np.maximum(x, y), np.minimum(x, y)),
     (m34, m34.T.copy().T)),
    ("clip", lambda x: (np.clip(x, -0.5, 0.5), x.clip(0.0), np.clip(x, None, 1)), (m34,)),
    ("int_array", lambda x: (x * 2, x / 2, x // 2, x ** 2, -x), (i34,)),
    ("astype_copy", lambda x: (x.astype(np.float32) * 2, np.copy(x), x.copy(),
                               np.copy(x.T, order="C"), np.copy(x, order="F")), (m34,)),
    # float32 and NumPy 2 weak scalars
    ("f32_python_scalar", lambda x: x * 2.0 + 1, (f32,)),
    ("f32_numpy_scalar", lambda x: x * np.float64(2.0), (f32,)),
    ("f32_with_f64_array", lambda x, y: x @ y, (f32, m44)),
    ("f32_reductions", lambda x: (x.sum(), x.mean(axis=0), np.var(x)), (f32,)),
    # reductions
    ("sum_axes", lambda x: (np.sum(x), np.sum(x, axis=0), np.sum(x, axis=(0, 2)),
                            x.sum(axis=-1, keepdims=True)), (t234,)),
    ("mean_var_std", lambda x: (np.mean(x, 1), np.var(x, axis=0, ddof=1), x.std()), (m34,)),
    ("max_min_prod", lambda x: (np.max(x, axis=1), x.min(), np.prod(x, axis=0)), (m34,)),
    ("arg_any_all", lambda x: (np.argmax(x), x.argmax(axis=1), np.argmin(x, axis=0),
                               np.any(x > 1), (x > -3).all(axis=1)), (m34,)),
    ("cumulative", lambda x: (np.cumsum(x, axis=1), np.cumprod(x), x.cumsum()), (m34,)),
    # shapes
    ("reshape_transpose", lambda x: (x.reshape(4, 3), x.reshape((-1,)), x.T, np.transpose(x),
                                     x.reshape(2, 6).T.reshape(12)), (m34,)),
    ("swap_move_expand", lambda x: (np.swapaxes(x, 0, 2), np.moveaxis(x, 0, -1),
                                    np.expand_dims(x, 1), np.squeeze(x[:1])), (t234,)),
    ("ravel_flatten", lambda x: (np.ravel(x), x.flatten(), x.ravel()), (m34,)),
    ("broadcast", lambda x: (np.broadcast_to(x, (2, 3)), *np.broadcast_arrays(x, x[:, None])),
     (v3,)),
    ("join", lambda x, y: (np.concatenate([x, y]), np.stack([x, y], axis=1),
                           np.hstack([x, y]), np.vstack([x, y]), np.concatenate([x, y], None)),
     (m34, m34 * 2)),
    ("split", lambda x: (*np.split(x, 2, axis=1), *np.array_split(x, 3)), (m34,)),
    ("static_indexing", lambda x: (x[0], x[:, 1], x[1:, ::2], x[..., None], x[-1, -1],
                                   x[None, :, 2:]), (m34,)),
    ("array_indexing", lambda x, i: (x[i], x[:, i[:2]], x[[0, 2]],
                                     x[np.array([True, False, True])]),
     (m34, np.array([2, 0, 1]))),
    ("concrete_on_the_left", lambda x: (np.ones(4) * x, m44 @ x[0], np.add.outer(v3, x[0]),
                                        np.maximum(v4, x)), (m34,)),
    ("setitem", lambda x: _set(x), (m34,)),
    ("flip_roll_tile", lambda x: (np.flip(x), np.flip(x, 0), np.roll(x, 1, axis=1),
                                  np.tile(x, (2, 1)), np.repeat(x, 2, axis=0)), (m34,)),
    ("pad_diag_tri", lambda x: (np.pad(x, 1), np.pad(x, ((0, 1), (2, 0)), mode="edge"),
                                np.diag(x), np.diagonal(x), np.tril(x), np.triu(x, 1),
                                np.trace(x)), (m44,)),
    ("sort_take", lambda x: (np.sort(x), np.argsort(x, axis=0), np.take(x, [0, 2], axis=1),
                             np.take_along_axis(x, np.argsort(x, axis=1), axis=1)), (m34,)),
    ("creation_like", lambda x: (np.zeros_like(x) + x, np.ones_like(x, dtype=np.float32),
                                 np.full_like(x, 7.0), x + np.eye(4)[:3]), (m34,)),
    # linear algebra
    ("products", lambda x, y: (x @ y, np.dot(x, y), np.matmul(x, y[:, 0]), y[:, 0] @ y),
     (m34, m44)),
    ("vector_products", lambda x, y: (np.dot(x, y), np.outer(x, y), np.inner(x, y),
                                      np.vdot(x, y)), (v4, v4[::-1].copy())),
    ("tensordot_einsum", lambda x, y: (np.tensordot(x, y, axes=([2], [0])),
                                       np.einsum("ijk,kl->ijl", x, y),
                                       np.einsum("ii", y)), (t234, m44)),
    ("linalg", lambda a, b: (np.linalg.inv(a), np.linalg.solve(a, b), np.linalg.det(a),
                             np.linalg.cholesky(a), np.linalg.norm(b), np.linalg.norm(a, axis=0)),
     (spd, v4)),
    ("linalg_results", lambda a: (np.linalg.slogdet(a), np.linalg.eigh(a)[0],
                                  np.linalg.slogdet(a).logabsdet), (spd,)),
    ("structures", lambda p, x: {"y": np.tanh(x @ p["w"] + p["b"]), "n": x.shape[0],
                                 "pair": [x.sum(), "tag"]},
     ({"w": m34.T.copy(), "b": v3}, m34)),
]


def _set(x):
    y = x.copy()
    y[0] = 1.0
    y[1, 1:3] = x[2, :2]
    y[:, 0] += 5.0
    buffer = np.zeros_like(x, shape=(5, 4))
    buffer[1:4] = y
    return y, buffer


@pytest.mark.parametrize("name, function, args", CASES, ids=[case[0] for case in CASES])
def test_compiled_matches_eager(name, function, args):
    call, source = compiled(function, *args)
    assert_same(call(*args), function(*args))


@pytest.mark.parametrize("name, function, args", CASES[:12], ids=[c[0] for c in CASES[:12]])
def test_unoptimized_graph_matches_eager(name, function, args):
    call, _ = compiled(function, *args, optimized=False)
    assert_same(call(*args), function(*args))


def test_source_is_one_line_per_equation_with_names_of_the_graph():
    graph, _ = trace(lambda x, y: np.sum(x * y, axis=0), (m34, v4))
    _, source = compile_graph(graph, name="dot")
    assert source.splitlines()[1:] == [
        "    c = np.multiply(a, b)  # f64[3,4]",
        "    d = np.add.reduce(c, axis=(0,))  # f64[4]",
        "    del c",
        "    return (d,)",
    ]


def test_transposes_are_written_as_methods_and_copies_keep_their_order():
    graph, _ = trace(lambda x: (x.T, np.transpose(x[None], (1, 0, 2)), np.copy(x.T, order="C"),
                                np.copy(x.T, order="F"), np.copy(x.T)), (m34,))
    run, source = compile_graph(optimize(graph))
    assert source.splitlines()[1:] == [
        "    b = a.T  # f64[4,3]",
        "    c = a[None]  # f64[1,3,4]",
        "    d = c.transpose((1, 0, 2))  # f64[3,1,4]",
        "    e = np.copy(b, order='C')  # f64[4,3]",
        "    f = np.copy(b, order='F')  # f64[4,3]",
        "    g = np.copy(b)  # f64[4,3]",
        "    return (b, d, e, f, g)",
    ]
    results = run(m34)
    assert results[2].flags.c_contiguous and results[3].flags.f_contiguous
    assert results[4].flags.f_contiguous  # order "K" keeps the layout of the view
    for result in results:
        np.testing.assert_array_equal(result, m34.T if result.ndim == 2 else m34[:, None])


def test_copy_rejects_an_unknown_order():
    with pytest.raises(ValueError, match="np.copy: order must be 'K', 'A', 'C' or 'F', not 'X'"):
        trace(lambda x: np.copy(x, order="X"), (m34,))


def test_buffer_reuse_passes_out_and_gives_the_same_values():
    def function(x):
        y = np.exp(x) + 1.0
        return np.tanh(y) * 2.0
    graph = optimize(trace(function, (m34,))[0])
    run, source = compile_graph(graph)
    assert "np.add(b, 1.0, out=b)" in source
    assert "np.tanh(c, out=c)" in source
    assert "np.multiply(d, 2.0, out=d)" in source
    np.testing.assert_allclose(run(m34)[0], function(m34))
    np.testing.assert_allclose(run(m34)[0], function(m34))  # twice: nothing stale


def test_setitem_in_place_once_the_copy_is_dead():
    def function(x):
        h = np.zeros_like(x, shape=(3, 3))
        for t in range(3):
            h[t] = np.tanh(x * t)
        return h
    graph = optimize(trace(function, (v3,))[0])
    run, source = compile_graph(graph)
    assert "np.array(" not in source  # every write lands in the np.zeros buffer itself
    assert "b[0] = " in source
    np.testing.assert_allclose(run(v3)[0], function(v3))


def test_inputs_are_never_written():
    x = m34.copy()
    call, source = compiled(lambda x: np.exp(x) + x, x)
    call(x)
    np.testing.assert_array_equal(x, m34)
    assert "out=a" not in source


def test_constant_outputs_are_fresh_arrays():
    call, _ = compiled(lambda x: (x + 1, np.arange(3.0)), v3)
    first = call(v3)[1]
    first[0] = 100.0
    assert call(v3)[1][0] == 0.0


def test_source_is_registered_with_linecache():
    graph, _ = trace(lambda x: np.sin(x), (v3,))
    run, source = compile_graph(graph)
    filename = run.__code__.co_filename
    assert filename.startswith("<autotrace graph #")
    assert "".join(linecache.getlines(filename)) == source
    assert inspect.getsource(run) == source


def test_keywords_are_not_used_as_names():
    def long(x):
        for _ in range(360):
            x = np.sin(x)
        return x
    _, source = compile_graph(trace(long, (v3,))[0])
    assert "    if_ = np.sin(ie)" in source and "    ig = np.sin(if_)" in source
    assert "    np_ = np.sin(no)" in source


def test_dead_arrays_are_deleted_once_every_name_of_their_buffer_is_read():
    def function(x):
        y = np.exp(x)             # a fresh buffer: y, then z written into it
        z = np.add(y, 1.0)
        w = np.concatenate([z, x])
        return w * 2.0
    _, source = compiled(function, v3)
    assert "    del b, c\n" in source  # after its last reader, concatenate
    assert "del a" not in source  # the caller's array: deleting it frees nothing


def test_intermediates_do_not_all_live_until_the_return():
    def chain(x):
        for _ in range(8):
            x = np.concatenate([x[1:], x[:1]])  # a new 1 MB array each time, no out=
        return x
    x = np.arange(125_000.0)
    call, _ = compiled(chain, x)
    tracemalloc.start()
    try:
        call(x)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 3.5e6  # two or three arrays at a time, not eight


# --- float64 scalar graphs as Python floats (runtime/passes/floats.py) -------------------------

SCALAR_CASES = [
    ("polynomial", lambda x: np.sin(x) * 0.9 + 0.1 * x ** 2),
    ("division", lambda x: 1.0 / x + x / 3 - 2 / (x * x)),
    ("logarithms", lambda x: np.log(x) * 2.0 - np.sqrt(x) + np.log1p(x) + np.log10(x)),
    ("exponentials", lambda x: np.exp(x) * x - np.tanh(x) + np.expm1(x) / 7.0),
    ("overflowing", lambda x: np.square(x) * 1e300),
    ("signs", lambda x: -np.abs(x) * np.cos(x) + np.arctan(x) - (+x)),
    ("trigonometry", lambda x: np.tan(x) + np.arcsin(x / 4.0) * np.arccos(x / 5.0)),
    ("hyperbolic", lambda x: np.sinh(x) - np.cosh(x) * np.log2(x)),
]
EDGE_VALUES = [0.5, -1.0, 0.0, -0.0, 2.5, 1e-200, 1e-320, 1e308, 800.0, -800.0,
               np.inf, -np.inf, np.nan]


def _exact_and_fast(function, *args):
    """The graph's exact NumPy version, the function that runs, and its source. Where this
    machine's `math` does not give NumPy's bits for an op of the graph, no float version is
    made and the function that runs is the exact one."""
    graph = optimize(trace(function, args)[0])
    run, source = compile_graph(graph)
    lowered = all(float_template(equation) is not None for equation in graph.equations)
    assert ("    try:\n" in source) == lowered
    return run.__globals__.get(f"{run.__name__}_numpy", run), run, lowered


def _run_recording_warnings(function, *args):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = function(*args)
    return result, [(w.category, str(w.message)) for w in caught]


def _bits(values):
    return [(type(value), np.asarray(value).tobytes()) for value in values]


@pytest.mark.parametrize("name, function", SCALAR_CASES, ids=[case[0] for case in SCALAR_CASES])
def test_scalar_graphs_give_numpys_bits_and_warnings(name, function):
    exact, fast, lowered = _exact_and_fast(function, np.asarray(0.5))
    math_names = {"logarithms": ["log", "log1p", "log10"], "exponentials": ["exp", "expm1"],
                  "trigonometry": ["tan", "arcsin", "arccos"],
                  "hyperbolic": ["sinh", "cosh", "log2"]}.get(name, [])
    # Lowered exactly when `math` agrees with NumPy on this machine for every op it needs.
    assert lowered == all(math_matches_numpy(op) for op in math_names)
    if not lowered:
        print(f"{name}: math differs from NumPy here for one of {math_names}; exact version runs")
    values = [*EDGE_VALUES, *np.random.default_rng(1).standard_normal(200) * 3.0]
    for value in values:
        expected, expected_warnings = _run_recording_warnings(exact, np.asarray(value))
        got, got_warnings = _run_recording_warnings(fast, np.asarray(value))
        assert _bits(got) == _bits(expected), value
        assert got_warnings == expected_warnings, value


def test_scalar_graph_source_reads_like_its_numpy_version():
    graph, _ = trace(lambda x, y: np.sin(x) * y + 2.0 * x, (np.asarray(1.0), np.asarray(2.0)))
    _, source = compile_graph(optimize(graph), name="scalar")
    assert re.sub(r"scalar_\d+", "scalar", source) == (
        "def scalar_numpy(a, b):\n"
        "    c = np.sin(a)  # f64[]\n"
        "    d = np.multiply(c, b)  # f64[]\n"
        "    e = np.multiply(2.0, a)  # f64[]\n"
        "    f = np.add(d, e)  # f64[]\n"
        "    return (f,)\n"
        "\n"
        "def scalar(a, b):\n"
        '    if np.geterr()["under"] != "ignore":\n'
        "        return scalar_numpy(a, b)\n"
        "    try:\n"
        "        a_float = float(a)\n"
        "        b_float = float(b)\n"
        "        c = math.sin(a_float)  # f64[]\n"
        "        d = c * b_float  # f64[]\n"
        "        e = 2.0 * a_float  # f64[]\n"
        "        f = d + e  # f64[]\n"
        "    except (ArithmeticError, ValueError):\n"
        "        return scalar_numpy(a, b)\n"
        "    if not math.isfinite(f):\n"
        "        return scalar_numpy(a, b)\n"
        "    return (np.float64(f),)\n")


def test_scalar_graphs_raise_where_numpy_raises():
    call, _ = compiled(lambda x: x / 0.0 + 1.0, np.asarray(2.0))
    with np.errstate(divide="raise"):
        with pytest.raises(FloatingPointError):
            call(np.asarray(2.0))
    tiny, _ = compiled(lambda x: x * 1e-300 + 0.0 * x, np.asarray(1e-10))
    assert tiny(np.asarray(1e-10)) == np.asarray(1e-10) * 1e-300
    with np.errstate(under="raise"):  # Python floats never report underflow: NumPy runs
        with pytest.raises(FloatingPointError):
            tiny(np.asarray(1e-10))


def test_scalar_graph_results_are_numpy_scalars_and_inputs_pass_through():
    x = np.asarray(1.5)
    call, _ = compiled(lambda x: (x * 2.0, x), x)
    doubled, same = call(x)
    assert type(doubled) is np.float64 and doubled == 3.0
    assert same is x


@pytest.mark.parametrize("function, args", [
    (lambda x: x * 2.0 + 1.0, (np.asarray(1.5, np.float32),)),  # f32 rounds differently
    (lambda x: x * 2 + 1, (np.asarray(3),)),                    # ints wrap, floats do not
    (lambda x: np.maximum(x, 0.0) * 2.0, (np.asarray(-1.5),)),  # no float version of maximum
    (lambda x: x * 2.0 + 1.0, (v3,)),                           # arrays
    (lambda x: np.sin(x), (np.asarray(0.5),)),  # one NumPy call costs what the checks cost
], ids=["float32", "int64", "maximum", "array", "one_op"])
def test_other_graphs_stay_numpy(function, args):
    call, source = compiled(function, *args)
    assert "math." not in source and "_numpy" not in source
    assert_same(call(*args), function(*args))


def test_functions_math_computes_differently_stay_numpy(monkeypatch):
    from autotrace.runtime.passes import floats as passes_floats
    monkeypatch.setattr(passes_floats, "math_matches_numpy", lambda name: False)
    _, sine = compiled(lambda x: np.sin(x) * 2.0, np.asarray(0.5))
    assert "math.sin" not in sine and "_numpy" not in sine
    _, tanh = compiled(lambda x: np.tanh(x) * 2.0, np.asarray(0.5))
    assert "float(np.tanh(a_float))" in tanh  # it sets no flag: NumPy computes it on the float
    # Unoptimized: the passes write x ** 2 as np.square(x), which is x * x everywhere.
    _, square = compiled(lambda x: np.power(x, 2) - x, np.asarray(0.5), optimized=False)
    assert "_numpy" not in square
    # `**` on two numbers is the C library's pow, math.pow's too
    _, scalar = compiled(lambda x: x ** 2.5 - x, np.float64(0.5), optimized=False)
    assert "math.pow(a_float, 2.5)" in scalar


def test_the_probe_notices_a_function_that_rounds_differently(monkeypatch):
    from dataclasses import replace

    from autotrace.runtime.passes import floats as passes_floats
    from autotrace.runtime.ops import primitives
    probe = passes_floats.math_matches_numpy.__wrapped__  # not its answer cached per process
    sin = primitives["sin"]
    monkeypatch.setitem(primitives, "sin",
                        replace(sin, math=lambda x: math.sin(x) * (1.0 + 2.0 ** -52)))
    assert not probe("sin")
    monkeypatch.setitem(primitives, "sin", replace(sin, math=lambda x: float(np.sin(x))))
    assert probe("sin")


@pytest.mark.parametrize("literal", [complex(math.nan, 1.0), complex(1.0, math.inf),
                                     complex(-math.inf, math.nan)], ids=repr)
def test_complex_literals_that_are_not_finite_are_written_as_python(literal):
    """repr gives `(nan+1j)` or `infj` for these, which are no Python source."""
    graph, _ = trace(lambda x: x * literal, (v3,))
    function, source = compile_graph(optimize(graph))
    assert "complex(" in source and "nanj" not in source and "infj" not in source
    with np.errstate(all="ignore"):
        np.testing.assert_array_equal(function(v3)[0], v3 * literal)
