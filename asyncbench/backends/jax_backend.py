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
- barrier: JAX has no device-wide barrier. `jax.effects_barrier()` waits only
  for side-effecting computations, and blocking on `jax.live_arrays()` misses
  work whose outputs were dropped (the barrier workload's background
  products). XLA's CPU client runs one device's computations one after
  another, so a small jit-compiled product (≥ 1000 FLOPs, so it is queued,
  not run inline) issued on the device and waited for returns only when
  everything issued before it on that device has run. It is the closest
  there is; on a GPU it waits for the device's stream likewise.
- wait for one result: `block_until_ready`; host conversion: `numpy.asarray`
  (zero-copy on a CPU).
- devices: `cpu` is the first XLA CPU device; two are configured
  (`jax_num_cpu_devices`, which must be set before JAX's backend starts:
  this module sets it on first import), so multi_device can pair `cpu` with
  `cpu:1`. `cuda:N` is the N-th GPU where jaxlib has CUDA.
- float64 needs `jax_enable_x64`, set on first import too (every array here
  is made with an explicit dtype, so nothing else changes).
- no events, no streams, no settable thread count (XLA's CPU threads are
  fixed at start), memory from the host only.
"""

from __future__ import annotations

import contextlib
import functools
from typing import Any, Callable

from asyncbench.backends.base import Backend, DeviceStatus

#: CPU devices configured at start: the case's device and a partner for multi_device
CPU_DEVICES = 2
# The barrier's product is queued behind the device's work only if XLA does not run it inline
# (cost estimate under ~1000 FLOPs): 32×32×32×2 = 65 536 FLOPs is well above and still costs microseconds.
BARRIER_SIDE = 32
NOTE = "XLA CPU client, async dispatch: computations under ~1000 FLOPs run inline at issue"


@functools.lru_cache(maxsize=1)
def _jax() -> Any:
    """jax, configured once per process before its backend starts."""
    import jax

    with contextlib.suppress(RuntimeError, AttributeError):  # the backend already started (user code), or an older jax
        jax.config.update("jax_num_cpu_devices", CPU_DEVICES)
    jax.config.update("jax_enable_x64", True)
    return jax


class JaxBackend(Backend):
    name = "jax"
    module = "jax"
    distributions = ("jax",)
    dtypes = ("float16", "bfloat16", "float32", "float64")
    serializes_device_work = True

    def _device(self, device: str) -> Any:
        jax = _jax()
        kind, _, index = device.partition(":")
        return jax.devices("gpu" if kind == "cuda" else "cpu")[int(index or 0)]

    def probe(self) -> tuple[DeviceStatus, ...]:
        jax = _jax()
        cpus = jax.devices("cpu")
        asynchronous = "async dispatch on" if self._async_dispatch() else "async dispatch OFF (jax_cpu_enable_async_dispatch)"
        statuses = [DeviceStatus(self.name, "cpu", True, f"{len(cpus)} XLA CPU device(s), {asynchronous}")]
        try:
            gpus = jax.devices("gpu")
        except RuntimeError:
            return (
                *statuses,
                DeviceStatus(self.name, "cuda", False, "jaxlib has no GPU support here (pip install 'jax[cuda12]' on a CUDA machine)"),
            )
        statuses += [DeviceStatus(self.name, f"cuda:{i}", True, str(getattr(d, "device_kind", d))) for i, d in enumerate(gpus)]
        return tuple(statuses)

    def second_cpu(self) -> str | None:
        return "cpu:1" if len(_jax().devices("cpu")) > 1 else None

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

        @jax.jit
        def generate(key: Any) -> tuple[Any, Any]:
            key, sub = jax.random.split(key)
            return key, jax.random.normal(sub, shape, dtype=dtype)

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

    def barrier(self, device: str) -> None:
        self._sentinel(device)().block_until_ready()

    @functools.lru_cache(maxsize=8)  # noqa: B019 - one per device, for the life of the process
    def _sentinel(self, device: str) -> Callable[[], Any]:
        jax = _jax()
        square = jax.device_put(jax.numpy.ones((BARRIER_SIDE, BARRIER_SIDE), dtype="float32"), self._device(device))
        product = jax.jit(lambda m: m @ m)
        product(square).block_until_ready()  # compile now, not inside a timed sync
        return lambda: product(square)

    def wait(self, array: Any) -> None:
        array.block_until_ready()

    def to_host(self, array: Any) -> Any:
        import numpy

        return numpy.asarray(array)

    def is_asynchronous(self, device: str) -> bool:
        return self._async_dispatch() if device.startswith("cpu") else True

    no_profiler = None

    def profiler(self, device: str) -> Any:
        from asyncbench.backends.profilers import JaxProfiler

        _jax()  # configured before its backend starts
        return JaxProfiler()
