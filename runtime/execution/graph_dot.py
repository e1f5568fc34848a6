"""A graph as Graphviz DOT text: `print(graph_dot(traced.graph(x)))`, then `dot -Tsvg`.

    digraph "f" {
      n0 [label="a\\nf64[3]", shape=ellipse];
      n1 [label="sin\\nb: f64[3]", shape=box];
      n0 -> n1;
      n2 [label="out 0\\nf64[3]", shape=doubleoctagon];
      n1 -> n2;
    }

- A node for each graph input (ellipse), each distinct constant array (note: `const0:
  f64[3]`, or its value for a scalar), each literal use (plaintext), each equation (box: the
  primitive and its attributes, then its results' names and types as `str(graph)` prints
  them), and each output (doubleoctagon).
- Edges follow the data: from what made a value to each equation that reads it. Where an
  equation reads several values their edges are labelled with the position, since order
  matters (`subtract a b`). An equation without results (a `same_sizes` check, a `print`)
  runs before the equations after it: a dotted edge joins it to the next equation of its
  graph (to the graph's first output where it is the last), so that no check dangles.
- A control equation's subgraphs (cond's branches, while's cond and body: any attribute
  holding graphs) are drawn as dashed clusters named by the attribute's field, with their
  outputs joined to the equation by dashed edges.
- Equations traced inside a name scope (`autotrace.name_scope`, a layer's call) are drawn in
  solid clusters labelled with the scope's name, nested as the scopes are ("model" holding
  "dense"), in order of first appearance. Inside a control equation's dashed cluster, the
  scopes opened within its subgraph (below the control equation's own scope) are clusters
  too: `cond: true` holding "positive".
- Nodes are named n0, n1, ... in the order they are drawn, and names in labels are those
  `str(graph)` gives, so the same graph always gives the same text.
"""
from __future__ import annotations

import dataclasses

from ..graph import Constant, Graph, Literal, _Names, format_value
from ..scopes import relative as relative_scope


def graph_dot(graph: Graph, name: str = "graph") -> str:
    """The DOT text of `graph`, a digraph called `name`."""
    writer = _DotWriter()
    writer.lines.append(f"digraph {_quoted(name)} {{")
    writer.lines.append('  node [fontname="Helvetica"];')
    writer.lines.append('  edge [fontname="Helvetica"];')
    writer.output_nodes(graph, indent="  ", base_scope="")
    writer.lines.append("}")
    return "\n".join(writer.lines) + "\n"


class _DotWriter:
    """Draws graphs into `lines`, numbering nodes across the graph and its subgraphs."""

    def __init__(self):
        self.lines: list[str] = []
        self.node_count = 0
        self.cluster_count = 0

    def node(self, indent: str, label: str, shape: str, extra: str = "") -> str:
        node_name = f"n{self.node_count}"
        self.node_count += 1
        self.lines.append(f"{indent}{node_name} [label={_quoted(label)}, shape={shape}{extra}];")
        return node_name

    def edge(self, indent: str, source: str, target: str, attributes: str = "") -> None:
        suffix = f" [{attributes}]" if attributes else ""
        self.lines.append(f"{indent}{source} -> {target}{suffix};")

    def draw(self, graph: Graph, indent: str, scopes: _ScopeClusters) -> tuple:
        """Draw `graph`'s nodes and edges, noting each equation's node in `scopes`; returns
        (the nodes that hold its outputs, the nodes of its last equations without results,
        which no equation follows)."""
        names = _Names()
        made_by: dict[int, str] = {}  # id of a Var or Constant -> the node that makes it
        without_results: list[str] = []  # checks and prints not yet joined to what follows
        for var in graph.inputs:
            made_by[id(var)] = self.node(indent, f"{names.of(var)}\n{var.aval}", "ellipse")
        for equation in graph.equations:
            sources = [self.value_node(value, names, made_by, indent)
                       for value in equation.inputs]
            outputs = "\n".join(f"{names.of(var)}: {var.aval}" for var in equation.outputs)
            label = _equation_head(equation) + (f"\n{outputs}" if outputs else "")
            equation_node = self.node(indent, label, "box")
            scope = relative_scope(equation.scope, scopes.base)
            scopes.add(scope, equation_node)
            for position, source in enumerate(sources):
                self.edge(indent, source, equation_node,
                          f'label="{position}"' if len(sources) > 1 else "")
            for check_node in without_results:
                self.edge(indent, check_node, equation_node, "style=dotted")
            without_results = [] if equation.outputs else [equation_node]
            for var in equation.outputs:
                made_by[id(var)] = equation_node
            for field_name, subgraph in subgraphs_of(equation.attrs):
                # A scoped control equation's subgraph clusters are written inside its scope's
                # cluster (Graphviz nests clusters as they are written), so they are kept aside
                # until that cluster is written.
                lines, self.lines = self.lines, [] if scope else self.lines
                output_nodes = self.cluster(f"{equation.primitive.name}: {field_name}",
                                            subgraph, indent, equation.scope)
                if scope:
                    scopes.blocks[scope].extend(self.lines)
                    self.lines = lines
                for output_node in output_nodes:
                    self.edge(indent, output_node, equation_node,
                              f'style=dashed, label="{field_name}"')
        return ([self.value_node(value, names, made_by, indent) for value in graph.outputs],
                without_results)

    def value_node(self, value, names: _Names, made_by: dict, indent: str) -> str:
        """The node an equation input comes from; constants and literals get theirs here."""
        if isinstance(value, Literal):
            return self.node(indent, repr(value.value), "plaintext")
        node_name = made_by.get(id(value))
        if node_name is None and isinstance(value, Constant):
            node_name = made_by[id(value)] = self.node(
                indent, names.use(value).replace(":", ": ", 1), "note")
        return node_name

    def cluster(self, label: str, graph: Graph, indent: str, base_scope: str) -> list:
        """Draw a subgraph as a dashed cluster, its outputs as output nodes inside it, and the
        scopes opened inside it (below `base_scope`, its equation's) as clusters in it."""
        inner = indent + "  "
        self.lines.append(f"{indent}subgraph cluster_{self.cluster_count} {{")
        self.cluster_count += 1
        self.lines.append(f"{inner}label={_quoted(label)};")
        self.lines.append(f"{inner}style=dashed;")
        outputs = self.output_nodes(graph, inner, base_scope)
        self.lines.append(f"{indent}}}")
        return outputs

    def output_nodes(self, graph: Graph, indent: str, base_scope: str) -> list:
        """Draw `graph` with a node for each of its outputs, then a cluster for each name
        scope below `base_scope` its equations were traced in; returns the output nodes."""
        scopes = _ScopeClusters(base_scope, indent)
        sources, last_checks = self.draw(graph, indent, scopes)
        result_nodes = []
        for position, (source, value) in enumerate(zip(sources, graph.outputs)):
            output_node = self.node(indent, f"out {position}\n{value.aval}", "doubleoctagon")
            self.edge(indent, source, output_node)
            result_nodes.append(output_node)
        for check_node in last_checks if result_nodes else []:
            self.edge(indent, check_node, result_nodes[0], "style=dotted")
        self.scope_clusters(scopes, "", indent)
        return result_nodes

    def scope_clusters(self, scopes: _ScopeClusters, path: str, indent: str) -> None:
        """A cluster for each scope below `path`, holding its nodes and its inner scopes'
        clusters (a node drawn earlier is placed by naming it inside the cluster)."""
        for child in scopes.children[path]:
            inner = indent + "  "
            self.lines.append(f"{indent}subgraph cluster_{self.cluster_count} {{")
            self.cluster_count += 1
            self.lines.append(f"{inner}label={_quoted(child.rpartition('/')[2])};")
            self.lines.append(f"{inner}style=rounded;")
            if scopes.nodes[child]:
                self.lines.append(f"{inner}{' '.join(scopes.nodes[child])};")
            extra = inner[len(scopes.indent):]  # the block was written at the graph's indent
            self.lines.extend(extra + line for line in scopes.blocks[child])
            self.scope_clusters(scopes, child, inner)
            self.lines.append(f"{indent}}}")


class _ScopeClusters:
    """The name scopes of one drawn graph's equations, as paths below `base` (the scope of
    the control equation whose subgraph it is; "" for the whole graph): each path's own
    nodes, the lines of its control equations' subgraph clusters (written at `indent`, the
    graph's) and its child paths, in drawing order."""

    def __init__(self, base: str, indent: str):
        self.base = base
        self.indent = indent
        self.nodes: dict[str, list] = {"": []}
        self.blocks: dict[str, list] = {"": []}
        self.children: dict[str, list] = {"": []}

    def add(self, scope: str, node_name: str) -> None:
        """Note that `node_name` belongs in `scope`'s cluster, making its parents' entries."""
        path = ""
        for part in scope.split("/") if scope else []:
            parent, path = path, f"{path}/{part}" if path else part
            if path not in self.nodes:
                self.nodes[path] = []
                self.blocks[path] = []
                self.children[path] = []
                self.children[parent].append(path)
        self.nodes[path].append(node_name)


def subgraphs_of(attrs: dict) -> list:
    """(field name, Graph) for each subgraph an equation's attributes hold: a Graph itself, or
    a dataclass of Graphs (cond's Branches, while's Loop), in attribute then field order."""
    found = []
    for key in sorted(attrs):
        value = attrs[key]
        if isinstance(value, Graph):
            found.append((key, value))
        elif dataclasses.is_dataclass(value) and not isinstance(value, type):
            found.extend((field.name, getattr(value, field.name))
                         for field in dataclasses.fields(value)
                         if isinstance(getattr(value, field.name), Graph))
    return found


def _equation_head(equation) -> str:
    """`reduce_sum[axes=(0,)]`: the primitive and its attributes, but not its subgraphs."""
    shown = [f"{key}={format_value(equation.attrs[key])}" for key in sorted(equation.attrs)
             if not subgraphs_of({key: equation.attrs[key]})]
    return f"{equation.primitive.name}[{' '.join(shown)}]" if shown else equation.primitive.name


def _quoted(text: str) -> str:
    """A DOT string: backslashes and quotes escaped, line breaks as DOT's `\\n`."""
    escaped = text.replace("\\", "\\\\").replace('"', '\\"')
    return '"' + escaped.replace("\n", "\\n") + '"'
