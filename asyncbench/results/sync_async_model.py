"""sync_async's textbook model of one round's clocks (t1 the frontend's per-op issue, t2 the backend's per-op
execution, t3 the per-op wait, and how well they predict the async run), in the results layer: the workload computes
its per-round metrics with it, and a reader holds a file's stored t1_s, t2_s, t3_s and model_error to the samples
with the very same arithmetic (results.workload_figures), not a copy of it."""

from __future__ import annotations

from asyncbench.results.model import Clocks

# Ops the queued variant issues behind its hold: within every launch queue (CUDA's holds about a thousand
# launches, the test device's 64), so issuing never blocks on a full queue, and enough device time (≥ 48 tiny
# kernels, some 100 µs on a GPU) for events of 0.5 µs resolution.
QUEUED_OPS = 48


def queued_ops(n_ops: int) -> int:
    return min(n_ops, QUEUED_OPS)


def held_long_enough(queued: Clocks) -> bool:
    """Whether a queued round's ops were all issued before the device reached them: issue_s under done_s −
    device_s (the time until the hold ended). Else the events time ops as the host issued them: no t2."""
    return queued.device_s is not None and queued.issue_s < queued.done_s - queued.device_s


def fit_model(n_ops: int, sync: Clocks, asynchronous: Clocks, queued: Clocks | None = None) -> dict[str, float | None]:
    """Per-op t1, t2, t3 from one round's clocks, and how well the textbook's model predicts async.

    t1 = async issue time / N. t2 = the queued variant's device time / its
    ops, when its ops all were issued before the hold ended (issue_s under
    done_s − device_s, the time until the device reached them); else, without
    a queued variant and without device events, the backlog left after issue
    / N (an execution time only on a backend that runs ahead: the runner
    drops t2 on a synchronous one). t3 = the sync variant's per-op time minus
    t1 and t2. model_error only where t2 was measured apart from the async
    run it predicts (the queued variant).
    """
    t1 = asynchronous.issue_s / n_ops
    t2: float | None = None
    independent = False
    if queued is not None:
        if held_long_enough(queued):
            assert queued.device_s is not None
            t2, independent = queued.device_s / queued_ops(n_ops), True
    elif asynchronous.device_s is None:
        t2 = max(0.0, asynchronous.done_s - asynchronous.issue_s) / n_ops
    if t2 is None:
        return {"t1_s": t1, "t2_s": None, "t3_s": None, "model_error": None}
    t3 = sync.done_s / n_ops - t1 - t2
    model_error = None
    if independent and asynchronous.done_s > 0:
        if n_ops * t2 > (n_ops - 1) * t1:
            predicted = t1 + n_ops * t2 + t3
        else:
            predicted = n_ops * t1 + t2 + t3
        model_error = predicted / asynchronous.done_s - 1
    return {"t1_s": t1, "t2_s": t2, "t3_s": t3, "model_error": model_error}
