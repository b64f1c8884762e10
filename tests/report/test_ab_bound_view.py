"""`ab --bound` in ab's report: the flips named first, a row per variant with both sides' readings and slacks, in the
terminal, the pull-request comment and the notebook; undecided never reads as a flip; a synchronous case is one
note; no `--bound`, nothing; and never a change to the gate's exit."""

from __future__ import annotations

import html
import io
from dataclasses import replace

from rich.console import Console

from asyncbench.report import bound_changes
from asyncbench.report import paired as views
from asyncbench.report.notebook import ab_html
from asyncbench.results.ab_report import ABReport
from asyncbench.results.bound import Bound, BoundKind, Side, SideBound
from asyncbench.results.bound_change import BoundChange, changes
from asyncbench.results.labels import Label
from asyncbench.results.paired import PairedCase, PairedRatio
from asyncbench.results.paired import Side as ABSide
from asyncbench.verdicts.bound import SYNCHRONOUS_NOTE, TOP_OF_LEVELS
from asyncbench.verdicts.outcome import Outcome


def _bound(kind: BoundKind, host_slack_s: float, device_slack_s: float) -> Bound:
    levels = (2.5e-4, 5e-4, 7.5e-4, 1e-3, 1.5e-3)
    sides = tuple(
        SideBound(side, slack, (max(slack - 2e-5, 0.0), slack + 2e-5), 1.0, (0.95, 1.05), levels)
        for side, slack in ((Side.HOST, host_slack_s), (Side.DEVICE, device_slack_s))
    )
    return Bound("step", kind, 1e-3, 12, sides=sides)


HOST_BOUND = _bound(BoundKind.HOST, 0.0, 4.2e-4)
DEVICE_BOUND = _bound(BoundKind.DEVICE, 4.2e-4, 0.0)
UNDECIDED = replace(_bound(BoundKind.INCONCLUSIVE, 1e-4, 1.5e-4), note="8 perturbation rounds: too few for an interval (at least 10)")


def _report(*cases: tuple[str, tuple[BoundChange, ...] | None]) -> ABReport:
    side = ABSide("head", "working tree", "python", "3.11", facts={"cpu_affinity": 2, "thread_variables": {"OMP_NUM_THREADS": "1"}})
    row = PairedRatio("sync_every=0", "variant", "s", 1e-3, 1e-3, 1.0, (0.99, 1.01), Label.SAME)
    rows = tuple(PairedCase(case_id, "ok", ratios=(row,), blocks=10, bound_changes=found) for case_id, found in cases)
    return ABReport("2026-01-01T00:00:00+00:00", "0", side, side, 0.05, 0.01, False, "frozen", rows)


def _between(base: Bound, head: Bound) -> tuple[BoundChange, ...]:
    return changes({"sync_every=0": base}, {"sync_every=0": head}, ["sync_every=0"], TOP_OF_LEVELS, {})


def _terminal(view: views.ABView) -> str:
    out = io.StringIO()
    views.print_view(view, Console(file=out, width=250))
    return out.getvalue()


def test_a_flip_is_named_and_each_side_s_slacks_are_shown():
    report = _report(("work[jax,cpu]", _between(HOST_BOUND, DEVICE_BOUND)))
    view = views.build(report, Outcome(0, ()))
    flip = "FLIPPED: work[jax,cpu] sync_every=0: HOST-BOUND on base → DEVICE-BOUND on head"
    assert view.flips == (flip,)
    ((case_id, variant, base, head, change, base_slack, head_slack),) = view.bounds or ()
    assert (case_id, variant, base, head, change) == ("work[jax,cpu]", "sync_every=0", "HOST-BOUND", "DEVICE-BOUND", "FLIPPED")
    assert base_slack == "host ~0 [≤ 20.0 µs] (≤ 2%), device 420 µs [400–440] (42%)"
    assert head_slack.startswith("host 420 µs [400–440] (42%)")
    shown = _terminal(view)
    assert flip in shown
    assert bound_changes.TITLE in shown
    assert "device 420 µs [400–440] (42%)" in shown
    comment = views.markdown(view)
    assert f"- **{flip}**" in comment
    assert "| work[jax,cpu] | sync_every=0 | HOST-BOUND | DEVICE-BOUND | **FLIPPED** |" in comment
    assert flip in ab_html(report)


def test_the_comment_s_title_renders_its_own_code_span_and_a_case_s_name_stays_escaped():
    """The trial: `ab --bound --markdown` wrote the title as `**… (\\`ab --bound\\`: information…)**`, its own code
    span escaped, so CommonMark showed the backticks. The tool's fixed words carry their markup; a case named with
    backticks still reads as written (a name from a file never renders)."""
    view = views.build(_report(("`work`[jax,cpu]", _between(HOST_BOUND, DEVICE_BOUND))), Outcome(0, ()))
    comment = views.markdown(view)
    title = "**what bounds the step on base and on head (`ab --bound`: information, never the gate's verdict)**"
    assert title in comment.splitlines()
    assert "\\`ab --bound" not in comment
    assert "| \\`work\\`[jax,cpu] | sync_every=0 |" in comment


def test_an_undecided_side_is_never_a_flip():
    view = views.build(_report(("work[jax,cpu]", _between(UNDECIDED, DEVICE_BOUND))), Outcome(0, ()))
    assert view.bounds is not None
    assert view.bounds[0][4] == "undecided"
    assert view.flips == ("no flip can be stated: every variant compared (1) is undecided on a side (INCONCLUSIVE)",)
    assert "FLIPPED" not in _terminal(view)
    assert "FLIPPED" not in views.markdown(view)
    why = "work[jax,cpu] sync_every=0: undecided on base: 8 perturbation rounds: too few for an interval (at least 10)"
    assert why in view.bound_notes
    assert not any("undecided on head" in note for note in view.bound_notes)  # the decided side is not explained away
    assert why in _terminal(view).replace("\n", " ")


def test_none_flipped_is_said_with_the_undecided_counted():
    report = _report(("a[jax,cpu]", _between(HOST_BOUND, HOST_BOUND)), ("b[jax,cpu]", _between(HOST_BOUND, UNDECIDED)))
    view = views.build(report, Outcome(0, ()))
    assert view.flips == (bound_changes.NO_FLIP + " (1 undecided on a side: no flip can be stated for them)",)
    assert [row[4] for row in view.bounds or ()] == ["unchanged", "undecided"]


def test_a_synchronous_case_is_one_note_not_a_row_and_no_bound_says_nothing():
    synchronous = Bound("sync_every=0", BoundKind.SYNCHRONOUS, 1e-3, 0, note=SYNCHRONOUS_NOTE)
    view = views.build(_report(("work[numpy,cpu]", _between(synchronous, synchronous))), Outcome(0, ()))
    assert view.bounds == ()
    assert view.flips == ()
    assert f"work[numpy,cpu]: bound not compared: {SYNCHRONOUS_NOTE}" in view.bound_notes
    plain = views.build(_report(("work[jax,cpu]", None)), Outcome(0, ()))
    assert plain.bounds is None
    assert bound_changes.TITLE not in _terminal(plain)
    assert bound_changes.TITLE not in views.markdown(plain)


def test_a_flip_does_not_fail_the_gate():
    report = _report(("work[jax,cpu]", _between(HOST_BOUND, DEVICE_BOUND)))
    assert views.shown_again(report).code == 0


def test_each_section_s_lines_sit_under_its_own_title():
    """The `--syncs` line and the sides are never under the bounds' title; a bound's own note is (terminal, comment)."""
    synchronous = Bound("sync_every=0", BoundKind.SYNCHRONOUS, 1e-3, 0, note=SYNCHRONOUS_NOTE)
    report = _report(("work[numpy,cpu]", _between(synchronous, synchronous)))
    report = replace(report, cases=tuple(replace(case, new_syncs=()) for case in report.cases))
    view = views.build(report, Outcome(0, ()))
    census = "work[numpy,cpu]: no sync point compared"
    unbound = "work[numpy,cpu]: bound not compared"
    for shown in (_terminal(view).replace("\n", " "), views.markdown(view), html.unescape(ab_html(report))):
        title = shown.index("what bounds the step on base and on head")
        assert shown.index(census) < title < shown.index(unbound), shown
        assert shown.index("head: working tree") < title, shown
        assert shown.index("margin 5%") < title, shown  # the budget is the verdicts' key, said with their table


def test_a_slack_whose_interval_is_zero_reads_plainly_zero():
    host, device = HOST_BOUND.sides
    exact = replace(HOST_BOUND, sides=(replace(host, slack_s=0.0, slack_ci_s=(0.0, 0.0)), device))
    view = views.build(_report(("work[jax,cpu]", _between(exact, DEVICE_BOUND))), Outcome(0, ()))
    ((*_, base_slack, _head_slack),) = view.bounds or ()
    assert base_slack.startswith("host 0 (0%), device 420 µs"), base_slack
