"""The CUDA probe in a child: when the child fails, the parent says why and still opens no context; the compute
mode is read from the driver in a child too."""

from __future__ import annotations

import subprocess
from typing import Any

import pytest

from asyncbench.backends import cuda_devices
from asyncbench.backends.torch_backend import TorchBackend


@pytest.fixture
def cuda_machine(monkeypatch):
    """torch as a CUDA build that sees a device, without a CUDA context here, in the run's own process."""
    import torch

    monkeypatch.setattr(torch.version, "cuda", "12.4")
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "is_initialized", lambda: False)
    monkeypatch.setattr(cuda_devices.processes, "in_worker", False)
    opened: list[str] = []

    def here() -> list[dict]:
        opened.append("a CUDA context in the parent")  # what asking torch here does on a real machine
        return [{"name": "Test GPU", "memory_bytes": 2**30, "capability": "9.0"}]

    monkeypatch.setattr(cuda_devices, "_ask_here", here)
    cuda_devices.listing.cache_clear()
    yield opened
    cuda_devices.listing.cache_clear()


@pytest.mark.parametrize(
    "failure, said",
    [
        (subprocess.CalledProcessError(1, "python", stderr="Traceback...\nRuntimeError: CUDA driver version is insufficient\n"), "driver"),
        (subprocess.TimeoutExpired("python", cuda_devices.QUERY_TIMEOUT_S), "did not answer within 60 s"),
        (OSError(24, "Too many open files"), "Too many open files"),
    ],
)
def test_a_failed_child_probe_opens_no_context_here_and_says_why_in_one_line(cuda_machine, monkeypatch, failure, said):
    def run(command: list[str], **kwargs: Any) -> subprocess.CompletedProcess:
        raise failure

    monkeypatch.setattr(cuda_devices.subprocess, "run", run)
    assert cuda_devices.cuda_devices() == ()
    assert cuda_machine == []  # before: the parent asked torch itself, a context for the whole run
    (unusable,) = [s for s in TorchBackend().probe() if s.device.startswith("cuda")]
    assert not unusable.available
    assert unusable.detail.startswith("the CUDA devices could not be probed: the probe process")
    assert said in unusable.detail
    assert "\n" not in unusable.detail


def test_compute_modes_come_from_a_child_and_nothing_is_refused_without_a_driver(monkeypatch):
    monkeypatch.setattr(cuda_devices.processes, "in_worker", False)
    asked: list[str] = []

    def run(command: list[str], **kwargs: Any) -> subprocess.CompletedProcess:
        asked.append(command[-1])
        return subprocess.CompletedProcess(command, 0, stdout='["default", "exclusive_process"]\n', stderr="")

    monkeypatch.setattr(cuda_devices.subprocess, "run", run)
    cuda_devices.compute_modes.cache_clear()
    try:
        assert cuda_devices.compute_modes() == {0: "default", 1: "exclusive_process"}
        assert asked == [cuda_devices._MODES]
    finally:
        cuda_devices.compute_modes.cache_clear()
    # this machine has no CUDA driver: the real child finds no libcuda, and no mode is known
    monkeypatch.undo()
    cuda_devices.compute_modes.cache_clear()
    try:
        assert cuda_devices.compute_modes() == {}
    finally:
        cuda_devices.compute_modes.cache_clear()


class _FakeLibcuda:
    """libcuda's four calls the compute-mode reader makes, for two devices in the given modes."""

    def __init__(self, modes: list[int]):
        self.modes = modes

    def cuInit(self, flags: int) -> int:  # noqa: N802 - the driver's names
        return 0

    def cuDeviceGetCount(self, count: Any) -> int:  # noqa: N802
        count._obj.value = len(self.modes)
        return 0

    def cuDeviceGet(self, device: Any, index: int) -> int:  # noqa: N802
        device._obj.value = index
        return 0

    def cuDeviceGetAttribute(self, value: Any, attribute: int, device: Any) -> int:  # noqa: N802
        assert attribute == cuda_devices.COMPUTE_MODE_ATTRIBUTE
        value._obj.value = self.modes[device.value]
        return 0


def test_the_driver_s_compute_mode_values_are_named(monkeypatch):
    monkeypatch.setattr(cuda_devices.ctypes, "CDLL", lambda name: _FakeLibcuda([0, 3, 2]))
    assert cuda_devices._modes_here() == ["default", "exclusive_process", "prohibited"]
