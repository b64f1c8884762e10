"""A change point has at least history.model.MIN_SIDE_RUNS runs on each side, as docs/guides/history.md promises ("a
step shows once three runs lie on each side of it"): Otava's split takes no smallest segment, and split one
`ab` run at 2.75x (no interval) from ten at 1.00x into a change "at" the second run, from one run. The series are
recorded into a real SQLite store, and `history`, the report's page and `--fail-on-regression` read them."""

from __future__ import annotations

import dataclasses
import io
import json
import random

import pytest

from asyncbench.history import changes, model, store, target
from asyncbench.history.model import Point
from asyncbench.results import ab_file, ab_report, paired
from asyncbench.results.labels import label_of
from tests.support.cli import invoke

FACTS = {"cpu": "Test CPU", "cpu_cores_logical": 2, "hostname": "runner", "frameworks": {"numpy": {"version": "2.0"}}}
# a paired ratio's spread across `ab` gates on a busy machine: about half a percent (benchmarks/history_drift.py)
SPREAD = 0.003


def _ab_file(ratio: float, day: int, interval: bool = True) -> ab_file.ABFile:
    """A real `ab` file, read back as `record` reads one: one case whose paired ratio head/base is `ratio` (with no
    interval where not `interval`, as an `ab` of too few blocks writes it)."""
    side = paired.Side("head", "a1b2c3d (HEAD)", "python3", "3.11", facts=FACTS)
    bounds = (ratio * 0.997, ratio * 1.003) if interval else None
    compared = paired.PairedRatio("changed", paired.VARIANT, "s", 0.004, 0.004 * ratio, ratio, bounds, label_of(bounds, 0.05))
    case = paired.PairedCase("changed[numpy,cpu]", "ok", ratios=(compared,), rounds=100, blocks=10)
    base = dataclasses.replace(side, name="base", revision="a1b2c3d (HEAD)")
    report = ab_report.ABReport(f"2026-01-{day:02d}T12:00:00+00:00", "0.1.0", base, side, 0.05, 0.01, False, "SIGSTOP", (case,))
    return ab_file.from_dict(json.loads(report.to_json()), f"ab-{day}.json")


def _record(tmp_path, ratios: list[float], first_has_interval: bool = True) -> str:
    path = str(tmp_path / "h.sqlite")
    opened = store.open_store(target.resolve(path), writing=True)
    for day, ratio in enumerate(ratios, start=1):
        assert opened.record_ab(_ab_file(ratio, day, first_has_interval or day > 1), label=f"ab-{day}").new
    return path


def _flat(seed: int, runs: int) -> list[float]:
    draw = random.Random(seed)
    return [1.0 + draw.gauss(0, SPREAD) for _ in range(runs)]


@pytest.mark.parametrize("first", [2.75, 0.364])
def test_one_run_then_ten_unlike_it_is_no_change_in_history_the_page_or_the_gate(tmp_path, first):
    """The trial's series: one real `ab` run (2.75x, no interval), then ten at 1.00x. Reversed (0.364x first), the
    one-run "change" was a slower ×2.75 [?] that failed the gate as INCONCLUSIVE."""
    from asyncbench.report import html

    path = _record(tmp_path, [first, *_flat(3, 10)], first_has_interval=False)
    [series] = store.open_store(target.resolve(path)).series("changed")
    assert len(series.points) == 11
    assert series.change_points == ()
    shown = invoke("history", "changed", "--history", path)
    assert shown.exit_code == 0, shown.output
    assert "(11 runs, no change found)" in shown.output
    assert "at ab-2" not in shown.output
    gated = invoke("history", "changed", "--history", path, "--fail-on-regression", "--max-regression", "10%")
    assert gated.exit_code == 0, gated.output
    assert "inconclusive" not in gated.stderr
    page = html.render([series], None, [], "h.sqlite")
    assert "change at ab-2" not in page


def test_a_step_at_the_end_shows_once_three_runs_lie_after_it(tmp_path):
    path = str(tmp_path / "h.sqlite")
    opened = store.open_store(target.resolve(path), writing=True)
    ratios = [*_flat(5, 6), 1.3, 1.3 * 1.002, 1.3 * 0.998]
    found = []
    for day, ratio in enumerate(ratios, start=1):
        opened.record_ab(_ab_file(ratio, day), label=f"ab-{day}")
        [series] = opened.series("changed")
        found.append(tuple(change.at for change in series.change_points))
    assert found[6:] == [(), (), ("ab-7",)]  # one run after it, two: not yet; three: the step, where it starts


def test_a_change_stored_from_one_run_before_the_rule_is_not_shown(tmp_path):
    """A store recorded by an asyncbench without the rule holds such a change until a run recorded looks again:
    reading holds it to the rule too, so `history`, the page and the gate never show it."""
    path = _record(tmp_path, [2.75, *_flat(4, 10)], first_has_interval=False)
    opened = store.open_store(target.resolve(path), writing=True)
    [series] = opened.series("changed")
    with opened.transaction() as connection:  # as the trial's store held it
        row = {"series_id": 1, "run_id": 2, "at": "ab-2", "before": 2.75, "after": 1.0, "ratio": 1.0 / 2.75}  # its quotient
        connection.execute(opened.table("changes").insert(), [{**row, "ratio_low": None, "ratio_high": None, "p_value": 1.5e-12}])
    [again] = opened.series("changed")
    assert again.change_points == ()
    shown = invoke("history", "changed", "--history", path)
    assert "at ab-2" not in shown.output


@pytest.mark.parametrize("seed", range(12))
def test_no_change_point_has_fewer_than_min_side_runs_on_a_side(seed):
    """Series with steps, lone outliers and two-run blips at random places: every change called has MIN_SIDE_RUNS
    runs or more between it and the series' ends and its neighbours."""
    draw = random.Random(seed)
    values = [1.0 + draw.gauss(0, 0.01) for _ in range(24)]
    for _ in range(3):
        at, width, factor = draw.randrange(24), draw.choice([1, 2, 6, 24]), draw.choice([0.4, 1.6, 2.5])
        values[at : at + width] = [v * factor for v in values[at : at + width]]
    points = [Point(run, "t", f"run-{run}", None, value, None, None) for run, value in enumerate(values, start=1)]
    edges = [1, *(change.run for change in changes.change_points(points)), len(values) + 1]
    assert all(later - earlier >= model.MIN_SIDE_RUNS for earlier, later in zip(edges, edges[1:], strict=False))


def test_history_says_what_a_change_s_question_mark_means_where_it_shows_one(tmp_path):
    from rich.console import Console

    from asyncbench.report import history as shown

    bare = _record(tmp_path, [*_flat(6, 3), 1.3, 1.3 * 1.002, 1.3 * 0.998])  # three a side: no interval at 95%
    [series] = store.open_store(target.resolve(bare)).series("changed")
    [change] = series.change_points
    assert change.ratio_low is None
    out = io.StringIO()
    shown.print_series([series], Console(file=out, width=400, color_system=None))
    lines = out.getvalue().splitlines()
    at = next(i for i, line in enumerate(lines) if "at ab-4:" in line and "[?]" in line)
    assert lines[at + 1].strip() == shown.NO_INTERVAL
    assert "no 95% interval" in shown.NO_INTERVAL
    assert "too few runs on a side" in shown.NO_INTERVAL
    (tmp_path / "wide").mkdir()
    wide = _record(tmp_path / "wide", [*_flat(7, 6), *(1.3 * v for v in _flat(8, 6))])
    [series] = store.open_store(target.resolve(wide)).series("changed")
    out = io.StringIO()
    shown.print_series([series], Console(file=out, width=400, color_system=None))
    assert "at ab-7:" in out.getvalue()
    assert "[?]" not in out.getvalue()  # a change with an interval says nothing of one
