"""sync_async: one wait per op versus one barrier at the end.

`y = x + 1` on a tiny array n_ops times. The textbook's model: synchronous
costs ≈ N(t1 + t2 + t3), asynchronous ≈ t1 + N·t2 + t3 when the backend is
the bottleneck (N·t2 > (N−1)·t1), else ≈ N·t1 + t2 + t3 — with t1 the
frontend's issue time, t2 the backend's execution time and t3 the time to
return a result. On a synchronous backend (torch or NumPy on a CPU) the op
runs inside its issue, so t2 cannot be told apart from t1 and is not
reported; the speedup is then only the cost of the wait call itself.
"""

from __future__ import annotations

from typing import Any, Mapping

from asyncbench.backends.base import Backend
from asyncbench.results import stats
from asyncbench.results.model import Clocks, Result
from asyncbench.workloads.base import DTYPE, INT, SHAPE, Metric, Param, Prepared, Workload

SYNC, ASYNC = "sync", "async"
# A backlog per op under a tenth of the issue time: the backend kept up, nothing piled up to overlap
# (JAX runs ops under ~1000 FLOPs inline; MXNet's engine runs x + 1 faster than Python issues it).
KEPT_UP = 0.1


def fit_model(n_ops: int, sync: Clocks, asynchronous: Clocks) -> dict[str, float | None]:
    """Per-op t1, t2, t3 from one round's clocks, and how well the textbook's model predicts async.

    t1 = async issue time / N. t2 = async device time / N where events exist
    (an upper bound when the frontend is the bottleneck, as the device then
    waits for launches); without events, the backlog left after issue / N —
    an execution time only on a backend that runs ahead (the runner drops t2
    and model_error on a synchronous one, where the op ran inside t1).
    t3 = the sync variant's per-op time minus t1 and t2.
    """
    t1 = asynchronous.issue_s / n_ops
    if asynchronous.device_s is not None:
        t2 = asynchronous.device_s / n_ops
    else:
        t2 = max(0.0, asynchronous.done_s - asynchronous.issue_s) / n_ops
    t3 = sync.done_s / n_ops - t1 - t2
    if n_ops * t2 > (n_ops - 1) * t1:
        predicted = t1 + n_ops * t2 + t3
    else:
        predicted = n_ops * t1 + t2 + t3
    measured = asynchronous.done_s
    return {
        "t1_s": t1,
        "t2_s": t2,
        "t3_s": t3,
        "model_error": predicted / measured - 1 if measured > 0 else None,
    }


class SyncAsync(Workload):
    name = "sync_async"
    summary = "y = x + 1, n_ops times: wait after every op (sync) vs once at the end (async)"
    params = (
        Param("n_ops", INT, 10000, "ops per sample", quick=1000, minimum=1, maximum=100_000_000),
        Param("shape", SHAPE, [1, 2], "shape of x"),
        DTYPE,
    )
    variants = (SYNC, ASYNC)
    metrics = (
        Metric("speedup", "x", "sync done time / async done time"),
        Metric("t1_s", "s", "frontend time to issue one op"),
        Metric("t2_s", "s", "backend time to run one op (device events, or the backlog after issue / N)", needs_async=True),
        Metric("t3_s", "s", "time to wait for and return one result"),
        Metric("model_error", "%", "textbook model's predicted async time vs measured, relative", needs_async=True),
    )

    def setup(self, backend: Backend, device: str, params: Mapping[str, Any]) -> Prepared:
        n_ops = params["n_ops"]
        x = backend.ones(tuple(params["shape"]), params["dtype"], device)
        wait = backend.wait

        def run_sync() -> Any:
            for _ in range(n_ops):
                y = x + 1
                wait(y)
            return y

        def run_async() -> Any:
            for _ in range(n_ops):
                y = x + 1
            return y

        return Prepared(variants={SYNC: run_sync, ASYNC: run_async}, sync=lambda: backend.barrier(device))

    def round_metrics(self, params: Mapping[str, Any], clocks: Mapping[str, Clocks]) -> dict[str, float | None]:
        sync, asynchronous = clocks[SYNC], clocks[ASYNC]
        return {
            "speedup": sync.done_s / asynchronous.done_s if asynchronous.done_s > 0 else None,
            **fit_model(params["n_ops"], sync, asynchronous),
        }

    def reading(self, result: Result) -> str:
        if result.metrics.get("speedup") is None:
            return ""
        speedup, t1 = self.figure(result, "speedup"), self.figure(result, "t1_s")
        t3 = self.figure(result, "t3_s")
        if stats.side(result.bounds.get("t3_s"), 0.0) != 1:
            t3 = f"too little to tell from nothing ({t3})"
        where = stats.side(result.bounds.get("speedup"), 1.0)
        if result.asynchronous is False:
            shown = (
                f"not waiting is {speedup} faster: the saving is the wait call itself"
                if where == 1
                else f"no difference shown between async and sync ({speedup})"
            )
            return (
                f"synchronous backend: each op finishes before it returns, so issuing one ({t1}) includes running it "
                f"and there is no backlog to overlap; {shown}; a wait costs {t3}"
            )
        t1_bounds, t2_bounds = result.bounds.get("t1_s"), result.bounds.get("t2_s")
        kept_up = t1_bounds is not None and t2_bounds is not None and t2_bounds[1] < t1_bounds[0] * KEPT_UP
        if where == 1 and kept_up:
            return (
                f"async is {speedup} faster, but not from overlap: the backend kept up with the frontend (a backlog of "
                f"{self.figure(result, 't2_s')} per op against {t1} to issue one, so the ops ran about as they were issued); "
                f"the saving is the waits themselves, {t3} each"
            )
        if where == 1:
            return (
                f"async is {speedup} faster; the frontend issues an op in {t1}, the backend runs it in "
                f"{self.figure(result, 't2_s')}, a wait costs {t3}"
            )
        if where == -1:
            return f"async is slower than sync ({speedup}): waiting after every op cost nothing here, the loop did"
        return f"no difference shown: the speedup {speedup} includes 1 — an op costs {t1}, a wait {t3}"
