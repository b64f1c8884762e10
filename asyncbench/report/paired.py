"""An `asyncbench ab` run as a person reads it: a row per verdict, the two sides, the budget; terminal and markdown.

One view (`build`), two writers (`print_view`, `markdown`). The markdown is
meant as a pull-request comment: the table, the verdicts, both sides'
revision, interpreter and environment differences. With `ab --syncs`, the
sync points where head's step waits and base's does not (report.syncs's
cells) follow, or a line that there are none: in the comment a table; in the
terminal each point's FILE:LINE on a line of its own, its figures under it
(a table cell of a path is cut to the console's width, and the path is what
`--syncs` exists to name). Without a census, a case that turned SLOWER on a
backend that can wait for a device gets a line saying `--syncs` may name the
cause. With `ab --bound`, what bounds each variant's step on base and on head
follows (report.bound_changes): a line per flip, then the table. Those two
sections come after the table's own lines (the sides, the notes, the budget),
each with its own lines under its title: a census or bound note said among
the gate's notes read as part of whatever section was printed last.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from rich.console import Console
from rich.table import Table

from asyncbench.errors import EXIT_GATE
from asyncbench.report import ab_columns, bound_changes, cells, escaping, paired_syncs
from asyncbench.report.cells import drift_note
from asyncbench.report.compared import change_text, interval_text
from asyncbench.report.gate_headline import counts_beside, gate_exit, gate_headline, headline_mark
from asyncbench.report.gate_settings import settings_notes
from asyncbench.report.paired_syncs import NO_NEW_SYNCS, SYNC_HEADERS, SYNC_TITLE
from asyncbench.report.terminal import LABEL_STYLE
from asyncbench.results import fields, paired_medians, units
from asyncbench.results.ab_report import ABReport
from asyncbench.results.blocks import MAX_BLOCKS, SPREAD_BLOCKS
from asyncbench.results.labels import Label, label_cell
from asyncbench.results.paired import METRIC, WORKING_TREE, PairedCase, PairedRatio, Side
from asyncbench.results.syncs import SyncKind
from asyncbench.verdicts import environments
from asyncbench.verdicts.outcome import Outcome
from asyncbench.verdicts.paired import judge

# Facts that differ between the sides of every run: not worth a line.
SAME_BY_DESIGN = ("hostname",)
HEADERS = ("case", "what", "base", "head", "paired change", "interval", "verdict")
#: the key to the table, said under it. Head's column is base's median at the paired change, never head's own: each
#: side's median pools samples taken at other moments, which a busy machine moves and the pairs cancel (identical code
#: on a loaded 2-core machine, one block: medians 925 µs and 1.36 ms, +47%, beside a paired +0.2%; docs/guides/ci.md)
PAIRED_KEY = (
    "base: base's median, a time per sample (per N steps where the header or the cell says so: a step form's sample "
    "runs N of your steps), or a rate; head: that median at the paired change (base × change; a rate's, base ÷ "
    f"change), not head's own median, which {paired_medians.other_moments('base')}; "
    "paired change: the change the verdict is judged by, head/base estimated from "
    "the blocks (each a fresh pair of processes, measured side by side, round by round, so that what a moment does "
    "to both sides cancels) as the Hodges–Lehmann estimate of their log ratios (the median of their pairwise means), "
    "which its interval holds but need not centre"
)
# A commit named by its first 10 hex digits, as `ab` names a side's revision (session.sides.checkout).
SHORT_SHA = 10


#: the cases without a verdict, as the summary counts them (a status: its words); a case lost on head (ok on base,
#: not set up or skipped on head: exit 1, the change stopped what the gate guards) is counted as LOST, not as
#: errored, which exits 3 (a trial read "the gate fails (ab exits 1): 1 errored" beside a guide's "3 when a case errored")
UNCOMPARED = {"error": "errored", "one-sided": "on one side only"}
LOST = "lost on head (ok on base)"


@dataclass(frozen=True)
class ABView:
    title: str
    sides: tuple[str, ...]  # one line per side: revision, interpreter, environment set
    rows: tuple[tuple[str, ...], ...]  # `headers`, the verdict's cell as results.labels.label_cell words it (at the case's margin)
    labels: tuple[Label, ...]  # each row's label, for styling
    notes: tuple[str, ...]  # cases not compared, and why
    budget: str
    summary: str
    reasons: tuple[str, ...]
    code: int
    #: `ab --syncs`: a row per sync point new on head (SYNC_HEADERS); None when no census was asked for or taken
    new_syncs: tuple[tuple[str, ...], ...] | None = None
    #: `ab --bound`: a row per variant both sides read (bound_changes.HEADERS); None when no bound was asked for
    bounds: tuple[tuple[str, ...], ...] | None = None
    #: `ab --bound`: a line per variant whose bound flipped, or one that none did
    flips: tuple[str, ...] = ()
    #: `ab --syncs`: a line per case whose census could see no wait, said with the sync points, not among the notes
    sync_notes: tuple[str, ...] = ()
    #: `ab --bound`: a line per variant not compared or undecided, said under the bounds' title, not among the notes
    bound_notes: tuple[str, ...] = ()
    #: HEADERS, base's and head's saying what their medians are per where every row's sample is the same N steps
    headers: tuple[str, ...] = HEADERS
    #: the run was cut short (the file's `interrupted`): the gate fails, whatever its rows say
    interrupted: bool = False

    @property
    def headline(self) -> str:
        """The gate's verdict in a line (`gate_headline`): what it decided, from the code and the verdicts together."""
        return gate_headline(self.code, self.labels, self.interrupted)


# Why more time may never decide a case (PairedCase.never_why), in the words of the rule that stopped it
# (results.blocks.never_reason): only a case whose estimate is within that rule's reach of the margin "sits on it".
NEVER = {
    "margin": "its estimate sits on the margin: more time may never decide it",
    "spread": (
        f"its blocks are too wild: even {MAX_BLOCKS} blocks at their spread would leave its interval across the margin, "
        "so more time may never decide it"
    ),
}


def _quantity(value: float, unit: str) -> str:
    return units.quantity(value, unit) if unit else units.number(value)


def _head_at_change(ratio: PairedRatio) -> float:
    """Head's column: base's median at the paired change (a rate's `ratio` is base/head, so divided), never head's own
    median, whose ratio to base's may lie far from the change (PAIRED_KEY); NaN where either is not known."""
    return ratio.base / ratio.ratio if ratio.kind == METRIC else ratio.base * ratio.ratio


def _resolution(case: PairedCase) -> str:
    """'±3.1% reached': the widest relative half-width its intervals reached, or that some have none yet (too few
    blocks for an interval at the case's share of the false-alarm rate)."""
    widths = [(r.ratio_ci[1] - r.ratio_ci[0]) / 2 / r.ratio for r in case.ratios if r.ratio_ci is not None and r.ratio > 0]
    return f"±{max(widths) * 100:.2g}% reached" if len(widths) == len(case.ratios) and widths else "no interval yet"


def _per_sample(rows: list[tuple[int, str]]) -> str:
    """' per 20 steps' where each row (its steps per sample, its kind) is a variant's time per the same 20 steps: the
    table's base and head columns say it; '' where a sample is one step, or the rows differ (each cell says it)."""
    counts = {steps for steps, _ in rows}
    return f" per {counts.pop()} steps" if len(counts) == 1 and all(kind == "variant" for _, kind in rows) and rows[0][0] > 1 else ""


def _case_notes(case: PairedCase) -> list[str]:
    notes = []
    if case.status != "ok":
        notes.append(f"{case.id}: {case.status}: {case.reason or 'no reason given'}")
    elif (drifted := drift_note(case.lag1_autocorrelation, case.rounds)) is not None:
        notes.append(f"{case.id}: {drifted}")
    # the side's own words (its workload's verification, the user's code) quoted as data, never as the tool's
    notes += [
        f"{case.id}: results failed verification on {side}, which said: {said!r}"
        for side, _, said in (p.partition(": ") for p in case.problems)
    ]
    if case.status == "ok" and case.needed_s is not None:
        blocks = f"{case.blocks} block{'' if case.blocks == 1 else 's'}"
        if not math.isfinite(case.needed_s):
            more = NEVER.get(case.never_why or "", "more time may never decide it")
        elif case.blocks < SPREAD_BLOCKS or any(r.ratio_ci is None for r in case.ratios):
            # engine.paired.Pairing.seconds_needed: short of its first interval, the time to the first look that can
            # give one at its blocks' pace; a spread (of one block: none) it never read
            reach = "would reach its first look that can give an interval"
            more = f"about {units.seconds(case.needed_s)} more, at the pace its blocks took, {reach}"
            if case.blocks < SPREAD_BLOCKS:
                more = f"no spread is known yet from {blocks}; {more}"
        else:
            more = f"about {units.seconds(case.needed_s)} more would decide it at the spread its blocks show"
        # its own blocks' time (engine.paired.Pairing.elapsed_s), not the gate's "measured for … in all" (every case's
        # blocks and the work between them): "undecided after 3 blocks (157 s)" beside "the gate measured for 167 s"
        # read as two clocks that disagreed
        own = f"{units.seconds(case.elapsed_s)} in its own blocks"
        notes.append(f"{case.id}: undecided after {blocks} ({own}): {_resolution(case)}; {more}")
    return notes


def build(report: ABReport, outcome: Outcome) -> ABView:
    rows, labels = [], []
    notes = [
        f"sides differ: {key}: {old!r} → {new!r}"
        for key, old, new in environments.changes(report.base.facts, report.head.facts)
        if key not in SAME_BY_DESIGN
    ]
    sampled = [(cells.case_steps_per_sample(case), r.kind) for case in report.cases for r in case.ratios]
    per_column = _per_sample(sampled)
    for case in report.cases:
        notes += _case_notes(case)
        steps = cells.case_steps_per_sample(case)
        for r in case.ratios:
            what = r.name if r.kind == "variant" else f"{r.name} (metric)"
            # a variant's time per N steps says so: in the columns' header where every row shares it, else here
            per = f" per {steps} steps" if steps > 1 and r.kind == "variant" and not per_column else ""
            rows.append(
                (
                    case.id,
                    what,
                    _quantity(r.base, r.unit) + per,
                    _quantity(_head_at_change(r), r.unit) + per,
                    change_text(r.ratio),
                    interval_text(r.ratio_ci),
                    label_cell(r.label, r.ratio_ci, report.max_regression if case.margin is None else case.margin),
                )
            )
            labels.append(r.label)
    # a revision's name, an interpreter's path and a variable's value are the user's text: quoted as data (repr, as
    # the tool's error lines quote a name), so that none reads as the tool's words
    sides = tuple(
        f"{side.name}: {_revision(side)} · Python {side.python_version} ({side.python!r})"
        + (f" · {' '.join(f'{k}={v!r}' for k, v in side.environment.items())}" if side.environment else "")
        for side in (report.base, report.head)
    )
    counts = {label: labels.count(label) for label in Label if labels.count(label)}
    # a case that errored or ran on one side has no verdict, and fails the gate: counted beside the verdicts, so that
    # a failing gate's headline never reads as "1 SAME" alone
    uncompared = {what: sum(case.status == status and not case.lost for case in report.cases) for status, what in UNCOMPARED.items()}
    uncompared[LOST] = sum(case.lost for case in report.cases)
    summary = ", ".join([*(f"{n} {label}" for label, n in counts.items()), *(f"{n} {what}" for what, n in uncompared.items() if n)])
    summary = summary or "nothing compared"
    notes += settings_notes(report)
    notes += report.time_notes  # how the gate spent its time (past its target, and why): said under the table too
    notes += paired_syncs.hint(report)
    own = _own(report)
    # what the file states (the case's `margin`), not what it cannot (whether a config stated an ab_margin)
    notes += [
        f"{c.id}: judged at a margin of its own, {units.margin(c.margin)}, not the gate's {units.margin(report.max_regression)}: "
        "the case's `margin` as the file states it (`ab` judges a case at the ab_margin of its base side's settings: "
        "its config's, or `--set ab_margin=` on the command line, which sets both sides')"
        for c in own
        if c.margin is not None
    ]
    # what the file states (the case's `head_margin`): the loosening a pull request asked for, set aside
    notes += [
        f"{c.id}: head's config states ab_margin {units.margin(c.head_margin)}; it is judged at {units.margin(c.margin)}, "
        "the base side's, until that change is merged (a pull request cannot loosen its own gate)"
        for c in report.cases
        if c.head_margin is not None and c.margin is not None
    ]
    blocks_used = ", ".join(f"{c.id}: {c.blocks}" for c in report.cases if c.status == "ok")
    budget = (
        f"margin {units.margin(report.max_regression)}{_own_margins(report)}: "
        "the gate asks whether head is slower than base by more than the margin: "
        f"SLOWER when the whole interval of the ratio head/base lies above 1 + margin, a pass when it lies below (FASTER "
        f"below 1/(1 + margin), SAME within it both ways, NOT SLOWER when too wide to say which). Each interval is "
        f"the exact signed-rank interval over blocks, each a fresh pair of processes ({blocks_used or 'none'}), "
        "narrowed by the sign-test interval that passes over a wild block (from about 25 blocks, several) where the "
        "error allows. "
        f"A {units.percent(report.family_error)} family-wise false-alarm rate, split over {len(report.cases)} case(s), "
        f"each case's verdicts and its looks (Bonferroni). Idle side: {report.idle_side}."
    )
    title = "asyncbench ab: head against base, paired round by round in blocks of fresh processes" + (
        " (interrupted)" if report.interrupted else ""
    )
    return ABView(
        title,
        sides,
        tuple(rows),
        tuple(labels),
        tuple(notes),
        budget,
        summary,
        outcome.reasons,
        outcome.code,
        paired_syncs.new_on_head(report),
        bound_changes.rows(report),
        bound_changes.flips(report),
        tuple(paired_syncs.synchronous_notes(report)),
        tuple(bound_changes.notes(report)),
        tuple(f"{header}{per_column}" if header in ("base", "head") else _interval_header(header, report) for header in HEADERS),
        report.interrupted,
    )


def _interval_header(header: str, report: ABReport) -> str:
    """'interval (99.6%)': the level every compared case's interval was taken at, said once in its column's header
    (units.exact_confidence, as a check's detail says its level); where the cases' levels differ, each case's level
    beside its id ('interval (a: 99.6%, b: 99.8%)'). Only a case with an interval in some row states a level: a case
    of too few blocks for one (3 blocks, a dirty tree's 1) has a level and no interval, and `interval (98%)` over
    cells of `–` stated a confidence in nothing. Any other header as it is."""
    levels = {c.id: c.confidence for c in report.cases if c.confidence is not None and any(r.ratio_ci is not None for r in c.ratios)}
    if header != "interval" or not levels:
        return header
    if len(set(levels.values())) == 1:
        return f"{header} ({units.exact_confidence(next(iter(levels.values())))})"
    return f"{header} ({', '.join(f'{case}: {units.exact_confidence(level)}' for case, level in levels.items())})"


def _revision(side: Side) -> str:
    """What a side ran, as `ab` wrote it ("a1b2c3d4e5 (origin/main)"); a working tree with the commit it is based on
    and whether a tracked file was modified (its worker's facts' git_sha, host.git.checkout_sha), where known."""
    sha = side.facts.get("git_sha")
    if side.revision != WORKING_TREE:  # "a1b2c3d4e5 (origin/main)": the commit, and the name as the user typed it, quoted
        commit, _, name = side.revision.partition(" ")
        return f"{commit} ({name.removeprefix('(').removesuffix(')')!r})" if name else commit
    if not isinstance(sha, str) or not sha:
        return side.revision
    commit = sha.removesuffix(fields.DIRTY)[:SHORT_SHA]
    if sha.endswith(fields.DIRTY):
        return f"{WORKING_TREE} at {commit} with uncommitted changes"
    return f"{WORKING_TREE} at {commit} (no uncommitted change to a tracked file)"


def _own(report: ABReport) -> list[PairedCase]:
    """The cases judged at a margin of their own (their ab_margin), not the gate's."""
    return [c for c in report.cases if c.margin is not None and not math.isclose(c.margin, report.max_regression)]


def _own_margins(report: ABReport) -> str:
    """' (2 cases at their own, noted above)' where cases were judged at their own ab_margin; '' where none was."""
    own = len(_own(report))
    return f" ({own} case{'' if own == 1 else 's'} at {'its' if own == 1 else 'their'} own, noted above)" if own else ""


def shown_again(report: ABReport) -> ABView:
    """The view of an `ab` file read back (`show`): judged as `ab` judged it (verdicts.paired); an interrupted run,
    whose exit was its signal's, fails as a gate and says it did not finish."""
    outcome = judge(report)
    if report.interrupted:
        reason = "interrupted: the gate did not finish; each row is what its blocks had measured"
        outcome = Outcome(outcome.code or EXIT_GATE, (reason, *outcome.reasons))
    return build(report, outcome)


def print_view(view: ABView, console: Console, again: bool = False) -> None:
    """The sides, the table of verdicts (and of sync points new on head), the notes, the budget, the summary; every
    string from the view escaped for rich (report.escaping). `again`: a file shown later (`show`), whose own exit
    is not the gate's."""
    shown = escaping.rich
    for line in view.sides:
        console.print(shown(line), soft_wrap=True)
    table = Table(title=shown(view.title), title_justify="left")
    # planned widths (report.ab_columns): a name folds over lines in the room the figures leave, never taking the
    # verdict's or the interval's (a 70-character variant left `case` and `verdict` no width at COLUMNS=120); a case
    # id is one word ('train_step[torch,cpu,...]'), folded too, never cut to 'train_step[to…'
    for header, width in zip(view.headers, ab_columns.widths(view.headers, view.rows, console.width), strict=True):
        table.add_column(header, justify="left" if header in ab_columns.NAMES else "right", width=width, overflow="fold")
    for row, label in zip(view.rows, view.labels, strict=True):
        style = LABEL_STYLE[label]
        table.add_row(*map(shown, row[:-1]), f"[{style}]{row[-1]}[/]" if style else row[-1])
    console.print(table)
    console.print(f"  [dim]{shown(PAIRED_KEY)}[/]", soft_wrap=True)
    for note in view.notes:
        console.print(f"  [yellow]{shown(note)}[/]", soft_wrap=True)
    console.print(f"  [dim]{shown(view.budget)}[/]", soft_wrap=True)
    # the sections `--syncs` and `--bound` add come after the table's own lines, each line under its own title
    if view.new_syncs:
        # not a table: a cell is cut to the console's width, and a FILE:LINE cut is no place an editor finds
        # each FILE:LINE once, the variants (of any case) that wait there under it
        places: dict[str, list[tuple[str, ...]]] = {}
        for row in view.new_syncs:
            places.setdefault(row[SYNC_HEADERS.index("file:line")], []).append(row)
        console.print(f"[italic]{shown(SYNC_TITLE)}[/]:", soft_wrap=True)
        for place, rows in places.items():
            console.print(f"  [bold]{shown(place)}[/]", soft_wrap=True)
            for case_id, variant, _, kind, call, waits, blocked in rows:
                # a queue-full point is not a wait (report.syncs.HEADERS): its count is of times the queue was full
                counted = "time{}/step the queue was full" if kind == str(SyncKind.QUEUE_FULL) else "wait{}/step"
                figures = f"{shown(waits)} {counted.format('' if waits == '1' else 's')}, {shown(blocked)} blocked/step"
                console.print(f"    {shown(case_id)} {shown(variant)}: {shown(kind)} at {shown(call)}, {figures}", soft_wrap=True)
    elif view.new_syncs is not None:
        console.print(shown(NO_NEW_SYNCS), soft_wrap=True)
    for note in view.sync_notes:
        console.print(f"  [yellow]{shown(note)}[/]", soft_wrap=True)
    bound_changes.print_to(console, view.bounds, view.flips, view.bound_notes)
    style = "red" if view.code else "yellow" if Label.INCONCLUSIVE in view.labels else "green"
    console.print(f"[{style}]{shown(view.headline)}[/]{shown(counts_beside(view.headline, view.summary))}", soft_wrap=True)
    if view.code:
        # shown again, the exit is `ab`'s (show's own is 0); one cut short exited on its signal, said in the reasons
        failed = "the gate failed" + ("" if view.interrupted else f" ({gate_exit(view.code)})")
        console.print(f"[red]{failed}[/] because:" if again else f"[red]exit {view.code}[/] because:")
        for reason in view.reasons:
            console.print(f"  - {shown(reason)}", soft_wrap=True)


def markdown(view: ABView) -> str:
    """A pull-request comment: verdict first, then the table, the sides and what could not be compared; every string
    from the view through report.escaping (no cell or line breaks out, nothing renders)."""
    md = escaping.markdown
    head = f"{headline_mark(view.code)} {view.headline}"
    lines = [f"### {md(view.title)}", "", f"**{head}**{md(counts_beside(view.headline, view.summary))}", ""]
    lines += [f"- {md(reason, starts_line=True)}" for reason in view.reasons]
    lines += ["", "| " + " | ".join(view.headers) + " |", "|---|---|--:|--:|--:|--:|--:|"]
    for row, label in zip(view.rows, view.labels, strict=True):
        shown = f"**{row[-1]}**" if label in (Label.SLOWER, Label.INCONCLUSIVE) else row[-1]
        lines.append("| " + " | ".join([*(md(cell) for cell in row[:-1]), shown]) + " |")
    lines += ["", f"_{md(PAIRED_KEY)}_"]
    lines += ["", *[f"- {md(line, starts_line=True)}" for line in view.sides], *[f"- {md(note, starts_line=True)}" for note in view.notes]]
    lines += ["", f"_{md(view.budget)}_"]
    # the sections `--syncs` and `--bound` add come last, each line under its own title
    if view.new_syncs:
        lines += ["", f"**{SYNC_TITLE}**", "", "| " + " | ".join(SYNC_HEADERS) + " |", "|---|---|---|---|---|--:|--:|"]
        code = (SYNC_HEADERS.index("file:line"), SYNC_HEADERS.index("call"))
        for row in view.new_syncs:
            cells = (escaping.markdown_code(cell, in_table=True) if index in code else md(cell) for index, cell in enumerate(row))
            lines.append("| " + " | ".join(cells) + " |")
    elif view.new_syncs is not None:
        lines += ["", f"_{NO_NEW_SYNCS}_"]
    if view.sync_notes:
        lines += ["", *[f"- {md(note, starts_line=True)}" for note in view.sync_notes]]
    lines += bound_changes.markdown_lines(view.bounds, view.flips, view.bound_notes)
    lines.append("")
    return "\n".join(lines)
