"""Device placement on a CUDA GPU through CuPy. Skipped, with the reason printed, where there
is none (CI has none)."""
import numpy as np
import pytest

import autotrace

if autotrace.num_gpus() == 0:
    pytest.skip("no CUDA GPU (or CuPy) on this machine: the GPU tests need one",
                allow_module_level=True)

import cupy  # noqa: E402


def test_to_device_and_back():
    x = np.arange(6.0).reshape(2, 3)
    on_gpu = autotrace.to_device(x, "gpu:0")
    assert isinstance(on_gpu, cupy.ndarray) and on_gpu.device.id == 0
    assert autotrace.to_device(on_gpu, "gpu:0") is on_gpu
    np.testing.assert_array_equal(autotrace.to_numpy(on_gpu), x)
    assert autotrace.list_devices()[:2] == ["cpu", "gpu:0"]


def test_a_gradient_of_cupy_arrays_stays_on_the_gpu():
    x = cupy.linspace(-1.0, 1.0, 5)
    gradient = autotrace.grad(lambda x: (x * x).sum())(x)
    assert isinstance(gradient, cupy.ndarray)
    np.testing.assert_allclose(cupy.asnumpy(gradient), 2 * np.linspace(-1.0, 1.0, 5))


def test_the_gpu_memory_limit_is_the_memory_pools():
    pool = cupy.get_default_memory_pool()
    try:
        autotrace.config.gpu_memory(growth=True, limit_bytes=64 << 20)
        assert pool.get_limit() == 64 << 20
        with pytest.raises(cupy.cuda.memory.OutOfMemoryError):
            cupy.empty(128 << 20, dtype=cupy.uint8)
    finally:
        autotrace.config.gpu_memory()  # growth, no limit: the default
    assert pool.get_limit() == 0
    assert cupy.empty(128 << 20, dtype=cupy.uint8).nbytes == 128 << 20


def test_log_placement_names_the_gpu(capsys):
    previous = autotrace.config.log_placement()
    autotrace.config.log_placement(True)
    try:
        doubled = autotrace.function(lambda x: x * 2.0)
        doubled(cupy.ones(3))
        doubled(cupy.ones(3))  # a cache hit: nothing more
    finally:
        autotrace.config.log_placement(previous)
    assert capsys.readouterr().err == (
        "autotrace: <lambda> (1 ops) runs on gpu:0; it moves no data between devices\n")


def doubled(x):
    return x * 2.0


def test_graphs_and_device_scopes_make_their_gpu_current_where_there_are_several(monkeypatch):
    """Kernels launch on CuPy's current device: with several GPUs a traced function makes its
    inputs' GPU current for each call, and `autotrace.device` makes its GPU current. (Checked
    with the GPU count set to 2 and the device contexts recorded: one GPU is what this has.)"""
    entered = []

    class Recording(cupy.cuda.Device):
        def __enter__(self):
            entered.append(self.id)
            return super().__enter__()

    monkeypatch.setattr(cupy.cuda, "Device", Recording)
    monkeypatch.setattr(cupy.cuda.runtime, "getDeviceCount", lambda: 2)
    x = autotrace.to_device(np.arange(3.0), "gpu:0")
    traced = autotrace.function(doubled)
    traced(x)
    entered.clear()
    np.testing.assert_array_equal(autotrace.to_numpy(traced(x)), [0.0, 2.0, 4.0])
    traced(x)
    assert entered == [0, 0]
    entered.clear()
    with autotrace.device("gpu:0"):
        assert entered == [0]
    monkeypatch.setattr(cupy.cuda.runtime, "getDeviceCount", lambda: 1)
    single = autotrace.function(doubled)
    single(x)
    entered.clear()
    single(x)
    assert entered == []


def test_a_traced_loops_python_int_is_checked_on_the_gpu():
    from tests.test_traced_control_more import debt, factorial
    for function, argument in [(factorial, 20), (debt, 2)]:
        result = autotrace.function(function)(autotrace.to_device(np.int64(argument), "gpu:0"))
        assert isinstance(result, cupy.ndarray) and int(cupy.asnumpy(result)) == function(argument)
    for function, argument in [(factorial, 21), (debt, 3)]:
        with pytest.raises(OverflowError, match=r"left the range of int64 \(-2\*\*63 to "):
            autotrace.function(function)(autotrace.to_device(np.int64(argument), "gpu:0"))
