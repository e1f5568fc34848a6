"""Run under `mpiexec -n N` by tests/test_distributed.py: rank 1 raises while the others wait
in a reduction that rank 1 never joins; autotrace.distributed must end them all (MPI Abort)
instead of leaving them waiting."""
import numpy as np

from autotrace import distributed

distributed.init()
if distributed.rank() == 1:
    raise ValueError("rank 1 fails on purpose")
distributed.allreduce_mean([np.ones(4)])
print(f"rank {distributed.rank()} finished a reduction that rank 1 never joined", flush=True)
