"""matmul: the async illusion — ten random products, issue time versus done time.

The chapter's warm-up: make a random 1000×1000 matrix and multiply it by
itself, 10 times. On a GPU the loop returns long before the products finish,
so a timer without a sync reports the launch time (the textbook: 1.5 ms
unsynced versus 8.3 ms synced). On a CPU torch and NumPy are synchronous and
the illusion is ≈ 1 (the chapter's exercise 1).
"""

from __future__ import annotations

from typing import Any, Mapping

from asyncbench.backends.base import Backend
from asyncbench.results import ahead, matmul_figures, units
from asyncbench.results.model import Clocks, Result
from asyncbench.workloads.base import BOOL, DTYPE, INT, SIDE, Metric, Param, Prepared, Workload

VARIANT = matmul_figures.VARIANT  # a reader recomputes its clocks, illusion and gflops from its samples (results.matmul_figures)

# An illusion whose whole 95% interval is above this, beyond the harness's own sync, is running ahead; wholly below
# it, the loop returns when the work is done (results.ahead: the one rule for readings and "What ran ahead").
ILLUSION_NOTICEABLE = ahead.ILLUSION_NOTICEABLE


class Matmul(Workload):
    name = "matmul"
    summary = "n_iter products of a random size×size matrix with itself: issue vs done time"
    params = (
        SIDE,
        Param("n_iter", INT, 10, "products per sample", quick=3, minimum=1, maximum=1_000_000),
        DTYPE,
        Param("include_rng", BOOL, True, "make a new random matrix before each product, as the chapter does"),
    )
    variants = (VARIANT,)
    metrics = (
        Metric("issue_s", "s", "median time until the loop returns, without a sync"),
        Metric("done_s", "s", "median time until the device finished"),
        Metric("illusion", "x", "done_s / issue_s: how much a timer without a sync underestimates"),
        Metric("gflops", "GFLOP/s", "2·size³·n_iter / done_s (random generation not counted as flops)"),
    )

    def setup(self, backend: Backend, device: str, params: Mapping[str, Any]) -> Prepared:
        size, n_iter = params["size"], params["n_iter"]
        make_random = backend.random((size, size), params["dtype"], device)

        if params["include_rng"]:

            def run() -> Any:
                for _ in range(n_iter):
                    a = make_random()
                    b = a @ a
                return b

        else:
            fixed = make_random()

            def run() -> Any:
                for _ in range(n_iter):
                    b = fixed @ fixed
                return b

        return Prepared(variants={VARIANT: run}, sync=lambda: backend.barrier(device))

    def round_metrics(self, params: Mapping[str, Any], clocks: Mapping[str, Clocks]) -> dict[str, float | None]:
        measured = clocks[VARIANT]
        flops = matmul_figures.flops(params["size"], params["n_iter"])
        return {
            "issue_s": measured.issue_s,
            "done_s": measured.done_s,
            "illusion": measured.done_s / measured.issue_s if measured.issue_s > 0 else None,
            "gflops": flops / measured.done_s / matmul_figures.GIGA if measured.done_s > 0 else None,
        }

    def reading(self, result: Result) -> str:
        if result.metrics.get("illusion") is None:
            return ""
        gflops = self.figure(result, "gflops")
        where, illusion, basis = ahead.for_reading(result, VARIANT)  # the two figures in one notation
        beyond = f"; {basis}" if basis and not basis.startswith(illusion) else ""  # said when the harness's cost changes it
        if where is None:
            judged = "whether its rounds run ahead beyond the harness's own sync is not judged"
            return f"illusion {illusion}: {judged}, {basis or 'no interval'}; {gflops}"
        if where > 0:
            return (
                f"the loop returns after {units.seconds(result.metrics['issue_s'])} but the work ends after "
                f"{units.seconds(result.metrics['done_s'])}: a timer without a sync is {illusion} too optimistic; {gflops}"
            )
        if where < 0:
            return f"issue ≈ done (illusion {illusion}{beyond}): nothing runs ahead; {gflops}"
        return (
            f"running ahead not shown either way: the illusion {illusion}{f' ({basis})' if beyond else ''} straddles "
            f"{units.ratio(ILLUSION_NOTICEABLE)}; more rounds (max_time_s) narrow it; {gflops}"
        )
