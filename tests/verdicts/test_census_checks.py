"""`expect:` checks on the census (`run --syncs`): waits and seconds blocked per step, whole step, per kind, per line,
judged from the census rounds' interval; never a silent pass where no census was taken."""

from __future__ import annotations

import dataclasses

import pytest

from asyncbench.results import budget
from asyncbench.results.model import OK, Result, Verdict
from asyncbench.results.syncs import Census, SyncKind, SyncPoint
from asyncbench.spec import expect
from asyncbench.verdicts import checks, syncs
from asyncbench.workloads import BUILT_IN

CONVERSION = BUILT_IN["conversion"]
ROUNDS = 8


def _point(
    file: str, line: int, kind: SyncKind, calls: tuple[int, ...], waits: tuple[float, ...], call: str = "jax.Array.item"
) -> SyncPoint:
    return SyncPoint(
        file, line, kind, call, float(sorted(calls)[len(calls) // 2]), sorted(waits)[len(waits) // 2], None, None, calls, waits
    )


PRINTED = _point(
    "/home/me/train.py", 42, SyncKind.PRINT, (10,) * ROUNDS, (0.010, 0.011, 0.012, 0.010, 0.013, 0.011, 0.012, 0.010), "jax.Array.__str__"
)
ITEM = _point("/home/me/train.py", 57, SyncKind.CONVERSION, (1,) * ROUNDS, (1e-4, 2e-4, 1e-4, 1.5e-4, 1e-4, 2e-4, 1e-4, 1e-4))


def _result(censuses: dict[str, Census]) -> Result:
    return Result("c", "conversion", "conversion", "jax", "cpu", {}, OK, syncs=censuses)


def _judge(text: str, result: Result, shared: budget.Budget | None = None):
    (check,) = checks.evaluate((expect.parse(text, CONVERSION),), result, shared)
    return check


WAITING = _result(
    {"print": Census("print", ROUNDS, (PRINTED, ITEM), coverage="jax's hooks"), "none": Census("none", ROUNDS, (), coverage="jax's hooks")}
)


def test_the_whole_step_sums_every_point_round_by_round():
    figure = syncs.figure(WAITING.syncs["print"], syncs.SYNCS_PER_STEP)
    assert figure is not None
    assert figure.value == 11
    assert figure.interval == (11, 11)
    wait = syncs.figure(WAITING.syncs["print"], syncs.SYNC_WAIT_S)
    assert wait is not None
    assert wait.value == pytest.approx(0.0112)  # the median of the rounds' sums
    assert wait.interval == pytest.approx((0.0101, 0.0131))


@pytest.mark.parametrize(
    "text, verdict",
    [
        ("syncs_per_step[variant=none] == 0", Verdict.PASS),
        ("syncs_per_step == 0", Verdict.FAIL),  # every variant must hold: print waits 11 times
        ("syncs_per_step[variant=print] == 11", Verdict.PASS),
        ("syncs_per_step[print] <= 10", Verdict.PASS),  # a kind: print's 10 waits, not the item's
        ("syncs_per_step[print] < 10", Verdict.FAIL),
        ("syncs_per_step[train.py:57] <= 1", Verdict.PASS),  # a line, by the tail of its path
        ("syncs_per_step[train.py:57] == 1", Verdict.FAIL),  # in every variant: none never waits there
        ("syncs_per_step[me/train.py:57, variant=print] == 1", Verdict.PASS),
        ("syncs_per_step[rain.py:57] == 1", Verdict.INCONCLUSIVE),  # a tail starts at a folder: no wait seen there
        ("sync_wait_s[print] < 1ms", Verdict.FAIL),
        ("sync_wait_s[print] < 20ms", Verdict.PASS),
        ("sync_wait_s[print] < 11ms", Verdict.INCONCLUSIVE),  # the interval [10, 13] ms straddles it
        ("sync_wait_s[conversion] < 1ms", Verdict.PASS),
    ],
)
def test_a_census_check_is_judged_from_the_interval_of_what_it_selects(text, verdict):
    assert _judge(text, WAITING).verdict == verdict


def test_a_count_is_equal_only_when_its_whole_interval_is_the_threshold():
    varying = _point("a.py", 1, SyncKind.CONVERSION, (0, 1, 2, 1, 0, 2, 1, 1), (0.0,) * ROUNDS)
    result = _result({"v": Census("v", ROUNDS, (varying,))})
    assert checks.verdict_of("==", (1, 1), 1) == Verdict.PASS
    assert checks.verdict_of("==", (1, 3), 2) == Verdict.INCONCLUSIVE  # 2 is inside: not shown to differ
    assert checks.verdict_of("==", (1, 3), 4) == Verdict.FAIL
    assert _judge("syncs_per_step == 1", result).verdict == Verdict.INCONCLUSIVE
    assert _judge("syncs_per_step == 5", result).verdict == Verdict.FAIL


def test_a_failing_check_names_where_the_step_waited():
    check = _judge("syncs_per_step == 0", WAITING)
    assert "waits at train.py:42 (jax.Array.__str__, 10 per step), train.py:57 (jax.Array.item, 1 per step)" in check.detail
    assert "syncs_per_step[variant=print] = 11 [11–11]" in check.detail


def test_without_a_census_a_census_check_is_not_measured_and_fails_the_gate():
    check = _judge("syncs_per_step == 0", _result({}))
    assert check.verdict == Verdict.NOT_MEASURED
    assert "--syncs" in check.detail
    assert checks.failed(check, allow_inconclusive=True)


def test_a_census_that_could_not_be_taken_is_not_measured():
    result = _result({"print": Census("print", 0, note="no census: the case measured itself in other processes (its ranks)")})
    check = _judge("syncs_per_step == 0", result)
    assert check.verdict == Verdict.NOT_MEASURED
    assert "its ranks" in check.detail


def test_a_synchronous_backend_waits_for_no_device_a_fact_judged_as_it_is():
    why = "numpy runs synchronously: nothing waits for a device"
    result = _result({"print": Census("print", 0, coverage=why)})
    check = _judge("syncs_per_step == 0", result)
    assert check.verdict == Verdict.PASS
    assert why in check.detail
    assert _judge("syncs_per_step >= 1", result).verdict == Verdict.FAIL
    assert "every FILE:LINE reads 0 here" not in check.detail


def test_a_line_check_on_a_synchronous_backend_says_every_line_reads_0_there_a_misspelled_one_too():
    """A trial: `syncs_per_step[nosuch.py:999] == 0` passed on torch's CPU with nothing said of the line, where the
    guide said a line no wait was seen at is INCONCLUSIVE. Nothing waits there, so 0 is the fact for every line: the
    pass stands and says so."""
    result = _result({"print": Census("print", 0, coverage="torch runs synchronously on cpu: nothing waits for a device")})
    check = _judge("syncs_per_step[nosuch.py:999] == 0", result)
    assert check.verdict == Verdict.PASS
    assert "every FILE:LINE reads 0 here, a misspelled one too" in check.detail


def test_too_few_census_rounds_for_the_checks_level_is_inconclusive_and_says_how_many():
    shared = budget.Budget(0.01, 4, 6, 1000)
    few = _result({"print": dataclasses.replace(WAITING.syncs["print"], rounds=ROUNDS)})
    check = _judge("syncs_per_step[variant=print] == 11", few, shared)
    assert check.verdict == Verdict.INCONCLUSIVE
    needed = checks.census_rounds_needed((expect.parse("syncs_per_step[variant=print] == 11", CONVERSION),), shared, ["print", "none"])
    assert needed > ROUNDS
    assert f"8 rounds (it needs {needed})" in check.detail


def test_census_rounds_are_asked_only_for_census_checks_and_timed_rounds_not_for_them():
    shared = budget.Budget(0.05, 2, 6, 1000)
    census_check = expect.parse("syncs_per_step == 0", CONVERSION)
    metric_check = expect.parse("slowdown_item <= 1.5", CONVERSION)
    assert checks.census_rounds_needed((metric_check,), shared, ["none", "item"]) == 0
    assert checks.census_rounds_needed((census_check,), shared, ["none", "item"]) > 6  # past the census's own 6
    assert checks.rounds_needed((census_check,), shared, ["none", "item"]) == 1  # no timed rounds for a census check


def test_a_case_with_a_census_check_takes_census_rounds_without_syncs():
    """As a bound check takes its perturbation rounds without --bound: a gate on where the step waits is measured
    in a run without --syncs, never `not measured` for a flag the config cannot say."""
    from asyncbench.engine.runner import RunOptions
    from asyncbench.results.model import Case, Settings

    census_check, metric_check = expect.parse("syncs_per_step == 0", CONVERSION), expect.parse("slowdown_item <= 1.5", CONVERSION)
    case = Case("c", "e", "conversion", "jax", "cpu", {}, Settings(), expect=(census_check, metric_check))
    assert checks.asks_census(case.expect)
    assert RunOptions().for_case(case, 2).syncs
    assert not RunOptions().for_case(dataclasses.replace(case, expect=(metric_check,)), 1).syncs
    assert RunOptions(syncs=True).for_case(dataclasses.replace(case, expect=()), 0).syncs


def test_a_check_line_that_names_an_interval_shows_it_where_it_is_zero_to_zero():
    """'✓ sync_wait_s[print] < 1ms: sync_wait_s[print] = 0 (99.98% interval)' named an interval and printed none."""
    silent = _point("a.py", 1, SyncKind.PRINT, (1,) * ROUNDS, (0.0,) * ROUNDS, "jax.Array.__str__")
    result = _result({"v": Census("v", ROUNDS, (silent,))})
    check = _judge("sync_wait_s[print] < 1ms", result)
    assert check.verdict == Verdict.PASS
    assert "sync_wait_s[print] = 0 [0–0] (95% interval)" in check.detail, check.detail
