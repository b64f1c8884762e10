"""A results file's checks on the bound judged again from the file's own perturbation rounds, on reading.

`run` judges a check on the bound (`bound == device`, `slack_s[host] >= 1ms`, `slack_share[host] >= 20%`,
`ceiling[host] <= 1.10`) from the stored bound's observations at the check's level (verdicts.bound_checks), and
stores the level with it (`confidence`, `family_error`). docs/guides/bound.md promises that a results file's checks
are judged again the same way: results.check_rule holds a plain check to its own interval, but it cannot judge a
bound check (that needs the fit and the paired slowdowns of verdicts/, above results/), so it is done here, where
session.reading rebuilds the file's readings. A stored check whose verdict, interval or value is not what judging it
again gives (a verdict "inconclusive" edited to "pass" beside a detail that says the interval straddles) is refused
(InputError naming the file and the check's key: exit 2); a genuine one is shown with the detail judging it again
words, so what `show` prints is what the tool says of those figures.

A threshold check on the slack is judged by the delay as run (verdicts.bound_levels), and stores it
(`delay_as_run_s`, held to the file's rounds); one stored before that (no `delay_as_run_s`) is judged again by the
rule it was written under, against 10% of the delay as run alone (bound_levels.legacy_margins), so an older file
still reads.

What cannot be judged again, and is shown as stored: a check that stores no level (an INCONCLUSIVE one with no
interval, too few rounds for one: it decides nothing, and its level is not stored), and a NOT_MEASURED one with none
(nothing was judged). Such an INCONCLUSIVE check's `value`, `delay_as_run_s` and `rounds` do not depend on its level
(the median slowdown of its rounds, the delay they ran, how many there were): those are held to the rounds all the
same (a `value` of 0.0 beside a detail saying the delay slowed the step by 99 µs was shown); its detail, which names
the level, is shown as stored. A PASS or FAIL with no level is refused: it was judged at one, and without it the file's
rounds cannot say whether they decide it.
"""

from __future__ import annotations

import dataclasses

from asyncbench.results import check_rule
from asyncbench.results.fields import At
from asyncbench.results.model import Check, Expectation, Result, Status, Verdict
from asyncbench.spec import expect
from asyncbench.verdicts import bound_checks
from asyncbench.verdicts.judging import Level

#: how far a re-judged interval's ends or value may lie from the stored ones: the same computation on the same
#: numbers (order statistics of stored paired slowdowns; a reading refitted as `run` fits it), apart from the float
#: arithmetic of another machine (session.reading's REFIT_ROUNDING_S for a time); an edit that shows moves it by more
ROUNDING_S = 5e-9
RELATIVE = 1e-9


def rejudged(result: Result, at: At) -> Result:
    """`result` with each stored check on the bound judged again from its stored bound at its stored level; InputError
    (at the check's key) where the stored verdict, interval or value is not what that gives."""
    if result.status != Status.OK or not result.checks:
        return result
    checks = tuple(_held(check, result, at / "checks" / index) for index, check in enumerate(result.checks))
    changed = any(new is not old for new, old in zip(checks, result.checks, strict=True))
    return dataclasses.replace(result, checks=checks) if changed else result


def _held(check: Check, result: Result, at: At) -> Check:
    expectation = _expectation(check.expect, result, at / "expect")
    if expectation is None:  # not a check on the bound: results.check_rule holds it to its own interval
        return check
    if check.confidence is None:
        if check.verdict in (Verdict.PASS, Verdict.FAIL):
            (at / "confidence").fail(
                f"a {str(check.verdict)!r} of {check.expect!r} with no confidence: it is judged at one from the stored "
                "perturbation rounds, and without it they cannot say whether they decide it"
            )
        if check.verdict == Verdict.INCONCLUSIVE:
            _figures_held(check, expectation, result, at)
        return check  # INCONCLUSIVE for want of an interval, or NOT_MEASURED: nothing decided, its level not stored
    # a check stored before checks were judged by the delay as run stores none: it is judged by the rule it was written under
    as_run = check.delay_as_run_s is not None
    again = bound_checks.bound_check_at(expectation, result, Level(check.confidence, check.family_error), as_run=as_run)
    decided = check.verdict in (Verdict.PASS, Verdict.FAIL)
    if again.verdict == Verdict.NOT_MEASURED and decided and _ceiling_on_shared_cores(expectation, result):
        # a ceiling judged before a device sharing the host's cores had none (its stored PASS or FAIL, by the rule then):
        # read as the rule reads it now, not refused as a forged verdict would be
        return again
    if again.verdict != check.verdict:
        (at / "verdict").fail(
            f"{str(check.verdict)!r} is not what {check.expect!r} judged again from the file's own perturbation rounds "
            f"at its {check.confidence:.6g} confidence gives ({str(again.verdict)!r})"
        )
    if not _close(check.bounds, again.bounds) or not _close(_one(check.value), _one(again.value)):
        key = "bounds" if not _close(check.bounds, again.bounds) else "value"
        (at / key).fail(
            f"{check.expect!r}: its {key} are not what judging it again from the file's own perturbation rounds gives "
            f"({again.bounds if key == 'bounds' else again.value})"
        )
    if as_run and not _close(_one(check.delay_as_run_s), _one(again.delay_as_run_s)):
        (at / "delay_as_run_s").fail(
            f"{check.expect!r}: its delay as run is not what the file's own perturbation rounds give ({again.delay_as_run_s})"
        )
    if check.rounds is not None and again.rounds is not None and check.rounds != again.rounds:
        (at / "rounds").fail(f"{check.rounds} rounds: the file's bound holds {again.rounds} for {check.expect!r}")
    return check if again.detail == check.detail else dataclasses.replace(check, detail=again.detail)


def _figures_held(check: Check, expectation: Expectation, result: Result, at: At) -> None:
    """An INCONCLUSIVE check with no level stored (its rounds too few for an interval at it) held where its figures do
    not depend on the level: its `value` (the median slowdown of its rounds), `delay_as_run_s` (the delay its rounds
    ran) and `rounds` are what the stored perturbation rounds give at any level, so they are judged again at the
    level alone (95%, which only their interval depends on); a check that judging again finds nothing to measure
    (NOT_MEASURED, no value: a reading's check) has no figures of its rounds to hold."""
    as_run = check.delay_as_run_s is not None
    again = bound_checks.bound_check_at(expectation, result, Level(family_error=check.family_error), as_run=as_run)
    if again.verdict == Verdict.NOT_MEASURED or again.value is None:
        return
    for key, stored, given in (("value", check.value, again.value), ("delay_as_run_s", check.delay_as_run_s, again.delay_as_run_s)):
        if (key == "value" or as_run) and not _close(_one(stored), _one(given)):
            (at / key).fail(
                f"{check.expect!r}: its {key} ({stored!r}) is not what the file's own perturbation rounds give ({given!r}), at any level"
            )
    if check.rounds is not None and again.rounds is not None and check.rounds != again.rounds:
        (at / "rounds").fail(f"{check.rounds} rounds: the file's bound holds {again.rounds} for {check.expect!r}")


def _ceiling_on_shared_cores(expectation: Expectation, result: Result) -> bool:
    """Whether `expectation` is a check of the ceiling on a case whose device shares the host's cores (every stored
    bound of the case says so: verdicts.bound_checks judges such a check NOT_MEASURED since it was so)."""
    bounds = result.bound or {}
    return expectation.quantity == bound_checks.CEILING and bool(bounds) and all(b.shares_cores for b in bounds.values())


def _one(value: float | None) -> tuple[float, float] | None:
    return None if value is None else (value, value)


def _close(stored: tuple[float, float] | None, again: tuple[float, float] | None) -> bool:
    if stored is None or again is None:
        return stored is None and again is None
    return all(abs(a - b) <= ROUNDING_S + RELATIVE * abs(b) for a, b in zip(stored, again, strict=True))


def _expectation(text: str, result: Result, at: At) -> Expectation | None:
    """A stored check's text as spec.expect parsed it when `run` judged it, where it is a check on the bound (None:
    any other check, which results.check_rule holds to its own interval). Its variant is not held to the workload's
    (reading a file imports no workload): the file's text was held to them when it was run. InputError (at `at`, the
    check's `expect`) for a text that names a bound quantity but is no check on the bound, unless it is the plain
    check of a metric of that name (results.check_rule's rule): `run` never judged it, so its verdict says nothing."""
    named = expect.QUANTITY.match(text)
    if named is None or named[1] not in bound_checks.BOUND_QUANTITIES:
        return None
    try:
        return expect.bound_check(text)
    except ValueError as error:
        split = check_rule.CHECK.fullmatch(text)
        if split is not None and split["quantity"] in result.metrics and split["stat"] is None and split["variant"] is None:
            return None  # a metric named like a bound quantity: results.check_rule holds it as a threshold check
        at.fail(f"{text[:120]!r} is no check a run judges: {str(error)[:240]}")
