"""verdicts.bound_jumps: a side's slack held at the first level that already slowed the step. A trial (JAX on a
2-core CPU beside a neighbour) printed a host slack of 1.38 ms [1.32–1.59] while the threshold checks on the same
rounds said a 774 µs delay had slowed the step by 164 µs: the hinge's per-round intercept absorbed a step-up at every
level, and its knee lay where the slope steepened. Planted here: a device-bound step whose host delays each cost a
jump of 10% of the step, then nothing until the host's slack of 70% of it."""

from __future__ import annotations

import dataclasses
import json

import pytest

from asyncbench.results import budget
from asyncbench.results.bound import Bound, BoundKind, Perturbed, Side, SideBound
from asyncbench.results.model import Verdict
from asyncbench.results.schema import Report
from asyncbench.session import reading
from asyncbench.spec import expect
from asyncbench.verdicts import bound as fitting
from asyncbench.verdicts import bound_levels, checks
from asyncbench.workloads import BUILT_IN
from tests.support.bounds import result_with
from tests.support.cli import invoke
from tests.support.helpers import report_of
from tests.verdicts.test_bound import STEP_S, STEPS, planted

#: the step-up every host delay costs, whatever its length (a share of the step): three times bound_jumps.JUMP_SHARE
JUMP = 0.1


def _jumped(jump: float = JUMP, seed: int = 0) -> list[Perturbed]:
    """A device-bound step (the host's slack 70% of the step, the device's none) whose every host delay slows it by
    `jump` of the step, as a delay that takes a core from the device's threads does."""
    observations, _ = planted(0.3, 1.0, seed=seed)
    return [dataclasses.replace(o, step_s=o.step_s + jump * STEP_S) if o.side == Side.HOST else o for o in observations]


def _fit(observations: list[Perturbed], hold_jumps: bool = True, shares_cores: bool = True) -> Bound:
    return fitting.fit("a", observations, True, steps_per_call=STEPS, shares_cores=shares_cores, hold_jumps=hold_jumps)


def _host(bound: Bound) -> SideBound:
    found = bound.side(Side.HOST)
    assert found is not None
    return found


def test_a_jump_at_every_level_holds_the_host_slack_at_the_first_level_that_slowed_the_step():
    fitted = _fit(_jumped())
    host = _host(fitted)
    first = min(host.levels_s)
    # the paired slowdown at the first level, as the threshold checks read it, lies wholly above 3% of the step
    slowed = bound_levels.paired(fitted, Side.HOST, min(o.level_s for o in fitted.observations if o.side == Side.HOST))
    assert slowed is not None
    assert min(slowed.slowdowns_s) > 0.03 * STEP_S
    assert host.slack_s <= first + 1e-9
    assert host.slack_ci_s is not None
    assert host.slack_ci_s[1] <= first + 1e-9
    # at most that level, and no more known: the interval reaches 0 ('~0 [≤ x]'), never the point every resample's
    # knee past the level would give; so the reading cannot rest on the host's slack being that level
    assert host.slack_ci_s[0] == 0.0
    assert fitted.difference_ci is not None
    assert fitted.difference_ci[1] >= 0.0
    assert fitted.bound == BoundKind.INCONCLUSIVE
    assert fitted.held_at_jump
    assert fitted.note is not None
    assert f"the host's slack held at {first * 1e6:.0f} µs: a delay of {first * 1e6:.0f} µs already slowed the step by" in fitted.note
    assert (
        "a jump the fit's hinge does not model (on a CPU whose device shares the host's cores, the delay itself takes a core)"
        in fitted.note
    )
    # the same rounds fitted as before the rule: the knee where the slope steepens, far past the first level
    unheld = _host(_fit(_jumped(), hold_jumps=False))
    assert unheld.slack_s > 3 * first


def test_a_plain_hinge_keeps_its_slack():
    observations = _jumped(jump=0.0)
    fitted, before = _fit(observations), _fit(observations, hold_jumps=False)
    assert not fitted.held_at_jump
    assert fitted.sides == before.sides
    assert fitted.bound == before.bound == BoundKind.DEVICE
    assert _host(fitted).slack_s > 0.6 * STEP_S
    assert "held at" not in (fitted.note or "")


def test_a_held_slack_reads_back_and_shows_as_written_and_a_file_from_before_the_hold_still_reads(tmp_path):
    held = _fit(_jumped())
    for bound in (held, _fit(_jumped(), hold_jumps=False)):  # the second: a file written before slacks were held
        raw = json.loads(report_of([result_with(bound)]).to_json())
        assert raw["results"][0]["bound"]["a"].get("held_at_jump") is (True if bound.held_at_jump else None)
        path = tmp_path / "r.json"
        path.write_text(json.dumps(raw))
        [result] = reading.load_results(path).results
        stored = Report.from_dict(json.loads(json.dumps(raw)), "r.json").results[0].bound["a"]
        # its figures as written: what `show` recomputes is what the file says (the paired difference is never stored:
        # the refit's, which is the fit's)
        assert result.bound["a"] == dataclasses.replace(stored, difference_ci=bound.difference_ci)
        assert _host(stored).slack_s == pytest.approx(_host(bound).slack_s, abs=1e-9)
        assert stored.bound == bound.bound
        assert invoke("show", str(path)).exit_code == 0
    raw = json.loads(report_of([result_with(held)]).to_json())
    del raw["results"][0]["bound"]["a"]["held_at_jump"]  # a held slack passed off as the hinge's own: refused
    path = tmp_path / "forged.json"
    path.write_text(json.dumps(raw))
    assert invoke("show", str(path)).exit_code == 2


def test_a_check_whose_many_rounds_drifted_together_says_so_and_names_no_count_they_meet():
    """`--set max_time_s=4`: '… over 22 paired rounds, too few for a 99.98% interval (it needs 14)': 22 rounds meet
    14; their median's interval was widened for rounds that drifted together until none was left."""
    observations = []
    for r in range(22):  # the slowdown climbs round after round: every round on the same side of the median as the last
        observations.append(Perturbed(r, None, 0.0, 0.0, 1e-3))
        observations.append(Perturbed(r, Side.HOST, 2e-4, 2e-4, 1e-3 + 2e-4 / 5 + 1e-6 * r))
    drifted = fitting.fit("sync", observations, True, steps_per_call=5, scale_s=1e-3)
    shared = budget.Budget(budget.FAMILY_ERROR, 4, 10, 100)
    (check,) = checks.evaluate((expect.parse("slack_s[host] >= 200us", BUILT_IN["sync_async"]),), result_with(drifted), shared)
    needed = budget.rounds_for_median(shared.confidence())
    assert needed <= 22
    assert check.verdict == Verdict.INCONCLUSIVE
    assert "over 22 paired rounds, but the rounds drifted together so far that too few were independent for a" in check.detail
    assert "too few for a" not in check.detail
    assert "(it needs" not in check.detail
    assert checks.inconclusive_why(check) == checks.WHY_DRIFTED
