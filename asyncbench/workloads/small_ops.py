"""small_ops: when single ops are small, running independent ones side by side pays.

The chapter's exercise: `n_tasks` independent tasks of `ops_per_task` small
matrix products each, run one task after another (`serial`) or spread
round-robin over `workers` streams on a GPU or threads on a CPU (`parallel`).
A small op leaves most of a GPU or a CPU idle, so parallel tasks can fill it.
On a backend whose engine runs independent ops itself (MXNet), `serial`
waits for each task before issuing the next and `parallel` issues them all:
the engine's worker threads run them side by side. JAX is skipped: XLA's
CPU client runs one device's computations one after another, and on a GPU
XLA has one compute stream per device (a speedup there would be saved
waits, not ops side by side).
"""

from __future__ import annotations

from typing import Any, Mapping

from asyncbench.backends.base import Backend
from asyncbench.results import stats
from asyncbench.results.model import Clocks, Result
from asyncbench.workloads.base import DTYPE, INT, Metric, Param, Prepared, Workload, matrix_side
from asyncbench.workloads.threads import started_pool

SERIAL, PARALLEL = "serial", "parallel"


class SmallOps(Workload):
    name = "small_ops"
    summary = "independent small matrix products: serial vs spread over streams (GPU) or threads (CPU)"
    params = (
        matrix_side(64),
        Param("n_tasks", INT, 8, "independent tasks", minimum=1, maximum=10_000),
        Param("ops_per_task", INT, 100, "products per task", quick=20, minimum=1, maximum=1_000_000),
        Param("workers", INT, 2, "streams (GPU) or threads (CPU)", minimum=1, maximum=256),
        DTYPE,
    )
    variants = (SERIAL, PARALLEL)
    metrics = (
        Metric("speedup", "x", "serial / parallel done time"),
        Metric("overlap_efficiency", "", "(T_serial − T_parallel) / (T_serial − T_serial/workers); 1 = perfect"),
    )

    def skip_reason(self, backend: Backend, device: str, params: Mapping[str, Any]) -> str | None:
        if backend.serializes_device_work:
            return (
                f"{backend.name} runs one device's computations one after another (one compute stream per device): "
                "nothing issued on it can run side by side"
            )
        if device.startswith("cuda") and backend.max_streams is not None and params["workers"] > backend.max_streams:
            return (
                f"{backend.name} gives at most {backend.max_streams} distinct streams per device: with workers="
                f"{params['workers']} some tasks would share a stream; use workers <= {backend.max_streams}"
            )
        return super().skip_reason(backend, device, params)

    def setup(self, backend: Backend, device: str, params: Mapping[str, Any]) -> Prepared:
        size, n_tasks, ops, workers = params["size"], params["n_tasks"], params["ops_per_task"], params["workers"]
        make_random = backend.random((size, size), params["dtype"], device)
        inputs = [make_random() for _ in range(n_tasks)]
        backend.barrier(device)

        def task(x: Any) -> Any:
            for _ in range(ops):
                y = x @ x
            return y

        def run_serial() -> Any:
            return [task(x) for x in inputs]

        streams = [backend.new_stream(device) for _ in range(workers)]
        if all(stream is not None for stream in streams):

            def run_parallel() -> Any:
                backend.fork(device, streams)
                results = []
                for index, x in enumerate(inputs):
                    with backend.on_stream(streams[index % workers]):
                        results.append(task(x))
                backend.join(device, streams)
                return results

            return Prepared(
                variants={SERIAL: run_serial, PARALLEL: run_parallel},
                sync=lambda: backend.barrier(device),
                note=f"{workers} streams",
            )

        if backend.is_asynchronous(device):  # an engine that runs independent ops itself (MXNet): the frontend only issues
            wait = backend.wait

            def run_one_by_one() -> Any:
                results = []
                for x in inputs:
                    results.append(task(x))
                    wait(results[-1])  # each task finishes before the next is issued
                return results

            return Prepared(
                variants={SERIAL: run_one_by_one, PARALLEL: run_serial},
                sync=lambda: backend.barrier(device),
                note="serial waits for each task; parallel issues them all to the engine",
            )

        pool = started_pool(workers, "asyncbench-task")

        def run_threads() -> Any:
            return [f.result() for f in [pool.submit(task, x) for x in inputs]]

        return Prepared(
            variants={SERIAL: run_serial, PARALLEL: run_threads},
            sync=lambda: backend.barrier(device),
            close=lambda: pool.shutdown(wait=True),
            note=f"{workers} threads",
        )

    def round_metrics(self, params: Mapping[str, Any], clocks: Mapping[str, Clocks]) -> dict[str, float | None]:
        serial, parallel = clocks[SERIAL].done_s, clocks[PARALLEL].done_s
        n_tasks, workers = params["n_tasks"], params["workers"]
        # each worker's share of the serial time: its round-robin share of the tasks
        shares = [len(range(w, n_tasks, workers)) / n_tasks * serial for w in range(min(workers, n_tasks))]
        return {
            "speedup": serial / parallel if parallel > 0 else None,
            "overlap_efficiency": stats.overlap_efficiency(shares, parallel),
        }

    def reading(self, result: Result) -> str:
        if result.metrics.get("speedup") is None:
            return ""
        speedup = self.figure(result, "speedup")
        where = stats.side(result.bounds.get("speedup"), 1.0)
        if where == 1:
            return f"independent small ops ran side by side: {speedup} faster than one after another"
        if where == -1:
            where_from = (
                "the streams share one device and one Python frontend"
                if result.device.startswith("cuda")
                else "the workers fight for the same cores (or the frontend is the bottleneck)"
            )
            return f"side by side was slower ({speedup}): {where_from}"
        return f"no gain shown from running them side by side ({speedup} includes 1)"
