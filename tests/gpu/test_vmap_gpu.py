"""autotrace.vmap of CuPy arrays: per-example gradients and a batched op of each family, with
the arguments on GPU 0, against the same calls on NumPy arrays. What must hold: the batch is a
CuPy array on GPU 0, and equals the CPU batch to 1e-9 relative.

Skipped, with the reason printed, without a GPU.
"""
from __future__ import annotations

import numpy as np
import pytest

import autotrace

if autotrace.num_gpus() == 0:
    pytest.skip("no CUDA GPU (or CuPy) on this machine: the GPU tests need one",
                allow_module_level=True)

import cupy  # noqa: E402

rng = np.random.default_rng(3)


def loss(w, x, y):
    return np.mean((np.tanh(x @ w) - y) ** 2)


def gathers(x, i):
    x = x.copy()
    x[i] = 2.0 * x[i]
    return np.cumsum(np.sort(x, axis=-1), axis=0)


CASES = [
    ("per-example gradients", autotrace.grad(loss), (None, 0, 0),
     [rng.standard_normal(3), rng.standard_normal((4, 5, 3)), rng.standard_normal((4, 5))]),
    ("indexing, sort and scan", gathers, (0, 0),
     [rng.standard_normal((4, 3, 2)), rng.integers(0, 3, (4,))]),
    ("products", lambda a, b: np.einsum("ij,jk->ik", a, b) + a @ b, (0, None),
     [rng.standard_normal((4, 2, 3)), rng.standard_normal((3, 3))]),
]


@pytest.mark.parametrize("name, f, in_axes, args", CASES, ids=[case[0] for case in CASES])
def test_vmap_on_the_gpu_matches_the_cpu(name, f, in_axes, args):
    cpu = autotrace.vmap(f, in_axes=in_axes)(*args)
    gpu = autotrace.vmap(f, in_axes=in_axes)(*[autotrace.to_device(a, "gpu:0") for a in args])
    assert isinstance(gpu, cupy.ndarray) and int(gpu.device.id) == 0
    np.testing.assert_allclose(cupy.asnumpy(gpu), cpu, rtol=1e-9, atol=1e-12)
