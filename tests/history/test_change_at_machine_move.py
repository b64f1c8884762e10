"""A change of a case found at the very run its machine moved carries the machine's change, as `compare` does.

A new user's series D: 14 runs, the machine's reference ×1.2 and the case ×1.5, both from run 7. The history
searched the runs scaled to the machine's usual speed and stated `×1.25 [1.24–1.26]` (1.02 → 1.28 ms, nothing saying
it was scaled), and `--fail-on-regression` failed on it, beside its own note that a change of the code at the same run
cannot be told from the machine's; `compare` of runs 1 and 14 said `+49.6% [+1.4% … +51.5%] INCONCLUSIVE`.
"""

from __future__ import annotations

import dataclasses
import json

import pytest

from asyncbench.history import store, target
from asyncbench.results.model import MetricInfo
from tests.history.test_machine_history import _case
from tests.support.cli import invoke
from tests.support.helpers import report_of


def _store(tmp_path, code_from: int, follows: bool) -> str:
    """14 runs (labels Dp01…Dp14): the machine's reference ×1.2 from run 7, the case measured ×1.5 from run
    `code_from`, and ×1.2 with the machine from run 7 where it `follows` it (the user's D: code_from 7, not following:
    measured 1 ms, then 1.5 ms)."""
    path = str(tmp_path / f"d{code_from}.sqlite")
    opened = store.open_store(target.resolve(path), writing=True)
    for run in range(1, 15):
        speed = 1.2 if run >= 7 else 1.0
        code = 1.5 if run >= code_from else 1.0
        time_s = 0.001 * code * (speed if follows else 1.0)
        row = _case("mm", time_s, 0.001 * speed, 0.0, run)
        rate = 1e-3 / row.variants["chain"].done_s.median  # a rate of its work: GFLOP/s
        row = dataclasses.replace(row, metrics={"gflops": rate}, metric_info={"gflops": MetricInfo("GFLOP/s")})
        opened.record(report_of([row]), label=f"Dp{run:02d}")
    return path


def _change_line(output: str) -> str:
    """The line of done_s's change in `history`'s output (the machine's own series says its change first)."""
    lines = output.splitlines()
    at = next(index for index, line in enumerate(lines) if " chain done_s " in line)
    return lines[at + 1]


def _done(path: str, quantity: str = "done_s"):
    (one,) = [s for s in store.open_store(target.resolve(path)).series() if s.quantity == quantity]
    return one


def test_a_change_at_the_run_the_machine_moved_carries_the_machines_change_in_its_interval(tmp_path):
    path = _store(tmp_path, code_from=7, follows=False)
    (change,) = _done(path).change_points
    assert change.at == "Dp07"
    # the figures as measured, not scaled by the machine (they read 1.0 → 1.25 ms scaled, and said nothing of it)
    assert change.before == pytest.approx(0.001, rel=0.03)
    assert change.after == pytest.approx(0.0015, rel=0.03)
    assert change.ratio == pytest.approx(1.5, rel=0.03)
    # the case's ×1.5 over the machine's ×1.2 raised to 0…2 (compare's +1.4% … +51.5%): ×1.5/1.44 up to ×1.5
    assert change.ratio_low == pytest.approx(1.5 / 1.44, rel=0.03)
    assert change.ratio_high == pytest.approx(1.5, rel=0.03)
    assert change.machine_ratio == pytest.approx(1.2, rel=0.03)
    assert not change.scaled
    # a rate of the work moves against the machine's time: ×0.667 measured, up to ×0.667 · 1.44 = ×0.96 carried
    (rate,) = _done(path, "gflops").change_points
    assert rate.ratio == pytest.approx(1 / 1.5, rel=0.03)
    assert rate.ratio_low == pytest.approx(1 / 1.5, rel=0.03)
    assert rate.ratio_high == pytest.approx(1.44 / 1.5, rel=0.03)


def test_the_gate_calls_a_change_at_the_machines_move_inconclusive_where_the_carried_interval_straddles_the_margin(tmp_path):
    path = _store(tmp_path, code_from=7, follows=False)
    gated = invoke("history", "--history", path, "--fail-on-regression", "--max-regression", "10%")
    assert gated.exit_code == 1, gated.output  # an undecided gate fails unless --allow-inconclusive
    done = [line for line in gated.stderr.splitlines() if " done_s " in line]
    assert len(done) == 1, gated.stderr
    assert done[0].startswith("inconclusive: mm chain done_s"), done[0]
    assert "cannot be told from the machine's" in done[0]
    allowed = invoke("history", "--history", path, "--fail-on-regression", "--max-regression", "10%", "--allow-inconclusive")
    assert allowed.exit_code == 0, allowed.output
    # past its carried interval's far end the gate passes it: it cannot be that slow, whatever the machine did
    passed = invoke("history", "--history", path, "--fail-on-regression", "--max-regression", "60%")
    assert passed.exit_code == 0, passed.output
    # within its near end it still fails: ×1.04 at the least, whatever the machine did
    failed = invoke("history", "--history", path, "--fail-on-regression", "--max-regression", "1%")
    assert failed.exit_code == 1, failed.output
    assert any(line.startswith("regression: mm chain done_s") for line in failed.stderr.splitlines()), failed.stderr


def test_history_says_a_change_at_the_machines_move_carries_it_in_its_line_and_json(tmp_path):
    path = _store(tmp_path, code_from=7, follows=False)
    shown = invoke("history", "mm", "--history", path)
    line = _change_line(shown.output)
    assert line.strip().startswith("at Dp07"), line
    assert "→ 1.50 ms" in line, line  # as measured: scaled, it read 1.25 ms
    assert "the machine's reference ×1.2" in line, line
    as_json = json.loads(invoke("history", "mm", "--history", path, "--format", "json").output)
    (done,) = [s for s in as_json if s["quantity"] == "done_s"]
    (change,) = done["change_points"]
    assert change["machine_ratio"] == pytest.approx(1.2, rel=0.03)
    assert change["scaled"] is False


def test_a_change_away_from_the_machines_move_keeps_its_tight_interval_and_says_it_is_scaled(tmp_path):
    """The machine ×1.2 from run 7, the case ×1.5 from run 11: the machine steady on both sides of the change."""
    path = _store(tmp_path, code_from=11, follows=True)
    one = _done(path)
    (change,) = one.change_points
    assert change.at == "Dp11"
    assert change.machine_ratio is None
    assert change.scaled  # its figures are at the machine's usual speed: 1 ms → 1.5 ms, measured 1.2 → 1.8 ms
    assert change.ratio == pytest.approx(1.5, rel=0.03)
    assert change.ratio_low is not None
    assert change.ratio_high is not None
    assert change.ratio_high / change.ratio_low < 1.05
    gated = invoke("history", "--history", path, "--fail-on-regression", "--max-regression", "30%")
    assert gated.exit_code == 1, gated.output
    assert any(line.startswith("regression: mm chain done_s") for line in gated.stderr.splitlines()), gated.stderr
    shown = invoke("history", "mm", "--history", path)
    line = _change_line(shown.output)
    assert line.strip().startswith("at Dp11"), line
    assert "scaled to the machine's usual speed" in line, line
