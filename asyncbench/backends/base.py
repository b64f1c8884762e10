"""The one small interface every backend implements.

A backend gives a workload what it needs in the framework's own terms: the
devices it can see (and why not, for those it can't), allocation, a
device-wide barrier, a wait for one result, host conversion, device timers
(events) where they exist, and memory statistics. Frameworks are imported
lazily, inside methods, so listing or validating never imports torch or cupy.
"""

from __future__ import annotations

import contextlib
import importlib.metadata
import importlib.util
import re
from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Any, Callable, ContextManager, Protocol

DEVICE_PATTERN = re.compile(r"^(auto|cpu|cuda(:\d+)?)$")


@dataclass(frozen=True)
class DeviceStatus:
    """A device a backend can or cannot use, with a human description or reason."""

    backend: str
    device: str  # "cpu", "cuda:0", or "cuda" for "no CUDA device at all"
    available: bool
    detail: str  # device name when available, why not otherwise


class DeviceTimer(Protocol):
    """Times device work between two points of the host program with events."""

    def start(self) -> None: ...

    def stop(self) -> None: ...

    def elapsed_s(self) -> float:
        """Seconds between start and stop on the device; call after a sync."""
        ...


class Backend(ABC):
    """An array framework as asyncbench sees it."""

    name: str = ""
    #: dtypes this framework can allocate
    dtypes: tuple[str, ...] = ("float16", "float32", "float64")

    #: the framework's import name
    module: str = ""

    def unavailable_reason(self) -> str | None:
        """Why the framework cannot be used at all (not installed...), or None."""
        return None if importlib.util.find_spec(self.module) else f"{self.module} not installed"

    #: distribution names whose installed version is the framework's, first found wins
    distributions: tuple[str, ...] = ()

    def version(self) -> str | None:
        """The framework's version from package metadata, without importing it."""
        for distribution in self.distributions:
            try:
                return importlib.metadata.version(distribution)
            except importlib.metadata.PackageNotFoundError:
                continue
        return None

    @abstractmethod
    def probe(self) -> tuple[DeviceStatus, ...]:
        """Every device kind this backend knows, available or with a reason."""

    def resolve(self, spec: str) -> tuple[list[str], str | None]:
        """Turn a device spec (auto, cpu, cuda, cuda:N) into device names.

        Returns (devices, None) or ([], reason) when the spec names nothing
        this backend can use here. `cuda` means `cuda:0`, as in torch.
        """
        reason = self.unavailable_reason()
        if reason:
            return [], reason
        statuses = self.probe()
        present = [s.device for s in statuses if s.available]
        if spec == "auto":
            return present, None if present else "no usable device"
        wanted = "cuda:0" if spec == "cuda" else spec
        if wanted in present:
            return [wanted], None
        kind = wanted.split(":")[0]
        for status in statuses:
            if not status.available and status.device.split(":")[0] == kind:
                return [], status.detail
        if kind == "cuda":
            count = sum(1 for d in present if d.startswith("cuda"))
            return [], f"{wanted} not present ({count} CUDA device(s) visible)"
        return [], f"{self.name} does not run on {kind}"

    def activate(self, device: str) -> ContextManager[Any]:
        """Make `device` current for allocations and streams (cupy needs this)."""
        return contextlib.nullcontext()

    @abstractmethod
    def random(self, shape: tuple[int, ...], dtype: str, device: str) -> Callable[[], Any]:
        """A zero-argument factory that makes a new standard-normal array per call.

        Returning a bound callable keeps backend indirection out of timed loops.
        """

    @abstractmethod
    def ones(self, shape: tuple[int, ...], dtype: str, device: str) -> Any:
        """An array of ones on `device`."""

    @abstractmethod
    def barrier(self, device: str) -> None:
        """Wait until everything issued on `device` (all streams) has finished."""

    @abstractmethod
    def wait(self, array: Any) -> None:
        """Wait until `array` is computed (a stream-level wait, not device-wide)."""

    @abstractmethod
    def to_host(self, array: Any) -> Any:
        """Convert to a NumPy array on the host (this blocks until the value exists)."""

    def timer(self, device: str) -> DeviceTimer | None:
        """Event-based device timer, or None where the device has no events (CPU)."""
        return None

    def reset_peak_memory(self, device: str) -> None:
        """Start a new peak-memory window on `device` (no-op where not tracked)."""

    def device_memory(self, device: str) -> tuple[int | None, int | None]:
        """(peak_bytes, reserved_bytes) on the device since the last reset, or Nones."""
        return None, None

    def is_asynchronous(self, device: str) -> bool:
        """Whether ops return before they finish on this device."""
        return device.startswith("cuda")
