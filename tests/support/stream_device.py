"""A stream-semantics test device: the CUDA behaviour the workloads rely on, modelled with threads.

Tests only: it is never selectable by users and nothing it measures is
reported. It lets every workload's GPU code path run on a machine without a
GPU, with the semantics that code depends on:
- each stream runs what was issued to it in order, on a worker thread of its
  own, behind a launch queue of bounded depth (issuing blocks when it is full);
- kernels take simulated time (they sleep), so the host runs ahead of them and
  streams run side by side — small kernels only: a kernel big enough to fill
  every SM (FILLS_DEVICE_FLOPS) runs alone, as two big GEMMs on two streams
  take as long on a GPU as one after the other;
- `wait(array)` waits for the *current* stream of the array's device, as
  torch's and cupy's stream-level waits do, not for the stream that made it;
- a hold kernel keeps a stream busy for a given time (torch.cuda._sleep);
- events mark a point of a stream (with the time it was reached); the host can
  wait for one, another stream can wait for one (stream-waits-event); a device
  synchronize waits for every stream;
- one copy engine per device: a non-blocking device-to-host copy into a pinned
  buffer runs on it, beside compute; into pageable memory the host waits;
- results are wrong when read before their sync: an array is NaN until the
  kernel that makes it has run, and a host buffer keeps its old contents until
  its copy has run;
- a caching allocator per device: allocated, peak and reserved bytes, with
  reserved kept until the cache is emptied; pinned host buffers are cached
  for the process until `release_host_cache` (torch's host allocator).
`StreamSimJaxBackend` models JAX on a GPU instead: one compute stream per
device, transfers on a stream of JAX's choosing, at most 32 executions in
flight, no events, and an array's host copy cached after the first transfer.
The `cpu` device runs every op at once on the calling thread (a synchronous
backend), CPU_SLOWDOWN times slower than a GPU kernel.
"""

from __future__ import annotations

import contextlib
import itertools
import queue
import threading
import time
import weakref
from dataclasses import dataclass
from typing import Any, Callable, ContextManager, Iterable, Iterator

import numpy as np

from asyncbench.backends.base import Backend
from asyncbench.backends.handles import DeviceStatus, SyncHook

#: launches a stream accepts before issuing blocks (CUDA's queue is about a thousand; small keeps tests fast)
LAUNCH_QUEUE_DEPTH = 64
#: simulated compute rate: a 128² product takes 2.1 ms, long enough for sleeps to be faithful under load and
#: some twenty times what NumPy needs to compute its values (a slower model would make tests slow, a faster
#: one would let the real arithmetic, competing for the cores, blur the modelled overlap)
FLOPS_PER_S = 2e9
#: simulated memory rate of element-wise kernels; the copy engine is slow, so a 128² float32 copy takes about
#: as long as a 128² product and overlap, or its absence, is plain to see
BYTES_PER_S = 2e9
COPY_BYTES_PER_S = 3e7
#: the least a kernel takes
KERNEL_FLOOR_S = 2e-6
#: a stream sleeps once it owes this much simulated time (sleeping per tiny kernel would be all overhead)
SLEEP_QUANTUM_S = 5e-4
#: how much slower the synchronous `cpu` device runs an op than a GPU kernel
CPU_SLOWDOWN = 8.0
#: side streams per device before new_stream hands out old ones again (torch's pool holds 32)
STREAM_POOL = 32
#: a product this big fills every SM of the modelled GPU, so it runs alone (a 256² product and up)
FILLS_DEVICE_FLOPS = 2 * 256**3
#: executions JAX's GPU client lets be in flight before dispatch blocks (PjRt's limit)
JAX_IN_FLIGHT = 32


@dataclass(frozen=True)
class Span:
    """Something that ran on the device, with wall-clock start and end (perf_counter)."""

    what: str  # "kernel" or "copy"
    stream: str
    start_s: float
    end_s: float


class Pinned(np.ndarray):
    """A page-locked host buffer: only copies into these go through the copy engine without the host waiting."""


class Event:
    """A point of a stream: reached when the stream has run everything issued before it."""

    def __init__(self) -> None:
        self._reached = threading.Event()
        self._reached.set()  # an event never recorded counts as reached, as in CUDA
        self.time_s: float | None = None

    def record(self, stream: Stream) -> None:
        self._reached.clear()
        stream.submit(self._reach)

    def _reach(self, stream: Stream) -> None:
        stream.flush()
        self.time_s = time.perf_counter()
        self._reached.set()

    def synchronize(self) -> None:
        self._reached.wait()


class Stream:
    """A FIFO of launches run by one worker thread; `synchronize` waits until it is empty and idle."""

    def __init__(self, device: Device, depth: int, label: str):
        self.device = device
        self.label = label
        self._queue: queue.Queue[Callable[[Stream], None] | None] = queue.Queue(maxsize=depth)
        self._owed_s = 0.0
        self._thread = threading.Thread(target=self._work, name=f"streamsim-{device.name}", daemon=True)
        self._thread.start()

    def submit(self, launch: Callable[[Stream], None]) -> None:
        self._queue.put(launch)  # blocks while the launch queue is full

    def _work(self) -> None:
        while True:
            launch = self._queue.get()
            try:
                if launch is None:
                    return
                launch(self)
            except BaseException as exc:  # noqa: BLE001 - a failing kernel is the test's failure, reported at the next sync
                self.device.errors.append(exc)
            finally:
                if self._queue.empty():
                    self.flush()
                self._queue.task_done()

    def spend(self, seconds: float) -> None:
        """Simulated time the current kernel takes."""
        self._owed_s += seconds
        if self._owed_s >= SLEEP_QUANTUM_S:
            self.flush()

    def flush(self) -> None:
        if self._owed_s > 0:
            time.sleep(self._owed_s)
            self._owed_s = 0.0

    def synchronize(self) -> None:
        self._queue.join()
        self.device.raise_errors()

    def wait_event(self, event: Event) -> None:
        self.submit(lambda stream: event.synchronize())

    def close(self) -> None:
        self._queue.put(None)
        self._thread.join()


class InlineStream(Stream):
    """The CPU's only stream: a launch runs on the calling thread before `submit` returns."""

    def __init__(self, device: Device):
        self.device = device
        self.label = device.name
        self._owed_s = 0.0

    def submit(self, launch: Callable[[Stream], None]) -> None:
        launch(self)
        self.flush()

    def synchronize(self) -> None:
        return None

    def wait_event(self, event: Event) -> None:
        event.synchronize()

    def close(self) -> None:
        return None


class Device:
    """One device: its default and side streams, its copy engine and its caching allocator."""

    def __init__(self, name: str, depth: int, pool: int):
        self.name = name
        self.inline = name == "cpu"
        self.default: Stream = InlineStream(self) if self.inline else Stream(self, depth, f"{name}/default")
        self.current = self.default
        self._depth, self._pool = depth, pool
        self.side: list[Stream] = []
        self._handed_out = itertools.count()
        self.copy_engine = threading.Lock()
        self.sms = threading.Lock()  # held by a kernel that fills the device
        self.errors: list[BaseException] = []
        self._lock = threading.Lock()
        self.allocated_bytes = self.peak_bytes = self.reserved_bytes = 0
        #: when a list: every kernel and copy that ran, as Span(what, stream label, start_s, end_s)
        self.log: list[Span] | None = None

    def note(self, what: str, stream: Stream, start_s: float) -> None:
        if self.log is not None:
            self.log.append(Span(what, stream.label, start_s, time.perf_counter()))

    def new_stream(self) -> Stream:
        index = next(self._handed_out)
        if index < self._pool:
            self.side.append(Stream(self, self._depth, f"{self.name}/side{index}"))
        return self.side[index % self._pool]

    def streams(self) -> list[Stream]:
        return [self.default, *self.side]

    def synchronize(self) -> None:
        for stream in self.streams():
            stream.synchronize()

    def raise_errors(self) -> None:
        if self.errors:
            raise RuntimeError(f"a kernel failed on {self.name}: {self.errors.pop(0)!r}")

    def allocate(self, nbytes: int) -> None:
        with self._lock:
            self.allocated_bytes += nbytes
            self.peak_bytes = max(self.peak_bytes, self.allocated_bytes)
            self.reserved_bytes = max(self.reserved_bytes, self.allocated_bytes)

    def release(self, nbytes: int) -> None:
        with self._lock:
            self.allocated_bytes -= nbytes  # the bytes stay reserved: a caching allocator keeps them

    def new_memory_window(self) -> None:
        """Empty the cache and reset the peak, as torch.cuda.empty_cache + reset_peak_memory_stats do."""
        with self._lock:
            self.reserved_bytes = self.peak_bytes = self.allocated_bytes

    def close(self) -> None:
        for stream in self.streams():
            stream.close()


def _values(operand: Any) -> Any:
    return operand.data if isinstance(operand, Array) else operand


class Array:
    """An array on a test device. Its values exist once the kernel that makes it has run (NaN before)."""

    def __init__(self, device: Device, shape: tuple[int, ...], dtype: Any):
        self.device = device
        self.shape = tuple(shape)
        self.dtype = np.dtype(dtype)
        self.data = np.full(self.shape, np.nan).astype(self.dtype)
        self.stream: Stream = device.current
        self.host_copy: np.ndarray | None = None  # the host copy JAX keeps after a transfer (StreamSimJaxBackend)
        nbytes = max(self.data.nbytes, 1)
        device.allocate(nbytes)
        weakref.finalize(self, device.release, nbytes)

    @property
    def nbytes(self) -> int:
        return self.data.nbytes

    # --- launching ------------------------------------------------------------------------------------------

    @staticmethod
    def launch(
        device: Device, shape: tuple[int, ...], dtype: Any, seconds: float, compute: Callable[..., Any], *inputs: Any, fills: bool = False
    ) -> Array:
        """A new array made by a kernel on the device's current stream (`fills`: it takes every SM, so it runs alone)."""
        out = Array(device, shape, dtype)

        def run(stream: Stream) -> None:
            start_s = time.perf_counter()
            stream.spend(seconds * (CPU_SLOWDOWN if device.inline else 1.0))
            out.data = np.asarray(compute(*[_values(i) for i in inputs])).astype(out.dtype, copy=False)
            device.note("kernel", stream, start_s)

        def kernel(stream: Stream) -> None:
            if not fills or device.inline:
                run(stream)
                return
            stream.flush()  # what this stream ran before does not hold the SMs
            with device.sms:
                run(stream)
                stream.flush()

        out.stream.submit(kernel)
        return out

    def _elementwise(self, compute: Callable[..., Any], *others: Any, dtype: Any = None) -> Array:
        shape = np.broadcast_shapes(self.shape, *(getattr(other, "shape", ()) for other in others))
        result_dtype = dtype or np.result_type(self.dtype, *(getattr(other, "dtype", self.dtype) for other in others))
        seconds = max(KERNEL_FLOOR_S, 3 * int(np.prod(shape)) * self.dtype.itemsize / BYTES_PER_S)
        return Array.launch(self.device, shape, result_dtype, seconds, compute, self, *others)

    def __matmul__(self, other: Array) -> Array:
        shape = (self.shape[0], other.shape[1])
        flops = 2 * self.shape[0] * self.shape[1] * other.shape[1]
        seconds = max(KERNEL_FLOOR_S, flops / FLOPS_PER_S)
        return Array.launch(self.device, shape, self.dtype, seconds, np.matmul, self, other, fills=flops >= FILLS_DEVICE_FLOPS)

    def __add__(self, other: Any) -> Array:
        return self._elementwise(lambda a, b: a + b, other)

    def __sub__(self, other: Any) -> Array:
        return self._elementwise(lambda a, b: a - b, other)

    def __mul__(self, other: Any) -> Array:
        return self._elementwise(lambda a, b: a * b, other)

    __radd__, __rmul__ = __add__, __mul__

    def __gt__(self, other: Any) -> Array:
        return self._elementwise(lambda a, b: a > b, other, dtype=np.bool_)

    def __isub__(self, other: Any) -> Array:
        def kernel(stream: Stream) -> None:
            stream.spend(max(KERNEL_FLOOR_S, 3 * self.nbytes / BYTES_PER_S))
            self.data = (self.data - _values(other)).astype(self.dtype, copy=False)

        self.device.current.submit(kernel)
        return self

    def __getitem__(self, index: Any) -> Array:
        if isinstance(index, Array):  # a mask: the output's shape is its count, read on the host (torch's t[mask])
            index = index.host_values()
        shape = np.empty(self.shape, dtype=np.bool_)[index].shape
        return Array.launch(self.device, shape, self.dtype, KERNEL_FLOOR_S, lambda a: a[index], self)

    def nonzero(self) -> Array:
        """The indices of the nonzero elements: how many is read on the host first (torch's nonzero waits)."""
        found = np.argwhere(self.host_values())
        return Array.launch(self.device, found.shape, np.float64, KERNEL_FLOOR_S, lambda: found)  # floats: arrays start as NaN

    @property
    def T(self) -> Array:  # noqa: N802 - the array API's name
        return Array.launch(self.device, self.shape[::-1], self.dtype, KERNEL_FLOOR_S, np.transpose, self)

    def mean(self) -> Array:
        return Array.launch(self.device, (), self.dtype, KERNEL_FLOOR_S, np.mean, self)

    def sum(self, axis: int | None = None) -> Array:
        shape = np.empty(self.shape, dtype=np.bool_).sum(axis=axis).shape
        return Array.launch(self.device, shape, self.dtype, KERNEL_FLOOR_S, lambda a: a.sum(axis=axis), self)

    def astype(self, dtype: Any) -> Array:
        return self._elementwise(lambda a: a, dtype=np.dtype(dtype))

    # --- reading (each waits for the array's stream, like `.item()` on CUDA) --------------------------------

    def item(self) -> float:
        self.stream.synchronize()
        return self.data.item()

    def host_values(self) -> np.ndarray:
        self.stream.synchronize()
        return self.data.copy()

    def tolist(self) -> Any:
        return self.host_values().tolist()

    def __bool__(self) -> bool:
        return bool(self.item())  # `if x:` on a device value waits for it

    def __repr__(self) -> str:
        return f"streamsim.Array({self.host_values()!r}, device={self.device.name})"

    __str__ = __repr__


class Namespace:
    """The NumPy-like functions training_memory's array path calls, on the current device."""

    def __init__(self, backend: StreamSimBackend):
        self._backend = backend

    def _fill(self, shape: Any, dtype: Any, value: float) -> Array:
        shape = (shape,) if isinstance(shape, int) else tuple(shape)
        return Array.launch(self._backend.current_device(), shape, dtype, KERNEL_FLOOR_S, lambda: np.full(shape, value))

    def zeros(self, shape: Any, dtype: Any = "float32") -> Array:
        return self._fill(shape, dtype, 0.0)

    def ones(self, shape: Any, dtype: Any = "float32") -> Array:
        return self._fill(shape, dtype, 1.0)

    def maximum(self, a: Array, b: Any) -> Array:
        return a._elementwise(np.maximum, b)

    def array(self, values: Any) -> Array:
        """Host values onto the current device (set-up only, never timed: one kernel's floor, not the link's time)."""
        host = np.asarray(values)
        return Array.launch(self._backend.current_device(), host.shape, host.dtype, KERNEL_FLOOR_S, lambda: host)


class SimTimer:
    """Device time between two events recorded on the current stream (a CudaEventTimer's model)."""

    def __init__(self, device: Device):
        self._device = device
        self._start, self._stop = Event(), Event()

    def start(self) -> None:
        self._start.record(self._device.current)

    def stop(self) -> None:
        self._stop.record(self._device.current)

    def elapsed_s(self) -> float:
        self._stop.synchronize()
        self._start.synchronize()
        assert self._start.time_s is not None
        assert self._stop.time_s is not None
        return self._stop.time_s - self._start.time_s


class StreamSimBackend(Backend):
    """The test device as a backend: `cuda:N` are asynchronous with streams, `cpu` runs each op at once."""

    name = "streamsim"
    module = "numpy"
    #: the census's framework (never the user's line): this module's frames, as torch's are on CUDA
    object_modules = ("numpy", "tests.support.stream_device")
    dtypes = ("float16", "float32", "float64")
    threads_settable = False
    launch_queue_depth = LAUNCH_QUEUE_DEPTH

    def __init__(self, gpus: int = 1, depth: int | None = None, pool: int = STREAM_POOL):
        depth = depth or self.launch_queue_depth
        self.max_streams = pool
        self._devices = {name: Device(name, depth, pool) for name in ["cpu", *(f"cuda:{i}" for i in range(gpus))]}
        self._current = "cuda:0" if gpus else "cpu"
        #: page-locked host bytes of live buffers (id -> bytes), and of dropped ones the cache still keeps
        self._pinned_live: dict[int, int] = {}
        self._pinned_dropped_bytes = 0
        self._pinned_keys = itertools.count()
        #: (holds at the calibrated clock, then how many times faster the SM clock runs): a GPU whose clock
        #: rises after the hold was calibrated (a cold GPU boosting), so a hold of N cycles ends early
        self.clock_boost: tuple[int, float] | None = None
        self._holds = 0

    @property
    def pinned_cached_bytes(self) -> int:
        """Page-locked host bytes the process holds: a buffer's until it is both dropped and released."""
        return sum(self._pinned_live.values()) + self._pinned_dropped_bytes

    def _pinned_dropped(self, key: int) -> None:
        self._pinned_dropped_bytes += self._pinned_live.pop(key)

    def close(self) -> None:
        for device in self._devices.values():
            device.close()

    def device(self, name: str) -> Device:
        return self._devices["cuda:0" if name == "cuda" else name]

    def current_device(self) -> Device:
        return self._devices[self._current]

    # --- Backend --------------------------------------------------------------------------------------------

    def probe(self) -> tuple[DeviceStatus, ...]:
        return tuple(DeviceStatus(self.name, name, True, "stream-semantics test device") for name in self._devices)

    def is_asynchronous(self, device: str) -> bool:
        return not self.device(device).inline

    def sync_hooks(self, device: str) -> tuple[SyncHook, ...]:
        from tests.support.stream_syncs import sync_hooks

        return () if self.device(device).inline else sync_hooks(self)

    @contextlib.contextmanager
    def _activated(self, device: str) -> Iterator[None]:
        previous, self._current = self._current, device
        try:
            yield
        finally:
            self._current = previous

    def activate(self, device: str) -> ContextManager[Any]:
        return self._activated(device)

    def random(self, shape: tuple[int, ...], dtype: str, device: str) -> Callable[[], Any]:
        target = self.device(device)
        seconds = max(KERNEL_FLOOR_S, int(np.prod(shape)) * 8 / BYTES_PER_S)
        return lambda: Array.launch(target, shape, dtype, seconds, lambda: np.random.default_rng().standard_normal(shape))

    def ones(self, shape: tuple[int, ...], dtype: str, device: str) -> Any:
        return Array.launch(self.device(device), shape, dtype, KERNEL_FLOOR_S, lambda: np.ones(shape))

    def namespace(self) -> Any:
        return Namespace(self)

    def barrier(self, device: str) -> None:
        self.device(device).synchronize()

    def wait(self, array: Any) -> None:
        array.device.current.synchronize()  # torch.cuda.current_stream().synchronize(), not the array's own stream

    def hold(self, device: str, seconds: float) -> bool:
        target = self.device(device)
        if target.inline:
            return False
        self._holds += 1
        if self.clock_boost is not None and self._holds > self.clock_boost[0]:
            seconds /= self.clock_boost[1]  # the cycles counted at the calibrated clock pass sooner

        def kernel(stream: Stream) -> None:
            start_s = time.perf_counter()
            stream.spend(seconds)
            stream.flush()
            target.note("hold", stream, start_s)

        target.current.submit(kernel)
        return True

    def device_delay(self, device: str) -> tuple[Any, str | None]:
        """The delays of `run --bound` as on CUDA (backends.device_delays.EventDelay): a hold on the current stream
        before each step call, between two of the model's events, so each is measured in place. A hold asks the
        stream's thread to sleep, and a sleep overshoots by the thread's wake-up, some 0.1-0.3 ms on a loaded
        2-core machine: read as the length asked, a device-bound knee came out 0.24 ms early (10% of the step)."""
        if self.device(device).inline:
            return None, "the test device's cpu runs synchronously"
        from asyncbench.backends.device_delays import EventDelay

        target = self.device(device)

        def kernel(seconds: float) -> Callable[[], None]:
            return lambda: self.hold(device, seconds)

        def elapsed_s(start: _StreamEvent, stop: _StreamEvent) -> float:
            stop.event.synchronize()
            assert start.event.time_s is not None
            assert stop.event.time_s is not None
            return stop.event.time_s - start.event.time_s

        return EventDelay(kernel, lambda: _StreamEvent(target), elapsed_s), None

    def release_host_cache(self) -> None:
        self._pinned_dropped_bytes = 0  # a live buffer stays pinned: torch's emptyCache frees only unused blocks

    def to_host(self, array: Any) -> Any:
        return array.host_values()

    def same_values(self, array: Any, host: Any) -> bool:
        return bool(np.array_equal(array.host_values(), np.asarray(host)))

    def timer(self, device: str) -> SimTimer | None:
        return None if self.device(device).inline else SimTimer(self.device(device))

    @contextlib.contextmanager
    def _window(self, device: str) -> Iterator[None]:
        self.device(device).synchronize()
        self.device(device).new_memory_window()
        yield

    def memory_window(self, device: str) -> ContextManager[None]:
        return self._window(device)

    def device_memory(self, device: str) -> dict[str, int]:
        target = self.device(device)
        if target.inline:
            return {}
        return {"device_peak_bytes": target.peak_bytes, "device_reserved_bytes": target.reserved_bytes}

    def new_stream(self, device: str) -> Any | None:
        target = self.device(device)
        return None if target.inline else target.new_stream()

    @contextlib.contextmanager
    def _on(self, stream: Stream) -> Iterator[None]:
        device = stream.device
        previous, device.current = device.current, stream
        try:
            yield
        finally:
            device.current = previous

    def on_stream(self, stream: Any | None) -> ContextManager[Any]:
        return self._on(stream) if stream is not None else contextlib.nullcontext()

    def record_event(self, device: str) -> Event:
        event = Event()
        event.record(self.device(device).current)
        return event

    def stream_wait(self, stream: Any | None, event: Any) -> None:
        if stream is not None:
            stream.wait_event(event)

    def fork(self, device: str, streams: Iterable[Any | None]) -> None:
        event = self.record_event(device)
        for stream in streams:
            self.stream_wait(stream, event)

    def join(self, device: str, streams: Iterable[Any | None]) -> None:
        current = self.device(device).current
        for stream in streams:
            if stream is not None:
                event = Event()
                event.record(stream)
                current.wait_event(event)

    def pinned_empty(self, shape: tuple[int, ...], dtype: str) -> Any:
        buffer = np.zeros(shape, dtype=dtype).view(Pinned)
        # pinned while alive, then kept for the process until release_host_cache, as torch's host allocator does
        key = next(self._pinned_keys)
        self._pinned_live[key] = buffer.nbytes
        weakref.finalize(buffer, self._pinned_dropped, key)
        return buffer

    def copy_to_host(self, source: Any, destination: Any, non_blocking: bool) -> None:
        device = source.device
        pinned = isinstance(destination, Pinned)

        def copy(stream: Stream) -> None:
            stream.flush()
            start_s = time.perf_counter()
            if pinned:
                with device.copy_engine:  # one copy at a time, beside whatever the other streams compute
                    time.sleep(source.nbytes / COPY_BYTES_PER_S)
            else:
                stream.spend(source.nbytes / COPY_BYTES_PER_S)
            destination[...] = source.data
            device.note("copy", stream, start_s)

        stream = device.current
        stream.submit(copy)
        if not (pinned and non_blocking):
            stream.synchronize()  # a copy into pageable memory (or a blocking one) returns when it is done

    def to_host_nonblocking(self, source: Any) -> Any:
        host = self.pinned_empty(source.shape, source.dtype.name)  # torch pins the output of .to('cpu', non_blocking=True)
        self.copy_to_host(source, host, non_blocking=True)
        return host


class _StreamEvent:
    """One of the model's events with CUDA's `record()` (on the device's current stream), for EventDelay."""

    def __init__(self, device: Device):
        self.device, self.event = device, Event()

    def record(self) -> None:
        self.event.record(self.device.current)


class StreamSimJaxBackend(StreamSimBackend):
    """JAX on a GPU, modelled: XLA's one compute stream per device (no side streams for the workload), at most
    JAX_IN_FLIGHT executions in flight before dispatch blocks, no events, transfers on a stream JAX picks, and
    an array's host copy kept after the first transfer (`jax.Array` caches it: asked again, nothing moves)."""

    name = "streamsim-jax"
    serializes_device_work = True
    copy_streams = False
    launch_queue_depth = JAX_IN_FLIGHT
    max_streams = None

    def __init__(self, gpus: int = 1):
        super().__init__(gpus=gpus)
        self.max_streams = None
        self._transfer = {
            name: Stream(device, JAX_IN_FLIGHT, f"{name}/transfer") for name, device in self._devices.items() if not device.inline
        }
        #: host copies made by a transfer (a cached one moves nothing)
        self.transfers = 0

    def close(self) -> None:
        for stream in self._transfer.values():
            stream.close()
        super().close()

    def timer(self, device: str) -> SimTimer | None:
        return None

    def hold(self, device: str, seconds: float) -> bool:
        return False

    def device_delay(self, device: str) -> tuple[Any, str | None]:
        return None, "no hold kernel in the modelled JAX"

    def new_stream(self, device: str) -> Any | None:
        return None

    def wait(self, array: Any) -> None:
        array.stream.synchronize()  # block_until_ready waits for the array itself

    def to_host(self, array: Any) -> Any:
        cached = getattr(array, "host_copy", None)
        if cached is not None:
            return cached
        if array.device.inline:
            return array.host_values()
        done = Event()
        event = Event()
        event.record(array.stream)
        transfer = self._transfer[array.device.name]
        transfer.wait_event(event)
        copied: list[np.ndarray] = []

        def copy(stream: Stream) -> None:
            stream.spend(array.nbytes / COPY_BYTES_PER_S)
            stream.flush()
            copied.append(array.data.copy())

        transfer.submit(copy)
        done.record(transfer)
        done.synchronize()
        self.transfers += 1
        array.host_copy = copied[0]
        return array.host_copy

    def copy_to_host(self, source: Any, destination: Any, non_blocking: bool) -> None:
        destination[...] = self.to_host(source)

    def to_host_nonblocking(self, source: Any) -> Any:
        return self.to_host(source)
