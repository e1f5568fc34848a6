"""Compiled graphs compute what eager NumPy computes: a table of small functions, each traced,
optimized and compiled, then compared with calling the function directly (values, shapes and
dtypes, float32 included). Plus the generated source itself: one line per equation, `out=` where
buffers are reused, registered with linecache.
"""
import inspect
import linecache

import numpy as np
import pytest

from runtime.executor import compile_graph
from runtime.passes import optimize
from runtime.tracer import trace
from tests.runtime.helpers import assert_same, compiled

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
    ("astype_copy", lambda x: (x.astype(np.float32) * 2, np.copy(x), x.copy()), (m34,)),
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
        "    d = np.sum(c, axis=(0,))  # f64[4]",
        "    return (d,)",
    ]


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
