"""The store: runs, their cases, series of every measured quantity and their change points (SQLite or PostgreSQL).

An open store and its transactions; the work is done by job elsewhere:
history.recording stores a run (a results report or an `ab` file) and
finds its series' change points again, history.reading reads series, the
latest run and the recent runs as history.model's read models,
history.database reaches the database and makes or upgrades its tables
(history.tables). Each method runs in a transaction of its own: a results
file is recorded in one, so a crash midway leaves the store as it was. A run
is recorded once: its key is the run's own id (history.keys).
"""

from __future__ import annotations

import contextlib
import json
import sys
from typing import Any, Callable, Iterator, Sequence

from asyncbench.history import database, reading, recording, row_rules, tables
from asyncbench.history.database import StoreError as StoreError  # what callers of the store catch
from asyncbench.history.model import LatestRun, RecentRun, Series
from asyncbench.history.recording import Recorded
from asyncbench.history.target import Target
from asyncbench.results.ab_file import ABFile
from asyncbench.results.schema import Report


class Store:
    """An open store; each method runs in a transaction of its own."""

    def __init__(self, target: Target, engine: Any, meta: Any):
        self.target = target
        self._engine = engine
        self._meta = meta

    def table(self, name: str) -> Any:
        return self._meta.tables[f"{tables.PREFIX}{name}"]

    def record(self, report: Report, label: str | None = None, source: str | None = None) -> Recorded:
        """Record a results report (one transaction); a run already in the store is not recorded again."""
        return self._record(recording.of_report(report), label, source)

    def record_ab(self, data: ABFile, label: str | None = None, source: str | None = None) -> Recorded:
        """Record an `asyncbench ab` results file as results.ab_file reads it (one transaction): a run of the head
        side whose quantities are the paired ratios (history.recording.of_ab)."""
        return self._record(recording.of_ab(data), label, source)

    def _record(self, run: recording.Recording, label: str | None, source: str | None) -> Recorded:
        try:
            with self._failures("record"), database.writing(self._engine) as connection:
                return recording.record(self.table, connection, run, label, source)
        except row_rules.DamagedStoreRow as exc:  # a stored row it read (the run already there, compared): nothing stored
            raise StoreError(f"history {self.target.shown}: cannot record: {exc}: {database.DAMAGED}") from None
        except reading.DamagedRow as exc:  # a point asyncbench never writes (recording._check_points): nothing stored
            raise StoreError(f"history {self.target.shown}: cannot record: {exc}: not what asyncbench writes") from None

    def refresh_changes(self, connection: Any, series_ids: Sequence[int]) -> None:
        """Find the change points of these series again, in a transaction of the caller's (`transaction`)."""
        recording.refresh_changes(self.table, connection, series_ids)

    def series(self, pattern: str | None = None, last: int = 100) -> list[Series]:
        """Every series whose case id contains `pattern`: its newest `last` points, all its change points, its length."""
        with self._reading(), self._engine.connect() as connection:
            return reading.series(self.table, connection, pattern, last)

    def latest(self) -> LatestRun | None:
        """The run recorded last (by creation time), with its cases and their points; None in an empty store."""
        with self._reading(), self._engine.connect() as connection:
            return reading.latest(self.table, connection)

    def recent(self, limit: int) -> list[RecentRun]:
        """The newest `limit` runs, newest first (reading.recent)."""
        with self._reading(), self._engine.connect() as connection:
            return reading.recent(self.table, connection, limit)

    def transaction(self) -> Any:
        """A writing transaction of this store's own (for bulk loads: benchmarks/history_scale.py)."""
        return database.writing(self._engine)

    def _failures(self, doing: str) -> contextlib.AbstractContextManager[None]:
        return database.translated(self.target, doing)

    @contextlib.contextmanager
    def _reading(self) -> Iterator[None]:
        """A read's failures in one line, a row that is not what asyncbench writes among them: a column it writes
        as JSON (a machine's facts, a case's checks and timelines) that does not parse is a damaged store."""
        with self._failures("read"):
            try:
                yield
            except json.JSONDecodeError as exc:
                raise StoreError(
                    f"history {self.target.shown}: cannot read: a row holds text that is not JSON where asyncbench writes JSON "
                    f"({exc.msg}): {database.DAMAGED}"
                ) from None
            except reading.DamagedRow as exc:
                raise StoreError(f"history {self.target.shown}: cannot read: {exc}: {database.DAMAGED}") from None


def open_store(target: Target, writing: bool = False, say: Callable[[str], None] | None = None) -> Store:
    """The store at `target`: refused in one line (StoreError) when it is not there (reading never makes one), is
    from a newer asyncbench, or cannot be reached; an older one is upgraded, and what the upgrade changed that a
    user must know is said (`say`, else a line on stderr: whichever command opens the store first upgrades it).
    `writing`: made where there is none, and proven writable now, before a run (a read-only file, folder, role or
    server is refused here)."""
    engine = database.connect(target, writing)
    meta = tables.metadata()
    for note in database.prepare(target, engine, meta, writing):
        (say or _stderr)(f"asyncbench: history {target.shown}: {note}")
    return Store(target, engine, meta)


def _stderr(line: str) -> None:
    print(line, file=sys.stderr)  # names in it are quoted as repr quotes them (history.upgrade): none acts
