"""Run under `mpiexec -n N` by tests/test_distributed.py, with CuPy (or tests/gpu/emulated's):
gradients on a GPU are averaged across ranks and come back on their GPU, and a
DistributedOptimizer updates GPU Variables with the average. Prints one JSON line a rank and
exits 1 if a check fails."""
import json
import sys

import cupy
import numpy as np

import autotrace as at
from autotrace import distributed

distributed.init()
rank, size = distributed.rank(), distributed.size()
mean_rank = (size - 1) / 2
found = {"rank": rank}
gradients = [cupy.full(3, float(rank)), cupy.full((2, 2), rank, dtype=cupy.float32)]
averaged = distributed.allreduce_mean(gradients)
found["on_the_gpu"] = [type(a).__module__.split(".")[0] for a in averaged] == ["cupy"] * 2
found["dtypes"] = [str(a.dtype) for a in averaged]
found["means_ok"] = all(np.all(at.to_numpy(a) == mean_rank) for a in averaged)
with at.device("gpu:0"):  # the Variable and the optimizer's state live there
    w = at.Variable(np.zeros(3), name="w")
    optimizer = distributed.DistributedOptimizer(at.optimizers.SGD(1.0))
optimizer.apply_gradients([(cupy.full(3, float(rank)), w)])
found["variable_device"] = w.device
found["update_ok"] = bool(np.all(w.numpy() == -mean_rank))
passed = (found["on_the_gpu"] and found["dtypes"] == ["float64", "float32"]
          and found["means_ok"] and found["variable_device"] == "gpu:0" and found["update_ok"])
found["passed"] = bool(passed)
sys.stdout.write(json.dumps(found) + "\n")
sys.stdout.flush()
sys.exit(0 if passed else 1)
