"""Backend registry: one line per backend. Importing these modules imports no framework."""

from __future__ import annotations

from asyncbench.backends.base import DEVICE_PATTERN, Backend
from asyncbench.backends.cupy_backend import CupyBackend
from asyncbench.backends.handles import DeviceStatus
from asyncbench.backends.jax_backend import JaxBackend
from asyncbench.backends.mxnet_backend import MxnetBackend
from asyncbench.backends.numpy_backend import NumpyBackend
from asyncbench.backends.torch_backend import TorchBackend

BACKENDS: dict[str, type[Backend]] = {
    "numpy": NumpyBackend,
    "torch": TorchBackend,
    "cupy": CupyBackend,
    "jax": JaxBackend,
    "mxnet": MxnetBackend,
}


def get_backend(name: str) -> Backend:
    """A fresh instance of the named backend (names are validated by the config)."""
    return BACKENDS[name]()


__all__ = ["BACKENDS", "DEVICE_PATTERN", "Backend", "DeviceStatus", "get_backend"]
