"""A model of NVML for the GPU guard's tests (host.nvml), which need no GPU: a fake `pynvml` with two GPUs whose
compute modes and throttle reasons a test sets, and a workload of one variant that does nothing on the fake
backend's fake GPU, for run_case to record that GPU's readings."""

from __future__ import annotations

import types

from asyncbench.workloads.base import Prepared, Workload


class FakeNvml(types.ModuleType):
    """pynvml as host.nvml calls it. `throttles`: the bits each throttle-reason read returns in turn (then 0)."""

    def __init__(self, compute_modes: tuple[int, ...] = (0, 3), throttles: tuple[int, ...] = ()) -> None:
        super().__init__("pynvml")
        self.compute_modes = list(compute_modes)
        self.throttles = list(throttles)
        self.reads = 0
        self.started = False

    def nvmlInit(self) -> None:
        self.started = True

    def nvmlDeviceGetHandleByIndex(self, index: int) -> int:
        if index >= len(self.compute_modes):
            raise RuntimeError("NVMLError_InvalidArgument")
        return index

    def nvmlDeviceGetHandleByUUID(self, uuid: str) -> int:
        return {"GPU-aaaa": 0, "GPU-bbbb": 1}[uuid]

    def nvmlDeviceGetCount(self) -> int:
        return len(self.compute_modes)

    def nvmlDeviceGetUUID(self, handle: int) -> str:
        return ("GPU-aaaa", "GPU-bbbb")[handle]

    def nvmlDeviceGetName(self, handle: int) -> bytes:
        return b"NVIDIA H100 80GB HBM3"

    def nvmlDeviceGetClockInfo(self, handle: int, clock: int) -> int:
        return {1: 1980, 2: 2619}[clock]

    def nvmlDeviceGetMaxClockInfo(self, handle: int, clock: int) -> int:
        return 1980

    def nvmlDeviceGetEnforcedPowerLimit(self, handle: int) -> int:
        return 700_000 if handle == 0 else 400_000  # mW: GPU 1 capped

    def nvmlDeviceGetPowerManagementDefaultLimit(self, handle: int) -> int:
        return 700_000

    def nvmlDeviceGetTemperature(self, handle: int, sensor: int) -> int:
        return 41

    def nvmlDeviceGetComputeMode(self, handle: int) -> int:
        return self.compute_modes[handle]

    def nvmlDeviceGetCurrentClocksThrottleReasons(self, handle: int) -> int:
        self.reads += 1
        return self.throttles.pop(0) if self.throttles else 0


class OneVariant(Workload):
    name = "one_variant"
    summary = "a variant that does nothing, on the fake backend's fake GPU"
    variants = ("v",)

    def setup(self, backend, device, params):
        return Prepared(variants={"v": lambda: None}, sync=lambda: None)
