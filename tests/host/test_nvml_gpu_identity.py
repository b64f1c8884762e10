"""Issue 53, item 10 (a, b): the NVML guard says "unknown" where it cannot know, never a wrong figure.

(a) A driver that cannot report throttle reasons (NVMLError_NotSupported) read as "not throttled".
(b) `cuda:N` was matched to NVML's GPU by position: NVML numbers GPUs in PCI bus order, CUDA fastest first unless
    CUDA_DEVICE_ORDER=PCI_BUS_ID, and CUDA_VISIBLE_DEVICES takes UUID prefixes, MIG instances and stops at an invalid
    entry. Now the driver's own UUID (or PCI bus id) of each CUDA device names it (host.cuda_ids, asked in a child),
    and where the driver cannot be asked CUDA_VISIBLE_DEVICES is read as CUDA reads it, "unknown" where it cannot say.

Against a model of NVML (tests/support/fake_nvml.py's FakeNvml, with UUIDs, PCI bus ids and a count) and of libcuda.
"""

from __future__ import annotations

import subprocess
import sys
from typing import Any

import pytest

from asyncbench.host import cuda_ids, nvml
from tests.support.fake_nvml import FakeNvml

UUIDS = ("GPU-aaaa1111-2222-3333-4444-555555555555", "GPU-bbbb1111-2222-3333-4444-555555555555")
BUSES = ("00000000:1B:00.0", "00000000:3B:00.0")


class NotSupportedError(Exception):
    """What pynvml raises where a GPU or driver does not report a figure (NVMLError_NotSupported)."""


class Nvml(FakeNvml):
    """FakeNvml with full-length UUIDs, PCI bus ids, and throttle reasons the driver may not support."""

    def __init__(self, reasons_supported: bool = True, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.reasons_supported = reasons_supported

    def nvmlDeviceGetCount(self) -> int:
        return len(self.compute_modes)

    def nvmlDeviceGetUUID(self, handle: int) -> str:
        return UUIDS[handle]

    def nvmlDeviceGetHandleByUUID(self, uuid: str) -> int:
        if uuid not in UUIDS:
            raise RuntimeError("NVMLError_NotFound")
        return UUIDS.index(uuid)

    def nvmlDeviceGetHandleByPciBusId(self, bus: str) -> int:
        if bus not in BUSES:
            raise RuntimeError("NVMLError_NotFound")
        return BUSES.index(bus)

    def nvmlDeviceGetCurrentClocksThrottleReasons(self, handle: int) -> int:
        if not self.reasons_supported:
            self.reads += 1
            raise NotSupportedError("Not Supported")
        return super().nvmlDeviceGetCurrentClocksThrottleReasons(handle)


@pytest.fixture
def gpus(monkeypatch):
    """Two GPUs in NVML, GPU 1 capped at 400 W and in EXCLUSIVE_PROCESS mode; no CUDA variable set, and the driver
    not asked unless a test says what it answers."""

    def install(driver: list[cuda_ids.Identity] | None = None, **kwargs: Any) -> Nvml:
        fake = Nvml(compute_modes=(0, 3), **kwargs)
        monkeypatch.setitem(sys.modules, "pynvml", fake)
        monkeypatch.setattr(cuda_ids, "driver_identities", lambda: None if driver is None else tuple(driver))
        nvml._library.cache_clear()
        return fake

    for name in ("CUDA_VISIBLE_DEVICES", "CUDA_DEVICE_ORDER"):
        monkeypatch.delenv(name, raising=False)
    yield install
    nvml._library.cache_clear()


# --- (a) throttle reasons the driver cannot report -------------------------------------------------------------


def test_throttle_reasons_the_driver_cannot_report_read_unknown_not_unthrottled(gpus, monkeypatch):
    gpus(reasons_supported=False)
    monkeypatch.setenv("CUDA_DEVICE_ORDER", "PCI_BUS_ID")
    state = nvml.state("cuda:0")
    assert state is not None
    assert state.throttle_reasons is None
    assert "not throttled" not in state.text()
    assert "throttle reasons unknown" in state.text()


def test_a_guard_that_could_not_read_throttle_reasons_says_its_rounds_are_unknown(gpus, monkeypatch):
    gpus(reasons_supported=False)
    monkeypatch.setenv("CUDA_DEVICE_ORDER", "PCI_BUS_ID")
    monkeypatch.setattr(nvml, "READ_EVERY_S", 0.0)
    guard = nvml.guard("cuda:0", warmup_samples=1, per_round=1)
    assert guard is not None
    for _ in range(1 + 4):
        guard.before_sample()
    guarded = guard.finish()
    note = guarded.note()
    assert "not throttled" not in note
    assert "throttle reasons unknown in 4 of 4 rounds" in note
    assert guarded.warning() is None  # nothing seen throttle: no warning, and no claim it did not


def test_reasons_read_in_some_rounds_and_not_others_say_which_is_which(gpus, monkeypatch):
    fake = gpus()
    monkeypatch.setenv("CUDA_DEVICE_ORDER", "PCI_BUS_ID")
    monkeypatch.setattr(nvml, "READ_EVERY_S", 0.0)
    guard = nvml.guard("cuda:0", warmup_samples=0, per_round=1)
    assert guard is not None
    guard.before_sample()  # round 0: read, 0
    fake.reasons_supported = False
    guard.before_sample()  # round 1: not answered
    guarded = guard.finish()  # after: not answered either
    assert guarded.throttled_rounds == ()
    assert "throttle reasons unknown in 1 of 2 rounds" in guarded.note()
    assert "after SM 1980 MHz" in guarded.note()
    assert guarded.note().endswith("throttle reasons unknown in 1 of 2 rounds (the GPU or driver did not report them)")


# --- (b) which GPU cuda:N is --------------------------------------------------------------------------------------


def test_cuda_0_is_the_gpu_the_driver_names_not_nvmls_gpu_0(gpus):
    """CUDA ordered the GPUs fastest first, GPU 1 (PCI) first: the driver's UUID of cuda:0 is GPU 1's."""
    gpus(driver=[cuda_ids.Identity(UUIDS[1], BUSES[1]), cuda_ids.Identity(UUIDS[0], BUSES[0])])
    assert nvml.compute_mode(0) == "EXCLUSIVE_PROCESS"  # before: NVML's GPU 0, DEFAULT
    assert nvml.compute_mode(1) == "DEFAULT"
    state = nvml.state("cuda:0")
    assert state is not None
    assert state.power_limit_w == 400.0
    assert nvml.snapshot()["cuda:0"]["power_limit_w"] == 400.0


def test_a_driver_answer_without_a_uuid_is_matched_by_pci_bus_id(gpus):
    gpus(driver=[cuda_ids.Identity(None, BUSES[1])])
    assert nvml.compute_mode(0) == "EXCLUSIVE_PROCESS"
    assert nvml.compute_mode(1) is None  # the driver shows one device


def test_a_driver_uuid_nvml_does_not_list_is_unknown(gpus):
    gpus(driver=[cuda_ids.Identity("GPU-cccc1111-2222-3333-4444-555555555555", None)])  # a MIG instance's, say
    assert nvml.state("cuda:0") is None
    guard = nvml.guard("cuda:0", 0, 1)
    assert guard is not None
    guard.before_sample()
    said = guard.finish()
    assert said.note().startswith("NVML cuda:0: not read: which GPU this is could not be told")
    assert said.warning() is None
    assert "GPU-cccc1111" in nvml.snapshot()["cuda:0"]["unknown"]


def test_without_the_driver_two_gpus_in_cudas_default_order_are_unknown(gpus):
    """CUDA numbers GPUs fastest first by default, and NVML's PCI order need not be that: say so, name neither."""
    gpus()
    assert nvml.compute_mode(0) is None  # before: NVML's GPU 0 taken for cuda:0
    assert nvml.state("cuda:1") is None
    snapshot = nvml.snapshot()
    assert list(snapshot) == ["cuda:0", "cuda:1"]
    assert "CUDA_DEVICE_ORDER=PCI_BUS_ID" in snapshot["cuda:0"]["unknown"]
    assert "power_limit_w" not in snapshot["cuda:1"]
    guard = nvml.guard("cuda:1", 0, 1)
    assert guard is not None
    assert "CUDA_DEVICE_ORDER" in guard.finish().note()


def test_without_the_driver_pci_bus_order_makes_indices_exact(gpus, monkeypatch):
    gpus()
    monkeypatch.setenv("CUDA_DEVICE_ORDER", "PCI_BUS_ID")
    assert (nvml.compute_mode(0), nvml.compute_mode(1)) == ("DEFAULT", "EXCLUSIVE_PROCESS")
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "1,0")  # reordered
    assert (nvml.compute_mode(0), nvml.compute_mode(1)) == ("EXCLUSIVE_PROCESS", "DEFAULT")


def test_without_the_driver_one_gpu_is_that_gpu_in_any_order(monkeypatch):
    fake = Nvml(compute_modes=(3,))
    monkeypatch.setitem(sys.modules, "pynvml", fake)
    monkeypatch.setattr(cuda_ids, "driver_identities", lambda: None)
    for name in ("CUDA_VISIBLE_DEVICES", "CUDA_DEVICE_ORDER"):
        monkeypatch.delenv(name, raising=False)
    nvml._library.cache_clear()
    try:
        assert nvml.compute_mode(0) == "EXCLUSIVE_PROCESS"
        assert nvml.compute_mode(1) is None
    finally:
        nvml._library.cache_clear()


def test_without_the_driver_a_uuid_prefix_names_the_one_gpu_it_starts(gpus, monkeypatch):
    gpus()
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "GPU-bbbb")  # CUDA takes a unique prefix of a UUID
    assert nvml.compute_mode(0) == "EXCLUSIVE_PROCESS"  # before: no GPU (the prefix is no whole UUID)
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", f"{UUIDS[1]},{UUIDS[0]}")
    assert (nvml.compute_mode(0), nvml.compute_mode(1)) == ("EXCLUSIVE_PROCESS", "DEFAULT")


def test_without_the_driver_an_ambiguous_prefix_is_unknown(gpus, monkeypatch):
    gpus()
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "GPU-")  # the start of both
    assert nvml.compute_mode(0) is None
    assert "2 GPUs" in nvml.snapshot()["cuda:0"]["unknown"]


def test_without_the_driver_an_invalid_entry_hides_every_entry_after_it(gpus, monkeypatch):
    """CUDA: "0,2,-1,1" shows devices 0 and 2 only; here "0,-1,1" shows GPU 0 alone."""
    gpus()
    monkeypatch.setenv("CUDA_DEVICE_ORDER", "PCI_BUS_ID")
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "0,-1,1")
    assert nvml.compute_mode(0) == "DEFAULT"
    assert nvml.compute_mode(1) is None
    assert nvml.compute_mode(2) is None  # before: entry 2, "1", gave GPU 1's mode to a cuda:2 CUDA does not have
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "0,7,1")  # an index past the last GPU is invalid too
    assert list(nvml.snapshot()) == ["cuda:0"]


def test_without_the_driver_a_mig_instance_is_unknown(gpus, monkeypatch):
    gpus()
    monkeypatch.setenv("CUDA_DEVICE_ORDER", "PCI_BUS_ID")
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "MIG-aaaa1111-2222-3333-4444-555555555555")
    assert nvml.state("cuda:0") is None
    assert "MIG instance" in nvml.snapshot()["cuda:0"]["unknown"]


# --- the driver's answer -------------------------------------------------------------------------------------------


class _FakeLibcuda:
    """libcuda's calls cuda_ids makes, for devices with the given 16-byte UUIDs and PCI bus ids."""

    def __init__(self, devices: list[tuple[bytes, str]], v2: bool = True):
        self.devices = devices
        if v2:
            self.cuDeviceGetUuid_v2 = self._uuid

    def cuInit(self, flags: int) -> int:  # noqa: N802 - the driver's names
        return 0

    def cuDeviceGetCount(self, count: Any) -> int:  # noqa: N802
        count._obj.value = len(self.devices)
        return 0

    def cuDeviceGet(self, device: Any, index: int) -> int:  # noqa: N802
        device._obj.value = index
        return 0

    def _uuid(self, uuid: Any, device: Any) -> int:
        uuid[:] = self.devices[device.value][0]
        return 0

    def cuDeviceGetUuid(self, uuid: Any, device: Any) -> int:  # noqa: N802
        return self._uuid(uuid, device)

    def cuDeviceGetPCIBusId(self, bus: Any, length: int, device: Any) -> int:  # noqa: N802
        bus.value = self.devices[device.value][1].encode()
        return 0


def test_the_driver_s_uuid_and_pci_bus_id_are_read_as_nvidia_smi_writes_them(monkeypatch):
    raw = bytes.fromhex("8932f937d72c4106c12f20bd9faed9f6")
    monkeypatch.setattr(cuda_ids.ctypes, "CDLL", lambda name: _FakeLibcuda([(raw, "0000:3B:00.0")]))
    assert cuda_ids._here() == [{"uuid": "GPU-8932f937-d72c-4106-c12f-20bd9faed9f6", "pci_bus_id": "0000:3B:00.0"}]
    monkeypatch.setattr(cuda_ids.ctypes, "CDLL", lambda name: _FakeLibcuda([(raw, "0000:3B:00.0")], v2=False))
    assert cuda_ids._here()[0]["uuid"] == "GPU-8932f937-d72c-4106-c12f-20bd9faed9f6"


def test_the_driver_is_asked_in_a_child_and_a_failed_child_means_unknown(monkeypatch):
    monkeypatch.setattr(cuda_ids.processes, "in_worker", False)
    asked: list[str] = []

    def run(command: list[str], **kwargs: Any) -> subprocess.CompletedProcess:
        asked.append(command[-1])
        return subprocess.CompletedProcess(command, 0, stdout='[{"uuid": "GPU-x", "pci_bus_id": "0000:01:00.0"}]\n', stderr="")

    monkeypatch.setattr(cuda_ids.subprocess, "run", run)
    cuda_ids.driver_identities.cache_clear()
    try:
        assert cuda_ids.driver_identities() == (cuda_ids.Identity("GPU-x", "0000:01:00.0"),)
        assert asked == [cuda_ids._QUERY]  # not here: cuInit would leave the driver loaded in the run's own process
    finally:
        cuda_ids.driver_identities.cache_clear()

    def fails(command: list[str], **kwargs: Any) -> subprocess.CompletedProcess:
        raise subprocess.CalledProcessError(1, command, stderr="OSError: libcuda.so.1: cannot open shared object file")

    monkeypatch.setattr(cuda_ids.subprocess, "run", fails)
    try:
        assert cuda_ids.driver_identities() is None
    finally:
        cuda_ids.driver_identities.cache_clear()


def test_a_case_on_a_gpu_that_cannot_be_told_says_so_in_its_note_and_gives_no_other_gpus_figures(gpus):
    from asyncbench.engine import runner
    from asyncbench.results.model import Case, Settings
    from tests.support.fake_nvml import OneVariant
    from tests.support.helpers import FakeBackend

    gpus()  # two GPUs, CUDA's default order, the driver not answering
    settings = Settings(warmup=1, min_samples=6, max_samples=6, max_time_s=5.0)
    case = Case(id="c", experiment="c", workload="one_variant", backend="fake", device="cuda:1", params={}, settings=settings)
    result = runner.run_case(case, OneVariant(), FakeBackend(devices=("cuda:1",)))
    assert result.status == "ok", result.reason
    assert "NVML cuda:1: not read: which GPU this is could not be told (CUDA numbers GPUs fastest first" in (result.note or "")
    assert "power limit" not in (result.note or "")  # before: GPU 1's 400 W, whichever GPU cuda:1 was
    assert result.warnings == ()
