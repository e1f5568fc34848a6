"""autotrace's runtime: arrays, shapes, devices and graphs, and nothing about Python syntax.

Two parts, kept apart:

- runtime/derivatives/: the helpers that generated derivative code calls (adjoint_ops,
  adjoint_products, tangent_ops, structure, items, objects, built_objects, scans, sequences).
  transforms/ imports these and only these (plus the op registry's custom ops it writes calls
  of: convolution, pooling, special, random, recompute (checkpointing's barrier), state
  cells and stacks, which user code and derivatives share, and name scopes, which generated
  code opens around a scoped block's adjoint).
- the tracing compiler, the rest of runtime/: abstract values (abstract), the op registry
  (primitive: the record of everything known about one op, its facts for backends too;
  registry: how an op is defined and bound; its families ops_*, convolution, pooling, special,
  random and recompute; ops: all of them), the tracer (tracer, arguments, trees, views), the
  graph IR (graph; graph_dot writes it as Graphviz DOT), passes (passes, passes_*), traced
  control flow (control_scope, control, control_variables, control_branches, control_loops,
  control_statements, control_writes, stacks), signatures and their cache (signature, spec,
  cache), the executor (executor, passes_floats, graph_python), devices (devices) and the
  backends behind one protocol (backends/: numpy, llvm/ (the compiled CPU backend, a package),
  cupy, array API, with fusion for GPU kernels; see runtime/backends/__init__.py). Backends read
  what they need to know about an op from its Primitive (registry), never from a table of names.

Imports inside runtime/ point one way, down this list (tests/runtime/test_import_layout.py
fails on a cycle): primitive, devices, control_scope and scopes import nothing of runtime/
(the array-API adapter, below the abstract values, reads op facts from primitive); abstract,
graph and state build on them; containers (namedtuples, dataclasses and the zero of a value
with its structure, which the tracer and the derivative helpers share) on state; registry on
those; the op families on the registry,
and ops on every family; the derivative helpers on the families; the tracer on ops; passes,
backends and the executor on the graph and ops; traced control flow, signatures and
graph_python on all of these. A module imports another inside a function only for an optional
dependency (CuPy) or to load it when first needed (the llvm backend's compiled parts).

The contract between transforms/ and runtime/:
- Generated code names the helper modules it calls (`adjoint_ops.unbroadcast(...)`,
  `structure.add(...)`); transforms/front_end.py binds those names in the namespace the code
  runs in. The helpers take and return arrays (NumPy or CuPy) and containers of them, and call
  NumPy functions through the op registry's bindings, so the same derivative runs eagerly on
  arrays and, under `autotrace.function`, on traced values that record a graph.
- runtime/ never imports transforms/ or autotrace/; transforms/ never imports the compiler
  (tracer, graph, passes, executor, backends). `autotrace.function` is where the two meet: it
  asks transforms/ to convert control flow, then runtime/ to trace, optimize and compile.
- A primitive says how it is written as Python in terms of `np`; a backend says what `np` is
  and may replace regions of a graph by its own equations (fused kernels), so adding a
  backend is one module in backends/ plus its tests.

Memory model. NumPy arrays are memory that names, views and container items share, and a
write through one is seen by all. transforms/ reads source, so it models this conservatively
and once (transforms/aliases.py): each place a value is made is one memory, a name may be or
view the memories it was bound to on any path, a container holds its items, and a call it
cannot read may return any of its arguments. From that model it refuses a write whose change
another name would see, and keeps the item save (`read_item`/`restore_item`) of a write into an
array any sharing name of which the adjoint sweep reads. The tracer knows memory exactly, as it
sees the real objects: a name is a Tracer, a view records its base and writes back into it
(views), a traced branch or loop carries out the writes it made into its operands
(control_writes) and the views it made of them or of its results (control_aliases); inside a
branch the arrays its operands view, and views of its operands, are read through its inputs, and
what a graph loop would read stale is refused (control_stale). An output of a graph shares
memory with an input, a constant or another output only where NumPy's own result would
(passes_outputs, which reads a cond's or while's results through its subgraphs).
"""
