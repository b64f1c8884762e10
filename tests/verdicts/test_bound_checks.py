"""`expect:` checks on what bounds the step (verdicts.bound_checks): the reading, judged from the fit (refitted at the
check's level where it is not the stored 95%); what cannot be evaluated is never a pass. A threshold check on the
slack is judged at its own level: tests/verdicts/test_bound_levels.py."""

from __future__ import annotations

import dataclasses

import pytest

from asyncbench.engine.runner import RunOptions
from asyncbench.errors import InputError
from asyncbench.results import budget, check_rule, records, units
from asyncbench.results.bound import BoundKind
from asyncbench.results.fields import At
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
    "text, verdict", [("bound == device", Verdict.PASS), ("bound == host", Verdict.FAIL), ("bound == balanced", Verdict.FAIL)]
)
def test_the_reading_is_judged_from_the_fit(text, verdict):
    check = _judge(text, device_bound("sync"))
    assert check.verdict == verdict, check.detail
    assert check.bounds is None  # a reading has no interval of its own: what it came from is stored instead
    assert (check.rounds, check.confidence) == (6, pytest.approx(0.95))


def test_a_reading_from_too_few_rounds_for_its_level_is_inconclusive_as_the_threshold_checks_are():
    """7 rounds at 99.98%: `bound == device` passed while the threshold checks on the same rounds said 'too few for a
    99.98% interval (it needs 14)', and the file stored nothing the 99.98% intervals came from."""
    observations, _ = planted(0.6, 1.0, rounds=7)
    fitted = bound.fit("sync", observations, True, steps_per_call=STEPS)
    shared = budget.Budget(budget.FAMILY_ERROR, 4, 10, 100)
    level = checks.level_of(shared, share=1)
    needed = bound_checks.reading_rounds_needed(level.confidence)
    assert needed > 7
    check = _judge("bound == device", fitted, shared=shared)
    assert check.verdict == Verdict.INCONCLUSIVE, check.detail
    assert f"too few rounds for a {level.name} reading (it needs {needed})" in check.detail
    assert checks.inconclusive_why(check) == checks.WHY_TOO_FEW
    assert (check.rounds, check.confidence) == (7, level.confidence)
    # a case with it takes the rounds it needs
    parsed = (expect.parse("bound == device", WORKLOAD),)
    assert bound_checks.bound_rounds_needed(parsed, shared, ["sync"]) == needed
    # and a file whose reading check says it passed from those rounds is refused on reading
    stored = records.check_to_dict(dataclasses.replace(check, verdict=Verdict.PASS))
    assert stored["rounds"] == 7
    with pytest.raises(InputError, match=f"needs {needed}"):
        check_rule.held_to_its_rule(stored, At("checks[0]"), (), ())
    decided = records.check_to_dict(dataclasses.replace(check, verdict=Verdict.PASS, rounds=needed))
    check_rule.held_to_its_rule(decided, At("checks[0]"), (), ())
    assert records.check_from_dict(decided).rounds == needed


def test_an_inconclusive_reading_is_an_inconclusive_check_that_says_why():
    undecided = dataclasses.replace(device_bound("sync"), bound=BoundKind.INCONCLUSIVE, note="device − host slack -9% to 3%")
    check = _judge("bound == device", undecided)
    assert check.verdict == Verdict.INCONCLUSIVE
    assert "device − host slack" in check.detail
    assert checks.inconclusive_why(check) == checks.WHY_UNDECIDED
    assert checks.failed(check)
    assert not checks.failed(check, allow_inconclusive=True)


@pytest.mark.parametrize("text", ["bound == host", "slack_s[host] >= 1us", "ceiling[host] >= 1.1"])
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
    check = _judge("slack_s[host] >= 1us", none_taken)
    assert check.verdict == Verdict.NOT_MEASURED
    assert "no perturbation rounds (steps >= 2)" in check.detail


def test_a_side_not_measured_cannot_be_evaluated_nor_the_ceiling_without_the_device():
    fit = device_bound("sync")
    host_only = dataclasses.replace(fit, sides=(fit.sides[0],), ceiling=None, ceiling_ci=None, note="no device delay on MXNet")
    for text in ("slack_s[device] < 1ms", "ceiling[host] <= 1.1"):
        check = _judge(text, host_only)
        assert check.verdict == Verdict.NOT_MEASURED
        assert "the device's delay was not measured here (no device delay on MXNet)" in check.detail
    assert _judge("slack_s[host] >= 200us", host_only).verdict == Verdict.PASS  # one of its levels


def test_a_check_without_a_variant_takes_the_worst_and_one_with_a_variant_its_own():
    both = (device_bound("sync"), dataclasses.replace(host_bound("async")))
    assert _judge("bound == device", *both).verdict == Verdict.FAIL
    assert _judge("bound[sync] == device", *both).verdict == Verdict.PASS
    assert _judge("bound[variant=async] == host", *both).verdict == Verdict.PASS


def test_at_a_runs_level_the_reading_is_refitted_from_the_observations():
    observations, _ = planted(0.6, 1.0, rounds=30)
    fitted = bound.fit("sync", observations, True, steps_per_call=STEPS)
    assert fitted.bound == BoundKind.DEVICE
    shared = budget.Budget(budget.FAMILY_ERROR, 4, 10, 100)
    check = _judge("bound == device", fitted, shared=shared)
    assert check.verdict == Verdict.PASS, check.detail
    assert f"({units.confidence(shared.confidence())} intervals)" in check.detail


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


def test_a_reading_check_at_the_checks_level_names_it_beside_the_tables_reading():
    """The check line said "the fit's reading is INCONCLUSIVE" while the bound table directly below it printed
    DEVICE-BOUND: the check reads at the run's level for its checks, the table at 95%. The line names both."""
    observations, _ = planted(0.88, 1.0, rounds=30, noise=0.04)
    fitted = bound.fit("sync", observations, True, steps_per_call=STEPS)
    assert fitted.bound == BoundKind.DEVICE  # the table's reading
    shared = budget.Budget(budget.FAMILY_ERROR, 4, 10, 100)
    level = checks.level_of(shared, share=1)
    check = _judge("bound == host", fitted, shared=shared)
    assert check.verdict == Verdict.INCONCLUSIVE, check.detail
    assert "the fit's reading is INCONCLUSIVE" not in check.detail
    said = f"at the checks' {level.name} level the reading is INCONCLUSIVE (the table's 95% reading: DEVICE-BOUND)"
    assert said in check.detail
    assert checks.inconclusive_why(check) == checks.WHY_UNDECIDED
    # alone (95%, the table's own level) there is nothing to set beside it
    undecided = dataclasses.replace(device_bound("sync"), bound=BoundKind.INCONCLUSIVE, note="device − host slack -9% to 3%")
    alone = _judge("bound == device", undecided)
    assert "the reading is INCONCLUSIVE" in alone.detail
    assert "table's" not in alone.detail


@pytest.mark.parametrize("text", ["ceiling[host] <= 1.1", "ceiling[host] >= 1.01"])
def test_a_ceiling_check_on_a_device_that_shares_the_hosts_cores_cannot_be_evaluated_and_never_passes(text):
    """JAX on a CPU: a device slack of 0 said no core was free, not that the device's work takes the whole step; the
    step ran 3.5-7× faster without the host's work beside a ceiling of 1.00× [1.00–1.00]."""
    shared = dataclasses.replace(device_bound("sync"), shares_cores=True)
    check = _judge(text, shared)
    assert check.verdict == Verdict.NOT_MEASURED
    assert "cannot be evaluated" in check.detail
    assert bound.NO_SHARED_CEILING in check.detail
    assert checks.failed(check, allow_inconclusive=True)
    assert _judge("slack_s[host] >= 200us", shared).verdict == Verdict.PASS  # the slack itself is still judged
