"""Name scopes in a model and in its gradient, drawn as a Graphviz picture.

    python examples/scoped_gradients.py [picture.dot]

A two-layer network is written with `autotrace.name_scope` blocks, and its training gradient
is traced with `autotrace.function(autotrace.grad(loss))`. The traced graph keeps the scopes
as written for the forward operations, and puts the backward operations of each scope under
"gradients/<scope>" (as TensorFlow does). The script prints how many operations each scope
holds, and writes the DOT picture (scopes as nested boxes) to the file named, if one is;
`dot -Tsvg picture.dot -o picture.svg` draws it.
"""
import collections
import sys

import numpy as np

import autotrace
from autotrace.runtime.execution.graph_dot import graph_dot


def loss(weights, inputs, targets):
    first, second = weights
    with autotrace.name_scope("model"):
        with autotrace.name_scope("hidden"):
            hidden = np.tanh(inputs @ first)
        with autotrace.name_scope("output"):
            predictions = hidden @ second
    with autotrace.name_scope("loss"):
        return np.mean((predictions - targets) ** 2)


def main(argv=()) -> dict:
    rng = np.random.default_rng(0)
    inputs, targets = rng.standard_normal((32, 4)), rng.standard_normal((32, 1))
    weights = (rng.standard_normal((4, 8)) * 0.5, rng.standard_normal((8, 1)) * 0.5)
    gradient = autotrace.function(autotrace.grad(loss))
    graph = gradient.graph(weights, inputs, targets)
    counts = collections.Counter(equation.scope or "(no scope)" for equation in graph.equations)
    for scope, count in sorted(counts.items()):
        print(f"{scope:28} {count} operations")
    eager = autotrace.grad(loss)(weights, inputs, targets)
    traced = gradient(weights, inputs, targets)
    assert all(np.allclose(a, b, rtol=1e-12) for a, b in zip(eager, traced))
    if argv:
        with open(argv[0], "w") as stream:
            stream.write(graph_dot(graph, "scoped_gradients"))
        print(f"Wrote {argv[0]}")
    return dict(counts)


if __name__ == "__main__":
    main(sys.argv[1:])
