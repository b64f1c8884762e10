"""barrier: wait for the whole device versus wait for the one result you need.

MXNet's `waitall` versus `wait_to_read`; JAX's device barrier versus
`block_until_ready`; in PyTorch and CuPy a device synchronize versus a wait
for the stream the result is on. The difference shows only with other work
in flight, so each sample issues the result's product, then
`background_ops` unrelated products (on another stream where there are
streams), then waits. The metric is the time until the frontend gets control
back (the issue clock, which includes the wait). On a synchronous backend
the background work runs while it is issued, so both waits cost the same:
nothing is in flight.
"""

from __future__ import annotations

from typing import Any, Mapping

from asyncbench.backends.base import Backend
from asyncbench.results import paired_medians, stats, units
from asyncbench.results.model import Clocks, Result
from asyncbench.workloads.base import DTYPE, INT, SIDE, Metric, Param, Prepared, Workload

WAITALL, WAIT_ONE = "waitall", "wait_one"

# A saving whose whole interval is above this is the barrier effect; a smaller one
# that still excludes 0 is an order effect within a round, not work skipped.
SAVED_NOTICEABLE = 0.1


class Barrier(Workload):
    name = "barrier"
    summary = "wait for everything vs for one result, with background work in flight on another stream"
    params = (
        SIDE,
        Param("background_ops", INT, 20, "unrelated products issued after the result", quick=5, minimum=0, maximum=100_000),
        DTYPE,
    )
    variants = (WAITALL, WAIT_ONE)
    metrics = (
        Metric("waitall_s", "s", "time until control returns when waiting for the whole device"),
        Metric("wait_one_s", "s", "time until control returns when waiting for the one result"),
        Metric("saved_fraction", "%", "1 − wait_one_s / waitall_s of each round (paired), its median over the rounds"),
    )

    def setup(self, backend: Backend, device: str, params: Mapping[str, Any]) -> Prepared:
        shape = (params["size"], params["size"])
        make_random = backend.random(shape, params["dtype"], device)
        x, background_input = make_random(), make_random()
        background = backend.new_stream(device)
        n_background = params["background_ops"]
        backend.barrier(device)

        def issue_background() -> None:
            backend.fork(device, [background])
            with backend.on_stream(background):
                for _ in range(n_background):
                    background_input @ background_input

        def run_waitall() -> Any:
            y = x @ x
            issue_background()
            backend.barrier(device)
            return y

        def run_wait_one() -> Any:
            y = x @ x
            issue_background()
            backend.wait(y)  # the stream y is on (CUDA), wait_to_read (MXNet), block_until_ready (JAX)
            backend.join(device, [background])  # device-side only: the host does not wait
            return y

        return Prepared(variants={WAITALL: run_waitall, WAIT_ONE: run_wait_one}, sync=lambda: backend.barrier(device))

    def round_metrics(self, params: Mapping[str, Any], clocks: Mapping[str, Clocks]) -> dict[str, float | None]:
        waitall, wait_one = clocks[WAITALL].issue_s, clocks[WAIT_ONE].issue_s
        return {
            "waitall_s": waitall,
            "wait_one_s": wait_one,
            "saved_fraction": 1 - wait_one / waitall if waitall > 0 else None,
        }

    def reading(self, result: Result) -> str:
        if result.metrics.get("saved_fraction") is None:
            return ""
        saved = self.figure(result, "saved_fraction")
        waitall, wait_one = units.seconds(result.metrics["waitall_s"]), units.seconds(result.metrics["wait_one_s"])
        bounds = result.bounds.get("saved_fraction")
        if result.asynchronous is False:
            if stats.side(bounds, 0.0) in (None, 0):
                shown = "includes 0" if bounds is not None else "has no interval yet"
                return (
                    f"no difference shown between the waits: saved {saved} {shown} "
                    "(a synchronous backend: nothing else is in flight to skip)"
                )
            return (
                f"the waits differ ({saved} saved) although a synchronous backend has nothing in flight to skip: "
                "an effect of their order within a round, not of the barrier"
            )
        if stats.side(bounds, SAVED_NOTICEABLE) == 1:
            said = (
                f"waiting for the one result returns after {wait_one} instead of {waitall}: each round's own share of "
                f"the wait saved, its median {saved}"
            )
            return f"{said}; {apart}" if (apart := self._apart(result)) else said
        if stats.side(bounds, 0.0) == 1:
            return f"wait_one returned sooner, but by less than {SAVED_NOTICEABLE:.0%} ({saved})"
        if stats.side(bounds, 0.0) == -1:
            return f"waiting for one result cost more than waiting for everything ({saved} saved)"
        return f"no difference shown between the waits: saved {saved} includes 0"

    def _apart(self, result: Result) -> str:
        """Where 1 − the two medians' ratio lies outside saved_fraction's interval (each round's own saving, paired),
        one line saying so and why (results.paired_medians); '' elsewhere."""
        waitall, wait_one = result.metrics.get("waitall_s"), result.metrics.get("wait_one_s")
        own = 1 - wait_one / waitall if waitall and wait_one is not None and waitall > 0 else None
        clause = paired_medians.outside(result, "saved_fraction", own, "1 − wait_one / waitall medians give", "%")
        return paired_medians.why_apart([clause] if clause else [], "each round's own saving")
