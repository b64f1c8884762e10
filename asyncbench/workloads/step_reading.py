"""The step form's declarations and reading, without a step: what reads a step's results back.

A step's result is read by the step form's own rule (`StepForm.reading`), from its stored figures alone: the
illusion of the variant that never waits (judged beyond the harness's own sync, results.ahead) and each wait's
slowdown against it. None of that needs the user's step function, so a results file's step rows get their reading
rebuilt (workloads.stored_readings) without importing the user's module; `StepWorkload` (workloads.step_form) is this
with a step to time.
"""

from __future__ import annotations

from typing import Any, Mapping

from asyncbench.backends.base import Backend
from asyncbench.results import ahead, paired_medians, stats, units
from asyncbench.results.model import Result
from asyncbench.results.step_figures import ILLUSION, SLOWDOWN_METRIC, STEP_METRIC, variant_name
from asyncbench.workloads.base import Metric, Prepared, Workload

# An illusion whose whole interval is above this, beyond the harness's own sync: a timer without a sync misses most
# of the step (results.ahead: the one rule for readings and "What ran ahead").
ILLUSION_NOTICEABLE = ahead.ILLUSION_NOTICEABLE


#: what a wait's cost is where the loop did not run ahead on an asynchronous backend: the harness's barrier with
#: nothing to drain, whose cost is its own (JAX's issues a computation: a wait every step of 20 inline `x + 1` read
#: 1.76× where `block_until_ready` of each result cost 0.96-1.19×), not what a `.item()` of a result would cost
NOTHING_QUEUED = (
    " — the harness's barrier itself, with nothing queued to drain (the loop did not run ahead), "
    "not what a wait on a result (`.item()`, `block_until_ready`) would cost"
)


class StepForm(Workload):
    """The step form's metrics and reading, with no step: `setup` refuses (there is nothing to time); a reader's
    instance reads a step's stored result (`stored_reading`) as the step that measured it would have."""

    name = "step form"
    variants = ("sync_every=K (one per sync_every value)",)
    metrics = (
        Metric("step_s_kK", "s", "done time per step with a wait every K steps"),
        Metric(
            "slowdown_kK",
            "x",
            f"done time with a wait every K steps / with none: {paired_medians.PAIRED_HELP} (needs 0 in sync_every)",
        ),
        Metric(ILLUSION, "x", "done / issue time without waits: how much a timer without a sync under-reports"),
    )

    def setup(self, backend: Backend, device: str, params: Mapping[str, Any]) -> Prepared:
        raise TypeError("the step form without a step reads results only: it has nothing to set up")

    def reading(self, result: Result) -> str:
        parts = []
        ahead_where = None  # whether the loop ran ahead of its work (1), did not (-1), or is not shown
        if ILLUSION in result.metrics:
            where, illusion, basis = ahead.for_reading(result, variant_name(0))  # the two figures in one notation
            ahead_where = where
            beyond = f"; {basis}" if basis and not basis.startswith(illusion) else ""  # said when the harness's cost changes it
            if where == 1:
                parts.append(
                    f"the loop returns long before the work is done (done is {illusion} the issue time a timer without a sync would report)"
                )
            elif where == -1:
                parts.append(f"the loop returns about when the work is done (illusion {illusion}{beyond}): nothing much runs ahead")
            elif where == 0:
                parts.append(
                    f"not shown whether the loop runs ahead of the work (illusion {illusion}{beyond}: "
                    f"its interval does not settle it against {ILLUSION_NOTICEABLE}×)"
                )
            else:  # no interval: not judged, and why
                parts.append(
                    f"not shown whether the loop runs ahead of the work (illusion {illusion}; its rounds beyond the harness's "
                    f"own sync: not judged, {basis})"
                )
        slowdowns = [m for m in result.metrics if m.startswith(SLOWDOWN_METRIC) and m.removeprefix(SLOWDOWN_METRIC).isdigit()]
        slowdowns.sort(key=lambda m: int(m.removeprefix(SLOWDOWN_METRIC)))
        for name in slowdowns:
            every = name.removeprefix(SLOWDOWN_METRIC)
            where = stats.side(result.bounds.get(name), 1.0)
            figure = self.figure(result, name)
            not_the_waits = _beyond_the_waits(result, name, int(every), figure) if where == 1 else None
            if not_the_waits is not None:
                parts.append(not_the_waits)
            elif where == 1 and ahead_where == -1 and result.asynchronous:
                parts.append(f"a wait every {every} step(s) costs {figure}{NOTHING_QUEUED}")
            elif where == 1:
                parts.append(f"a wait every {every} step(s) costs {figure}")
            elif where == -1:  # wholly below 1: said, as the rule says; a wait cannot speed the step itself
                parts.append(
                    f"a wait every {every} step(s) made the step faster: {figure} (a wait cannot speed the step: "
                    "a busy machine slows and speeds the moments, not the code)"
                )
            else:
                parts.append(f"no cost shown for a wait every {every} step(s) ({figure})")
        pairs = {name: (variant_name(int(name.removeprefix(SLOWDOWN_METRIC))), variant_name(0)) for name in slowdowns}
        apart = paired_medians.apart(result, pairs)
        return "; ".join([*parts, apart] if apart else parts)


#: significant digits of the most a synchronous wait can cost (1.002×): a ratio's usual two decimals would show 1.00×
CEILING_DIGITS = 4


def _beyond_the_waits(result: Result, name: str, every: int, figure: str) -> str | None:
    """On a synchronous backend (its wait has nothing queued to wait for), the reading of a slowdown shown above 1
    whose interval reaches past what its waits can cost: the harness's own sync with nothing queued (sync_high_s)
    once every `every` steps, against the step without waits (step_s_k0). Wholly above that ceiling, the slowdown is
    not the waits' cost but the variants' order or the machine's drift between them; reaching past it (its point or
    high end above, its low end within: a loaded machine's rounds), at most the ceiling of it is theirs and how much
    is not shown, so neither credits the waits with the figure. None where the whole interval is within the ceiling
    (the figure can be the waits') or there is no ceiling (an asynchronous backend's wait drains a queue, which may
    cost far more than an empty sync)."""
    if result.asynchronous is not False:
        return None
    sync_s, step_s, bounds = ahead.harness_s(result.harness), result.metrics.get(f"{STEP_METRIC}0"), result.bounds.get(name)
    if sync_s is None or step_s is None or step_s <= 0 or bounds is None:  # no ceiling to hold it to: read as before
        return None
    ceiling = 1.0 + sync_s / every / step_s
    if bounds[1] <= ceiling:
        return None
    most = units.number(ceiling, CEILING_DIGITS)
    if bounds[0] <= ceiling:
        return (
            f"the variant with a wait every {every} step(s) read {figure}; its waits can cost at most {most}× "
            f"({units.seconds(sync_s)} each, nothing queued): how much of it is theirs is not shown"
        )
    return (
        f"the variant with a wait every {every} step(s) read {figure}, more than its waits can cost (at most "
        f"{most}×: {units.seconds(sync_s)} each, nothing queued): not the waits' cost "
        "— the variants' order or the machine's drift between them"
    )
