"""Abstract values and graphs as people read them: `f64[3,4]`, one equation a line, and golden
graphs of a few functions before and after optimize()."""
import re
import textwrap

import numpy as np
import pytest

import autotrace.runtime.tracing.control  # noqa: F401 - registers the print primitive
from autotrace.runtime.abstract import (AbstractArray, UnknownDimensionError, broadcast_origins,
                                        broadcast_shapes, carried_origins, unknown_origins)
from autotrace.runtime.graph import Equation, Graph, Var, short_name
from autotrace.runtime.ops import primitives
from autotrace.runtime.passes import optimize
from autotrace.runtime.tracing.tracer import trace


def golden(text: str) -> str:
    return textwrap.dedent(text).strip("\n")


def test_abstract_arrays_print_like_jax():
    assert str(AbstractArray((3, 4), np.float64)) == "f64[3,4]"
    assert str(AbstractArray((), np.dtype("int64"))) == "i64[]"
    assert str(AbstractArray((5,), bool)) == "bool[5]"
    assert str(AbstractArray((2,), np.complex64)) == "c64[2]"
    assert str(AbstractArray((2,), np.uint8, "gpu:0")) == "u8[2]@gpu:0"


def test_abstract_arrays_are_frozen_and_hashable():
    a = AbstractArray([3, 4], "float32")
    assert a == AbstractArray((3, 4), np.float32) and hash(a) == hash(AbstractArray((3, 4), "f4"))
    assert a.shape == (3, 4) and a.ndim == 2 and a.size == 12
    assert a != AbstractArray((3, 4), np.float64)


def test_short_names_count_in_base_26():
    assert [short_name(n) for n in (0, 1, 25, 26, 27, 51, 52, 675, 676)] == [
        "a", "b", "z", "ba", "bb", "bz", "ca", "zz", "baa"]


def test_graph_built_by_hand_prints_one_equation_a_line():
    f64 = AbstractArray((3,), np.float64)
    a, b, c, d = Var(f64), Var(f64), Var(f64), Var(AbstractArray((), np.float64))
    graph = Graph([a, b], [
        Equation(primitives["multiply"], [a, b], {}, [c]),
        Equation(primitives["reduce_sum"], [c], {"axis": (0,)}, [d]),
    ], [d])
    assert str(graph) == golden("""
        { lambda a:f64[3] b:f64[3] ;
          c:f64[3] = multiply a b
          d:f64[] = reduce_sum[axis=(0,)] c
          in (d) }
    """)


def layer(x, w, b):
    return np.tanh(x @ w + b) * 1.0


def softmax(z):
    e = np.exp(z - np.max(z, axis=-1, keepdims=True))
    return e / np.sum(e, axis=-1, keepdims=True)


def redundant(x):
    y = np.sin(x) + np.sin(x)
    shift = np.eye(3)[0] * 2.0 + 1.0  # concrete: NumPy computes it, the graph sees a constant
    # (the reshapes of the argument stay two: of a strided x, NumPy's first one copies)
    return (-(-y)).T.T + 0.0 + shift, x.reshape(6).reshape(2, 3)


def indexing(x, i):
    h = np.zeros_like(x)
    h[0, ::2] = x[1, ::2] * 2
    return h[i], x[..., None]


def test_golden_layer():
    graph, _ = trace(layer, (np.ones((2, 3)), np.ones((3, 4)), np.ones(4)))
    assert str(graph) == golden("""
        { lambda a:f64[2,3] b:f64[3,4] c:f64[4] ;
          d:f64[2,4] = matmul a b
          e:f64[2,4] = add d c
          f:f64[2,4] = tanh e
          g:f64[2,4] = multiply f 1.0
          in (g) }
    """)
    assert str(optimize(graph)) == golden("""
        { lambda a:f64[2,3] b:f64[3,4] c:f64[4] ;
          d:f64[2,4] = matmul a b
          e:f64[2,4] = add[out=0] d c
          f:f64[2,4] = tanh[out=0] e
          in (f) }
    """)


def test_golden_softmax_float32():
    graph, _ = trace(softmax, (np.ones((2, 3), np.float32),))
    assert str(optimize(graph)) == golden("""
        { lambda a:f32[2,3] ;
          b:f32[2,1] = reduce_max[axis=(1,) keepdims=True] a
          c:f32[2,3] = subtract a b
          d:f32[2,3] = exp[out=0] c
          e:f32[2,1] = reduce_sum[axis=(1,) keepdims=True] d
          f:f32[2,3] = divide[out=0] d e
          in (f) }
    """)


def test_golden_redundant():
    graph, _ = trace(redundant, (np.ones((2, 3)),))
    assert str(graph) == golden("""
        { lambda a:f64[2,3] ;
          b:f64[2,3] = sin a
          c:f64[2,3] = sin a
          d:f64[2,3] = add b c
          e:f64[2,3] = negative d
          f:f64[2,3] = negative e
          g:f64[3,2] = transpose[axes=(1, 0)] f
          h:f64[2,3] = transpose[axes=(1, 0)] g
          i:f64[2,3] = add h 0.0
          j:f64[2,3] = add i const0:f64[3]
          k:f64[6] = reshape[shape=(6,)] a
          l:f64[2,3] = reshape[shape=(2, 3)] k
          in (j, l) }
    """)
    assert str(optimize(graph)) == golden("""
        { lambda a:f64[2,3] ;
          b:f64[2,3] = sin a
          c:f64[2,3] = add[out=0] b b
          d:f64[2,3] = add[out=0] c 0.0
          e:f64[2,3] = add[out=0] d const0:f64[3]
          f:f64[6] = reshape[shape=(6,)] a
          g:f64[2,3] = reshape[shape=(2, 3)] f
          in (e, g) }
    """)


def test_golden_indexing():
    graph, _ = trace(indexing, (np.ones((2, 4)), np.array([1, 0])))
    assert str(optimize(graph)) == golden("""
        { lambda a:f64[2,4] b:i64[2] ;
          c:f64[2,4] = full[dtype=float64 fill_value=0 shape=(2, 4)]
          d:f64[2] = getitem[index=(1, ::2)] a
          e:f64[2] = multiply d 2
          f:f64[2,4] = setitem[index=(0, ::2) out=0] c e
          g:f64[2,4] = gather[index=(#0,)] f b
          h:f64[2,4,1] = getitem[index=(..., None)] a
          in (g, h) }
    """)


# --- dimensions of unknown size -----------------------------------------------------------------

def test_unknown_dimensions_print_as_question_marks():
    aval = AbstractArray((None, 3), np.float32)
    assert str(aval) == "f32[?,3]" and aval.shape == (None, 3) and not aval.known
    assert AbstractArray([None], "float64") == AbstractArray((None,), np.float64)
    with pytest.raises(UnknownDimensionError, match=re.escape(
            "autotrace cannot trace the size (.size, np.size) on an array with a dimension of "
            "unknown size (f32[?,3]; ? is None in the Spec)")):
        aval.size


@pytest.mark.parametrize("shapes, expected", [
    (((None, 3), (3,)), (None, 3)),
    (((None, 3), (4, 1)), (4, 3)),
    (((None, 1), (1, None)), (None, None)),
    (((None,), (None,)), (None,)),
    (((2, None), (5, 1, 1)), (5, 2, None)),
    (((1,), ()), (1,)),
])
def test_broadcast_shapes_with_unknown_dimensions(shapes, expected):
    assert broadcast_shapes(*shapes) == expected


def test_broadcasting_different_known_sizes_is_an_error():
    with pytest.raises(ValueError, match="objects cannot be broadcast to a single shape"):
        broadcast_shapes((None, 3), (4,))


def test_origins_follow_unknown_dimensions_and_are_not_part_of_equality():
    x = unknown_origins(AbstractArray((None, 3), np.float64), "x")
    assert x.origins == (("x", 0), None) and x == AbstractArray((None, 3), np.float64)
    y = unknown_origins(AbstractArray((None, 1), np.float64), "y")
    assert broadcast_origins([x, y], (None, 3)) == (("x", 0), None)
    assert broadcast_origins([y, x], (None, 3)) == (("y", 0), None)
    assert broadcast_origins([AbstractArray((3,), np.float64), x], (None, 3)) == (("x", 0), None)
    assert carried_origins(x, (1, 0)) == (None, ("x", 0)) and carried_origins(x, (1,)) is None


def test_an_equation_without_results_prints_without_an_equals_sign():
    f64 = AbstractArray((3,), np.float64)
    a = Var(f64)
    equation = Equation(primitives["print"], [a], {"texts": ("x:", None), "sep": " ",
                                                    "end": "\n"}, [])
    assert str(Graph([a], [equation], [a])) == golden("""
        { lambda a:f64[3] ;
          print[end='\\n' sep=' ' texts=('x:', None)] a
          in (a) }
    """)
