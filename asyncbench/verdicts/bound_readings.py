"""What a fitted bound says beyond its kind, read from its figures: whether a slack reaches the top of the delays
injected, what the cost past it says, whether the ceiling is unbounded or not measured, how wide its slack
intervals are. The fit (verdicts.bound) makes a bound; these read one, wherever it came from (a run's fit, a file),
for the report's table and lines, a checked capture's words and --bound's stopping rule."""

from __future__ import annotations

import math

from asyncbench.results import bound_rule, units
from asyncbench.results.bound import Bound, BoundKind, Side, SideBound

#: the cost past a slack where that side alone sets the pace (one bottleneck: each second of delay costs the step one):
#: cost_reading's words rest on its interval lying wholly above or below it, so a printed end never rounds onto it
ONE_BOTTLENECK = 1.0
#: what a slack of [0, 0] beside a cost wholly below NO_KNEE_BELOW says (cost_reading): the step slowed from the first delay by a
#: share of it, with no knee (a concave response, 0.9 of the delay up to 0.3 step then 0.45, fits [0, 0] and 0.62)
NO_KNEE = (
    "no knee: the step slowed from the first delay on, by part of each delay (a slowdown that flattens as the delay "
    "grows, which a hinge, flat then rising, fits only with its knee at 0); the slack of 0 says no delay was free, not "
    "that this side alone sets the pace (that would cost the whole delay)"
)
#: the cost past a slack of [0, 0] reads NO_KNEE only where its interval lies wholly below this: a side whose every delay
#: cost the step within DECISION_MARGIN of the whole delay sets the pace as far as a reading can tell (a planted
#: one-bottleneck host fit 0.99 [0.985–0.998] in 1 of 20 seeded reruns, which "no knee" would have denied its reading);
#: between it and 1 nothing is said
NO_KNEE_BELOW = ONE_BOTTLENECK - bound_rule.DECISION_MARGIN
#: what is said of the cost past a slack held at the step (`held_at_step`) in place of a figure: the fit's knee lay
#: past the step, so its slope is of delays beyond that knee (0 where the step never slowed, leaving only the share
#: every delay shows: a trial printed 0.05 [0.05–0.34], 1/steps, and called it "partial overlap"), not past the step
NOT_PAST = "not measured: no level past the knee (the slack fit past the step and is held at it)"
#: how close to the step a stored slack lies where the fit held it there: the slack is the step itself, both stored
#: to the nanosecond (results.bound_held's refit takes the same share as held)
HELD_SHARE = 1 - 1e-6
#: a slack within this share of the largest delay injected reaches the top of the levels: it is at least that much,
#: and nothing was seen past it (no cost past it to speak of)
TOP_OF_LEVELS = 0.98


def widest_slack_share(bound: Bound) -> float:
    """The widest half-width of the bound's slack intervals, as a share of its step (inf where a side has none, or
    there is no side): what --bound's rounds stop on (measure.perturbation.PRECISION_SHARE)."""
    if not bound.sides or bound.step_s <= 0:
        return math.inf
    widths = [(side.slack_ci_s[1] - side.slack_ci_s[0]) / 2 if side.slack_ci_s is not None else math.inf for side in bound.sides]
    return max(widths) / bound.step_s


def unbounded(bound: Bound) -> bool:
    """Whether the device's slack may reach the whole step, so that cutting host work has no ceiling measured: its
    estimate is the step (the fit stores no ceiling then, a floor of 0) or its interval's high end is (the ceiling's
    interval has no upper end). One rule for both: a trial drew '~0 [≤ 919 µs] (≤ 100%)' with a ceiling '≤ 1.00×
    [1.00×–no upper bound]' and '~0 [≤ 1.56 ms] (≤ 100%)' with '–' and a note, the same situation two ways."""
    if bound.side(Side.DEVICE) is None or bound.bound == BoundKind.SYNCHRONOUS or not bound.rounds:
        return False
    return bound.ceiling is None or (bound.ceiling_ci is not None and not math.isfinite(bound.ceiling_ci[1]))


#: what the line under the table says of a device that shares the host's cores (Bound.shares_cores: JAX or torch on a
#: CPU), in place of a ceiling: a device delay there takes a core the host needs too, so its slack says whether a core
#: was free, not how long the device's own work takes; cutting host work frees cores, and step / (step − slack) is no
#: upper bound (a ceiling of 1.00× [1.00–1.00] stood beside a step that ran 3.5-7× faster without its host work)
NO_SHARED_CEILING = (
    "no ceiling on a device that shares the host's cores: cutting host work frees cores for the device's work, "
    "which its slack does not measure"
)


def no_ceiling(bound: Bound) -> bool:
    """Whether the bound has no ceiling to show (the table's ceiling column reads '–'): none stored (no device side, a
    synchronous backend, a floor of 0), `unbounded`, a device slack of 0 without a knee (`floor_unmeasured`), or a
    device that shares the host's cores (`Bound.shares_cores`: NO_SHARED_CEILING; a file still stores the arithmetic
    ceiling, readers decide from the flag). What a checked capture says (verdicts.verified, report.bound) then claims
    no share of a ceiling and quotes none: the table beside it says none was measured."""
    return bound.ceiling is None or bound.shares_cores or unbounded(bound) or floor_unmeasured(bound)


def floor_unmeasured(bound: Bound) -> bool:
    """Whether the device's slack is 0 without a knee (`no_knee`), so that the floor, step − that slack, was not
    measured: the slack of 0 says no device delay was free, not that the device's work alone takes the whole step.
    The ceiling computed from it (step / step, 1.00× [1.00–1.00]: a file still stores it, the arithmetic
    results.bound_rule holds) is then no ceiling, and nothing is said of it (NO_FLOOR): a trial printed "cutting host
    work cannot make it faster" of a step that jit then ran 123× faster."""
    device = bound.side(Side.DEVICE)
    return device is not None and bound.bound != BoundKind.SYNCHRONOUS and no_knee(device, bound.step_s)


def reaches_top(side: SideBound) -> bool:
    """Whether the slack reaches the largest delay injected: it is then at least that, and no cost past it was seen."""
    return bool(side.levels_s) and side.slack_s >= TOP_OF_LEVELS * max(side.levels_s)


def at_least_top(side: SideBound) -> bool:
    """Whether the slack is at least the largest delay injected ('≥ x'): its 95% interval's low end reaches the top
    (TOP_OF_LEVELS of it), not its estimate alone. An estimate at the top whose interval reaches lower (to 0: a
    JAX step on a 2-core CPU, '≥ 5.53 ms' beside [0, 8.02 ms]) says no "at least" of anything above that low end.
    Without an interval, the estimate is all there is (the line says '±?' of nothing else)."""
    if not side.levels_s:
        return False
    low = side.slack_s if side.slack_ci_s is None else side.slack_ci_s[0]
    return low >= TOP_OF_LEVELS * max(side.levels_s)


def held_at_step(side: SideBound, step_s: float) -> bool:
    """Whether the side's slack was held at the step (verdicts.bound: a knee at or past the step, which a slack cannot
    exceed): its cost past is then not measured (NOT_PAST), whatever figure the fit stored beside it."""
    return step_s > 0 and side.slack_s >= HELD_SHARE * step_s


def cost_reading(side: SideBound, step_s: float) -> str | None:
    """What the cost past the slack says where its interval excludes 1 (one bottleneck): 'the delay hurts something
    else too' (wholly above), 'partial overlap' (wholly below); None otherwise, without an interval, or where nothing
    was seen past the slack. The guide promised both phrases where the interval is clear of 1, and a margin of 0.15
    kept them off 0.67 [0.42–0.94] and 1.13 [1.05–1.20].

    A slack of 0 throughout its interval ([0, 0]) with a cost wholly below NO_KNEE_BELOW is no hinge at all: the step slowed from
    the first delay, by a share of each, at every level. Every resample puts the knee at 0 where the slowdown
    flattens as the delay grows (concave, as a device delay on cores the host shares gave): a hinge is flat then
    rising, and any knee above 0 leaves the steepest part of the curve flat. Not because that side alone sets the
    pace past a slack of 0, which would cost the whole delay (1). It says so (NO_KNEE), not 'partial overlap'.

    A slack held at the step (`held_at_step`, of `step_s`: the bound's) has no cost past it measured: NOT_PAST, never
    a figure's words."""
    if held_at_step(side, step_s) and not reaches_top(side):
        return NOT_PAST
    if side.cost_past_ci is None or reaches_top(side):
        return None
    low, high = side.cost_past_ci
    if low > ONE_BOTTLENECK:
        return "the delay hurts something else too"
    if high < ONE_BOTTLENECK:
        if side.slack_ci_s is not None and side.slack_ci_s[1] <= 0:
            return NO_KNEE if high < NO_KNEE_BELOW else None
        return "partial overlap"
    return None


def no_knee(side: SideBound, step_s: float) -> bool:
    """Whether the side's slack is 0 with no knee (cost_reading's NO_KNEE: a slack of [0, 0] beside a cost past it
    wholly below NO_KNEE_BELOW): no delay on it was free, yet none cost the step the whole delay. Such a side is never named the
    bound (verdicts.bound's reading), and a device side of it measures no floor (`floor_unmeasured`)."""
    return cost_reading(side, step_s) == NO_KNEE


#: what the line under the table says where the device's slack is 0 without a knee (`floor_unmeasured`), in place of
#: a ceiling: no "cannot make it faster", which the slack of 0 was once read as
NO_FLOOR = (
    "what cutting host work could buy is not measured: the device's slack of 0 has no knee, so the floor (step − that slack) is not known"
)


def exceeds(difference: tuple[float, float]) -> str:
    """The interval of (device − host slack) / step in plain words, as the side with more slack exceeding the other:
    "the host's slack exceeds the device's by 55% to 85% of the step (paired, round by round)"; where it straddles 0,
    "device − host slack −2.1% to 3.4% of the step (paired, round by round)". Each end printed on its own side of the
    decision margin (`share_beside`)."""
    low, high = difference
    margin = bound_rule.DECISION_MARGIN
    paired = "of the step (paired, round by round)"
    if low > 0:
        return f"the device's slack exceeds the host's by {share_beside(low, margin)} to {share_beside(high, margin)} {paired}"
    if high < 0:
        return f"the host's slack exceeds the device's by {share_beside(-high, margin)} to {share_beside(-low, margin)} {paired}"
    return f"device − host slack {share_beside(low, margin)} to {share_beside(high, margin)} {paired}"


def knee_missing(side: Side, difference: tuple[float, float]) -> str:
    """Why a reading the difference of the slacks points to (`side` the bound) is not given: that side has no knee
    (`no_knee`), so its slack of 0 does not say it sets the pace."""
    return (
        f"{exceeds(difference)}, which would name the {side} the bound, but the {side}'s slack of 0 has no knee: no "
        "delay on it was free, yet none cost the step the whole delay, as one on a side that alone sets the pace would"
    )


#: the most decimals a share beside a threshold is given so that it prints on its own side of that threshold
_SIDE_DIGITS = 6


def share_beside(fraction: float, threshold: float) -> str:
    """A share of the step ('7.7%', '−2.6%') to the figures that keep it on its side of ±`threshold`: a slack of
    7.502% of the step is '7.502%' beside "within ±7.5%", never a '7.5%' that reads as on it."""
    digits = 2
    while digits < _SIDE_DIGITS:
        shown = float(units.number(fraction * 100, digits)) / 100
        if all((shown > edge) == (fraction > edge) and (shown < edge) == (fraction < edge) for edge in (threshold, -threshold)):
            break
        digits += 1
    return units.signed_percent(fraction, digits)


def undecided(difference: tuple[float, float], slacks: dict[Side, tuple[float, float] | None], step_s: float) -> str:
    """Why two measured sides read INCONCLUSIVE, from the figures the rule read (verdicts.bound's `_reading`):
    `difference`, the interval of (device − host slack) / step, lies neither wholly beyond ±DECISION_MARGIN (no side
    shown bound) nor, with both slacks' intervals within BALANCE_BAND of the step, within ±BALANCE_BAND (not shown
    balanced). Each branch names its own cause: a difference within the band beside a slack that may reach past it
    once read "−2.6% to 7.4% of the step: not beyond ±7.5% nor within it", of a difference that was within it."""
    low, high = difference
    margin, band = bound_rule.DECISION_MARGIN, bound_rule.BALANCE_BAND
    said = f"device − host slack {share_beside(low, band)} to {share_beside(high, band)} of the step"
    if low < -band or high > band:
        return (
            f"{said} reaches past ±{units.percent(band)} but does not lie wholly beyond ±{units.percent(margin)}: "
            "neither side shown bound nor the two shown balanced"
        )
    past = [
        f"the {side}'s slack has no interval"
        if ci is None
        else f"the {side}'s slack may reach {share_beside(ci[1] / step_s, band)} of it ({units.seconds(ci[1])})"
        for side, ci in slacks.items()
        if ci is None or ci[1] > band * step_s
    ]
    return (
        f"{said} lies within ±{units.percent(band)}, but {' and '.join(past)}, past {units.percent(band)}: "
        "neither side shown bound nor both slacks shown small"
    )
