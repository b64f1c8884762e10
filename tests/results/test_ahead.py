"""Ran ahead means ran ahead (issue 33): beyond the harness's own sync, by an interval, or said not to be judged."""

from __future__ import annotations

import dataclasses
import json
import random

from asyncbench.results import ahead, stats
from asyncbench.results.model import OK, HarnessCost, Result, Samples, VariantResult
from asyncbench.results.schema import Report
from asyncbench.verdicts import outcome
from tests.support.helpers import report_of

#: a sync with nothing queued and a clock read, as a no-op probe measures them: 0.7 µs
HARNESS = HarnessCost(sync_s=0.68e-6, sync_high_s=0.7e-6, issue_s=0.1e-6, n=40)


def _row(issue: list[float], done: list[float], asynchronous: bool | None = True, harness: HarnessCost | None = HARNESS) -> Result:
    variant = VariantResult(Samples(tuple(issue), tuple(done)), stats.summarize(issue), stats.summarize(done), None)
    return Result(
        "step[jax,cpu]",
        "step",
        "step",
        "jax",
        "cpu",
        {},
        OK,
        variants={"sync_every=0": variant},
        asynchronous=asynchronous,
        harness=harness,
    )


def _noop_step() -> Result:
    """The issue's no-op step: issue 2 µs, done 2.7 µs (1.35×), the 0.7 µs between them the harness's own sync."""
    draw = random.Random(1)
    issue = [2e-6 * draw.uniform(0.98, 1.02) for _ in range(24)]
    return _row(issue, [i + 0.7e-6 * draw.uniform(0.97, 1.0) for i in issue])


def test_a_no_op_does_not_run_ahead_by_the_harness_s_own_sync():
    row = _noop_step()
    raw = row.variants["sync_every=0"]
    assert raw.issue_s.ci_high < raw.done_s.ci_low  # what counted as running ahead before: issue's interval below done's
    judged = ahead.judge(row)
    assert judged.state == ahead.NOT_AHEAD
    assert judged.bounds[1] < ahead.ILLUSION_NOTICEABLE
    assert not ahead.ran_ahead(row)
    assert not outcome.ran_ahead(row)  # the headline's count


def test_without_its_harness_cost_the_same_no_op_would_be_judged_ahead():
    """What decides is the measured cost: an older file (none stored) judges the raw illusion, and says so."""
    judged = ahead.judge(dataclasses.replace(_noop_step(), harness=None))
    assert judged.state == ahead.RAN_AHEAD
    assert "not measured" in judged.figure()


def test_a_synchronous_backend_never_ran_ahead():
    """The issue's numpy 16² product: illusion 1.09×, issue's interval below done's, listed under "What ran ahead"."""
    draw = random.Random(2)
    issue = [10e-6 * draw.uniform(0.99, 1.01) for _ in range(20)]
    row = _row(issue, [i * 1.09 for i in issue], asynchronous=False, harness=None)
    assert row.variants["sync_every=0"].issue_s.ci_high < row.variants["sync_every=0"].done_s.ci_low
    assert ahead.judge(row).state == ahead.NOT_AHEAD
    assert not outcome.ran_ahead(row)


def test_a_row_that_runs_ahead_well_beyond_the_harness_does_and_a_no_op_beside_it_does_not():
    """The JAX matmul of the issue: 39×."""
    assert not outcome.ran_ahead(_noop_step())
    draw = random.Random(3)
    issue = [300e-6 * draw.uniform(0.95, 1.05) for _ in range(20)]
    row = _row(issue, [i * 39 * draw.uniform(0.9, 1.1) for i in issue])
    judged = ahead.judge(row)
    assert judged.state == ahead.RAN_AHEAD
    assert judged.bounds[0] > ahead.ILLUSION_NOTICEABLE


def test_a_row_without_an_interval_is_not_judged_and_says_why():
    """The issue's --quick JAX matmul: 39× from 20 rounds that drifted together, so no interval of its median."""
    issue = [300e-6] * 20
    done = [300e-6 * (30 + i) for i in range(20)]  # one slow trend: each round above the last
    judged = ahead.judge(_row(issue, done))
    assert judged.state is None
    assert "no 95% interval at n = 20" in judged.why
    assert "drifted" in judged.why
    few = ahead.judge(_row(issue[:4], done[:4]))
    assert few.state is None
    assert "n = 4 (too few rounds)" in few.why
    assert ahead.not_judged(_row(issue, done)) is not None


def test_the_harness_cost_is_stored_and_read_back_and_older_files_have_none(tmp_path):
    path = tmp_path / "r.json"
    report_of([_noop_step()]).save(path)
    raw = json.loads(path.read_text())
    assert raw["schema_version"] >= 7
    assert raw["results"][0]["harness"] == dataclasses.asdict(HARNESS)
    assert Report.load(path).results[0].harness == HARNESS
    del raw["results"][0]["harness"]
    raw["schema_version"] = 6
    path.write_text(json.dumps(raw))
    assert Report.load(path).results[0].harness is None


def test_an_illusion_floored_at_1x_is_said_as_not_running_ahead_never_as_a_zero_width_interval():
    """(done − sync) / issue ≈ 0.92 in every round is floored to 1× by the rule (the work is not done before it was
    issued): it read "1.00× [1.00–1.00] beyond the harness's own 182 µs sync", a clamp shown as a measured figure."""
    harness = HarnessCost(sync_s=170e-6, sync_high_s=182e-6, issue_s=1e-6, n=40)
    draw = random.Random(2)
    issue = [1e-3 * draw.uniform(0.98, 1.02) for _ in range(24)]
    row = _row(issue, [i * draw.uniform(0.9, 0.94) + 182e-6 for i in issue], harness=harness)
    judged = ahead.judge(row)
    assert judged.state == ahead.NOT_AHEAD
    figure = judged.figure()
    assert "[1.00–1.00]" not in figure
    assert figure.startswith("did not run ahead beyond the harness's own 182 µs sync"), figure
    # a lower end floored alone is said as at most 1×
    mixed = _row(issue, [i * draw.uniform(0.9, 1.1) + 182e-6 for i in issue], harness=harness)
    assert "[≤1.00–" in ahead.judge(mixed).figure()
    # and the key to the tables says what '≤' in a ratio's interval is (it explained '≤' only for a time)
    from asyncbench.report import view

    assert "[≤1.00–x] beside an illusion: its interval reached below 1×" in view.legend([mixed], [ahead.judge(mixed).figure()])
    plain = _row(issue, [i * 3 for i in issue], harness=harness)
    assert "beside an illusion" not in view.legend([plain], [ahead.judge(plain).figure()])


def test_a_figure_judged_without_an_interval_says_it_has_none():
    """A trial: 'illusion 1.00039× [1.00035–1.00042]; 1.00× beyond the harness's own 7.05 µs sync', a bare figure
    where every figure has an interval or says it has none (a synchronous backend's rounds judged without one)."""
    judged = ahead.Judged(ahead.NOT_AHEAD, "v", 1.00002, None, 20, 7.05e-6)
    assert judged.figure() == "1.00× [?] beyond the harness's own 7.05 µs sync"
    with_one = dataclasses.replace(judged, bounds=(1.00001, 1.00005))
    assert "[?]" not in with_one.figure()
