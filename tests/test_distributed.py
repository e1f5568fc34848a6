"""autotrace.distributed: one process without MPI, and 2 and 4 ranks under mpiexec (when
mpi4py and mpiexec are installed: `pip install -e '.[distributed]'`)."""
import json
import os
import shutil
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

import autotrace as at
from autotrace import distributed

ROOT = Path(__file__).resolve().parent.parent
TESTS = Path(__file__).resolve().parent
# A hang (a rank waiting for one that died) fails the test instead of the whole run.
MPI_TIMEOUT_S = 120
LAUNCHER_VARIABLES = ("PMI_RANK", "PMI_SIZE", "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE")


def environment(**extra):
    env = {name: value for name, value in os.environ.items()
           if name not in LAUNCHER_VARIABLES}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    env.update(extra)
    return env


def run_python(code: str, **extra_environment):
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], cwd=ROOT,
                          env=environment(**extra_environment), capture_output=True,
                          text=True, timeout=MPI_TIMEOUT_S)


# --- one process ------------------------------------------------------------------------------
def test_one_process_without_a_launcher_does_not_import_mpi():
    result = run_python("""
        import sys
        import numpy as np
        import autotrace as at
        from autotrace import distributed
        distributed.init()
        optimizer = distributed.DistributedOptimizer(at.optimizers.SGD(0.5))
        w = at.Variable(np.array([1.0, 2.0]))
        optimizer.apply_gradients([(np.array([1.0, -1.0]), w)])
        distributed.broadcast_variables([w])
        print(distributed.rank(), distributed.size(), distributed.local_rank(),
              w.numpy().tolist(), "mpi4py" in sys.modules)
    """)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["0", "1", "0", "[0.5,", "2.5]", "False"]


def test_a_launcher_without_mpi4py_names_the_extra_to_install():
    # mpi4py hidden: a module of that name that fails to import, as when it is not installed.
    result = run_python("""
        import sys
        sys.modules["mpi4py"] = None
        from autotrace import distributed
        try:
            distributed.init()
        except distributed.DistributedError as error:
            print(error)
    """, PMI_RANK="1", PMI_SIZE="2")
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith(
        "autotrace.distributed: this process is rank 1 of 2 started by an MPI launcher, but "
        "mpi4py cannot be imported (")
    assert result.stdout.rstrip().endswith("install it with pip install -e '.[distributed]'")


def test_launcher_environment_of_mpich_and_open_mpi(monkeypatch):
    for name in LAUNCHER_VARIABLES + ("MPI_LOCALRANKID", "OMPI_COMM_WORLD_LOCAL_RANK"):
        monkeypatch.delenv(name, raising=False)
    assert distributed.launcher_environment() is None
    monkeypatch.setenv("OMPI_COMM_WORLD_RANK", "5")
    monkeypatch.setenv("OMPI_COMM_WORLD_SIZE", "8")
    monkeypatch.setenv("OMPI_COMM_WORLD_LOCAL_RANK", "1")
    assert distributed.launcher_environment() == (5, 8, 1)
    monkeypatch.setenv("PMI_RANK", "3")
    monkeypatch.setenv("PMI_SIZE", "4")
    assert distributed.launcher_environment() == (3, 4, 3)  # no MPI_LOCALRANKID: the rank


def test_one_process_allreduce_mean_is_the_arrays_and_refuses_other_dtypes():
    arrays = [np.arange(3.0), np.ones((2, 2), np.float32)]
    averaged = distributed.allreduce_mean(arrays)
    assert [a.dtype for a in averaged] == [np.float64, np.float32]
    assert all(np.array_equal(a, b) and a is not b for a, b in zip(averaged, arrays))
    with pytest.raises(TypeError, match=r"^allreduce_mean: item 1 has dtype int64; only "
                       r"float32, float64, complex64 and complex128 arrays are averaged"):
        distributed.allreduce_mean([np.ones(2), np.arange(3)])


def test_inside_a_traced_function_the_average_is_one_op_of_the_graph():
    w = at.Variable(np.ones(2))
    optimizer = distributed.DistributedOptimizer(at.optimizers.SGD(0.5))

    @at.function
    def step(gradient):
        optimizer.apply_gradients([(gradient, w)])

    step(np.array([1.0, -1.0]))
    step(np.array([2.0, 0.0]))  # the same graph, run again: one process averages nothing
    assert step.trace_count == 1
    graph = str(step.graph(np.ones(2)))
    assert graph.count("allreduce[") == 1, graph
    np.testing.assert_array_equal(w.numpy(), [1.0 - 0.5 - 1.0, 1.0 + 0.5])


def test_broadcasting_inside_a_traced_function_is_refused_with_what_to_do():
    w = at.Variable(np.ones(2))

    @at.function
    def step(x):
        distributed.broadcast_variables([w])
        return x * w

    with pytest.raises(distributed.DistributedError) as error:
        step(np.ones(2))
    assert str(error.value) == (
        "broadcast_variables is called inside autotrace.function; call it outside, before "
        "training starts (and again after restoring a checkpoint)")
    assert np.array_equal(w.numpy(), np.ones(2))


def test_buckets_keep_order_split_on_dtype_and_size():
    arrays = [np.zeros(4), np.zeros(4), np.zeros(2, np.float32), np.zeros(100), np.zeros(1)]
    buckets = distributed._buckets(arrays, bucket_bytes=64)
    assert [[len(a) for a in bucket] for bucket in buckets] == [[4, 4], [2], [100], [1]]
    assert [a for bucket in buckets for a in bucket] == arrays


def test_distributed_optimizer_shares_the_optimizers_state_and_checkpoints(tmp_path):
    adam = at.optimizers.Adam(0.1)
    optimizer = distributed.DistributedOptimizer(adam)
    assert isinstance(optimizer, at.optimizers.Adam)
    assert repr(optimizer) == ("<autotrace.distributed.DistributedOptimizer of "
                               "autotrace.optimizers.Adam 'Adam'>")
    assert distributed.DistributedOptimizer(optimizer) is optimizer
    w = at.Variable(np.ones(2), name="w")
    optimizer.apply_gradients([(np.ones(2), w), (None, at.Variable(0.0))])
    assert int(adam.iterations) == 1 and adam.get_slot(w, "m") is optimizer.get_slot(w, "m")
    assert optimizer.get_slot(w, "m").numpy().tolist() == pytest.approx([0.1, 0.1])

    # A checkpoint names the state as a plain Adam's, so each restores into the other.
    path = at.Checkpoint(optimizer=optimizer, w=w).save(str(tmp_path / "ckpt"))
    plain, plain_w = at.optimizers.Adam(0.1), at.Variable(np.ones(2), name="w")
    at.Checkpoint(optimizer=plain, w=plain_w).restore(path)
    assert int(plain.iterations) == 1
    plain.apply_gradients([(np.full(2, 0.5), plain_w)])
    optimizer.apply_gradients([(np.full(2, 0.5), w)])
    assert np.array_equal(plain_w.numpy(), w.numpy())
    assert np.array_equal(plain.get_slot(plain_w, "v").numpy(),
                          optimizer.get_slot(w, "v").numpy())


def test_distributed_optimizer_refuses_what_is_not_an_optimizer():
    with pytest.raises(TypeError, match=r"^DistributedOptimizer: expected an autotrace "
                       r"optimizer \(autotrace.optimizers.SGD, Adam, ...\), got 0.1$"):
        distributed.DistributedOptimizer(0.1)


# --- several ranks ----------------------------------------------------------------------------
def mpiexec_or_skip():
    try:
        import mpi4py  # noqa: F401
    except ImportError:
        pytest.skip("mpi4py is not installed (pip install -e '.[distributed]')")
    # mpich from PyPI puts mpiexec beside the interpreter, which may not be on PATH.
    beside = Path(sys.executable).parent / "mpiexec"
    found = str(beside) if beside.exists() else shutil.which("mpiexec")
    if found is None:
        pytest.skip("mpiexec is not installed (pip install -e '.[distributed]' brings mpich's)")
    return found


def run_ranks(script_and_arguments: str, ranks: int,
              **extra_environment) -> subprocess.CompletedProcess:
    """mpiexec -n `ranks` python tests/`script_and_arguments`; past the timeout, mpiexec and
    every rank it started (one process group) are killed and the test fails."""
    script, *arguments = script_and_arguments.split()
    # Run as a module (tests.distributed_check) from the repository root, so that `runtime` is
    # the project's (run as a file, tests/ would come first on sys.path, and tests/runtime too).
    module = ".".join((TESTS / script).resolve().relative_to(ROOT).with_suffix("").parts)
    command = [mpiexec_or_skip(), "-n", str(ranks), sys.executable, "-m", module, *arguments]
    process = subprocess.Popen(command, cwd=ROOT, env=environment(**extra_environment),
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               start_new_session=True)
    try:
        stdout, stderr = process.communicate(timeout=MPI_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        stdout, stderr = process.communicate()
        pytest.fail(f"{' '.join(command)} still ran after {MPI_TIMEOUT_S} s (a rank waits "
                    f"for another forever?)\n{stdout}\n{stderr}")
    return subprocess.CompletedProcess(command, process.returncode, stdout, stderr)


@pytest.mark.long_running
@pytest.mark.parametrize("ranks", [2, 4])
def test_ranks_average_to_the_full_batch_gradient_and_train_as_one_process(ranks, tmp_path):
    result = run_ranks("distributed_check.py", ranks, CHECKPOINT_DIR=str(tmp_path))
    found = [json.loads(line) for line in result.stdout.splitlines() if line.startswith("{")]
    assert result.returncode == 0, result.stdout + result.stderr
    assert sorted(rank["rank"] for rank in found) == list(range(ranks))
    for rank in found:
        assert rank["passed"] and rank["size"] == ranks
        assert rank["traced_training_error"] <= 1e-12 and rank["traced_once"]
        assert rank["checkpoint_ok"]
        assert rank["gradient_error"] <= 1e-12 and rank["small_bucket_error"] <= 1e-12
        assert max(rank["training_error"].values()) <= 1e-12
        assert rank["minimize_error"] <= 1e-12 and rank["metrics_error"] <= 1e-12
        assert rank["broadcast_from_0_ok"] and rank[f"broadcast_from_{ranks - 1}_ok"]
        assert rank["mismatch_error"] == (
            "allreduce_mean: the ranks pass different arrays: rank 0 has [float64[2]], rank 1 "
            "has [float64[3]]. Every rank must reduce the same variables in the same order (a "
            "gradient None on some ranks only, or variables made in a different order, do this)")


def test_gpu_gradients_are_averaged_through_the_host_and_come_back_to_their_gpu():
    # NumPy behind CuPy's interface (tests/gpu/emulated), which refuses to mix in NumPy arrays
    # as CuPy does; tests/gpu runs on a real GPU when there is one.
    emulated = os.pathsep.join([str(TESTS / "gpu" / "emulated"), str(ROOT)])
    result = run_ranks("distributed_gpu_check.py", 2, PYTHONPATH=emulated)
    found = [json.loads(line) for line in result.stdout.splitlines() if line.startswith("{")]
    assert result.returncode == 0, result.stdout + result.stderr
    assert sorted(rank["rank"] for rank in found) == [0, 1]
    assert all(rank["passed"] and rank["dtypes"] == ["float64", "float32"] for rank in found)


def test_a_rank_that_raises_ends_every_rank_with_its_error():
    result = run_ranks("distributed_raise.py", 2)
    assert result.returncode != 0
    assert "ValueError: rank 1 fails on purpose" in result.stderr
    assert "autotrace.distributed: rank 1 raised ValueError; aborting all 2 ranks" in (
        result.stderr)
    assert "finished a reduction" not in result.stdout


@pytest.mark.long_running
def test_the_distributed_example_trains_on_two_ranks():
    pytest.importorskip("sklearn", reason="the digits data set comes with scikit-learn")
    result = run_ranks("../examples/distributed_mnist.py --epochs 3", 2)
    assert result.returncode == 0, result.stdout + result.stderr
    lines = result.stdout.splitlines()  # printed by rank 0 only
    assert [line.split(":")[0] for line in lines] == ["epoch 1", "epoch 2", "epoch 3"]
    assert lines[-1].endswith("(2 ranks)")
    assert float(lines[-1].split("test accuracy ")[1].split("%")[0]) >= 93.0
