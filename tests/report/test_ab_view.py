"""What `ab`'s view says beside its table: thread pools left to spin on a small runner, an undecided case's need."""

from __future__ import annotations

import math

from asyncbench.report import paired as views
from asyncbench.results.labels import Label
from asyncbench.results.paired import ABReport, PairedCase, PairedRatio, Side
from asyncbench.verdicts.outcome import Outcome


def _report(thread_variables: dict, case: PairedCase | None = None) -> ABReport:
    facts = {"cpu_affinity": 2, "thread_variables": thread_variables}
    side = Side("head", "working tree", "python", "3.11", facts=facts)
    row = PairedRatio("step", "variant", "s", 1e-3, 1e-3, 1.0, (0.99, 1.01), Label.SAME)
    case = case or PairedCase("work[numpy,cpu]", "ok", ratios=(row,), blocks=10)
    return ABReport("2026-01-01T00:00:00+00:00", "0", side, side, 0.05, 0.01, False, "frozen", (case,))


def test_unpinned_thread_pools_on_two_cores_are_named_and_pinned_ones_are_not():
    unpinned = views.build(_report({}), Outcome(0, ()))
    assert any("no BLAS/OpenMP thread count set on 2 cores" in note for note in unpinned.notes)
    pinned = views.build(_report({"OPENBLAS_NUM_THREADS": "1"}), Outcome(0, ()))
    assert not any("thread count" in note for note in pinned.notes)


def test_an_undecided_case_says_how_far_it_got_and_what_it_needs():
    row = PairedRatio("step", "variant", "s", 1e-3, 1e-3, 1.0, (0.9, 1.2), Label.INCONCLUSIVE)
    case = PairedCase("work[numpy,cpu]", "ok", ratios=(row,), blocks=1, elapsed_s=2.0, needed_s=30.0)
    notes = views.build(_report({"OMP_NUM_THREADS": "1"}, case), Outcome(1, ())).notes
    assert any("undecided after 1 block (2 s)" in note and "about 30 s more" in note for note in notes), notes
    case = PairedCase("work[numpy,cpu]", "ok", ratios=(row,), blocks=40, elapsed_s=90.0, needed_s=math.inf)
    notes = views.build(_report({"OMP_NUM_THREADS": "1"}, case), Outcome(1, ())).notes
    assert any("sits on the margin" in note for note in notes), notes


def test_a_case_judged_at_its_own_margin_says_so_and_one_at_the_gate_s_does_not():
    row = PairedRatio("step", "variant", "s", 1e-3, 1e-3, 1.0, (0.9, 1.1), Label.NOT_SLOWER)
    own = PairedCase("work[numpy,cpu]", "ok", ratios=(row,), blocks=14, margin=0.25)
    notes = views.build(_report({"OMP_NUM_THREADS": "1"}, own), Outcome(0, ())).notes
    assert "work[numpy,cpu]: judged at its own margin, 25% (its ab_margin, as the base side states it)" in notes
    assert "margin 5% (1 case at its own, noted above)" in views.build(_report({}, own), Outcome(0, ())).budget
    gate_s = PairedCase("work[numpy,cpu]", "ok", ratios=(row,), blocks=14, margin=0.05)
    assert not any("own margin" in note for note in views.build(_report({"OMP_NUM_THREADS": "1"}, gate_s), Outcome(0, ())).notes)
