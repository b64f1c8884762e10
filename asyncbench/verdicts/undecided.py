"""Why a comparison's INCONCLUSIVE rows are INCONCLUSIVE, and what may decide them, in the words that `run
--baseline`'s exit reason and `compare`'s summary share.

A row of two separate runs gives no verdict for one of five causes (verdicts.compare, verdicts.machine), each with
its own remedy: its interval reaches across 1 + margin or there is none, which more rounds narrow; a neighbour the OS
saw in either run, whose effect on the case is unknown and which no number of rounds removes; a machine that moved
beyond what was measured between the runs, or whose speed could not be pinned; a file of schema 10 or later that
lacks the case's reference, which no rounds of the current run replace; or a machine whose change, carried
in the interval (verdicts.machine: the case may feel it from not at all to twice), reaches across 1 + margin by
itself, which more rounds of the case do not narrow (a trial's unchanged code, the machine 1.15× slower in one run:
[−4.8% … +58.5%], its upper end at least +28% however many rounds). The exit reason once said
"more rounds via max_time_s may decide it" of rows whose own lines said a neighbour shared the cores: a remedy that
cannot work. `ab` pairs both sides in one run, so its rows have the first cause only (verdicts.paired quotes it).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import TYPE_CHECKING, Sequence

if TYPE_CHECKING:
    from asyncbench.verdicts.compare import VariantComparison


@dataclass(frozen=True)
class Cause:
    """One cause of an INCONCLUSIVE row: what it is, and what may decide the row."""

    why: str
    remedy: str


INTERVAL = Cause("the interval reaches across 1 + margin, or there is none", "more rounds via max_time_s may decide it")
NEIGHBOUR = Cause(
    "a neighbour shared the cores in either run",
    "more rounds cannot decide it: runs on a quiet machine may, or `asyncbench ab`, which pairs both sides in one run",
)
CARRIED = Cause(
    "the machine's change between the runs, carried in the interval, reaches across 1 + margin by itself",
    "more rounds cannot decide it: runs on a steadier machine may, or `asyncbench ab`, which pairs both sides in one run",
)
MACHINE = Cause(
    "the machine's speed moved beyond what was measured between the runs, or could not be pinned",
    "runs on a steadier machine may decide it, or `asyncbench ab`, which pairs both sides in one run",
)

MISSING = Cause(
    "a file of schema 10 or later lacks the case's machine reference, so the machine's change is unknown",
    "more rounds cannot decide it: a baseline measured again, with its reference, may, or `asyncbench ab`, which pairs "
    "both sides in one run",
)


def cause(row: VariantComparison) -> Cause:
    """Why one INCONCLUSIVE row is one: a neighbour, a missing reference, the machine, else its interval."""
    if row.machine_neighbour:
        return NEIGHBOUR
    if row.machine_missing:
        return MISSING
    if row.machine_moved:
        return MACHINE
    if row.machine_carried:
        return CARRIED
    return INTERVAL


def reason(rows: Sequence[VariantComparison]) -> str:
    """'a neighbour shared the cores in either run; more rounds cannot decide it: ...' where every row has one cause;
    else each cause with its count: '2 where a neighbour ...: more rounds cannot ...; 1 where the interval ...'."""
    causes = Counter(cause(row) for row in rows)
    if len(causes) == 1:
        (only,) = causes
        return f"{only.why}; {only.remedy}"
    return "; ".join(f"{n} where {each.why}: {each.remedy}" for each, n in causes.items())
