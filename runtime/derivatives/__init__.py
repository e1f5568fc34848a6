"""The helpers that generated derivative code calls (the names transforms/ writes into it):
`adjoint_ops` (adjoints of NumPy functions: unbroadcast, unreduce, the weights of ties...),
`structural_adjoints` (sort/unsort, split/join, take/untake, pad, tile...: adjoint_ops names
them too), `adjoint_products` (adjoints of products and solves), `triangles` (the triangle
that cholesky and eigh read), `tangent_ops` (forward-mode helpers), `structure` (gradients of
containers: add, zeros, match), `items` (gradients through the items of lists, dicts and
arrays, through attributes, and of iteration),
`objects` (gradients of objects and dataclasses), `built_objects` (objects a differentiated
function builds, and the gradients of their fields), `scans` and `sequences` (cumulative ops;
lists grown and read in loops). They run on concrete arrays when a derivative runs eagerly,
and on traced values when `autotrace.function` traces it: they call NumPy through the op
registry like any user code, and never the compiler's passes, executor or backends.
"""
