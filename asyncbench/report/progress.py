"""Progress on stderr while cases run: on a terminal a live bar, elsewhere (a CI log, a pipe, a file) plain lines.

A CI log of a two-minute `ab` or a sweep showed nothing until the run ended. Off a terminal each finished case is
one line, written and flushed as it ends, with its position and what it measured:

    [3/12] sync_async[numpy,cpu,n_ops=100]  ok  done sync 1.23 ms ±2.1%, async 980 µs ±1.5%  4.1 s

and under `ab` each case's block is one (`Block`): the paired change so far, at a look its interval and label,
and when the case stops as decided. The lines hold no ANSI and no carriage return; a name in them is data,
its control characters shown (report.escaping.visible). -q (or --no-progress) writes none of it; -v adds a line as
each case starts and every VERBOSE_EVERY_S while it samples, each case's rounds and why it stopped, each block's
own change (on a terminal, -v prints the finished lines above the bar). Progress is never on stdout.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from typing import Any

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, SpinnerColumn, TextColumn, TimeElapsedColumn
from rich.text import Text

from asyncbench.report import escaping
from asyncbench.report.cells import held_by_minimum, last_round_s
from asyncbench.report.compared import change_text, said_interval_text
from asyncbench.results import spreads, units
from asyncbench.results.labels import label_cell
from asyncbench.results.model import OK, Case, Result
from asyncbench.results.model import Progress as MeasureProgress
from asyncbench.results.paired import PairedRatio

# A case's line names this many variants' done times; more are counted (`+3 more`), -v names them all: the table
# that follows has every one, and a log line past a terminal's width is read less, not more.
VARIANTS_SHOWN = 4
# An error's or a skip's reason is cut to this many characters on its line (the report has it whole): a worker's
# last words can run to a paragraph.
REASON_CHARS = 200
# With -v, a line while a case samples at most this often: a long case is seen moving in a CI log, without a line
# per report of its worker (ten a second: engine.isolation.PROGRESS_INTERVAL_S).
VERBOSE_EVERY_S = 5.0
#: between the parts of a line
GAP = "  "


def bar(console: Console, label: str) -> Progress:
    """A transient progress line on `console`: spinner, `label`, bar, done of total, the task's detail, time."""
    return Progress(
        SpinnerColumn(),
        TextColumn(label),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("{task.fields[detail]}"),
        TimeElapsedColumn(),
        console=console,
        transient=True,
    )


@dataclass(frozen=True)
class Block:
    """Where one `ab` case stands after a block of it ended (what its line says).

    `changes`: each verdict's paired change so far (head/base, > 1 slower), by name; `judged`: the look taken at
    this block (empty: none here), whose interval and label the line gives; `scheduled`: the blocks the looks are
    scheduled over (None: not scheduled yet, before every case's first block; the line says "planned"); `next_look`:
    the block of the next scheduled look (None: none left, the case's last look is taken when it stops)."""

    case_id: str
    index: int
    total: int
    blocks: int
    scheduled: int | None
    changes: tuple[tuple[str, float], ...]
    judged: tuple[PairedRatio, ...]
    next_look: int | None
    decided: bool
    elapsed_s: float
    rounds: int = 0
    #: each verdict's change in this block alone (for -v)
    last: tuple[tuple[str, float], ...] = ()
    status: str = OK.value
    reason: str | None = None
    #: the case stopped (the gate's time spent) undecided by its looks so far: `judged` is the last look, taken then,
    #: which may yet decide it (`decided`): the line says `stopped` only of a case still undecided at it
    stopped: bool = False
    #: the margin the case is judged at, which a SAME whose interval excludes no change names (results.labels.label_cell)
    margin: float | None = None


def position(index: int, total: int) -> str:
    """'[3/12]': the case's place in the run, from 1."""
    return f"[{index + 1}/{total}]"


def _head(index: int, total: int, case_id: str) -> str:
    return f"{position(index, total)} {escaping.visible(case_id)}"


def _reason(status: str, reason: str | None) -> str:
    shown = escaping.visible(reason or "no reason given")
    if len(shown) > REASON_CHARS:
        shown = shown[: REASON_CHARS - 1] + "…"
    return f"{status}: {shown}"


def _plural(count: int, word: str) -> str:
    return f"{count} {word}{'' if count == 1 else 's'}"


def _noise(rel_noise: float | None) -> str:
    return "±?" if rel_noise is None or not math.isfinite(rel_noise) else f"±{units.percent(rel_noise)}"


def _done_times(result: Result, verbose: bool) -> str:
    """'done sync 1.23 ms ±2.1%, async 980 µs ±1.5%': each variant's median done time and its interval."""
    names = list(result.variants)
    shown = names if verbose else names[:VARIANTS_SHOWN]
    parts = []
    for name in shown:
        done = result.variants[name].done_s
        parts.append(f"{escaping.visible(name)} {spreads.spread(done.median, done.ci_low, done.ci_high)}")
    if len(names) > len(shown):
        parts.append(f"+{len(names) - len(shown)} more")
    return "done " + ", ".join(parts)


def case_line(index: int, total: int, result: Result, verbose: bool = False) -> str:
    """A finished case's line: its position and name, then what it measured (each variant's done time, its checks
    and warnings counted; -v: its rounds and why sampling stopped) or why it did not, and the case's time."""
    parts = [_head(index, total, result.id)]
    if result.status != OK:
        parts.append(_reason(str(result.status), result.reason))
    else:
        parts += ["ok", _done_times(result, verbose)] if result.variants else ["ok"]
        sampling = result.sampling
        if verbose and sampling is not None:
            stopped = (
                "its minimum rounds" if held_by_minimum(sampling, last_round_s(result)) else sampling.stopped_by
            )  # what set the length
            parts.append(f"{_plural(sampling.rounds, 'round')}, stopped by {stopped} at {_noise(sampling.rel_noise)}")
        if result.checks:
            counts: dict[str, int] = {}
            for check in result.checks:
                counts[str(check.verdict)] = counts.get(str(check.verdict), 0) + 1
            parts.append("checks " + ", ".join(f"{n} {verdict}" for verdict, n in counts.items()))
        if result.warnings:
            parts.append(_plural(len(result.warnings), "warning"))
    taken_s = result.case_s if result.case_s is not None else (result.sampling.elapsed_s if result.sampling else None)
    if taken_s is not None:
        parts.append(units.seconds(taken_s))
    return GAP.join(parts)


def started_line(index: int, total: int, case: Case) -> str:
    """-v: a case starts (a CI log then names the case a hang is in)."""
    return f"{_head(index, total, case.id)}{GAP}starts"


def running_line(index: int, total: int, case: Case, progress: MeasureProgress) -> str:
    """-v: how a case's sampling goes: its rounds, its widest interval so far, its time."""
    return GAP.join(
        [
            _head(index, total, case.id),
            f"{_plural(progress.rounds, 'round')}, {_noise(progress.rel_noise)} so far",
            units.seconds(progress.elapsed_s),
        ]
    )


def _changes(changes: tuple[tuple[str, float], ...]) -> str:
    return ", ".join(f"{escaping.visible(name)} {change_text(ratio)}" for name, ratio in changes)


def _interval(ratio: PairedRatio) -> str:
    """A look's interval of the change, or that it has none (too few blocks): never a bare '–' beside a change."""
    return said_interval_text(ratio.ratio_ci)


def _block_count(block: Block) -> str:
    """'block 4 of 14 planned'; past the scheduled blocks (a gate's grace blocks) 'block 16: 14 planned, 2 more
    taken' ('block 16, 14 planned' read as a contradiction)."""
    if block.scheduled is None:
        return f"block {block.blocks}"
    return (
        f"block {block.blocks} of {block.scheduled} planned"
        if block.blocks <= block.scheduled
        else f"block {block.blocks}: {block.scheduled} planned, {block.blocks - block.scheduled} more taken"
    )


def block_line(block: Block, verbose: bool = False) -> str:
    """An `ab` case's line after one of its blocks: its position, the block (of the blocks the looks are scheduled
    over), the paired change so far, or at a look each verdict's interval and label, and whether it stops there."""
    parts = [_head(block.index, block.total, block.case_id)]
    if block.status != OK.value:
        parts.append(_reason(block.status, block.reason))
    else:
        parts.append(_block_count(block))
        if block.judged:
            looked = (
                f"{escaping.visible(r.name)} {change_text(r.ratio)} {_interval(r)} {label_cell(r.label, r.ratio_ci, block.margin)}"
                for r in block.judged
            )
            parts.append(("last look: " if block.stopped else "look: ") + ", ".join(looked))
        elif block.changes:
            parts.append("change: " + _changes(block.changes))
        if verbose:
            parts.append(_plural(block.rounds, "round") + (f", this block: {_changes(block.last)}" if block.last else ""))
        if block.stopped:  # the look taken as it stopped: decided there (the table's "only at its one look"), or not
            parts.append("decided at its last look" if block.decided else "stopped")
        elif block.decided:
            parts.append("decided: stops")
        elif block.next_look is not None:
            parts.append(f"next look at block {block.next_look}")
        elif block.scheduled is not None:
            parts.append("look when it stops")
    parts.append(units.seconds(block.elapsed_s))
    return GAP.join(parts)


class ProgressDisplay:
    """Progress on stderr while cases run: a live bar on a terminal, a plain line per finished case (or `ab`
    block) elsewhere, flushed as it is written so that a CI log shows it then. Nothing at all when not `enabled`
    (-q, --no-progress)."""

    def __init__(self, enabled: bool, console: Console, verbose: bool = False):
        self._console, self._verbose = console, verbose
        self._progress = bar(console, "{task.description}") if enabled and console.is_terminal else None
        self._plain = enabled and not console.is_terminal
        self._task: Any = None
        self._case: Case | None = None
        self._index, self._total = 0, 0
        self._said_at = 0.0

    def __enter__(self) -> ProgressDisplay:
        if self._progress is not None:
            self._progress.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        if self._progress is not None:
            self._progress.stop()

    def _say(self, line: str) -> None:
        """A line off a terminal (as it is, flushed); with -v on one, above the bar."""
        if self._plain:
            try:
                self._console.file.write(line + "\n")
                self._console.file.flush()
            except (OSError, ValueError):  # a reader that left (`2>&1 | head`), a closed stream: progress never ends a run
                self._plain = False
        elif self._progress is not None and self._verbose:
            self._progress.console.print(Text(line), soft_wrap=True)

    def start(self, index: int, total: int, case: Case) -> None:
        """A case starts: the bar moves to it; with -v off a terminal, a line (and lines while it samples)."""
        self._case, self._index, self._total = case, index, total
        self._said_at = time.monotonic()
        if self._plain and self._verbose:
            self._say(started_line(index, total, case))
        self._show(index, total, case)

    def start_block(self, index: int, total: int, case: Case) -> None:
        """`ab`: a block of `case` (and of the cases that share its processes) starts: the bar moves to it; off a
        terminal the lines come as each block ends (`block`), with what it gave."""
        self._case = None
        self._show(index, total, case)

    def _show(self, index: int, total: int, case: Case) -> None:
        if self._progress is None:
            return
        if self._task is None:
            self._task = self._progress.add_task(escaping.rich(case.id), total=total, detail="")
        # the description is read as markup by its column: a case id is data (report.escaping)
        self._progress.update(self._task, completed=index, description=escaping.rich(case.id), detail="")

    def update(self, progress: MeasureProgress) -> None:
        if self._plain and self._verbose and self._case is not None and time.monotonic() - self._said_at >= VERBOSE_EVERY_S:
            self._said_at = time.monotonic()
            self._say(running_line(self._index, self._total, self._case, progress))
        if self._progress is not None and self._task is not None:
            rounds = _plural(progress.rounds, "round")
            self._progress.update(self._task, detail=f"{rounds}, {_noise(progress.rel_noise)}")

    def finish(self, result: Result) -> None:
        self._say(case_line(self._index, self._total, result, self._verbose))
        if self._progress is not None and self._task is not None:
            self._progress.advance(self._task)

    def block(self, block: Block) -> None:
        """An `ab` case's block ended (the bar, on a terminal, follows the blocks' progress itself)."""
        self._say(block_line(block, self._verbose))
