"""The one saver: every finished case kept safe as the work goes, the results file written once when it ends.

`run` keeps each case in the results file's journal as it finishes
(results.journal); `gather`, `merge`, `ab` and a run's end write the whole
report (`ab`'s in its own format: `dumps`). Either way a write that fails is
said once, and the caller learns which files were written (`written`) and
which not (`unsaved`: a reason of exit 3).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

from asyncbench.results import journal, records, writing
from asyncbench.results.model import Result
from asyncbench.results.schema import Report
from asyncbench.say import Say


class Saver:
    """Keeps every finished case safe as the run goes, at the same cost for the 10th case and the 10,000th.

    Each case is appended to the results file's journal (journal.py); the
    results file itself is written once, when the run ends however it ends,
    and the journal is then removed. A write that fails (a full disk) is said
    once and the run goes on: the cases the journal could not take are kept
    for its next append, and for the results file at the end.
    """

    def __init__(self, path: str | None, say: Say, dumps: Callable[[Any], str] | None = None):
        """`dumps`: the whole file's text from the report, for a file that is not a run's results file (`ab`'s:
        ABReport.to_json); None: Report.to_json, with the lines the journal kept."""
        self.path, self.say, self.dumps = path, say, dumps
        self.journal: journal.Journal | None = None
        self.declared: records.Declared = {}  # each workload's metric declarations, stored once
        self.lines: list[str] = []  # each finished case serialized once: for the journal, then the results file
        self.records: list[str] = []  # what the journal is to hold: declarations, and those lines
        self.journaled = 0  # how many of the records it holds
        self.failed = False  # the results file could not be written at the end
        self._warned = False

    def begin(self, report: Report) -> None:
        # a device or a FIFO (-o /dev/stdout) takes the results once, at the end: no journal beside it (in /dev)
        if self.path and not writing.is_special(self.path):
            try:
                self.journal = journal.Journal.start(self.path, report)
            except OSError as exc:
                self._warn(exc, journal.path_for(self.path))

    def keep(self, result: Result) -> None:
        if not self.path:
            return
        infos = records.declare(self.declared, result)
        if infos is not None:
            self.records.append(journal.declared(result.workload, infos))
        self.lines.append(records.result_line(result, self.declared))
        self.records.append(self.lines[-1])
        if self.journal is None:
            return
        try:
            self.journal.append(self.records[self.journaled :])
        except OSError as exc:
            self._warn(exc, self.journal.path)
            return
        self.journaled = len(self.records)
        self._warned = False

    def finish(self, report: Any) -> None:
        """Write the results file (atomically, once); then the journal has done its work and goes."""
        if not self.path:
            return
        try:
            if self.dumps is not None:
                writing.atomic_write(self.path, self.dumps(report))
            else:
                kept_all = len(self.lines) == len(report.results)
                report.save(self.path, *((self.lines, self.declared) if kept_all else ()))
        except OSError as exc:
            self.failed = True
            where = ""
            if self.journal is not None:
                self.journal.close()
                if self.journaled == len(self.records):
                    where = f"; every finished case is in {self.journal.path}, which `asyncbench show {self.path}` reads"
            self.say(f"asyncbench: error: cannot write {self.path}: {exc.strerror or exc}{where}")
            return
        if self.journal is not None:
            self.journal.remove()

    def _warn(self, exc: OSError, where: Path) -> None:
        if not self._warned:
            self.say(
                f"asyncbench: warning: cannot write {where}: {exc.strerror or exc}; the run goes on, "
                "its finished cases kept in memory for the results file"
            )
        self._warned = True

    @property
    def written(self) -> list[str]:
        """The results file, where it was written."""
        return [self.path] if self.path and not self.failed else []

    @property
    def unsaved(self) -> list[str]:
        """The results file, where it could not be written."""
        return [self.path] if self.path and self.failed else []
