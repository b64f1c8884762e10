"""conversion: implicit blockers — `.item()`, `.numpy()` and `print` need the value, so they wait.

A loop of `n_iter` matrix products converts the result every iteration
(`item`: one element to a Python float; `numpy`: the whole result to a host
array; `print`: a few elements printed to a null sink, never the terminal)
or only once at the end (`none`). Every variant ends with the same final
`.item()`, so the differences are the per-iteration conversions alone.
"""

from __future__ import annotations

import os
from typing import Any, Mapping

from asyncbench import units
from asyncbench.backends.base import Backend
from asyncbench.model import VariantResult
from asyncbench.workloads.base import INT, STR, Metric, Param, Prepared, Workload

NONE, ITEM, NUMPY, PRINT = "none", "item", "numpy", "print"
CONVERSIONS = (ITEM, NUMPY, PRINT)

# A slowdown under this is within run-to-run noise.
SLOWDOWN_NOTICEABLE = 1.1
# Elements printed per iteration: enough to need the value, too few to measure formatting.
PRINTED_ELEMENTS = 4


class Conversion(Workload):
    name = "conversion"
    summary = "matrix products with a host conversion (.item, .numpy, print) every iteration vs once at the end"
    params = (
        Param("size", INT, 1000, "matrix side", quick=256, minimum=1, maximum=65536),
        Param("n_iter", INT, 10, "products per sample", quick=5, minimum=1, maximum=1_000_000),
        # no bfloat16: NumPy has no such type, so .numpy() could not convert it
        Param("dtype", STR, "float32", "element type", choices=("float16", "float32", "float64")),
    )
    variants = (NONE, ITEM, NUMPY, PRINT)
    metrics = (
        *(Metric(f"slowdown_{c}", "x", f"done time with {c} every iteration / none") for c in CONVERSIONS),
        *(Metric(f"{c}_cost_s", "s", f"extra time per {c} conversion") for c in CONVERSIONS),
    )

    def setup(self, backend: Backend, device: str, params: Mapping[str, Any]) -> Prepared:
        x = backend.random((params["size"], params["size"]), params["dtype"], device)()
        n_iter = params["n_iter"]
        to_host = backend.to_host
        sink = open(os.devnull, "w")  # noqa: SIM115 - closed by Prepared.close

        def run_none() -> Any:
            for _ in range(n_iter):
                y = x @ x
            return y[0, 0].item()

        def run_item() -> Any:
            for _ in range(n_iter):
                y = x @ x
                y[0, 0].item()
            return y[0, 0].item()

        def run_numpy() -> Any:
            for _ in range(n_iter):
                y = x @ x
                to_host(y)
            return y[0, 0].item()

        def run_print() -> Any:
            for _ in range(n_iter):
                y = x @ x
                print(y[0, :PRINTED_ELEMENTS], file=sink)
            return y[0, 0].item()

        return Prepared(
            variants={NONE: run_none, ITEM: run_item, NUMPY: run_numpy, PRINT: run_print},
            sync=lambda: backend.barrier(device),
            close=sink.close,
        )

    def compute_metrics(
        self, params: Mapping[str, Any], variants: Mapping[str, VariantResult]
    ) -> dict[str, float | None]:
        base = variants[NONE].done_s.median
        metrics: dict[str, float | None] = {}
        for c in CONVERSIONS:
            metrics[f"slowdown_{c}"] = variants[c].done_s.median / base if base > 0 else None
        for c in CONVERSIONS:
            metrics[f"{c}_cost_s"] = (variants[c].done_s.median - base) / params["n_iter"]
        return metrics

    def reading(self, metrics: Mapping[str, float | None], device: str) -> str:
        slowdowns = {c: metrics.get(f"slowdown_{c}") for c in CONVERSIONS}
        if any(v is None for v in slowdowns.values()):
            return ""
        worst = max(slowdowns, key=lambda c: slowdowns[c] or 0)
        if not device.startswith("cuda"):
            return (
                f"nothing was in flight (synchronous backend): each conversion costs only itself — "
                f"item {units.seconds(metrics['item_cost_s'])}, numpy {units.seconds(metrics['numpy_cost_s'])}, "
                f"print {units.seconds(metrics['print_cost_s'])}"
            )
        if (slowdowns[worst] or 0) >= SLOWDOWN_NOTICEABLE:
            return (
                f"converting every iteration stalls the pipeline: {worst} is {units.ratio(slowdowns[worst])} slower, "
                f"{units.seconds(metrics[f'{worst}_cost_s'])} per conversion"
            )
        return "conversions cost next to nothing here: the loop was not running far ahead"
