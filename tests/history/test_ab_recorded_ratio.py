"""What `record ab.json` stores is the gate's own paired ratio with its interval (issue 53, item 1).

A real `ab` file keeps each verdict's blocks (`block_log_ratios`, the sample its ratio and interval come from).
Recording one stored the last block's log ratio as the point (a +9.6% SLOWER gate read 0.07× in `history`, a SAME
gate −0.02) beside the true interval, so every point sat outside its own error bar, and change detection and
`--fail-on-regression` read the wrong series. Here the gates are made as `ab` makes them (results.blocks over
block log ratios), written as `ab -o` writes them, read back as `record` reads them, and recorded.
"""

from __future__ import annotations

import json
import math
import random

import pytest

from asyncbench.errors import InputError
from asyncbench.history import gate, store, target
from asyncbench.history.model import MIN_SIDE_RUNS
from asyncbench.results import ab_file, ab_report, blocks, paired
from tests.support.ab_files import BLOCKS, FACTS, MARGIN, TAIL, recorded_ab, recorded_gate


@pytest.fixture
def opened(tmp_path):
    return store.open_store(target.resolve(str(tmp_path / "h.sqlite")), writing=True)


@pytest.mark.parametrize(("wanted", "label"), [(1.096, "SLOWER"), (1.0, "SAME")])
def test_a_recorded_gate_is_its_ratio_inside_its_own_interval(opened, wanted, label):
    gate = recorded_gate(1, wanted)
    assert str(gate.label) == label
    read = recorded_ab(gate, 1)
    assert read.cases[0].ratios[0].ratio == gate.ratio  # the file's ratio, not its last block's log ratio
    opened.record_ab(read)
    [series] = opened.series("changed")
    [point] = series.points
    assert (point.value, point.low, point.high) == (gate.ratio, *gate.ratio_ci)
    assert point.low <= point.value <= point.high
    assert math.isclose(point.value, wanted, rel_tol=0.01)
    latest = opened.latest()
    assert latest is not None
    [(_, _, unit, value, low, high)] = latest.cases[0].quantities
    assert (unit, value, low, high) == ("x", gate.ratio, *gate.ratio_ci)
    [check] = latest.cases[0].checks
    assert check["value"] == gate.ratio


def test_change_detection_and_fail_on_regression_read_the_ratios(opened):
    """Six gates at 1.00, then six at +10%: one change at the seventh, about ×1.10, a regression from the ninth gate
    on (three runs after it: history.model.MIN_SIDE_RUNS), and still one at the twelfth (it started five gates ago,
    within gate.WITHIN_RUNS)."""
    for day in range(1, 13):
        opened.record_ab(recorded_ab(recorded_gate(day, 1.0 if day <= 6 else 1.10), day), label=f"ab-{day}")
        hits = gate.regressions(opened.series("changed"), 0.05)
        if day < 7 + MIN_SIDE_RUNS - 1:
            assert hits == []
        else:
            [hit] = hits
            assert (hit.change.run, hit.runs_ago) == (7, day - 7)
    [series] = opened.series("changed")
    [change] = series.change_points
    assert (change.run, change.at) == (7, "ab-7")
    assert 1.08 < change.ratio < 1.12
    assert all(0.98 < p.value < 1.12 for p in series.points)


def _file_dict(gate: paired.PairedRatio) -> dict:
    side = paired.Side("head", "a1b2c3d (HEAD)", "python3", "3.11", facts=FACTS)
    case = paired.PairedCase("changed[numpy,cpu]", "ok", ratios=(gate,), rounds=BLOCKS * 4, blocks=BLOCKS)
    report = ab_report.ABReport("2026-01-01T12:00:00+00:00", "0.1.0", side, side, MARGIN, 0.01, False, "SIGSTOP", (case,))
    return json.loads(report.to_json())


def test_an_ab_file_whose_ratio_lies_outside_its_own_interval_is_refused_naming_the_key():
    raw = _file_dict(recorded_gate(3, 1.05))
    raw["cases"][0]["ratios"][0]["ratio"] = 0.07
    with pytest.raises(InputError, match=r"cases\[0\].*ratios\[0\].*ratio.*0\.07.*outside its interval"):
        ab_file.from_dict(raw, "forged.json")


@pytest.mark.parametrize("seed", range(30))
def test_every_gate_ab_makes_holds_its_ratio_inside_its_interval(seed):
    """The rule the reader and the store hold a point to is one `ab` itself always keeps (the blocks' Hodges–Lehmann
    estimate lies within the signed-rank and sign-test intervals it is bounded by), at any number of blocks."""
    rng = random.Random(seed)
    values = [rng.gauss(0.05, rng.choice((0.001, 0.01, 0.2))) for _ in range(rng.randint(4, 40))]
    if seed % 3 == 0:
        values[0] += 2.0  # a wild block
    interval = blocks.interval(values, TAIL)
    if interval is not None:
        assert interval[0] <= blocks.estimate(values) <= interval[1]
