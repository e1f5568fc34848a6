"""The device API on a machine without a GPU (tests/gpu has the ones that need one)."""
import re
import warnings

import numpy as np
import pytest

import autotrace
from autotrace.runtime.devices import Device, parse_device

NO_GPU = autotrace.num_gpus() == 0


@pytest.fixture
def soft_placement():
    previous = autotrace.config.soft_placement()
    autotrace.config._warned_fallback = False
    yield autotrace.config
    autotrace.config.soft_placement(previous)


@pytest.mark.parametrize("name, expected", [
    ("cpu", Device("cpu")), ("CPU", Device("cpu")), ("gpu", Device("gpu", 0)),
    ("gpu:1", Device("gpu", 1)), ("cuda:2", Device("gpu", 2)), (" cuda ", Device("gpu", 0)),
])
def test_device_names(name, expected):
    assert parse_device(name) == expected
    assert parse_device(expected) is expected


@pytest.mark.parametrize("name", ["tpu", "gpu:-1", "cpu:1", "", 3])
def test_unknown_device_names_are_refused(name):
    with pytest.raises(ValueError, match="unknown device"):
        parse_device(name)


def test_cpu_context_and_nesting():
    assert autotrace.current_device() == "cpu"
    with autotrace.device("cpu") as placed:
        assert placed.name == "cpu" and autotrace.current_device() == "cpu"
    assert autotrace.current_device() == "cpu"


def test_moving_numpy_values_to_the_cpu_keeps_them():
    x = np.arange(3.0)
    assert autotrace.to_device(x, "cpu") is x
    moved = autotrace.to_numpy({"a": (x, 2), "b": [x]})
    assert moved["a"][0] is x and moved["a"][1] == 2 and moved["b"][0] is x


@pytest.mark.skipif(not NO_GPU, reason="this machine has a GPU: the no-GPU errors do not apply")
def test_without_a_gpu_asking_for_one_is_an_error_that_says_so():
    assert autotrace.num_gpus() == 0 and autotrace.list_devices() == ["cpu"]
    with pytest.raises(autotrace.DeviceError, match=re.escape(
            "device 'gpu:0' was asked for, but no GPU is available")) as caught:
        with autotrace.device("gpu:0"):
            pass
    assert "autotrace.config.soft_placement(True)" in str(caught.value)
    with pytest.raises(autotrace.DeviceError, match="'gpu:1' was asked for"):
        autotrace.to_device(np.ones(2), "gpu:1")


@pytest.mark.skipif(not NO_GPU, reason="this machine has a GPU: nothing falls back")
def test_soft_placement_falls_back_to_the_cpu_with_one_warning(soft_placement):
    soft_placement.soft_placement(True)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with autotrace.device("gpu:0") as placed:
            assert placed.name == "cpu" and autotrace.current_device() == "cpu"
        x = np.ones(2)
        assert autotrace.to_device(x, "gpu") is x
    assert len(caught) == 1 and "running on the CPU instead (soft placement)" in str(
        caught[0].message)


def test_gpu_memory_settings_are_checked_and_kept():
    assert autotrace.config.gpu_memory(growth=True, limit_bytes=2 ** 30) == {
        "growth": True, "limit_bytes": 2 ** 30}
    with pytest.raises(ValueError, match="limit_bytes must be a positive int or None"):
        autotrace.config.gpu_memory(limit_bytes=-5)
    autotrace.config.gpu_memory()


def test_log_placement_names_the_device_of_each_new_trace(capsys):
    previous = autotrace.config.log_placement()
    autotrace.config.log_placement(True)
    try:
        doubled = autotrace.function(lambda x: x * 2.0)
        doubled(np.ones(3))
        doubled(np.ones(3))  # a cache hit: nothing more
    finally:
        autotrace.config.log_placement(previous)
    assert capsys.readouterr().err == (
        "autotrace: <lambda> (1 ops) runs on cpu; it moves no data between devices\n")
