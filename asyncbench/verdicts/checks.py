"""Verdicts of `expect:` checks: pass, fail or inconclusive from the interval of what is checked.

PASS when the whole interval (of a metric's per-round values, of a clock's
samples) satisfies the check, FAIL when the whole of it violates it,
INCONCLUSIVE when it straddles the threshold, or when there is no interval
(too few rounds, or rounds that drifted together so much that too few were
independent), NOT_MEASURED when the case did not run or the quantity
does not exist. Single measurements (memory) and sample statistics (min,
max, ...) are compared as they are. Units come from the result itself.
An INCONCLUSIVE check's detail says which of these it is, in the words of
the module's constants, and `inconclusive_why` reads them back from a stored
check, so the run's exit reasons say the same (never "straddles" of a check
that had no interval).

A census check on a FILE:LINE where no variant's census saw a wait is
INCONCLUSIVE: a line that never waits, a misspelled file and a line an edit
moved all read 0 there, so 0 cannot pass (or fail) a gate silently.

In a run the intervals are not 95% ones: the run's checks share one
false-alarm budget (results.budget), split over the checks and over the
looks each takes while sampling goes on, and a clock check without
`[variant]`, which fails when any variant fails, splits its share again
over the variants. Without a budget (a result judged on its own) the
stored 95% intervals are used.

A check's interval needs a number of rounds that grows with its level
(results.budget.rounds_for_median: 10 at 99.8%, 14 at 99.99%); a case with
checks takes at least that many (`enough_rounds`), past max_time_s (also
--quick's) if it must, as it takes min_samples, so that a check that
plainly holds is not left INCONCLUSIVE for want of rounds. max_samples stays
a hard cap; a check left without an interval says how many rounds it needed.
"""

from __future__ import annotations

import dataclasses
import os
from typing import Iterable, Mapping, Sequence

from asyncbench.results import check_detail, stats, units
from asyncbench.results.budget import Budget, rounds_for_median
from asyncbench.results.check_detail import DRIFTED as DRIFTED
from asyncbench.results.check_detail import FAR_MISS as FAR_MISS
from asyncbench.results.check_detail import TOO_FEW as TOO_FEW
from asyncbench.results.model import Check, Expectation, Result, Settings, Status
from asyncbench.verdicts import bound_checks, syncs
from asyncbench.verdicts.bound_checks import BOUND_QUANTITIES
from asyncbench.verdicts.judging import ALONE
from asyncbench.verdicts.judging import FAIL as FAIL
from asyncbench.verdicts.judging import INCONCLUSIVE as INCONCLUSIVE
from asyncbench.verdicts.judging import NEEDS as NEEDS
from asyncbench.verdicts.judging import NOT_MEASURED as NOT_MEASURED
from asyncbench.verdicts.judging import OPERATORS as OPERATORS
from asyncbench.verdicts.judging import PASS as PASS
from asyncbench.verdicts.judging import SEVERITY as SEVERITY
from asyncbench.verdicts.judging import STRADDLES as STRADDLES
from asyncbench.verdicts.judging import UNDECIDED as UNDECIDED
from asyncbench.verdicts.judging import Level as Level
from asyncbench.verdicts.judging import level_of as level_of
from asyncbench.verdicts.judging import verdict_of as verdict_of

# The words an INCONCLUSIVE check's detail says why with (`_judge`, `census_check`, results.check_detail), and
# `inconclusive_why` reads back from a stored check: one phrase per cause, each in no other cause's detail.
UNSEEN = "was seen in"
#: what the run's exit reasons say of each cause (outcome.judge: "2 checks inconclusive: 1 with an interval that ...")
WHY_STRADDLES = "an interval that straddles the threshold"
WHY_DRIFTED = "no interval (the rounds drifted together: too few independent ones for one)"
WHY_TOO_FEW = "no interval (too few rounds for one at its level)"
WHY_UNSEEN = "no wait seen at its FILE:LINE (a line that never waits, a misspelled file and a line an edit moved read the same)"
WHY_UNDECIDED = "a reading of what bounds the step that the fit left INCONCLUSIVE (its intervals did not decide)"
WHY_NONE = "no interval"


def _judge(
    expectation: Expectation,
    value: float | None,
    interval: tuple[float, float] | None,
    point: bool,
    label: str,
    unit: str,
    rounds: int | None,
    level: Level = ALONE,
    values: Sequence[float] | None = None,
    stopped_by: str | None = None,
) -> Check:
    """One check's verdict on one measured quantity: its value and interval (or a single measurement: `point`).
    `values`: the rounds its interval was taken from, where known: without an interval, how many independent rounds
    they count as says how many rounds would give one (check_detail.no_interval). `stopped_by`: what stopped the
    case's sampling (None: not known), the setting an INCONCLUSIVE check's advice names. A check without an interval
    stores the exact confidence it was judged at too: the rounds its detail says it needs are that level's, which
    the detail's readable level (rounded down) may not need, and a reader derives them again from it."""
    wanted = check_detail.wanted(expectation.op, expectation.threshold, unit)
    if value is None:
        return Check(expectation.text, NOT_MEASURED, check_detail.not_measured(label))
    if point:
        verdict = verdict_of(expectation.op, (value, value), expectation.threshold)
        shown = check_detail.one_measurement(label, value, unit, wanted)
    elif interval is None:
        verdict = INCONCLUSIVE
        independent = stats.independent_rounds(values) if values else None
        shown = check_detail.no_interval(label, value, unit, wanted, level.name, rounds, independent, level.confidence, stopped_by)
    else:
        verdict = verdict_of(expectation.op, interval, expectation.threshold)
        shown = check_detail.with_interval(label, value, interval, unit, units.exact_confidence(level.confidence), wanted)
        if verdict == INCONCLUSIVE:
            shown += check_detail.more_rounds(stopped_by)
    if verdict == FAIL:
        shown += check_detail.by_how_much(value, expectation.threshold)
    judged = not point and interval is not None
    return Check(
        expectation.text,
        verdict,
        shown,
        value,
        interval if judged else None,
        confidence=level.confidence if not point else None,
        family_error=level.family_error,
    )


def _clock_check(expectation: Expectation, result: Result, budget: Budget | None) -> Check:
    """A clock's statistic must hold for every variant (or the named one): the verdict of the worst."""
    names = [expectation.variant] if expectation.variant else list(result.variants)
    level = level_of(budget, share=len(names))
    judged = []
    for name in names:
        variant = result.variants.get(name)
        summary = getattr(variant, expectation.quantity) if variant is not None else None
        label = f"{expectation.quantity}.{expectation.stat}[{name}]"
        if summary is None:
            judged.append(_judge(expectation, None, None, True, label, "s", None))
            continue
        stat = expectation.stat or "median"
        value = getattr(summary, stat)
        if stat == "median":
            assert variant is not None  # it has a summary
            samples = getattr(variant.samples, expectation.quantity)
            if budget is None:
                interval = (summary.ci_low, summary.ci_high) if summary.ci_low is not None and summary.ci_high is not None else None
            else:
                interval = _interval(samples, level)
            stopped_by = result.sampling.stopped_by.value if result.sampling is not None else None
            judged.append(_judge(expectation, value, interval, False, label, "s", summary.n, level, samples, stopped_by))
        else:  # min, max, iqr, ci_low, ci_high: facts about this run's samples, not estimates
            judged.append(_judge(expectation, value, None, True, label, "s", summary.n, level))
    if not judged:
        return Check(expectation.text, NOT_MEASURED, f"{expectation.quantity} was not measured")
    return min(judged, key=lambda check: SEVERITY.index(check.verdict))


# A census check that does not pass names this many of the points it sums, most time blocked first: where to look.
POINTS_NAMED = 3
NO_CENSUS = "not measured: this run took no census of where the step waits (run it with --syncs)"


def census_check(expectation: Expectation, result: Result, budget: Budget | None) -> Check:
    """A check on the census (`run --syncs`): waits or seconds blocked per step, of the whole step or the kind or line
    it names (`at`), for every variant or the one named: the worst verdict among them. Its interval comes from the
    census rounds (verdicts.syncs) at the level the other checks take. A run without a census, or a variant whose
    census could not be taken, is NOT_MEASURED (never a pass); a backend that runs synchronously waits for no device,
    a fact (0) judged as it is. A FILE:LINE where no variant's census saw a wait is INCONCLUSIVE (the module's
    docstring): a variant that never waited at a line another waited at reads 0, a measurement. A verdict short of a
    pass names the points that weigh most."""
    names = [expectation.variant] if expectation.variant else list(result.syncs)
    return census_check_at(expectation, result, level_of(budget, share=len(names)))


def census_check_at(expectation: Expectation, result: Result, level: Level) -> Check:
    """One census check on `result` at `level` (its share of the run's budget): what `census_check` judges, and what
    a results file's stored census check is judged again at, from the confidence it stores (session.census_held)."""
    if not result.syncs:
        return Check(expectation.text, NOT_MEASURED, NO_CENSUS)
    names = [expectation.variant] if expectation.variant else list(result.syncs)
    unit = syncs.SYNC_UNITS[expectation.quantity]
    # a FILE:LINE no variant's census saw a wait at (a kind or the whole step is a name the tool knows: 0 is a fact)
    unseen = syncs.line_named(expectation.at or "") is not None and not any(
        syncs.selects(expectation.at, point) for census in result.syncs.values() for point in census.points
    )
    judged = []
    for name in names:
        variant = f"variant={name}" if len(result.syncs) > 1 or expectation.variant else None
        label = expectation.quantity + (f"[{', '.join(filter(None, (expectation.at, variant)))}]" if expectation.at or variant else "")
        census = result.syncs.get(name)
        if census is None or (census.rounds == 0 and census.note):
            why = census.note if census is not None and census.note else f"no census of variant {name!r}"
            judged.append(Check(expectation.text, NOT_MEASURED, f"{label} was not measured: {why}"))
            continue
        figure = syncs.figure(census, expectation.quantity, expectation.at, level.confidence)
        if figure is not None and expectation.at and unseen:
            wanted = f"expected {expectation.op} {units.quantity(expectation.threshold, unit)}"
            asked = expectation.quantity + f"[{', '.join(filter(None, (expectation.at, expectation.variant and variant)))}]"
            detail = (
                f"{asked}: {wanted}, but no wait at {expectation.at} {UNSEEN} {figure.rounds} census rounds of any variant: a line "
                "that never waits, a misspelled file and a line an edit moved all read 0 there, so 0 decides nothing; "
                "name a line as the census table shows it, or check a kind or the whole step (syncs_per_step[conversion] == 0)"
            )
            judged.append(Check(expectation.text, INCONCLUSIVE, detail, family_error=level.family_error))
            break  # one line for the check as written: no variant saw the line, so none is named that it did not ask for
        if figure is None:  # a synchronous backend: no rounds, nothing waits for a device
            verdict = verdict_of(expectation.op, (0.0, 0.0), expectation.threshold)
            wanted = f"expected {expectation.op} {units.quantity(expectation.threshold, unit)}"
            # every line reads 0 here, a misspelled or moved one too: said, so a pass is not read as the line's own
            lines = "; every FILE:LINE reads 0 here, a misspelled one too" if syncs.line_named(expectation.at or "") else ""
            judged.append(Check(expectation.text, verdict, f"{label} = 0 ({census.coverage}{lines}), {wanted}", 0.0))
            continue
        check = _judge(expectation, figure.value, figure.interval, False, label, unit, figure.rounds, level)
        if check.verdict != PASS and figure.points:
            named = ", ".join(
                f"{os.path.basename(point.file)}:{point.line} ({point.call}, {units.number(point.calls_per_step)} per step)"
                for point in figure.points[:POINTS_NAMED]
            )
            more = f" and {len(figure.points) - POINTS_NAMED} more" if len(figure.points) > POINTS_NAMED else ""
            check = dataclasses.replace(check, detail=f"{check.detail}; waits at {named}{more}")
        judged.append(check)
    return min(judged, key=lambda check: SEVERITY.index(check.verdict))


def inconclusive_why(check: Check) -> str:
    """Why an INCONCLUSIVE check is one, in the words of the run's exit reasons (WHY_*): read from the check as
    stored, so a results file shown later says the same. An interval: it straddles the threshold; none: the cause
    its detail names (too few rounds, rounds that drifted together, a line where no wait was seen)."""
    if check.bounds is not None:
        return WHY_STRADDLES
    for phrase, why in (
        (UNDECIDED, WHY_UNDECIDED),
        (UNSEEN, WHY_UNSEEN),
        (DRIFTED, WHY_DRIFTED),
        (NEEDS, WHY_TOO_FEW),
        (TOO_FEW, WHY_TOO_FEW),
    ):
        if phrase in check.detail:
            return why
    return WHY_NONE


def asks_census(expectations: Sequence[Expectation]) -> bool:
    """Whether any check of a case is on the census: the case then takes census rounds, --syncs or not (as a bound
    check takes its perturbation rounds without --bound: verdicts.bound_checks.asks_bound)."""
    return any(e.quantity in syncs.SYNC_QUANTITIES for e in expectations)


def census_rounds_needed(expectations: Sequence[Expectation], budget: Budget | None, variants: Sequence[str]) -> int:
    """The fewest census rounds from which every census check of a case can have an interval at its level (0: the
    case has none): as `rounds_needed` counts timed rounds for the other checks."""
    shares = [1 if e.variant else max(len(variants), 1) for e in expectations if e.quantity in syncs.SYNC_QUANTITIES]
    if not shares:
        return 0
    return max(rounds_for_median(level_of(budget, share).confidence) for share in shares)


def _interval(values: Sequence[float] | None, level: Level) -> tuple[float, float] | None:
    return stats.median_ci(values, level.confidence) if values else None


def evaluate(
    expectations: tuple[Expectation, ...],
    result: Result,
    budget: Budget | None = None,
    metric_rounds: Mapping[str, Sequence[float]] | None = None,
) -> tuple[Check, ...]:
    """Each check's verdict on `result`: expect, verdict, value, bounds (when there is an interval), detail.

    With a `budget`, intervals are taken at its confidence: a metric's from
    its per-round values (`metric_rounds`), a clock's from its samples.
    A check on a case that did not run, or on a quantity that was not
    measured, is NOT_MEASURED: a gate that cannot be evaluated must not pass.
    """
    checks = []
    for expectation in expectations:
        if result.status != Status.OK:
            what = "errored" if result.status == Status.ERROR else "was skipped"
            check = Check(expectation.text, NOT_MEASURED, f"the case {what}: {result.reason or 'no reason given'}")
        elif expectation.quantity in syncs.SYNC_QUANTITIES and expectation.quantity not in result.metrics:
            check = census_check(expectation, result, budget)
        elif bound_checks.is_bound_check(expectation):
            check = bound_checks.bound_check(expectation, result, budget)
        elif expectation.stat is None:
            rounds = result.sampling.rounds if result.sampling is not None else None
            level = level_of(budget)
            interval = result.bounds.get(expectation.quantity)
            values = (metric_rounds or {}).get(expectation.quantity)
            if budget is not None and expectation.quantity in result.bounds:
                interval = _interval(values, level)
            check = _judge(
                expectation,
                result.metrics.get(expectation.quantity),
                interval,
                expectation.quantity not in result.bounds,
                expectation.quantity,
                result.unit_of(expectation.quantity),
                rounds,
                level,
                values,
                result.sampling.stopped_by.value if result.sampling is not None else None,
            )
        else:
            check = _clock_check(expectation, result, budget)
        checks.append(check)
    return tuple(checks)


def failed(check: Check, allow_inconclusive: bool = False) -> bool:
    """Whether a check fails the gate: failed or not measured; inconclusive too unless allowed."""
    return check.verdict != PASS and not (allow_inconclusive and check.verdict == INCONCLUSIVE)


def rounds_needed(expectations: Sequence[Expectation], budget: Budget, variants: Sequence[str]) -> int:
    """The fewest rounds from which every check of a case can have an interval at the level it is judged at:
    a metric's and a named variant's at the check's share, a clock's over every variant at that share split over
    `variants` (as _clock_check judges it). Statistics other than the median are facts of the samples: no need."""
    shares = [
        1 if expectation.stat is None or expectation.variant else max(len(variants), 1)
        for expectation in expectations
        if expectation.stat in (None, "median") and expectation.quantity not in (*syncs.SYNC_QUANTITIES, *BOUND_QUANTITIES)
    ]
    return max((rounds_for_median(budget.confidence(share)) for share in shares), default=1)


def enough_rounds(settings: Settings, expectations: Sequence[Expectation], budget: Budget | None, variants: Sequence[str]) -> Settings:
    """`settings` with min_samples raised to `rounds_needed` (up to max_samples, a hard cap: then the check says
    how many rounds it needed): sampling then stops neither at its noise target nor at max_time_s before every check
    can be decided, as it never stops before min_samples (timeout_s still ends a case that cannot get there)."""
    if not expectations or budget is None:
        return settings
    needed = min(rounds_needed(expectations, budget, variants), settings.max_samples)
    return dataclasses.replace(settings, min_samples=needed) if needed > settings.min_samples else settings


def decided(checks: Iterable[Check]) -> bool:
    """Whether more samples cannot change any verdict's kind: none is inconclusive."""
    return all(check.verdict != INCONCLUSIVE for check in checks)
