"""runtime/execution/graph_python.py: a graph written as readable Python, `cond` and `while` inline."""
from __future__ import annotations

import numpy as np

from autotrace.runtime.tracing.control import cond, while_loop
from autotrace.runtime.execution.graph_python import graph_statements
from autotrace.runtime.tracing.tracer import trace


def branches_and_loop(x):
    y = cond(np.sum(x) > 0, lambda a: a * 2.0, lambda a: -a, x)
    n, z = while_loop(lambda s: np.sum(s[1]) < 10.0, lambda s: (s[0] + 1, s[1] * y), (0, y))
    return z[1:], n


def test_cond_and_while_are_written_inline_skipping_reserved_names():
    graph, _ = trace(branches_and_loop, (np.ones(3),))
    namespace = {}
    lines, outputs = graph_statements(graph, ["x"], namespace, reserved={"x", "b"})
    assert lines == [
        "a = np.sum(x, axis=(0,))  # f64[]",
        "c = np.greater(a, 0)  # bool[]",
        "if c:",
        "    e = np.multiply(x, 2.0)  # f64[3]",
        "    d = e",
        "else:",
        "    f = np.negative(x)  # f64[3]",
        "    d = f",
        "g, h = const0, d",
        "i = np.sum(h, axis=(0,))  # f64[]",
        "j = np.less(i, 10.0)  # bool[]",
        "while j:",
        "    k = np.add(g, 1)  # i64[]",
        "    l = np.multiply(h, d)  # f64[3]",
        "    g, h = k, l",
        "    i = np.sum(h, axis=(0,))  # f64[]",
        "    j = np.less(i, 10.0)  # bool[]",
        "m = h[1:]  # f64[2]",
    ]
    assert outputs == ["m", "g"]
    assert namespace["const0"] == 0


def test_the_statements_compute_what_the_graph_does():
    for x in (np.array([1.0, 2.0, 0.5]), np.array([-1.0, -0.5, -3.0])):
        graph, _ = trace(branches_and_loop, (x,))
        lines, outputs = graph_statements(graph, ["x"], namespace := {"np": np})
        source = "def run(x):\n" + "".join(f"    {line}\n" for line in lines) + \
            f"    return ({', '.join(outputs)})\n"
        exec(source, namespace)
        result, expected = namespace["run"](x), branches_and_loop(x)
        np.testing.assert_array_equal(result[0], expected[0])
        assert result[1] == expected[1]


def test_results_written_into_inputs_are_assigned_instead():
    """Subgraphs come optimized, with `out=`: readable code never writes into a buffer."""
    graph, _ = trace(lambda x: cond(np.sum(x) > 0, lambda a: np.sin(a * 2.0) + 1.0,
                                    lambda a: a, x), (np.ones(3),))
    lines, _ = graph_statements(graph, ["x"], {})
    assert not any("out=" in line for line in lines), lines
