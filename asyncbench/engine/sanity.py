"""What cannot be: checks on every result, whose violations become the result's `warnings`.

A measurement that breaks one of these is wrong somewhere — events recorded
on the wrong stream, a sync that did not wait, a verification that never ran,
a variable that made the GPU synchronous — and must not be averaged in
silently. Each violation is one line in `Result.warnings`, shown under its
row and kept in the JSON; an empty list means every check held. A CPU
row's thread pool is checked here too (engine.thread_pools): free while
other processes shared the cores, its time is theirs as much as the code's.
"""

from __future__ import annotations

import math
from typing import Mapping

from asyncbench.engine import thread_pools
from asyncbench.results import ahead, units
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
# A user's step is read per step (step_s_kK = a sample's done time / its steps), and every sample carries the
# harness's own cost — its call and clock reads, and its sync, which a hand loop timing the same steps would not pay
# (JAX's queues a small product and wakes its worker: 0.1-0.4 ms a sample after inline work; NumPy's 20 steps of a
# 0.65 µs op read 1.8-4.5% slow by the call and clock reads alone). Past this share of a sample's done time that
# cost moves the per-step figure beyond the 2% within which the harness matches each backend's own reference
# (benchmarks/fidelity_backends.py, docs/measured.md): the row says so and how many steps a sample needs.
HARNESS_SHARE = 0.02
# The most decimals a share above HARNESS_SHARE is given so that it never reads as HARNESS_SHARE itself ('2%' was
# printed for 2.76 µs of 113 µs, 2.4%): past this the share is said as it rounds.
SHARE_DECIMALS_MAX = 4


def _count(condition: list[bool]) -> str:
    return f"{sum(condition)} of {len(condition)} samples"


def warnings_of(
    result: Result, workload: Workload, synchronizing: Mapping[str, str], pools: thread_pools.Pools | None = None
) -> tuple[str, ...]:
    """Every sanity check `result` fails, as lines (empty when all hold, and for rows that measured nothing).

    `synchronizing`: the variables set in this run that make GPU work synchronous (facts.synchronizing_variables).
    `pools`: the run's CPU thread pools (thread_pools.Pools.of_run; None: not checked).
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
    if pools is not None:
        found += _pool_warnings(result, pools) + _neighbour_warning(result, pools)
    found += _harness_share(result, workload)
    return tuple(found)


#: what the warning adds of a `--bound` reading beside a sample shorter than the harness's probed sync: a delay before a
#: step keeps the thread busy, which changes what the sync costs (JAX's worker wakes slower after an idle spell), so
#: the slacks may be the harness's (a trial: a step of no work read DEVICE-BOUND in 1 of 3 runs)
BOUND_TOO = " (nor, with --bound, what bounds them: a delay before a step changes the sync's own cost)"


def _harness_share(result: Result, workload: Workload) -> list[str]:
    """A step-form row whose samples are so short that the harness's own cost per sample (a no-op sample's done
    time, measured with nothing queued: its call and clock reads, results.model.HarnessCost.issue_s, and its sync,
    the upper end the row's ran-ahead reading subtracts) is more than HARNESS_SHARE of a sample: its per-step times
    carry that cost. The same of `--bound-verify`'s captured step, whose samples are shorter still (a trial: jit's
    41.5 µs a step at 5 steps a sample, 16.6 µs by hand, said under no warning where the plain row had one)."""
    steps = result.params.get("steps")
    sync_s = ahead.harness_s(result.harness)  # the figure the row's ran-ahead reading subtracts and names
    if sync_s is None or result.harness is None or not isinstance(steps, int) or steps < 1 or workload.metric("step_s_k0") is None:
        return []
    cost_s = sync_s + max(result.harness.issue_s, 0.0)
    done = [variant.done_s.median for variant in result.variants.values() if variant.done_s.median > 0]
    found = _cost_share(cost_s, min(done), steps, "this row's", bool(result.bound)) if done else []
    captured = [b.verified.step_s * steps for b in result.bound.values() if b.verified is not None and b.verified.step_s]
    if captured:
        found += [f"--bound-verify's captured step: {line}" for line in _cost_share(cost_s, min(captured), steps, "its", False)]
    return found


def _cost_share(cost_s: float, sample_s: float, steps: int, whose: str, bound: bool) -> list[str]:
    """What the harness's cost per sample (`cost_s`) does to per-step times from samples of `sample_s` (`steps` steps
    each): nothing to say within HARNESS_SHARE; past it, how much each carries and the steps that bring it under."""
    if cost_s <= HARNESS_SHARE * sample_s:
        return []
    if cost_s >= sample_s:
        # the probe bounds the cost from above (its costliest condition: the sync after an idle spell); inside
        # back-to-back samples it is less, and never more than a whole sample: a share over 100% and a per-step part
        # above the per-step time (a trial: '276%', 'carries 4.58 µs' beside 1.66 µs a step) are no figures of this row
        return [
            f"the harness's own cost per sample, probed with nothing queued, reaches {units.seconds(cost_s)} (its sync "
            f"after an idle spell), more than {whose} whole sample ({units.seconds(sample_s)}): its part in these "
            f"samples cannot be told from the steps' work{BOUND_TOO if bound else ''}, and each per-step time may "
            f"carry up to {units.seconds(sample_s / steps)} of it (all of it); more steps a sample, or more work a step, "
            "separate them"
        ]
    share = cost_s / sample_s
    # the cost is the sample's, not the step's: a sample of n steps takes cost + n × (its work a step), and the cost
    # is under HARNESS_SHARE of it from n ≥ cost × (1 − HARNESS_SHARE) / (HARNESS_SHARE × work) (it was said as
    # steps × share / HARNESS_SHARE, as if the cost grew with the steps: steps=67 where 89 were needed)
    work_s = (sample_s - cost_s) / steps  # above 0: a cost of the whole sample or more is said above
    remedy = f"steps={math.ceil(cost_s * (1 - HARNESS_SHARE) / (HARNESS_SHARE * work_s))} or more brings it under {HARNESS_SHARE:.0%}"
    return [
        f"the harness's own cost per sample ({units.seconds(cost_s)} with nothing queued: its sync, call and clock "
        f"reads) is {_above(share, HARNESS_SHARE)} of a sample's done time: each per-step time carries up to "
        f"{units.seconds(cost_s / steps)} of it; {remedy}"
    ]


def _above(share: float, threshold: float) -> str:
    """A share above `threshold` as a percentage that reads above it: one decimal under 10% ('2.4%'), whole points
    from there ('45%'), more decimals where those would round to the threshold ('2.004%', never '2.0%')."""
    decimals = 1 if share < 0.1 else 0
    while round(share * 100, decimals) <= threshold * 100 and decimals < SHARE_DECIMALS_MAX:
        decimals += 1
    return f"{share * 100:.{decimals}f}%"


def _pool_warnings(result: Result, pools: thread_pools.Pools) -> list[str]:
    """A CPU row's thread pool: free while other processes shared the cores (its time then follows their load), or of
    another size than those of the backends it is compared with in its experiment."""
    if not result.device.startswith("cpu") or result.backend not in thread_pools.POOL_VARIABLES:
        return []
    found = []
    reference = result.reference
    if pools.free(result.backend) and reference is not None:
        how = thread_pools.shared(reference.cpu_pressure, reference.others_cpu)
        if how is not None:
            found.append(thread_pools.shared_warning(result.backend, how, pools))
    _, different = thread_pools.compared_line(result.backend, result.experiment, pools)
    return found + ([different] if different else [])


def _neighbour_warning(result: Result, pools: thread_pools.Pools) -> list[str]:
    """Any row that sampled beside a neighbour, whose pool warning (a free pool on shared cores) did not already say
    so: a pinned CPU row, a GPU row (its host issue shares the cores too). Its intervals hold for this run's load
    only, and a comparison with another run gives no verdict (verdicts.machine): a run beside a CPU hog at 96-100%
    pressure printed a tight bound reading that missed a planted truth, with no word of the neighbour."""
    reference = result.reference
    if reference is None:
        return []
    how = thread_pools.shared(reference.cpu_pressure, reference.others_cpu)
    if how is None or (result.device.startswith("cpu") and pools.free(result.backend)):
        return []
    return [
        f"a neighbour shared the cores while this row sampled ({how}): its times are this machine's under that load, "
        "its intervals hold for this run only, and `compare` or `--baseline` gives no verdict against it; run it "
        "again on a quiet machine"
    ]
