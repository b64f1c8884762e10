"""An INCONCLUSIVE check says why it is one, and the run's exit reasons say the same (issue 53, items 11 and 12):
an interval that straddles the threshold, no interval at all (too few rounds, or rounds that drifted together), or
a census check on a FILE:LINE where no wait was ever seen, which can no longer read 0 and pass silently."""

from __future__ import annotations

import dataclasses

from asyncbench.errors import EXIT_GATE, EXIT_OK
from asyncbench.results import stats
from asyncbench.results.model import OK, Result, Samples, VariantResult, Verdict
from asyncbench.results.syncs import Census, SyncKind, SyncPoint
from asyncbench.spec import expect
from asyncbench.verdicts import checks, outcome
from asyncbench.workloads import BUILT_IN
from tests.support.helpers import report_of

MATMUL = BUILT_IN["matmul"]
CONVERSION = BUILT_IN["conversion"]
ROUNDS = 8


def _clock_result(done: list[float]) -> Result:
    variant = VariantResult(Samples(tuple(done), tuple(done)), stats.summarize(done), stats.summarize(done), None)
    return Result("mm", "matmul", "matmul", "jax", "cpu", {}, OK, variants={"matmul": variant})


def _judged(text: str, result: Result, workload=MATMUL) -> Result:
    judged = checks.evaluate((expect.parse(text, workload),), result)
    return dataclasses.replace(result, checks=judged)


DRIFTED = [3e-3 * (1 + 0.01 * i) for i in range(20)]  # a neighbour's slow spell: 20 rounds, each slower than the last
SHORT = [3e-3 * (1 + 0.01 * i) for i in range(5)]  # --quick cut short: 5 rounds


def test_an_obviously_true_check_without_an_interval_does_not_claim_to_straddle():
    """`done_s.median > 0` under --quick beside a neighbour: 20 rounds that drifted together give no interval; the
    exit reason said "its interval straddles the threshold", of a check that had none."""
    result = _judged("done_s.median > 0", _clock_result(DRIFTED))
    (check,) = result.checks
    assert check.verdict == Verdict.INCONCLUSIVE
    assert check.bounds is None
    assert "drifted together" in check.detail
    judged = outcome.judge(report_of([result]))
    assert judged.code == EXIT_GATE
    (reason,) = [r for r in judged.reasons if "inconclusive" in r]
    assert "straddles" not in reason
    assert "no interval" in reason
    assert "drifted together" in reason


def test_a_check_from_too_few_rounds_says_so_in_the_exit_reason():
    result = _judged("done_s.median > 0", _clock_result(SHORT))
    (check,) = result.checks
    assert check.verdict == Verdict.INCONCLUSIVE
    assert "from 5 rounds" in check.detail
    (reason,) = [r for r in outcome.judge(report_of([result])).reasons if "inconclusive" in r]
    assert "straddles" not in reason
    assert "too few rounds" in reason


def test_a_check_whose_interval_straddles_says_that_and_two_kinds_are_each_counted():
    wide = [3e-3 * (1 + 0.1 * ((-1) ** i) * (i % 4)) for i in range(30)]
    straddling = _judged("done_s.median < 3ms", _clock_result(wide))
    assert straddling.checks[0].verdict == Verdict.INCONCLUSIVE
    assert straddling.checks[0].bounds is not None
    none = _judged("done_s.median > 0", _clock_result(DRIFTED))
    (reason,) = [r for r in outcome.judge(report_of([straddling, none])).reasons if "inconclusive" in r]
    assert reason.startswith("2 checks inconclusive")
    assert "1 with an interval that straddles the threshold" in reason
    assert "1 with no interval (the rounds drifted together" in reason


def _census_result() -> Result:
    item = SyncPoint("/home/me/train.py", 57, SyncKind.CONVERSION, "jax.Array.item", 1.0, 1e-4, None, None, (1,) * ROUNDS, (1e-4,) * ROUNDS)
    censuses = {"item": Census("item", ROUNDS, (item,), coverage="jax's hooks"), "none": Census("none", ROUNDS, (), coverage="jax's hooks")}
    return Result("c", "conversion", "conversion", "jax", "cpu", {}, OK, syncs=censuses)


def test_a_census_check_on_a_line_no_wait_was_seen_at_is_inconclusive_and_says_so():
    """A misspelled file or a line an edit moved read 0 waits and passed, silently and forever."""
    for text in ("syncs_per_step[train.py:58] == 0", "sync_wait_s[rain.py:57] < 1ms", "syncs_per_step[other.py:57] <= 1"):
        result = _judged(text, _census_result(), CONVERSION)
        (check,) = result.checks
        assert check.verdict == Verdict.INCONCLUSIVE, text
        assert "no wait at" in check.detail
        assert "was seen" in check.detail
        assert "variant=" not in check.detail  # the check named no variant: its line names none it did not ask for
        judged = outcome.judge(report_of([result]))
        assert judged.code == EXIT_GATE
        (reason,) = [r for r in judged.reasons if "inconclusive" in r]
        assert "no wait seen at its FILE:LINE" in reason
        assert "straddles" not in reason


def test_a_line_seen_in_one_variant_is_judged_in_every_variant():
    """The line is real (a variant waited there): a variant that never waited there reads 0, a measurement."""
    result = _judged("syncs_per_step[train.py:57] <= 1", _census_result(), CONVERSION)
    assert result.checks[0].verdict == Verdict.PASS
    assert outcome.judge(report_of([result])).code == EXIT_OK


def test_a_check_whose_rounds_drifted_together_says_how_many_rounds_would_give_an_interval():
    """`run ci-gate --quick` on a quiet machine: `done_s.median < 100ms ... no 99.975% interval from 20 rounds (the
    rounds drifted together...)` said neither how many independent rounds it had nor how many it needed, where
    docs/concepts/intervals.md promises a check stopped at max_samples says how many it needed."""
    from asyncbench.results import check_detail

    drifting = [3e-3 * (1 + 0.01 * ((i // 4) % 2)) + 1e-7 * i for i in range(20)]  # slow and fast spells of 4 rounds
    (check,) = _judged("done_s.median < 100ms", _clock_result(drifting)).checks
    assert check.verdict == Verdict.INCONCLUSIVE
    independent = stats.independent_rounds(drifting)
    needed = check_detail.rounds_for_median(0.95)
    assert independent < needed <= 20
    assert f"from 20 rounds (the rounds drifted together: they count as {independent} independent" in check.detail
    assert (
        f"where the level needs {needed}; at this drift about {check_detail.rounds_at_drift(20, independent, needed)} rounds"
        in check.detail
    )
    assert "raise max_samples" in check.detail
    # read back as a run's own words (results.check_detail.details_held), as the words before it are
    stored = {"status": OK, "metrics": {}, "variants": {"matmul": {}}, "params": {}}
    check_dict = {"expect": check.expect, "verdict": check.verdict, "value": check.value, "bounds": None, "detail": check.detail}
    assert check_detail._written(check_dict, check_detail.CHECK.fullmatch(check.expect), stored, {}, check.detail)
    older = check.detail[: check.detail.index(" (the rounds")] + " (the rounds drifted together: too few independent ones for one)"
    assert check_detail._written(dict(check_dict, detail=older), check_detail.CHECK.fullmatch(check.expect), stored, {}, older)
    (reason,) = [
        r for r in outcome.judge(report_of([dataclasses.replace(_clock_result(drifting), checks=(check,))])).reasons if "inconclusive" in r
    ]
    assert "drifted together" in reason
