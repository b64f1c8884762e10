"""The results types as a notebook shows them: `_repr_html_` tables of a run's report and of an `ab` comparison.

`asyncbench.load` and `asyncbench.run` return the results types themselves
(results.schema.Report, results.ab_report.ABReport) as these subclasses, which
add only `_repr_html_`: Jupyter then shows a table where it would print a
dataclass's repr. They are the types `show` renders and every reader takes
(a Report here is a Report: `compare`, `Report.save` and the writers take
it as it is); results/ stays plain data below this layer, so the subclass
lives here rather than a method there.

What a table says is what `show` says: the view model (report.view for a
run, report.paired for an `ab` file) decides every word and figure; this
writer only lays it out as HTML — per experiment its table (each variant's
clocks with their intervals), the lines of each case that has something to
say (not ok, its metrics, its checks with their verdicts, its warnings),
the headline and the key to the notation. Every string from the view
(names, readings, reasons: anything a file can hold) is written through
report.escaping.html, never as markup.
"""

from __future__ import annotations

import dataclasses
from typing import Iterable, Sequence

from asyncbench.report import bound_changes, escaping, paired, view
from asyncbench.report.gate_headline import counts_beside, headline_mark
from asyncbench.report.markdown import MARKDOWN_MARK, outcome_items
from asyncbench.results.ab_report import ABReport
from asyncbench.results.labels import Label
from asyncbench.results.schema import Report

#: the labels an `ab` row is shown in bold for: those a reader must act on (as the pull-request comment marks them)
LOUD_LABELS = (Label.SLOWER, Label.INCONCLUSIVE)

_e = escaping.html


class NotebookReport(Report):
    """A run's report (results.schema.Report), shown in a notebook as its tables."""

    def _repr_html_(self) -> str:
        return report_html(self)


class NotebookABReport(ABReport):
    """An `ab` comparison (results.ab_report.ABReport), shown in a notebook as its table of verdicts."""

    def _repr_html_(self) -> str:
        return ab_html(self)


def report(loaded: Report) -> NotebookReport:
    """`loaded` as the notebook's subclass: the same fields, the same object to every reader."""
    return NotebookReport(**{f.name: getattr(loaded, f.name) for f in dataclasses.fields(loaded)})


def ab_report(loaded: ABReport) -> NotebookABReport:
    return NotebookABReport(**{f.name: getattr(loaded, f.name) for f in dataclasses.fields(loaded)})


def _table(headers: Sequence[str], rows: Iterable[Sequence[str]], figures: Sequence[bool], loud: Sequence[bool] = ()) -> list[str]:
    """A table, figures right-aligned; the last cell of a `loud` row in bold. Headers and cells are escaped here."""
    align = ['style="text-align:right"' if figure else 'style="text-align:left"' for figure in figures]
    lines = ["<table>", "<thead><tr>" + "".join(f"<th {a}>{_e(h)}</th>" for h, a in zip(headers, align, strict=True)) + "</tr></thead>"]
    lines.append("<tbody>")
    for index, row in enumerate(rows):
        cells = [_e(cell) for cell in row]
        if index < len(loud) and loud[index]:
            cells[-1] = f"<b>{cells[-1]}</b>"
        lines.append("<tr>" + "".join(f"<td {a}>{cell}</td>" for cell, a in zip(cells, align, strict=True)) + "</tr>")
    return [*lines, "</tbody>", "</table>"]


def _case_lines(case: view.CaseView) -> list[str]:
    """The list items of one case: how it ended when not ok, its metrics and reading, notes, warnings, checks."""
    who = f"<b>{_e(case.who)}</b>"
    items = outcome_items(case, _e, who)
    if case.sampling_note:
        items.append(f"{who}: ⚠️ {_e(case.sampling_note)}")
    items += [f"{who}: ⚠️ {_e(warning)}" for warning in case.warnings]
    items += [
        f"{who}: {MARKDOWN_MARK[check.verdict]} {_e(check.verdict)} <code>{_e(check.expect)}</code>: {_e(check.detail)}"
        for check in case.checks
    ]
    return [f"<li>{item}</li>" for item in items]


def report_html(loaded: Report) -> str:
    """A run's report as HTML: the headline, then per experiment its table and its cases' lines (view.build)."""
    shown = view.build(loaded)
    lines = ['<div class="asyncbench">', f"<p><b>asyncbench</b>: {_e(shown.headline)}</p>"]
    lines.append(f"<p><small>{_e(shown.environment)} · {_e(shown.created)}</small></p>")
    for experiment in shown.experiments:
        if not experiment.shown:
            continue
        lines.append(f"<h4>{_e(experiment.title)}</h4>")
        if experiment.groups:
            rows = [row for group in experiment.groups for row in group.rows]
            lines += _table([c.header for c in experiment.columns], rows, [c.figures for c in experiment.columns])
        items = [item for case in experiment.cases for item in _case_lines(case)]
        if experiment.left_out:
            items.append(f"<li><i>{_e(experiment.left_out)}</i></li>")
        if items:
            lines += ["<ul>", *items, "</ul>"]
    lines += [f"<p>{_e(line)}</p>" for line in shown.unavailable]
    if shown.neighbour:
        lines.append(f"<p>⚠️ {_e(shown.neighbour)}</p>")
    if shown.spread_note:
        lines.append(f"<p><small>{_e(shown.spread_note)}.</small></p>")
    return "\n".join([*lines, "</div>"])


def ab_html(loaded: ABReport) -> str:
    """An `ab` comparison as HTML: the gate's verdict, the table of paired changes, the sides, notes and budget, as
    `show` judges and words them (report.paired.shown_again)."""
    shown = paired.shown_again(loaded)
    head = f"{headline_mark(shown.code)} {shown.headline}"
    lines = [
        '<div class="asyncbench">',
        f"<p><b>{_e(shown.title)}</b></p>",
        f"<p><b>{_e(head)}</b>{_e(counts_beside(shown.headline, shown.summary))}</p>",
    ]
    if shown.reasons:
        lines += ["<ul>", *(f"<li>{_e(reason)}</li>" for reason in shown.reasons), "</ul>"]
    figures = [header not in ("case", "what") for header in paired.HEADERS]
    lines += _table(shown.headers, shown.rows, figures, [label in LOUD_LABELS for label in shown.labels])
    lines.append(f"<p><small>{_e(paired.PAIRED_KEY)}</small></p>")
    lines += ["<ul>", *(f"<li>{_e(line)}</li>" for line in (*shown.sides, *shown.notes)), "</ul>"]
    lines.append(f"<p><small>{_e(shown.budget)}</small></p>")
    # the sections `--syncs` and `--bound` add come last, each line under its own title
    if shown.new_syncs:
        lines.append(f"<p><b>{_e(paired.SYNC_TITLE)}</b></p>")
        lines += _table(paired.SYNC_HEADERS, shown.new_syncs, [False] * len(paired.SYNC_HEADERS))
    elif shown.new_syncs is not None:
        lines.append(f"<p><i>{_e(paired.NO_NEW_SYNCS)}</i></p>")
    if shown.sync_notes:
        lines += ["<ul>", *(f"<li>{_e(line)}</li>" for line in shown.sync_notes), "</ul>"]
    if shown.bounds is not None:  # `ab --bound`: the flips, then each variant's bound on both sides
        lines.append(f"<p><b>{_e(bound_changes.TITLE)}</b></p>")
        lines += [f"<p>{_e(line)}</p>" for line in shown.flips]
        if shown.bounds:
            lines += _table(bound_changes.HEADERS, shown.bounds, [False] * len(bound_changes.HEADERS))
        if shown.bound_notes:
            lines += ["<ul>", *(f"<li>{_e(line)}</li>" for line in shown.bound_notes), "</ul>"]
    return "\n".join([*lines, "</div>"])
