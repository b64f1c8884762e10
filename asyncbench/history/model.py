"""What the history holds, as a reader sees it: series of points, per machine, with their change points; the latest run.

The read models history.reading returns and the report shows: the report
layer reads these, never the store.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any, NamedTuple, Sequence

# What marks a paired-ratio series (an `ab` file recorded): its quantities are `ab:` + the compared name, in unit x
# (history.changes holds such series to a change floor of their own).
PAIRED_PREFIX = "ab:"
PAIRED_UNIT = "x"
# The fewest runs a series is searched in: Otava's test finds a clear step (24-30 ms, then 45 ms) with three runs
# on each side of it, not with two after it (24, 27, 30, 45, 45: none at p < 0.001). Below this it still splits a
# series of two tight pairs (16.7, 16.7, 33.8, 33.8 ms: p 1e-8), but says a step from two runs a side, too few for
# its ratio's interval ([?]) or for the drift between runs to show (changes.MIN_MAGNITUDE): one slow hour reads as
# a change.
# So a shorter series is too short to tell (docs/guides/history.md), and `history` says so.
MIN_RUNS = 6
# The fewest runs a change point may have on each side of it (history.changes keeps no other): Otava's split, as
# shipped (0.8.0), takes no smallest segment (Matteson and James's e.divisive, in R's ecp, takes min.size, 30 by
# default; Otava's compute_change_points has no such argument, so none is passed) and splits off a single run:
# one `ab` run at 2.75x with no interval, then ten at 1.00x, read as a change "at" the second run (x0.365 [?], p
# 1.5e-12), from one run. Three is the guide's "a step shows once three runs lie on each side of it" (the clear
# step above is found with three a side), and MIN_RUNS is twice it: one or two runs on a side say one slow hour,
# not a step, and a ratio from one run has a 95% interval only against 39 runs or more, from two only against 8 or
# more (verdicts.compare), so such a change was told as [?].
MIN_SIDE_RUNS = 3
#: why a series was not searched for changes (Series.not_searched): what bounds a step (drawn, never searched); too
#: few runs recorded; runs enough, but too few left once the runs on a moved machine were discounted
BOUND, TOO_SHORT, UNSTEADY = "bound", "too_short", "unsteady"
#: the quantities a case records for its machine (history.recorded.quantities, read by history.discount), variant ""
MACHINE_QUANTITY = "machine_s"
PRESSURE_QUANTITY = "cpu_pressure"
#: how a run discounted beside a neighbour (history.discount) ends its why: what tells such runs from those on a
#: machine that moved (report.history counts them, to say a neighbour is why a series could not be searched)
BESIDE_NEIGHBOUR = ": a neighbour shared the cores"
#: how a run discounted for its CPU thread pools (history.discount) ends its why: the machine's reference ran in the
#: case's pools, so a run in other pools than the newest run's reads no machine the newest can be judged against
#: (report.history says such runs in one line a series)
OTHER_POOLS = " from the newest run's: the machine's reference ran in the case's pools, so its speed there is not the machine's"
#: the unit a share of the time (PRESSURE_QUANTITY, recorded as a fraction with no unit) is shown in: units.quantity
#: reads a "%" figure as a fraction and prints its percentage
SHARE_SHOWN = "%"


# What bounds a step (`run --bound`), recorded per variant (history.recorded) as three series of its own: each
# side's slack per step (s, with its interval) and the reading, as a code (a point's figure is a number; its word is
# BOUND_READINGS[code]). The page draws the three as one chart per variant (report.trends); no change points are
# looked for in them (a slack near 0 has no ratio to speak of, and a reading is a word).
BOUND_PREFIX = "bound:"
BOUND_SLACKS = {"host": "bound:host_slack_s", "device": "bound:device_slack_s"}
BOUND_READING = "bound:reading"
#: the unit of BOUND_READING's points: a code, not an amount
READING_UNIT = "reading"
#: the readings a point may hold, by code (results.bound.BoundKind's words; a synchronous step records no bound)
BOUND_READINGS = ("host", "device", "balanced", "inconclusive")
#: what a code outside BOUND_READINGS is shown as (a store written by another hand)
UNKNOWN_READING = "?"


def beside_neighbour(why: str) -> bool:
    """Whether a run was discounted (Series.discounted's why) because a neighbour shared its cores."""
    return why.endswith(BESIDE_NEIGHBOUR)


def in_other_pools(why: str) -> bool:
    """Whether a run was discounted (Series.discounted's why) because its CPU thread pools differ from the newest run's."""
    return why.endswith(OTHER_POOLS)


def is_bound(quantity: str) -> bool:
    """Whether a series holds what bounds a step (a side's slack, or the reading)."""
    return quantity.startswith(BOUND_PREFIX)


def reading_word(code: float) -> str:
    """The word of a stored reading's code (UNKNOWN_READING for any other figure)."""
    return BOUND_READINGS[int(code)] if code in range(len(BOUND_READINGS)) else UNKNOWN_READING


def shown_unit(quantity: str, unit: str) -> str:
    """The unit a quantity's figures are shown to a person in: SHARE_SHOWN for the CPU pressure beside a case (a share
    of the time, 0-1, stored and written to JSON as that fraction: 0.000125 reads '0.0125%', not '0.000125'), else
    the unit it is recorded in."""
    return SHARE_SHOWN if quantity == PRESSURE_QUANTITY and unit == "" else unit


def is_paired(quantity: str, unit: str) -> bool:
    """Whether a series of this quantity holds the paired ratios head/base of recorded `ab` files."""
    return quantity.startswith(PAIRED_PREFIX) and unit == PAIRED_UNIT


class Point(NamedTuple):
    """One run's value of a quantity: the median with its 95% interval (None: too few rounds for one).

    A named tuple, not a frozen dataclass: a page of the history reads hundreds of thousands of them, and a
    frozen dataclass takes several times as long to make."""

    run: int  # the run's number in the store
    created: str
    label: str | None
    revision: str | None
    value: float
    low: float | None
    high: float | None
    #: when the run counts as made (history.clock.ordered_at: its creation, no later than its recording), what the
    #: latest run is chosen by; None where not read (a store's row written before schema 3 holds none)
    ordered_at: str | None = None

    def created_utc(self) -> str:
        """Its creation in UTC to the second, as its own clock said it ('2999-01-01T00:00:00')."""
        from asyncbench.history import clock

        return clock.utc(self.created).isoformat(timespec="seconds")[:19]

    def clock_ahead(self) -> bool:
        """Whether its creation lay after its recording (its machine's clock ahead): it is ordered by its recording."""
        from asyncbench.history import clock

        return self.ordered_at is not None and clock.utc(self.created).isoformat(timespec="microseconds") > self.ordered_at


@dataclass(frozen=True)
class ChangePoint:
    """Where a series shifted: `run` and `at` (its label, else its revision) are those of the first point after it.

    `ratio` is the median after over the median before (> 1: the quantity grew; for a time, slower), with the
    95% interval of that ratio from the two segments (None: a segment has too few points for one); `p_value`
    is the significance test's."""

    run: int
    at: str
    before: float
    after: float
    ratio: float
    ratio_low: float | None
    ratio_high: float | None
    p_value: float
    #: where it lies at the run its machine moved (history.at_move): the machine's reference's ratio across the same
    #: two sides, with its interval; the change's interval then carries it (its figures as measured), as `compare`'s
    #: does. None elsewhere
    machine_ratio: float | None = None
    machine_low: float | None = None
    machine_high: float | None = None
    #: whether its figures (before, after, their ratio) are of the times scaled to the machine's usual speed, the
    #: ones searched (history.discount), not as measured
    scaled: bool = False

    @property
    def at_move(self) -> bool:
        """Whether it lies at the run its machine moved, its interval carrying the machine's change."""
        return self.machine_ratio is not None


#: a change point's fields set as it is read (history.at_move), never stored: the store's changes table holds the others
READ_FIELDS = ("machine_ratio", "machine_low", "machine_high", "scaled")


@dataclass(frozen=True)
class Series:
    """One quantity of one case's variant on one machine: its newest points in run order (`runs` in all), and every
    change point found in it."""

    case: str
    variant: str  # "" for a metric of the case
    quantity: str  # done_s, issue_s, device_s, or a metric's name
    unit: str
    machine: str
    machine_info: dict[str, Any]
    points: tuple[Point, ...]
    change_points: tuple[ChangePoint, ...] = ()
    runs: int = 0
    #: runs of the shown points left out of the change-point search, each with why (history.discount): a neighbour
    #: in that run only, or a machine that moved
    discounted: tuple[tuple[int, str], ...] = ()
    #: whether its change points were looked for with the machine seen (every point has a reference)
    machine_seen: bool = False
    #: whether the runs searched were scaled to the machine's usual speed (history.discount): its changes' figures are
    #: then those scaled times, not the points as measured (ChangePoint.scaled says it of each)
    scaled: bool = False

    def to_dict(self) -> dict[str, Any]:
        """Its fields, and whether its change points were looked for (`searched`) and, where not, why
        (`not_searched`: TOO_SHORT, UNSTEADY, BOUND) with the runs left to search (`runs_left`: the points read less
        those discounted, where the machine is seen)."""
        left = len(self.points) - len(self.discounted) if self.machine_seen else None
        return {
            **asdict(self),
            "points": [point._asdict() for point in self.points],
            "searched": self.not_searched is None,
            "not_searched": self.not_searched,
            "runs_left": left,
        }

    @property
    def not_searched(self) -> str | None:
        """Why its change points were not looked for (None: they were): BOUND (what bounds a step is drawn, never
        searched), TOO_SHORT (fewer than MIN_RUNS runs recorded: a young series), UNSTEADY (runs enough, but fewer
        than MIN_RUNS of those read left once the runs on a moved machine were discounted)."""
        if is_bound(self.quantity):
            return BOUND
        if self.runs < MIN_RUNS:
            return TOO_SHORT
        return UNSTEADY if self.unsteady else None

    @property
    def unsteady(self) -> bool:
        """Whether enough runs were recorded to look for a change (MIN_RUNS), and read (a `--last` shorter than that
        says nothing of it), but fewer than MIN_RUNS of them are left once those on a moved machine are discounted
        (history.discount): the search needs as many runs as a series does, so it was not made, and the series
        cannot tell a change from none."""
        read = len(self.points)
        return self.machine_seen and self.runs >= MIN_RUNS and read >= MIN_RUNS and read - len(self.discounted) < MIN_RUNS

    @property
    def pools_moved(self) -> bool:
        """Whether runs were discounted for their CPU thread pools (in_other_pools): those of a CPU case made in
        other pools than the newest run's, whose reference is not the machine the newest ran on (history.discount)."""
        return any(in_other_pools(why) for _, why in self.discounted)

    @property
    def paired(self) -> bool:
        """Whether it holds the paired ratios head/base of recorded `ab` files (> 1: slower)."""
        return is_paired(self.quantity, self.unit)

    @property
    def shown_unit(self) -> str:
        """The unit its figures are shown to a person in (shown_unit: the CPU pressure as a percentage)."""
        return shown_unit(self.quantity, self.unit)

    @property
    def of_machine(self) -> bool:
        """Whether it is the machine beside its case (its reference time or CPU pressure), not the case's own."""
        return self.quantity in (MACHINE_QUANTITY, PRESSURE_QUANTITY) and not self.variant

    def told_from_zero(self, change: ChangePoint) -> bool:
        """Whether the figures around `change` can be told from 0, so that a ratio of them says something: False
        where every run searched from the change before it to the change after it (those discounted left out) has a
        95% interval that holds 0 (a per-step time of 4 ns in [−39, +63] ns: ×1.3 of two such figures says nothing
        of a slowdown). True where any of them has no interval, or one clear of 0, or where the change lies beyond
        the runs read (nothing to tell it by)."""
        left_out = {run for run, _ in self.discounted}
        searched = [point for point in self.points if point.run not in left_out]
        runs = [point.run for point in searched]
        if change.run not in runs:
            return True
        at = runs.index(change.run)
        earlier = [other.run for other in self.change_points if other.run < change.run and other.run in runs]
        later = [other.run for other in self.change_points if other.run > change.run and other.run in runs]
        start = runs.index(earlier[-1]) if earlier else 0
        end = runs.index(later[0]) if later else len(runs)
        around = searched[start:end]
        if at == start or not around:
            return True
        return not all(point.low is not None and point.high is not None and point.low <= 0 <= point.high for point in around)

    @property
    def judged_changes(self) -> tuple[ChangePoint, ...]:
        """Its change points whose figures can be told from 0 (told_from_zero): the ones a reader and the gate judge;
        the others are said once, as figures that cannot be told from 0, never as a slowdown."""
        return tuple(change for change in self.change_points if self.told_from_zero(change))

    def slower_by(self, change: ChangePoint) -> float | None:
        """How many times slower `change` made this series, by the ratio's whole interval where there is one (the end
        nearest 1; > 1: slower beyond doubt): a time, or a paired ratio head/base (> 1 slower), that grew, or a rate,
        `/s`, that fell. None for a quantity that does not say which way is slower."""
        rate = self.unit.endswith("/s")
        if not (rate or self.unit == "s" or self.paired):
            return None  # only times, paired ratios and rates say which way is slower
        low, high = change.ratio_low, change.ratio_high
        return (1 / (high if high else change.ratio)) if rate else (low if low else change.ratio)

    def slower_at_most(self, change: ChangePoint) -> float | None:
        """How many times slower `change` may have made this series, by the far end of the ratio's interval (the
        end furthest along slower: slower_by's other end). None where it has no interval, or for a quantity that does
        not say which way is slower."""
        if self.slower_by(change) is None or change.ratio_low is None or change.ratio_high is None:
            return None
        return 1 / change.ratio_low if self.unit.endswith("/s") else change.ratio_high


@dataclass(frozen=True)
class LatestCase:
    """A case of the latest run as the report shows it: status, checks, traces, and (variant, quantity, unit, value,
    low, high) per recorded quantity."""

    case: str
    machine: str
    status: str
    reason: str | None
    checks: tuple[dict[str, Any], ...]
    traces: dict[str, str]
    quantities: list[tuple[str, str, str, float, float | None, float | None]]


@dataclass(frozen=True)
class LatestRun:
    """The run the history counts as made last (history.clock: no run whose clock was ahead is made later than it
    was recorded), with its cases; `kind` "run" or "ab" (history.tables), `clock_ahead` where its file says it
    was made after it was recorded."""

    run: int
    created: str
    label: str | None
    revision: str | None
    branch: str | None
    host: str | None
    cases: tuple[LatestCase, ...]
    kind: str = "run"
    clock_ahead: bool = False


class RecentRun(NamedTuple):
    """One of the newest runs, as the page lists them: `kind` "run" or "ab" (history.tables: an `ab` run's points
    are paired ratios head/base), `clock_ahead` where its file says it was made after it was recorded."""

    id: int
    created: str
    label: str | None
    revision: str | None
    branch: str | None
    host: str | None
    version: str | None
    kind: str = "run"
    clock_ahead: bool = False


@dataclass(frozen=True)
class Regression:
    """A series whose newest run lies in a segment `change` started, slower by `slower` times (by the ratio's whole
    interval), `runs_ago` runs of the series after the one that starts it (0: the newest).

    `inconclusive`: the ratio has no interval (too few runs on a side), so `slower` is only its point ratio, which
    says it went slower but not by how much: not judged against the margin. `runs_short`: for such a one, how many
    more runs like those before would give it an interval (None: not known from the runs read).

    `change` None: no change to judge, because the series is unsteady (Series.unsteady: too few of its runs left
    once those on a moved machine were discounted), which is inconclusive too.

    `straddles`: inconclusive for another cause: the ratio has an interval, and it straddles the margin (its end
    nearest 1 within it, its far end beyond: `slower` is that near end), as `ab`'s and `compare`'s INCONCLUSIVE."""

    series: Series
    change: ChangePoint | None
    slower: float
    runs_ago: int
    inconclusive: bool = False
    runs_short: int | None = None
    straddles: bool = False


#: how many hex digits of a revision name a change's run beside its number (as `git log --oneline` shortens one)
SHORT_REVISION = 7


def run_named(points: Sequence[Point], index: int) -> str:
    """What a change at `points[index]` is called: its run's label; its revision where that tells the run apart from
    its neighbours; else its run ('run 7 (4877da9…)'): a store recorded without labels named a change by the revision
    all its twelve runs shared, which says nothing of where it lies."""
    first = points[index]
    if first.label:
        return first.label
    neighbours = [*points[max(index - 1, 0) : index], *points[index + 1 : index + 2]]
    if first.revision and all(point.revision != first.revision for point in neighbours):
        return first.revision
    return f"run {first.run}" + (f" ({first.revision[:SHORT_REVISION]}…)" if first.revision else "")
