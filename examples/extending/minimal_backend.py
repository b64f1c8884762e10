"""A minimal backend: NumPy on the CPU under another name, with every member a backend must define.

Register it with one line in `asyncbench/backends/__init__.py` (a test registers it for the length of a run):

    BACKENDS = {..., "minimal": MinimalBackend}
"""

from __future__ import annotations

from typing import Any, Callable

from asyncbench.backends.base import Backend, DeviceStatus


class MinimalBackend(Backend):
    name = "minimal"
    module = "numpy"  # what `unavailable_reason` looks for: not installed -> every case is a skipped row
    distributions = ("numpy",)  # where `version` reads the framework's version (package metadata, no import)
    device_kinds = ("cpu",)  # never paired with a cuda device
    dtypes = ("float32", "float64")

    def probe(self) -> tuple[DeviceStatus, ...]:
        return (DeviceStatus(self.name, "cpu", True, "NumPy on the calling thread"),)

    def random(self, shape: tuple[int, ...], dtype: str, device: str) -> Callable[[], Any]:
        import numpy  # frameworks are imported lazily: --help, list and validate never import them

        generator = numpy.random.default_rng(0)
        return lambda: generator.random(shape, dtype=dtype)

    def ones(self, shape: tuple[int, ...], dtype: str, device: str) -> Any:
        import numpy

        return numpy.ones(shape, dtype=dtype)

    def barrier(self, device: str) -> None:
        """Every op has finished when it returns: nothing to wait for."""

    def wait(self, array: Any) -> None:
        """Nothing runs ahead on this backend."""

    def to_host(self, array: Any) -> Any:
        return array
