"""Backends: what a traced graph runs on, behind one small protocol.

The executor (runtime/execution/executor.py) writes a graph as a Python function; a backend says what
that function's names mean and how some equations are written:

    backend = backend_for(("cpu",))          # selection.py: the CPU backend configured
    graph = optimize(graph, backend=backend)  # the common passes, then the backend's own
    function, source = compile_graph(graph, backend=backend)

Four backends, each a module (or, for llvm, a sub-package) beside this file that makes one
instance, `BACKEND`; selection.py registers them and picks one for a graph:
- numpy   (numpy_backend.py)  NumPy's functions, one call per equation; always there.
- llvm    (llvm/)             the NumPy backend, plus regions of elementwise equations fused
                              into one compiled loop each (llvmlite, glibc's vector math), and
                              graphs of scalars compiled whole (llvm/backend.py says which
                              module does what); needs llvmlite (a dependency of autotrace),
                              and falls back to numpy, with one warning, where it cannot load.
- cupy    (cupy_backend.py)   CuPy's functions on a GPU, elementwise regions fused into CuPy
                              ElementwiseKernels (fusion.py writes their C); needs the `gpu`
                              extra.
- array API (array_api_backend.py) arrays of a library that follows the Python array API
                              (array_api_strict), through NumPy's names over its namespace
                              (runtime/array_api.py); one backend per namespace and device.

The protocol (`Backend`, protocol.py; a new backend is one module with one instance, `BACKEND`,
added to those selection.py registers):
- `name`: how configuration and errors name it.
- `device_kind`: "cpu" or "gpu", the devices (runtime/devices.py) whose arrays it runs on.
- `available()`: whether it can run here (its library imports); a reason when it cannot.
- `array_module()`: the module generated code calls as `np` (numpy, cupy).
- `namespace()`: the globals generated code runs in: `np`, `math`, and autotrace's own array
  functions (runtime/ops.source_globals); an equation's primitive may add its own (a compiled
  kernel, `Primitive.globals`).
- `place_constant(value, device)`: a graph constant (a NumPy array or scalar folded while
  tracing) as the generated code uses it: as it is on the CPU, copied once to the graph's
  `device` ("gpu:N") on a GPU, converted to an array-API library's array there.
- `passes()`: graph passes of its own, run after the common passes and before buffer reuse
  (fusion replaces regions of equations by one equation calling a kernel).
- `writes_in_place`: whether results may be written into dying buffers (`out=`, BufferReuse).
- `keeps_buffers`: whether a compiled graph keeps the buffers of the arrays that die inside a
  call for its next call (runtime/execution/call_buffers.py): the CPU's, whose allocator maps
  large arrays fresh each time; a GPU's memory pool already keeps them.
- `lowers_scalars`: whether a graph of float64 scalars may be written as Python floats
  (runtime/passes/floats.py): true on the CPU, false where values must stay on a device.
- `compile_whole(graph, python_version)`: the whole graph as one native function (a graph of
  scalars as one compiled loop), or None to run the executor's Python; `python_version` is
  that Python, which a native function may fall back on (to give NumPy's warnings).
- `run_on(function, device)`: the compiled function as it runs for a graph on `device`: as it
  is, or (CuPy, on a machine with several GPUs) making that GPU the current one for each call,
  since kernels launch on the current device.

A primitive says how it is written (`Primitive.source`/`statements`, in terms of `np`), and
carries the facts a backend needs about it (its C and LLVM forms, its libm function, its
array-API name: runtime/primitives/registry.py), so no backend keeps a table of its own keyed by op names;
what a backend does differently it does as a pass, whose equations carry their own source.
"""
