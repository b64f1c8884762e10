"""What the history holds, as a reader sees it: series of points, per machine, with their change points; the latest run.

The read models history.reading returns and the report shows: the report
layer reads these, never the store.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any, NamedTuple


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

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "points": [point._asdict() for point in self.points]}


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
    run: int
    created: str
    label: str | None
    revision: str | None
    branch: str | None
    host: str | None
    cases: tuple[LatestCase, ...]
