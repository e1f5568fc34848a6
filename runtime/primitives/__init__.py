"""The primitives: every op a graph can hold, one record each, in families.

`primitive` defines the record (`Primitive`: its NumPy implementation, shape and dtype rule,
Python source, and each backend's facts about it), and that of a NumPy function's facts beyond
the op it binds to (`FunctionFacts`: a view, a new array, its array-API form); `registry`
enters records and binds NumPy calls to them; the families define them, each fact in its op's
row: `elementwise` (every ufunc, one row of facts each,
plus where, clip, astype...; `elementwise_functions`: round, isclose and the other non-ufuncs;
`same_sizes` checks that dimensions of unknown size meeting in
broadcasting are equal), `reduce` (sums, extrema, scans), `shape` (reshape, transpose,
creation...), `grids` (np.meshgrid, of shape ops), `index` and `insert` (x[i], x[i] = v), `linalg` (matmul, einsum, np.linalg), and
autotrace's own array functions: `convolution` and `pooling` (with `windows`, their geometry),
`special` (erf), `adjugates` (det's derivatives, exact at singular matrices), `keyed_random`
and `recompute_barrier` (gradient checkpointing's barrier).
`batching` says what an op's batching rule (autotrace.vmap) is and holds the rules many ops
share; a family's own rules are in its rows, or beside it (`shape_batching`).
runtime/ops.py imports every family: whoever needs the complete registry imports that.
"""
