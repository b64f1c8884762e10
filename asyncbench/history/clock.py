"""When a run counts as made, for ordering the history: its creation time, but never later than it was recorded.

A results file says when it was made (`created`), by its machine's clock. A
machine whose clock is wrong writes a time in the future, and the run made
there would be the history's "latest run" until the calendar caught up,
whatever was recorded since. Its measurements are still data (CI artifacts
from a runner with a bad clock are worth keeping), so the run is recorded
with what its file says, and ordered by `ordered_at`: its creation time in
UTC or, where that is after the moment it was recorded, that moment. The
page says of such a run that its clock was ahead. A time without an offset
is read as UTC (asyncbench writes every time with its offset).
"""

from __future__ import annotations

import datetime


def utc(text: str) -> datetime.datetime:
    """An ISO 8601 time (as results.recordable admits one) in UTC; a time without an offset is taken as UTC."""
    moment = datetime.datetime.fromisoformat(text)
    if moment.tzinfo is None:
        return moment.replace(tzinfo=datetime.timezone.utc)
    return moment.astimezone(datetime.timezone.utc)


def ordered_at(created: str, recorded: str) -> str:
    """The time a run is ordered by: its creation, no later than its recording (both ISO 8601), in one text form for
    every run (UTC, to the microsecond: fixed width, so that text order is time order)."""
    return min(utc(created), utc(recorded)).isoformat(timespec="microseconds")


def ahead(created: str, recorded: str) -> bool:
    """Whether a run says it was made after it was recorded: the clock of the machine that made it was ahead."""
    return utc(created) > utc(recorded)
