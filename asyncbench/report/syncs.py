"""Where a case's step waited (`run --syncs`): the census as the view model shows it, under the case's timings.

A table per case, one row per sync point: its variant, file:line, kind, the call there, times per step (waits, or
for a `queue full` row the times the queue was full, which are not waits), time
blocked per step with its 95% interval (as the timings table writes a time: spreads.spread, never a negative time;
'~0 [≤ x]' where the interval reaches 0), and the queued work the wait drained where the backend exposes it (the
column only when some point has it). Within a variant the points come as the census sorted them, most time blocked
first. Above the rows, a line per variant with its whole step (waits and time blocked per step over every point,
from the census rounds' sums: verdicts.syncs, the figures a check on the step reads); a variant without points
says so in that line, with what could see (its coverage). A case where nothing waited is one line, no table.

Paths are shown relative to the current folder where they are under it (the stored file is absolute), else to the
folder a package's module is imported from (a built-in workload: asyncbench/workloads/conversion.py), else as
stored. Every writer (terminal, markdown, HTML) lays out the same CensusView.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Mapping, Sequence

from asyncbench.results import spreads, units
from asyncbench.results.syncs import Census, SyncKind, SyncPoint
from asyncbench.verdicts import syncs

TITLE = "where the step waited"
#: what a time blocked is, and is not, said under every report that shows a census (view.legend): a reader took
#: 2.42 ms blocked at a `float(loss)` for what removing it saves, and the step got 0.75 ms faster without it
BLOCKED_NOTE = (
    "blocked/step: the time per step the host thread waited at that line for device work already queued, not what "
    "removing the wait saves (that work still has to run; only the host's work that can then overlap it is saved): "
    "the saving is the step timed without the wait, as a step form's slowdown_k1 times a wait every step against none "
    "(in a step that does not already wait), or `asyncbench ab` of your code without the line"
)
#: "times/step", not "waits/step": a `queue full` row's count is of points where the queue was full, which are not
#: waits (the whole step leaves them out: results.syncs.STEP_SYNC_KINDS), and a user read its 0.7 as waits
HEADERS = ("variant", "file:line", "kind", "call", "times/step", "blocked/step")
DRAINED = "drained/step"
#: which columns hold figures (right-aligned), in HEADERS order, then DRAINED's
FIGURES = (False, False, False, False, True, True)
#: the columns never wrapped: the variant, file:line (a path cut in two is not found by an editor), the kind, the
#: figures; the call wraps (at its arrow: "jax.numpy.nonzero → jax.Array._value")
NO_WRAP = (True, True, True, False, True, True)


@dataclass(frozen=True)
class CensusView:
    """One case's census: the line per variant, the table's rows (empty: nothing waited), notes."""

    title: str  # 'where the step waited (n=100 jax cpu)'
    headers: tuple[str, ...]
    figures: tuple[bool, ...]
    no_wrap: tuple[bool, ...]
    rows: tuple[tuple[str, ...], ...]
    summary: tuple[str, ...]  # a line per variant: its whole step, or that nothing waited and what could see
    notes: tuple[str, ...]  # why a census is partial or absent


def _under(file: str, folder: str) -> str | None:
    """`file` relative to `folder` when it is inside it, else None."""
    if not folder or os.path.splitdrive(file)[0] != os.path.splitdrive(folder)[0]:
        return None
    relative = os.path.relpath(file, folder)
    return None if relative.startswith(os.pardir) else relative


def _import_root(file: str) -> str | None:
    """The folder a module's file is imported from: above the topmost package (a folder with __init__.py) that holds
    it; None for a file outside any package (a script, a step file)."""
    folder = os.path.dirname(file)
    if not os.path.isfile(os.path.join(folder, "__init__.py")):
        return None
    while os.path.isfile(os.path.join(os.path.dirname(folder), "__init__.py")):
        folder = os.path.dirname(folder)
    return os.path.dirname(folder)


def where(point: SyncPoint, here: str | None = None) -> str:
    """'train.py:42': the point's file relative to `here` (the current folder) when it is under it, else to its
    import root when it is a package's module ('asyncbench/workloads/conversion.py'), else as stored."""
    file = point.file
    if os.path.isabs(file):
        here = os.getcwd() if here is None else here
        shorter = _under(file, here)
        if shorter is None and (root := _import_root(file)) is not None:
            shorter = _under(file, root)
        file = shorter or file
    return f"{file}:{point.line}"


def waits(value: float) -> str:
    """Times per step at a point (waits, or times the queue was full): a whole number as one ('10'), a fraction as 3
    digits ('0.5': a point that waited every other round)."""
    return str(int(value)) if float(value).is_integer() else units.number(value)


def blocked(point: SyncPoint) -> str:
    """Time blocked per step with its interval, as the timings table writes a time ('±?': too few rounds)."""
    low, high = point.wait_ci_s if point.wait_ci_s is not None else (None, None)
    return spreads.spread(point.wait_s_per_step, low, high)


def variant_line(census: Census) -> str:
    """'item: 11 waits, 108 ms [90.0–181] blocked per step (8 census rounds; jax's hooks and the frame fallback)'; or
    'numpy: no waits (numpy runs synchronously: nothing waits for a device)'."""
    seen = f"; {census.coverage}" if census.coverage else ""
    if census.rounds == 0:
        return f"{census.variant}: {'not taken' if census.note else 'no waits'}" + (f" ({census.coverage})" if census.coverage else "")
    rounds = f"{census.rounds} census round{'' if census.rounds == 1 else 's'}"
    if not census.points:
        return f"{census.variant}: no waits in {rounds}{seen}"
    full = _queue_full(census)
    if not census.syncs:  # only backpressure: the rows show it, and the line says what it is (not "0 waits")
        return f"{census.variant}: no waits; {full} ({rounds}{seen})"
    count = syncs.figure(census, syncs.SYNCS_PER_STEP)
    wait = syncs.figure(census, syncs.SYNC_WAIT_S)
    assert count is not None  # rounds were taken
    assert wait is not None
    low, high = wait.interval if wait.interval is not None else (None, None)
    per_step = f"{waits(count.value)} wait{'' if count.value == 1 else 's'}, {spreads.spread(wait.value, low, high)} blocked per step"
    points = f"{len(census.syncs)} point{'' if len(census.syncs) == 1 else 's'}"
    return f"{census.variant}: {per_step} at {points}" + (f"; {full}" if full else "") + f" ({rounds}{seen})"


def _queue_full(census: Census) -> str:
    """The line's words for the census's backpressure points ('1 point where the queue was full (not a wait: 496 µs
    ±32% a step)'), or '' where it has none: the whole step's figures leave them out (results.syncs.STEP_SYNC_KINDS),
    and a line of '0 waits' under a row of 496 µs read as a contradiction."""
    full = [point for point in census.points if point not in census.syncs]
    if not full:
        return ""
    wait = syncs.figure(census, syncs.SYNC_WAIT_S, str(SyncKind.QUEUE_FULL))
    assert wait is not None  # rounds were taken
    low, high = wait.interval if wait.interval is not None else (None, None)
    where = f"{len(full)} point{'' if len(full) == 1 else 's'} where the queue was full"
    return f"{where} (not a wait: {spreads.spread(wait.value, low, high)} a step)"


def census_view(who: str, censuses: Mapping[str, Census], order: Sequence[str] = (), here: str | None = None) -> CensusView | None:
    """The census of one case (`who`: its label), its variants in `order` (the timings table's; any others after),
    or None where none was taken (no --syncs). A case where no variant waited is one line (`summary`), no rows: what
    could see, or why nothing could."""
    if not censuses:
        return None
    censuses = {name: censuses[name] for name in (*order, *censuses) if name in censuses}
    drained = any(point.drained_per_step is not None for census in censuses.values() for point in census.points)
    rows = []
    for census in censuses.values():
        for index, point in enumerate(census.points):
            row: tuple[str, ...] = (
                census.variant if index == 0 else "",
                where(point, here),
                str(point.kind),
                point.call,
                waits(point.calls_per_step),
                blocked(point),
            )
            if drained:
                row += (units.NO_VALUE if point.drained_per_step is None else units.number(point.drained_per_step),)
            rows.append(row)
    noted: dict[str, list[str]] = {}  # a note, and the variants it is said of
    for census in censuses.values():
        if census.note:
            noted.setdefault(census.note, []).append(census.variant)
    # said once; with the variants it is of when it is not every variant's ("sync_every=0: 2 occasional waits ...")
    notes = tuple(note if len(names) == len(censuses) else f"{', '.join(names)}: {note}" for note, names in noted.items())
    summary = tuple(variant_line(census) for census in censuses.values())
    if not rows:
        summary = (nowhere(list(censuses.values())),)
    # one variant (a step with its default waits): its name is in the line under the table, and an 80-column
    # terminal needs the column for the file's line and the call
    kept = slice(1, None) if len(censuses) == 1 else slice(None)
    return CensusView(
        title=f"{TITLE} ({who})",
        headers=(HEADERS + ((DRAINED,) if drained else ()))[kept],
        figures=(FIGURES + ((True,) if drained else ()))[kept],
        no_wrap=(NO_WRAP + ((True,) if drained else ()))[kept],
        rows=tuple(row[kept] for row in rows),
        summary=summary,
        notes=notes,
    )


def nowhere(censuses: list[Census]) -> str:
    """The one line of a case where no variant waited: 'no waits (numpy runs synchronously: nothing waits for a
    device)', 'no waits in 6 census rounds (jax's hooks and the frame fallback)', or 'no census taken' with why."""
    if all(census.rounds == 0 and census.note for census in censuses):
        return "no census taken"
    rounds = min(census.rounds for census in censuses)
    counted = f" in {rounds} census round{'' if rounds == 1 else 's'}" if rounds else ""
    seen = "; ".join(dict.fromkeys(census.coverage for census in censuses if census.coverage))
    return f"no waits{counted}" + (f" ({seen})" if seen else "")
