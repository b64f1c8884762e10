"""The history's gate (`history --fail-on-regression`): the series that are in a slowdown that is still new.

A series fails while its newest run lies in the segment a regression started: its last change point made it slower
by more than the margin (Series.slower_by: by the ratio's whole interval), and that change began among the series'
newest `within` runs. It does not wait for the newest run to be the one that starts the change: a step is found
only once a few runs lie on each side of it (history.model.MIN_RUNS), so by the time it is seen it started some runs
ago, and a gate that asked for the newest run to start it never failed on such a step, and a job run again after a
failure passed. Each further run of the slow segment fails the gate again, until the change is `within` runs old:
a slowdown older than that is no longer new, and passes unless a newer change is itself a regression.
"""

from __future__ import annotations

from typing import Iterable

from asyncbench.history.model import Regression, Series

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
    the points read is not new)."""
    hits = []
    for one in found:
        if not one.change_points or not one.points:
            continue
        change = one.change_points[-1]  # the one whose segment holds the newest run
        runs = [point.run for point in one.points]
        if change.run not in runs:
            continue  # older than the points read
        runs_ago = len(runs) - 1 - runs.index(change.run)
        if runs_ago >= within:
            continue
        slower = one.slower_by(change)
        if slower is not None and slower > 1 + margin:
            hits.append(Regression(one, change, slower, runs_ago))
    return hits
