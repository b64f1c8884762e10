"""The short form of a workload: one function that issues one step of the user's own work.

    @asyncbench.step
    def train_step(backend, device, params):
        x = backend.random((2048, 2048), "float32", device)()
        return lambda: x @ x

The function sets up (outside any timing) and returns a callable that issues
one step without waiting. It becomes a workload whose variants run `steps`
steps with a device-wide wait every k of them, one per `sync_every` value —
0 (only the harness's sync at the end), every few steps, and every step: the
barrier experiment on the user's code. Its metrics: the time per step for
each k, each k's slowdown against never waiting, and the illusion of the
unsynchronized variant (done / issue: how much a timer without a sync
under-reports the step).
"""

from __future__ import annotations

from typing import Any, Callable, Mapping, Sequence

from asyncbench.backends.base import Backend
from asyncbench.results import stats
from asyncbench.results.model import Clocks, Result
from asyncbench.workloads.base import INT, INTS, Metric, Param, Prepared, Workload

#: the waits the short form compares by default: never (only at the end), every 4th step, every step
DEFAULT_SYNC_EVERY = (0, 4, 1)
DEFAULT_STEPS = 20
# An illusion whose whole interval is above this: a timer without a sync misses most of the step.
ILLUSION_NOTICEABLE = 1.2

StepFunction = Callable[[Backend, str, Mapping[str, Any]], Callable[[], Any]]


def variant_name(every: int) -> str:
    return f"sync_every={every}"


class StepWorkload(Workload):
    """A workload made from a step function (see the module docstring)."""

    def __init__(
        self,
        function: StepFunction,
        *,
        name: str | None = None,
        params: Sequence[Param] = (),
        sync_every: Sequence[int] = DEFAULT_SYNC_EVERY,
        steps: int = DEFAULT_STEPS,
        summary: str | None = None,
    ):
        self.function = function
        self.name = name or function.__name__
        doc = (function.__doc__ or "").strip().splitlines()
        self.summary = summary or (doc[0] if doc else f"your step {self.name}, with a wait every k steps")
        self.params = (
            Param("steps", INT, steps, "steps per sample", quick=max(1, min(steps, 5)), minimum=1, maximum=10_000_000),
            Param(
                "sync_every",
                INTS,
                list(sync_every),
                "wait for the device every k steps; 0 = only at the end",
                minimum=0,
                maximum=10_000_000,
            ),
            *params,
        )
        self.variants = ("sync_every=K (one per sync_every value)",)
        self.metrics = (
            Metric("step_s_kK", "s", "done time per step with a wait every K steps"),
            Metric("slowdown_kK", "x", "done time with a wait every K steps / with none (needs 0 in sync_every)"),
            Metric("illusion", "x", "done / issue time without waits: how much a timer without a sync under-reports"),
        )

    def setup(self, backend: Backend, device: str, params: Mapping[str, Any]) -> Prepared:
        run_step = self.function(backend, device, params)
        if not callable(run_step):
            raise TypeError(f"{self.name} must return the callable that issues one step, not {type(run_step).__name__}")
        steps, barrier = params["steps"], backend.barrier
        backend.barrier(device)

        def variant(every: int) -> Callable[[], Any]:
            def run() -> Any:
                result = None
                for index in range(1, steps + 1):
                    result = run_step()
                    if every and index % every == 0:
                        barrier(device)
                return result

            return run

        return Prepared(variants={variant_name(k): variant(k) for k in params["sync_every"]}, sync=lambda: barrier(device))

    def round_metrics(self, params: Mapping[str, Any], clocks: Mapping[str, Clocks]) -> dict[str, float | None]:
        metrics: dict[str, float | None] = {}
        never = clocks.get(variant_name(0))
        for every in params["sync_every"]:
            done = clocks[variant_name(every)].done_s
            metrics[f"step_s_k{every}"] = done / params["steps"]
            if never is not None and every != 0:
                metrics[f"slowdown_k{every}"] = done / never.done_s if never.done_s > 0 else None
        if never is not None:
            metrics["illusion"] = never.done_s / never.issue_s if never.issue_s > 0 else None
        return metrics

    def reading(self, result: Result) -> str:
        parts = []
        if "illusion" in result.metrics:
            illusion = self.figure(result, "illusion")
            where = stats.side(result.bounds.get("illusion"), ILLUSION_NOTICEABLE)
            if where == 1:
                parts.append(
                    f"the loop returns long before the work is done (done is {illusion} the issue time a timer without a sync would report)"
                )
            elif where == -1:
                parts.append(f"the loop returns about when the work is done (illusion {illusion}): nothing much runs ahead")
            else:  # no interval, or one across the line: the data cannot say which
                parts.append(
                    f"not shown whether the loop runs ahead of the work (illusion {illusion}: "
                    f"its interval does not settle it against {ILLUSION_NOTICEABLE}×)"
                )
        for name in sorted((m for m in result.metrics if m.startswith("slowdown_k")), key=lambda m: int(m.removeprefix("slowdown_k"))):
            every = name.removeprefix("slowdown_k")
            where = stats.side(result.bounds.get(name), 1.0)
            figure = self.figure(result, name)
            parts.append(
                f"a wait every {every} step(s) costs {figure}"
                if where == 1
                else f"no cost shown for a wait every {every} step(s) ({figure})"
            )
        return "; ".join(parts)


def step(
    function: StepFunction | None = None,
    *,
    name: str | None = None,
    params: Sequence[Param] = (),
    sync_every: Sequence[int] = DEFAULT_SYNC_EVERY,
    steps: int = DEFAULT_STEPS,
    summary: str | None = None,
) -> Any:
    """Turn a step function into a workload: `@step` or `@step(sync_every=(0, 1), params=(Param(...),))`."""

    def wrap(f: StepFunction) -> StepWorkload:
        return StepWorkload(f, name=name, params=params, sync_every=sync_every, steps=steps, summary=summary)

    return wrap(function) if function is not None else wrap
