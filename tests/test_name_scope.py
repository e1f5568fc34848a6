"""Name scopes: `autotrace.name_scope` and layers write a scope path on each traced equation;
the passes keep it, printing ignores it, and graph pictures group equations by it."""
from __future__ import annotations

import re
import shutil
import subprocess

import numpy as np
import pytest

import autotrace
from autotrace import layers
from autotrace.runtime.backends.llvm import compiler as llvm
from autotrace.runtime.execution.graph_dot import graph_dot
from autotrace.runtime.passes import optimize
from autotrace.runtime.tracing.tracer import trace


def rendered_by_graphviz(dot: str) -> str:
    """The SVG Graphviz's dot draws of `dot`, checked to come without warnings; the test is
    skipped (saying so) where Graphviz is not installed."""
    dot_program = shutil.which("dot")
    if dot_program is None:
        pytest.skip("Graphviz's dot is not installed, so the clusters are checked only as text")
    rendered = subprocess.run([dot_program, "-Tsvg"], input=dot, capture_output=True,
                              text=True, timeout=60)
    assert rendered.returncode == 0 and rendered.stderr == "", rendered.stderr
    return rendered.stdout


def scoped(x):
    with autotrace.name_scope("outer"):
        with autotrace.name_scope("inner"):
            y = np.sin(x) * 2.0
        z = y + 1.0
    return np.sum(z * z)


def unscoped(x):
    y = np.sin(x) * 2.0
    z = y + 1.0
    return np.sum(z * z)


def scopes_of(graph) -> list:
    return [(equation.primitive.name, equation.scope) for equation in graph.equations]


def test_ops_in_nested_scopes_carry_the_path_and_ops_outside_carry_nothing():
    graph = autotrace.function(scoped).graph(np.arange(3.0), optimized=False)
    assert scopes_of(graph) == [("sin", "outer/inner"), ("multiply", "outer/inner"),
                                ("add", "outer"), ("multiply", ""), ("reduce_sum", "")]


def test_scopes_change_neither_the_printed_graph_nor_the_numbers():
    x = np.array([0.3, -1.2, 2.5])
    for optimized in (False, True):
        assert (str(autotrace.function(scoped).graph(x, optimized=optimized))
                == str(autotrace.function(unscoped).graph(x, optimized=optimized)))
    assert autotrace.function(scoped)(x) == unscoped(x)
    # A layer's gradient: its scope is opened by __call__, which the transforms step past.
    dense = layers.Dense(2, name="dense")

    def loss(inputs):
        return np.sum(dense(inputs))

    inputs = np.ones((3, 4))
    dense(inputs)  # builds the kernel
    # d sum(x @ k + b) / dx[i, j] = sum over m of k[j, m]: each row is the kernel's row sums
    by_hand = np.broadcast_to(np.sum(dense.kernel.numpy(), axis=1), (3, 4))
    np.testing.assert_allclose(autotrace.grad(loss)(inputs), by_hand, rtol=1e-12)
    np.testing.assert_allclose(autotrace.grad(autotrace.function(loss))(inputs), by_hand,
                               rtol=1e-12)


def test_a_layers_ops_carry_its_name_inside_the_scopes_around_it():
    first, second = layers.Dense(4, name="hidden"), layers.Dense(2, name="logits")

    def model(x):
        with autotrace.name_scope("model"):
            return second(np.tanh(first(x)))

    graph = autotrace.function(model).graph(np.ones((3, 5)), optimized=False)
    assert scopes_of(graph) == [("matmul", "model/hidden"), ("add", "model/hidden"),
                                ("tanh", "model"), ("matmul", "model/logits"),
                                ("add", "model/logits")]
    x = np.random.default_rng(0).normal(size=(3, 5))
    expected = np.tanh(x @ first.kernel.numpy() + first.bias.numpy()) @ second.kernel.numpy()
    np.testing.assert_allclose(autotrace.function(model)(x),
                               expected + second.bias.numpy(), rtol=1e-12)


def test_scopes_survive_the_passes_that_rewrite_equations():
    def powers_and_repeats(x):
        with autotrace.name_scope("cube"):
            cube = x ** 3  # IntegerPowers: multiplies in the power's place
        with autotrace.name_scope("first"):
            a = np.exp(x)
        with autotrace.name_scope("second"):
            b = np.exp(x)  # CommonSubexpressions keeps the first exp
            unused = np.cos(x)  # noqa: F841 - DeadCode removes it
        return cube + a + b

    graph = optimize(trace(powers_and_repeats, (np.arange(3.0),))[0])
    # (BufferReuse then gives the cube's multiply an out= attribute: a copy, in its scope too)
    assert scopes_of(graph) == [("square", "cube"), ("multiply", "cube"), ("exp", "first"),
                                ("add", ""), ("add", "")]


@pytest.mark.skipif(not llvm.available(), reason="llvmlite is not installed, so the CPU "
                                                  "backend does not fuse")
def test_a_fused_kernel_takes_its_last_equations_scope():
    from autotrace.runtime.backends.llvm.backend import LlvmBackend

    def layer(x):
        with autotrace.name_scope("activation"):
            return np.tanh(x * 2.0 + 1.0)

    backend = LlvmBackend()
    backend.min_elements = 1
    graph = optimize(trace(layer, (np.arange(64.0),))[0], backend=backend)
    assert scopes_of(graph) == [("fused_cpu", "activation")]


def test_a_scope_needs_a_name():
    with pytest.raises(ValueError, match=re.escape(
            "autotrace.name_scope: the name must be a non-empty string, got ''; give a name "
            "such as 'layer1'")):
        with autotrace.name_scope(""):
            pass


def test_dot_draws_each_layer_as_a_cluster_named_after_it():
    first, second = layers.Dense(4, name="hidden"), layers.Dense(2, name="logits")
    graph = autotrace.function(lambda x: second(np.tanh(first(x)))).graph(np.ones((3, 5)))
    dot = graph_dot(graph, "model")
    assert re.findall(r'subgraph cluster_\d+ \{\n\s*label="([^"]*)"', dot) == ["hidden",
                                                                              "logits"]
    members = re.findall(r'label="(\w+)";\n\s*style=rounded;\n\s*((?:n\d+ ?)+);', dot)
    labels = dict(re.findall(r'^\s*(n\d+) \[label="(\w+)', dot, re.MULTILINE))
    assert [(name, [labels[node] for node in nodes.split()]) for name, nodes in members] == [
        ("hidden", ["matmul", "add"]), ("logits", ["matmul", "add"])]
    assert graph_dot(graph, "model") == dot  # the same text every time
    svg = rendered_by_graphviz(dot)
    assert "<title>cluster_0</title>" in svg


def test_dot_nests_clusters_as_the_scopes_nest():
    dot = graph_dot(autotrace.function(scoped).graph(np.arange(3.0)), "scoped")
    assert dot.endswith("""\
  subgraph cluster_0 {
    label="outer";
    style=rounded;
    n5;
    subgraph cluster_1 {
      label="inner";
      style=rounded;
      n1 n3;
    }
  }
}
""")
    labels = dict(re.findall(r'^\s*(n\d+) \[label="([\w\[\]=]+)', dot, re.MULTILINE))
    assert [labels[node] for node in ("n1", "n3", "n5")] == ["sin", "multiply[out=0]",
                                                            "add[out=0]"]


def branchy(x):
    with autotrace.name_scope("model"):
        if np.sum(x) > 0:
            with autotrace.name_scope("positive"):
                y = np.sin(x) * 2.0
        else:
            y = np.cos(x)
        while np.sum(y) < 10.0:
            with autotrace.name_scope("grow"):
                y = y * 2.0 + 1.0
    return np.sum(y)


def cluster_tree(dot: str) -> list:
    """[(label, member node labels, inner clusters)] of each cluster, nested as written."""
    labels = dict(re.findall(r'^\s*(n\d+) \[label="([^"\\]+)', dot, re.MULTILINE))
    stack = [("", [], [])]  # the clusters open at a line, the whole graph first
    lines = dot.splitlines()
    for index, line in enumerate(lines):
        if re.match(r"\s*subgraph cluster_\d+ \{$", line):
            label = re.match(r'\s*label="([^"]*)";$', lines[index + 1]).group(1)
            stack[-1][2].append((label, [], []))
            stack.append(stack[-1][2][-1])
        elif len(stack) > 1 and re.fullmatch(r"\s*(n\d+ ?)+;", line):
            stack[-1][1].extend(labels[node] for node in line.strip(" ;").split())
        elif line.strip() == "}" and len(stack) > 1:
            stack.pop()
    return stack[0][2]


def test_dot_draws_scopes_inside_cond_and_while_clusters_inside_their_scope():
    dot = graph_dot(autotrace.function(branchy).graph(np.arange(3.0)), "branchy")
    assert cluster_tree(dot) == [
        ("model", ["reduce_sum[axis=(0,)]", "greater", "cond", "while"], [
            ("cond: true", [], [("positive", ["sin", "multiply[out=0]"], [])]),
            ("cond: false", [], []),
            ("while: cond", [], []),
            ("while: body", [], [("grow", ["multiply", "add[out=0]"], [])])])]
    assert graph_dot(autotrace.function(branchy).graph(np.arange(3.0)), "branchy") == dot
    svg = rendered_by_graphviz(dot)
    assert svg.count("<title>cluster_") == 7
