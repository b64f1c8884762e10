"""A threshold check on the slack is judged by the delay as run, not only by the level it asked for
(verdicts.bound_levels.margins): `ceiling[host] <= 1.10` on a JAX CPU step passed with a device delay of 94.3 µs
that ran 156 µs, whose slowdown [15.9–454] µs only shows a slack under ~156 µs; a `>=` check whose delay ran short
passed on no slowdown. A delay that ran as asked keeps the verdict it had; a results file written before the rule
(no `delay_as_run_s` on its checks) still reads, judged by the rule it was written under."""

from __future__ import annotations

import dataclasses
import json

import pytest

from asyncbench.results import stats
from asyncbench.results.bound import Perturbed, Side
from asyncbench.results.model import Result, Verdict
from asyncbench.results.schema import Report
from asyncbench.session import reading
from asyncbench.spec import expect
from asyncbench.verdicts import bound, bound_levels, checks
from tests.support.bounds import result_with
from tests.support.helpers import report_of
from tests.verdicts.test_bound_levels import WORKLOAD

STEPS = 5
#: the step the levels were set from: a ceiling of 1.10 asks for a device delay of (1 − 1/1.1) of it, 94.3 µs
SCALE_S = 94.3e-6 / (1 - 1 / 1.1)
#: per round, the slowdown beyond the 1/5 of the delay that always shows: median 112 µs, 95% interval [15.9, 454]
SLOWDOWNS_US = (5.0, 10.0, 15.9, 40.0, 80.0, 100.0, 124.0, 200.0, 300.0, 454.0, 500.0, 600.0)


def _result(side: Side, level_s: float, run_s: float, slowdowns_us: tuple[float, ...] = SLOWDOWNS_US) -> Result:
    """Rounds whose delay on `side`, asked at `level_s`, ran `run_s`, and slowed the step by `slowdowns_us` (µs)."""
    observations = []
    for r, slowdown in enumerate(slowdowns_us):
        base = SCALE_S * (1 + 0.03 * (r % 4))
        observations.append(Perturbed(r, None, 0.0, 0.0, base))
        observations.append(Perturbed(r, side, level_s, run_s, base + run_s / STEPS + slowdown * 1e-6))
    return result_with(bound.fit("sync", observations, True, steps_per_call=STEPS, scale_s=SCALE_S))


def _judge(text: str, result: Result):
    (check,) = checks.evaluate((expect.parse(text, WORKLOAD),), result, None)
    return check


def _ceiling_level() -> float:
    return (1 - 1 / 1.1) * SCALE_S


def test_the_interval_is_the_one_the_user_saw():
    assert stats.median_ci([s * 1e-6 for s in SLOWDOWNS_US]) == pytest.approx((15.9e-6, 454e-6))


def test_a_ceiling_at_most_does_not_pass_on_a_delay_that_ran_longer_than_asked():
    check = _judge("ceiling[host] <= 1.10", _result(Side.DEVICE, _ceiling_level(), 156e-6))
    # the slowdown under 156 µs shows a slack under ~156 µs, not under 94.3 µs: 10% of the level plus what it ran over
    assert check.verdict == Verdict.INCONCLUSIVE, check.detail
    assert "(as run: 156 µs)" in check.detail
    assert "plus the 61.7 µs it ran over (71.1 µs)" in check.detail
    assert check.delay_as_run_s == pytest.approx(156e-6)


def test_a_delay_that_ran_as_asked_keeps_its_verdict():
    check = _judge("ceiling[host] <= 1.10", _result(Side.DEVICE, _ceiling_level(), _ceiling_level()))
    assert check.verdict == Verdict.PASS, check.detail
    assert "more than 10% of the delay (9.43 µs): the device does not have that much slack" in check.detail
    assert "ran over" not in check.detail
    assert "ran short" not in check.detail


def test_a_slowdown_past_the_over_run_still_fails_a_slack_at_least():
    # 10% of 94.3 µs plus the 61.7 µs it ran over: a slowdown wholly above 71.1 µs shows a slack under 94.3 µs
    check = _judge("slack_s[device] >= 94.3us", _result(Side.DEVICE, 94.3e-6, 156e-6, tuple(s + 80 for s in SLOWDOWNS_US)))
    assert check.verdict == Verdict.FAIL, check.detail
    assert "more than 10% of the delay (9.43 µs) plus the 61.7 µs it ran over (71.1 µs)" in check.detail


# no slowdown: within 10% of a 60 µs delay, not of 100 µs less the 40 µs it ran short
FLAT_US = (-3.0, -2.0, -1.0, -0.5, 0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 5.0)


def test_a_slack_at_least_does_not_pass_on_a_delay_that_ran_shorter_than_asked():
    check = _judge("slack_s[host] >= 100us", _result(Side.HOST, 100e-6, 60e-6, FLAT_US))
    assert check.verdict == Verdict.INCONCLUSIVE, check.detail
    assert "less the 40.0 µs it ran short" in check.detail


def test_a_slack_at_least_passes_on_no_slowdown_of_a_delay_that_ran_as_asked():
    check = _judge("slack_s[host] >= 100us", _result(Side.HOST, 100e-6, 100e-6, FLAT_US))
    assert check.verdict == Verdict.PASS, check.detail


def test_the_margins_follow_the_hinge():
    assert bound_levels.margins(100e-6, 100e-6) == bound_levels.Margins(pytest.approx(10e-6), pytest.approx(10e-6))
    assert bound_levels.margins(100e-6, 150e-6) == bound_levels.Margins(pytest.approx(10e-6), pytest.approx(60e-6))
    assert bound_levels.margins(100e-6, 70e-6) == bound_levels.Margins(pytest.approx(-20e-6), pytest.approx(10e-6))


def _read(raw: dict) -> Report:
    return reading.reverified(Report.from_dict(raw, "older.json"), "older.json")


def test_a_file_written_before_the_delay_as_run_was_held_to_still_reads_by_its_rule():
    result = _result(Side.DEVICE, _ceiling_level(), 156e-6)
    check = _judge("ceiling[host] <= 1.10", result)
    # as the older rule judged it: 10% of the delay as run (15.6 µs), below the interval's 15.9 µs: a pass
    older = dataclasses.replace(check, verdict=Verdict.PASS, delay_as_run_s=None)
    raw = json.loads(report_of([dataclasses.replace(result, checks=(older,))]).to_json())
    assert "delay_as_run_s" not in raw["results"][0]["checks"][0]
    (read,) = _read(raw).results
    assert read.checks[0].verdict == Verdict.PASS
    assert "10% of the delay as run (15.6 µs: the rule its file was written under)" in read.checks[0].detail
    # and a file written now reads back as run judged it
    raw = json.loads(report_of([dataclasses.replace(result, checks=(check,))]).to_json())
    assert raw["results"][0]["checks"][0]["delay_as_run_s"] == pytest.approx(156e-6)
    (again,) = _read(raw).results
    assert again.checks == (check,)
