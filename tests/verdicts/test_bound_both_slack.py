"""A step whose two sides both have slack is bound by neither (verdicts.bound's reading, results.bound_rule.has_room).

A JAX user's jitted 64×64 MLP update on a loaded 2-core machine printed `HOST-BOUND │ host 56.3 µs [31.7–77.1]
(54%) │ device 104 µs [104–104] (100%)` with the note "both sides have slack", beside a guide that defines
HOST-BOUND as "the host has no slack, the device has". A side whose slack interval lies wholly above the balance
band had room: some delay on it was free, so it alone does not set the pace. Such a reading is INCONCLUSIVE, said
plainly, wherever it is read: a fresh fit, a results file that stored the old reading (with its observations, or
without), an `ab` file's flip list. A wait in the step (the host idle, the device without slack) still reads
DEVICE-BOUND: there the device has no slack."""

from __future__ import annotations

import copy
import dataclasses
import json
from pathlib import Path
from typing import Any

from asyncbench.report import bound as shown
from asyncbench.results import bound_rule
from asyncbench.results.ab_report import ABReport
from asyncbench.results.bound import Bound, BoundKind, Side
from asyncbench.results.bound_change import BoundChange, Change, Reading, changes
from asyncbench.session import reading
from asyncbench.verdicts import bound
from tests.results.test_bound_change import _report
from tests.support.bounds import stored_file
from tests.verdicts.test_bound import STEP_S, STEPS, planted

#: the issue's shape, planted: the host has slack of 30% of the step, the device 80% (a wait in between sets the pace)
BOTH = {Side.HOST: 0.3 * STEP_S, Side.DEVICE: 0.8 * STEP_S}


def _both_slack() -> Bound:
    observations, _ = planted(1.0, 1.0, slack=BOTH)
    return bound.fit("a", observations, True, steps_per_call=STEPS)


def test_a_side_with_slack_above_the_band_is_not_named_the_bound():
    fitted = _both_slack()
    host = fitted.side(Side.HOST)
    assert host is not None
    assert host.slack_ci_s is not None
    assert host.slack_ci_s[0] > bound.BALANCE_BAND * fitted.step_s  # the host had room: the old rule read HOST-BOUND
    assert fitted.difference_ci is not None
    assert fitted.difference_ci[0] > bound.DECISION_MARGIN
    assert fitted.bound == BoundKind.INCONCLUSIVE
    assert fitted.note is not None
    assert bound.BOTH_SLACK in fitted.note
    assert "neither alone sets the pace" in bound.BOTH_SLACK
    assert "--syncs" in bound.BOTH_SLACK
    said = shown.reading(fitted)
    assert said.startswith("inconclusive")
    assert "host-bound" not in said


def test_a_wait_that_leaves_the_host_idle_still_reads_device_bound():
    observations, _ = planted(1.0, 1.0, slack={Side.HOST: 0.9 * STEP_S, Side.DEVICE: 0.0})
    fitted = bound.fit("a", observations, True, steps_per_call=STEPS)
    assert fitted.bound == BoundKind.DEVICE
    assert fitted.note is None or bound.BOTH_SLACK not in fitted.note


def test_has_room_reads_the_slack_intervals_low_end_against_the_band():
    assert bound_rule.has_room((0.08e-3, 0.2e-3), 1e-3)
    assert not bound_rule.has_room((0.07e-3, 0.2e-3), 1e-3)
    assert not bound_rule.has_room(None, 1e-3)
    intervals = {"host": (0.3e-3, 0.4e-3), "device": (0.8e-3, 0.9e-3)}
    assert bound_rule.reread("host", intervals, 1e-3) == "inconclusive"
    assert bound_rule.reread("device", {"host": (0.8e-3, 0.9e-3), "device": (0.0, 0.0)}, 1e-3) == "device"
    assert bound_rule.reread("balanced", intervals, 1e-3) == "balanced"


def _stored_as_before(fitted: Bound, tmp_path: Path, observations: bool) -> Path:
    """A results file as the rule before this one wrote it: the host named the bound, with the old note."""
    old = dataclasses.replace(
        fitted,
        bound=BoundKind.HOST,
        note="both sides have slack: something else sets part of the pace (a wait in the step, or the two sides sharing cores)",
    )
    return stored_file(old, tmp_path, observations)


def test_a_results_file_that_stored_the_old_reading_reads_the_new_way(tmp_path):
    fitted = _both_slack()
    for observations in (True, False):
        [result] = reading.load_results(_stored_as_before(fitted, tmp_path, observations)).results
        read = result.bound["a"]
        assert read.bound == BoundKind.INCONCLUSIVE, observations
        assert read.note is not None
        assert bound.BOTH_SLACK in read.note
        assert "host-bound" not in shown.reading(read)


def test_an_ab_file_that_stored_the_old_reading_states_no_flip():
    fitted = _both_slack()
    host_bound = dataclasses.replace(fitted, bound=BoundKind.HOST)  # as the rule before this one read it
    device_bound = bound.fit("a", planted(0.6, 1.0)[0], True, steps_per_call=STEPS)
    assert device_bound.bound == BoundKind.DEVICE
    written = changes({"a": device_bound}, {"a": host_bound}, ["a"], bound.TOP_OF_LEVELS, {})
    assert written[0].change == Change.FLIPPED
    side = ABReport.from_dict(_ab_raw(written), "ab.json")
    (case,) = side.cases
    assert case.bound_changes is not None
    (read,) = case.bound_changes
    assert read.change == Change.UNDECIDED
    assert read.head is not None
    assert read.head.bound == BoundKind.INCONCLUSIVE
    assert read.head.note is not None
    assert bound.BOTH_SLACK in read.head.note
    # a fresh `ab` reads the new way from the fit itself
    assert Reading.of(fitted, bound.TOP_OF_LEVELS).bound == BoundKind.INCONCLUSIVE


def _ab_raw(bound_changes: tuple[BoundChange, ...]) -> dict[str, Any]:
    return copy.deepcopy(json.loads(_report(bound_changes).to_json()))
