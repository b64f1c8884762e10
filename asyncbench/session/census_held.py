"""A results file's checks on the census judged again from the file's own census rounds, on reading.

`run` judges a census check (`sync_wait_s < 100us`, `syncs_per_step[conversion] == 0`) from the census's rounds at
the check's level (verdicts.checks.census_check) and stores the level with it (`confidence`, `family_error`). The
schema doc holds a census check's figures to its census as a metric check's are held to its case's figure, but
results.case_held passes a census figure over (it cannot sum a census's rounds: that is verdicts.syncs, above
results/), and results.check_detail holds a check's detail only to its own value: a census edited consistently
(every round, its median and its interval 50 µs) under a check left as stored (`✗ sync_wait_s = 9.30 ms`) was shown
as both. So it is done here, beside session.check_held's bound checks: a stored census check whose verdict, value or
interval is not what judging it again from the stored census gives is refused (InputError naming the check's key:
exit 2); a genuine one is shown as stored, which is what judging it again gives.

Only in a file of the schema version whose rules judge now (session.reading.HELD_FROM_SCHEMA, 12, the one whose
details are held to their fields too): an older file's census checks were judged and worded by the rules then, and
are shown as stored. What cannot be judged again, and is shown as stored: a check that stores no level (a NOT_MEASURED one: no census
was taken, nothing was judged). A PASS or FAIL with no level is refused, as a bound check's is.
"""

from __future__ import annotations

from asyncbench.results.fields import At
from asyncbench.results.model import Check, Result, Status, Verdict
from asyncbench.spec import expect
from asyncbench.verdicts import checks
from asyncbench.verdicts.judging import Level

#: how far a re-judged value or interval end may lie from the stored one: the same sums and order statistics of the
#: same stored rounds, written to JSON and read back exactly, apart from the float arithmetic of another machine
#: (a sum of per-point rounds in another order); an edit a reader would see moves it by far more
ROUNDING = 5e-12
RELATIVE = 1e-9


def rejudged(result: Result, at: At) -> Result:
    """`result` as stored, each census check held to what judging it again from the stored census at its stored
    level gives; InputError (at the check's key) where the stored verdict, value or interval is not that."""
    if result.status != Status.OK:
        return result
    for index, check in enumerate(result.checks):
        _held(check, result, at / "checks" / index)
    return result


def _held(check: Check, result: Result, at: At) -> None:
    if check.expect.split("[")[0].strip() in result.metrics:
        return  # a workload's metric named like a census quantity: results.check_rule holds it as a threshold check
    try:
        expectation = expect.census_check(check.expect)
    except ValueError as error:
        (at / "expect").fail(f"{check.expect[:120]!r} is no check a run judges: {str(error)[:240]}")
    if expectation is None:
        return
    if check.confidence is None:
        if check.verdict in (Verdict.PASS, Verdict.FAIL):
            (at / "confidence").fail(
                f"a {str(check.verdict)!r} of {check.expect!r} with no confidence: it is judged at one from the stored "
                "census rounds, and without it they cannot say whether they decide it"
            )
        return
    again = checks.census_check_at(expectation, result, Level(check.confidence, check.family_error))
    said = f"{check.expect!r} judged again from the file's own census at its {check.confidence:.6g} confidence gives"
    if again.verdict != check.verdict:
        (at / "verdict").fail(f"{str(check.verdict)!r} is not what {said} ({str(again.verdict)!r})")
    if not _close(_one(check.value), _one(again.value)):
        (at / "value").fail(f"{check.value!r} is not what {said} ({again.value!r}): the census it reports on says another figure")
    if not _close(check.bounds, again.bounds):
        (at / "bounds").fail(f"{check.bounds!r} is not what {said} ({again.bounds!r}): the census it reports on says another interval")


def _one(value: float | None) -> tuple[float, float] | None:
    return None if value is None else (value, value)


def _close(stored: tuple[float, float] | None, again: tuple[float, float] | None) -> bool:
    if stored is None or again is None:
        return stored is None and again is None
    return all(abs(a - b) <= ROUNDING + RELATIVE * abs(b) for a, b in zip(stored, again, strict=True))
