"""Paired-ratio series (`ab` files recorded) get their own smallest change: drift cancels in them, so a step of a few
percent that a run's median cannot show is one there, and a flat one still shows none."""

from __future__ import annotations

import dataclasses
import json
import random

import pytest

from asyncbench.history import changes, gate, store, target
from asyncbench.history.model import Point
from asyncbench.results import ab_file, ab_report, paired
from asyncbench.results.labels import label_of

# A paired ratio's spread across `ab` gates on a busy machine: about half a percent (benchmarks/history_drift.py).
SPREAD = 0.005
STEP = 1.05
FACTS = {"cpu": "Test CPU", "cpu_cores_logical": 2, "hostname": "runner", "frameworks": {"numpy": {"version": "2.0"}}}


def _values(seed: int, before: int, after: int, step: float) -> list[float]:
    rng = random.Random(seed)
    return [(step if i >= before else 1.0) * (1 + rng.gauss(0, SPREAD)) for i in range(before + after)]


def _points(values: list[float]) -> list[Point]:
    return [Point(i + 1, f"2026-01-{i + 1:02d}", f"ab-{i + 1}", None, v, None, None) for i, v in enumerate(values)]


def test_a_paired_ratio_series_is_held_to_its_own_floor_and_a_run_median_to_the_raw_one():
    assert changes.PAIRED_MIN_MAGNITUDE < changes.MIN_MAGNITUDE
    assert changes.min_magnitude("ab:matmul", "x") == changes.PAIRED_MIN_MAGNITUDE
    assert changes.min_magnitude("done_s", "s") == changes.MIN_MAGNITUDE
    assert changes.min_magnitude("gflops", "x") == changes.MIN_MAGNITUDE  # a metric in x is no paired ratio
    assert changes.min_magnitude("ab:matmul", "s") == changes.MIN_MAGNITUDE


@pytest.mark.parametrize("seed", range(5))
def test_a_5_percent_step_in_a_paired_series_is_found_where_it_starts_with_the_paired_floor_only(seed):
    points = _points(_values(seed, 6, 6, STEP))
    [found] = changes.change_points(points, changes.min_magnitude("ab:changed", "x"))
    assert found.run == 7
    assert 1.03 < found.ratio < 1.07
    assert changes.change_points(points, changes.MIN_MAGNITUDE) == ()  # the raw floor, set for drift, cannot see it


@pytest.mark.parametrize("seed", range(20))
def test_a_flat_paired_series_shows_no_change(seed):
    assert changes.change_points(_points(_values(100 + seed, 12, 0, 1.0)), changes.PAIRED_MIN_MAGNITUDE) == ()
    assert changes.change_points(_points(_values(200 + seed, 50, 0, 1.0)), changes.PAIRED_MIN_MAGNITUDE) == ()


def _ab_file(ratio: float, day: int, base: str = "a1b2c3d (HEAD)") -> ab_file.ABFile:
    """A real `ab` file, read back as `record` reads one: one case whose paired ratio head/base is `ratio`."""
    side = paired.Side("head", "a1b2c3d (HEAD)", "python3", "3.11", facts=FACTS)
    interval = (ratio * 0.997, ratio * 1.003)  # labelled as `ab` labels it: a reader refuses any other label
    compared = paired.PairedRatio("changed", paired.VARIANT, "s", 0.004, 0.004 * ratio, ratio, interval, label_of(interval, 0.05))
    case = paired.PairedCase("changed[numpy,cpu]", "ok", ratios=(compared,), rounds=100, blocks=10)
    report = ab_report.ABReport(
        f"2026-01-{day:02d}T12:00:00+00:00",
        "0.1.0",
        dataclasses.replace(side, name="base", revision=base),
        side,
        0.05,
        0.01,
        False,
        "SIGSTOP",
        (case,),
    )
    return ab_file.from_dict(json.loads(report.to_json()), f"ab-{day}.json")


def test_recorded_ab_files_find_a_5_percent_step_at_the_run_it_starts_and_keep_it_when_looked_at_again(tmp_path):
    opened = store.open_store(target.resolve(str(tmp_path / "h.sqlite")), writing=True)
    for day, ratio in enumerate(_values(7, 6, 6, STEP), start=1):
        assert opened.record_ab(_ab_file(ratio, day), label=f"ab-{day}").new
    [series] = opened.series("changed")
    assert (series.quantity, series.unit, len(series.points)) == ("ab:changed@a1b2c3d", "x", 12)
    assert [(c.run, c.at) for c in series.change_points] == [(7, "ab-7")]
    assert 1.03 < series.change_points[0].ratio < 1.07
    with opened.transaction() as connection:  # as benchmarks/history_scale.py calls it: the series' kind read from the store
        opened.refresh_changes(connection, [1])
    [again] = opened.series("changed")
    assert again.change_points == series.change_points


def test_recorded_flat_ab_files_show_no_change(tmp_path):
    opened = store.open_store(target.resolve(str(tmp_path / "h.sqlite")), writing=True)
    for day, ratio in enumerate(_values(8, 12, 0, 1.0), start=1):
        opened.record_ab(_ab_file(ratio, day))
    [series] = opened.series("changed")
    assert len(series.points) == 12
    assert series.change_points == ()


def test_fail_on_regression_sees_a_paired_ratio_that_grew_and_not_one_that_fell():
    from asyncbench.history.model import ChangePoint, Series

    points = tuple(_points([1.0] * 6 + [1.05]))
    grew = ChangePoint(7, "ab-7", 1.0, 1.05, 1.05, 1.04, 1.06, 1e-6)
    fell = ChangePoint(7, "ab-7", 1.0, 0.95, 0.95, 0.94, 0.96, 1e-6)
    slower = Series("changed[numpy,cpu]", "changed", "ab:changed", "x", "m", {}, points, (grew,), runs=7)
    faster = dataclasses.replace(slower, change_points=(fell,))
    [hit] = gate.regressions([slower], 0.02)
    assert (hit.series, hit.change, hit.runs_ago) == (slower, grew, 0)
    assert gate.regressions([slower], 0.1) == []  # within the margin
    assert gate.regressions([faster], 0.02) == []


def test_ratios_against_a_new_base_start_a_series_of_their_own_not_a_change(tmp_path):
    opened = store.open_store(target.resolve(str(tmp_path / "h.sqlite")), writing=True)
    for day in range(1, 8):  # six runs against v1.0, where head had grown 25%; then the pin moves to the new code
        base = "a1b2c3d (v1.0)" if day <= 6 else "e4f5a6b (v2.0)"
        assert opened.record_ab(_ab_file(1.25 if day <= 6 else 1.0, day, base), label=f"ab-{day}").new
    found = {s.quantity: s for s in opened.series("changed")}
    assert sorted(found) == ["ab:changed@a1b2c3d", "ab:changed@e4f5a6b"]
    assert len(found["ab:changed@a1b2c3d"].points) == 6
    assert not any(s.change_points for s in found.values())  # no "improvement" at the run that moved the pin
