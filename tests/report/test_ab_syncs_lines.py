"""`ab`'s terminal output for people who read it: the FILE:LINE of a sync point new on head is never cut, however
narrow the console (it is what `--syncs` exists to report); a case that turned SLOWER without a census hints that
`--syncs` may name the cause."""

from __future__ import annotations

import dataclasses
import io

from rich.console import Console

from asyncbench.report import paired as views
from asyncbench.results.ab_report import ABReport
from asyncbench.results.labels import Label
from asyncbench.results.new_syncs import NewSync
from asyncbench.results.paired import PairedCase, PairedRatio, Side
from asyncbench.results.syncs import SyncKind, SyncPoint
from asyncbench.verdicts.outcome import Outcome

LONG = "src/mypackage/models/transformer/attention_layers.py"
POINT = SyncPoint(LONG, 1234, SyncKind.CONVERSION, "torch.Tensor.__float__ → torch.Tensor.item", 4.0, 3e-5, (2.7e-5, 4.3e-5))


def _report(label: Label, new_syncs: tuple[NewSync, ...] | None, backend: str = "jax", device: str = "cpu") -> ABReport:
    side = Side("head", "working tree", "python", "3.11", facts={"cpu_affinity": 2, "thread_variables": {"OMP_NUM_THREADS": "1"}})
    row = PairedRatio("step", "variant", "s", 1e-3, 1.2e-3, 1.2, (1.15, 1.25), label)
    case = PairedCase(f"work[{backend},{device}]", "ok", ratios=(row,), blocks=10, new_syncs=new_syncs, backend=backend, device=device)
    return ABReport("2026-01-01T00:00:00+00:00", "0", side, side, 0.05, 0.01, False, "frozen", (case,))


def _printed(view: views.ABView, width: int) -> str:
    out = io.StringIO()
    views.print_view(view, Console(file=out, width=width, force_terminal=False))
    return out.getvalue()


def test_a_new_sync_points_file_and_line_is_whole_on_a_line_of_its_own_in_a_narrow_non_tty_console():
    view = views.build(_report(Label.SLOWER, (NewSync("sync_every=0", POINT),)), Outcome(1, ("SLOWER",)))
    for width in (40, 80, 120):
        printed = _printed(view, width)
        assert any(line.strip() == f"{LONG}:1234" for line in printed.splitlines()), printed
        assert all(LONG in line for line in printed.splitlines() if "mypackage" in line), printed  # never a cut path
    assert "torch.Tensor.__float__ → torch.Tensor.item" in _printed(view, 200)


def test_a_slower_case_without_a_census_hints_at_syncs_in_one_line():
    view = views.build(_report(Label.SLOWER, None), Outcome(1, ("SLOWER",)))
    hints = [note for note in view.notes if "--syncs" in note]
    assert len(hints) == 1, view.notes
    assert "work[jax,cpu]" in hints[0]
    assert hints[0] in _printed(view, 400)
    assert "--syncs" in views.markdown(view)


def test_no_hint_where_a_census_was_taken_nothing_is_slower_or_the_backend_never_waits():
    taken = views.build(_report(Label.SLOWER, ()), Outcome(1, ("SLOWER",)))
    same = views.build(_report(Label.SAME, None), Outcome(0, ()))
    numpy = views.build(_report(Label.SLOWER, None, backend="numpy"), Outcome(1, ("SLOWER",)))
    torch_cpu = views.build(_report(Label.SLOWER, None, backend="torch"), Outcome(1, ("SLOWER",)))
    for view in (taken, same, numpy, torch_cpu):
        assert not [note for note in view.notes if "--syncs" in note], view.notes
    torch_gpu = views.build(_report(Label.SLOWER, None, backend="torch", device="cuda:0"), Outcome(1, ("SLOWER",)))
    assert [note for note in torch_gpu.notes if "--syncs" in note]


def test_the_hint_counts_a_case_once_however_many_of_its_rows_are_slower():
    report = _report(Label.SLOWER, None)
    (case,) = report.cases
    two = dataclasses.replace(case, ratios=(*case.ratios, dataclasses.replace(case.ratios[0], name="other")))
    view = views.build(dataclasses.replace(report, cases=(two,)), Outcome(1, ("SLOWER",)))
    (hint,) = [note for note in view.notes if "--syncs" in note]
    assert hint.count("work[jax,cpu]") == 1


def test_a_point_new_in_several_variants_is_named_once_and_a_single_wait_is_singular():
    """A trial's `ab --syncs` printed `bench/jsteps.py:14` once per variant and "1 waits/step": the FILE:LINE now
    heads the variants that wait there once, and one wait per step is "1 wait/step"."""
    once = dataclasses.replace(POINT, calls_per_step=1.0)
    new = (NewSync("sync_every=0", once), NewSync("sync_every=4", once), NewSync("sync_every=1", POINT))
    printed = _printed(views.build(_report(Label.SLOWER, new), Outcome(1, ("SLOWER",))), 200)
    lines = [line.strip() for line in printed.splitlines()]
    assert lines.count(f"{LONG}:1234") == 1, printed
    assert sum("sync_every=" in line for line in lines) == 3, printed
    assert "1 wait/step" in printed, printed
    assert "1 waits/step" not in printed, printed
    assert "4 waits/step" in printed, printed


def test_a_new_point_where_the_queue_was_full_is_not_called_a_wait():
    """A `queue full` point is not a wait of the step's (report.syncs.HEADERS): `ab --syncs` says what its count is."""
    full = dataclasses.replace(POINT, kind=SyncKind.QUEUE_FULL, calls_per_step=0.7)
    printed = _printed(views.build(_report(Label.SLOWER, (NewSync("sync_every=0", full),)), Outcome(1, ("SLOWER",))), 200)
    assert "0.7 times/step the queue was full" in printed, printed
    assert "waits/step" not in printed, printed
