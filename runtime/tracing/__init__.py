"""Tracing: running a Python function on abstract values to record its graph.

`tracer` (the Tracer and the graph builder), `arguments` and `trees` (a call's arguments and
results as flat lists of arrays), `views` (views and writes through them), `stacks` (the
stacks of saved values derivatives push and pop), `signature`, `spec` and `cache` (input
signatures and the cache of traces), and traced control flow: `control` (cond, while_loop,
print) with `control_branches`, `control_loops`, `control_statements`, `control_variables`,
`control_writes`, `control_aliases`, `control_stale` and `control_scope` (its error).
"""
