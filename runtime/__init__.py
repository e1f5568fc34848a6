"""autotrace's runtime: arrays, shapes, devices and graphs, and nothing about Python syntax.

Its folders, in the order a traced call goes through them:

- primitives/: every op a graph can hold, one record each (`Primitive`, primitives/primitive.py:
  its NumPy implementation, shape and dtype rule, Python source, and what each backend needs
  to know about it), declared in families (elementwise, reduce, shape, index, insert, linalg,
  convolution, pooling, special, keyed_random, recompute_barrier); runtime/ops.py gathers
  them all. A NumPy function's own facts (its result a view of an argument, or a fresh array;
  its array-API name), which hold whichever op it traces as (np.swapaxes as transpose), are a
  `FunctionFacts` record declared in the same row. Backends, fusion, the scalar compiler, the
  tracer, the alias analysis and the array-API adapter read these records, never a table of
  names.
- derivatives/: the helpers that generated derivative code calls (adjoint_ops, structure,
  items, objects, ...), on arrays eagerly and on traced values when traced.
- tracing/: the tracer (tracer, arguments, trees, views, stacks), signatures and the cache of
  traces (signature, spec, cache), traced control flow (control and control_*), and the
  batching transform of autotrace.vmap (tracer_batching: a graph traced again, a batch at a
  time, by each op's batching rule).
- passes/: the graph passes, one list (`PASSES`, `optimize`), each pass a module.
- execution/: the executor (a graph as a Python function; `compile`, the one entry from a
  traced graph to something that runs), graph_python (a graph as readable Python) and
  graph_dot (as Graphviz DOT).
- backends/: what a graph runs on, behind one protocol (numpy, llvm/ (the compiled CPU
  backend), cupy with fusion into GPU kernels, array API); see runtime/backends/__init__.py.

And beside them, the values everything shares: abstract (shapes and dtypes), graph (the IR),
state (Variables' cells), containers (namedtuples, dataclasses and the zero of a value with its
structure), scopes (name scopes and the subgraphs tracing), devices and array_api* (placing
arrays, and NumPy's names over an array-API namespace), object_slots and object_walk (arrays
held in objects' attributes), python_operators.

Imports point down (tests/runtime/test_import_layout.py fails on a cycle, and
../shared/tools/layering.py reads the layers): primitive, devices, control_scope and scopes
import nothing of runtime/; abstract, graph and state build on them; containers on state; the
registry and the op families on those, and ops on every family; the derivative helpers on the
families; tracing on ops; passes, backends and the executor on the graph and ops. A module
imports another inside a function only for an optional dependency (CuPy) or to load it when
first needed (the llvm backend's compiled parts). transforms/ may import the derivative
helpers, the primitives, state cells and name scopes (what generated code calls), never
tracing, passes, execution or backends.

The contract between transforms/ and runtime/:
- Generated code names the helper modules it calls (`adjoint_ops.unbroadcast(...)`,
  `structure.add(...)`); transforms/front/front_end.py binds those names in the namespace the code
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
and once (transforms/analysis/aliases.py): each place a value is made is one memory, a name may be or
view the memories it was bound to on any path, a container holds its items, and a call it
cannot read may return any of its arguments. From that model it refuses a write whose change
another name would see, and keeps the item save (`read_item`/`restore_item`) of a write into an
array any sharing name of which the adjoint sweep reads. The tracer knows memory exactly, as it
sees the real objects: a name is a Tracer, a view records its base and writes back into it
(tracing/views.py), a traced branch or loop carries out the writes it made into its operands
(tracing/control_writes.py) and the views it made of them or of its results (control_aliases); inside a
branch the arrays its operands view, and views of its operands, are read through its inputs, and
what a graph loop would read stale is refused (control_stale). An output of a graph shares
memory with an input, a constant or another output only where NumPy's own result would
(passes/outputs.py, which reads a cond's or while's results through its subgraphs).
"""
