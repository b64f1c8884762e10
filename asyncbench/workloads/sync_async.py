"""sync_async: one wait per op versus one barrier at the end.

`y = x + 1` on a tiny array n_ops times. The textbook's model: synchronous
costs ≈ N(t1 + t2 + t3), asynchronous ≈ t1 + N·t2 + t3 when the backend is
the bottleneck (N·t2 > (N−1)·t1), else ≈ N·t1 + t2 + t3 — with t1 the
frontend's issue time, t2 the backend's execution time and t3 the time to
return a result. On a synchronous backend (torch or NumPy on a CPU) the op
runs inside its issue, so t2 cannot be told apart from t1 and is not
reported; the speedup is then only the cost of the wait call itself.

Where t2 comes from matters, since the model predicts the async time from it:
- On a GPU, events around the async loop are no answer: when the frontend is
  the bottleneck the device waits for each launch, so the span between the
  events is the issue period again (t2 ≥ t1 by construction, and the model
  then fits itself). So a third variant, `queued`, issues QUEUED_OPS ops
  behind a kernel that holds the stream (`Backend.hold`) for longer than
  issuing them takes, with its start event after the hold: the events then
  time the ops back to back on a saturated device, t2 = that time / ops.
  A round whose hold ended before the ops were all issued gives no t2; the
  row counts such rounds (t2_missed) and its reading says why. The hold is
  a count of SM clock cycles the backend calibrated once: events around it
  check its length every round, and a hold that ran short (the clock rose
  after calibration) or long asks for re-scaled cycles from the next round.
- Without events (JAX and MXNet on a CPU), t2 is the backlog left after
  issue / N: an execution time on a backend that runs ahead, but part of the
  async time the model predicts, so model_error is not reported from it.
- Where neither holds (JAX on a GPU: no events, and at most 32 executions in
  flight, so the backlog is capped) the setup says t2 cannot be measured.
"""

from __future__ import annotations

import time
from typing import Any, Mapping

from asyncbench.backends.base import Backend
from asyncbench.results import paired_medians, stats
from asyncbench.results.model import Clocks, Result, VariantResult
from asyncbench.results.sync_async_model import fit_model, held_long_enough, queued_ops
from asyncbench.workloads.base import DTYPE, INT, SHAPE, Metric, Param, Prepared, Workload

SYNC, ASYNC, QUEUED = "sync", "async", "queued"
# A backlog per op under a tenth of the issue time: the backend kept up, nothing piled up to overlap
# (JAX runs ops under ~1000 FLOPs inline; MXNet's engine runs x + 1 faster than Python issues it).
KEPT_UP = 0.1
# The hold lasts this many times the time issuing QUEUED_OPS ops took in setup, and at least HOLD_MIN_S: the
# ops must all be queued before the device reaches them, also when the host is slower in one round.
HOLD_MARGIN = 4.0
HOLD_MIN_S = 1e-3
# A hold the events show under this share of what was asked ran at a faster clock than it was calibrated at
# (a cold GPU boosting after the backend counted its cycles): the next one asks for more cycles. Over HOLD_LONG
# times it ran slow (a throttled clock): fewer. Each correction is at most HOLD_STEP-fold, and a hold never asks
# for more than HOLD_MAX_S, so one odd reading (a preempted GPU) costs a round, not the case.
HOLD_SHORT, HOLD_LONG = 0.9, 2.0
HOLD_STEP = 100.0
HOLD_MAX_S = 1.0
#: why a queued round gives no t2 (the reading names it with the count of such rounds)
HELD_SHORT_WHY = (
    "the hold kernel ended before the ops were all issued (the GPU's clock ran faster than when the hold was "
    "calibrated, or the host was slower than in setup)"
)


class Hold:
    """The queued variant's prelude: a hold of `seconds`, verified each round by events around it, and its
    cycle count re-scaled when a hold ran short or long (the backend calibrated its clock once per process)."""

    def __init__(self, backend: Backend, device: str, seconds: float):
        self._backend, self._device, self.seconds = backend, device, seconds
        self.scale = 1.0  # cycles asked of the backend / cycles its calibration gives for `seconds`
        self._last: Any = None  # the events around the previous hold (read once its round synced)

    def __call__(self) -> None:
        if self._last is not None:
            self._correct(self._last.elapsed_s())
        timer = self._backend.timer(self._device)
        if timer is not None:
            timer.start()
        self._backend.hold(self._device, min(max(HOLD_MAX_S, self.seconds), self.seconds * self.scale))
        if timer is not None:
            timer.stop()
        self._last = timer

    def _correct(self, held_s: float) -> None:
        ratio = held_s / self.seconds
        if HOLD_SHORT <= ratio <= HOLD_LONG:
            return
        self.scale *= min(HOLD_STEP, max(1 / HOLD_STEP, 1 / max(ratio, 1e-9)))


_WHY = (
    "the device cannot be held busy here (no events or no hold kernel: JAX on a GPU, which also lets at most "
    "32 executions be in flight, so the backlog after issue is capped)"
)
#: what an asynchronous device without a held queue cannot give (t3 needs t2)
_UNTIMED = {"t2_s": _WHY, "t3_s": "needs t2", "model_error": "needs t2"}


def _issue_time(run: Any, barrier: Any) -> float:
    """Host time to issue `run`'s ops once (after a barrier, and once more to warm up)."""
    run()
    barrier()
    start = time.perf_counter()
    run()
    issued = time.perf_counter() - start
    barrier()
    return issued


class SyncAsync(Workload):
    name = "sync_async"
    summary = "y = x + 1, n_ops times: wait after every op (sync) vs once at the end (async)"
    params = (
        Param("n_ops", INT, 10000, "ops per sample", quick=1000, minimum=1, maximum=100_000_000),
        Param("shape", SHAPE, [1, 2], "shape of x"),
        DTYPE,
    )
    variants = (SYNC, ASYNC, QUEUED)
    held_variants = (QUEUED,)
    instrumentation = (QUEUED,)  # its time is mostly the hold kernel: a model input, not a speed of the code
    metrics = (
        Metric("speedup", "x", f"sync done time / async done time: {paired_medians.PAIRED_HELP}"),
        Metric("t1_s", "s", "frontend time to issue one op"),
        Metric(
            "t2_s",
            "s",
            "backend time to run one op (events around ops queued on a held device, or the backlog after issue / N)",
            needs_async=True,
        ),
        Metric("t3_s", "s", "time to wait for and return one result", signed=True),
        Metric(
            "model_error", "%", "textbook model's predicted async time vs measured, relative (t2 from the held queue)", needs_async=True
        ),
        Metric("t2_missed", "", "queued rounds whose hold ended before their ops were all issued (no t2 from them)"),
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

        variants = {SYNC: run_sync, ASYNC: run_async}
        barrier = lambda: backend.barrier(device)  # noqa: E731 - the case's sync
        if not backend.is_asynchronous(device):  # t2 is dropped by the runner: it ran inside t1
            return Prepared(variants=variants, sync=barrier)
        if backend.timer(device) is None:  # no events: t2 from the backlog on a CPU; on a GPU (JAX) none at all
            return Prepared(variants=variants, sync=barrier, unmeasurable=_UNTIMED if device.startswith("cuda") else {})
        queued = queued_ops(n_ops)

        def run_queued() -> Any:
            for _ in range(queued):
                y = x + 1
            return y

        hold_s = max(HOLD_MIN_S, HOLD_MARGIN * _issue_time(run_queued, barrier))
        held = backend.hold(device, hold_s)  # once here: whether the framework has a hold kernel at all
        barrier()
        if not held:
            return Prepared(variants=variants, sync=barrier, unmeasurable=_UNTIMED)

        hold = Hold(backend, device, hold_s)  # the queued variant's ops wait behind this on the device
        return Prepared(variants={**variants, QUEUED: run_queued}, sync=barrier, preludes={QUEUED: hold})

    def round_metrics(self, params: Mapping[str, Any], clocks: Mapping[str, Clocks]) -> dict[str, float | None]:
        sync, asynchronous = clocks[SYNC], clocks[ASYNC]
        return {
            "speedup": sync.done_s / asynchronous.done_s if asynchronous.done_s > 0 else None,
            **fit_model(params["n_ops"], sync, asynchronous, clocks.get(QUEUED)),
        }

    def run_metrics(self, params: Mapping[str, Any], variants: Mapping[str, VariantResult]) -> dict[str, float | None]:
        """The queued rounds that gave no t2 (HELD_SHORT_WHY), counted: a row must say it lost them."""
        queued = variants.get(QUEUED)
        if queued is None:
            return {}
        samples = queued.samples
        rounds = [
            Clocks(issue_s=samples.issue_s[i], done_s=samples.done_s[i], device_s=samples.device_s[i] if samples.device_s else None)
            for i in range(len(samples.done_s))
        ]
        return {"t2_missed": float(sum(not held_long_enough(c) for c in rounds))}

    def _missed(self, result: Result) -> str:
        """What the row lost to holds that ended early: '' when none did."""
        missed = result.metrics.get("t2_missed")
        queued = result.variants.get(QUEUED)
        if not missed or queued is None:
            return ""
        rounds = len(queued.samples.done_s)
        return f"{int(missed)} of {rounds} queued rounds gave no t2 because {HELD_SHORT_WHY}"

    def reading(self, result: Result) -> str:
        if result.metrics.get("speedup") is None:
            return ""
        said = self._with_missed(result, self._reading(result))
        # the medians beside the speedup may lie on its other side: said why, in one clause (results.paired_medians)
        apart = paired_medians.apart(result, {"speedup": (SYNC, ASYNC)})
        return f"{said}; {apart}" if apart and said else said

    def _with_missed(self, result: Result, said: str) -> str:
        missed = self._missed(result)
        if not missed or not said:
            return said
        if result.metrics.get("t2_s") is None:
            return f"{said}: {missed}"
        return f"{said} ({missed})"

    def _reading(self, result: Result) -> str:
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
        if result.metrics.get("t2_s") is None:
            return (
                f"{self._speedup_clause(where, speedup)}; the frontend issues an op in {t1}; "
                "the backend's time per op could not be measured here"
            )
        t2 = self.figure(result, "t2_s")
        if t1_bounds is None or t2_bounds is None:  # measured, but too few rounds to compare the two
            per_op = "runs it in" if QUEUED in result.variants else "is left a backlog of"
            return (
                f"{self._speedup_clause(where, speedup)}; the frontend issues an op in {t1}, the backend {per_op} {t2} "
                f"per op (too few rounds for intervals to say which one limits); a wait costs {t3}"
            )
        if QUEUED not in result.variants:  # t2 is the backlog after issue
            if where == 1 and t2_bounds[1] < t1_bounds[0] * KEPT_UP:
                return (
                    f"async is {speedup} faster, but not from overlap: the backend kept up with the frontend (a backlog of "
                    f"{t2} per op against {t1} to issue one, so the ops ran about as they were issued); "
                    f"the saving is the waits themselves, {t3} each"
                )
            return (
                f"{self._speedup_clause(where, speedup)}; the frontend issues an op in {t1}, "
                f"a backlog of {t2} per op is left to run, a wait costs {t3}"
            )
        if t2_bounds[1] < t1_bounds[0]:
            who = f"the frontend is the bottleneck: issuing an op takes {t1}, the device runs it in {t2} and idles between launches"
        elif t2_bounds[0] > t1_bounds[1]:
            who = f"the backend is the bottleneck: it runs an op in {t2} while the frontend issues one in {t1}, so ops queue up"
        else:
            who = f"the frontend issues an op in {t1}, the backend runs it in {t2}"
        return f"{self._speedup_clause(where, speedup)}; {who}; a wait costs {t3}"

    @staticmethod
    def _speedup_clause(where: int | None, speedup: str) -> str:
        if where == 1:
            return f"async is {speedup} faster"
        if where == -1:
            return f"async is slower than sync ({speedup}): waiting after every op cost nothing here, the loop did"
        return f"no difference shown between async and sync ({speedup})"
