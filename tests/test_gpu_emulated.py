"""The GPU tests (tests/gpu) against an emulated CuPy, on machines without a GPU (CI has none).

tests/gpu/emulated/cupy is NumPy behind CuPy's interface, keeping what code written for NumPy
trips over on a GPU: CuPy arrays are not NumPy arrays, NumPy calls on them dispatch to CuPy,
converting one to NumPy implicitly raises, CuPy functions refuse NumPy arrays, reductions give
0-d arrays. So a change that makes a GPU gradient come back as a NumPy array, mixes a NumPy
constant into a GPU graph, or retraces for every GPU call fails here. What it cannot show (the
kernels' C compiled by NVRTC, CUDA's math library, speed) tests/gpu shows on a GPU.
"""
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.long_running
def test_the_gpu_tests_pass_against_an_emulated_cupy(tmp_path):
    environment = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [str(ROOT / "tests" / "gpu" / "emulated"), str(ROOT)]))
    run = subprocess.run(
        # In this process's worker, one process (-n 0): workers of its own would each collect
        # the tests again, on cores the rest of the run is using.
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-x", "-n", "0",
         f"--basetemp={tmp_path}", str(ROOT / "tests" / "gpu")],
        cwd=ROOT, env=environment, capture_output=True, text=True, timeout=600)
    summary = run.stdout.strip().splitlines()[-1] if run.stdout.strip() else run.stderr
    assert run.returncode == 0, run.stdout[-6000:] + run.stderr[-2000:]
    passed = int(summary.split(" passed")[0].split()[-1])
    assert passed > 900 and "failed" not in summary, summary
