"""A side's slack held at the first level that already slowed the step: a jump the fit's hinge does not model.

The fit (verdicts.bound) reads a side's slack as the knee of T(d) = a_r + b·max(0, d − s), with an intercept per
round. A step that slows by a step-up at every delay d > 0 (on a CPU whose device shares the host's cores, the
delay itself takes a core from the device's threads) has no such knee at the start: the intercept absorbs the jump
and the knee lands where the slope steepens. A trial's table then said the host could take 1.38 ms more per step
before the step slowed, while the threshold checks on the same rounds said a delay of 774 µs had slowed it by
164 µs, and every level below 1.38 ms had slowed it.

So a slack is held to the paired slowdowns the same observations give, the figure the threshold checks judge by
(verdicts.bound_levels.paired: per round, the step at the level less the round's unperturbed one, less the share of
the delay that always shows): where a level whose injected length lies below the fitted slack slowed the step by
more than JUMP_SHARE of the step (and by more than the checks' own tolerance of that delay) over its whole interval,
the slack cannot lie past that level, and the fit holds it there (`first_jump`; the note says so, `held_said`).
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass

from asyncbench.results import stats, units
from asyncbench.results.bound import Bound, Side
from asyncbench.verdicts import bound_levels

#: the slowdown (a share of the step) a level's whole interval must lie above for the step to have slowed there: a
#: slack is measured to 3% of the step (verdicts.bound's grid is a sixth of it, and the reading never names a bound
#: where the sides differ by ≤ 3%), so a smaller step-up is within what the table's slack claims; the trial's jump
#: was 164 µs of a 1.9 ms step (9%), at least three times this
JUMP_SHARE = 0.03


@dataclass(frozen=True)
class Jump:
    """The first level on a side, below its fitted slack, whose paired slowdown shows the step slowed there."""

    side: Side
    #: the level's injected length per step call (the median of its samples' measured lengths; s)
    injected_s: float
    #: the median paired slowdown there, beyond the share of the delay that always shows (s per step), and its
    #: order-statistic interval at the fit's confidence (widened for rounds that drifted together)
    slowdown_s: float
    slowdown_ci_s: tuple[float, float]
    #: the level it was held above: the slowdown's interval lies wholly above it (s)
    threshold_s: float


def threshold_s(bound: Bound, injected_s: float) -> float:
    """What a level's slowdown must lie wholly above to show the step slowed there: JUMP_SHARE of the step, and at
    least the threshold checks' tolerance of the delay (bound_levels.SLOWDOWN_TOLERANCE), so that a held slack never
    contradicts a `slack_s >= d` check that passes at that very level."""
    return max(JUMP_SHARE * bound.step_s, bound_levels.SLOWDOWN_TOLERANCE * injected_s)


def first_jump(bound: Bound, side: Side, below_s: float, confidence: float) -> Jump | None:
    """The level of least injected length below `below_s` (the side's fitted slack, s) whose paired slowdown's
    interval at `confidence` lies wholly above `threshold_s` (None: no such level; the slack stands as fitted)."""
    found: list[Jump] = []
    for level in sorted({o.level_s for o in bound.observations if o.side == side}):
        at = bound_levels.paired(bound, side, level)
        if at is None or not at.slowdowns_s or at.injected_s >= below_s:
            continue
        interval = stats.median_ci(at.slowdowns_s, confidence)
        least = threshold_s(bound, at.injected_s)
        if interval is not None and interval[0] > least:
            found.append(Jump(side, at.injected_s, statistics.median(at.slowdowns_s), interval, least))
    return min(found, key=lambda jump: jump.injected_s) if found else None


def held_said(jump: Jump, knee_s: float, confidence: float, steps_per_call: int, shares_cores: bool) -> str:
    """The bound's note where a side's slack was held: "the host's slack held at 774 µs: a delay of 774 µs already
    slowed the step by 164 µs [120–210] (95% interval) beyond the 1/3 of it that always shows, more than 57.0 µs, a
    jump the fit's hinge does not model (on a CPU whose device shares the host's cores, the delay itself takes a
    core); its slope steepens at 1.38 ms (`knee_s`, the fit's knee): the cost past is the slope past that"."""
    length = units.seconds(jump.injected_s)
    shown = "the whole of it" if steps_per_call <= 1 else f"the 1/{steps_per_call} of it"
    slowed = units.with_bounds(jump.slowdown_s, jump.slowdown_ci_s, "s")
    least = f"more than {units.seconds(jump.threshold_s)}"
    why = " (on a CPU whose device shares the host's cores, the delay itself takes a core)" if shares_cores else ""
    return (
        f"the {jump.side}'s slack held at {length}: a delay of {length} already slowed the step by {slowed} "
        f"({units.exact_confidence(confidence)} interval) beyond {shown} that always shows, {least}, "
        f"a jump the fit's hinge does not model{why}; its slope steepens at {units.seconds(knee_s)}: the cost past is the slope past that"
    )
