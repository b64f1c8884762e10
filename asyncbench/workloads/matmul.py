"""matmul: the async illusion — ten random products, issue time versus done time.

The chapter's warm-up: make a random 1000×1000 matrix and multiply it by
itself, 10 times. On a GPU the loop returns long before the products finish,
so a timer without a sync reports the launch time (the textbook: 1.5 ms
unsynced versus 8.3 ms synced). On a CPU torch and NumPy are synchronous and
the illusion is ≈ 1 (the chapter's exercise 1).
"""

from __future__ import annotations

from typing import Any, Mapping

from asyncbench import units
from asyncbench.backends.base import Backend
from asyncbench.model import VariantResult
from asyncbench.workloads.base import BOOL, DTYPE, INT, Metric, Param, Prepared, Workload

VARIANT = "matmul"

# Below this, done/issue is within timer noise: call the backend synchronous.
ILLUSION_NOTICEABLE = 1.2


class Matmul(Workload):
    name = "matmul"
    summary = "n_iter products of a random size×size matrix with itself: issue vs done time"
    params = (
        Param("size", INT, 1000, "matrix side", quick=256, minimum=1, maximum=65536),
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

    def compute_metrics(
        self, params: Mapping[str, Any], variants: Mapping[str, VariantResult]
    ) -> dict[str, float | None]:
        measured = variants[VARIANT]
        issue_s, done_s = measured.issue_s.median, measured.done_s.median
        flops = 2 * params["size"] ** 3 * params["n_iter"]
        return {
            "issue_s": issue_s,
            "done_s": done_s,
            "illusion": done_s / issue_s if issue_s > 0 else None,
            "gflops": flops / done_s / 1e9 if done_s > 0 else None,
        }

    def reading(self, metrics: Mapping[str, float | None], device: str) -> str:
        illusion, gflops = metrics.get("illusion"), metrics.get("gflops")
        if illusion is None or gflops is None:
            return ""
        if illusion >= ILLUSION_NOTICEABLE:
            return (
                f"the loop returns after {units.seconds(metrics['issue_s'])} but the work ends after "
                f"{units.seconds(metrics['done_s'])}: a timer without a sync is {units.ratio(illusion)} too optimistic; "
                f"{gflops:.3g} GFLOP/s"
            )
        return f"synchronous: issue ≈ done (illusion {units.ratio(illusion)}), nothing runs ahead; {gflops:.3g} GFLOP/s"
