"""`expect:` checks on what bounds the step (verdicts.bound_checks): the reading, a side's slack and share, the
ceiling, judged from the fit's intervals (refitted at the check's level where it is not the stored 95%); what
cannot be evaluated is never a pass."""

from __future__ import annotations

import dataclasses

import pytest

from asyncbench.engine.runner import RunOptions
from asyncbench.results import budget, stats
from asyncbench.results.bound import BoundKind, Side
from asyncbench.results.model import Case, Settings, Verdict
from asyncbench.spec import expect
from asyncbench.verdicts import bound, bound_checks, checks
from asyncbench.workloads import BUILT_IN
from tests.support.bounds import device_bound, host_bound, result_with, synchronous
from tests.verdicts.test_bound import STEPS, planted

WORKLOAD = BUILT_IN["sync_async"]  # its variants: sync, async, queued


def _judge(text: str, *bounds, shared: budget.Budget | None = None):
    (check,) = checks.evaluate((expect.parse(text, WORKLOAD),), result_with(*bounds), shared)
    return check


@pytest.mark.parametrize(
    "text, verdict",
    [
        ("bound == device", Verdict.PASS),
        ("bound == host", Verdict.FAIL),
        ("bound == balanced", Verdict.FAIL),
        # the host's slack: 0.42 ms [0.40-0.44] of a step of 1.1 ms (36-40%)
        ("slack_s[host] >= 300us", Verdict.PASS),
        ("slack_s[host] >= 0.5ms", Verdict.FAIL),
        ("slack_s[host] >= 0.42ms", Verdict.INCONCLUSIVE),
        ("slack_s[device] < 0.1ms", Verdict.PASS),
        ("slack_share[host] >= 30%", Verdict.PASS),
        ("slack_share[host] >= 50%", Verdict.FAIL),
        ("slack_share[host] > 38%", Verdict.INCONCLUSIVE),
        ("ceiling[host] <= 1.10", Verdict.PASS),
    ],
)
def test_a_device_bound_step_is_judged_from_the_fits_intervals(text, verdict):
    check = _judge(text, device_bound("sync"))
    assert check.verdict == verdict, check.detail
    assert check.confidence in (None, stats.CONFIDENCE)  # judged alone: the stored 95% intervals


@pytest.mark.parametrize(
    "text, verdict",
    [("ceiling[host] <= 1.10", Verdict.FAIL), ("ceiling >= 1.3", Verdict.PASS), ("ceiling[host] <= 1.45x", Verdict.INCONCLUSIVE)],
)
def test_the_ceiling_of_cutting_host_work_is_judged_from_its_interval(text, verdict):
    check = _judge(text, host_bound("sync"))
    assert check.verdict == verdict, check.detail
    assert check.bounds == (1.39, 1.47)


def test_an_inconclusive_reading_is_an_inconclusive_check_that_says_why():
    undecided = dataclasses.replace(device_bound("sync"), bound=BoundKind.INCONCLUSIVE, note="device − host slack -9% to 3%")
    check = _judge("bound == device", undecided)
    assert check.verdict == Verdict.INCONCLUSIVE
    assert "device − host slack" in check.detail
    assert checks.inconclusive_why(check) == checks.WHY_UNDECIDED
    assert checks.failed(check)
    assert not checks.failed(check, allow_inconclusive=True)


def test_a_slack_without_an_interval_is_inconclusive_and_says_how_many_rounds_it_needs():
    fit = device_bound("sync")
    few = dataclasses.replace(fit, rounds=3, sides=tuple(dataclasses.replace(s, slack_ci_s=None) for s in fit.sides))
    check = _judge("slack_s[host] >= 1us", few)
    assert check.verdict == Verdict.INCONCLUSIVE
    assert f"(it needs {bound.MIN_ROUNDS})" in check.detail
    assert checks.inconclusive_why(check) == checks.WHY_TOO_FEW


def test_a_slack_that_reaches_the_largest_delay_has_no_upper_end():
    fit = device_bound("sync")
    host = dataclasses.replace(fit.sides[0], slack_s=0.0008, slack_ci_s=(0.00079, 0.0008), levels_s=(0.0002, 0.0008))
    reaching = dataclasses.replace(fit, sides=(host, fit.sides[1]))
    assert _judge("slack_s[host] >= 0.5ms", reaching).verdict == Verdict.PASS
    # at least 0.79 ms, maybe far more: below 0.9 ms cannot pass
    check = _judge("slack_s[host] <= 0.9ms", reaching)
    assert check.verdict == Verdict.INCONCLUSIVE
    assert "reaches the largest delay" in check.detail


@pytest.mark.parametrize("text", ["bound == host", "slack_s[host] >= 0s", "ceiling[host] >= 1"])
def test_a_synchronous_backend_cannot_be_evaluated_and_never_passes(text):
    check = _judge(text, synchronous("sync"))
    assert check.verdict == Verdict.NOT_MEASURED
    assert "cannot be evaluated: synchronous" in check.detail
    assert checks.failed(check, allow_inconclusive=True)


def test_a_case_without_a_bound_or_rounds_cannot_be_evaluated():
    (check,) = checks.evaluate((expect.parse("bound == device", WORKLOAD),), result_with(), None)
    assert check.verdict == Verdict.NOT_MEASURED
    assert bound_checks.NO_BOUND in check.detail
    none_taken = dataclasses.replace(device_bound("sync"), bound=BoundKind.INCONCLUSIVE, rounds=0, sides=(), note="steps >= 2")
    check = _judge("slack_s[host] >= 0s", none_taken)
    assert check.verdict == Verdict.NOT_MEASURED
    assert "no perturbation rounds (steps >= 2)" in check.detail


def test_a_side_not_measured_cannot_be_evaluated_nor_the_ceiling_without_the_device():
    fit = device_bound("sync")
    host_only = dataclasses.replace(fit, sides=(fit.sides[0],), ceiling=None, ceiling_ci=None, note="no device delay on MXNet")
    for text in ("slack_s[device] < 1ms", "ceiling[host] <= 1.1"):
        check = _judge(text, host_only)
        assert check.verdict == Verdict.NOT_MEASURED
        assert "the device's delay was not measured here (no device delay on MXNet)" in check.detail
    assert _judge("slack_s[host] >= 300us", host_only).verdict == Verdict.PASS


def test_a_check_without_a_variant_takes_the_worst_and_one_with_a_variant_its_own():
    both = (device_bound("sync"), dataclasses.replace(host_bound("async")))
    assert _judge("bound == device", *both).verdict == Verdict.FAIL
    assert _judge("bound[sync] == device", *both).verdict == Verdict.PASS
    assert _judge("slack_s[device, variant=async] > 0.2ms", *both).verdict == Verdict.PASS


def test_at_a_runs_level_the_fit_is_redone_from_the_observations_with_wider_intervals():
    observations, slack = planted(0.6, 1.0, rounds=30)
    fitted = bound.fit("sync", observations, True, steps_per_call=STEPS)
    assert fitted.bound == BoundKind.DEVICE
    shared = budget.Budget(budget.FAMILY_ERROR, 4, 10, 100)
    check = _judge("slack_s[host] >= 0.1ms", fitted, shared=shared)
    assert check.verdict == Verdict.PASS, check.detail
    assert check.confidence == pytest.approx(shared.confidence())
    assert check.bounds is not None
    assert fitted.sides[0].slack_ci_s is not None
    stored_low, stored_high = fitted.sides[0].slack_ci_s
    assert check.bounds[0] <= stored_low
    assert check.bounds[1] >= stored_high
    assert check.bounds[1] - check.bounds[0] > stored_high - stored_low
    assert check.bounds[0] <= slack[Side.HOST] <= check.bounds[1]
    assert _judge("bound == device", fitted, shared=shared).verdict == Verdict.PASS


def test_a_case_with_a_bound_check_takes_perturbation_rounds_enough_for_its_level():
    parsed = (expect.parse("slack_s[host] >= 1ms", WORKLOAD), expect.parse("speedup >= 1", WORKLOAD))
    shared = budget.Budget(budget.FAMILY_ERROR, 2, 6, 100)
    needed = bound_checks.bound_rounds_needed(parsed, shared, ["sync", "async"])
    assert needed == budget.rounds_for_median(shared.confidence(2)) > bound.MIN_ROUNDS
    assert bound_checks.bound_rounds_needed(parsed[1:], shared, ["sync"]) == 0
    assert bound_checks.bound_rounds_needed(parsed[:1], None, ["sync"]) == 6  # 95%: an order-statistic interval needs six
    # the bound check asks nothing of the timed rounds
    assert checks.rounds_needed(parsed[:1], shared, ["sync"]) == 1
    case = Case("c", "e", "sync_async", "numpy", "cpu", {}, Settings(), expect=parsed)
    assert RunOptions().for_case(case, 2).bound
    assert not RunOptions().for_case(dataclasses.replace(case, expect=parsed[1:]), 1).bound
