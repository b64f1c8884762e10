"""What bounds each variant's step on base and on head, and where it flipped (`ab --bound`), as `ab`'s report shows it.

A row per variant both sides could read: each side's reading (HOST-BOUND, DEVICE-BOUND, BALANCED, INCONCLUSIVE),
the change (FLIPPED, unchanged, undecided: results.bound_change), and each side's slacks with their 95% intervals
and shares of the step, so a reader sees what the flip rests on. Above the table a line per flip, the thing asked
for ("host-bound on base → device-bound on head"), or a line that none flipped; a variant a side could not read (a
synchronous backend, no step to perturb) is a note, one per case and reason, never a row. A bound is information:
the gate's verdict and exit are the paired ratios' alone, and the title says so. report.paired puts them in its view, and
`print_to` and `markdown_lines` lay them out for the terminal and the pull-request comment.
"""

from __future__ import annotations

from rich.console import Console
from rich.table import Table

from asyncbench.report import escaping
from asyncbench.report.bound import READING
from asyncbench.results import units
from asyncbench.results.ab_report import ABReport
from asyncbench.results.bound import BoundKind
from asyncbench.results.bound_change import Change, Reading, Slack

#: the section's title, the tool's own words: its code span renders as code in the comment (escaping.markdown_note)
TITLE = "what bounds the step on base and on head (`ab --bound`: information, never the gate's verdict)"
HEADERS = ("case", "variant", "base", "head", "change", "base slack (of step)", "head slack (of step)")
#: said under the table: a flip is claimed only from two decided readings
KEY = (
    "a flip is stated only where both sides' readings are decided (host-bound, device-bound or balanced: from the "
    "interval of the difference of the two slacks); undecided: a side read INCONCLUSIVE, its intervals decide "
    "nothing, so no flip is claimed; slack: how much a side can grow before the step slows, with its 95% interval"
)
NO_FLIP = "no bound flipped: every variant decided on both sides reads the same on head as on base"
#: the change as the table names it: a flip stands out
CHANGE_CELL = {Change.FLIPPED: "FLIPPED", Change.UNCHANGED: "unchanged", Change.UNDECIDED: "undecided"}


def _slack(slack: Slack, step_s: float) -> str:
    """'host 420 µs [400–440] (38%)'; '≥ 800 µs' where it reaches the largest delay injected; '~0 [≤ x]' where its
    interval reaches 0 (report.bound's figures, from what `ab` keeps of a bound)."""
    if slack.at_least_s is not None:
        figure, share = f"≥ {units.seconds(slack.at_least_s)}", slack.at_least_s
    elif slack.slack_ci_s is None:
        figure, share = f"{units.seconds(slack.slack_s)} ±?", slack.slack_s
    else:
        figure, share = units.with_bounds(slack.slack_s, slack.slack_ci_s, "s"), slack.slack_s
        if slack.slack_ci_s[0] <= 0 <= slack.slack_ci_s[1]:
            share = slack.slack_ci_s[1]
    shown = units.percent(share / step_s) if step_s > 0 else units.NO_VALUE
    return f"{slack.side} {figure} ({'≤ ' if figure.startswith(units.NOT_DISTINGUISHABLE) else ''}{shown})"


def _slacks(reading: Reading | None) -> str:
    if reading is None:
        return units.NO_VALUE
    return ", ".join(_slack(slack, reading.step_s) for slack in reading.slacks) or units.NO_VALUE


def _named(reading: Reading | None) -> str:
    return units.NO_VALUE if reading is None else READING[reading.bound]


def rows(report: ABReport) -> tuple[tuple[str, ...], ...] | None:
    """A row per variant both sides read (HEADERS); None where no case took its bounds (no `--bound`)."""
    if all(case.bound_changes is None for case in report.cases):
        return None
    return tuple(
        (
            case.id,
            change.variant,
            _named(change.base),
            _named(change.head),
            CHANGE_CELL[change.change],
            _slacks(change.base),
            _slacks(change.head),
        )
        for case in report.cases
        for change in case.bound_changes or ()
        if change.change != Change.NOT_MEASURED
    )


def flips(report: ABReport) -> tuple[str, ...]:
    """A line per variant whose bound flipped ('FLIPPED: work[jax,cpu] sync_every=0: HOST-BOUND on base → DEVICE-BOUND
    on head'); else one line that none did, counting those undecided (no flip could be stated for them); none where
    no variant was read on both sides."""
    compared = [(case.id, change) for case in report.cases for change in case.bound_changes or () if change.change != Change.NOT_MEASURED]
    flipped = tuple(
        f"FLIPPED: {case_id} {change.variant}: {_named(change.base)} on base → {_named(change.head)} on head"
        for case_id, change in compared
        if change.change == Change.FLIPPED
    )
    if flipped or not compared:
        return flipped
    open_ = sum(change.change == Change.UNDECIDED for _, change in compared)
    if open_ == len(compared):
        return (f"no flip can be stated: every variant compared ({open_}) is undecided on a side (INCONCLUSIVE)",)
    return (NO_FLIP + (f" ({open_} undecided on a side: no flip can be stated for them)" if open_ else ""),)


def notes(report: ABReport) -> list[str]:
    """A line per case and reason where a variant's bound was not compared (synchronous, no step to perturb), and a
    line per undecided side saying why it read INCONCLUSIVE (too few rounds, sides taking turns on shared cores,
    intervals that straddle the margin: the bound's own note), so "undecided" is never left unexplained."""
    said = []
    for case in report.cases:
        unmeasured: dict[str, list[str]] = {}
        for change in case.bound_changes or ():
            if change.change == Change.NOT_MEASURED:
                unmeasured.setdefault(change.why or "no reading on one side", []).append(change.variant)
            elif change.change == Change.UNDECIDED:
                said += _undecided(case.id, change.variant, {"base": change.base, "head": change.head})
        for why, variants in unmeasured.items():
            which = "" if len(variants) == len(case.bound_changes or ()) else f" {', '.join(variants)}"
            said.append(f"{case.id}{which}: bound not compared: {why}")
    return said


def _undecided(case_id: str, variant: str, sides: dict[str, Reading | None]) -> list[str]:
    """'work[jax,cpu] sync_every=0: undecided on base: 8 perturbation rounds: too few for an interval (at least 10)'."""
    return [
        f"{case_id} {variant}: undecided on {name}: {reading.note or 'its slack intervals decide nothing'}"
        for name, reading in sides.items()
        if reading is not None and reading.bound == BoundKind.INCONCLUSIVE
    ]


def print_to(
    console: Console, table_rows: tuple[tuple[str, ...], ...] | None, flipped: tuple[str, ...], said: tuple[str, ...] = ()
) -> None:
    """The flips (or that none flipped), then a row per variant read on both sides, then `said` (`notes`: the variants
    not compared or undecided), all under the title; nothing without `--bound`."""
    if table_rows is None:
        return
    shown = escaping.rich
    console.print(f"[italic]{shown(TITLE)}[/]:", soft_wrap=True)
    for line in flipped:
        console.print(f"  [bold]{shown(line)}[/]" if line.startswith("FLIPPED") else f"  {shown(line)}", soft_wrap=True)
    if table_rows:
        table = Table()
        for header in HEADERS:
            table.add_column(header, no_wrap=header in ("base", "head", "change"))
        for row in table_rows:
            table.add_row(*(f"[bold]{shown(cell)}[/]" if cell == CHANGE_CELL[Change.FLIPPED] else shown(cell) for cell in row))
        console.print(table)
        console.print(f"  [dim]{shown(KEY)}[/]", soft_wrap=True)
    for note in said:
        console.print(f"  [yellow]{shown(note)}[/]", soft_wrap=True)


def markdown_lines(table_rows: tuple[tuple[str, ...], ...] | None, flipped: tuple[str, ...], said: tuple[str, ...] = ()) -> list[str]:
    """The same in the pull-request comment: the flips in bold, then the table and its key, then `said`."""
    if table_rows is None:
        return []
    md = escaping.markdown
    lines = ["", f"**{escaping.markdown_note(TITLE)}**", ""]  # fixed text: its `ab --bound` a code span, not escaped
    lines += [f"- **{md(line)}**" if line.startswith("FLIPPED") else f"- {md(line, starts_line=True)}" for line in flipped]
    if table_rows:
        lines += ["", "| " + " | ".join(HEADERS) + " |", "|---|---|---|---|---|--:|--:|"]
        for row in table_rows:
            lines.append("| " + " | ".join(f"**{cell}**" if cell == CHANGE_CELL[Change.FLIPPED] else md(cell) for cell in row) + " |")
        lines += ["", f"_{md(KEY)}_"]
    if said:
        lines += ["", *(f"- {md(note, starts_line=True)}" for note in said)]
    return lines
