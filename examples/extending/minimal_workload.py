"""A minimal workload: `y = a * x + y`, n times, with a wait after each op or one at the end.

Register it with one line in `asyncbench/workloads/__init__.py` (`Axpy()` in the tuple `BUILT_IN` is built from), add an
entry to `asyncbench/suites/default.yaml` if it belongs in the default suite, or name it without registering:
`asyncbench run -w examples/extending/minimal_workload.py:Axpy`.
"""

from __future__ import annotations

from typing import Any, Mapping

from asyncbench import INT, Metric, Param, Prepared, Workload
from asyncbench.results import stats
from asyncbench.results.model import Clocks, Result


class Axpy(Workload):
    name = "axpy"
    summary = "y = a * x + y, n times: a wait after each op (each) vs one at the end (once)"
    params = (
        Param("n", INT, 100, "ops per sample", quick=20, minimum=1, maximum=1_000_000),
        Param("size", INT, 4096, "elements of x and y", minimum=1, maximum=1 << 28),
    )
    variants = ("each", "once")
    metrics = (
        Metric("speedup", "x", "each done time / once done time"),
        Metric("op_s", "s", "time per op when waiting once"),
    )

    def setup(self, backend: Any, device: str, params: Mapping[str, Any]) -> Prepared:
        x = backend.random((params["size"],), "float32", device)()
        y = backend.ones((params["size"],), "float32", device)
        n, wait = params["n"], backend.wait

        def each() -> Any:
            out = y
            for _ in range(n):
                out = 2.0 * x + out
                wait(out)
            return out

        def once() -> Any:
            out = y
            for _ in range(n):
                out = 2.0 * x + out
            return out

        return Prepared(variants={"each": each, "once": once}, sync=lambda: backend.barrier(device))

    def round_metrics(self, params: Mapping[str, Any], clocks: Mapping[str, Clocks]) -> dict[str, float | None]:
        """From one round's clocks; the harness reports their median over the rounds with its 95% interval."""
        once = clocks["once"].done_s
        return {"speedup": clocks["each"].done_s / once if once > 0 else None, "op_s": once / params["n"]}

    def reading(self, result: Result) -> str:
        """State a difference only when the interval excludes none."""
        if stats.side(result.bounds.get("speedup"), 1.0) == 1:
            return f"waiting once is {self.figure(result, 'speedup')} faster"
        return f"no difference shown ({self.figure(result, 'speedup')})"
