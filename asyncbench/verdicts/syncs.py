"""What a census says of one part of a step (the whole step, one kind of wait, one line): per round, a median, an
interval.

The census (results.syncs, `run --syncs`) keeps each sync point's waits and seconds per census round; a part of
the step is a sum over the points it selects, round by round, and its median and interval come from those sums as
any other interval of the tool does (results.stats.median_ci). `expect:` checks on the census (verdicts.checks)
and the table of where a step waited (report.syncs) both read them from here, so a check's value is the figure the
table shows beside it.

A part is named as a check names it (spec.expect): a kind ("print", "explicit wait"), or FILE:LINE, where FILE
matches the stored file or any tail of its path that starts at a folder ("train.py:42", "src/train.py:42").
"""

from __future__ import annotations

import re
import statistics
from dataclasses import dataclass
from typing import Callable, Hashable, Mapping, Sequence

from asyncbench.results import stats
from asyncbench.results.syncs import STEP_SYNC_KINDS, SYNC_KINDS, Census, SyncKind, SyncPoint

#: the census's quantities a check may name: waits per step (a count) and seconds blocked per step
SYNCS_PER_STEP = "syncs_per_step"
SYNC_WAIT_S = "sync_wait_s"
SYNC_QUANTITIES = (SYNCS_PER_STEP, SYNC_WAIT_S)
#: each quantity's unit, as results.units formats it
SYNC_UNITS = {SYNCS_PER_STEP: "", SYNC_WAIT_S: "s"}

_LINE = re.compile(r"(?P<file>.+):(?P<line>\d+)")


def kind_named(text: str) -> SyncKind | None:
    """The kind a word names ('print', 'explicit wait' or 'explicit_wait'), or None."""
    wanted = " ".join(text.replace("_", " ").split()).lower()
    return next((kind for kind in SYNC_KINDS if kind.value == wanted), None)


def line_named(text: str) -> tuple[str, int] | None:
    """(file, line) of a 'FILE:LINE', or None."""
    match = _LINE.fullmatch(text.strip())
    return (match["file"].strip(), int(match["line"])) if match else None


def selects(part: str | None, point: SyncPoint) -> bool:
    """Whether the part of a step named `part` (None: the whole step, its own syncs, not backpressure; a kind;
    FILE:LINE) holds `point`."""
    if part is None:
        return point.kind in STEP_SYNC_KINDS
    line = line_named(part)
    if line is not None:
        file, number = line
        stored = point.file.replace("\\", "/")
        return point.line == number and (stored == file or stored.endswith("/" + file.lstrip("./")))
    return point.kind == kind_named(part)


@dataclass(frozen=True)
class Figure:
    """One quantity of one part of a step: its median per step, its interval (None: too few rounds), its rounds."""

    value: float
    interval: tuple[float, float] | None
    rounds: int
    points: tuple[SyncPoint, ...]  # the points it sums, largest time blocked first


def per_round(census: Census, quantity: str, part: str | None = None) -> tuple[float, ...]:
    """Per census round, the quantity summed over the points `part` selects (0 in a round where none waited)."""
    totals = [0.0] * census.rounds
    for point in census.points:
        if not selects(part, point):
            continue
        values: Sequence[float] = point.calls_rounds if quantity == SYNCS_PER_STEP else point.wait_s_rounds
        for index, value in enumerate(values[: census.rounds]):
            totals[index] += value
    return tuple(totals)


def figure(census: Census, quantity: str, part: str | None = None, confidence: float = stats.CONFIDENCE) -> Figure | None:
    """The median per step of `quantity` over the points `part` selects, with its interval at `confidence` from the
    census rounds (rounds are independent: each a step of its own, far apart); None where no round was taken."""
    if census.rounds == 0:
        return None
    values = per_round(census, quantity, part)
    chosen = tuple(point for point in census.points if selects(part, point))
    return Figure(statistics.median(values), stats.median_ci(values, confidence, independent=True), census.rounds, chosen)


def new_on_head(
    base: Mapping[str, Census],
    head: Mapping[str, Census],
    base_key: Callable[[SyncPoint], Hashable],
    head_key: Callable[[SyncPoint], Hashable],
) -> tuple[tuple[str, SyncPoint], ...]:
    """(variant, point) for each of head's points that base's census of that variant lacks (of any variant, where base
    has no census of it), the points compared by their keys (`ab --syncs`: each side's file relative to its own tree,
    the kind, the call and the line's source, so that a line moved by an edit above it is not new)."""
    anywhere = {base_key(point) for census in base.values() for point in census.points}
    found: list[tuple[str, SyncPoint]] = []
    for variant, census in head.items():
        known = {base_key(point) for point in base[variant].points} if variant in base else anywhere
        found.extend((variant, point) for point in census.points if head_key(point) not in known)
    return tuple(found)
