"""A model of the CuPy classes and functions its sync hooks name (asyncbench/backends/cupy_syncs.py), laid out as
CuPy v14's source has them, for a machine without CuPy: `ndarray` a Python subclass of `_ndarray_base` (a Cython
class in CuPy) with `__slots__ = []`, conversions and printing through `self.get()`, `bool()` through `get`,
`nonzero` and masked indexing reading a count on the host; `cuda.Stream`, `cuda.Event` Python classes;
`cuda.runtime` a module; `cuda.Device` immutable, as a Cython `cdef class` is. Each wait sleeps WAIT_S.

`module()` builds a fresh `cupy` module object. Its module name is FRAMEWORK's, so its frames are never the user's."""

from __future__ import annotations

import time
import types
from typing import Any

import numpy as np

FRAMEWORK = frozenset({__name__})
#: how long a modelled wait blocks
WAIT_S = 0.002


def _wait() -> None:
    time.sleep(WAIT_S)


class _ndarray_base:  # noqa: N801 - CuPy's name
    def __init__(self, values: Any):
        self.values = np.asarray(values)
        self.dtype = self.values.dtype

    def get(self, stream: Any = None, order: str = "C", out: Any = None, blocking: bool = True) -> np.ndarray:
        if blocking:
            _wait()
        return self.values.copy()

    def item(self) -> Any:
        return self.get().item()

    def tolist(self) -> Any:
        return self.get().tolist()

    def __int__(self) -> int:
        return int(self.get())

    def __float__(self) -> float:
        return float(self.get())

    def __complex__(self) -> complex:
        return complex(self.get())

    def __repr__(self) -> str:
        return repr(self.get())

    def __str__(self) -> str:
        return str(self.get())

    def __format__(self, spec: str) -> str:
        return format(self.get(), spec)

    def __bool__(self) -> bool:
        return bool(self.get())

    def nonzero(self) -> tuple[Any, ...]:
        return tuple(ndarray(i) for i in np.nonzero(self.get()))

    def __getitem__(self, index: Any) -> Any:
        if isinstance(index, _ndarray_base):
            index = index.get()  # the mask's count decides the output's size
        return ndarray(self.values[index])

    def __gt__(self, other: Any) -> Any:
        return ndarray(self.values > other)

    def sum(self) -> Any:
        return ndarray(self.values.sum())


class ndarray(_ndarray_base):  # noqa: N801 - CuPy's name
    __slots__: list[str] = []


class _Immutable(type):
    def __setattr__(cls, name: str, value: Any) -> None:
        raise TypeError(f"cannot set {name!r} attribute of immutable type {cls.__name__!r}")


class Device(metaclass=_Immutable):
    """A Cython cdef class: its methods cannot be replaced."""

    def synchronize(self) -> None:
        _wait()


class Stream:
    def synchronize(self) -> None:
        _wait()


class Event:
    def synchronize(self) -> None:
        _wait()


def module() -> types.ModuleType:
    """A fresh `cupy` module object with what the hooks name."""
    cupy = types.ModuleType("cupy")
    runtime = types.ModuleType("cupy_backends.cuda.api.runtime")
    runtime.deviceSynchronize = lambda: _wait()  # type: ignore[attr-defined]
    runtime.streamSynchronize = lambda ptr=0: _wait()  # type: ignore[attr-defined]
    cupy.cuda = types.SimpleNamespace(Stream=Stream, Event=Event, Device=Device, runtime=runtime)  # type: ignore[attr-defined]
    cupy.ndarray = ndarray  # type: ignore[attr-defined]
    cupy.asnumpy = lambda a, stream=None, order="C", out=None, *, blocking=True: (  # type: ignore[attr-defined]
        a.get(stream=stream, blocking=blocking) if isinstance(a, ndarray) else np.asarray(a)
    )
    cupy.nonzero = lambda a: a.nonzero()  # type: ignore[attr-defined]
    cupy.argwhere = lambda a: ndarray(np.argwhere(a.get()))  # type: ignore[attr-defined]
    return cupy
