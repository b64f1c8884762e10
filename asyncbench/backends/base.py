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
import types
from abc import ABC, abstractmethod
from typing import Any, Callable, ContextManager, Iterable

from asyncbench.backends.handles import DONE, DeviceDelay, DeviceStatus, DeviceTimer, Event, ResultWait, SyncHook

DEVICE_PATTERN = re.compile(r"^(auto|cpu|cuda(:\d+)?)$")
#: what built-in workloads compute float32 products in, on every backend (`Backend.full_precision`); recorded
#: in every results file's environment
MATMUL_PRECISION = "float32 products in float32 (TF32 off) for built-in workloads; your own workloads as you set them"


def module_roots(value: Any) -> frozenset[str]:
    """The top-level modules `value` comes from: a module's own, a class's and its bases', a function's, else its
    class's and that class's bases' ("torch" for a tensor or an nn.Module subclass, "jaxlib" for a JAX array)."""
    if isinstance(value, types.ModuleType):
        return frozenset({value.__name__.partition(".")[0]})
    if isinstance(value, type):
        classes: tuple[type, ...] = value.__mro__
    elif isinstance(value, (types.FunctionType, types.BuiltinFunctionType)) and isinstance(getattr(value, "__module__", None), str):
        return frozenset({value.__module__.partition(".")[0]})
    else:
        classes = type(value).__mro__
    return frozenset(module.partition(".")[0] for c in classes if isinstance(module := getattr(c, "__module__", None), str))


class Backend(ABC):
    """An array framework as asyncbench sees it."""

    name: str = ""
    #: dtypes this framework can allocate
    dtypes: tuple[str, ...] = ("float16", "float32", "float64")

    #: the kinds of device the framework runs on at all; other kinds are never paired with it
    device_kinds: tuple[str, ...] = ("cpu", "cuda")
    #: the kinds of device the framework always runs synchronously on (the host is the device), known without importing
    #: it: `validate` refuses a check on what bounds the step there (spec.checks). JAX and MXNet on a CPU: not listed
    synchronous_kinds: tuple[str, ...] = ()
    #: whether set_threads can split the CPU between Python threads
    threads_settable: bool = False
    #: whether the framework runs one device's work strictly one piece after another (JAX: XLA's CPU client,
    #: and one compute stream per GPU): then nothing issued on one device can run side by side
    serializes_device_work: bool = False
    #: the framework's import name
    module: str = ""
    #: whether a device-to-host copy goes on a stream the workload picks and moves the bytes every time it is
    #: asked: False for JAX, which picks its own transfer stream and keeps an array's host copy after the first
    copy_streams: bool = True
    #: the top-level modules this framework's objects come from (its arrays, functions, models): `owns`. Empty:
    #: `module` alone. JAX's arrays are jaxlib's, CuPy's helpers cupyx's.
    object_modules: tuple[str, ...] = ()

    @classmethod
    def owned_modules(cls) -> frozenset[str]:
        """The top-level modules whose objects are this framework's (object_modules, else module)."""
        return frozenset(cls.object_modules or (cls.module,))

    @classmethod
    def owns(cls, value: Any) -> bool:
        """Whether `value` is one of this framework's objects: an array, a module, a function, a model (an object
        whose class derives from one of the framework's). Judged by the modules it comes from (module_roots),
        without importing the framework: a user's step says so what it works on (workloads.step_form)."""
        return not module_roots(value).isdisjoint(cls.owned_modules())

    def missing_dtype(self, dtype: str) -> str:
        """Why a case in `dtype`, which is not in `dtypes`, is skipped."""
        return f"{self.name} has no {dtype}"

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

    def facts(self) -> dict[str, Any]:
        """What the results should record about this framework (called only when it is available): its
        version, and where its cases run when that is not this Python. Backends add what matters to them."""
        found: dict[str, Any] = {"version": self.version()}
        if self.interpreter() is not None:
            found["python"] = self.interpreter()
        if self.worker_environment():
            found["worker_environment"] = self.worker_environment()
        return found

    @abstractmethod
    def probe(self) -> tuple[DeviceStatus, ...]:
        """Every device kind this backend knows, available or with a reason."""

    @classmethod
    def runs_on(cls, spec: str) -> bool:
        """Whether a device spec names a kind of device this framework runs on at all (auto always does)."""
        return spec == "auto" or spec.split(":")[0] in cls.device_kinds

    @classmethod
    def synchronous_on(cls, spec: str) -> bool:
        """Whether every device a spec can name runs this framework synchronously (`synchronous_kinds`): `auto`
        only where every kind the framework runs on does (NumPy's; torch's `auto` may be a GPU)."""
        kinds = cls.device_kinds if spec == "auto" else (spec.split(":")[0],)
        return all(kind in cls.synchronous_kinds for kind in kinds)

    def resolve(self, spec: str) -> tuple[list[str], str | None]:
        """Turn a device spec (auto, cpu, cuda, cuda:N) into device names: (devices, None) or ([], reason) when the
        spec names nothing this backend can use here. `cuda` means `cuda:0`, as in torch."""
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

    def interpreter(self) -> str | None:
        """The Python its cases must run in when that is not this one (MXNet's own environment), else None."""
        return None

    def worker_environment(self) -> dict[str, str]:
        """Environment variables its worker must start with (settings a framework reads at import)."""
        return {}

    def cpu_only_environment(self) -> dict[str, str]:
        """Variables, on top of worker_environment, for a worker that runs only this backend's CPU cases: what keeps
        the framework from opening GPUs it will not use ({}: it opens none unasked). engine.case_workers."""
        return {}

    def describe(self, device: str) -> str | None:
        """What a row should say about how the framework runs on `device` (its engine, its inline rule), or None."""
        return None

    def second_cpu(self) -> str | None:
        """A second CPU device of the framework's own (`cpu:1`: JAX's and MXNet's CPU devices), or None."""
        return None

    def activate(self, device: str) -> ContextManager[Any]:
        """Make `device` current for allocations and streams (cupy needs this)."""
        return contextlib.nullcontext()

    def full_precision(self) -> ContextManager[Any]:
        """Inside: float32 products computed in float32, not TF32 (JAX's default on a GPU; torch's when a user
        set it), so GFLOP/s compare one precision across backends. The runner enters it around built-in
        workloads only: a user's workload runs as the user's own process would."""
        return contextlib.nullcontext()

    def hold(self, device: str, seconds: float) -> bool:
        """Keep the current stream of `device` busy for about `seconds` with one kernel, the host not waiting,
        so that work issued next queues up behind it (sync_async times a full queue this way). False where
        the framework has no such kernel (and on a CPU)."""
        return False

    def release_host_cache(self) -> None:
        """Give back the page-locked host memory the framework caches for the life of the process (torch keeps
        every pinned block it handed out: gigabytes after copy_overlap at the textbook's sizes)."""
        return None

    @abstractmethod
    def random(self, shape: tuple[int, ...], dtype: str, device: str) -> Callable[[], Any]:
        """A zero-argument factory that makes a new standard-normal array per call (a bound callable keeps backend
        indirection out of timed loops)."""

    @abstractmethod
    def ones(self, shape: tuple[int, ...], dtype: str, device: str) -> Any:
        """An array of ones on `device`."""

    @abstractmethod
    def barrier(self, device: str) -> None:
        """Wait until everything issued on `device` (all streams) has finished."""

    @abstractmethod
    def wait(self, array: Any) -> None:
        """Wait until `array` is computed (a stream-level wait, not device-wide)."""

    def result_wait(self, device: str) -> ResultWait | None:
        """A sample's end on its own result, proven to leave nothing queued (handles.ResultWait); None: every sample
        ends at `barrier`, which costs nothing more where it issues nothing (a stream sync, waitall, a no-op)."""
        return None

    @abstractmethod
    def to_host(self, array: Any) -> Any:
        """Convert to a NumPy array on the host (this blocks until the value exists)."""

    def timer(self, device: str) -> DeviceTimer | None:
        """Event-based device timer, or None where the device has no events (CPU)."""
        return None

    def memory_window(self, device: str) -> ContextManager[Any]:
        """A fresh window for `device_memory`'s figures around one run.

        On entry the device is synchronized, the framework's cached blocks are
        freed and its peaks reset, so the figures read after the block are this
        run's own: not those of an earlier variant or case (the worker process
        is shared). Peaks the framework does not keep are tracked inside.
        """
        return contextlib.nullcontext()

    # Streams and events. On backends without them these degrade to no-ops, so a
    # workload keeps one code path and the CPU result is the honest "nothing overlaps".

    #: distinct side streams new_stream gives per device before it hands out old ones again (None: no limit)
    max_streams: int | None = None

    def new_stream(self, device: str) -> Any | None:
        """A new stream on `device` that does not sync with the default one, or None."""
        return None

    def on_stream(self, stream: Any | None) -> ContextManager[Any]:
        """Make `stream` current for the ops issued inside the block (None: no change)."""
        return contextlib.nullcontext()

    def record_event(self, device: str) -> Event:
        """An event recorded now on the current stream of `device`."""
        return DONE

    def stream_wait(self, stream: Any | None, event: Event) -> None:
        """Make `stream` wait on the device for `event` (the host does not block)."""

    def fork(self, device: str, streams: Iterable[Any | None]) -> None:
        """Make each stream wait for what the current stream issued so far."""

    def join(self, device: str, streams: Iterable[Any | None]) -> None:
        """Make the current stream wait for everything issued on `streams` so far: joining side streams before
        returning keeps the harness's end event (recorded on the current stream) after all of the case's work."""

    def same_values(self, array: Any, host: Any) -> bool:
        """Whether a device array holds exactly the values of a host buffer (waits for the array)."""
        import numpy

        return bool(numpy.array_equal(self.to_host(array), numpy.asarray(host)))

    def pinned_empty(self, shape: tuple[int, ...], dtype: str) -> Any:
        """A page-locked host buffer for asynchronous device-to-host copies."""
        import numpy

        return numpy.empty(shape, dtype=dtype)

    def copy_to_host(self, source: Any, destination: Any, non_blocking: bool) -> None:
        """Copy a device array into a host buffer on the current stream."""
        destination[...] = self.to_host(source)

    def to_host_nonblocking(self, source: Any) -> Any:
        """The chapter's naive `.to('cpu', non_blocking=True)`: a new pinned host array, copied into on the
        current stream without the host waiting (what torch does; cupy is made to do the same)."""
        return self.to_host(source)

    def namespace(self) -> Any | None:
        """The NumPy-compatible array module (numpy, cupy), or None (torch has its own API)."""
        return None

    def compiled(self, function: Callable[..., Any]) -> Callable[..., Any] | None:
        """`function` (pure: arrays in, arrays out) compiled into one dispatch, where that is how the framework's
        users run a step (JAX: `jax.jit`; its eager ops compile one by one per shape), else None: run it op by op."""
        return None

    def set_threads(self, count: int) -> int | None:
        """Set the framework's CPU intra-op threads; returns the previous count (None: not settable)."""
        return None

    def pin_threads(self, count: int) -> None:
        """`run --threads N` once the framework is imported: the pools it sizes in code (the variables did the rest)."""
        self.set_threads(count)

    def pool_sizes(self, device: str) -> dict[str, int]:
        """The CPU pools' sizes as `device`'s work runs in them now, by the names the run's facts record them under
        (torch: threads, interop_threads): read again around each case, whose set-up may size them in code
        (engine.thread_pools.set_by_step); {} where the backend has no pool sized in code."""
        return {}

    def device_memory(self, device: str) -> dict[str, int]:
        """Named device-memory figures in bytes, for the window `memory_window` opened
        (torch: peak allocated and peak reserved; cupy: peak in use, pool used and held)."""
        return {}

    #: why `--trace` gets only the harness's ranges on this backend (None where `profiler` gives one)
    no_profiler: str | None = "it has no profiler of its own"

    def profiler(self, device: str) -> Any | None:
        """The framework's profiler for one traced run (profilers.py), or None: harness ranges only."""
        return None

    def sync_hooks(self, device: str) -> tuple[SyncHook, ...]:
        """The entry points where the host may wait for `device`'s work (`run --syncs`): empty where nothing waits
        (a synchronous backend) or no hook is known; the census's frame fallback covers the rest."""
        return ()

    def is_asynchronous(self, device: str) -> bool:
        """Whether ops return before they finish on this device."""
        return device.startswith("cuda")

    def device_delay(self, device: str) -> tuple[DeviceDelay | None, str | None]:
        """A device delay on `device` (`run --bound`), or None with why there is none: a synchronous backend has
        no device to delay apart from the host; a backend that cannot queue a delay ahead of the step says why."""
        return None, f"{self.name} has no device delay"

    @classmethod
    def capture_refused(cls, how: str, spec: str) -> str | None:
        """Why this backend cannot capture a step `how` (jit, compile, graph) on a device `spec` (as written: cpu,
        cuda, cuda:1, auto), known before anything runs and without importing the framework; None where it may.
        `validate` and a run's preflight refuse such a --bound-verify in this line (spec.checks.verify_refused),
        and capture_step says the same where it is asked anyway."""
        return f"--bound-verify {how}: {cls.name} cannot capture a step that way (jit: JAX; compile, graph: torch)"

    def capture_step(self, step: Callable[[], Any], device: str, how: str) -> tuple[Callable[[], Any] | None, str | None]:
        """The user's step captured for `run --bound-verify` (backends.step_capture): `how` is jit, compile or graph.
        (callable, None), or (None, why) in one line: a backend that cannot capture a step that way says so; (callable,
        caveat): captured, with what the row's notes say of it (torch.compile's graph breaks)."""
        return None, self.capture_refused(how, device)
