"""JAX: asynchronous dispatch on the CPU (and on GPUs), one XLA queue per device.

Since jax 0.4.32 a CPU computation returns before it has run
(`jax_cpu_enable_async_dispatch`, on by default), so JAX shows on a laptop
what CUDA shows on a GPU — with one exception that matters for the
experiments: XLA's CPU client runs a computation inline, on the calling
thread, when its cost estimate is under about 1000 FLOPs and its inputs are
ready (`x + 1` on a tiny array is synchronous; a 1000×1000 product is not).

What this backend uses, and why:
- random arrays: a jit-compiled generator (key → next key, array), so making
  one is an asynchronous computation too; eager `jax.random.normal` of a big
  array runs at issue.
- barrier: JAX has no device-wide barrier (`jax.effects_barrier()` waits only
  for side-effecting computations; blocking on `jax.live_arrays()` misses
  work whose outputs were dropped). XLA's CPU client runs a device's
  computations in order, a cheap one inline only when nothing queued is
  still running (its `input_deps` empty): a jit-compiled `v + 1` of one
  element returns only when everything issued before it has run, ~10 µs on
  an idle device (a product always queued cost 100-180 µs: a worker woken
  each sample, docs/measured.md). On a GPU it waits for the stream likewise.
- a sample's end on a CPU (`result_wait`): the arrays the sample returned,
  then that `v + 1` issued after the clock and read without waiting: done at
  once only where nothing issued before is left, else the sample ends at the
  barrier. The barrier's issue is out of the sample, as out of a hand loop's.
- wait for one result: `block_until_ready`; host conversion: `numpy.asarray`
  (zero-copy on a CPU).
- devices: `cpu` is the first XLA CPU device; two are configured
  (`jax_num_cpu_devices`, which must be set before JAX's backend starts:
  this module sets it on first import), so multi_device can pair `cpu` with
  `cpu:1`. `cuda:N` is the N-th GPU where jaxlib has CUDA.
- float64 needs `jax_enable_x64`, which changes every default dtype of the
  process (a user's `jnp.zeros(n)` would become float64): it is left as the
  user sets it (JAX_ENABLE_X64=1), and a float64 case without it is skipped
  saying so. Built-in workloads give every array an explicit dtype.
- devices are probed in a child process: `jax.devices("cpu")` starts every
  platform JAX has, and on a GPU machine that creates CUDA contexts in the
  parent (under EXCLUSIVE_PROCESS every GPU case would then fail).
- cases run in a worker of JAX's own (its start-up environment differs),
  with XLA_PYTHON_CLIENT_PREALLOCATE=false: by default JAX takes 75% of a
  GPU's memory when it starts, which torch or cupy in the same process, or
  a memory figure, would then not have. A case's device is made JAX's
  default device, so what a workload allocates lands there and not on the
  default device (the GPU) first.
- products in float32 for built-in workloads (`jax.default_matmul_precision`:
  JAX computes float32 products in TF32 on a GPU by default).
- no events, no streams, no settable thread count (XLA's CPU threads are
  fixed at start), memory from the host only.
- `run --syncs`: the entry points of backends.jax_syncs.
  `transfer_guard("log")` is not used: it logs from C++ to the process's
  stderr, with no Python frame to attribute. JAX says nothing of its queue's
  length: how much a wait drained is not known.
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import subprocess
import sys
from typing import Any, Callable, ContextManager, Iterator

from asyncbench.backends.base import Backend
from asyncbench.backends.handles import DeviceStatus, ResultWait, SyncHook
from asyncbench.host import processes

#: CPU devices configured at start: the case's device and a partner for multi_device
CPU_DEVICES = 2
# The barrier's computation: one element, so that XLA runs it inline (no worker thread woken) when nothing is
# queued, and queues it behind the last computation otherwise (XLA's CPU client orders a device's computations)
BARRIER_ELEMENTS = 1
NOTE = "XLA CPU client, async dispatch: computations under ~1000 FLOPs run inline at issue"
#: what JAX's worker starts with: no preallocation of 75% of each GPU's memory
WORKER_ENVIRONMENT = {"XLA_PYTHON_CLIENT_PREALLOCATE": "false"}
# A child that imports jax and lists its devices takes seconds; a hung driver must not hang the run.
PROBE_TIMEOUT_S = 120.0
#: what the child runs: the same listing, printed as JSON
_PROBE = "import json; from asyncbench.backends.jax_backend import _devices_here; print(json.dumps(_devices_here()))"


@functools.lru_cache(maxsize=1)
def _jax() -> Any:
    """jax, configured once per process before its backend starts."""
    import jax

    with contextlib.suppress(RuntimeError, AttributeError):  # the backend already started (user code), or an older jax
        jax.config.update("jax_num_cpu_devices", CPU_DEVICES)
    return jax


def _devices_here() -> dict[str, Any]:
    """JAX's devices as this process sees them: CPU count, async dispatch, GPU kinds or why there are none."""
    jax = _jax()
    found: dict[str, Any] = {"cpus": len(jax.devices("cpu")), "async_dispatch": JaxBackend._async_dispatch()}
    try:
        found["gpus"] = [str(getattr(d, "device_kind", d)) for d in jax.devices("gpu")]
    except RuntimeError as exc:  # jaxlib without CUDA, or a CUDA plugin that failed to start: its own words
        found["gpus"], found["gpu_error"] = [], str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    return found


@functools.cache
def _devices() -> dict[str, Any]:
    """_devices_here, asked in a child unless this is a case worker (or JAX is already imported here)."""
    if processes.in_worker or "jax" in sys.modules:
        return _devices_here()
    environment = {**os.environ, **WORKER_ENVIRONMENT}
    try:
        done = subprocess.run(
            [sys.executable, "-c", _PROBE], capture_output=True, text=True, timeout=PROBE_TIMEOUT_S, check=True, env=environment
        )
        return dict(json.loads(done.stdout.strip().splitlines()[-1]))
    except subprocess.CalledProcessError as exc:
        last = (exc.stderr or "").strip().splitlines()
        return {"cpus": 0, "error": last[-1] if last else f"exit status {exc.returncode}"}
    except (OSError, subprocess.SubprocessError, ValueError, IndexError) as exc:
        return {"cpus": 0, "error": f"listing JAX's devices failed: {exc}"}


@functools.lru_cache(maxsize=64)
def _generator(shape: tuple[int, ...], dtype: str) -> Callable[[Any], tuple[Any, Any]]:
    """The jit-compiled generator of `shape` and `dtype` (key → next key, array), one per process: compiling
    jax.random.normal takes 0.3-0.9 s on a 2-core CPU, and with a new one per `random` call `run --quick` compiled
    ten of them (half its time); cases of one size now share theirs."""
    jax = _jax()

    @jax.jit
    def generate(key: Any) -> tuple[Any, Any]:
        key, sub = jax.random.split(key)
        return key, jax.random.normal(sub, shape, dtype=dtype)

    return generate


def _x64_enabled() -> bool:
    """Whether the user turned on float64 (JAX reads JAX_ENABLE_X64 at import), without importing jax."""
    if "jax" in sys.modules:
        return bool(sys.modules["jax"].config.read("jax_enable_x64"))
    return os.environ.get("JAX_ENABLE_X64", "").strip().lower() in ("1", "true", "yes", "on")


def _memory_stat(device: Any, name: str) -> int | None:
    """One of `jax.Device.memory_stats()`'s figures: None where the platform keeps none (the CPU client returns
    None) or marks it unavailable (-1)."""
    stats = device.memory_stats()
    value = stats.get(name) if stats else None
    return int(value) if isinstance(value, int) and value >= 0 else None


#: the side of the array a device delay's loop updates: a trip costs 2·64² = 8192 FLOPs by XLA's estimate, past the
#: 1000 under which its CPU client runs a computation inline (JaxBackend.device_delay)
DELAY_SIDE = 64
#: trips of the delay's loop its calibration times: about 3 ms on this project's 2-core machine (0.28 µs a trip)
DELAY_CALIBRATION_TRIPS = 10_000
#: how jax is installed, said where it is not (`devices`, a skipped case): the project's extra, as README says, as the
#: torch and cupy rows say theirs
INSTALL_HINT = "pip install 'asyncbench[jax]'; on a CUDA machine, pip install 'jax[cuda12]'"


class JaxBackend(Backend):
    name = "jax"
    module = "jax"
    object_modules = ("jax", "jaxlib")
    distributions = ("jax",)
    serializes_device_work = True
    copy_streams = False

    def unavailable_reason(self) -> str | None:
        """jax not installed: the one line its skipped cases and `devices` say, with how to install it (the framework
        is not imported)."""
        reason = super().unavailable_reason()
        return f"{reason} ({INSTALL_HINT})" if reason else None

    def _device(self, device: str) -> Any:
        jax = _jax()
        kind, _, index = device.partition(":")
        return jax.devices("gpu" if kind == "cuda" else "cpu")[int(index or 0)]

    @property
    def dtypes(self) -> tuple[str, ...]:  # type: ignore[override]
        """float64 only where the user enabled it: jax_enable_x64 changes every default dtype of the process."""
        return ("float16", "bfloat16", "float32", "float64") if _x64_enabled() else ("float16", "bfloat16", "float32")

    def missing_dtype(self, dtype: str) -> str:
        if dtype == "float64":
            return "float64 on jax needs JAX_ENABLE_X64=1 in the environment (it changes every default dtype of the process)"
        return super().missing_dtype(dtype)

    def worker_environment(self) -> dict[str, str]:
        return dict(WORKER_ENVIRONMENT)

    def cpu_only_environment(self) -> dict[str, str]:
        """XLA starts every platform it has at its first device query, `jax.devices("cpu")` too: a CUDA context on
        every GPU for a CPU case, unless the worker is told it has the CPU alone."""
        return {"JAX_PLATFORMS": "cpu"}

    def facts(self) -> dict[str, Any]:
        """The base facts and JAX's GPUs by model (`device_kind`, listed in the probe's child: no context here), so that a
        JAX-only history of a GPU case keeps an A100's runs apart from an H100's (history.machine reads `devices`)."""
        found = super().facts()
        listed = _devices()
        found["devices"] = {f"cuda:{i}": kind for i, kind in enumerate(listed.get("gpus") or ())}
        if listed.get("gpu_error"):
            found["gpu_error"] = listed["gpu_error"]
        return found

    def probe(self) -> tuple[DeviceStatus, ...]:
        found = _devices()
        if "error" in found:
            return (DeviceStatus(self.name, "cpu", False, f"jax failed to start: {found['error']}"),)
        asynchronous = "async dispatch on" if found["async_dispatch"] else "async dispatch OFF (jax_cpu_enable_async_dispatch)"
        statuses = [DeviceStatus(self.name, "cpu", True, f"{found['cpus']} XLA CPU device(s), {asynchronous}")]
        if not found["gpus"]:
            why = found.get("gpu_error") or "none listed"
            return (
                *statuses,
                DeviceStatus(self.name, "cuda", False, f"jax lists no GPU ({why}; on a CUDA machine: pip install 'jax[cuda12]')"),
            )
        statuses += [DeviceStatus(self.name, f"cuda:{i}", True, kind) for i, kind in enumerate(found["gpus"])]
        return tuple(statuses)

    def second_cpu(self) -> str | None:
        return "cpu:1" if _devices().get("cpus", 0) > 1 else None

    def activate(self, device: str) -> ContextManager[Any]:
        return _jax().default_device(self._device(device))

    def full_precision(self) -> ContextManager[Any]:
        return _jax().default_matmul_precision("highest")

    def describe(self, device: str) -> str | None:
        return NOTE if device.startswith("cpu") else None

    @staticmethod
    def _async_dispatch() -> bool:
        try:
            return bool(_jax().config.read("jax_cpu_enable_async_dispatch"))
        except (AttributeError, KeyError):
            return True

    def random(self, shape: tuple[int, ...], dtype: str, device: str) -> Callable[[], Any]:
        jax = _jax()
        generate = _generator(tuple(shape), dtype)
        state = [jax.device_put(jax.random.PRNGKey(0), self._device(device))]

        def make() -> Any:
            state[0], array = generate(state[0])
            return array

        return make

    def ones(self, shape: tuple[int, ...], dtype: str, device: str) -> Any:
        jax = _jax()
        return jax.device_put(jax.numpy.ones(shape, dtype=dtype), self._device(device))

    def namespace(self) -> Any:
        return _jax().numpy

    def compiled(self, function: Callable[..., Any]) -> Callable[..., Any]:
        return _jax().jit(function)

    def barrier(self, device: str) -> None:
        self._sentinel(device)().block_until_ready()

    @functools.lru_cache(maxsize=8)  # noqa: B019 - one per device, for the life of the process
    def _sentinel(self, device: str) -> Callable[[], Any]:
        jax = _jax()
        one = jax.device_put(jax.numpy.ones((BARRIER_ELEMENTS,), dtype="float32"), self._device(device))
        increment = jax.jit(lambda v: v + 1)
        increment(one).block_until_ready()  # compile now, not inside a timed sync
        return lambda: increment(one)

    def result_wait(self, device: str) -> ResultWait | None:
        """On a CPU, as the module says (the sentinel done at once 1000 times of 1000 idle, 0 of 50 behind a queued
        product); on a GPU the sentinel is queued on the stream: no proof without a wait."""
        if not device.startswith("cpu"):
            return None
        jax, sentinel = _jax(), self._sentinel(device)
        array_types: set[type] = set()  # the types of a single array a step returned: waited on without a tree walk

        def wait(result: Any) -> bool:
            # a step returning one array, the common case, waits as a hand loop does: the walk of its tree (tree_leaves
            # and an isinstance of jax.Array per leaf) cost 2.3 µs a sample, 1.4% of 20 tiny steps (docs/measured.md)
            if type(result) in array_types:
                result.block_until_ready()
                return True
            if isinstance(result, jax.Array):
                array_types.add(type(result))
                result.block_until_ready()
                return True
            arrays = [leaf for leaf in jax.tree_util.tree_leaves(result) if isinstance(leaf, jax.Array)]
            for array in arrays:
                array.block_until_ready()
            return bool(arrays)

        return ResultWait(wait, lambda: bool(sentinel().is_ready()), self.ones((BARRIER_ELEMENTS,), "float32", device))

    def wait(self, array: Any) -> None:
        array.block_until_ready()

    def to_host(self, array: Any) -> Any:
        import numpy

        return numpy.asarray(array)

    def is_asynchronous(self, device: str) -> bool:
        return self._async_dispatch() if device.startswith("cpu") else True

    @classmethod
    def capture_refused(cls, how: str, spec: str) -> str | None:
        return None if how == "jit" else f"--bound-verify {how}: jax captures a step with jit only"

    def capture_step(self, step: Callable[[], Any], device: str, how: str) -> tuple[Callable[[], Any] | None, str | None]:
        """`--bound-verify jit`: jax.jit of the step, checked against the eager step (backends.step_capture.jax_jit)."""
        refused = self.capture_refused(how, device)
        if refused is not None:
            return None, refused
        from asyncbench.backends import step_capture

        return step_capture.jax_jit(step)

    def device_delay(self, device: str) -> tuple[Any, str | None]:
        """On a CPU: a jit'd loop of DELAY_SIDE² multiply-adds, its trip count the delay's size (QueuedOpDelay). It
        is queued, not run inline: XLA's CPU client runs a computation on the calling thread only when its cost
        estimate is under 1000 FLOPs, and one trip is 2·DELAY_SIDE² (8192). It runs before the step's work: XLA's
        CPU client runs one device's computations one after another, in the order issued (a 256² op issued behind
        a 2.8 ms delay was ready 2.76 ms later, 0.14 ms without it). On a GPU: none yet (no sleep kernel in JAX)."""
        if not device.startswith("cpu"):
            return None, "jax on a GPU has no device delay yet (no sleep kernel): host side only"
        if not self._async_dispatch():
            return None, "jax runs synchronously here (jax_cpu_enable_async_dispatch is off)"
        import numpy

        from asyncbench.backends.device_delays import QueuedOpDelay

        jax = _jax()
        target = self._device(device)
        start = jax.device_put(jax.numpy.ones((DELAY_SIDE, DELAY_SIDE), dtype="float32"), target)
        spin = jax.jit(lambda x, n: jax.lax.fori_loop(0, n, lambda i, v: v * 0.999 + 0.001, x))
        trips: dict[int, Any] = {}  # each size's trip count on the device once: a Python int would be a transfer per call

        def issue(units: int) -> Any:
            count = trips.get(units)
            if count is None:
                count = trips[units] = jax.device_put(numpy.int32(units), target)
            return spin(start, count)

        return QueuedOpDelay(issue, lambda array: array.block_until_ready(), DELAY_CALIBRATION_TRIPS), None

    def sync_hooks(self, device: str) -> tuple[SyncHook, ...]:
        """Where JAX's host waits (jax_syncs.hooks), on every device: conversions, prints, control flow, waits."""
        from asyncbench.backends.jax_syncs import hooks

        return hooks(_jax())

    #: the device's peak bytes in use when the memory window opened (None: no window open, or no peak kept)
    _peak_before: int | None = None

    @contextlib.contextmanager
    def memory_window(self, device: str) -> Iterator[None]:
        """XLA keeps a peak per device that nothing resets: its value at the window's start is kept, so that
        device_memory reports a peak only where this run raised it (a lower one is not known)."""
        self._peak_before = _memory_stat(self._device(device), "peak_bytes_in_use")
        try:
            yield
        finally:
            self._peak_before = None

    def device_memory(self, device: str) -> dict[str, int]:
        """Bytes in use and held by the device's allocator (XLA's memory_stats on a GPU; None on a CPU: {}),
        and the peak where this window raised it."""
        found = self._device(device)
        figures = {
            name: value
            for name, stat in (("device_pool_used_bytes", "bytes_in_use"), ("device_pool_total_bytes", "pool_bytes"))
            if (value := _memory_stat(found, stat)) is not None
        }
        before, peak = self._peak_before, _memory_stat(found, "peak_bytes_in_use")
        if before is not None and peak is not None and peak > before:
            figures["device_peak_bytes"] = peak
        return figures

    no_profiler = None

    def profiler(self, device: str) -> Any:
        from asyncbench.backends.profilers import JaxProfiler

        _jax()  # configured before its backend starts
        return JaxProfiler()
