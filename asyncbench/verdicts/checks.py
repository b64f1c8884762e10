"""Verdicts of `expect:` checks: pass, fail or inconclusive from the 95% interval of what is checked.

PASS when the whole interval (a metric's bounds, a clock median's CI)
satisfies the check, FAIL when the whole of it violates it, INCONCLUSIVE
when it straddles the threshold (or there were too few rounds for an
interval), NOT_MEASURED when the case did not run or the quantity does not
exist. Single measurements (memory) and sample statistics (min, max, ...)
are compared as they are. Units come from the result itself.
"""

from __future__ import annotations

import operator
from typing import Callable, Iterable

from asyncbench.results import units
from asyncbench.results.model import Check, Expectation, Result, Status, Verdict

OPERATORS: dict[str, Callable[[float, float], bool]] = {"<": operator.lt, "<=": operator.le, ">": operator.gt, ">=": operator.ge}
PASS, FAIL, INCONCLUSIVE, NOT_MEASURED = Verdict.PASS, Verdict.FAIL, Verdict.INCONCLUSIVE, Verdict.NOT_MEASURED
#: worst first: a clock check over several variants takes the worst verdict among them
SEVERITY = (FAIL, NOT_MEASURED, INCONCLUSIVE, PASS)
# A value this many times the threshold away is said as a multiple, not a percentage.
FAR_MISS = 10.0


def verdict_of(op: str, interval: tuple[float, float], threshold: float) -> Verdict:
    """PASS when the whole interval satisfies the comparison, FAIL when the whole of it violates it, else INCONCLUSIVE."""
    holds = OPERATORS[op]
    low, high = interval
    if holds(low, threshold) and holds(high, threshold):
        return PASS
    if not holds(low, threshold) and not holds(high, threshold):
        return FAIL
    return INCONCLUSIVE


def _by_how_much(value: float, threshold: float) -> str:
    """'over by 40%', 'short by 20%', or '3761× the threshold' for a far miss (never '3.76e+05%')."""
    if not threshold:
        return ""
    off = abs(value - threshold) / abs(threshold)
    if off >= FAR_MISS:
        return f" ({units.number(value / threshold)}× the threshold)"
    return f" ({'over' if value > threshold else 'short'} by {units.percent(off, 3)})"


def _judge(
    expectation: Expectation,
    value: float | None,
    interval: tuple[float, float] | None,
    point: bool,
    label: str,
    unit: str,
    rounds: int | None,
) -> Check:
    """One check's verdict on one measured quantity: its value and 95% interval (or a single measurement: `point`)."""
    wanted = f"expected {expectation.op} {units.quantity(expectation.threshold, unit)}"
    if value is None:
        return Check(expectation.text, NOT_MEASURED, f"{label} was not measured")
    if point:
        verdict = verdict_of(expectation.op, (value, value), expectation.threshold)
        shown = f"{label} = {units.quantity(value, unit)} (one measurement, no interval), {wanted}"
    elif interval is None:
        verdict = INCONCLUSIVE
        few = f"{rounds} round{'' if rounds == 1 else 's'}" if rounds is not None else "too few rounds"
        shown = f"{label} = {units.quantity(value, unit)}, {wanted}: no 95% interval from {few} (6 are needed)"
    else:
        verdict = verdict_of(expectation.op, interval, expectation.threshold)
        shown = f"{label} = {units.with_bounds(value, interval, unit)}, {wanted}"
        if verdict == INCONCLUSIVE:
            shown += ": the 95% interval straddles the threshold; more rounds (max_time_s) may decide it"
    if verdict == FAIL:
        shown += _by_how_much(value, expectation.threshold)
    return Check(expectation.text, verdict, shown, value, interval if not point else None)


def _clock_check(expectation: Expectation, result: Result) -> Check:
    """A clock's statistic must hold for every variant (or the named one): the verdict of the worst."""
    names = [expectation.variant] if expectation.variant else list(result.variants)
    judged = []
    for name in names:
        variant = result.variants.get(name)
        stats = getattr(variant, expectation.quantity) if variant is not None else None
        label = f"{expectation.quantity}.{expectation.stat}[{name}]"
        if stats is None:
            judged.append(_judge(expectation, None, None, True, label, "s", None))
            continue
        stat = expectation.stat or "median"
        value = getattr(stats, stat)
        if stat == "median":
            interval = (stats.ci_low, stats.ci_high) if stats.ci_low is not None and stats.ci_high is not None else None
            judged.append(_judge(expectation, value, interval, False, label, "s", stats.n))
        else:  # min, max, iqr, ci_low, ci_high: facts about this run's samples, not estimates
            judged.append(_judge(expectation, value, None, True, label, "s", stats.n))
    if not judged:
        return Check(expectation.text, NOT_MEASURED, f"{expectation.quantity} was not measured")
    return min(judged, key=lambda check: SEVERITY.index(check.verdict))


def evaluate(expectations: tuple[Expectation, ...], result: Result) -> tuple[Check, ...]:
    """Each check's verdict on `result`: expect, verdict, value, bounds (when there is an interval), detail.

    A check on a case that did not run, or on a quantity that was not
    measured, is NOT_MEASURED: a gate that cannot be evaluated must not pass.
    """
    checks = []
    for expectation in expectations:
        if result.status != Status.OK:
            what = "errored" if result.status == Status.ERROR else "was skipped"
            check = Check(expectation.text, NOT_MEASURED, f"the case {what}: {result.reason or 'no reason given'}")
        elif expectation.stat is None:
            rounds = result.sampling.rounds if result.sampling is not None else None
            check = _judge(
                expectation,
                result.metrics.get(expectation.quantity),
                result.bounds.get(expectation.quantity),
                expectation.quantity not in result.bounds,
                expectation.quantity,
                result.unit_of(expectation.quantity),
                rounds,
            )
        else:
            check = _clock_check(expectation, result)
        checks.append(check)
    return tuple(checks)


def failed(check: Check, allow_inconclusive: bool = False) -> bool:
    """Whether a check fails the gate: failed or not measured; inconclusive too unless allowed."""
    return check.verdict != PASS and not (allow_inconclusive and check.verdict == INCONCLUSIVE)


def decided(checks: Iterable[Check]) -> bool:
    """Whether more samples cannot change any verdict's kind: none is inconclusive."""
    return all(check.verdict != INCONCLUSIVE for check in checks)
