"""A side the slacks' difference would name the bound is not named so where its slack of 0 has no knee, and no
ceiling is claimed from a device slack of that kind (a trial read DEVICE-BOUND and "cutting host work cannot make it
faster" of 40 elementwise ops that jit then ran 123× faster, beside a note saying the slack of 0 did not mean the device
set the pace); a decided reading's line quotes the paired difference it was read from, which a reader of the file
makes again (session.reading), the sides' own intervals beside it overlapping or not."""

from __future__ import annotations

import json
import random

from asyncbench.report import bound as report
from asyncbench.results.bound import BoundKind, Perturbed, Side
from asyncbench.session import reading
from asyncbench.verdicts import bound
from tests.support.bounds import result_with
from tests.support.cli import invoke
from tests.support.helpers import report_of
from tests.verdicts.test_bound import LEVELS, STEP_S, STEPS, planted


def _no_knee_device(seed: int = 0) -> list[Perturbed]:
    """A step whose host has 60% of the step in slack, and whose device slows the step from its first delay by part of
    each (concave: a device delay on cores the host shares), with no knee."""
    rng = random.Random(seed)
    observations = []
    for r in range(30):
        a = STEP_S * (1 + rng.gauss(0, 0.03))
        observations.append(Perturbed(r, None, 0.0, 0.0, a + rng.gauss(0, 0.01 * STEP_S)))
        for level in LEVELS:
            d = level * STEP_S * (1 + abs(rng.gauss(0, 0.03)))
            slowed = 0.9 * min(d, 0.3 * STEP_S) + 0.45 * max(0.0, d - 0.3 * STEP_S)
            observations.append(Perturbed(r, Side.DEVICE, level * STEP_S, d, a + d / STEPS + slowed + rng.gauss(0, 0.01 * STEP_S)))
            h = level * STEP_S * (1 + abs(rng.gauss(0, 0.03)))
            late = max(0.0, h - 0.6 * STEP_S)
            observations.append(Perturbed(r, Side.HOST, level * STEP_S, h, a + h / STEPS + late + rng.gauss(0, 0.01 * STEP_S)))
    return observations


def test_a_device_without_a_knee_is_not_named_the_bound_and_no_ceiling_is_claimed_from_it():
    fitted = bound.fit("step", _no_knee_device(), True, steps_per_call=STEPS)
    device = fitted.side(Side.DEVICE)
    assert device is not None
    assert bound.cost_reading(device, fitted.step_s) == bound.NO_KNEE
    assert fitted.difference_ci is not None
    assert fitted.difference_ci[1] < -bound.DECISION_MARGIN  # the difference alone would read DEVICE
    assert fitted.bound == BoundKind.INCONCLUSIVE
    assert "which would name the device the bound, but the device's slack of 0 has no knee" in (fitted.note or "")
    assert bound.no_ceiling(fitted)
    view = report.bound_view("x", {"step": fitted})
    assert view is not None
    assert view.rows[0][-1] == "–"
    said = " ".join(view.summary)
    assert "cannot make it faster" not in said
    assert "the side the slacks point to is not shown to set the pace" in said
    assert bound.NO_FLOOR in said


def test_a_decided_reading_quotes_the_paired_difference_it_was_read_from():
    fitted = bound.fit("step", planted(1.0, 0.6, seed=3)[0], True, steps_per_call=STEPS)
    assert fitted.bound == BoundKind.HOST
    assert fitted.difference_ci is not None
    low, high = fitted.difference_ci
    said = report.reading(fitted)
    ends = f"{report.units.percent(low)} to {report.units.percent(high)}"
    assert said.startswith(f"host-bound: the device's slack exceeds the host's by {ends} of the step (paired, round by round); ")


def test_a_file_shows_the_difference_and_a_stored_device_reading_without_a_knee_reads_inconclusive(tmp_path):
    fitted = bound.fit("a", planted(0.6, 1.0, seed=4)[0], True, steps_per_call=STEPS)
    path = tmp_path / "r.json"
    path.write_text(report_of([result_with(fitted)]).to_json())
    [result] = reading.load_results(path).results
    assert result.bound["a"].difference_ci == fitted.difference_ci  # never stored: the refit's, the run's
    assert "the host's slack exceeds the device's by" in invoke("show", str(path)).output
    # a file written before: DEVICE beside a device slack of 0 without a knee, its note saying nothing of it
    old = bound.fit("a", _no_knee_device(), True, steps_per_call=STEPS)
    raw = json.loads(report_of([result_with(old)]).to_json())
    raw["results"][0]["bound"]["a"].update(bound="device", note=None)
    path.write_text(json.dumps(raw))
    [result] = reading.load_results(path).results
    assert result.bound["a"].bound == BoundKind.INCONCLUSIVE
    assert "has no knee" in (result.bound["a"].note or "")
    shown = invoke("show", str(path)).output
    assert "DEVICE-BOUND" not in shown
    assert "cannot make it faster" not in shown
