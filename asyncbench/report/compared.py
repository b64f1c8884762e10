"""A comparison with a baseline as a person reads it: a row per variant, what could not be compared, a summary.

Built once from `verdicts.compare`'s comparison, laid out by the terminal
and markdown writers (and printed by `asyncbench compare`). A row shows
each run's median, the change those imply, and the shift the verdict is
judged by (Hodges–Lehmann, with its interval): two figures that can differ
by points, each under its own name, with a key under the table that says
why (ESTIMATE_NOTE).
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass

from asyncbench.results import units
from asyncbench.results.labels import Label, label_cell
from asyncbench.results.model import Verdict
from asyncbench.verdicts import compare, machine, row_interval, undecided

# A comparison of more rows than this lists the rows that are not SAME; a line counts the others.
COMPARISON_ROWS_MAX = 100
#: the table's columns: each run's median, the change those medians imply, and the change the verdict is judged by
HEADERS = ("case", "variant", "baseline", "current", "medians", "shift (HL)", "interval", "verdict")
#: the columns that hold figures (right-aligned, never wrapped)
FIGURES = (False, False, True, True, True, True, True, True)
#: the key to the table, said under it: the shift is not the medians' change, and the two can differ by points
#: (+4.6% was printed as "change" between medians 61.9 and 68.6 ms)
ESTIMATE_NOTE = (
    "baseline, current: each run's median; medians: the change those two imply; shift (HL): the change the verdict "
    "is judged by, the Hodges–Lehmann estimate (the median over every pair of a baseline and a current sample of "
    "their ratio), which its interval holds but need not centre: it weighs every sample, so it differs from the "
    "medians' change where a run's times are spread or split into modes"
)


@dataclass(frozen=True)
class ComparisonRow:
    id: str
    variant: str
    baseline: str  # each run's median
    current: str
    medians: str  # the change the two medians imply, '+10.8%'
    change: str  # the shift the verdict is judged by (Hodges–Lehmann), '+4.6%'
    interval: str  # the shift's interval, '[+1.2% … +8.0%]'
    label: Label
    fails: bool
    #: the label's cell (label_cell: a SAME whose interval excludes no change says which way, within the margin)
    label_text: str = ""

    @property
    def cells(self) -> tuple[str, ...]:
        """The row's cells in HEADERS order, its label's cell last."""
        label = self.label_text or str(self.label)
        return (self.id, self.variant, self.baseline, self.current, self.medians, self.change, self.interval, label)


@dataclass(frozen=True)
class ComparisonView:
    clock: str
    max_regression: str  # '10%'
    budget: str  # '1% false-alarm rate over 12 rows: 99.92% intervals'
    rows: tuple[ComparisonRow, ...]  # every row, or past COMPARISON_ROWS_MAX those that are not SAME
    notes: tuple[str, ...]
    interval_sees: str
    summary: str
    failed: bool
    headers: tuple[str, ...] = HEADERS
    figures: tuple[bool, ...] = FIGURES
    estimate: str = ESTIMATE_NOTE  # the key to the medians and shift columns
    #: every judged row, listed or not (`rows` leaves out SAME ones past COMPARISON_ROWS_MAX): a JUnit test each
    judged: tuple[ComparisonRow, ...] = ()
    #: whether an INCONCLUSIVE row let the gate pass (--allow-inconclusive)
    allow_inconclusive: bool = False
    #: (case id, why) of each case ok in the baseline and not ok now: a failing JUnit test each, as the gate fails on it
    lost: tuple[tuple[str, str], ...] = ()
    #: the files' own strings the notes may hold (case ids, variants, reasons, environment values): a code span that
    #: overlaps one is not the tool's and stays escaped in markdown (escaping.markdown_note)
    user: tuple[str, ...] = ()

    @property
    def title(self) -> str:
        return f"compared with the baseline ({self.clock}, margin {self.max_regression}; {self.budget})"


def change_text(ratio: float) -> str:
    """+12.3% (slower) / −40.0% (faster): a ratio as a change."""
    if math.isnan(ratio):  # no ratio (a zero baseline)
        return units.NO_VALUE
    text = f"{(ratio - 1) * 100:+.1f}"
    if text == "-0.0":  # a change that rounds to nothing has no direction: never '−0.0%'
        text = "+0.0"
    return f"{text}%".replace("-", "−")


def interval_text(interval: tuple[float, float] | None) -> str:
    """'[+1.2% … +8.0%]': the interval of the change; '—' without one."""
    if interval is None:
        return units.NO_VALUE
    return f"[{change_text(interval[0])} … {change_text(interval[1])}]"


def said_interval_text(interval: tuple[float, float] | None) -> str:
    """The interval of a change in a sentence (progress, JUnit): a bare '–' beside a change reads as a range, so
    where there is none it says '[no interval]'."""
    return "[no interval]" if interval is None else interval_text(interval)


def _machine_notes(result: compare.Comparison) -> list[str]:
    """The machine: a line for each case during which it changed speed and the change was carried by the rows'
    intervals, a count of those during which it held its speed, and of those where it was not seen, by why (files
    without a reference, runs whose CPU thread pools differ: verdicts.machine.change). A case where it moved beyond
    a verdict, or a neighbour was seen, says so in its rows' own INCONCLUSIVE lines."""
    cases = {r.id: r for r in result.rows}.values()  # the machine is the case's, not the variant's
    judged = [r for r in cases if r.machine_moved is False]
    held = [r for r in judged if machine.held(r.machine_ci)]
    said = [f"machine during {r.id}: {r.machine}" for r in judged if r not in held]
    if held:
        worst = max(held, key=lambda r: abs(math.log(r.machine_ratio or 1.0)))
        said.append(
            f"the machine held its speed during {len(held)} case(s) (reference within ±{machine.STEADY * 100:.0f}%, "
            f"farthest {units.ratio(worst.machine_ratio)} {interval_ratio(worst.machine_ci)}): their intervals carry its change"
        )
    unseen = Counter(r.machine for r in cases if r.machine_moved is None and not math.isnan(r.case_ratio))
    said += [f"the machine's change between the runs is not seen for {n} case(s): {why}" for why, n in unseen.items()]
    return said


def interval_ratio(interval: tuple[float, float] | None) -> str:
    """'[0.98–1.03]': a ratio's interval; '[?]' without one."""
    return "[?]" if interval is None else f"[{units.ratio_end(interval[0])}–{units.ratio_end(interval[1])}]"


def _machine_level(result: compare.Comparison) -> str:
    """Which intervals the rows print where it is not one at the header's level: the code's, from the case's interval
    and the machine's, each at half the row's error (verdicts.compare._rows), where a row's machine change was carried;
    the case's own at half the error, the machine's change not taken out, where the machine gave no verdict. Each
    clause only where some row prints that interval: a header once described the code's interval above rows that all
    printed the case's own. '' where no row prints either."""
    half = units.exact_confidence(1 - (1 - result.confidence) / 2)
    printed = {r.interval_is for r in result.rows}
    said = ""
    if row_interval.CODE in printed:
        said += (
            f"; a row whose machine's change was carried prints the code's interval, the case's {half} interval with "
            f"the machine's {half} one taken out"
        )
    if row_interval.CASE_BESIDE_MACHINE in printed:
        said += (
            f"; a row the machine gives no verdict (a neighbour, a move beyond what was measured) prints the case's own "
            f"{half} interval, the machine's change not taken out: its line says why"
        )
    return said


def comparison(result: compare.Comparison) -> ComparisonView:
    """A baseline comparison as a person reads it: a row per variant, what could not be compared, a summary."""
    notes = []
    if result.same_run:
        notes.append(
            "both files are the same run (one run_id): each row compares its samples with themselves, so the verdicts "
            "show only what the method gives, not a change"
        )
    elif result.same_samples:
        notes.append(
            "both files hold the same samples (one measurement read twice under two run_ids: a shard and the file merged "
            "from it, a run and a copy): each row compares its samples with themselves, so the verdicts show only what "
            "the method gives, not a change"
        )
    elif any(r.same_samples for r in result.rows):
        same = [f"{r.id} {r.variant}" for r in result.rows if r.same_samples]
        notes.append(
            f"{len(same)} row(s) hold the same samples in both files (one measurement read twice): each compares its "
            f"samples with themselves, so its verdict shows only what the method gives, not a change: {', '.join(same)}"
        )
    if result.only_in_baseline:
        notes.append(f"only in the baseline ({len(result.only_in_baseline)}): {', '.join(result.only_in_baseline)}")
    if result.only_in_current:
        notes.append(f"only in the current run ({len(result.only_in_current)}): {', '.join(result.only_in_current)}")
    notes += [f"not run now: {case_id}: {why}" for case_id, why in result.lost]
    notes += [f"not compared: {case_id}: {why}" for case_id, why in result.not_comparable]
    notes += [f"INCONCLUSIVE {r.id} {r.variant}: {r.note}" for r in result.rows if r.note]
    notes += _machine_notes(result)
    notes += [f"environment differs: {key}: {old!r} → {new!r}" for key, old, new in result.environment_changes]
    counts = {label: sum(1 for r in result.rows if r.label == label) for label in Label}
    listed = result.rows if len(result.rows) <= COMPARISON_ROWS_MAX else [r for r in result.rows if r.label != Label.SAME]
    if len(listed) < len(result.rows):
        unlisted = len(result.rows) - len(listed)
        notes.insert(0, f"{unlisted} SAME row(s) not listed (more than {COMPARISON_ROWS_MAX}): `--format json` lists all")
    summary = ", ".join(f"{n} {label}" for label, n in counts.items() if n) or f"nothing compared: {_nothing_compared(result)}"
    if result.regressions:
        summary += "; slower: " + ", ".join(f"{r.id} {r.variant} (shift {change_text(r.ratio)})" for r in result.regressions)
    if result.lost:
        summary += f"; {len(result.lost)} case(s) ok in the baseline did not run ok now"
    if result.inconclusive:
        passes = "passes (--allow-inconclusive)" if result.allow_inconclusive else "fails the gate"
        summary += f"; INCONCLUSIVE {passes} ({undecided.reason(result.inconclusive)})"
    judged = tuple(_row(r, result.max_regression) for r in result.rows)
    return ComparisonView(
        clock=result.clock,
        max_regression=units.margin(result.max_regression),
        budget=(
            f"a {units.percent(result.family_error)} false-alarm rate over {len(result.rows)} row(s): "
            # the level the printed intervals were taken at, not a readable one below it: "99% intervals" over 3 rows,
            # each taken at 99.333%, sent a reader who recomputed at 99% to a narrower interval
            f"{units.exact_confidence(result.confidence)} intervals, each label one-sided at "
            f"{units.percent((1 - result.confidence) / 2, units.EXACT_MISS_DIGITS)}{_machine_level(result)}"
            if result.rows
            else "no row compared"  # no rate is spent over no row: the summary says why there is none
        ),
        rows=judged if len(listed) == len(judged) else tuple(row for row in judged if row.label != Label.SAME),
        notes=tuple(notes),
        interval_sees=compare.INTERVAL_SEES,
        summary=summary,
        failed=result.failed,
        judged=judged,
        allow_inconclusive=result.allow_inconclusive,
        lost=result.lost,
        user=_file_strings(result),
    )


def _file_strings(result: compare.Comparison) -> tuple[str, ...]:
    """What the two files named, as the notes may quote it: ComparisonView.user."""
    named = [*result.only_in_baseline, *result.only_in_current, *(text for pair in (*result.lost, *result.not_comparable) for text in pair)]
    named += [text for r in result.rows for text in (r.id, r.variant)]
    named += [text for key, old, new in result.environment_changes for text in (key, repr(old), repr(new))]
    return tuple(dict.fromkeys(named))


def _nothing_compared(result: compare.Comparison) -> str:
    """Why a comparison has no row: the clock is in none of the cases both files ran ok (a CPU run's device_s), no
    case ran ok in both, or (a run's own comparison, where an empty side is no input error) no case is in both."""
    if result.without_clock:
        return f"{result.clock} is in none of the {len(result.without_clock)} case(s) that ran ok in both files"
    if result.lost or result.not_comparable:
        return "no case ran ok in both files"
    return "no case is in both files"


def _row(r: compare.VariantComparison, max_regression: float) -> ComparisonRow:
    """One judged row as the table and the JUnit file show it."""
    return ComparisonRow(
        r.id,
        r.variant,
        units.seconds(r.baseline_s),
        units.seconds(r.current_s),
        change_text(r.current_s / r.baseline_s if r.baseline_s > 0 else math.nan),
        change_text(r.ratio),
        interval_text(r.ratio_ci),
        r.label,
        r.verdict == Verdict.FAIL,  # a regression (not `r in result.regressions`: that is a scan per row)
        label_cell(r.label, r.ratio_ci, max_regression),
    )
