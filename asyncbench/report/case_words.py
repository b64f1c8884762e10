"""The history page's words about its cases (report.html): each case's heading with what changed in it, and the note on
how the charts are laid out (report.trends), apart from the page's drawing and tables.

A change is named with its ratio's interval as `history` prints it (report.history.change_words), and called slower or
faster only by that interval; one without an interval (`[?]`) says its point alone says which way,
and a series too unsteady to search (history.model.Series.unsteady) or too short to (history.model.TOO_SHORT) says
so, never read as "no change"."""

from __future__ import annotations

from typing import Sequence

import asyncbench.history.model as model
from asyncbench.report import escaping, history, trends


def _as_whose(one: model.Series) -> str:
    """' as the machine's' where a series' runs were discounted for the machine only, not for their thread pools."""
    return "" if one.pools_moved else " as the machine's"


def heading(case: trends.Case, first: int) -> str:
    """A case's heading: its id, and what changed in it (the charts with a change, slower ones first)."""
    said = []
    for chart in case.charts:
        for one in chart.series:
            for change in one.judged_changes:  # its ratio with the interval `history` prints, and a way only where shown
                runner = " (the runner, not the code)" if one.of_machine else ""  # as `history` says it: no slowdown
                said.append(f"{chart.name} {history.change_words(one, change)} at {change.at}{runner}")
    near_zero = [  # a change of figures that cannot be told from 0 is no slowdown (Series.told_from_zero): said once
        f"{chart.name} on {one.machine}"
        for chart in case.charts
        for one in chart.series
        if len(one.judged_changes) < len(one.change_points)
    ]
    unsteady = [
        f"{chart.name} on {one.machine}: {len(one.discounted)} of {len(one.points)} runs discounted{_as_whose(one)}, "
        f"{len(one.points) - len(one.discounted)} left"
        for chart in case.charts
        for one in chart.series
        if one.unsteady
    ]
    short = [
        f"{chart.name} on {one.machine}: {one.runs} run(s), needs {model.MIN_RUNS}"
        for chart in case.charts
        for one in chart.series
        if one.not_searched == model.TOO_SHORT
    ]
    pooled = [  # one line a series, as `history` says them (report.history)
        f"{chart.name} on {one.machine}: {len(whys)} run(s) discounted, {' / '.join(dict.fromkeys(whys))}"
        for chart in case.charts
        for one in chart.series
        for whys in [[why for _, why in one.discounted if model.in_other_pools(why)]]
        if whys
    ]
    note = f'<p class="note">changed: {escaping.html("; ".join(said))}</p>' if said else ""
    if pooled:  # the runs in other CPU thread pools than the newest run's (history.discount): not judged beside it
        note += f'<p class="note">CPU thread pools changed: {escaping.html("; ".join(pooled))}</p>'

    if near_zero:
        note += f'<p class="note">{escaping.html(history.NOT_TOLD_FROM_ZERO)}: {escaping.html("; ".join(near_zero))}</p>'
    if unsteady:  # not searched (history.model.Series.unsteady): never read as "no change"
        note += f'<p class="note">too few runs left to tell, not searched for changes: {escaping.html("; ".join(unsteady))}</p>'
    if short:  # too young to search (history.model.TOO_SHORT): never read as "no change" either
        note += f'<p class="note">too short to tell, not searched for changes: {escaping.html("; ".join(short))}</p>'
    return f'<h3 class="case" id="case-{first}">{escaping.html(case.case)}</h3>{note}'


def layout_note(cases: Sequence[trends.Case]) -> str:
    """How the charts are laid out (report.trends), with the counts a reader looks for first."""
    slower = sum(case.slower for case in cases)
    changed = sum(case.changed and not case.slower for case in cases)
    folded = sum(len(chart.also) for case in cases for chart in case.charts)
    twins = (
        f" {folded} quantity(ies) whose figures are another's (the same, or a multiple) drawn on its chart, which says so."
        if folded
        else ""
    )
    return (
        f'<p class="note">By case: {slower} case(s) where something got slower first, then {changed} with a change, '
        f"then the rest ({len(cases) - slower - changed}). Each chart's x axis is the runs in the order recorded, the "
        f"order change points are looked for in.{escaping.html(twins)}</p>"
    )
