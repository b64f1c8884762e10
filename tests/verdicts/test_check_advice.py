"""An INCONCLUSIVE check says what may decide it in words that follow from its run: the rounds its interval needs at
the exact level it was judged at (a trial's check at 99.9778%, said '99.975%', claimed 13 where it needs 14), and the
setting that stopped the sampling (a trial's run stopped by max_samples was told to raise max_time_s; one stopped by
max_time_s, its max_samples unused, to raise max_samples). Both are read back from the file as written, and the
words of files written before are still read."""

from __future__ import annotations

import dataclasses
import json
from typing import Any

from asyncbench.results import check_detail, stats, units
from asyncbench.results.budget import Budget, rounds_for_median
from asyncbench.results.model import OK, Result, Samples, Sampling, StopReason, VariantResult, Verdict
from asyncbench.results.schema import Report
from asyncbench.spec import expect
from asyncbench.verdicts import checks, outcome
from asyncbench.workloads import BUILT_IN
from tests.results.test_check_rule import SYNC_ASYNC, _result
from tests.support.helpers import report_of

MATMUL = BUILT_IN["matmul"]
#: a 1% family-wise rate over 3 checks and 15 looks: 99.9778%, read as the readable 99.975%, which needs one round fewer
BUDGET = Budget(0.01, 3, 1, 211)
DRIFTED = [3e-3 * (1 + 0.01 * i) for i in range(31)]  # 31 rounds, each slower than the last: few independent ones


def _sampling(rounds: int, stopped_by: StopReason) -> Sampling:
    return Sampling(rounds, 1.0, stopped_by, 0.5, 0.05, 1.0)


def _clock_result(done: list[float], stopped_by: StopReason) -> Result:
    variant = VariantResult(Samples(tuple(done), tuple(done)), stats.summarize(done), stats.summarize(done), None)
    return Result(
        "matmul[jax,cpu]", "matmul", "matmul", "jax", "cpu", {}, OK, variants={"matmul": variant}, sampling=_sampling(len(done), stopped_by)
    )


def _judged(result: Result, text: str, workload: Any = MATMUL, budget: Budget | None = BUDGET) -> Result:
    return dataclasses.replace(result, checks=checks.evaluate((expect.parse(text, workload),), result, budget))


def _read_back(tmp_path: Any, result: Result) -> Result:
    path = tmp_path / "r.json"
    Report.new({}, {}, (result,)).save(path)
    return Report.load(path).results[0]


def test_the_rounds_a_check_without_an_interval_needs_are_those_of_its_exact_level(tmp_path):
    exact = BUDGET.confidence()
    assert units.confidence(exact) == "99.975%"
    assert rounds_for_median(exact) == 14 > rounds_for_median(0.99975)
    drifted = _judged(_clock_result(DRIFTED, StopReason.TIME), "done_s.median[matmul] < 1ms")
    (check,) = drifted.checks
    assert check.verdict == Verdict.INCONCLUSIVE
    assert check.bounds is None
    assert "no 99.975% interval from 31 rounds" in check.detail
    assert "where the level needs 14;" in check.detail
    independent = stats.independent_rounds(DRIFTED)
    assert f"about {check_detail.rounds_at_drift(31, independent, 14)} rounds would give one" in check.detail
    assert check.confidence == exact
    assert _read_back(tmp_path, drifted).checks == drifted.checks
    few = _judged(_clock_result(DRIFTED[:13], StopReason.TIME), "done_s.median[matmul] < 1ms")
    assert few.checks[0].detail.endswith("no 99.975% interval from 13 rounds (it needs 14)")
    assert _read_back(tmp_path, few).checks == few.checks


def test_a_file_written_before_the_exact_level_was_stored_reads_its_words_as_written_then(tmp_path):
    drifted = _judged(_clock_result(DRIFTED, StopReason.TIME), "done_s.median[matmul] < 1ms")
    path = tmp_path / "r.json"
    Report.new({}, {}, (drifted,)).save(path)
    raw = json.loads(path.read_text())
    stored = raw["results"][0]["checks"][0]
    del stored["confidence"]
    label, wanted = "done_s.median[matmul]", check_detail.wanted("<", 1e-3, "s")
    value = drifted.checks[0].value
    assert value is not None
    independent = stats.independent_rounds(DRIFTED)
    stored["detail"] = check_detail.no_interval(label, value, "s", wanted, "99.975%", 31, independent)  # as written then
    assert "where the level needs 13;" in stored["detail"]
    assert "raise max_samples, and max_time_s)" in stored["detail"]
    path.write_text(json.dumps(raw))
    assert Report.load(path).results[0].checks[0].detail == stored["detail"]


def test_the_advice_names_the_setting_that_stopped_the_sampling(tmp_path):
    for stop, setting in ((StopReason.COUNT, "max_samples"), (StopReason.TIME, "max_time_s")):
        straddles = _judged(dataclasses.replace(_result(), sampling=_sampling(6, stop)), "speedup >= 2.1", SYNC_ASYNC, None)
        (check,) = straddles.checks
        assert check.verdict == Verdict.INCONCLUSIVE
        assert check.detail.endswith(f"; more rounds ({setting}) may decide it")
        assert _read_back(tmp_path, straddles).checks == straddles.checks
        (reason,) = [r for r in outcome.judge(report_of([straddles])).reasons if "inconclusive" in r]
        assert f"more rounds via {setting} may decide it" in reason
        drifted = _judged(_clock_result(DRIFTED, stop), "done_s.median[matmul] < 1ms")
        assert drifted.checks[0].detail.endswith(f"rounds would give one: raise {setting})")
        assert _read_back(tmp_path, drifted).checks == drifted.checks
