"""The terminal writer: the view model as rich tables and lines on a console.

One table per experiment, the lines of each case under it (metrics with
their 95% intervals, the reading in italics, clock bars, notes, traces,
warnings, checks), the lines for backends that are not here, the headline,
and, pytest-style, every check that fails the gate and why the exit code is
what it is. Also the comparison with a baseline. It decides nothing: every
word comes from `view`.
"""

from __future__ import annotations

import os
import sys
from typing import Any, Iterable, Sequence

from rich.cells import cell_len
from rich.console import Console
from rich.padding import Padding
from rich.segment import Segment
from rich.table import Table
from rich.text import Text

from asyncbench.errors import EXIT_OK
from asyncbench.report import escaping
from asyncbench.report.bound import BoundView
from asyncbench.report.compared import ComparisonView
from asyncbench.report.ran_ahead import AHEAD_NOTE, NONE_AHEAD, NOT_JUDGED
from asyncbench.report.syncs import CensusView
from asyncbench.report.view import CaseView, ExperimentView, OutcomeView, ReportView
from asyncbench.results.labels import Label
from asyncbench.results.model import Check, Status, Verdict

# Wide enough for a table with spreads when output goes to a file or CI log.
MIN_FILE_WIDTH = 120
# rich lays a table out at about 0.7 ms a row (measured, 9 columns), plain aligned columns at 0.05 ms: past
# this many rows in a report, its tables are printed as plain columns, so `show` of a 10,000-case sweep
# takes a second, not ten.
RICH_TABLE_MAX_ROWS = 400

# A case's census table is indented as its lines are: it belongs to that case, not to the experiment (top, right,
# bottom, left).
CASE_INDENT = (0, 0, 0, 4)
STATUS_STYLE = {Status.OK: "green", Status.SKIPPED: "yellow", Status.ERROR: "red"}
CHECK_MARK = {
    Verdict.PASS: "[green]✓[/]",
    Verdict.FAIL: "[red]✗[/]",
    Verdict.INCONCLUSIVE: "[yellow]?[/]",
    Verdict.NOT_MEASURED: "[red]–[/]",
}
#: how each label of a comparison (compare, ab) is styled: red fails, yellow cannot tell, green is faster
LABEL_STYLE = {Label.SAME: "", Label.FASTER: "green", Label.NOT_SLOWER: "", Label.SLOWER: "bold red", Label.INCONCLUSIVE: "yellow"}


def reader_left() -> None:
    """The one answer to a reader of stdout that stopped reading (`| head`): the rest of the output goes to
    /dev/null and the run's own exit code stands (not 1 from a BrokenPipeError, nor rich's exit 1)."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    os.close(devnull)


class StdoutConsole(Console):
    """A console on stdout whose reader may stop reading (see `reader_left`), and on which text from data never acts:
    no emoji codes (`:warning:` in a name is text), and no control character passes through (`render`)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("emoji", False)
        super().__init__(*args, **kwargs)

    def render(self, renderable: Any, options: Any = None) -> Iterable[Segment]:
        """rich's segments, with any control character in their text shown (escaping.visible_lines): the writers
        escape every name they print (escaping.rich), and this is the last guard, so that text no writer escaped
        still reaches the terminal as text, never as an escape sequence. rich's own controls (cursor moves) are
        control segments, and its styles are added after this, so neither is touched."""
        for segment in super().render(renderable, options):
            if segment.control is None and escaping.CONTROL_IN_LINES.search(segment.text):
                yield Segment(escaping.visible_lines(segment.text), segment.style)
            else:
                yield segment

    def on_broken_pipe(self) -> None:
        self.quiet = True
        reader_left()


def write_stdout(text: str) -> None:
    """Text for another program (JSON, CSV, markdown) on stdout as it is, byte for byte; see `reader_left`."""
    try:
        sys.stdout.write(text)
        sys.stdout.flush()
    except BrokenPipeError:
        reader_left()


def stdout_console() -> Console:
    """A console for the tables; not squeezed to 80 columns when piped to a file or log."""
    console = StdoutConsole()
    if not console.is_terminal:
        console = StdoutConsole(width=max(MIN_FILE_WIDTH, console.width))
    return console


def say(console: Console, text: str) -> None:
    """Print a line of prose: wrapped to a terminal, never hard-wrapped mid-phrase into a file or a pipe."""
    console.print(text, soft_wrap=not console.is_terminal)


def check_text(check: Check) -> str:
    return f"{CHECK_MARK[check.verdict]} {escaping.rich(check.expect)}: {escaping.rich(check.detail)}"


def experiment_table(experiment: ExperimentView) -> Table:
    table = Table(title=escaping.rich(experiment.title), title_justify="left", caption_justify="left")
    for column in experiment.columns:
        no_wrap = column.figures and column.header not in experiment.swept
        table.add_column(
            escaping.rich(column.header),
            justify="right" if column.figures else "left",
            no_wrap=no_wrap,
            # a case's words (a variant, a swept value) fold over lines where they must, never cut to '…'
            overflow="ellipsis" if no_wrap else "fold",
        )
    variant_at = [c.header for c in experiment.columns].index("variant")
    for group in experiment.groups:
        for row in group.rows:
            cells = [escaping.rich(cell) for cell in row]
            if not group.measured:
                cells[variant_at] = f"[{STATUS_STYLE[group.status]}]{cells[variant_at]}[/]"
                cells = cells[: variant_at + 1]
            table.add_row(*cells)
        table.add_section()
    return table


def plain_table(title: str, headers: Sequence[str], rows: Sequence[Sequence[str]], right: Sequence[bool]) -> Text:
    """A long table as plain aligned columns (figures right-aligned), a header line and a rule: no markup, no styles;
    every cell `visible` before its width is taken."""
    title, headers = escaping.visible(title), [escaping.visible(header) for header in headers]
    rows = [[escaping.visible(cell) for cell in row] for row in rows]
    widths = [max([cell_len(header), *(cell_len(row[i]) for row in rows)]) for i, header in enumerate(headers)]

    def line(cells: Sequence[str]) -> str:
        padded = (
            " " * (width - cell_len(cell)) + cell if at_right else cell + " " * (width - cell_len(cell))
            for cell, width, at_right in zip(cells, widths, right, strict=False)
        )
        return "  ".join(padded).rstrip()

    body = [line(headers), "  ".join("─" * width for width in widths), *(line(row) for row in rows)]
    return Text("\n".join([title, *body]))


def print_experiment_table(console: Console, experiment: ExperimentView, plain: bool) -> None:
    """The experiment's table: rich's, or (`plain`) aligned columns."""
    if not plain:
        console.print(experiment_table(experiment))
        return
    rows = [row for group in experiment.groups for row in group.rows]
    headers = [column.header for column in experiment.columns]
    console.print(plain_table(experiment.title, headers, rows, [column.figures for column in experiment.columns]), soft_wrap=True)


def print_case(console: Console, case: CaseView, plain: bool = False) -> None:
    """The lines under a table for one case: metrics, reading, bars, notes, checks (or why it did not run), then
    where its step waited (`--syncs`) and what bounds it (`--bound`)."""
    if case.status != Status.OK:
        say(console, f"  [bold]{escaping.rich(case.who)}[/]: [{STATUS_STYLE[case.status]}]{case.status}[/]: {escaping.rich(case.reason)}")
    if case.metrics:
        on = f" ({escaping.rich(case.note)})" if case.note else ""
        say(console, f"  [bold]{escaping.rich(case.who)}[/]{on}: {escaping.rich(case.metrics)}")
        if case.reading:
            say(console, f"    [italic]{escaping.rich(case.reading)}[/]")
    for line in case.bars:
        console.print(f"      [dim]{escaping.rich(line)}[/]", soft_wrap=True, highlight=False)
    if case.sampling_note:
        say(console, f"    [yellow]{escaping.rich(case.sampling_note)}[/]")
    if case.traces:
        say(
            console,
            f"    [cyan]traced ({escaping.rich(case.trace_detail or '')}): {escaping.rich(case.traces)} — open in ui.perfetto.dev[/]",
        )
    elif case.trace_detail:
        say(console, f"    [cyan]{escaping.rich(case.trace_detail)}[/]")
    for warning in case.warnings:
        say(console, f"    [bold yellow]⚠ {escaping.rich(warning)}[/]")
    for check in case.checks:
        say(console, f"    {check_text(check)}")
    if case.syncs is not None:
        print_census(console, case.syncs, plain)
    if case.bound is not None:
        print_bound(console, case.bound, plain)


#: the narrowest the census's call column gets: "jax.Array.item" whole, a longer call folded over lines
CALL_MIN_WIDTH = 14


def census_table(census: CensusView) -> Table:
    table = Table(title=escaping.rich(census.title), title_justify="left")
    for index, (header, figures, no_wrap) in enumerate(zip(census.headers, census.figures, census.no_wrap, strict=True)):
        # the call folds where it must, never to nothing (rich shrinks the wrapping columns first); a figure with an
        # interval wraps at its spaces, never inside a word ('9.80 ms' above '[8.50–18.0]'), as the bound table's do
        if figures and any("[" in row[index] for row in census.rows):
            words = max((len(word) for row in census.rows for word in row[index].split()), default=1)
            table.add_column(header, justify="right", no_wrap=False, overflow="ellipsis", min_width=words)  # a header may be cut
            continue
        table.add_column(
            header,
            justify="right" if figures else "left",
            no_wrap=no_wrap,
            overflow="ellipsis" if no_wrap else "fold",
            min_width=None if no_wrap else CALL_MIN_WIDTH,
        )
    for row in census.rows:
        table.add_row(*(escaping.rich(cell) for cell in row))
    return table


def print_census(console: Console, census: CensusView, plain: bool = False) -> None:
    """Where a case's step waited: its table and a line per variant, or the one line of a case that never waited."""
    if not census.rows:
        say(console, f"    [bold]{escaping.rich(census.title)}[/]: {escaping.rich(census.summary[0])}")
    elif plain:
        console.print(
            Padding(plain_table(census.title, census.headers, census.rows, census.figures), CASE_INDENT, expand=False), soft_wrap=True
        )
    else:
        console.print(Padding(census_table(census), CASE_INDENT, expand=False))  # under its case's lines, indented as they are
    if census.rows:
        for line in census.summary:
            say(console, f"    {escaping.rich(line)}")
    for note in census.notes:
        say(console, f"    [yellow]{escaping.rich(note)}[/]")


def bound_table(bound: BoundView) -> Table:
    table = Table(title=escaping.rich(bound.title), title_justify="left", pad_edge=False)  # two columns more room
    for index, (header, figures, no_wrap) in enumerate(zip(bound.headers, bound.figures, bound.no_wrap, strict=True)):
        # the figures wrap at their spaces, never inside a word ('420 µs' above '[400–440]'): the table fits an
        # 80-column terminal and cuts no figure short
        words = max((len(word) for cell in (header, *(row[index] for row in bound.rows)) for word in cell.split()), default=1)
        table.add_column(header, justify="right" if figures else "left", no_wrap=no_wrap, min_width=None if no_wrap else words)
    for row in bound.rows:
        table.add_row(*(escaping.rich(cell) for cell in row))
    return table


def print_bound(console: Console, bound: BoundView, plain: bool = False) -> None:
    """What bounds a case's step: its table and the reading of each variant in words, or the one line of a case whose
    variants are all synchronous."""
    if not bound.rows:
        say(console, f"    [bold]{escaping.rich(bound.title)}[/]: {escaping.rich('; '.join(bound.summary))}")
    else:
        if plain:
            table = plain_table(bound.title, bound.headers, bound.rows, bound.figures)
            console.print(Padding(table, CASE_INDENT, expand=False), soft_wrap=True)
        else:
            console.print(Padding(bound_table(bound), CASE_INDENT, expand=False))  # under its case's lines, indented as they are
        for line in bound.summary:
            say(console, f"    {escaping.rich(line)}")
    for note in bound.notes:
        say(console, f"    [yellow]{escaping.rich(note)}[/]")


def print_report(view: ReportView, console: Console, with_outcome: bool = True) -> None:
    """The tables and lines of a whole report, then the headline and (given the run's outcome) why it exits as it does."""
    plain = sum(len(group.rows) for experiment in view.experiments for group in experiment.groups) > RICH_TABLE_MAX_ROWS
    if view.highlights or view.unjudged:
        say(console, f"[bold]What ran ahead[/] {AHEAD_NOTE if view.highlights else NONE_AHEAD}:")
        for line in view.highlights:
            say(console, f"  {escaping.rich(line)}")
        if view.unjudged:
            say(console, f"  [yellow]{NOT_JUDGED}:[/]")
            for line in view.unjudged:
                say(console, f"    {escaping.rich(line)}")
        console.print()
    for experiment in view.experiments:
        if not experiment.shown:
            continue
        if experiment.groups:
            print_experiment_table(console, experiment, plain)
        else:
            console.print(f"[italic]{escaping.rich(experiment.name)}[/]")
        for case in experiment.cases:
            print_case(console, case, plain)
        if experiment.left_out:
            say(console, f"  [dim]{escaping.rich(experiment.left_out)}[/]")
        console.print()
    for line in view.unavailable:
        say(console, f"[yellow]{escaping.rich(line)}[/]")
    if view.neighbour:
        say(console, f"[bold yellow]⚠ {escaping.rich(view.neighbour)}[/]")
    if view.spread_note:
        say(console, f"[dim]{escaping.rich(view.spread_note)}[/]")
    say(console, escaping.rich(view.headline))
    if view.comparison is not None:
        console.print()
        print_comparison(view.comparison, console)
    if with_outcome and view.outcome is not None:
        print_outcome(console, view.outcome)


def print_outcome(console: Console, outcome: OutcomeView) -> None:
    """pytest's short summary: every check that fails the gate, then each reason for the exit code (read back by
    `show`, which exits 0 itself: the code said as the gate's on its checks, OutcomeView.exits)."""
    if outcome.code == EXIT_OK:
        return
    for case_id, check in outcome.failing:
        say(
            console,
            f"  {CHECK_MARK[check.verdict]} {escaping.rich(case_id)}: {escaping.rich(check.expect)} — {escaping.rich(check.detail)}",
        )
    say(console, f"[red]{outcome.exits}[/] because:")
    for reason in outcome.reasons:
        say(console, f"  - {escaping.rich(reason)}")


#: the narrowest a comparison's case or variant column may fold to in rich's table; narrower, the table is plain lines,
#: whole, that the terminal wraps (a case id folded into columns of a few characters cannot be read)
TEXT_MIN_WIDTH = 16


def comparison_table(comparison: ComparisonView) -> Table:
    table = Table(title=escaping.rich(comparison.title), title_justify="left")
    for header, figures in zip(comparison.headers, comparison.figures, strict=True):
        # a case id folds over lines where it must, never cut to '…' (rich's default for a word too long to wrap)
        table.add_column(header, justify="right" if figures else "left", no_wrap=figures, overflow="ellipsis" if figures else "fold")
    for row in comparison.rows:
        style = LABEL_STYLE[row.label]
        *cells, label = row.cells
        table.add_row(*(escaping.rich(cell) for cell in cells), f"[{style}]{label}[/]" if style else label)
    return table


def _fits(comparison: ComparisonView, width: int) -> bool:
    """Whether rich's table of `comparison` leaves each text column (case, variant) TEXT_MIN_WIDTH beside its figures,
    which never wrap: at 80 columns a comparison's figures took the whole width and its case ids vanished."""
    cells = [comparison.headers, *(row.cells for row in comparison.rows)]
    columns = [max(cell_len(escaping.visible(cells_of_row[i])) for cells_of_row in cells) for i in range(len(comparison.headers))]
    needed = sum(c if figures else min(c, TEXT_MIN_WIDTH) for c, figures in zip(columns, comparison.figures, strict=True))
    return needed + 3 * len(columns) + 1 <= width  # each column's padding and rule, and the table's last rule


def print_comparison(comparison: ComparisonView, console: Console) -> None:
    if not comparison.judged:  # no row: the title says why, over no empty table and no key to its columns
        console.print(escaping.rich(comparison.title), soft_wrap=not console.is_terminal)
        for line in comparison.notes:
            console.print(f"  [yellow]{escaping.rich(line)}[/]")
        console.print(f"[red]{escaping.rich(comparison.summary)}[/]", soft_wrap=not console.is_terminal)
        return
    if len(comparison.rows) <= RICH_TABLE_MAX_ROWS and _fits(comparison, console.width):
        console.print(comparison_table(comparison))
    else:
        rows = [r.cells for r in comparison.rows]
        console.print(plain_table(comparison.title, comparison.headers, rows, comparison.figures), soft_wrap=True)
    for line in comparison.notes:
        console.print(f"  [yellow]{escaping.rich(line)}[/]")
    console.print(f"  [dim]{escaping.rich(comparison.estimate)}[/]", soft_wrap=not console.is_terminal)
    console.print(f"  [dim]{escaping.rich(comparison.interval_sees)}[/]", soft_wrap=not console.is_terminal)
    style = "red" if comparison.failed else "green"
    console.print(f"[{style}]{escaping.rich(comparison.summary)}[/]", soft_wrap=not console.is_terminal)
