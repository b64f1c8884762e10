"""Words beside figures say what the figures are (the labels new users found contradicting the numbers beside them):
a SAME whose interval excludes no change says a change exists within the margin; `compare`'s key never calls the
Hodges–Lehmann shift the centre of its interval."""

from __future__ import annotations

import dataclasses
import html
import io
import random

from rich.console import Console

from asyncbench.report import compared, markdown, terminal
from asyncbench.report import paired as views
from asyncbench.report.gate_headline import NO_SLOWDOWN
from asyncbench.report.notebook import ab_html
from asyncbench.results import stats
from asyncbench.results.ab_report import ABReport
from asyncbench.results.labels import Label
from asyncbench.results.model import OK, Result, Samples, VariantResult
from asyncbench.results.paired import PairedCase, PairedRatio, Side
from asyncbench.verdicts import compare
from asyncbench.verdicts.outcome import Outcome
from asyncbench.verdicts.paired import judge
from tests.support.helpers import report_of


def _ab(*ratios: PairedRatio) -> ABReport:
    side = Side("head", "working tree", "python", "3.11", facts={"cpu_affinity": 2, "thread_variables": {"OMP_NUM_THREADS": "1"}})
    case = PairedCase("work[numpy,cpu]", "ok", ratios=ratios, blocks=21)
    return ABReport("2026-01-01T00:00:00+00:00", "0", side, side, 1.5, 0.01, False, "frozen", (case,))


def _terminal(view: views.ABView) -> str:
    out = io.StringIO()
    views.print_view(view, Console(file=out, width=250))
    return " ".join(out.getvalue().split())


SLOWER_WITHIN = "WITHIN MARGIN (slower, by less than the 150% margin)"


def test_a_same_whose_interval_excludes_no_change_says_a_change_exists_within_the_margin():
    """`+85.8% | [+66.0% … +92.0%] | SAME` at a margin of 150%: the label stays SAME, its cell says more."""
    changed = PairedRatio("changed", "variant", "s", 20.2e-3, 34.3e-3, 1.858, (1.66, 1.92), Label.SAME)
    unchanged = PairedRatio("unchanged", "variant", "s", 1e-3, 1e-3, 1.01, (0.97, 1.05), Label.SAME)
    report = _ab(changed, unchanged)
    view = views.build(report, Outcome(0, ()))
    assert view.labels == (Label.SAME, Label.SAME)  # the label (and so the JSON, the exit) unchanged
    assert [row[-1] for row in view.rows] == [SLOWER_WITHIN, "SAME"]
    comment = views.markdown(view)
    assert f"| [+66.0% … +92.0%] | {SLOWER_WITHIN} |" in comment
    assert "| [−3.0% … +5.0%] | SAME |" in comment
    assert "no slowdown beyond the margin" in comment
    assert f"[+66.0% … +92.0%] │ {SLOWER_WITHIN} │" in _terminal(view)
    assert SLOWER_WITHIN in html.unescape(ab_html(report))


def test_a_same_within_a_case_s_own_margin_says_which_way_and_that_margin():
    """The trial: `+19.2% | [+14.0% … +25.9%] | SAME (a change within the margin)` at `--set ab_margin=30%` read as
    "no change" beside an interval wholly above it; a change wholly below 1 says faster."""
    slower = PairedRatio("slower", "variant", "s", 10e-3, 11.92e-3, 1.192, (1.14, 1.259), Label.SAME)
    faster = PairedRatio("faster", "variant", "s", 10e-3, 8.5e-3, 0.85, (0.80, 0.90), Label.SAME)
    side = Side("head", "working tree", "python", "3.11")
    case = PairedCase("work[numpy,cpu]", "ok", ratios=(slower, faster), blocks=21, margin=0.3)
    report = ABReport("2026-01-01T00:00:00+00:00", "0", side, side, 0.05, 0.01, False, "frozen", (case,))
    view = views.build(report, Outcome(0, ()))
    cells = [row[-1] for row in view.rows]
    assert cells == ["WITHIN MARGIN (slower, by less than the 30% margin)", "WITHIN MARGIN (faster, by less than the 30% margin)"]
    assert not any(cell.startswith("SAME") for cell in cells)
    assert view.labels == (Label.SAME, Label.SAME)


def _timed(done: list[float]) -> Result:
    variant = VariantResult(Samples(tuple(done), tuple(done)), stats.summarize(done), stats.summarize(done), None)
    return Result("a", "e", "matmul", "torch", "cpu", {}, OK, variants={"v": variant})


def _compared(slower_by: float, max_regression: float) -> compared.ComparisonView:
    rng = random.Random(5)
    base = [10e-3 * rng.uniform(0.98, 1.02) for _ in range(40)]
    current = [10e-3 * slower_by * rng.uniform(0.98, 1.02) for _ in range(40)]
    return compared.comparison(compare.compare(report_of([_timed(base)]), report_of([_timed(current)]), max_regression))


def _rendered(shown: compared.ComparisonView) -> tuple[str, str]:
    console = Console(width=250, record=True, color_system=None)
    terminal.print_comparison(shown, console)
    return " ".join(console.export_text().split()), "\n".join(markdown.comparison_lines(shown))


def test_compare_s_same_row_that_surely_changed_says_so_and_one_that_may_not_have_does_not():
    changed = _compared(1.2, 0.5)
    (row,) = changed.rows
    assert row.label == Label.SAME
    for rendered in _rendered(changed):
        assert "WITHIN MARGIN (slower, by less than the 50% margin)" in rendered
    (row,) = _compared(1.0, 0.5).rows
    assert row.cells[-1] == "SAME"


def test_compare_s_key_never_calls_the_shift_the_centre_of_its_interval():
    """+99.3% with [+66.1% … +174.9%] was keyed as 'the centre of its interval'."""
    for rendered in _rendered(_compared(1.2, 0.5)):
        assert "centre of its interval" not in rendered
        assert "need not centre" in rendered


def test_a_gate_let_through_undecided_never_says_no_slowdown():
    """A trial's PR comment read `✅ no slowdown beyond the margin: 1 INCONCLUSIVE` beside an undecided +88.1% row
    (`ab --allow-inconclusive`): the headline came from the exit code alone. Every writer with a headline (the
    comment, the terminal, the notebook) now says the gate passed undecided, and one with every row decided still
    says no slowdown."""
    undecided = PairedRatio("step", "variant", "s", 23.4e-3, 45.1e-3, 1.881, None, Label.INCONCLUSIVE)
    same = PairedRatio("other", "variant", "s", 1e-3, 1e-3, 1.01, (0.97, 1.05), Label.SAME)
    report = dataclasses.replace(_ab(undecided, same), allow_inconclusive=True)
    outcome = judge(report)
    assert outcome.code == 0  # let through: the gate passes
    view = views.build(report, outcome)
    said = "passes (--allow-inconclusive): 1 INCONCLUSIVE, not shown either way"
    for writer, text in _every_writer(view, report):
        assert said in text, writer
        assert NO_SLOWDOWN not in text, writer
    assert f"**✅ {said}**: 1 SAME, 1 INCONCLUSIVE" in views.markdown(view)
    decided = views.build(_ab(same), Outcome(0, ()))
    assert f"**✅ {NO_SLOWDOWN}**" in views.markdown(decided)
    assert NO_SLOWDOWN in _terminal(decided)


def _every_writer(view, report) -> tuple[tuple[str, str], ...]:
    """What each writer of an ab gate shows a person: the pull request's comment, the terminal, the notebook."""
    return (("comment", views.markdown(view)), ("terminal", _terminal(view)), ("notebook", html.unescape(ab_html(report))))


def test_a_gate_let_through_undecided_says_its_count_once():
    """`show ab-same.json --allow-inconclusive` read `✅ passes (--allow-inconclusive): 1 INCONCLUSIVE, not shown
    either way**: 1 INCONCLUSIVE`: the counts after the headline repeated it. They are said only where they add to it."""
    undecided = PairedRatio("step", "variant", "s", 23.4e-3, 45.1e-3, 1.881, None, Label.INCONCLUSIVE)
    report = dataclasses.replace(_ab(undecided), allow_inconclusive=True)
    view = views.build(report, judge(report))
    said = "passes (--allow-inconclusive): 1 INCONCLUSIVE, not shown either way"
    for writer, text in _every_writer(view, report):
        assert said in text, writer
        assert text.count("INCONCLUSIVE,") == 1, writer
        assert "either way**:" not in text, writer
        assert "either way: 1" not in text, writer
    assert f"**✅ {said}**\n" in views.markdown(view)


def test_the_ab_table_says_what_a_step_form_s_medians_are_per():
    """A trial's `ab` table gave a step form's base and head as "23.4 ms" where `run`'s column says "done per 20
    steps": its columns now say it where every row is per the same 20 steps, and each cell where the rows differ."""
    step = PairedRatio("sync_every=0", "variant", "s", 23.4e-3, 24e-3, 24 / 23.4, (0.99, 1.04), Label.SAME)
    stepped = PairedCase("train_step[torch,cpu]", "ok", ratios=(step,), blocks=21, params={"steps": 20, "sync_every": [0, 4, 1]})
    view = views.build(dataclasses.replace(_ab(step), cases=(stepped,)), Outcome(0, ()))
    assert view.headers[2:4] == ("base per 20 steps", "head per 20 steps")
    assert "| base per 20 steps | head per 20 steps |" in views.markdown(view)
    assert "base per 20 steps" in _terminal(view)
    assert "base per 20 steps" in html.unescape(ab_html(dataclasses.replace(_ab(step), cases=(stepped,))))
    other = PairedCase("m[numpy,cpu]", "ok", ratios=(dataclasses.replace(step, name="matmul"),), blocks=21, params={"n": 64})
    mixed = views.build(dataclasses.replace(_ab(step), cases=(stepped, other)), Outcome(0, ()))
    assert mixed.headers == views.HEADERS
    assert mixed.rows[0][2:4] == ("23.4 ms per 20 steps", "24.0 ms per 20 steps")
    assert mixed.rows[1][2:4] == ("23.4 ms", "24.0 ms")  # one call of its step per sample: nothing to say
