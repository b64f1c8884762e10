"""The history's gate (`history --fail-on-regression`): the series that are in a slowdown that is still new.

A series fails while its newest run lies in the segment a regression started: its last change point made it slower
by more than the margin (Series.slower_by: by the ratio's whole interval), and that change began among the series'
newest `within` runs. It does not wait for the newest run to be the one that starts the change: a step is found
only once a few runs lie on each side of it (history.model.MIN_RUNS), so by the time it is seen it started some runs
ago, and a gate that asked for the newest run to start it never failed on such a step, and a job run again after a
failure passed. Each further run of the slow segment fails the gate again, until the change is `within` runs old:
a slowdown older than that is no longer new, and passes unless a newer change is itself a regression.

Every verdict comes from an interval, never a point estimate: a slower change whose ratio has no interval (`[?]`:
too few runs on a side, docs/guides/history.md gives the rule) is INCONCLUSIVE, not judged against the margin, and
fails the gate unless it is allowed (`--allow-inconclusive`, as `ab` and `compare` allow theirs). So is a change
whose interval straddles the margin (×1.295 [1.29–1.30] at a 29.3% margin): it is neither shown beyond the margin nor
within it, which `ab` and `compare` call INCONCLUSIVE too; the gate once passed it in silence. A change in a
series of the machine (its reference time or CPU pressure: Series.of_machine) measures the runner, not the code:
it is found and told, as a note, and never fails the gate (the runs it moved are discounted in the case's series).

A series with runs enough to search but too few left once those on a moved machine are discounted (Series.unsteady)
was not searched, so the gate cannot say it did not get slower: it is INCONCLUSIVE ("the machine was too unsteady to
tell"), and fails the gate unless it is allowed. A young series (fewer runs recorded than a search needs) passes, as
before: a gate starts to guard a series after its first few runs, and says so in the history guide. Failing it instead
would fail every new series' first five runs (a fresh history, a benchmark a pull request adds) with nothing wrong to
say, where an unsteady series had its runs and lost them to the machine. It is not passed in silence: the gate says
how many series it could not judge yet and why, in one line (too_short).

A change at the run its machine moved (history.at_move) is judged on its interval with the machine's change carried,
as `compare` judges a row: it fails only where even that interval lies wholly past the margin, and one that straddles
the margin is INCONCLUSIVE (a change of the code at the machine's move cannot be told from the machine's within it:
a user's ×1.5 at a machine's ×1.2, both from run 7, failed as ×1.25 [1.24–1.26] of the scaled times). A change away
from the move is judged on the times searched, as before.

A change whose figures cannot be told from 0 (every run around it has a 95% interval that holds 0:
Series.told_from_zero) is no regression: a ratio of two figures that may each be nothing says nothing of a slowdown
(a 4 ns per-step time in [−39, +63] ns once failed the gate at ×1.3). `history` says so of its series in plain words.
"""

from __future__ import annotations

from typing import Iterable

from asyncbench.history import at_move, changes, model
from asyncbench.history.model import ChangePoint, Regression, Series

# How many of a series' newest runs a regression may have started in and still fail the gate (`--within N`). A
# change is found a few runs after it starts (about three a side: history.model.MIN_RUNS), later on a noisy runner (a
# 2x step on the 2-core machine, 4 clean runs then 4 slow, was first found at the 8th: 3 runs after it started), so
# the window must reach several runs past that. A slowdown older than this is no longer "new": a team that accepts an
# intentional slowdown waits this many runs, or records a new series (`ab` ratios against a new base are one),
# rather than keep the gate failing for ever.
WITHIN_RUNS = 10


def regressions(found: Iterable[Series], margin: float, within: int = WITHIN_RUNS) -> list[Regression]:
    """The series of `found` whose last change point is a regression beyond `margin` (relative: 0.1 is 10% slower)
    that started among the series' newest `within` points (its points must reach that far back: a change older than
    the points read is not new); and, as inconclusive without a change, each series of the code that is unsteady
    (Series.unsteady: runs enough to search, too few left once those on a moved machine were discounted), where its
    change points do not already make it one: the search was not made, so "no change" is not known."""
    hits = []
    for one in found:
        hit = _judged(one, margin, within)
        if hit is not None:
            hits.append(hit)
        elif one.unsteady and not one.of_machine:  # runs enough, too few left to search: it cannot tell
            hits.append(Regression(one, None, 1.0, 0, inconclusive=True))
    return hits


def too_short(found: Iterable[Series]) -> list[Series]:
    """The series of the code in `found` that the gate could not judge because they are young: fewer runs recorded
    than a search needs (Series.not_searched TOO_SHORT, history.model.MIN_RUNS). They pass (the module's rule), but
    are counted aloud, so that a gate that judged nothing does not read as one that found nothing."""
    return [one for one in found if not one.of_machine and one.not_searched == model.TOO_SHORT]


def judged_nothing(found: Iterable[Series]) -> bool:
    """Whether every series of the code in `found` the gate could judge is young (too_short; what bounds a step is
    never judged): it passes, having judged nothing, and says so (report.history.too_short_line)."""
    code = [one for one in found if not one.of_machine and not model.is_bound(one.quantity)]
    return bool(code) and all(one.not_searched == model.TOO_SHORT for one in code)


def _judged(one: Series, margin: float, within: int) -> Regression | None:
    """What the gate makes of `one`'s last change point (regressions' rule), or None where it is no regression."""
    if not one.change_points or not one.points:
        return None
    change = one.change_points[-1]  # the one whose segment holds the newest run
    runs = [point.run for point in one.points]
    if change.run not in runs:
        return None  # older than the points read
    runs_ago = len(runs) - 1 - runs.index(change.run)
    if runs_ago >= within or not one.told_from_zero(change):  # figures that cannot be told from 0: a ratio says nothing
        return None
    slower = one.slower_by(change)  # without an interval: the point ratio, which only says which way it went
    if slower is None:
        return None
    if change.ratio_low is None or change.ratio_high is None:
        if slower > 1:  # slower by its point ratio, by how much it cannot tell: not judged against the margin
            return Regression(one, change, slower, runs_ago, inconclusive=True, runs_short=runs_short(one, change))
    elif slower > 1 + margin:
        return Regression(one, change, slower, runs_ago)
    elif (furthest := one.slower_at_most(change)) is not None and furthest > 1 + margin:
        return Regression(one, change, slower, runs_ago, inconclusive=True, straddles=True)
    return None


def failing(hits: Iterable[Regression], allow_inconclusive: bool = False) -> list[Regression]:
    """The hits of `regressions` that fail the gate: a regression beyond the margin by its whole interval, and an
    inconclusive one unless `allow_inconclusive`; never one in a series of the machine (the runner, not the code)."""
    return [hit for hit in hits if not hit.series.of_machine and not (hit.inconclusive and allow_inconclusive)]


def runs_short(one: Series, change: ChangePoint) -> int | None:
    """How many more runs after `change` would give its ratio an interval, by the exact rule (C(m + n, m) ≥ 40 for
    sides of m and n runs: verdicts.ratio.samples_needed), if they are like those before (none discounted, no newer
    change). None where it cannot be told from what was read: the side before the change reaches further back than
    the points read, or the rule says the sides are already enough (their runs drift together and count as fewer)."""
    from asyncbench.verdicts import ratio

    left_out = {run for run, _ in one.discounted}
    runs = [point.run for point in one.points if point.run not in left_out]  # the runs searched for changes
    if change.run not in runs:
        return None
    at = runs.index(change.run)
    earlier = [other.run for other in one.change_points if other.run < change.run]
    if earlier and earlier[-1] in runs:
        start = runs.index(earlier[-1])  # the side before starts at the change before
    elif not earlier and len(one.points) >= one.runs:
        start = 0  # every run of the series was read
    else:
        return None
    # a change at its machine's move is told from two intervals, each at half its error (history.at_move)
    confidence = at_move.level() if change.at_move else changes.CONFIDENCE
    needed = ratio.samples_needed(at - start, confidence) if at > start else None
    after = len(runs) - at
    return needed - after if needed is not None and needed > after else None
