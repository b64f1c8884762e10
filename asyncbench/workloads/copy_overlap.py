"""copy_overlap: computation and device-to-host copies at the same time.

The automatic-parallelism chapter: `n_matrices` products of a size×size
matrix on a GPU, each result copied to the host. `overlapped` starts each copy
as soon as its result is ready — pinned host buffers, a separate copy stream
waiting on a per-result event, non-blocking copies, results kept alive until
the final sync. `naive_nonblocking` is the chapter's PyTorch code:
`.to('cpu', non_blocking=True)` after the products, on the compute stream:
torch copies into a new pinned buffer without the host waiting (cupy is made
to do the same), but a stream runs one thing at a time, so the copies start
after the last product and nothing overlaps on the device. Whether the
copies overlapped is read from the rounds' time saved, sequential −
overlapped (`overlap_saved_s`): overlap only where its interval lies wholly
above zero, "no overlap (overlapped run slower)" wholly below (an H100 ran
the quick size's overlapped variant 1.2× slower than sequential: the copy
stream's event waits cost more than 512² copies save). After timing,
every copied result of an overlapped run is compared with its device array
inside the framework (`verified`; NumPy has no bfloat16). A CPU has no copy
engine: the case is skipped there; so is JAX, which puts a transfer on a
stream of its own choosing and keeps an array's host copy after the first
(after warm-up every "copy" would be a host memcpy). The pinned buffers are
dropped and then given back when the case ends (`release_host_cache`: torch
and CuPy keep freed ones for the process otherwise, gigabytes at the
textbook's sizes; a cache emptied while they are alive frees nothing).
"""

from __future__ import annotations

import contextlib
from typing import Any, Mapping

from asyncbench.backends.base import Backend
from asyncbench.results import stats, units
from asyncbench.results.model import Clocks, Result
from asyncbench.workloads.base import DTYPE, INT, Metric, Param, Prepared, Workload, matrix_side

COMPUTE, COPY, SEQUENTIAL, OVERLAPPED, NAIVE = "compute", "copy", "sequential", "overlapped", "naive_nonblocking"

# Where the overlapped run saved time: an efficiency interval wholly below this says the shorter of compute and
# copy still ran mostly alone (a saving, but little of the copies hidden under the products).
OVERLAP_NOTICEABLE = 0.2


def _give_back(backend: Backend, device: str, ready: list[Any], hosts: list[Any]) -> None:
    """The case's buffers dropped, then the host cache emptied: a cache frees only blocks nobody holds, so
    emptying it while `hosts` was alive kept every pinned buffer (gigabytes) for the worker's life."""
    with contextlib.suppress(Exception):  # a case that failed on the device still gives its buffers back
        backend.barrier(device)  # torch frees a pinned block once the copies recorded on it are done
    ready.clear()
    hosts.clear()
    backend.release_host_cache()


class CopyOverlap(Workload):
    name = "copy_overlap"
    summary = "GPU products with each result copied to pinned host memory: sequential vs overlapped on a copy stream"
    params = (
        matrix_side(4000, quick=512),
        Param("n_matrices", INT, 50, "products (and copies) per sample", quick=8, minimum=1, maximum=100_000),
        DTYPE,
    )
    variants = (COMPUTE, COPY, SEQUENTIAL, OVERLAPPED, NAIVE)
    metrics = (
        Metric("overlap_speedup", "x", "sequential / overlapped done time"),
        Metric("overlap_saved_s", "s", "sequential − overlapped done time: what overlapping saved (below 0: it cost)", signed=True),
        Metric("overlap_efficiency", "", "(T_compute + T_copy − T_overlapped) / min(T_compute, T_copy); 1 = perfect"),
        Metric("copy_gbps", "GB/s", "device-to-host bytes / copy-only done time"),
        Metric("naive_speedup", "x", "sequential / naive_nonblocking done time"),
        Metric("verified", "bool", "every overlapped copy equals a synchronous copy of its result"),
    )

    def skip_reason(self, backend: Backend, device: str, params: Mapping[str, Any]) -> str | None:
        if not device.startswith("cuda"):
            return "a CPU has no copy engine to overlap with (a host copy is a memcpy): select a CUDA device (-d cuda)"
        if not backend.copy_streams:
            return (
                f"{backend.name} picks the stream of each transfer itself and keeps an array's host copy after the first, "
                "so copies can be neither placed beside the products nor repeated"
            )
        return super().skip_reason(backend, device, params)

    def setup(self, backend: Backend, device: str, params: Mapping[str, Any]) -> Prepared:
        size, n, dtype = params["size"], params["n_matrices"], params["dtype"]
        x = backend.random((size, size), dtype, device)()
        ready = [x @ x for _ in range(n)]  # results for the copy-only variant
        hosts = [backend.pinned_empty((size, size), dtype) for _ in range(n)]
        copier = backend.new_stream(device)
        backend.barrier(device)

        def run_compute() -> Any:
            return [x @ x for _ in range(n)]

        def run_copy() -> Any:
            for source, host in zip(ready, hosts, strict=True):
                backend.copy_to_host(source, host, non_blocking=True)
            return hosts

        def run_sequential() -> Any:
            results = [x @ x for _ in range(n)]
            backend.barrier(device)
            for source, host in zip(results, hosts, strict=True):
                backend.copy_to_host(source, host, non_blocking=True)
            return results

        def run_overlapped() -> Any:
            results = []
            for host in hosts:
                y = x @ x
                done = backend.record_event(device)
                backend.stream_wait(copier, done)
                with backend.on_stream(copier):
                    backend.copy_to_host(y, host, non_blocking=True)
                results.append(y)  # kept alive until the harness's final sync
            backend.join(device, [copier])
            return results

        def run_naive() -> Any:
            results = [x @ x for _ in range(n)]
            return [backend.to_host_nonblocking(y) for y in results]

        def verify() -> str | None:
            results = run_overlapped()
            backend.barrier(device)  # reading a host buffer before this sync is the bug being guarded against
            bad = [i for i, (y, host) in enumerate(zip(results, hosts, strict=True)) if not backend.same_values(y, host)]
            return f"{len(bad)} of {n} copied results differ from the device (first: #{bad[0]})" if bad else None

        return Prepared(
            variants={COMPUTE: run_compute, COPY: run_copy, SEQUENTIAL: run_sequential, OVERLAPPED: run_overlapped, NAIVE: run_naive},
            sync=lambda: backend.barrier(device),
            verify=verify,
            close=lambda: _give_back(backend, device, ready, hosts),
        )

    def round_metrics(self, params: Mapping[str, Any], clocks: Mapping[str, Clocks]) -> dict[str, float | None]:
        t = {name: c.done_s for name, c in clocks.items()}
        n, size = params["n_matrices"], params["size"]
        element_bytes = {"float16": 2, "bfloat16": 2, "float32": 4, "float64": 8}[params["dtype"]]
        return {
            "overlap_speedup": t[SEQUENTIAL] / t[OVERLAPPED],
            "overlap_saved_s": t[SEQUENTIAL] - t[OVERLAPPED],
            "overlap_efficiency": stats.overlap_efficiency([t[COMPUTE], t[COPY]], t[OVERLAPPED]),
            "copy_gbps": n * size * size * element_bytes / t[COPY] / 1e9,
            "naive_speedup": t[SEQUENTIAL] / t[NAIVE],
        }  # `verified` is added by the runner from verify()

    def reading(self, result: Result) -> str:
        """Overlap only where the interval of sequential − overlapped excludes zero; then how much of the shorter part
        it hid (overlap efficiency)."""
        if result.metrics.get("overlap_efficiency") is None or result.metrics.get("overlap_speedup") is None:
            return ""
        efficiency, naive = self.figure(result, "overlap_efficiency"), self.figure(result, "naive_speedup")
        speedup = f"speedup {self.figure(result, 'overlap_speedup')}"
        where, saved = self._saved(result)
        naive_said = f"the chapter's naive non_blocking code gets {naive}"
        if where == -1:
            cost = f"it took {saved} more than sequential, " if saved else ""
            return f"no overlap (overlapped run slower): {cost}{speedup}; {naive_said}"
        if where != 1:
            none = f"the time saved is {saved}, " if saved else ""
            return f"no overlap shown: {none}{speedup}; {naive_said}"
        saving = f"the overlapped run saved {saved} against sequential, " if saved else "the overlapped run was faster than sequential, "
        if stats.side(result.bounds.get("overlap_efficiency"), OVERLAP_NOTICEABLE) == -1:
            return (
                f"overlap, but little: {saving}{speedup}, and its efficiency {efficiency} is below {OVERLAP_NOTICEABLE}: "
                f"the shorter of compute and copy still ran mostly alone; {naive_said}"
            )
        return f"overlap: copies ran under the products; {saving}{speedup}, overlap efficiency {efficiency}; {naive_said}"

    def _saved(self, result: Result) -> tuple[int | None, str | None]:
        """Where sequential − overlapped lies against 0 (stats.side), and the time saved (or, wholly below 0, the time
        it cost) as said. A file older than overlap_saved_s is read from the speedup's interval against 1 (a round's
        ratio is above 1 where its difference is above 0), with no time to say."""
        saved, bounds = result.metrics.get("overlap_saved_s"), result.bounds.get("overlap_saved_s")
        if saved is None:
            return stats.side(result.bounds.get("overlap_speedup"), 1.0), None
        where = stats.side(bounds, 0.0)
        if where == -1 and bounds is not None:  # a cost: said as the positive time it took more
            return where, units.with_bounds(-saved, (-bounds[1], -bounds[0]), "s")
        return where, units.with_bounds(saved, bounds, "s")
