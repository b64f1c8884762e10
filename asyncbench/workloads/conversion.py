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

from asyncbench.backends.base import Backend
from asyncbench.results import stats
from asyncbench.results.model import Clocks, Result
from asyncbench.workloads.base import INT, SIDE, STR, Metric, Param, Prepared, Workload

NONE, ITEM, NUMPY, PRINT = "none", "item", "numpy", "print"
CONVERSIONS = (ITEM, NUMPY, PRINT)

# Elements printed per iteration: enough to need the value, too few to measure formatting.
PRINTED_ELEMENTS = 4


class Conversion(Workload):
    name = "conversion"
    summary = "matrix products with a host conversion (.item, .numpy, print) every iteration vs once at the end"
    params = (
        SIDE,
        Param("n_iter", INT, 10, "products per sample", quick=5, minimum=1, maximum=1_000_000),
        # no bfloat16: NumPy has no such type, so .numpy() could not convert it
        Param("dtype", STR, "float32", "element type", choices=("float16", "float32", "float64")),
    )
    variants = (NONE, ITEM, NUMPY, PRINT)
    metrics = (
        *(Metric(f"slowdown_{c}", "x", f"done time with {c} every iteration / none") for c in CONVERSIONS),
        *(Metric(f"{c}_cost_s", "s", f"extra time per {c} conversion", signed=True) for c in CONVERSIONS),
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

    def round_metrics(self, params: Mapping[str, Any], clocks: Mapping[str, Clocks]) -> dict[str, float | None]:
        base = clocks[NONE].done_s
        metrics: dict[str, float | None] = {}
        for c in CONVERSIONS:
            metrics[f"slowdown_{c}"] = clocks[c].done_s / base if base > 0 else None
        for c in CONVERSIONS:
            metrics[f"{c}_cost_s"] = (clocks[c].done_s - base) / params["n_iter"]
        return metrics

    def reading(self, result: Result) -> str:
        if any(result.metrics.get(f"slowdown_{c}") is None for c in CONVERSIONS):
            return ""
        slower = [c for c in CONVERSIONS if stats.side(result.bounds.get(f"slowdown_{c}"), 1.0) == 1]
        unclear = [f"{c} {self.figure(result, f'slowdown_{c}')}" for c in CONVERSIONS if c not in slower]
        costs = "; ".join(
            f"{c} {self.figure(result, f'slowdown_{c}')} slower, {self.figure(result, f'{c}_cost_s')} per conversion" for c in slower
        )
        rest = f"; no slowdown shown for {', '.join(unclear)}" if unclear and slower else ""
        if not slower:
            idle = " — a synchronous backend has nothing in flight to wait for" if result.asynchronous is False else ""
            return f"no conversion cost shown: every slowdown includes 1 ({', '.join(unclear)}){idle}"
        if result.asynchronous is False:
            return f"nothing was in flight (synchronous backend), so a conversion costs only itself: {costs}{rest}"
        return f"converting every iteration stalls the pipeline: {costs}{rest}"
