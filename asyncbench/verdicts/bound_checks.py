"""Verdicts of `expect:` checks on what bounds the step (`run --bound`): gates on the reading, a side's slack, its
share of the step, and the ceiling of cutting host work.

    bound == device              the reading is DEVICE-BOUND (host, device, balanced)
    slack_s[host] >= 1ms         the host's slack per step
    slack_share[host] >= 20%     the host's slack over the step
    ceiling[host] <= 1.10        the most cutting host work could speed the step up (`[host]`: the side cut)

Each is judged from the fit's intervals (verdicts.bound), at the confidence the check is judged at under the run's
false-alarm budget (results.budget, as every other check): the stored bound's intervals are 95% ones, so where the
level differs the fit is redone from the stored observations at that level. PASS where the whole interval
satisfies the threshold, FAIL where the whole of it violates it, INCONCLUSIVE where it straddles it or where there
is no interval (too few perturbation rounds). `bound == X` passes where the reading is X, fails where it is another
decided reading (host, device, balanced) and is INCONCLUSIVE where the reading is. A slack that reaches the largest
delay injected is at least that: its interval has no upper end, so `<=` cannot pass on it (nor the ceiling's).

What cannot be evaluated is NOT_MEASURED, never a pass: a synchronous backend (the host is the device), a case
with no step to perturb (a built-in experiment) or no perturbation rounds (one step a sample), a side that was not
measured (MXNet has no device delay). The check is not a dedicated injection at the threshold's level: it is judged
from the same sweep `--bound` fits.

A case with a bound check takes perturbation rounds without `--bound` (engine.runner's CaseOptions), at least as
many as its checks need for an interval at their level (`bound_rounds_needed`).
"""

from __future__ import annotations

import functools
import math
from typing import Sequence

from asyncbench.results import stats, units
from asyncbench.results.bound import Bound, BoundKind, Side
from asyncbench.results.budget import Budget, rounds_for_median
from asyncbench.results.model import Check, Expectation, Result
from asyncbench.verdicts import bound as fitting
from asyncbench.verdicts.judging import (
    FAIL,
    INCONCLUSIVE,
    NEEDS,
    NOT_MEASURED,
    PASS,
    SEVERITY,
    STRADDLES,
    UNDECIDED,
    Level,
    level_of,
    verdict_of,
)

READING, SLACK_S, SLACK_SHARE, CEILING = "bound", "slack_s", "slack_share", "ceiling"
BOUND_QUANTITIES = (READING, SLACK_S, SLACK_SHARE, CEILING)
#: each quantity's unit, as expect.UNIT_FACTORS reads a threshold's (the reading has none)
BOUND_UNITS = {SLACK_S: "s", SLACK_SHARE: "%", CEILING: "x"}
#: the readings `bound == X` may name: the decided ones (INCONCLUSIVE and SYNCHRONOUS are no gate's aim)
READINGS = (BoundKind.HOST, BoundKind.DEVICE, BoundKind.BALANCED)
NO_BOUND = "no bound was measured for this case"


def is_bound_check(expectation: Expectation) -> bool:
    """Whether a check is on the bound: a bound quantity with its side or reading (`at`; a workload's metric of the
    same name has none, expect.parse)."""
    return expectation.quantity in BOUND_QUANTITIES and expectation.at is not None


def asks_bound(expectations: Sequence[Expectation]) -> bool:
    """Whether any check of a case is on the bound: the case then takes perturbation rounds, --bound or not."""
    return any(is_bound_check(e) for e in expectations)


def bound_rounds_needed(expectations: Sequence[Expectation], budget: Budget | None, variants: Sequence[str]) -> int:
    """The fewest perturbation rounds from which every bound check of a case can have an interval at its level (0:
    none): the bootstrap's MIN_ROUNDS, or as many as an order-statistic interval of a median needs at that level
    (10 at 99.8%), whichever is more: the bootstrap's percentile interval is no surer than that with fewer."""
    shares = [1 if e.variant else max(len(variants), 1) for e in expectations if is_bound_check(e)]
    if not shares:
        return 0
    return max(max(fitting.MIN_ROUNDS, rounds_for_median(level_of(budget, share).confidence)) for share in shares)


def bound_check(expectation: Expectation, result: Result, budget: Budget | None) -> Check:
    """One bound check on `result`: for every variant (or the one named), the worst verdict among them."""
    if not result.bound:
        why = f"{NO_BOUND} (--bound measures step-form workloads, @asyncbench.step or -w file.py:Name: see the case's note)"
        return Check(expectation.text, NOT_MEASURED, f"cannot be evaluated: {why}")
    names = [expectation.variant] if expectation.variant else list(result.bound)
    level = level_of(budget, share=len(names))
    named = len(result.bound) > 1 or expectation.variant is not None  # the labels name the variant where it tells
    judged = [_variant_check(expectation, name, result.bound.get(name), level, named) for name in names]
    return min(judged, key=lambda check: SEVERITY.index(check.verdict))


def _variant_check(expectation: Expectation, name: str, stored: Bound | None, level: Level, named: bool) -> Check:
    label = _label(expectation, name if named else None)
    if stored is None:
        return Check(expectation.text, NOT_MEASURED, f"{label} cannot be evaluated: {NO_BOUND} of variant {name!r}")
    if stored.bound == BoundKind.SYNCHRONOUS:
        return Check(expectation.text, NOT_MEASURED, f"{label} cannot be evaluated: {stored.note or fitting.SYNCHRONOUS_NOTE}")
    if stored.rounds == 0:
        return Check(expectation.text, NOT_MEASURED, f"{label} cannot be evaluated: no perturbation rounds ({stored.note or 'none taken'})")
    # what was measured does not change with the level: a side without a delay is said from the stored bound
    side = Side.DEVICE if expectation.quantity == CEILING else Side(expectation.at) if expectation.quantity != READING else None
    measured = stored.side(side) if side is not None else None
    if side is not None and measured is None:
        why = f"the {side}'s delay was not measured here" + (f" ({stored.note})" if stored.note else "")
        return Check(expectation.text, NOT_MEASURED, f"{label} cannot be evaluated: {why}")
    bound = _at_level(stored, level)
    if side is None:
        return _reading_check(expectation, label, bound, level)
    # the ceiling of cutting host work (`[host]`: the side cut) is read from the device's slack
    fit = bound.side(side) or measured  # the refit measures the sides the stored bound does
    assert fit is not None
    reaches_top = fitting.reaches_top(fit)
    if expectation.quantity == CEILING:
        if bound.ceiling is None:
            said = [part for part in (bound.note or "").split("; ") if "ceiling" in part]
            why = said[0] if said else "no ceiling was measured"
            return Check(expectation.text, NOT_MEASURED, f"{label} cannot be evaluated: {why}")
        value, interval = bound.ceiling, bound.ceiling_ci
    else:
        scale = 1.0 if expectation.quantity == SLACK_S else 1.0 / bound.step_s
        value = fit.slack_s * scale
        interval = None if fit.slack_ci_s is None else (fit.slack_ci_s[0] * scale, fit.slack_ci_s[1] * scale)
    return _judged(expectation, label, value, interval, reaches_top, bound.rounds, level)


@functools.lru_cache(maxsize=64)  # several checks on one variant at one level: one refit (some 50 ms each)
def _at_level(stored: Bound, level: Level) -> Bound:
    """The bound with its intervals at `level`: the stored one at 95%, else refitted from its observations."""
    if math.isclose(level.confidence, stats.CONFIDENCE) or not stored.observations:
        return stored
    # its note is the refit's (the reading's words at this level), not the stored one's again
    return fitting.fit(stored.variant, stored.observations, True, level.confidence, None, stored.steps_per_call)


def _label(expectation: Expectation, name: str | None) -> str:
    """'slack_s[host]', 'slack_s[host, variant=item]', 'bound[variant=item]', 'bound'."""
    inside = [str(expectation.at)] if expectation.quantity != READING else []
    inside += [f"variant={name}"] if name is not None else []
    return expectation.quantity + (f"[{', '.join(inside)}]" if inside else "")


def _reading_check(expectation: Expectation, label: str, bound: Bound, level: Level) -> Check:
    wanted = BoundKind(expectation.at)
    shown = f"{label} = {bound.bound} ({level.name} intervals), expected {wanted}"
    if bound.bound == wanted:
        verdict = PASS
    elif bound.bound in READINGS:
        verdict = FAIL
    else:
        verdict = INCONCLUSIVE
        shown += f": {UNDECIDED}"
    if verdict != PASS and bound.note:
        shown += f" ({bound.note})"
    return Check(expectation.text, verdict, shown, family_error=level.family_error)  # no interval: no confidence stored


def _judged(
    expectation: Expectation,
    label: str,
    value: float,
    interval: tuple[float, float] | None,
    open_above: bool,
    rounds: int,
    level: Level,
) -> Check:
    """A threshold check on a figure of the fit: its interval (unbounded above where the slack reaches the largest
    delay injected: it is at least that) against the threshold."""
    unit = BOUND_UNITS[expectation.quantity]
    wanted = f"expected {expectation.op} {units.quantity(expectation.threshold, unit)}"
    if interval is None:
        shown = (
            f"{label} = {units.quantity(value, unit)}, {wanted}: no {level.name} interval from {rounds} perturbation "
            f"round{'' if rounds == 1 else 's'} {NEEDS}{fitting.MIN_ROUNDS})"
        )
        return Check(expectation.text, INCONCLUSIVE, shown, value, family_error=level.family_error)
    verdict = verdict_of(expectation.op, (interval[0], math.inf if open_above else interval[1]), expectation.threshold)
    if open_above:
        at_least = "a slack that reaches the largest delay injected"
        shown = f"{label} ≥ {units.quantity(interval[0], unit)} ({at_least}; {level.name} interval), {wanted}"
    else:
        shown = f"{label} = {units.with_bounds(value, interval, unit)} ({level.name} interval), {wanted}"
    if verdict == INCONCLUSIVE:
        shown += f": {STRADDLES}; more perturbation rounds (max_time_s) may decide it"
    return Check(expectation.text, verdict, shown, value, interval, confidence=level.confidence, family_error=level.family_error)
