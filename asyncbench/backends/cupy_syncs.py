"""Where CuPy's host waits for a CUDA device (`run --syncs`): the entry points the census wraps.

Read from CuPy's source (cupy/_core/core.pyx, cupy/__init__.py, cupy/cuda/stream.pyx, v14): `cupy.ndarray` is a
Python subclass of the Cython class `_ndarray_base`, so its methods can be shadowed on it with `setattr` (a `cpdef`
method such as `get` or `item` called from Cython on an ndarray also finds the Python override, so a wait reached
inside CuPy goes through the hook, counted once at the outermost). The waits:
- conversions: `get()` (unless `blocking=False`), `cupy.asnumpy` (of a cupy array), `item`, `tolist`,
  `int()`/`float()`/`complex()` (each `self.get()` inside);
- printing: `__repr__`, `__str__`, `__format__` (each `self.get()`);
- control flow: `bool(a)` (`__bool__`: `bool(self.get())`), `nonzero`, `cupy.nonzero`, `cupy.argwhere`, and
  indexing with a boolean mask (the output's size is the mask's count, read on the host);
- explicit waits: `cupy.cuda.Stream.synchronize` (`get_current_stream().synchronize()`), `cupy.cuda.Event.synchronize`,
  `cupy.cuda.runtime.deviceSynchronize` and `streamSynchronize` called from Python.

What cannot be hooked: `cupy.cuda.Device.synchronize` — `Device` is a Cython `cdef class`, an immutable type whose
methods `setattr` cannot replace, and it calls the runtime through a C import, past any module attribute. The
census's frame fallback sees it only if the host thread sleeps in it (CUDA's default wait spins while the process
has a core per context). CuPy itself has no sync detector any more (cupy/cupy#7839). This list is checked against a
model of these classes (tests/backends/test_sync_hooks_cupy.py), not a real CuPy: none is installed where it was
written.
"""

from __future__ import annotations

from typing import Any

from asyncbench.backends.handles import SyncHook

_CONVERSIONS = ("item", "tolist", "__int__", "__float__", "__complex__")
_PRINTS = ("__repr__", "__str__", "__format__")


def cuda_hooks(cupy: Any) -> tuple[SyncHook, ...]:
    """CuPy's entry points where the host waits for its device; an attribute a version lacks is reported by the
    census as not hooked."""
    ndarray = cupy.ndarray

    def get_waits(self: Any, stream: Any = None, order: str = "C", out: Any = None, blocking: bool = True) -> bool:
        return bool(blocking)

    def asnumpy_waits(a: Any = None, *args: Any, blocking: bool = True, **kwargs: Any) -> bool:
        return isinstance(a, ndarray) and bool(blocking)

    def of_cupy(a: Any = None, *args: Any, **kwargs: Any) -> bool:
        return isinstance(a, ndarray)

    def masked(self: Any, index: Any = None) -> bool:
        indices = index if isinstance(index, tuple) else (index,)
        return any(isinstance(i, ndarray) and getattr(i.dtype, "kind", "") == "b" for i in indices)

    runtime = cupy.cuda.runtime
    return (
        SyncHook(ndarray, "get", "conversion", "cupy.ndarray.get", get_waits),
        SyncHook(cupy, "asnumpy", "conversion", "cupy.asnumpy", asnumpy_waits),
        *(SyncHook(ndarray, name, "conversion", f"cupy.ndarray.{name}") for name in _CONVERSIONS),
        *(SyncHook(ndarray, name, "print", f"cupy.ndarray.{name}") for name in _PRINTS),
        SyncHook(ndarray, "__bool__", "control flow", "cupy.ndarray.__bool__"),
        SyncHook(ndarray, "nonzero", "control flow", "cupy.ndarray.nonzero"),
        SyncHook(cupy, "nonzero", "control flow", "cupy.nonzero", of_cupy),
        SyncHook(cupy, "argwhere", "control flow", "cupy.argwhere", of_cupy),
        SyncHook(ndarray, "__getitem__", "control flow", "cupy.ndarray[mask]", masked),
        SyncHook(cupy.cuda.Stream, "synchronize", "explicit wait", "cupy.cuda.Stream.synchronize"),
        SyncHook(cupy.cuda.Event, "synchronize", "explicit wait", "cupy.cuda.Event.synchronize"),
        SyncHook(runtime, "deviceSynchronize", "explicit wait", "cupy.cuda.runtime.deviceSynchronize"),
        SyncHook(runtime, "streamSynchronize", "explicit wait", "cupy.cuda.runtime.streamSynchronize"),
    )
