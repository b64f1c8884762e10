"""multi_device: the same work on two devices, alone and together without a sync in between.

The automatic-parallelism chapter: `n_iter` products of a size×size matrix on
each device alone (synchronized), then issued on both before one sync. The
pair is the case's device plus a `partner`:
- two GPUs (`cuda:N`, the next GPU by default when there is one);
- a GPU plus the CPU (`cpu`; torch only): the GPU work is issued first, then
  the CPU work runs on the calling thread, then the GPU is synchronized — the
  reverse order would serialize them;
- two streams on one GPU (`stream`; cupy's default partner on one GPU);
- on the CPU alone: the framework's second CPU device where it has one (JAX's
  `cpu:1`, MXNet's `mx.cpu(1)`: the work is issued on both before one
  sync), else two threads with half the cores each (torch).
"""

from __future__ import annotations

from typing import Any, Callable, Mapping

from asyncbench import stats
from asyncbench.backends.base import Backend
from asyncbench.environment import usable_cores
from asyncbench.model import Clocks, Result
from asyncbench.workloads.base import DTYPE, INT, STR, Metric, Param, Prepared, Workload
from asyncbench.workloads.threads import started_pool

FIRST, SECOND, TOGETHER = "first", "second", "together"

# An efficiency interval wholly above this: the parts ran at once; wholly below: one after the other.
OVERLAP_NOTICEABLE = 0.2


def _cuda_count(backend: Backend) -> int:
    return sum(1 for s in backend.probe() if s.available and s.device.startswith("cuda"))


def partner_for(backend: Backend, device: str, partner: str) -> str:
    """The concrete partner: a device name, 'stream', or 'threads' (two CPU threads)."""
    if device == "cpu":
        return backend.second_cpu() or "threads"
    if partner != "auto":
        return partner
    count = _cuda_count(backend)
    if count > 1:
        index = int(device.split(":")[1])
        return f"cuda:{(index + 1) % count}"
    return "cpu" if backend.name == "torch" else "stream"


class MultiDevice(Workload):
    name = "multi_device"
    summary = "the same products on two devices (GPUs, GPU+CPU, two streams, two CPU thread groups) alone vs together"
    params = (
        Param("size", INT, 4000, "matrix side", quick=384, minimum=1, maximum=65536),
        Param("n_iter", INT, 50, "products per device per sample", quick=4, minimum=1, maximum=100_000),
        Param("partner", STR, "auto", "auto, cpu, stream or cuda:N", pattern=r"auto|cpu|stream|cuda:\d+"),
        DTYPE,
    )
    variants = (FIRST, SECOND, TOGETHER)
    metrics = (
        Metric("parallel_speedup", "x", "(T_first + T_second) / T_together"),
        Metric("overlap_efficiency", "", "(ΣT_i − T_together) / (ΣT_i − max T_i); 1 = perfect"),
    )

    def skip_reason(self, backend: Backend, device: str, params: Mapping[str, Any]) -> str | None:
        partner = partner_for(backend, device, params["partner"])
        if partner == "threads" and not backend.threads_settable:
            return f"{backend.name} cannot give each thread its own share of the cores (use torch)"
        if partner == "cpu" and backend.name != "torch":
            return f"{backend.name} cannot compute on the CPU; use partner: stream or a second GPU"
        if partner == device:
            return f"partner {partner} is the case's own device; pick another (or stream)"
        if partner.startswith("cuda:") and int(partner.split(":")[1]) >= _cuda_count(backend):
            return f"partner {partner} not present ({_cuda_count(backend)} CUDA device(s) visible)"
        return super().skip_reason(backend, device, params)

    def setup(self, backend: Backend, device: str, params: Mapping[str, Any]) -> Prepared:
        size, n_iter, dtype = params["size"], params["n_iter"], params["dtype"]
        partner = partner_for(backend, device, params["partner"])
        if partner == "threads":
            return self._threads(backend, size, n_iter, dtype)

        def products(x: Any) -> Callable[[], Any]:
            return lambda: [x @ x for _ in range(n_iter)]

        first = products(backend.random((size, size), dtype, device)())
        if partner == "stream":
            side = backend.new_stream(device)
            second_input = backend.random((size, size), dtype, device)()

            def second() -> Any:
                backend.fork(device, [side])
                with backend.on_stream(side):
                    result = [second_input @ second_input for _ in range(n_iter)]
                backend.join(device, [side])
                return result

            note, sync = f"two streams on {device}", lambda: backend.barrier(device)
        else:
            with backend.activate(partner):
                second_on_partner = products(backend.random((size, size), dtype, partner)())

            def second() -> Any:
                with backend.activate(partner):
                    return second_on_partner()

            note = f"{device} + {partner}, {device} work issued first"

            def sync() -> None:
                backend.barrier(device)
                backend.barrier(partner)

        sync()

        def together() -> Any:
            return first(), second()  # first is issued (returns at once on a GPU) before second starts

        return Prepared(variants={FIRST: first, SECOND: second, TOGETHER: together}, sync=sync, note=note)

    def _threads(self, backend: Backend, size: int, n_iter: int, dtype: str) -> Prepared:
        """Two CPU threads, each with half the cores (the framework's threads set before the pool starts)."""
        cores = usable_cores()
        per_thread = max(1, cores // 2)
        previous = backend.set_threads(per_thread)
        # Each worker sets its own count too: a fresh thread's first BLAS call may not
        # see the process-wide setting (seen with torch 2.13: a worker ran at 2 threads).
        pool = started_pool(2, "asyncbench-cpu", initializer=backend.set_threads, initargs=(per_thread,))
        inputs = [backend.random((size, size), dtype, "cpu")() for _ in range(2)]

        def work(x: Any) -> Any:
            return [x @ x for _ in range(n_iter)]

        def alone(index: int) -> Callable[[], Any]:
            return lambda: pool.submit(work, inputs[index]).result()

        def together() -> Any:
            futures = [pool.submit(work, x) for x in inputs]
            return [f.result() for f in futures]

        def close() -> None:
            pool.shutdown(wait=True)
            if previous is not None:
                backend.set_threads(previous)

        return Prepared(
            variants={FIRST: alone(0), SECOND: alone(1), TOGETHER: together},
            sync=lambda: None,
            close=close,
            note=f"2 threads × {per_thread} of {cores} cores",
        )

    def round_metrics(self, params: Mapping[str, Any], clocks: Mapping[str, Clocks]) -> dict[str, float | None]:
        alone = [clocks[FIRST].done_s, clocks[SECOND].done_s]
        together = clocks[TOGETHER].done_s
        return {
            "parallel_speedup": sum(alone) / together if together > 0 else None,
            "overlap_efficiency": stats.overlap_efficiency(alone, together),
        }

    def reading(self, result: Result) -> str:
        if result.metrics.get("overlap_efficiency") is None:
            return ""
        speedup, efficiency = self.figure(result, "parallel_speedup"), self.figure(result, "overlap_efficiency")
        where = stats.side(result.bounds.get("overlap_efficiency"), OVERLAP_NOTICEABLE)
        if where == 1:
            return f"the two ran at once: together is {speedup} faster than one after the other (overlap efficiency {efficiency})"
        if where == -1:
            return f"the two did not run at once (overlap efficiency {efficiency}, {speedup}): they compete for the same resource"
        return f"running at once not shown either way: overlap efficiency {efficiency} straddles {OVERLAP_NOTICEABLE} ({speedup})"
