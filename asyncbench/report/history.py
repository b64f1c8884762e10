"""`asyncbench history` in a terminal: a line per series with a sparkline of its medians, then its changes."""

from __future__ import annotations

import math
from typing import Sequence

from rich.console import Console
from rich.text import Text

import asyncbench.history.model as model
from asyncbench.history.model import ChangePoint, Point, Regression, Series
from asyncbench.report.escaping import visible
from asyncbench.results import units

SPARKS = "▁▂▃▄▅▆▇█"
# A sparkline shows at most this many of the newest points (a terminal line is only so wide).
SPARK_POINTS = 40


def sparkline(values: Sequence[float]) -> str:
    """'▁▁▂▁▇█▇': each value's height between the series' least and greatest."""
    shown = list(values)[-SPARK_POINTS:]
    low, high = min(shown), max(shown)
    if high <= low:
        return SPARKS[0] * len(shown)
    return "".join(SPARKS[round((v - low) / (high - low) * (len(SPARKS) - 1))] for v in shown)


def _figure(value: float, unit: str) -> str:
    if unit == model.READING_UNIT:  # what bounds a step: a word, stored as its code
        return model.reading_word(value)
    return units.with_bounds(value, None, unit)


def point_figure(point: Point, unit: str) -> str:
    """A run's figure as the line ends with it: a time whose interval reaches 0 as every other view says it (a side's
    slack, `run --bound`: '~0 [≤ 273 µs]', a bare '0' only where its interval is [0, 0]: units.with_bounds), never
    its point estimate alone ('75.9 µs' read as a slack surely there, '0 ns' as surely none); else the figure."""
    if unit == "s" and point.low is not None and point.high is not None and point.low <= 0 <= point.high:
        return units.with_bounds(point.value, (point.low, point.high), unit)
    return _figure(point.value, unit)


def _made(point: Point) -> str:
    """When a run counts as made (Point.ordered_at, UTC), to the second, saying which time that is: 'made …' (its
    creation), or 'recorded …' where its creation lay after its recording (history.clock: a clock ahead), with the
    time its clock said, so that a recording time is never shown as the time it was made."""
    if point.ordered_at is not None and point.clock_ahead():
        said = point.created_utc()
        return f"recorded {point.ordered_at[:19]} UTC (its own clock said {said} UTC, ahead)"
    return f"made {(point.ordered_at or point.created)[:19]} UTC"


def recorded_last_line(one: Series) -> str | None:
    """Where a series' last point (the run recorded last: its sparkline's end and the figure after it, in the order
    changes are looked for and the gate reads) is not its run made last (the latest run, as `report` chooses it:
    Point.ordered_at, history.clock), one line naming both, so that the two views do not seem to disagree: 'the
    figure is run 5's, recorded last, made 2026-11-29T20:38:01 UTC; the latest run (made last) is run 4, made
    2026-11-29T20:42:26 UTC: 4.92 ms (a series is in the order its runs were recorded)'. None where they are one
    run, or a point's time is unknown."""
    if not one.points or any(point.ordered_at is None for point in one.points):
        return None
    last = one.points[-1]
    made = max(one.points, key=lambda point: (point.ordered_at or "", point.run))
    if made.run == last.run:
        return None
    return (
        f"the figure is run {last.run}'s, recorded last, {_made(last)}; the latest run (made last) is run {made.run}, "
        f"{_made(made)}: {point_figure(made, one.shown_unit)} (a series is in the order its runs were recorded)"
    )


def _ratio_parts(change: ChangePoint) -> tuple[str, str]:
    """A change's ratio and its interval as `_ratio` writes them ('1.31', '[1.22–1.40]'; '[?]': a side too short for
    one): three significant digits, more decimals (units.apart_ratio_ends) where those print two different ends as one,
    so an interval never reads as a point ('1.03 [1.03–1.03]' of an `ab` series' 1.0336 in [1.0321, 1.0347])."""
    value = f"{change.ratio:.3g}"
    low, high = change.ratio_low, change.ratio_high
    if low is None or high is None:
        return value, "[?]"
    first, last = f"{low:.3g}", f"{high:.3g}"
    if first == last and low != high and all(map(math.isfinite, (change.ratio, low, high))):
        shown = units.apart_ratio_ends(change.ratio, (low, high), (f"{value}×", f"{first}×", f"{last}×"))
        value, first, last = (text.removesuffix("×") for text in shown)
    return value, f"[{first}–{last}]"


def _ratio(change: ChangePoint) -> str:
    """'×1.31 [1.22–1.40]': a change's ratio with its interval ([?]: a side too short for one)."""
    value, interval = _ratio_parts(change)
    return f"×{value} {interval}"


def _before_after(change: ChangePoint, unit: str) -> tuple[str, str]:
    """A change's figures before and after it; a ratio's (an `ab` series') with the decimals that make the one over
    the other read as the change's ratio does: '1.00× → 1.04×, ×1.034' printed 1.0015 → 1.0351 (1.04 / 1.00 is no
    1.034); it reads '1.0015× → 1.0351×'. A time's, a rate's keep their three figures."""
    shown = (_figure(change.before, unit), _figure(change.after, unit))
    before, after = change.before, change.after
    if unit != "x" or not all(map(math.isfinite, (before, after))) or max(abs(before), abs(after)) >= 100:
        return shown
    ratio = _ratio_parts(change)[0]
    decimals = len(ratio.partition(".")[2])
    for places in range(2, units.DISTINCT_RATIO_DECIMALS + 1):
        first, last = round(before, places), round(after, places)
        if first and f"{last / first:.{decimals}f}" == f"{float(ratio):.{decimals}f}":
            return f"{before:.{places}f}×", f"{after:.{places}f}×"
    return shown


#: what the report's page says of a change whose interval holds 1: it moved, but its interval does not say which way,
#: so neither "slower" nor "faster" is earned (the gate calls such a slower point INCONCLUSIVE at any margin)
WAY_NOT_SHOWN = "which way not shown: its interval holds ×1"


#: what a series says, once, where the figures around a change of it cannot be told from 0 (Series.told_from_zero):
#: its ratio (×1.3 of 4 ns in [−39, +63] ns) says nothing of a slowdown, so neither it nor the gate judges one
NOT_TOLD_FROM_ZERO = "its figures cannot be told from 0 (each run's 95% interval holds 0), so no change of it is judged"


def change_words(one: Series, change: ChangePoint) -> str:
    """A change as the report's page names it, in `history`'s format with the way it went, only as far as its interval
    shows it: '×1.31 [1.22–1.40] slower', '×0.72 [0.68–0.76] faster', '×1.05 [0.9–1.2], which way not shown: …',
    '×1.38 [?] slower by its point alone' (no interval: its point says which way, not by how much), and the ratio with
    its interval alone for a quantity that does not say which way is slower (Series.slower_by)."""
    if not one.told_from_zero(change):  # a ratio of figures that may each be nothing: no way, no multiple
        return NOT_TOLD_FROM_ZERO
    said = _ratio(change)
    if change.at_move:  # its interval carries the machine's change at the same run (history.at_move)
        said = f"{said} (the machine's ×{change.machine_ratio:.3g} at the same run carried)"
    slower = one.slower_by(change)
    if slower is None:
        return said
    if change.ratio_low is None or change.ratio_high is None:
        return f"{said} slower by its point alone" if slower > 1 else said
    if slower > 1:
        return f"{said} slower"
    if (one.slower_at_most(change) or 1.0) < 1:
        return f"{said} faster"
    return f"{said}, {WAY_NOT_SHOWN}"


#: what a change's `[?]` says, under its line in `history`: its ratio has no 95% interval, for too few runs on a
#: side of it (verdicts.compare's rank interval: three against three or four have none, one or two against a few
#: neither), so it says which way, not by how much; the gate calls such a slower change INCONCLUSIVE
NO_INTERVAL = (
    "[?]: no 95% interval for this ratio: too few runs on a side of the change for one (the rule: the history guide), "
    "so it says which way, not by how much; --fail-on-regression calls a slower one inconclusive"
)


def too_short_line(young: Sequence[Series], judged_nothing: bool = False) -> str:
    """What `history --fail-on-regression` says of the series it could not judge for being young (history.gate.
    too_short), in one line of stderr: how many, why, and that they pass: 'not judged: 2 series too short to judge
    (2 to 5 runs recorded; a change is looked for from 6 runs on): the gate passes them until then'. Where they are
    every series it could have judged (history.gate.judged_nothing), it says first that it judged nothing: 'the gate
    judged nothing: all 62 series are too short to judge (…)', so that a pass is not read as "no regression"."""
    counts = sorted(one.runs for one in young)
    recorded = f"{counts[0]} run{'' if counts[0] == 1 else 's'}" if counts[0] == counts[-1] else f"{counts[0]} to {counts[-1]} runs"
    why = f"({recorded} recorded; a change is looked for from {model.MIN_RUNS} runs on): the gate passes them until then"
    if judged_nothing:
        return f"the gate judged nothing: all {len(young)} series are too short to judge {why}"
    return f"not judged: {len(young)} series too short to judge {why}"


#: what a change's line says where its figures are the times scaled to the machine's usual speed (ChangePoint.scaled):
#: the points beside it are the times as measured, and read otherwise (1.2 → 1.8 ms measured, 1.0 → 1.5 ms scaled)
SCALED = "scaled to the machine's usual speed (the runs' times as measured differ)"


def machine_carried(change: ChangePoint) -> str:
    """What a change at its machine's move (ChangePoint.at_move, history.at_move) says of it: 'at the same run as the
    machine's reference ×1.2 [1.19–1.21], carried in its interval (the case may follow it not at all, one for one, or
    twice), as compare does: a change of the code there cannot be told from the machine's beyond that'."""
    low, high = change.machine_low, change.machine_high
    moved = f"×{change.machine_ratio:.3g}" + (f" [{low:.3g}–{high:.3g}]" if low is not None and high is not None else " [?]")
    return (
        f"at the same run as the machine's reference {moved}, carried in its interval (the case may follow it not at "
        "all, one for one, or twice), as compare does: a change of the code there cannot be told from the machine's "
        "beyond that interval"
    )


def change_line(change: ChangePoint, unit: str) -> str:
    """'at v1.3: 12.1 ms → 15.8 ms, ×1.31 [1.22–1.40], p 2e-06', and where its figures are scaled to the machine's
    usual speed, or it lies at the machine's move (the machine's change carried: machine_carried), it says so."""
    before, after = _before_after(change, unit)
    said = f"at {change.at}: {before} → {after}, {_ratio(change)}, p {change.p_value:.2g}"
    if change.at_move:
        return f"{said}; {machine_carried(change)}"
    return f"{said}; {SCALED}" if change.scaled else said


def regression_line(hit: Regression, within: int, allow_inconclusive: bool = False, margin: float | None = None) -> str:
    """What `history --fail-on-regression` says of a series it found slower (a line of stderr): the series, where its
    change starts with the ratio and its interval, how many runs ago, and what the gate does with it:
    'regression: mm[numpy,cpu] mm done_s on 1a2b: ×2.17 [1.9–2.4] (23.5 ms → 51.2 ms) from v1.3, 3 runs ago
    (the gate fails on it until it is 10 runs old: --within)'; 'inconclusive: …' for a ratio without an interval
    (not judged against the margin: it fails the gate unless `allow_inconclusive`), with how many more runs would
    give it one where that is known, or for a ratio whose interval straddles `margin`; 'note: …' for the machine's
    own series (the runner, not the code: it never fails the gate). Words from the store are shown, never obeyed."""
    one, change = hit.series, hit.change
    quantity = f"{one.variant} {one.quantity}" if one.variant else one.quantity
    if change is None:  # unsteady: too few runs left once the machine's were discounted, so not searched
        verdict = (
            "--allow-inconclusive: it does not fail the gate" if allow_inconclusive else "the gate fails on it, unless --allow-inconclusive"
        )
        said = (
            f"inconclusive: {one.case} {quantity} on {one.machine}: {_unsteady_why(one)}: "
            f"{_unsteady_counts(one)}, so not searched for a change ({verdict}; see the discounted runs in `asyncbench history`)"
        )
        return visible(said)
    ago = "at the newest run" if hit.runs_ago == 0 else f"{hit.runs_ago} run{'' if hit.runs_ago == 1 else 's'} ago"
    before, after = _before_after(change, one.shown_unit)
    moved = f"{_ratio(change)} ({before} → {after}) from {change.at}, {ago}"
    if one.of_machine:
        what = "reference" if one.quantity == model.MACHINE_QUANTITY else "CPU pressure"
        said = (
            f"note: {one.case} on {one.machine}: the machine's {what} changed {moved}: the runner, not the code "
            "(it does not fail the gate; a change of the code at the same run cannot be told from it; "
            "see the discounted runs in `asyncbench history`)"
        )
        return visible(said)
    lasting = f"until it is {within} runs old: --within"
    if change.at_move:  # its interval carries the machine's change at the same run: the gate judged that interval
        moved = f"{moved}: {machine_carried(change)}"
    elif change.scaled:
        moved = f"{moved} ({SCALED})"
    if not hit.inconclusive:
        said = f"regression: {one.case} {quantity} on {one.machine}: {moved} (the gate fails on it {lasting})"
        return visible(said)
    short = hit.runs_short
    more = f"; {short} more run{'' if short == 1 else 's'} like these would give it one" if short else ""
    verdict = (
        "--allow-inconclusive: it does not fail the gate"
        if allow_inconclusive
        else f"the gate fails on it {lasting}, unless --allow-inconclusive"
    )
    if hit.straddles:
        said = (
            f"inconclusive: {one.case} {quantity} on {one.machine}: {moved}: its interval straddles the margin "
            f"({units.margin(margin)}), so it is shown neither beyond it nor within it ({verdict})"
        )
        return visible(said)
    said = (
        f"inconclusive: {one.case} {quantity} on {one.machine}: {moved}: too few runs on a side for an interval "
        f"(the exact rule: the history guide){more}, so not judged against the margin ({verdict})"
    )
    return visible(said)


# A series of fewer runs than this is not searched for changes (history.model.MIN_RUNS says why): it says it was too
# short to tell.
RUNS_TO_SEE_A_STEP = model.MIN_RUNS


#: what a series of what bounds a step says instead of its changes: none are looked for in it
NOT_SEARCHED = ", not searched for changes (what bounds the step: read its chart)"


def _unsteady_why(one: Series) -> str:
    """Why an unsteady series could not be searched: 'a neighbour shared the cores in too many runs to tell' where
    every run discounted was beside one (history.discount: a task waited for a CPU beyond what `compare` calls a
    neighbour), else 'the machine was too unsteady to tell'."""
    if one.discounted and all(model.in_other_pools(why) for _, why in one.discounted):
        return "the newest run's CPU thread pools differ from too many runs' before it to tell"
    if one.discounted and all(model.beside_neighbour(why) for _, why in one.discounted):
        return "a neighbour shared the cores in too many runs to tell"
    return "the machine was too unsteady to tell"


def _unsteady_counts(one: Series) -> str:
    """'5 of 8 runs discounted as the machine's (2 beside a neighbour): 3 left, a change is looked for in 6 or more'
    (of the newest runs read, where fewer than all were read)."""
    read = len(one.points)
    of = f"{read}" if read >= one.runs else f"the newest {read}"
    left = read - len(one.discounted)
    beside = sum(model.beside_neighbour(why) for _, why in one.discounted)
    pools = sum(model.in_other_pools(why) for _, why in one.discounted)
    said = [f"{beside} beside a neighbour"] * bool(beside) + [f"{pools} in other CPU thread pools than the newest run's"] * bool(pools)
    neighbours = f" ({', '.join(said)})" if said else ""
    return (
        f"{len(one.discounted)} of {of} runs discounted{_as_whose(one)}{neighbours}: {left} left, "
        f"a change is looked for in {RUNS_TO_SEE_A_STEP} or more"
    )


def _as_whose(one: Series) -> str:
    """' as the machine's' where a series' runs were discounted for the machine only, not for their thread pools."""
    return "" if one.pools_moved else " as the machine's"


def _where(one: Series) -> str:
    """' in the newest run's CPU thread pools' where runs in other pools were discounted (history.discount)."""
    return " in the newest run's CPU thread pools" if one.pools_moved else ""


def _no_change(one: Series) -> str:
    """What a series without change points says: none found; where it is too short for a step to show (fewer than
    RUNS_TO_SEE_A_STEP runs: model.TOO_SHORT), that it was not searched and the runs a search needs; where too few of
    its runs were left once the machine's were discounted (Series.unsteady), that, with the counts. Neither says "no
    change found": neither was searched (docs/guides/history.md)."""
    runs = one.runs
    if one.unsteady:
        read = len(one.points)
        of = "" if read >= runs else f" of the newest {read}"
        return f", {len(one.discounted)}{of} discounted{_as_whose(one)}: {read - len(one.discounted)} left, too few to tell"
    if runs < RUNS_TO_SEE_A_STEP:  # too short (model.TOO_SHORT): not searched, so nothing was found or not found
        return f", not searched: too short to tell, needs {RUNS_TO_SEE_A_STEP} runs"
    return ", no change found"


# The runs a line of runs discounted for their thread pools names before "…": enough to see where the pools changed.
POOL_RUNS_NAMED = 3


def _discounted_lines(discounted: Sequence[tuple[int, str]]) -> list[tuple[list[int], str]]:
    """The discounted runs as `history` lists them: each run with its why, except those in other CPU thread pools than
    the newest run's (model.in_other_pools), one line for each way their pools differ, at the first such run."""
    lines: list[tuple[list[int], str]] = []
    pooled: dict[str, list[int]] = {}
    for run, why in discounted:
        if not model.in_other_pools(why):
            lines.append(([run], why))
        elif why in pooled:
            pooled[why].append(run)
        else:
            pooled[why] = [run]
            lines.append((pooled[why], why))
    return lines


def print_series(found: Sequence[Series], console: Console) -> None:
    """Every series, then its machines: one Text built with styles (no markup to parse), printed once, so two
    thousand series print in a fraction of a second. Every word from the store is data: `visible` (report.escaping),
    so an escape stored in a name is shown to whoever reads the history, never obeyed."""
    text = Text()
    for one in found:
        quantity = visible(f"{one.variant} {one.quantity}" if one.variant else one.quantity)
        judged = one.judged_changes
        changed = f", {len(judged)} change(s)" if judged else _no_change(one)
        if len(judged) < len(one.change_points):  # said once, in place of its changes' ratios (Series.told_from_zero)
            changed = f"{changed}; {NOT_TOLD_FROM_ZERO}" if judged else f", {NOT_TOLD_FROM_ZERO}"
        if model.is_bound(one.quantity):  # drawn, never searched (history.recording.refresh_changes)
            changed = NOT_SEARCHED
        newest = point_figure(one.points[-1], one.shown_unit) if one.points else "–"
        text.append(visible(one.case), style="bold")
        text.append(f" {quantity} ")
        text.append(f"on {visible(one.machine)}", style="dim")
        runs = f"{one.runs} run" + ("" if one.runs == 1 else "s")
        text.append(f"  {sparkline([p.value for p in one.points]) if one.points else ''}  {newest} ({runs}{changed})\n")
        order = recorded_last_line(one)
        if order is not None:  # its last point is not its latest run (report's): say which run each is
            text.append(f"    {visible(order)}\n", style="dim")
        for change in judged:
            text.append(f"    {visible(change_line(change, one.shown_unit))}\n")
            if change.ratio_low is None or change.ratio_high is None:
                text.append(f"    {NO_INTERVAL}\n", style="dim")
        if one.unsteady:  # not searched: say so, not that changes were looked for
            text.append(f"    changes not looked for: too few runs{_where(one)} whose machine held still", style="dim")
            text.append(f"; {len(one.discounted)} run(s) discounted\n", style="dim")
        elif one.machine_seen and one.not_searched is None:  # a series too short (or what bounds a step): none looked for
            text.append(f"    changes looked for in the runs{_where(one)} whose machine held still", style="dim")
            text.append(f"; {len(one.discounted)} run(s) discounted\n" if one.discounted else "\n", style="dim")
        # named as a change is (model.run_named): its label, else its revision where that tells it from its
        # neighbours, else its run ('run 7 (4877da9…)'): runs without labels of one revision read alike
        named = {point.run: model.run_named(one.points, index) for index, point in enumerate(one.points)}
        for left_out, why in _discounted_lines(one.discounted):
            which = [named.get(run, f"run {run}") for run in left_out]
            if len(which) > 1:  # runs in other pools: one line for them all (a pool change leaves many behind it)
                shown = ", ".join(which[:POOL_RUNS_NAMED]) + (", …" if len(which) > POOL_RUNS_NAMED else "")
                which = [f"{len(which)} runs ({shown})"]
            text.append(f"    discounted {visible(which[0])}: {visible(why)}\n", style="dim")
    machines = {s.machine: s.machine_info for s in found}
    for name, info in machines.items():
        gpus = f", {', '.join(info.get('gpus') or [])}" if info.get("gpus") else ""
        said = f"{name}: {info.get('cpu')}, {info.get('cores')} cores{gpus}, {info.get('framework')}"
        text.append(f"{visible(said)}\n", style="dim")
    console.print(text, end="", soft_wrap=True, highlight=False)
