"""What a results file records about GPUs (issue 36, findings 5 and 8): the variables that change GPU results, NVML's
view of each GPU, JAX's GPU models, and the machine fingerprint they make (history.machine)."""

from __future__ import annotations

import sys

import pytest

from asyncbench.engine import environment
from asyncbench.history import machine
from asyncbench.host import cuda_ids, nvml
from asyncbench.verdicts import environments
from tests.support.fake_nvml import FakeNvml


@pytest.fixture(autouse=True)
def _no_nvml(monkeypatch):
    """No NVML unless a test installs its model (this machine may have neither; a GPU machine must not leak in)."""
    monkeypatch.setitem(sys.modules, "pynvml", None)
    nvml._library.cache_clear()
    yield
    nvml._library.cache_clear()


def test_variables_that_change_gpu_results_are_recorded_and_compared(monkeypatch):
    for name in ("CUDA_DEVICE_MAX_CONNECTIONS", "CUPY_TF32", "NVIDIA_TF32_OVERRIDE", "XLA_PYTHON_CLIENT_MEM_FRACTION"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("TORCH_ALLOW_TF32_CUBLAS_OVERRIDE", "1")
    monkeypatch.setenv("CUDA_MODULE_LOADING", "EAGER")
    monkeypatch.setenv("XLA_PYTHON_CLIENT_PREALLOCATE", "false")
    base = environment.capture(["numpy"])
    assert base["gpu_variables"] == {
        "CUDA_MODULE_LOADING": "EAGER",
        "TORCH_ALLOW_TF32_CUBLAS_OVERRIDE": "1",
        "XLA_PYTHON_CLIENT_PREALLOCATE": "false",
    }
    monkeypatch.setenv("CUDA_DEVICE_MAX_CONNECTIONS", "1")
    monkeypatch.setenv("CUPY_TF32", "1")
    head = environment.capture(["numpy"])
    changes = {key: (old, new) for key, old, new in environments.changes(base, head)}
    assert changes["gpu_variables.CUDA_DEVICE_MAX_CONNECTIONS"] == (None, "1")
    assert changes["gpu_variables.CUPY_TF32"] == (None, "1")
    assert not any(key.startswith("gpu_variables.CUDA_MODULE_LOADING") for key in changes)


def test_a_gpu_machine_records_each_gpus_compute_mode_and_power_limit(monkeypatch):
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)
    monkeypatch.setenv("CUDA_DEVICE_ORDER", "PCI_BUS_ID")  # cuda:N is NVML's GPU N (the driver is not asked here)
    monkeypatch.setattr(cuda_ids, "driver_identities", lambda: None)
    monkeypatch.setitem(sys.modules, "pynvml", FakeNvml(compute_modes=(3, 0)))
    nvml._library.cache_clear()
    gpus = environment.capture(["numpy"])["gpus"]
    assert gpus["cuda:0"]["compute_mode"] == "EXCLUSIVE_PROCESS"
    assert gpus["cuda:1"]["power_limit_w"] == 400.0


def test_a_machine_without_nvml_records_no_gpus():
    assert "gpus" not in environment.capture(["numpy"])


def _jax_gpu_environment(monkeypatch, kind: str) -> dict:
    from asyncbench.backends import jax_backend

    monkeypatch.setattr(jax_backend, "_devices", lambda: {"cpus": 2, "async_dispatch": True, "gpus": [kind]})
    monkeypatch.setattr(jax_backend.JaxBackend, "unavailable_reason", lambda self: None)
    return {"cpu": "x", "cpu_cores_logical": 16, "frameworks": {"jax": jax_backend.JaxBackend().facts()}}


def test_jax_gpu_results_carry_the_gpu_model_in_the_machine_fingerprint(monkeypatch):
    a100 = _jax_gpu_environment(monkeypatch, "NVIDIA A100-SXM4-80GB")
    h100 = _jax_gpu_environment(monkeypatch, "NVIDIA H100 80GB HBM3")
    assert a100["frameworks"]["jax"]["devices"] == {"cuda:0": "NVIDIA A100-SXM4-80GB"}
    assert machine.describe(h100, "jax", "cuda:0")["gpus"] == ["NVIDIA H100 80GB HBM3"]
    assert machine.fingerprint(machine.describe(a100, "jax", "cuda:0")) != machine.fingerprint(machine.describe(h100, "jax", "cuda:0"))
    # a CPU case's numbers do not depend on the GPU: one series on both machines
    assert machine.fingerprint(machine.describe(a100, "jax", "cpu")) == machine.fingerprint(machine.describe(h100, "jax", "cpu"))


def test_a_gpus_compute_mode_and_power_cap_split_its_series_and_defaults_do_not():
    plain = {"cpu": "x", "cpu_cores_logical": 16, "frameworks": {"torch": {"version": "2.13.0", "devices": {"cuda:0": "H100"}}}}
    default = {**plain, "gpus": {"cuda:0": {"compute_mode": "DEFAULT", "power_limit_w": 700.0, "default_power_limit_w": 700.0}}}
    exclusive = {**plain, "gpus": {"cuda:0": {"compute_mode": "EXCLUSIVE_PROCESS", "power_limit_w": 700.0, "default_power_limit_w": 700.0}}}
    capped = {**plain, "gpus": {"cuda:0": {"compute_mode": "DEFAULT", "power_limit_w": 400.0, "default_power_limit_w": 700.0}}}

    def key(env: dict, device: str = "cuda:0") -> str:
        return machine.fingerprint(machine.describe(env, "torch", device))

    assert key(default) == key(plain)  # a file from before NVML was read stays in its series
    assert key(exclusive) != key(default)
    assert key(capped) != key(default)
    assert machine.describe(capped, "torch", "cuda:0")["gpu_settings"] == ["cuda:0 power limit 400 W of 700 W"]
    assert key(exclusive, "cpu") == key(plain, "cpu")
