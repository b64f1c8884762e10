"""PyTorch on the CPU (synchronous) and on CUDA devices (asynchronous, with events)."""

from __future__ import annotations

import contextlib
import functools
from typing import Any, Callable, ContextManager, Iterable, Iterator

from asyncbench.backends.base import Backend
from asyncbench.backends.handles import DONE, DeviceStatus, SyncHook

# torch.cuda._sleep spins for a number of GPU clock cycles: this many, timed once per device with events,
# give the cycles per second (about 5 ms at 2 GHz: long against launch latency, short against a case).
CALIBRATION_CYCLES = 10_000_000

#: how to get torch, said the same way everywhere (skip lines, `devices`): it is an extra, not a requirement (the
#: core runs numpy; a plain `pip install torch` on Linux pulls GBs of CUDA libraries a CPU machine does not need)
INSTALL_HINT = "pip install 'asyncbench[torch]', or the torch build for your CUDA"


class CudaEventTimer:
    """Device time between two CUDA events recorded on the current stream."""

    def __init__(self, event_type: Any):
        self._start = event_type(enable_timing=True)
        self._stop = event_type(enable_timing=True)

    def start(self) -> None:
        self._start.record()

    def stop(self) -> None:
        self._stop.record()

    def elapsed_s(self) -> float:
        self._stop.synchronize()  # reading before the end event completed is an error
        return self._start.elapsed_time(self._stop) / 1e3


class TorchBackend(Backend):
    name = "torch"
    module = "torch"
    distributions = ("torch",)
    dtypes = ("float16", "bfloat16", "float32", "float64")
    threads_settable = True
    synchronous_kinds = ("cpu",)  # a CPU tensor's op runs on the calling thread; CUDA's are queued
    #: torch.cuda.Stream() takes streams from a pool of 32 per device and priority (c10's kStreamsPerPool)
    max_streams = 32

    def unavailable_reason(self) -> str | None:
        """torch not installed: the one line its skipped cases and `devices` say (the framework is not imported)."""
        reason = super().unavailable_reason()
        return f"{reason} ({INSTALL_HINT})" if reason else None

    def facts(self) -> dict[str, Any]:
        """Version, CUDA build, thread counts and, on a CUDA machine, cuDNN and every device (asked in a child)."""
        import dataclasses

        import torch

        from asyncbench.backends.cuda_devices import cuda_devices

        found: dict[str, Any] = {
            "version": torch.__version__,
            "cuda": torch.version.cuda,
            "threads": torch.get_num_threads(),
            "interop_threads": torch.get_num_interop_threads(),
        }
        if torch.version.cuda and torch.cuda.is_available():
            found["cudnn"] = torch.backends.cudnn.version()  # the library's version: no context
            found["devices"] = {f"cuda:{i}": dataclasses.asdict(device) for i, device in enumerate(cuda_devices())}
        return found

    def probe(self) -> tuple[DeviceStatus, ...]:
        import torch

        statuses = [DeviceStatus(self.name, "cpu", True, f"host CPU, {torch.get_num_threads()} threads")]
        if torch.version.cuda is None:
            statuses.append(DeviceStatus(self.name, "cuda", False, f"torch {torch.__version__} is built without CUDA"))
        elif not torch.cuda.is_available():
            statuses.append(DeviceStatus(self.name, "cuda", False, "no CUDA device visible (driver missing or none present)"))
        else:
            from asyncbench.backends.cuda_devices import listing

            found = listing()
            if found.problem is not None:  # the parent opens no context to find out: the GPUs are unusable, and why
                statuses.append(DeviceStatus(self.name, "cuda", False, f"the CUDA devices could not be probed: {found.problem}"))
            for index, device in enumerate(found.devices):
                statuses.append(DeviceStatus(self.name, f"cuda:{index}", True, device.name))
        return tuple(statuses)

    def activate(self, device: str) -> ContextManager[Any]:
        import torch

        if device.startswith("cuda"):
            return torch.cuda.device(torch.device(device))
        return contextlib.nullcontext()

    def random(self, shape: tuple[int, ...], dtype: str, device: str) -> Callable[[], Any]:
        import functools

        import torch

        return functools.partial(torch.randn, shape, dtype=getattr(torch, dtype), device=device)

    def ones(self, shape: tuple[int, ...], dtype: str, device: str) -> Any:
        import torch

        return torch.ones(shape, dtype=getattr(torch, dtype), device=device)

    def barrier(self, device: str) -> None:
        import torch

        if device.startswith("cuda"):
            torch.cuda.synchronize(device)

    def wait(self, array: Any) -> None:
        if array.is_cuda:
            import torch

            torch.cuda.current_stream(array.device).synchronize()

    def to_host(self, array: Any) -> Any:
        return array.cpu().numpy()

    def same_values(self, array: Any, host: Any) -> bool:
        """Compared inside torch: NumPy has no bfloat16, so `.numpy()` of one raises."""
        import torch

        expected = host if isinstance(host, torch.Tensor) else torch.from_numpy(host)
        return torch.equal(array.cpu(), expected)

    def hold(self, device: str, seconds: float) -> bool:
        if not device.startswith("cuda"):
            return False
        import torch

        torch.cuda._sleep(max(1, int(seconds * self._cycles_per_s(device))))
        return True

    def capture_step(self, step: Callable[[], Any], device: str, how: str) -> tuple[Callable[[], Any] | None, str | None]:
        """`--bound-verify compile`: torch.compile of the step; `graph`: a CUDA graph of it (backends.step_capture)."""
        from asyncbench.backends import step_capture

        if how == "compile":
            return step_capture.torch_compile(step, device)
        if how == "graph":
            return step_capture.torch_graph(step, device)
        return None, self.capture_refused(how, device)

    @classmethod
    def capture_refused(cls, how: str, spec: str) -> str | None:
        """compile on any device; graph on CUDA (`auto` may be a GPU: the capture says so where it is not)."""
        if how == "compile" or (how == "graph" and spec.split(":")[0] in ("cuda", "auto")):
            return None
        if how == "graph":
            return f"--bound-verify graph: torch on {spec}: CUDA graphs need a CUDA device"
        return f"--bound-verify {how}: torch captures a step with compile or graph (jit is JAX's)"

    def device_delay(self, device: str) -> tuple[Any, str | None]:
        """On a GPU: `torch.cuda._sleep` on the current stream (the step's), bracketed by timing events each call
        (EventDelay): its cycles come from the calibration, its length from the events. On a CPU torch is
        synchronous: the host is the device."""
        if not device.startswith("cuda"):
            return None, "torch runs synchronously on a CPU: the host is the device"
        import torch

        from asyncbench.backends.device_delays import EventDelay

        cycles_per_s = self._cycles_per_s(device)

        def kernel(seconds: float) -> Callable[[], None]:
            cycles = max(1, int(seconds * cycles_per_s))
            return lambda: torch.cuda._sleep(cycles)

        def elapsed_s(start: Any, stop: Any) -> float:
            stop.synchronize()
            return float(start.elapsed_time(stop)) / 1e3

        return EventDelay(kernel, lambda: torch.cuda.Event(enable_timing=True), elapsed_s), None

    @functools.lru_cache(maxsize=8)  # noqa: B019 - one per device, for the life of the process
    def _cycles_per_s(self, device: str) -> float:
        import torch

        start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        torch.cuda._sleep(CALIBRATION_CYCLES)  # warm up: the first launch loads the kernel
        start.record()
        torch.cuda._sleep(CALIBRATION_CYCLES)
        stop.record()
        stop.synchronize()
        return CALIBRATION_CYCLES / (start.elapsed_time(stop) / 1e3)

    def release_host_cache(self) -> None:
        import torch

        empty = getattr(torch._C, "_host_emptyCache", None)  # CUDA builds of torch ≥ 2.1; absent on a CPU build
        if empty is not None and torch.cuda.is_initialized():
            empty()

    def full_precision(self) -> ContextManager[None]:
        import torch

        return _full_precision(torch)

    def timer(self, device: str) -> CudaEventTimer | None:
        if not device.startswith("cuda"):
            return None
        import torch

        return CudaEventTimer(torch.cuda.Event)

    @contextlib.contextmanager
    def memory_window(self, device: str) -> Iterator[None]:
        if device.startswith("cuda"):
            import torch

            torch.cuda.synchronize(device)
            torch.cuda.empty_cache()  # reserved bytes left by an earlier variant or case would be counted as this one's
            torch.cuda.reset_peak_memory_stats(device)
        yield

    def device_memory(self, device: str) -> dict[str, int]:
        if not device.startswith("cuda"):
            return {}
        import torch

        return {
            "device_peak_bytes": torch.cuda.max_memory_allocated(device),
            "device_reserved_bytes": torch.cuda.max_memory_reserved(device),
        }

    def new_stream(self, device: str) -> Any | None:
        if not device.startswith("cuda"):
            return None
        import torch

        return torch.cuda.Stream(device=device)

    def on_stream(self, stream: Any | None) -> ContextManager[Any]:
        import torch

        return torch.cuda.stream(stream) if stream is not None else contextlib.nullcontext()

    def record_event(self, device: str) -> Any:
        if not device.startswith("cuda"):
            return DONE
        import torch

        event = torch.cuda.Event()
        event.record()
        return event

    def stream_wait(self, stream: Any | None, event: Any) -> None:
        if stream is not None and event is not DONE:
            stream.wait_event(event)

    def fork(self, device: str, streams: Iterable[Any | None]) -> None:
        if device.startswith("cuda"):
            import torch

            current = torch.cuda.current_stream(device)
            for stream in streams:
                if stream is not None:
                    stream.wait_stream(current)

    def join(self, device: str, streams: Iterable[Any | None]) -> None:
        if device.startswith("cuda"):
            import torch

            current = torch.cuda.current_stream(device)
            for stream in streams:
                if stream is not None:
                    current.wait_stream(stream)

    def pinned_empty(self, shape: tuple[int, ...], dtype: str) -> Any:
        import torch

        return torch.empty(shape, dtype=getattr(torch, dtype), pin_memory=torch.cuda.is_available())

    def copy_to_host(self, source: Any, destination: Any, non_blocking: bool) -> None:
        destination.copy_(source, non_blocking=non_blocking)

    def to_host_nonblocking(self, source: Any) -> Any:
        return source.to("cpu", non_blocking=True)

    def set_threads(self, count: int) -> int | None:
        import torch

        previous = torch.get_num_threads()
        torch.set_num_threads(count)
        return previous

    def pin_threads(self, count: int) -> None:
        """Both of torch's CPU pools: intra-op (set_threads) and inter-op (torch.jit.fork's tasks, torch.futures),
        which no variable sizes and which torch lets be set once, before any inter-op work: in a fresh worker it has
        none. Where it started already (a process that forked work first), the pool stays as it is and the facts
        recorded say its size (`interop_threads`)."""
        import torch

        self.set_threads(count)
        if torch.get_num_interop_threads() == count:
            return
        try:
            torch.set_num_interop_threads(count)
        except RuntimeError:  # "cannot set number of interop threads after parallel work has started or ... called"
            return

    def pool_sizes(self, device: str) -> dict[str, int]:
        """Both CPU pools, as facts() records them; none on a CUDA device (its row times kernels, not the pool)."""
        if device.startswith("cuda"):
            return {}
        import torch

        return {"threads": torch.get_num_threads(), "interop_threads": torch.get_num_interop_threads()}

    def sync_hooks(self, device: str) -> tuple[SyncHook, ...]:
        """On CUDA, where torch's host waits (torch_syncs.cuda_hooks); none on a CPU, where torch runs each op
        before it returns: a CPU `.item()` waits for nothing, and the census says torch is synchronous there."""
        if not device.startswith("cuda"):
            return ()
        import torch

        from asyncbench.backends.torch_syncs import cuda_hooks

        return cuda_hooks(torch)

    def sync_witness(self, device: str) -> Callable[[Callable[[], None]], ContextManager[Any]] | None:
        """torch's own sync debug mode during the census's fallback runs, on CUDA where torch has it: each of its
        warnings marks the call that synchronized (torch_syncs.debug_warnings). None on a CPU or without CUDA."""
        import torch

        from asyncbench.backends.torch_syncs import debug_mode_available, debug_warnings

        if not device.startswith("cuda") or not debug_mode_available(torch):
            return None
        return lambda synchronized: debug_warnings(torch, lambda frame, where: synchronized())

    no_profiler = None

    def profiler(self, device: str) -> Any:
        from asyncbench.backends.profilers import TorchProfiler

        return TorchProfiler(device)


#: the new precision API's settings (torch ≥ 2.9) that float32 products and convolutions read on a GPU and on the CPU
#: (mkldnn's matmul may compute float32 in bf16 on CPUs with AMX): (object path under torch.backends, attribute)
_NEW_PRECISION_SETTINGS = ("cuda.matmul", "mkldnn.matmul", "cudnn.conv", "cudnn.rnn")


def _setting(torch: Any, path: str) -> Any:
    found = torch.backends
    for part in path.split("."):
        found = getattr(found, part)
    return found


def _has_new_api(torch: Any, path: str) -> bool:
    """Whether this torch has the setting's `fp32_precision` (2.9 and later; older torch has only the legacy API).
    Reading it never raises, while the legacy getters do once a user mixed the two APIs."""
    try:
        return isinstance(_setting(torch, path).fp32_precision, str)
    except (AttributeError, RuntimeError):
        return False


@contextlib.contextmanager
def _full_precision(torch: Any) -> Iterator[None]:
    """float32 products and cuDNN convolutions in float32 inside, whichever precision API the user's code used.

    The legacy setters (`set_float32_matmul_precision`, `cudnn.allow_tf32`) never raise and keep legacy and new state
    consistent for matmuls; on torch ≥ 2.9 cuDNN's conv and RNN are also set through the new API, since the legacy
    `allow_tf32 = False` leaves them to inherit a user's `torch.backends.fp32_precision = "tf32"`. On the way out the
    legacy values are restored where they could be read (a mix makes their getters raise, and then "highest" stays,
    which is what the new API alone leaves), then the new settings as they read before (resolved: a setting that
    inherited comes back as the value it inherited)."""
    saved_new = {path: _setting(torch, path).fp32_precision for path in _NEW_PRECISION_SETTINGS if _has_new_api(torch, path)}
    # each legacy getter raises once the user's code mixed the APIs ("you have used mix of the legacy and new APIs")
    matmul, cudnn = _legacy(torch.get_float32_matmul_precision), _legacy(lambda: bool(torch.backends.cudnn.allow_tf32))
    torch.set_float32_matmul_precision("highest")
    torch.backends.cudnn.allow_tf32 = False
    for path in saved_new:
        if path.startswith("cudnn"):
            _setting(torch, path).fp32_precision = "ieee"
    try:
        yield
    finally:
        if matmul is not None:
            torch.set_float32_matmul_precision(matmul)
        if cudnn is not None:
            torch.backends.cudnn.allow_tf32 = cudnn
        for path, value in saved_new.items():
            _setting(torch, path).fp32_precision = value


def _legacy(read: Callable[[], Any]) -> Any:
    """A legacy precision getter's value, or None where torch refuses to give it (the user's code set the new API)."""
    try:
        return read()
    except RuntimeError:
        return None
