"""A threshold check on the slack, judged at its own level (issue 52): the delay a check injects, and the paired
difference it is judged from.

`slack_s[host] >= 1ms` asks one question: does the step stay as fast when the host takes 1 ms more per step? So the
perturbation rounds inject exactly that level d on that side (measure.perturbation, beside the sweep's levels), and
each round pairs its sample at d with its own unperturbed one: per round, the slowdown T(d) − T(0), less the share
of the delay that always shows (d / steps per sample: the first host spin runs before the device has any of the
sample's work, the last device delay after its last step, as verdicts.bound.fit takes off). No fit, no model: the
step either absorbed the delay or it did not.

    slack_s[side] OP X          the side delayed by X per step call
    slack_share[side] OP P%     the side delayed by P of the step (the probe's step, Bound.scale_s)
    ceiling[host] OP c          the device delayed by (1 − 1/c) of the step: ceiling ≤ c ⇔ device slack ≤ step·(1 − 1/c)

The slack is at least d where a delay of d slows the step by at most SLOWDOWN_TOLERANCE of d (the median over
rounds, with its order-statistic interval at the check's level: results.stats). The delay that ran is not always d
(a JAX CPU delay is an op calibrated to a length, a spin preempted runs long): each check is judged by the delay as
run, d_run (Paired.injected_s), through the hinge T(x) = a + b·max(0, x − s) with a cost past the knee b in [0, 1]
(`margins`): the slowdown at d_run says of the one at d that

    over-run (d_run > d)    slowdown(d) = max(0, slowdown(d_run) − b·(d_run − d)), anywhere from slowdown(d_run)
                            (b = 0) down to slowdown(d_run) − (d_run − d) (b = 1)
    under-run (d_run < d)   slowdown(d) ≤ slowdown(d_run) + (d − d_run); no more is known where it was 0

so the side has the slack (slowdown(d) ≤ 10% of d) where the interval lies wholly at or below 10% of d less what the
delay ran short (`has_s`), and lacks it where the interval lies wholly above 10% of d plus what it ran over
(`lacks_s`). `>=` passes on the first and fails on the second, `<=` the other way round; INCONCLUSIVE between them.
So an over-run never lets a `<=` pass that a delay of d would not have (a slowdown under 156 µs of delay does not
show a slack under 94 µs), nor an under-run a `>=` (no slowdown under 60 µs does not show a slack of 94 µs); the
further the delay ran from d, the wider the band between them, where the check is INCONCLUSIVE. One level cannot
tell `>` from `>=`: they are judged alike. Plain Python over the stored observations: a results file's bound is
re-judged the same way (`show`, the gate); a check stored before checks were judged by the delay as run (no
`delay_as_run_s`) is judged again by its rule then, against 10% of the delay as run alone (`legacy_margins`).
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass
from typing import Sequence

from asyncbench.results.bound import CEILING as CEILING  # the quantities' names are the results' (a file's checks are read with them)
from asyncbench.results.bound import SLACK_S as SLACK_S
from asyncbench.results.bound import SLACK_SHARE as SLACK_SHARE
from asyncbench.results.bound import Bound, Injection, Side, same_level
from asyncbench.results.model import Expectation

#: a side has a slack of d where a delay of d slowed the step by at most this share of d (beyond the share that
#: always shows): a hinge's knee is not sharp on a real machine (the step slows a little before the slack is used
#: up: caches, a core shared with the device's threads), and a slowdown of a tenth of the delay is within what
#: "absorbed it" means for a gate; past the slack the step slows by the cost past it, ≈ 1 − 1/steps of the delay
#: (≥ 0.5 with two steps a sample), five times this and more, so a side without the slack is told apart.
SLOWDOWN_TOLERANCE = 0.10


def injection_of(expectation: Expectation) -> Injection | None:
    """The delay a check is judged at (None: not a threshold check on the slack, e.g. `bound == device`)."""
    if expectation.at is None or expectation.quantity not in (SLACK_S, SLACK_SHARE, CEILING):
        return None
    if expectation.quantity == SLACK_S:
        return Injection(Side(expectation.at), level_s=expectation.threshold, variant=expectation.variant)
    if expectation.quantity == SLACK_SHARE:
        return Injection(Side(expectation.at), share=expectation.threshold, variant=expectation.variant)
    # the ceiling of cutting host work is the device's slack: step / (step − s) ≤ c ⇔ s ≤ step·(1 − 1/c)
    return Injection(Side.DEVICE, share=1 - 1 / expectation.threshold, variant=expectation.variant)


def injections(expectations: Sequence[Expectation]) -> tuple[Injection, ...]:
    """The levels a case's threshold checks on the slack are judged at, each once: what its perturbation rounds
    inject beside the sweep's (engine.measuring's CaseOptions.bound_levels)."""
    return tuple(dict.fromkeys(found for e in expectations if (found := injection_of(e)) is not None))


@dataclass(frozen=True)
class Paired:
    """The samples at a check's level, each paired with its round's unperturbed one."""

    #: the delay asked for per step call (s)
    level_s: float
    #: per paired round, the step's slowdown at the level (s per step) less the share that always shows
    slowdowns_s: tuple[float, ...]
    #: the delay's measured length per step call (the median of the level's samples; s)
    injected_s: float


def level_s(injection: Injection, bound: Bound) -> float | None:
    """The delay an injection asked for in this bound's rounds (None: a share of a step whose scale was not stored)."""
    if injection.level_s is not None:
        return injection.level_s
    return injection.seconds(bound.scale_s) if bound.scale_s is not None else None


def paired(bound: Bound, side: Side, level: float) -> Paired | None:
    """The rounds' paired slowdowns at `level` on `side` (None: no sample at that level)."""
    at_level: dict[int, list[tuple[float, float]]] = {}
    plain: dict[int, list[float]] = {}
    for o in bound.observations:
        if o.side is None:
            plain.setdefault(o.round, []).append(o.step_s)
        elif o.side == side and same_level(o.level_s, level):
            at_level.setdefault(o.round, []).append((o.step_s, o.injected_s))
    if not at_level:
        return None
    serial = 1.0 / max(bound.steps_per_call, 1)
    slowdowns = tuple(
        statistics.fmean(step for step, _ in samples)
        - statistics.fmean(plain[number])
        - serial * statistics.fmean(injected for _, injected in samples)
        for number, samples in sorted(at_level.items())
        if number in plain
    )
    injected = statistics.median(injected for samples in at_level.values() for _, injected in samples)
    return Paired(level, slowdowns, injected)


@dataclass(frozen=True)
class Margins:
    """What a check's slowdown interval is held to, by the delay as run (module docstring)."""

    #: the interval wholly at or below it: the side has a slack of the level (10% of it, less what the delay ran short)
    has_s: float
    #: the interval wholly above it: the side lacks that slack (10% of the level, plus what the delay ran over)
    lacks_s: float


def margins(asked_s: float, run_s: float) -> Margins:
    """The margins a slowdown under a delay that ran `run_s` is held to, for a slack of `asked_s` (module docstring)."""
    tolerance_s = SLOWDOWN_TOLERANCE * asked_s
    off_s = run_s - asked_s
    return Margins(tolerance_s + min(0.0, off_s), tolerance_s + max(0.0, off_s))


def legacy_margins(run_s: float) -> Margins:
    """The rule a check stored before checks were judged by the delay as run was judged by: 10% of that delay, both
    ways (its file's verdict is held to it on reading, not to today's rule)."""
    return Margins(SLOWDOWN_TOLERANCE * run_s, SLOWDOWN_TOLERANCE * run_s)
