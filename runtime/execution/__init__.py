"""From a graph to something that runs: `executor` (a graph as a straight-line Python
function, and `compile`, optimize then compile, the one entry every caller uses),
`graph_python` (a graph as readable Python that can be differentiated again) and `graph_dot`
(a graph as Graphviz DOT, name scopes as boxes).
"""
