"""barrier: wait for the whole device versus wait for the one result you need.

MXNet's `waitall` versus `wait_to_read`; in PyTorch and CuPy a device
synchronize versus an event synchronize. The difference shows only with other
work in flight, so each sample issues the result's product, then
`background_ops` unrelated products on another stream, then waits. The
metric is the time until the frontend gets control back (the issue clock,
which includes the wait). On a CPU the background work runs while it is
issued, so both waits cost the same: nothing is in flight.
"""

from __future__ import annotations

from typing import Any, Mapping

from asyncbench import units
from asyncbench.backends.base import Backend
from asyncbench.model import VariantResult
from asyncbench.workloads.base import DTYPE, INT, Metric, Param, Prepared, Workload

WAITALL, WAIT_ONE = "waitall", "wait_one"

# Below this the two waits are indistinguishable on a noisy machine.
SAVED_NOTICEABLE = 0.1


class Barrier(Workload):
    name = "barrier"
    summary = "wait for everything vs for one result, with background work in flight on another stream"
    params = (
        Param("size", INT, 1000, "matrix side", quick=256, minimum=1, maximum=65536),
        Param("background_ops", INT, 20, "unrelated products issued after the result", quick=5, minimum=0, maximum=100_000),
        DTYPE,
    )
    variants = (WAITALL, WAIT_ONE)
    metrics = (
        Metric("waitall_s", "s", "time until control returns when waiting for the whole device"),
        Metric("wait_one_s", "s", "time until control returns when waiting for the one result"),
        Metric("saved_fraction", "%", "1 − wait_one_s / waitall_s"),
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
            ready = backend.record_event(device)
            issue_background()
            ready.synchronize()
            backend.join(device, [background])  # device-side only: the host does not wait
            return y

        return Prepared(variants={WAITALL: run_waitall, WAIT_ONE: run_wait_one}, sync=lambda: backend.barrier(device))

    def compute_metrics(
        self, params: Mapping[str, Any], variants: Mapping[str, VariantResult]
    ) -> dict[str, float | None]:
        waitall, wait_one = variants[WAITALL].issue_s.median, variants[WAIT_ONE].issue_s.median
        return {
            "waitall_s": waitall,
            "wait_one_s": wait_one,
            "saved_fraction": 1 - wait_one / waitall if waitall > 0 else None,
        }

    def reading(self, metrics: Mapping[str, float | None], device: str) -> str:
        saved = metrics.get("saved_fraction")
        if saved is None:
            return ""
        waitall, wait_one = units.seconds(metrics["waitall_s"]), units.seconds(metrics["wait_one_s"])
        if saved >= SAVED_NOTICEABLE:
            return f"waiting for the one result returns after {wait_one} instead of {waitall}: {saved:.0%} of the wait saved"
        return f"both waits cost the same ({wait_one} vs {waitall}): no other work was in flight to skip"
