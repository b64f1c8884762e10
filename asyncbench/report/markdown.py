"""The markdown writer: the view model as GitHub-flavoured markdown, for a CI job summary.

A headline first (with why the run exits as it does), the environment,
then per experiment its table and a bullet per case (metrics, reading,
clock bars in a text block, notes, traces, warnings, checks, and where its step
waited: a table, `--syncs`), and the
comparison with a baseline. Every word comes from `view`.
"""

from __future__ import annotations

from asyncbench.report.compared import ComparisonView
from asyncbench.report.syncs import CensusView
from asyncbench.report.view import AHEAD_NOTE, NONE_AHEAD, NOT_JUDGED, ReportView
from asyncbench.results.model import Status, Verdict

MARKDOWN_MARK = {Verdict.PASS: "✅", Verdict.FAIL: "❌", Verdict.INCONCLUSIVE: "❔", Verdict.NOT_MEASURED: "❌"}


def markdown(view: ReportView, path: str = "-") -> str:
    """The report (and its comparison with a baseline) as markdown: a headline first, then the tables."""
    lines = [f"## asyncbench: {view.headline}", "", f"{view.environment} · {view.created}", ""]
    if view.outcome is not None and view.outcome.code:
        lines += [f"**exit {view.outcome.code}** because:", *(f"- {reason}" for reason in view.outcome.reasons), ""]
    if view.highlights or view.unjudged:
        lines += [f"**What ran ahead** {AHEAD_NOTE if view.highlights else NONE_AHEAD}:", *(f"- {line}" for line in view.highlights)]
        if view.unjudged:
            lines += [f"- _{NOT_JUDGED}_:", *(f"  - {line}" for line in view.unjudged)]
        lines.append("")
    for experiment in view.experiments:
        if not experiment.shown:
            continue
        lines += [f"### {experiment.name}", ""]
        if experiment.groups:
            lines += [
                "| " + " | ".join(c.header for c in experiment.columns) + " |",
                "|" + "".join("--:|" if c.figures and c.header not in experiment.swept else "---|" for c in experiment.columns),
            ]
        for group in experiment.groups:
            lines += ["| " + " | ".join(row) + " |" for row in group.rows]
        lines.append("")
        for case in experiment.cases:
            if case.status != Status.OK:
                lines.append(f"- **{case.who}**: {case.status}: {case.reason}")
            if case.metrics:
                on = f" ({case.note})" if case.note else ""
                lines.append(f"- **{case.who}**{on}: {case.metrics}" + (f" — {case.reading}" if case.reading else ""))
            if case.bars:
                lines += ["", "  ```text", *(f"  {line}" for line in case.bars), "  ```", ""]
            if case.sampling_note:
                lines.append(f"  - ⚠️ {case.sampling_note}")
            if case.traces:
                lines.append(f"  - traced ({case.trace_detail}): `{case.traces}` — open in ui.perfetto.dev")
            lines += [f"  - ⚠️ {warning}" for warning in case.warnings]
            lines += [f"  - {MARKDOWN_MARK[check.verdict]} `{check.expect}`: {check.detail}" for check in case.checks]
            if case.syncs is not None:
                lines += census_lines(case.syncs)
        if experiment.left_out:
            lines.append(f"- _{experiment.left_out}_")
        lines.append("")
    lines += [f"- {line}" for line in view.unavailable]
    if view.spread_note:
        lines.append(f"\n_{view.spread_note}._")
    if view.comparison is not None:
        lines += ["", *comparison_lines(view.comparison)]
    return "\n".join(lines) + "\n"


def census_lines(census: CensusView) -> list[str]:
    """Where a case's step waited: a bullet for a case that never waited; else its table (file:line and call as code,
    to copy) and a bullet per variant."""
    if not census.rows:
        return [f"  - {census.title}: {census.summary[0]}", *(f"  - ⚠️ {note}" for note in census.notes)]
    code = {census.headers.index("file:line"), census.headers.index("call")}

    def cell(index: int, text: str) -> str:
        text = text.replace("|", "\\|")
        return f"`{text}`" if index in code and text else text

    return [
        "",
        f"  **{census.title}**",
        "",
        "  | " + " | ".join(census.headers) + " |",
        "  |" + "".join("--:|" if figures else "---|" for figures in census.figures),
        *("  | " + " | ".join(cell(index, text) for index, text in enumerate(row)) + " |" for row in census.rows),
        "",
        *(f"  - {line}" for line in census.summary),
        *(f"  - ⚠️ {note}" for note in census.notes),
    ]


def comparison_lines(comparison: ComparisonView) -> list[str]:
    """A baseline comparison as markdown lines: the table, what could not be compared, what the intervals see, the summary."""
    lines = [
        f"### Compared with the baseline ({comparison.clock}, margin {comparison.max_regression}; {comparison.budget})",
        "",
        "| case | variant | baseline | current | change | interval | verdict |",
        "|---|---|--:|--:|--:|--:|--:|",
    ]
    for row in comparison.rows:
        label = f"**{row.label}**" if row.fails else row.label
        lines.append(f"| {row.id} | {row.variant} | {row.baseline} | {row.current} | {row.change} | {row.interval} | {label} |")
    lines.append("")
    lines += [f"- {line}" for line in comparison.notes]
    lines.append(f"\n_{comparison.interval_sees}._")
    lines.append(f"\n{comparison.summary}")
    return lines
