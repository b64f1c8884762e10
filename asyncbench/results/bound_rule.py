"""The rule that reads what bounds a step, its thresholds, and a stored bound held to it (`run --bound`).

verdicts.bound reads a bound from the interval of the resampled difference (device − host slack) / step with these
thresholds; a results file stores the reading, each side's slack interval and the ceiling, but not that difference
(results.bound). A hand-edited reading or ceiling passes every shape check (results.bound_shape.check_bound), and `show`
would print it as measured: `check_derived` (results.records calls it after the shapes) holds the stored reading
and ceiling to the stored numbers, by arithmetic on them, no refit (a refit costs 34-59 ms a variant, a second on
a file of 20 variants whose whole load takes 16-52 ms; the check 0.02-0.03 ms a variant: docs/measured.md,
benchmarks/bound_load_cost.py).
"""

from __future__ import annotations

import math
from typing import Any, Mapping

from asyncbench.results import bound_held, units
from asyncbench.results.bound import BoundKind, Side, interval_of
from asyncbench.results.fields import At

#: under this many rounds a bootstrap over rounds has too few distinct resamples to mean anything (5 rounds give
#: 126): no interval, and no reading
MIN_ROUNDS = 5
#: how far apart (a share of the step) host and device must be shown to lie before one is named the bound: the
#: issue's goal is a verdict in every run where they differ by ≥ 15% of the step and never where they differ by
#: ≤ 3%; 7.5% lies between, so a 95% interval half as wide as the gap to either (4.5%) keeps both
DECISION_MARGIN = 0.075
#: within this share of the step, host and device take "about as long": the same as the margin, so that every
#: difference reads one way or the other once its interval is narrow enough (none falls between the two)
BALANCE_BAND = DECISION_MARGIN

SYNCHRONOUS_SIDES = "a synchronous step has no sides: the host is the device, and nothing is perturbed"
#: the note of a step whose sides both have slack: a side whose slack interval lies wholly above BALANCE_BAND of the
#: step had room (some delay on it was free), so it is never named the bound, however much more the other side has
#: (`has_room`: a trial printed HOST-BOUND beside a host slack of 54% [30–74%] of the step, against the guide's "the
#: host has no slack")
BOTH_SLACK = (
    "both sides have slack, so neither alone sets the pace: something else does (a wait in the step, or the two sides "
    "sharing cores; --syncs names the waits)"
)
#: the words the rule before `has_room` gave such a step beside a HOST- or DEVICE-BOUND reading (files keep them):
#: `reworded` puts BOTH_SLACK in their place
FORMER_BOTH_SLACK = "both sides have slack: something else sets part of the pace (a wait in the step, or the two sides sharing cores)"


#: how the note of a step with one side measured begins where that side's slack interval lies within BALANCE_BAND of
#: the step (`one_side`): "the host has no slack worth naming: ..."; files keep these words beside any interval
NO_SLACK_ONE_SIDE = "has no slack worth naming: it is the bound or balanced with the "


def one_side(side: Side | str, interval: tuple[float, float] | None, step_s: float) -> str:
    """What a step with only `side` measured (the other's delay not measured here) says where that side's slack does
    not lie wholly above DECISION_MARGIN of the step (verdicts.bound's reading: INCONCLUSIVE): "no slack worth
    naming" only where the interval's upper end lies within BALANCE_BAND of `step_s`; else the interval does not
    decide whether the side has slack (an MXNet host slack of [0, 20.8 ms] of a 20.8 ms step, shown "~0 [≤ 20.8 ms]
    (≤ 100%)", was said to have none), nor, where it has no interval, anything."""
    other = Side.DEVICE if str(side) == str(Side.HOST) else Side.HOST
    unmeasured = f"the {other}'s delay was not measured here"
    if interval is None:
        return f"the {side}'s slack has no interval: it does not decide whether the {side} has slack; {unmeasured}"
    if interval[1] <= BALANCE_BAND * step_s:
        return f"the {side} {NO_SLACK_ONE_SIDE}{other}, whose delay was not measured here"
    low, high = interval
    shares = f"{units.percent(low / step_s)} to {units.percent(high / step_s)}" if step_s > 0 else "with no step"
    return (
        f"the {side}'s slack {units.seconds(low)} to {units.seconds(high)} ({shares} of the step) reaches past "
        f"{units.percent(BALANCE_BAND)} but does not lie wholly beyond {units.percent(DECISION_MARGIN)}: its interval "
        f"does not decide whether the {side} has slack (the {other} or a wait setting the pace) or none (the {side} "
        f"the bound or balanced with the {other}); {unmeasured}"
    )


def one_side_reworded(note: str | None, intervals: Mapping[str, tuple[float, float] | None], step_s: float) -> str | None:
    """A stored note whose one-side part ("the host has no slack worth naming: ...", which the rule before `one_side`
    said beside any interval) is in `one_side`'s words from the stored interval (`intervals`: side -> interval, one
    side measured); any other note as it is."""
    if not note or len(intervals) != 1:
        return note
    [(side, interval)] = intervals.items()
    stale = f"the {side} {NO_SLACK_ONE_SIDE}"
    parts = [one_side(side, interval, step_s) if part.startswith(stale) else part for part in note.split("; ")]
    return "; ".join(dict.fromkeys(parts))


def has_room(interval: tuple[float, float] | None, step_s: float) -> bool:
    """Whether a side's slack interval lies wholly above BALANCE_BAND of the step (`step_s`): some delay on that side
    was free, so it does not set the pace, and the reading never names it the bound (verdicts.bound's reading, and
    `reread` of a reading stored before that rule)."""
    return interval is not None and interval[0] > BALANCE_BAND * step_s


def reread(kind: str, intervals: Mapping[str, tuple[float, float] | None], step_s: float) -> str:
    """`kind` as the rule reads it now from the stored slack intervals (`intervals`: side -> interval): a host- or
    device-bound reading whose named side has room (`has_room`) is inconclusive; any other as it is. Files written
    before the rule stored such readings: every reader shows them so (session.reading, results.bound_change)."""
    named = {str(BoundKind.HOST): str(Side.HOST), str(BoundKind.DEVICE): str(Side.DEVICE)}.get(kind)
    if named is not None and len(intervals) > 1 and has_room(intervals.get(named), step_s):
        return str(BoundKind.INCONCLUSIVE)
    return kind


def reworded(note: str | None, kind: str, was: str) -> str | None:
    """A stored note as the rule reads it now: FORMER_BOTH_SLACK in BOTH_SLACK's words, and BOTH_SLACK added where
    `reread` took a reading of `was` to `kind` (inconclusive)."""
    parts = [BOTH_SLACK if part == FORMER_BOTH_SLACK else part for part in (note.split("; ") if note else [])]
    if kind != was:
        parts.append(BOTH_SLACK)
    return "; ".join(dict.fromkeys(parts)) or None


def check_derived(raw: Mapping[str, Any], at: At) -> None:
    """InputError (file and key, one line) where a stored bound's slack lies outside its own interval or below 0, a
    synchronous bound has sides, its figures are not what its observations and pairs give (results.bound_held), or
    its reading or ceiling is not what its own slacks give (the shapes checked before by
    results.bound_shape.check_bound)."""
    observations = list(raw.get("observations") or ())
    for name, fit in (raw.get("sides") or {}).items():
        check_slack(float(fit["slack_s"]), interval_of(fit.get("slack_ci_s")), at / "sides" / name)
        _check_within_levels(fit, [o[3] for o in observations if o[1] == name], at / "sides" / name)
    if str(raw["bound"]) == str(BoundKind.SYNCHRONOUS) and raw.get("sides"):  # before its ceiling: the sides are what is wrong
        (at / "sides").fail(SYNCHRONOUS_SIDES)
    bound_held.check_figures(raw, at)  # its step, each side's slack within it and cost past it, verified's reached
    _check_ceiling(raw, at)
    _check_ceiling_ci(raw, at)
    _check_reading(raw, observations, at)


#: how far a stored time may lie from the one it was computed from: every time is stored to the nanosecond
#: (results.bound._DECIMALS), so a difference of two is off by up to one, and a ratio by as much of its divisor
_ROUNDING_S = 1.01e-9
#: the relative error of a ceiling computed again from the stored times, beyond their rounding (float arithmetic)
_CEILING_RELATIVE = 1e-9


#: how far a stored slack may lie outside its stored interval: each is stored to the nanosecond (results.bound), so an
#: estimate at an end of its interval may round to the other side of it by up to one
SLACK_ROUNDING_S = 1.01e-9


def check_slack(slack_s: float, interval: tuple[float, float] | None, at: At) -> None:
    """InputError (at `at`'s `slack_ci_s` or `slack_s`) where a side's slack interval reaches below 0 (a side cannot
    have less than no slack: the fit looks for it over [0, the largest delay]) or does not hold the slack itself
    (verdicts.bound.fit's interval always does), beyond the nanosecond a file rounds each to. A results file's bound
    and an `ab` file's readings (results.bound_change) are held to it alike."""
    if interval is None:
        return
    low, high = interval
    if low < 0:
        (at / "slack_ci_s").fail(f"a slack cannot be negative ({low:g} s): a side's slack lies between 0 and the largest delay")
    if not low - SLACK_ROUNDING_S <= slack_s <= high + SLACK_ROUNDING_S:
        (at / "slack_s").fail(f"{slack_s:g} s lies outside its own interval [{low:g}, {high:g}] s: an interval holds its estimate")


#: how far past its largest level's median a side's longest injected delay may have run where a file keeps no
#: observations to say it: a delay is measured as it ran (verdicts.bound fits over each sample's own length), and a
#: busy machine stretches the longest by a share of it; a slack twice the largest delay is no fit's
LEVEL_OVERRUN = 0.5


def _check_within_levels(fit: Mapping[str, Any], injected_s: list[float], at: At) -> None:
    """InputError (at `slack_s` or `slack_ci_s`) where a side's slack or an end of its interval lies past the largest
    delay injected on that side: verdicts.bound looks for the slack on a grid over [0, the longest delay measured],
    so neither can exceed it (`injected_s`: the side's stored observations' lengths; without them, its largest
    level's median with LEVEL_OVERRUN), beyond the nanosecond a file rounds each to."""
    levels = [float(level) for level in fit.get("levels_s") or ()]
    if not levels:
        return
    largest = max([*levels, *injected_s]) if injected_s else max(levels) * (1 + LEVEL_OVERRUN)
    reach = largest * (1 + _CEILING_RELATIVE) + SLACK_ROUNDING_S
    interval = interval_of(fit.get("slack_ci_s"))
    for key, value in (("slack_s", float(fit["slack_s"])), *(("slack_ci_s", end) for end in interval or ())):
        if value > reach:
            (at / key).fail(
                f"{_shown_s(value)} lies past the largest delay injected on this side ({_shown_s(largest)}): "
                "a slack lies between 0 and the largest delay"
            )


def _check_ceiling(bound: Mapping[str, Any], at: At) -> None:
    """InputError where the stored ceiling is not step / (step − the device's slack) within the rounding of the
    stored times (verdicts.bound computes it so), or is missing where that is finite, or present where there is no
    device side; where the device's slack reaches the whole step (within rounding), none, or one at least step over
    the floor the rounding allows (a floor of a nanosecond before rounding): a 1.0 there is no fit's."""
    ceiling, step = bound.get("ceiling"), float(bound["step_s"])
    device = (bound.get("sides") or {}).get(str(Side.DEVICE))
    if device is None or str(bound["bound"]) == str(BoundKind.SYNCHRONOUS):
        if ceiling is not None:
            (at / "ceiling").fail(f"a ceiling of {ceiling:g}× with no device slack to read it from (step / (step − that slack))")
        return
    slack = float(device["slack_s"])
    floor = step - slack
    low = (step - _ROUNDING_S / 2) / (floor + _ROUNDING_S) * (1 - _CEILING_RELATIVE) if floor + _ROUNDING_S > 0 else math.inf
    if floor <= 2 * _ROUNDING_S:
        # the device's slack reaches the whole step (within rounding): no ceiling (a floor of 0), or the one a floor of
        # a nanosecond or two before rounding gives, at least step / (that floor): never one of a floor that is not there
        if ceiling is not None and ceiling < low:
            (at / "ceiling").fail(
                f"{ceiling:.6g}× contradicts the bound's own numbers: the device's slack reaches the whole step "
                f"({_shown_s(step)}), so there is no ceiling (step / (step − that slack) is unbounded)"
            )
        return
    high = (step + _ROUNDING_S / 2) / (floor - _ROUNDING_S) * (1 + _CEILING_RELATIVE)
    expected = step / floor
    if ceiling is None:
        (at / "ceiling").fail(f"missing: step / (step − the device's slack) is {expected:.6g}× ({_shown_s(step)} over {_shown_s(floor)})")
    if not low <= ceiling <= high:
        (at / "ceiling").fail(
            f"{ceiling:.6g}× contradicts the bound's own numbers: step / (step − the device's slack) is {expected:.6g}× "
            f"({_shown_s(step)} over {_shown_s(floor)})"
        )


def ceiling_interval(step_s: float, slack_ci_s: tuple[float, float] | None) -> tuple[float, float] | None:
    """The ceiling's interval: the image of the device's slack interval under step / (step − slack), the same step
    the point ceiling and the table's shares are of, so it recomputes from what the table prints. Its high end is
    math.inf (no upper bound) where the slack's interval reaches the whole step; None without a slack interval or
    where its low end reaches the step too (no ceiling then)."""
    if slack_ci_s is None or slack_ci_s[0] >= step_s:
        return None
    low, high = slack_ci_s
    return (step_s / (step_s - low), step_s / (step_s - high) if high < step_s else math.inf)


#: how far an end of a stored ceiling interval may lie beyond the range the rule before this one could give (each
#: resample's own step in place of the table's, a percentile of the ceilings): the percentile of a convex image
#: interpolates between two neighbouring resamples, and may pass the image of the slack's percentile by a little
_OLD_RULE_RELATIVE = 0.02


def _check_ceiling_ci(bound: Mapping[str, Any], at: At) -> None:
    """InputError where a stored ceiling interval is not the image of the device's slack interval (ceiling_interval).
    Files written before took each resample's own step in place of the table's, and a percentile of the resampled
    ceilings: neither step nor percentile is stored, so an end is held to the range that rule could give, the image
    of its slack end under every step a resample can have (from the least round's unperturbed mean to the most's,
    and the table's step), within _OLD_RULE_RELATIVE; the new rule's interval lies within it (as check_reading
    holds older readings to the shortest step). A ceiling interval absent is not refused (too few rounds, and older
    files whose resampled ceilings were unbounded, wrote none)."""
    stored, low_only = interval_of(bound.get("ceiling_ci")), bound.get("ceiling_ci_low")
    if stored is None and low_only is None:
        return
    where = at / ("ceiling_ci" if stored is not None else "ceiling_ci_low")
    device = (bound.get("sides") or {}).get(str(Side.DEVICE)) or {}
    slack_ci = interval_of(device.get("slack_ci_s"))
    if stored is not None and low_only is not None:
        where.fail("an interval and an unbounded one's low end both: a ceiling has one interval")
    if bound.get("ceiling") is None or slack_ci is None:
        where.fail("a ceiling interval with no ceiling, or no device slack interval, to be the image of")
    step, slack = float(bound["step_s"]), float(device["slack_s"])
    lo, hi = slack_ci
    expected = ceiling_interval(step, slack_ci)
    said = "unbounded" if expected is None else f"[{expected[0]:.6g}, {expected[1]:.6g}]"
    contradicts = (
        f"contradicts the bound's own numbers: step / (step − the device's slack) over its interval "
        f"[{_shown_s(lo)}, {_shown_s(hi)}] of a {_shown_s(step)} step is {said}"
    )
    observations = list(bound.get("observations") or ())
    shortest = min(shortest_step(observations) or step, step)
    longest = max(_longest_step(observations), step)
    if low_only is not None:  # written by this rule only: its high end unbounded, so the slack reaches the step
        low = float(low_only)
        if hi < step - 2 * _ROUNDING_S or not _ratio_within(low, step, step, lo, 0.0):
            where.fail(f"{low:.6g}× with no upper bound {contradicts}")
        return
    assert stored is not None
    # where the slack's interval was widened to hold the slack itself (verdicts.bound), the percentile at that end
    # lay inside it: the end of the ceiling's interval there is held to the other end's image on that side
    low_least = hi if abs(lo - slack) <= _ROUNDING_S else lo
    high_least = lo if abs(hi - slack) <= _ROUNDING_S else hi
    ends_ok = _between(stored[0], longest, shortest, lo, low_least) and _between(stored[1], longest, shortest, high_least, hi)
    if not ends_ok:
        where.fail(f"[{stored[0]:.6g}, {stored[1]:.6g}]× {contradicts}")


def _ratio(step: float, slack: float) -> float:
    return step / (step - slack) if slack < step else math.inf


def _between(value: float, longest: float, shortest: float, least_slack: float, most_slack: float) -> bool:
    """Whether a ceiling end lies between the least image (the longest step, `least_slack`) and the most (the
    shortest step, `most_slack`), within the rounding of the stored times and _OLD_RULE_RELATIVE."""
    least = (longest - _ROUNDING_S) / (longest - least_slack + _ROUNDING_S) if least_slack < longest else math.inf
    most = _ratio(shortest + _ROUNDING_S, most_slack + _ROUNDING_S)
    return least * (1 - _OLD_RULE_RELATIVE) <= value <= most * (1 + _OLD_RULE_RELATIVE)


def _ratio_within(value: float, longest: float, shortest: float, slack: float, relative: float) -> bool:
    least = (longest - _ROUNDING_S) / (longest - slack + _ROUNDING_S)
    most = _ratio(shortest + _ROUNDING_S, slack + _ROUNDING_S)
    return least * (1 - relative - _CEILING_RELATIVE) <= value <= most * (1 + relative + _CEILING_RELATIVE)


def _longest_step(observations: list[Any]) -> float:
    """The longest unperturbed step a resample of the rounds can have: the most round's mean (0 where none)."""
    per_round: dict[Any, list[float]] = {}
    for observation in observations:
        if observation[1] is None:
            per_round.setdefault(observation[0], []).append(float(observation[4]))
    return max((sum(values) / len(values) for values in per_round.values()), default=0.0)


def _check_reading(bound: Mapping[str, Any], observations: list[Any], at: At) -> None:
    """A results file's stored reading held to its stored slack intervals (check_reading)."""
    sides = {str(name): interval_of(fit.get("slack_ci_s")) for name, fit in (bound.get("sides") or {}).items()}
    shortest = shortest_step(observations)
    if str(bound["bound"]) == str(BoundKind.BALANCED) and bound.get("shares_cores") is True:
        (at / "bound").fail("reads balanced, but its device shares the host's cores: no slack on either side reads inconclusive there")
    check_reading(str(bound["bound"]), sides, int(bound["rounds"]), float(bound["step_s"]), shortest, at / "bound", at / "sides")


def check_reading(
    kind: str, intervals: Mapping[str, tuple[float, float] | None], rounds: int, step: float, shortest_s: float, where: At, sides_at: At
) -> None:
    """InputError (at `where`, or `sides_at` for a synchronous reading with sides) where a reading is one
    verdicts.bound's decision rule cannot give from its slack intervals (`intervals`: side -> interval or None).
    Exact where the rule reads them alone: synchronous (no sides), too few rounds or no interval
    (inconclusive), one side measured (its slack's low end against DECISION_MARGIN of the step), balanced (both
    slacks' high ends within BALANCE_BAND). Host- and device-bound are read from the interval of the resampled
    difference (device − host slack) / step (the stored step; files from before divided each resample by its own
    step, whose least is `shortest_s`), which is not stored; a condition it implies for both is checked instead: were
    the difference beyond the margin in all but a tail t of the resamples, the device's slack could not lie
    below its interval's high end while the host's lay above its low end in more than 2t of them, so the high end
    of one side's interval must exceed the low end of the other's by the margin of the shortest step a resample can
    have (`shortest_s`: the least round's unperturbed mean; 0 where it is not known, which checks only the order of
    the two slacks). An inconclusive reading of two sides is not refuted from the intervals alone (the
    difference's interval may straddle what each side's suggests). A results file's bound and each side of an `ab`
    file's bound change (results.bound_change) are held to it alike."""
    if kind == str(BoundKind.SYNCHRONOUS):
        if intervals:
            sides_at.fail(SYNCHRONOUS_SIDES)
        return
    if not intervals or rounds < MIN_ROUNDS or any(ci is None for ci in intervals.values()):
        if kind != str(BoundKind.INCONCLUSIVE):
            why = "no side measured" if not intervals else f"{rounds} round(s)" if rounds < MIN_ROUNDS else "a slack without an interval"
            where.fail(f"reads {kind}, but {why} gives no reading: it is inconclusive")
        return
    said = ", ".join(f"{name} slack [{_shown_s(ci[0])}–{_shown_s(ci[1])}]" for name, ci in intervals.items() if ci is not None)
    if len(intervals) == 1:
        [(name, ci)] = intervals.items()
        assert ci is not None
        decided = ci[0] > DECISION_MARGIN * step
        if abs(ci[0] - DECISION_MARGIN * step) <= _ROUNDING_S:
            return  # at the margin to the nanosecond: either reading is the rule's
        other = str(BoundKind.DEVICE if name == str(Side.HOST) else BoundKind.HOST)
        expected = other if decided else str(BoundKind.INCONCLUSIVE)
        if kind != expected:
            where.fail(f"reads {kind}, but its one side's {said} of a {_shown_s(step)} step reads {expected}")
        return
    host, device = intervals.get(str(Side.HOST)), intervals.get(str(Side.DEVICE))
    assert host is not None
    assert device is not None
    if kind == str(BoundKind.BALANCED):
        reach = BALANCE_BAND * step + _ROUNDING_S
        if host[1] > reach or device[1] > reach:
            where.fail(f"reads balanced, but its {said} reach past {units.percent(BALANCE_BAND)} of the {_shown_s(step)} step")
        return
    if kind in (str(BoundKind.HOST), str(BoundKind.DEVICE)):
        gap = DECISION_MARGIN * shortest_s - 2 * _ROUNDING_S
        more, less = (device, host) if kind == str(BoundKind.HOST) else (host, device)
        if more[1] - less[0] <= gap:
            other = "device" if kind == str(BoundKind.HOST) else "host"
            where.fail(
                f"reads {kind}, but its {said} of a {_shown_s(step)} step cannot put the {other}'s slack above the {kind}'s "
                f"by {units.percent(DECISION_MARGIN)} of the step"
            )


def shortest_step(observations: list[Any]) -> float:
    """The shortest unperturbed step a resample of the rounds can have: the least round's mean of its unperturbed
    samples (0 where none is stored, which checks only the order of the two slacks)."""
    per_round: dict[Any, list[float]] = {}
    for observation in observations:
        if observation[1] is None:
            per_round.setdefault(observation[0], []).append(float(observation[4]))
    return min((sum(values) / len(values) for values in per_round.values()), default=0.0)


def _shown_s(value: float) -> str:
    return units.seconds(value)
