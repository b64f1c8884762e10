"""The markdown writer: the view model as GitHub-flavoured markdown, for a CI job summary.

A headline first (with why the run exits as it does), the environment,
then per experiment its table and a bullet per case (metrics, reading,
clock bars in a text block, notes, traces, warnings, checks, where its step
waited: a table, `--syncs`, and what bounds it: a table, `--bound`), and the
comparison with a baseline. Every word comes from `view`.
"""

from __future__ import annotations

import functools
from typing import Callable

from asyncbench.report import escaping
from asyncbench.report.bound import BoundView
from asyncbench.report.compared import ComparisonView
from asyncbench.report.ran_ahead import AHEAD_NOTE, NONE_AHEAD, NOT_JUDGED
from asyncbench.report.syncs import CensusView
from asyncbench.report.view import CaseView, ReportView
from asyncbench.results.model import Status, Verdict

MARKDOWN_MARK = {Verdict.PASS: "✅", Verdict.FAIL: "❌", Verdict.INCONCLUSIVE: "❔", Verdict.NOT_MEASURED: "➖"}


def user_strings(case: CaseView) -> tuple[str, ...]:
    """What of a case's notes may be the user's (its name, id and workload, its error, its trace files): kept escaped
    in them, never read as the tool's code spans (escaping.markdown_note)."""
    return (case.who, case.id, case.id.partition("[")[0], case.reason, case.note or "", case.traces or "")


def outcome_items(case: CaseView, escape: Callable[[object], str], who: str) -> list[str]:
    """A case's first items wherever cases are listed (here, report.notebook): how it ended when not ok, then its
    metrics, on what it ran, with its reading. `escape` writes each string from the view in the format, `who` is the
    case's name as the format marks it up; one wording for both."""
    items = []
    if case.status != Status.OK:
        items.append(f"{who}: {escape(case.status)}: {escape(case.reason)}")
    if case.metrics:
        on = f" ({escape(case.note)})" if case.note else ""
        items.append(f"{who}{on}: {escape(case.metrics)}" + (f" — {escape(case.reading)}" if case.reading else ""))
    return items


def markdown(view: ReportView, path: str = "-") -> str:
    """The report (and its comparison with a baseline) as markdown: a headline first, then the tables. Every string
    from the view is written through report.escaping (cells and lines cannot break out, nothing renders)."""
    md, line = escaping.markdown, functools.partial(escaping.markdown, starts_line=True)
    lines = [f"## asyncbench: {md(view.headline)}", "", f"{md(view.environment)} · {md(view.created)}", ""]
    if view.outcome is not None and view.outcome.code:
        lines += [f"**{view.outcome.exits}** because:", *(f"- {line(reason)}" for reason in view.outcome.reasons), ""]
    if view.highlights or view.unjudged:
        lines += [f"**What ran ahead** {AHEAD_NOTE if view.highlights else NONE_AHEAD}:", *(f"- {line(text)}" for text in view.highlights)]
        if view.unjudged:
            lines += [f"- _{NOT_JUDGED}_:", *(f"  - {line(text)}" for text in view.unjudged)]
        lines.append("")
    for experiment in view.experiments:
        if not experiment.shown:
            continue
        lines += [f"### {md(experiment.name)}", ""]
        if experiment.groups:
            lines += [
                "| " + " | ".join(md(c.header) for c in experiment.columns) + " |",
                "|" + "".join("--:|" if c.figures and c.header not in experiment.swept else "---|" for c in experiment.columns),
            ]
        for group in experiment.groups:
            lines += ["| " + " | ".join(md(cell) for cell in row) + " |" for row in group.rows]
        lines.append("")
        for case in experiment.cases:
            who = md(case.who)
            lines += [f"- {item}" for item in outcome_items(case, md, f"**{who}**")]
            if case.bars:
                bars = [escaping.visible(bar) for bar in case.bars]
                fence = escaping.markdown_fence(bars)
                lines += ["", f"  {fence}text", *(f"  {bar}" for bar in bars), f"  {fence}", ""]
            note = functools.partial(escaping.markdown_note, user=user_strings(case))  # its own code spans render
            if case.sampling_note:
                lines.append(f"  - ⚠️ {note(case.sampling_note)}")
            if case.traces:
                lines.append(f"  - traced ({md(case.trace_detail)}): {escaping.markdown_code(case.traces)} — open in ui.perfetto.dev")
            lines += [f"  - ⚠️ {note(warning)}" for warning in case.warnings]
            lines += [
                f"  - {MARKDOWN_MARK[check.verdict]} {escaping.markdown_code(check.expect)}: {md(check.detail)}" for check in case.checks
            ]
            if case.syncs is not None:
                lines += census_lines(case.syncs)
            if case.bound is not None:
                lines += bound_lines(case.bound)
        if experiment.left_out:
            lines.append(f"- _{md(experiment.left_out)}_")
        lines.append("")
    lines += [f"- {line(text)}" for text in view.unavailable]
    if view.neighbour:
        lines.append(f"- ⚠️ {line(view.neighbour)}")
    if view.spread_note:
        lines.append(f"\n_{escaping.markdown_note(view.spread_note)}._")
    if view.comparison is not None:
        lines += ["", *comparison_lines(view.comparison)]
    return "\n".join(lines) + "\n"


def census_lines(census: CensusView) -> list[str]:
    """Where a case's step waited: a bullet for a case that never waited; else its table (file:line and call as code,
    to copy) and a bullet per variant."""
    md, line = escaping.markdown, functools.partial(escaping.markdown, starts_line=True)
    if not census.rows:
        return [f"  - {md(census.title)}: {md(census.summary[0])}", *(f"  - ⚠️ {md(note)}" for note in census.notes)]
    code = {census.headers.index("file:line"), census.headers.index("call")}

    def cell(index: int, text: str) -> str:
        return escaping.markdown_code(text, in_table=True) if index in code else md(text)

    return [
        "",
        f"  **{md(census.title)}**",
        "",
        "  | " + " | ".join(census.headers) + " |",
        "  |" + "".join("--:|" if figures else "---|" for figures in census.figures),
        *("  | " + " | ".join(cell(index, text) for index, text in enumerate(row)) + " |" for row in census.rows),
        "",
        *(f"  - {line(text)}" for text in census.summary),
        *(f"  - ⚠️ {md(note)}" for note in census.notes),
    ]


def bound_lines(bound: BoundView) -> list[str]:
    """What bounds a case's step: a bullet for a case whose variants are all synchronous; else its table and a bullet
    per line of reading."""
    md, line = escaping.markdown, functools.partial(escaping.markdown, starts_line=True)
    if not bound.rows:
        return [f"  - {md(bound.title)}: {md('; '.join(bound.summary))}", *(f"  - ⚠️ {md(note)}" for note in bound.notes)]
    return [
        "",
        f"  **{md(bound.title)}**",
        "",
        "  | " + " | ".join(md(header) for header in bound.headers) + " |",
        "  |" + "".join("--:|" if figures else "---|" for figures in bound.figures),
        *("  | " + " | ".join(md(cell) for cell in row) + " |" for row in bound.rows),
        "",
        *(f"  - {line(text)}" for text in bound.summary),
        *(f"  - ⚠️ {md(note)}" for note in bound.notes),
    ]


def comparison_lines(comparison: ComparisonView) -> list[str]:
    """A baseline comparison as markdown lines: the table, what could not be compared, what the intervals see, the summary."""
    md = escaping.markdown
    lines = [
        f"### Compared with the baseline ({md(comparison.clock)}, margin {md(comparison.max_regression)}; {md(comparison.budget)})",
        "",
    ]
    if not comparison.judged:  # no row: no empty table, no key to its columns; the summary says why
        lines += [f"- {escaping.markdown_note(text, comparison.user)}" for text in comparison.notes]
        return [*lines, f"\n{md(comparison.summary, starts_line=True)}"]
    lines += [
        "| " + " | ".join(md(header) for header in comparison.headers) + " |",
        "|" + "".join("--:|" if figures else "---|" for figures in comparison.figures),
    ]
    for row in comparison.rows:
        *cells, label = row.cells
        label = f"**{label}**" if row.fails else label
        lines.append("| " + " | ".join(md(cell) for cell in cells) + f" | {label} |")
    lines.append("")
    # the tool's own code spans (`asyncbench ab`, `--format json`) as code; what came from the files escaped
    lines += [f"- {escaping.markdown_note(text, comparison.user)}" for text in comparison.notes]
    lines.append(f"\n_{md(comparison.estimate)}._")
    lines.append(f"\n_{escaping.markdown_note(comparison.interval_sees)}._")
    lines.append(f"\n{md(comparison.summary, starts_line=True)}")
    return lines
