"""NumPy: the synchronous CPU baseline (every op finishes before it returns)."""

from __future__ import annotations

from typing import Any, Callable

from asyncbench.backends.base import Backend
from asyncbench.backends.handles import DeviceStatus


class NumpyBackend(Backend):
    name = "numpy"
    module = "numpy"
    distributions = ("numpy",)
    device_kinds = ("cpu",)
    synchronous_kinds = ("cpu",)  # NumPy's ops finish before they return
    # Generator.standard_normal makes only these two
    dtypes = ("float32", "float64")

    def probe(self) -> tuple[DeviceStatus, ...]:
        return (
            DeviceStatus(self.name, "cpu", True, "host CPU"),
            DeviceStatus(self.name, "cuda", False, "numpy runs on the CPU only"),
        )

    def random(self, shape: tuple[int, ...], dtype: str, device: str) -> Callable[[], Any]:
        import functools

        import numpy

        generator = numpy.random.default_rng()
        return functools.partial(generator.standard_normal, size=shape, dtype=numpy.dtype(dtype))

    def ones(self, shape: tuple[int, ...], dtype: str, device: str) -> Any:
        import numpy

        return numpy.ones(shape, dtype=dtype)

    def namespace(self) -> Any:
        import numpy

        return numpy

    def barrier(self, device: str) -> None:
        """Nothing to wait for: NumPy ops finish before returning."""

    def wait(self, array: Any) -> None:
        """Nothing to wait for: NumPy ops finish before returning."""

    def to_host(self, array: Any) -> Any:
        return array

    def is_asynchronous(self, device: str) -> bool:
        return False

    def device_delay(self, device: str) -> tuple[None, str]:
        return None, "numpy runs synchronously: the host is the device"
