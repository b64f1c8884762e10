"""What cannot be: checks on every result, whose violations become the result's `warnings`.

A measurement that breaks one of these is wrong somewhere — events recorded
on the wrong stream, a sync that did not wait, a verification that never ran,
a variable that made the GPU synchronous — and must not be averaged in
silently. Each violation is one line in `Result.warnings`, shown under its
row and kept in the JSON; an empty list means every check held.
"""

from __future__ import annotations

from typing import Mapping

from asyncbench.results.model import OK, Result
from asyncbench.workloads.base import Workload

# The start event is recorded just before the host clock starts and the stop event just after the variant
# returns, so device time may exceed done time by that gap (microseconds) and by event resolution (0.5 µs):
# beyond 5% and 50 µs it is not that gap but events that do not bracket the work.
DEVICE_OVER_DONE_FRACTION = 0.05
DEVICE_OVER_DONE_S = 50e-6
# The other way round: the events bracket the host's whole issue period, so device time falls short of done
# time only by the sync's latency (tens of µs) — unless work ran on a stream the current one never joined,
# which the final sync waited for but the stop event did not. Under half the done time and 1 ms short, in most
# samples (one preempted sync is no pattern), is that symptom.
DEVICE_UNDER_DONE_FRACTION = 0.5
DEVICE_UNDER_DONE_S = 1e-3


def _count(condition: list[bool]) -> str:
    return f"{sum(condition)} of {len(condition)} samples"


def warnings_of(result: Result, workload: Workload, synchronizing: Mapping[str, str]) -> tuple[str, ...]:
    """Every sanity check `result` fails, as lines (empty when all hold, and for rows that measured nothing).

    `synchronizing`: the variables set in this run that make GPU work synchronous (facts.synchronizing_variables).
    """
    if result.status != OK:
        return ()
    found: list[str] = []
    for name, variant in result.variants.items():
        samples = variant.samples
        issue_over = [issue > done for issue, done in zip(samples.issue_s, samples.done_s, strict=False)]
        if any(issue_over):
            found.append(f"{name}: issue time exceeds done time in {_count(issue_over)}: the clocks were read out of order")
        if not samples.device_s:
            continue
        if not result.device.startswith("cuda"):
            found.append(f"{name}: device time on a CPU ({result.device}), which has no device events: a timer of the wrong device")
            continue
        pairs = zip(samples.device_s, samples.done_s, strict=False)
        device_over = [device > done * (1 + DEVICE_OVER_DONE_FRACTION) + DEVICE_OVER_DONE_S for device, done in pairs]
        if any(device_over):
            found.append(f"{name}: device time exceeds done time in {_count(device_over)}: events on the wrong stream?")
        if name in workload.held_variants:
            continue
        pairs = zip(samples.device_s, samples.done_s, strict=False)
        device_under = [device < done * DEVICE_UNDER_DONE_FRACTION and done - device > DEVICE_UNDER_DONE_S for device, done in pairs]
        if sum(device_under) * 2 > len(device_under):
            found.append(
                f"{name}: device time is under half the done time in {_count(device_under)}: work on a side stream the "
                "current stream never joined? (the events missed it; the final sync did not)"
            )
    if workload.metric("verified") is not None and result.metrics.get("verified") != 1.0:
        found.append("the workload verifies its results, but no verification passed on this row")
    if synchronizing and result.device.startswith("cuda"):
        names = ", ".join(f"{k}={v}" for k, v in synchronizing.items())
        found.append(f"{names} is set: GPU work was made synchronous, so issue and done times are not those of asynchronous execution")
    return tuple(found)
