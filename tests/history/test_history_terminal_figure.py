"""`history` in a terminal ends each series' line with a figure as the other views say it: the run it is of named
where that run, the last recorded, is not the latest run (`report`'s: the one made last), and a slack of what bounds a
step (`run --bound`) whose interval reaches 0 as '~0 [≤ x]', never its point estimate alone."""

from __future__ import annotations

import dataclasses
import io

from rich.console import Console

from asyncbench.history import store, target
from asyncbench.report import history as shown
from asyncbench.results.bound import Side, SideBound
from asyncbench.results.model import Stats
from asyncbench.results.schema import Report
from tests.history.test_bound_history import with_bound
from tests.support.bounds import host_bound
from tests.support.helpers import quick_numpy_results


def _printed(opened: store.Store) -> list[str]:
    out = io.StringIO()
    shown.print_series(opened.series(None, 40), Console(file=out, width=400, color_system=None))
    return out.getvalue().splitlines()


def _times(stats: Stats, factor: float) -> Stats:
    low, high = (None if end is None else end * factor for end in (stats.ci_low, stats.ci_high))
    return dataclasses.replace(
        stats, median=stats.median * factor, min=stats.min * factor, max=stats.max * factor, ci_low=low, ci_high=high
    )


def _scaled(report: Report, factor: float) -> Report:
    """`report` with its first result's done times `factor` times as long (median and interval alike)."""
    first = report.results[0]
    variants = {name: dataclasses.replace(timed, done_s=_times(timed.done_s, factor)) for name, timed in first.variants.items()}
    return dataclasses.replace(report, results=(dataclasses.replace(first, variants=variants), *report.results[1:]))


def test_a_run_recorded_last_but_made_earlier_is_named_beside_the_latest_run(tmp_path):
    report = Report.load(quick_numpy_results(tmp_path / "r.json"))
    opened = store.open_store(target.resolve(str(tmp_path / "h.sqlite")), writing=True)
    for index in range(4):  # four runs made at 20:42, then one made at 20:38 recorded after them
        opened.record(dataclasses.replace(report, run_id=f"{index + 1}" * 32, created=f"2026-11-29T20:42:0{index}+00:00"))
    opened.record(dataclasses.replace(_scaled(report, 0.5), run_id="e" * 32, created="2026-11-29T20:38:00+00:00"))
    latest = opened.latest()
    assert latest is not None
    assert latest.run == 4
    lines = _printed(opened)
    at = next(index for index, line in enumerate(lines) if line.startswith("matmul[") and " matmul done_s " in line)
    note = lines[at + 1]
    assert "the figure is run 5's, recorded last, made 2026-11-29T20:38:00 UTC" in note
    assert "the latest run (made last) is run 4, made 2026-11-29T20:42:03 UTC: " in note
    # the latest run's figure is its own (twice the one recorded last), as report's table gives it
    [done] = [q for case in latest.cases for q in case.quantities if q[:2] == ("matmul", "done_s")]
    assert note.split(": ")[1].split(" (")[0] == shown._figure(done[3], "s")
    assert shown._figure(done[3], "s") in note
    assert lines[at].count(shown._figure(done[3] / 2, "s")) == 1


def test_runs_recorded_in_the_order_made_say_nothing_more(tmp_path):
    report = Report.load(quick_numpy_results(tmp_path / "r.json"))
    opened = store.open_store(target.resolve(str(tmp_path / "h.sqlite")), writing=True)
    for index in range(3):
        opened.record(dataclasses.replace(report, run_id=f"{index + 1}" * 32, created=f"2026-11-29T20:42:0{index}+00:00"))
    assert not [line for line in _printed(opened) if "recorded last" in line]


def _slacks(host: tuple[float, tuple[float, float]], device: tuple[float, tuple[float, float]]):
    def make(variant: str):
        bound = host_bound(variant)
        sides = tuple(
            SideBound(side.side, value, interval, side.cost_past, side.cost_past_ci, side.levels_s)
            for side, (value, interval) in zip(bound.sides, (host, device), strict=True)
        )
        assert [side.side for side in sides] == [Side.HOST, Side.DEVICE]
        return dataclasses.replace(bound, sides=sides)

    return make


def test_a_slack_whose_interval_reaches_zero_reads_as_the_other_views_say_it(tmp_path):
    report = Report.load(quick_numpy_results(tmp_path / "r.json"))
    opened = store.open_store(target.resolve(str(tmp_path / "h.sqlite")), writing=True)
    opened.record(with_bound(report, _slacks((75.9e-6, (0.0, 273e-6)), (0.0, (0.0, 592e-6))), "a" * 32))
    lines = _printed(opened)
    [host] = [line for line in lines if "bound:host_slack_s" in line]
    [device] = [line for line in lines if "bound:device_slack_s" in line]
    assert "  ~0 [≤ 273 µs] (1 run" in host
    assert "75.9" not in host
    assert "  ~0 [≤ 592 µs] (1 run" in device
    assert "0 ns" not in device


def test_a_slack_of_interval_zero_to_zero_is_a_bare_zero_and_one_clear_of_zero_its_figure(tmp_path):
    report = Report.load(quick_numpy_results(tmp_path / "r.json"))
    opened = store.open_store(target.resolve(str(tmp_path / "h.sqlite")), writing=True)
    opened.record(with_bound(report, _slacks((0.0, (0.0, 0.0)), (300e-6, (280e-6, 320e-6))), "b" * 32))
    lines = _printed(opened)
    [host] = [line for line in lines if "bound:host_slack_s" in line]
    [device] = [line for line in lines if "bound:device_slack_s" in line]
    assert "  0 (1 run" in host
    assert "~0" not in host
    assert "  300 µs (1 run" in device


def test_a_latest_run_ordered_by_its_recording_says_the_time_is_when_it_was_recorded(tmp_path):
    """A run whose clock was ahead (created 2999-…) counts as made when it was recorded; the note once called that
    time the one it was made ("the latest run (made last) is run 1, 2026-…"), a time the run never stated."""
    report = Report.load(quick_numpy_results(tmp_path / "r.json"))
    opened = store.open_store(target.resolve(str(tmp_path / "h.sqlite")), writing=True)
    opened.record(dataclasses.replace(report, run_id="1" * 32, created="2999-01-01T00:00:00+00:00"))
    opened.record(dataclasses.replace(_scaled(report, 0.5), run_id="2" * 32, created="2026-01-01T00:00:00+00:00"))
    lines = _printed(opened)
    at = next(index for index, line in enumerate(lines) if line.startswith("matmul[") and " matmul done_s " in line)
    note = lines[at + 1]
    assert "the figure is run 2's, recorded last, made 2026-01-01T00:00:00 UTC" in note
    assert "the latest run (made last) is run 1, recorded " in note
    assert "its own clock said 2999-01-01T00:00:00 UTC, ahead" in note
