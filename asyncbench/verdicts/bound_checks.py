"""Verdicts of `expect:` checks on what bounds the step (`run --bound`): gates on the reading, a side's slack, its
share of the step, and the ceiling of cutting host work.

    bound == device              the reading is DEVICE-BOUND (host, device, balanced)
    slack_s[host] >= 1ms         the host's slack per step
    slack_share[host] >= 20%     the host's slack over the step
    ceiling[host] <= 1.10        the most cutting host work could speed the step up (`[host]`: the side cut)

The reading is judged from the fit's reading (verdicts.bound), at the confidence the check is judged at under the
run's false-alarm budget (results.budget, as every other check): the stored bound's intervals are 95% ones, so where
the level differs the fit is redone from the stored observations at that level. `bound == X` passes where the
reading is X, fails where it is another decided reading (host, device, balanced) and is INCONCLUSIVE where the
reading is, or where the rounds are too few for a reading at that level (`reading_rounds_needed`: as many as the
threshold checks on the same rounds need for their intervals); at a level other than the table's 95%, an
INCONCLUSIVE line names its level beside the table's reading, which may be decided. The check stores the rounds and the confidence its
verdict came from (results.check_rule holds a file's check to them).

A threshold check on the slack (slack_s, slack_share, ceiling) is judged at its own level (verdicts.bound_levels):
the perturbation rounds inject exactly its delay on its side, and the check is read from the paired slowdown there
(median over rounds, its order-statistic interval at the check's level) against SLOWDOWN_TOLERANCE of the delay,
moved by what the delay as run (its measured length) ran off it (bound_levels.margins): `>=` passes where the whole
interval is within 10% of the delay less what it ran short (the side absorbed the delay: it has that slack), fails
where the whole of it lies above 10% plus what it ran over, and is INCONCLUSIVE between them or where there is no
interval (too few rounds); `<=` the other way round. A delay that ran long thus never makes a `<=` pass, nor one
that ran short a `>=`, where the level itself would not have.

What cannot be evaluated is NOT_MEASURED, never a pass: a synchronous backend (the host is the device), a case
with no step to perturb (a built-in experiment) or no perturbation rounds (one step a sample), a side that was not
measured (MXNet has no device delay), a ceiling on a device that shares the host's cores (no ceiling is measured
there: verdicts.bound.NO_SHARED_CEILING), a level that was not injected (past MAX_INJECTED_SHARE of the step, or a
results file from before the checks' levels were).

A case with a bound check takes perturbation rounds without `--bound` (engine.runner's CaseOptions), at least as
many as its checks need for an interval at their level (`bound_rounds_needed`).
"""

from __future__ import annotations

import functools
import math
import statistics
from typing import Sequence

from asyncbench.results import check_rule, stats, units
from asyncbench.results.bound import MAX_INJECTED_SHARE, TABLE_NAMES, Bound, BoundKind, Injection
from asyncbench.results.budget import Budget, rounds_for_median
from asyncbench.results.check_detail import DRIFTED
from asyncbench.results.model import Check, Expectation, Result
from asyncbench.verdicts import bound as fitting
from asyncbench.verdicts import bound_levels as levels
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
)

READING = "bound"
SLACK_S, SLACK_SHARE, CEILING = levels.SLACK_S, levels.SLACK_SHARE, levels.CEILING
BOUND_QUANTITIES = (READING, SLACK_S, SLACK_SHARE, CEILING)
#: each quantity's unit, as expect.UNIT_FACTORS reads a threshold's (the reading has none)
BOUND_UNITS = {SLACK_S: "s", SLACK_SHARE: "%", CEILING: "x"}
#: the readings `bound == X` may name (results.check_rule's: a stored reading check is held to them on reading)
READINGS = check_rule.READINGS
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
    return bound_check_at(expectation, result, level_of(budget, share=len(names)))


def bound_check_at(expectation: Expectation, result: Result, level: Level, as_run: bool = True) -> Check:
    """One bound check on `result` at `level` (its share of the run's budget): what `bound_check` judges, and what a
    results file's stored check is judged again at, from the confidence it stores (session.check_held). `as_run`
    False: a threshold check on the slack stored before checks were judged by the delay as run, judged by that rule
    (bound_levels.legacy_margins), as its file's verdict was."""
    if not result.bound:
        return bound_check(expectation, result, None)
    names = [expectation.variant] if expectation.variant else list(result.bound)
    named = len(result.bound) > 1 or expectation.variant is not None  # the labels name the variant where it tells
    judged = [_variant_check(expectation, name, result.bound.get(name), level, named, as_run) for name in names]
    return min(judged, key=lambda check: SEVERITY.index(check.verdict))


def _variant_check(expectation: Expectation, name: str, stored: Bound | None, level: Level, named: bool, as_run: bool) -> Check:
    label = _label(expectation, name if named else None)
    if stored is None:
        return Check(expectation.text, NOT_MEASURED, f"{label} cannot be evaluated: {NO_BOUND} of variant {name!r}")
    if stored.bound == BoundKind.SYNCHRONOUS:
        return Check(expectation.text, NOT_MEASURED, f"{label} cannot be evaluated: {stored.note or fitting.SYNCHRONOUS_NOTE}")
    if stored.rounds == 0:
        return Check(expectation.text, NOT_MEASURED, f"{label} cannot be evaluated: no perturbation rounds ({stored.note or 'none taken'})")
    # what was measured does not change with the level: a side without a delay is said from the stored bound
    if expectation.quantity == READING:
        return _reading_check(expectation, label, _at_level(stored, level), level, stored.bound)
    if expectation.quantity == CEILING and stored.shares_cores:
        # its level stands for the ceiling only where the device's slack measures its own work (bound_levels)
        return Check(expectation.text, NOT_MEASURED, f"{label} cannot be evaluated: {fitting.NO_SHARED_CEILING}")
    injection = levels.injection_of(expectation)
    assert injection is not None
    if stored.side(injection.side) is None:
        why = f"the {injection.side}'s delay was not measured here" + (f" ({stored.note})" if stored.note else "")
        return Check(expectation.text, NOT_MEASURED, f"{label} cannot be evaluated: {why}")
    return _level_check(expectation, label, stored, injection, level, as_run)


@functools.lru_cache(maxsize=64)  # several checks on one variant at one level: one refit (some 50 ms each)
def _at_level(stored: Bound, level: Level) -> Bound:
    """The bound with its intervals at `level`: the stored one at 95%, else refitted from its observations."""
    if math.isclose(level.confidence, stats.CONFIDENCE) or not stored.observations:
        return stored
    # its note is the refit's (the reading's words at this level), not the stored one's again
    return fitting.fit(
        stored.variant,
        stored.observations,
        True,
        level.confidence,
        None,
        stored.steps_per_call,
        shares_cores=stored.shares_cores,
        hold_jumps=stored.held_at_jump,  # by the rule it was fitted by (a file from before the hold: none)
    )


def _label(expectation: Expectation, name: str | None) -> str:
    """'slack_s[host]', 'slack_s[host, variant=item]', 'bound[variant=item]', 'bound'."""
    inside = [str(expectation.at)] if expectation.quantity != READING else []
    inside += [f"variant={name}"] if name is not None else []
    return expectation.quantity + (f"[{', '.join(inside)}]" if inside else "")


def reading_rounds_needed(confidence: float) -> int:
    """The fewest perturbation rounds a reading at `confidence` is judged from: the bootstrap's MIN_ROUNDS, or as
    many as an order-statistic interval of a median needs at that level, whichever is more (as bound_rounds_needed
    asks of the case, and as the threshold checks need for theirs): fewer decide nothing at that level."""
    return max(fitting.MIN_ROUNDS, rounds_for_median(confidence))


def _reading_check(expectation: Expectation, label: str, bound: Bound, level: Level, table: BoundKind) -> Check:
    """`bound == X` from `bound`, the reading at the check's `level`. `table`: the stored reading, at 95%, which
    `run --bound`'s table prints beside the check: where the level is another, an undecided line names its level
    and the table's reading ("at the checks' 99.97% level the reading is INCONCLUSIVE (the table's 95% reading:
    DEVICE-BOUND)"), never a bare "INCONCLUSIVE" above a table that reads DEVICE-BOUND."""
    wanted = BoundKind(expectation.at)
    needed = reading_rounds_needed(level.confidence)
    # what the verdict came from, stored with it: the rounds and the level (results.check_rule holds a file to them)
    came_from = functools.partial(
        Check, expectation.text, confidence=level.confidence, rounds=bound.rounds, family_error=level.family_error
    )
    if bound.rounds < needed:  # as a threshold check on the same rounds: no reading at this level from so few
        shown = (
            f"{label}: {bound.rounds} perturbation round{'' if bound.rounds == 1 else 's'}, too few rounds for a "
            f"{level.name} reading {NEEDS}{needed}), expected {wanted}"
        )
        return came_from(INCONCLUSIVE, shown)
    shown = f"{label} = {bound.bound} ({level.name} intervals) over {bound.rounds} perturbation rounds, expected {wanted}"
    if bound.bound == wanted:
        verdict = PASS
    elif bound.bound in READINGS:
        verdict = FAIL
    else:
        verdict = INCONCLUSIVE
        if math.isclose(level.confidence, stats.CONFIDENCE):
            shown += f": {UNDECIDED}"
        else:
            table_said = f"the table's {units.confidence(stats.CONFIDENCE)} reading: {TABLE_NAMES[table]}"
            shown += f": at the checks' {level.name} level {UNDECIDED} ({table_said})"
    if verdict != PASS and bound.note:
        shown += f" ({bound.note})"
    return came_from(verdict, shown)


def _level_check(expectation: Expectation, label: str, stored: Bound, injection: Injection, level: Level, as_run: bool) -> Check:
    """A threshold check on the slack from the paired difference at its own level (verdicts.bound_levels): the
    median slowdown over rounds and its order-statistic interval at the check's level, against SLOWDOWN_TOLERANCE
    of the delay moved by what the delay as run ran off it (bound_levels.margins; `as_run` False: a stored check's
    older rule, legacy_margins); `>=` (the side has that slack) holds where the whole interval is within it."""
    side = injection.side
    asked_s = levels.level_s(injection, stored)
    if asked_s is None:
        why = "the bound stores no step its levels were shares of (a results file written before checks were injected at their level)"
        return Check(expectation.text, NOT_MEASURED, f"{label} cannot be evaluated: {why}")
    # a share of the probe's step (Bound.scale_s), not of the table's (the rounds' unperturbed median): it says which
    # ('25% of the step' beside a table whose step was 8.02 ms read wrong for a level of 25% of 3.70 ms)
    of_step = ""
    if injection.share is not None and stored.scale_s is not None:
        probe = units.quantity(stored.scale_s, "s")
        of_step = f", {units.percent(injection.share)} of the {probe} step the levels were set from, probed before the rounds"
    at = f"a {side} delay of {units.quantity(asked_s, 's')}{of_step}"
    found = levels.paired(stored, side, asked_s)
    if found is None or not found.slowdowns_s:
        scale = stored.scale_s
        if scale is not None and asked_s > MAX_INJECTED_SHARE * scale:
            # scale_s by its name: the step the levels were set from (the probe's), not the table's nor the timed one's
            # ('more than 2× the step (4.20 ms)' beside a table's 3.99 ms and a timed 4.57 ms named neither)
            why = (
                f"its level, {at}, is more than {MAX_INJECTED_SHARE:g}× the step the levels were set from "
                f"({units.quantity(scale, 's')}, probed before the rounds): not injected (a side's slack lies within the step)"
            )
        else:
            why = f"no sample of {at} was taken (it is injected in the perturbation rounds of a run with this check)"
        return Check(expectation.text, NOT_MEASURED, f"{label} cannot be evaluated: {why}")
    slowdowns = found.slowdowns_s
    margins = levels.margins(asked_s, found.injected_s) if as_run else levels.legacy_margins(found.injected_s)
    median = statistics.median(slowdowns)
    interval = stats.median_ci(slowdowns, level.confidence)
    rounds = len(slowdowns)
    has_said, lacks_said = _margins_said(asked_s, found.injected_s, margins, as_run)
    delay_as_run_s = found.injected_s if as_run else None

    def head(interval: tuple[float, float] | None, level_said: str) -> str:
        slowed = _slowed(median, interval, level_said, stored.steps_per_call)
        over = f"over {rounds} paired round{'' if rounds == 1 else 's'}"
        return f"{label}: {at} (as run: {units.quantity(found.injected_s, 's')}) {slowed}, {over}"

    if interval is None:
        needed = rounds_for_median(level.confidence)
        if rounds < needed:
            shown = head(None, "") + f", too few for a {level.name} interval {NEEDS}{needed})"
        else:  # enough of them, but the interval was widened for their drift until none was left (stats.median_ci)
            independent = stats.independent_rounds(slowdowns, median)
            shown = head(None, "") + (
                f", but {DRIFTED} so far that too few were independent for a {level.name} interval (they count as "
                f"{independent} independent one{'' if independent == 1 else 's'}, of the {needed} it takes)"
            )
        return Check(expectation.text, INCONCLUSIVE, shown, median, family_error=level.family_error, delay_as_run_s=delay_as_run_s)
    # the side has a slack of at least the level where the slowdown is within the margin: `>=` asks that, `<=` its opposite
    holds = expectation.op in (">", ">=")
    has, lacks = interval[1] <= margins.has_s, interval[0] > margins.lacks_s
    verdict = INCONCLUSIVE if has == lacks else PASS if has == holds else FAIL
    shown = head(interval, f" ({level.name} interval)")
    if verdict == INCONCLUSIVE:
        band = has_said if has_said == lacks_said else f"at most {has_said} it has that slack, above {lacks_said} it has not"
        shown += f": {STRADDLES} ({band}); more perturbation rounds (max_time_s) may decide it"
    else:
        margin, slack = (has_said, "has") if has else (lacks_said, "does not have")
        shown += f", {'within' if has else 'more than'} {margin}: the {side} {slack} that much slack"
    return Check(
        expectation.text,
        verdict,
        shown,
        median,
        interval,
        confidence=level.confidence,
        family_error=level.family_error,
        delay_as_run_s=delay_as_run_s,
    )


def _margins_said(asked_s: float, run_s: float, margins: levels.Margins, as_run: bool) -> tuple[str, str]:
    """The margins a check was judged by, in words that name the delay as run where it moved them: '10% of the delay
    (9.43 µs) plus the 61.7 µs it ran over (71.1 µs)', '... less the 5 µs it ran short (4.43 µs)'; a stored check of
    the older rule: '10% of the delay (15.6 µs)', of the delay as run."""
    tolerance = f"{units.percent(levels.SLOWDOWN_TOLERANCE)} of the delay ({units.quantity(levels.SLOWDOWN_TOLERANCE * asked_s, 's')})"
    if not as_run:
        legacy = (
            f"{units.percent(levels.SLOWDOWN_TOLERANCE)} of the delay as run "
            f"({units.quantity(margins.has_s, 's')}: the rule its file was written under)"
        )
        return legacy, legacy
    has, lacks = tolerance, tolerance
    if run_s < asked_s:
        has += f" less the {units.quantity(asked_s - run_s, 's')} it ran short ({units.quantity(margins.has_s, 's')})"
    if run_s > asked_s:
        lacks += f" plus the {units.quantity(run_s - asked_s, 's')} it ran over ({units.quantity(margins.lacks_s, 's')})"
    return has, lacks


def _slowed(median: float, interval: tuple[float, float] | None, level_said: str, steps: int) -> str:
    """What the delay did to the step, beyond the share of it that always shows, in words that read for any sign:
    'slowed the step by 10 µs [9.6–10.4] (95% interval) beyond the 1/5 of it that always shows'; a slowdown below
    that share (a negative one: the step ran faster than that share alone would make it) 'did not slow the step: it
    ran 600 µs [590–610] (95% interval) faster than the 1/5 of the delay that always shows would make it'; an
    interval that reaches 0 '~0 [≤ 12 µs]', and one that reaches below it says how far either way ('~0 [from 1.12 ms
    faster to 1.06 ms slower]': '≤ 1.06 ms' alone hid that the step may have run faster). Never a negative time, nor
    'by below 0 by', nor 'slowed … by … less'."""
    reaches_zero = interval is not None and interval[0] <= 0 <= interval[1]
    if interval is not None and interval[0] < 0 < interval[1]:
        shown = "the whole of the delay" if steps <= 1 else f"the 1/{steps} of the delay that always shows"
        either_way = f"from {units.seconds(-interval[0])} faster to {units.seconds(interval[1])} slower"
        return f"changed the step by {units.NOT_DISTINGUISHABLE} [{either_way}]{level_said} beyond {shown}"
    if median < 0 and not reaches_zero:
        flipped = None if interval is None else (-interval[1], -interval[0])
        delay = "the whole delay, which always shows," if steps <= 1 else f"the 1/{steps} of the delay that always shows"
        return f"did not slow the step: it ran {units.with_bounds(-median, flipped, 's')}{level_said} faster than {delay} would make it"
    shown = "the whole of it" if steps <= 1 else f"the 1/{steps} of it"
    return f"slowed the step by {units.with_bounds(median, interval, 's')}{level_said} beyond {shown} that always shows"
