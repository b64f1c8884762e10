"""CuPy on CUDA devices: optional, imported only when a cupy case runs or devices are probed."""

from __future__ import annotations

import contextlib
import functools
import importlib.util
import os
from typing import Any, Callable, ContextManager, Iterable, Iterator

from asyncbench.backends.base import Backend
from asyncbench.backends.handles import DeviceStatus, SyncHook

# A kernel that spins on the SM clock for a number of cycles, as torch.cuda._sleep does; timed once per device
# with events over CALIBRATION_CYCLES to turn seconds into cycles.
_SPIN = r"""
extern "C" __global__ void asyncbench_spin(long long cycles) {
    long long start = clock64();
    while (clock64() - start < cycles) { }
}
"""
CALIBRATION_CYCLES = 10_000_000

#: how to get cupy, said the same way everywhere (skip lines, `devices`, README)
INSTALL_HINT = "pip install 'asyncbench[cupy]' on a CUDA machine, or the cupy-cudaXXx wheel that matches your CUDA"


class CupyEventTimer:
    """Device time between two CUDA events recorded on cupy's current stream."""

    def __init__(self, cupy: Any):
        self._cupy = cupy
        self._start = cupy.cuda.Event()
        self._stop = cupy.cuda.Event()

    def start(self) -> None:
        self._start.record()

    def stop(self) -> None:
        self._stop.record()

    def elapsed_s(self) -> float:
        self._stop.synchronize()
        return self._cupy.cuda.get_elapsed_time(self._start, self._stop) / 1e3


def _peak_hook(cupy: Any, pool: Any) -> Any:
    """A cupy MemoryHook that keeps the most bytes `pool` had in use after any allocation (`.peak_bytes`)."""

    class PeakHook(cupy.cuda.MemoryHook):
        name = "asyncbench_peak"

        def __init__(self) -> None:
            self.peak_bytes = pool.used_bytes()

        def malloc_postprocess(self, **kwargs: Any) -> None:
            self.peak_bytes = max(self.peak_bytes, pool.used_bytes())

    return PeakHook()


#: what built-in workloads' float32 products compute in on CuPy where its compute type can be set
FULL_PRECISION = "float32 (TF32 off) in built-in workloads (cupy._core.set_compute_type); your own workloads as CUPY_TF32 says"


def tf32_state() -> str:
    """CUPY_TF32 as CuPy reads it: an integer above 0 turns TF32 on for float32 products."""
    value = os.environ.get("CUPY_TF32", "0").strip() or "0"
    try:
        on = int(value) > 0
    except ValueError:
        return f"CUPY_TF32={value!r}, which CuPy cannot read as an integer"
    return "TF32 on: CUPY_TF32=" + value if on else "TF32 off: CUPY_TF32 unset or 0"


def _compute_types(cupy: Any) -> tuple[Any, int] | None:
    """CuPy's per-dtype compute-type setter and its COMPUTE_TYPE_DEFAULT (float32 products in CUBLAS_COMPUTE_32F:
    cupy/_core/_routines_linalg.pyx), or None where this CuPy has neither."""
    core = getattr(cupy, "_core", None)
    linalg = getattr(core, "_routines_linalg", None)
    default = getattr(linalg, "COMPUTE_TYPE_DEFAULT", None)
    if default is None or not hasattr(core, "get_compute_type") or not hasattr(core, "set_compute_type"):
        return None
    return core, int(default)


def _index(device: str) -> int:
    return int(device.split(":")[1]) if ":" in device else 0


class CupyBackend(Backend):
    name = "cupy"
    module = "cupy"
    object_modules = ("cupy", "cupyx", "cupy_backends")
    device_kinds = ("cuda",)
    distributions = ("cupy", "cupy-cuda13x", "cupy-cuda12x", "cupy-cuda11x")

    def __init__(self) -> None:
        self._peak: Any = None  # the memory hook of the current memory window

    def _cupy(self) -> Any:
        import cupy

        return cupy

    def unavailable_reason(self) -> str | None:
        if importlib.util.find_spec("cupy") is None:
            return f"cupy not installed ({INSTALL_HINT})"
        try:
            cupy = self._cupy()
            count = cupy.cuda.runtime.getDeviceCount()
        except Exception as exc:  # noqa: BLE001 - CUDARuntimeError, ImportError of the CUDA libraries...
            return f"no CUDA device for cupy: {type(exc).__name__}: {exc}".strip()
        if count == 0:
            return "no CUDA device for cupy"
        return None

    def facts(self) -> dict[str, Any]:
        """Version, CUDA runtime, the devices cupy can use, and what its float32 products compute in: CUPY_TF32, read
        once by CuPy, sets TF32 for the whole process; built-in workloads run in float32 all the same (full_precision)
        where this CuPy lets its compute type be set."""
        cupy = self._cupy()
        scoped = _compute_types(cupy) is not None
        return {
            "version": self.version(),
            "cuda_runtime": cupy.cuda.runtime.runtimeGetVersion(),
            "devices": {s.device: s.detail for s in self.probe() if s.available},
            "CUPY_TF32": os.environ.get("CUPY_TF32"),
            "float32_products": (FULL_PRECISION if scoped else f"as CUPY_TF32 says, for every workload ({tf32_state()})"),
        }

    def probe(self) -> tuple[DeviceStatus, ...]:
        reason = self.unavailable_reason()
        statuses = [DeviceStatus(self.name, "cpu", False, "cupy runs on CUDA devices only")]
        if reason:
            return (*statuses, DeviceStatus(self.name, "cuda", False, reason))
        cupy = self._cupy()
        for index in range(cupy.cuda.runtime.getDeviceCount()):
            name = cupy.cuda.runtime.getDeviceProperties(index)["name"]
            name = name.decode() if isinstance(name, bytes) else str(name)
            statuses.append(DeviceStatus(self.name, f"cuda:{index}", True, name))
        return tuple(statuses)

    def activate(self, device: str) -> ContextManager[Any]:
        return self._cupy().cuda.Device(_index(device))

    def random(self, shape: tuple[int, ...], dtype: str, device: str) -> Callable[[], Any]:
        import functools

        cupy = self._cupy()
        # cupy's generator makes float32/float64 only; other dtypes are cast after
        generator = cupy.random.default_rng()
        if dtype in ("float32", "float64"):
            return functools.partial(generator.standard_normal, size=shape, dtype=dtype)
        return lambda: generator.standard_normal(size=shape, dtype="float32").astype(dtype)

    def ones(self, shape: tuple[int, ...], dtype: str, device: str) -> Any:
        return self._cupy().ones(shape, dtype=dtype)

    def namespace(self) -> Any:
        import cupy

        return cupy

    def barrier(self, device: str) -> None:
        self._cupy().cuda.Device(_index(device)).synchronize()

    def wait(self, array: Any) -> None:
        self._cupy().cuda.get_current_stream().synchronize()

    def to_host(self, array: Any) -> Any:
        return array.get()

    @contextlib.contextmanager
    def full_precision(self) -> Iterator[None]:
        """float32 (and complex64) products through cuBLAS's CUBLAS_COMPUTE_32F inside, whatever CUPY_TF32 says:
        CuPy has no scope of its own, but keeps one compute type per dtype (`cupy._core.set_compute_type`), read at
        every product and linear-algebra call; it is set and put back. A CuPy without it computes as CUPY_TF32 says
        (recorded in `facts`)."""
        found = _compute_types(self._cupy())
        if found is None:
            yield
            return
        core, default = found
        before = core.get_compute_type("float32")
        core.set_compute_type("float32", default)
        try:
            yield
        finally:
            core.set_compute_type("float32", before)

    def hold(self, device: str, seconds: float) -> bool:
        import numpy

        self._spin()((1,), (1,), (numpy.int64(max(1, int(seconds * self._cycles_per_s(device)))),))
        return True

    def capture_step(self, step: Callable[[], Any], device: str, how: str) -> tuple[Callable[[], Any] | None, str | None]:
        """`--bound-verify`: not supported on CuPy yet (its graphs, Stream.begin_capture, are not wired here)."""
        return None, self.capture_refused(how, device)

    @classmethod
    def capture_refused(cls, how: str, spec: str) -> str | None:
        return f"--bound-verify {how}: not supported on cupy (CuPy's stream-capture graphs are not wired yet)"

    def device_delay(self, device: str) -> tuple[Any, str | None]:
        """The clock-spin kernel on cupy's current stream (the step's), bracketed by timing events each call
        (EventDelay): its cycles from the calibration, its length from the events."""
        import numpy

        from asyncbench.backends.device_delays import EventDelay

        cupy = self._cupy()
        spin, cycles_per_s = self._spin(), self._cycles_per_s(device)

        def kernel(seconds: float) -> Callable[[], None]:
            cycles = (numpy.int64(max(1, int(seconds * cycles_per_s))),)
            return lambda: spin((1,), (1,), cycles)

        def elapsed_s(start: Any, stop: Any) -> float:
            stop.synchronize()
            return float(cupy.cuda.get_elapsed_time(start, stop)) / 1e3

        return EventDelay(kernel, cupy.cuda.Event, elapsed_s), None

    @functools.lru_cache(maxsize=1)  # noqa: B019 - compiled once, for the life of the process
    def _spin(self) -> Any:
        return self._cupy().RawKernel(_SPIN, "asyncbench_spin")

    @functools.lru_cache(maxsize=8)  # noqa: B019 - one per device, for the life of the process
    def _cycles_per_s(self, device: str) -> float:
        import numpy

        cupy = self._cupy()
        spin = self._spin()
        start, stop = cupy.cuda.Event(), cupy.cuda.Event()
        spin((1,), (1,), (numpy.int64(CALIBRATION_CYCLES),))  # warm up: the first launch loads the kernel
        start.record()
        spin((1,), (1,), (numpy.int64(CALIBRATION_CYCLES),))
        stop.record()
        stop.synchronize()
        return CALIBRATION_CYCLES / (cupy.cuda.get_elapsed_time(start, stop) / 1e3)

    def timer(self, device: str) -> CupyEventTimer:
        return CupyEventTimer(self._cupy())

    @contextlib.contextmanager
    def memory_window(self, device: str) -> Iterator[None]:
        """CuPy keeps no peak: a memory hook records the pool's bytes in use after every allocation."""
        cupy = self._cupy()
        cupy.cuda.Device(_index(device)).synchronize()
        pool = cupy.get_default_memory_pool()
        pool.free_all_blocks()  # blocks cached by an earlier variant or case would count as this one's
        self._peak = _peak_hook(cupy, pool)
        with self._peak:
            yield

    def device_memory(self, device: str) -> dict[str, int]:
        pool = self._cupy().get_default_memory_pool()
        figures = {"device_pool_used_bytes": pool.used_bytes(), "device_pool_total_bytes": pool.total_bytes()}
        if self._peak is not None:
            figures["device_peak_bytes"] = self._peak.peak_bytes
        return figures

    def sync_hooks(self, device: str) -> tuple[SyncHook, ...]:
        """Where CuPy's host waits (cupy_syncs.cuda_hooks; `Device.synchronize` cannot be hooked: a Cython class)."""
        from asyncbench.backends.cupy_syncs import cuda_hooks

        return cuda_hooks(self._cupy())

    def new_stream(self, device: str) -> Any:
        return self._cupy().cuda.Stream(non_blocking=True)

    def on_stream(self, stream: Any | None) -> ContextManager[Any]:
        return stream if stream is not None else contextlib.nullcontext()

    def record_event(self, device: str) -> Any:
        event = self._cupy().cuda.Event(disable_timing=True)  # for ordering only: cheaper without timing
        event.record()
        return event

    def stream_wait(self, stream: Any | None, event: Any) -> None:
        if stream is not None:
            stream.wait_event(event)

    def fork(self, device: str, streams: Iterable[Any | None]) -> None:
        event = self.record_event(device)
        for stream in streams:
            self.stream_wait(stream, event)

    def join(self, device: str, streams: Iterable[Any | None]) -> None:
        cupy = self._cupy()
        current = cupy.cuda.get_current_stream()
        for stream in streams:
            if stream is not None:
                current.wait_event(stream.record(cupy.cuda.Event(disable_timing=True)))

    def release_host_cache(self) -> None:
        """CuPy's pinned pool keeps every freed page-locked block for the process (cupyx.empty_pinned draws on
        it): free_all_blocks gives back those no array holds."""
        self._cupy().get_default_pinned_memory_pool().free_all_blocks()

    def pinned_empty(self, shape: tuple[int, ...], dtype: str) -> Any:
        import cupyx

        return cupyx.empty_pinned(shape, dtype=dtype)

    def copy_to_host(self, source: Any, destination: Any, non_blocking: bool) -> None:
        cupy = self._cupy()
        cupy.asnumpy(source, stream=cupy.cuda.get_current_stream(), out=destination, blocking=not non_blocking)

    def to_host_nonblocking(self, source: Any) -> Any:
        """Into a new pinned buffer, as torch's `.to('cpu', non_blocking=True)` does: without a pinned `out`,
        `asnumpy(blocking=False)` makes a pageable array and the copy blocks the host."""
        cupy = self._cupy()
        host = self.pinned_empty(source.shape, source.dtype)
        cupy.asnumpy(source, stream=cupy.cuda.get_current_stream(), out=host, blocking=False)
        return host

    no_profiler = "cupy's own timeline comes from nsys (`nsys profile asyncbench run ...`), not from inside the process"
