"""The llvm backend (backend.py): NumPy's backend, plus code compiled by LLVM through llvmlite.

- compiler: llvmlite, the target machine, glibc's vector math (libmvec), and the disk cache of
  object code.
- cpu_fusion: regions of elementwise equations, each one compiled loop; cpu_kernels writes a
  kernel's vector instructions, cpu_vector_math its tanh, cpu_loop its loop, cpu_reductions
  its sums; cpu_calls calls it from Python, on several threads where it is large (cpu_threads:
  how many, and how its elements are split so that every result is the one a single thread
  computes).
- cpu_scalar: a graph of float64 scalars as one native function; cpu_scalar_ir writes its IR,
  scalar_loops finds the repeated blocks it rolls back into loops.
"""
