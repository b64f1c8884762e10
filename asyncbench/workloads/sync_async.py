"""sync_async: one wait per op versus one barrier at the end.

`y = x + 1` on a tiny array n_ops times. The textbook's model: synchronous
costs ≈ N(t1 + t2 + t3), asynchronous ≈ t1 + N·t2 + t3 when the backend is
the bottleneck (N·t2 > (N−1)·t1), else ≈ N·t1 + t2 + t3 — with t1 the
frontend's issue time, t2 the backend's execution time and t3 the time to
return a result. On a CPU the op runs on the calling thread: speedup ≈ 1 and
t3 ≈ 0, which is the honest answer.
"""

from __future__ import annotations

from typing import Any, Mapping

from asyncbench import units
from asyncbench.backends.base import Backend
from asyncbench.model import VariantResult
from asyncbench.workloads.base import DTYPE, INT, SHAPE, Metric, Param, Prepared, Workload

SYNC, ASYNC = "sync", "async"

# A speedup under this is within run-to-run noise: report "no difference".
SPEEDUP_NOTICEABLE = 1.1


def fit_model(n_ops: int, sync: VariantResult, asynchronous: VariantResult) -> dict[str, float | None]:
    """Per-op t1, t2, t3 from the clocks, and how well the textbook's model predicts async.

    t1 = async issue time / N. t2 = async device time / N where events exist
    (an upper bound when the frontend is the bottleneck, as the device then
    waits for launches); without events, the backlog left after issue / N.
    t3 = the sync variant's per-op time minus t1 and t2.
    """
    t1 = asynchronous.issue_s.median / n_ops
    if asynchronous.device_s is not None:
        t2 = asynchronous.device_s.median / n_ops
    else:
        t2 = max(0.0, asynchronous.done_s.median - asynchronous.issue_s.median) / n_ops
    t3 = sync.done_s.median / n_ops - t1 - t2
    if n_ops * t2 > (n_ops - 1) * t1:
        predicted = t1 + n_ops * t2 + t3
    else:
        predicted = n_ops * t1 + t2 + t3
    measured = asynchronous.done_s.median
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
        Metric("t2_s", "s", "backend time to run one op"),
        Metric("t3_s", "s", "time to wait for and return one result"),
        Metric("model_error", "%", "textbook model's predicted async time vs measured, relative"),
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

    def compute_metrics(
        self, params: Mapping[str, Any], variants: Mapping[str, VariantResult]
    ) -> dict[str, float | None]:
        sync, asynchronous = variants[SYNC], variants[ASYNC]
        async_done = asynchronous.done_s.median
        return {
            "speedup": sync.done_s.median / async_done if async_done > 0 else None,
            **fit_model(params["n_ops"], sync, asynchronous),
        }

    def reading(self, metrics: Mapping[str, float | None], device: str) -> str:
        speedup = metrics.get("speedup")
        if speedup is None:
            return ""
        t1, t2, t3 = (units.seconds(metrics.get(k)) for k in ("t1_s", "t2_s", "t3_s"))
        if speedup >= SPEEDUP_NOTICEABLE:
            return (
                f"async is {units.ratio(speedup)} faster; frontend issues an op in {t1}, "
                f"backend runs it in {t2}, a wait costs {t3}"
            )
        return (
            f"async ≈ sync ({units.ratio(speedup)}): ops finish before they return, so there is nothing "
            f"to overlap; an op costs {t1}, a wait {t3}"
        )
