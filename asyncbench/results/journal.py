"""The journal: finished cases appended one line each beside a results file, so a long run loses nothing.

Why a journal and not the results file rewritten after every case: that
rewrite re-serializes every case done so far, so keeping k cases safe costs
O(k) and a sweep's saving grows with the square of its size (a 1,000-case
sweep spent most of its time rewriting its own file). An append costs the
same for the 10th case and the 10,000th.

`r.json.journal` is JSON Lines: a header record (the report without its
results: schema version, tool, environment, config), then one record per
finished case, each flushed and fsynced before the run goes on; before a
workload's first case, a record of its metric declarations (`declared`),
which its cases then leave out, as the results file does. When the run
ends — normally, on Ctrl-C, SIGTERM or an error — the session writes the
whole results file once (atomically) and removes the journal. A journal
left behind is therefore the mark of a run that did not end (killed, a power
cut, a full disk): `read` recovers every case it holds, a torn last record
(a write cut by `kill -9`) is dropped and counted.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
from dataclasses import dataclass, replace
from pathlib import Path
from typing import IO, Mapping, Sequence

from asyncbench import inputs
from asyncbench.errors import InputError
from asyncbench.results import records, schema
from asyncbench.results.model import MetricInfo
from asyncbench.results.schema import Report

SUFFIX = ".journal"


def declared(workload: str, infos: Mapping[str, MetricInfo]) -> str:
    """The record of a workload's metric declarations, before its first case's record."""
    return json.dumps({"metric_info": records.declared_to_dict({workload: infos})}, separators=(",", ":"), allow_nan=False)


def path_for(results_path: str | Path) -> Path:
    """Where the journal of a results file lives: beside it, its name plus `.journal`."""
    return Path(f"{results_path}{SUFFIX}")


def _synced(handle: IO[bytes], text: str) -> None:
    """Write all of `text` (the handle is unbuffered: a failed write leaves no bytes behind in a buffer to be
    written later, after the file was cut back) and sync it to disk."""
    data = memoryview(text.encode("utf-8"))  # ASCII in fact: json.dumps escapes the rest
    while data:
        written = handle.write(data)
        if not written:
            raise OSError(errno.EIO, "the journal took no bytes")
        data = data[written:]
    _sync(handle.fileno())


# The data on disk before the run goes on; fdatasync where there is one (Linux): it skips the file's
# timestamps, which recovery does not need.
_sync = getattr(os, "fdatasync", os.fsync)


class Journal:
    """An open journal: `append` one finished case at a time, `remove` once the results file holds them all.

    A failed append (a full disk) is undone — the file is cut back to its
    last whole record — and raises OSError; the caller says so, keeps the
    result and hands it to the next `append`, so a record is never torn in
    the middle of the journal.
    """

    def __init__(self, path: Path, handle: IO[bytes]):
        self.path = path
        self._handle = handle

    @classmethod
    def start(cls, results_path: str | Path, report: Report) -> Journal:
        """A new journal for `results_path`, its header written and synced (OSError: it cannot be written)."""
        path = path_for(results_path)
        # never through a link (a dangling one planted beside the output would have made a file where it points)
        flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_NOFOLLOW", 0)
        handle = open(os.open(path, flags, 0o666), "wb", buffering=0)  # noqa: SIM115 - held open for the run's lifetime, closed by remove()
        try:
            _synced(handle, json.dumps({"journal": report.header_to_dict()}, allow_nan=False) + "\n")
        except BaseException:
            handle.close()
            with contextlib.suppress(OSError):
                path.unlink()  # no half journal: it would stop the next run with this output
            raise
        return cls(path, handle)

    def append(self, lines: Sequence[str]) -> None:
        """Append these records (`declared` and `records.result_line` lines) and sync them to disk."""
        end = self._handle.tell()
        try:
            _synced(self._handle, "".join(f"{line}\n" for line in lines))
        except OSError:
            with contextlib.suppress(OSError):
                self._handle.truncate(end)
                self._handle.seek(end)
            raise

    def remove(self) -> None:
        """Close and delete the journal: the results file now holds every case."""
        self._handle.close()
        with contextlib.suppress(FileNotFoundError):
            self.path.unlink()

    def close(self) -> None:
        """Close, keeping the journal on disk (the results file could not be written: the journal is the copy)."""
        self._handle.close()


@dataclass(frozen=True)
class Recovered:
    """What a journal held: the report of a run that did not end (marked interrupted) and any torn records dropped."""

    report: Report
    torn: int


def read(path: str | Path) -> Recovered:
    """The cases of a run that did not end, from its journal (ResultsFileError when it is not one).

    The one lenient reader of results: a kill may cut the last record short, so each record is built as it stands
    (records.result_from_dict) and one that cannot be is counted as torn, not refused; what was kept is then held
    to the checks a results file is held to (schema.check_file), as written back, so a journal is refused where
    its results file would be."""
    with schema.bulk_loading():
        return _read(Path(path))


def _read(path: Path) -> Recovered:
    lines = inputs.read_text(path, schema.ResultsFileError, "journal").splitlines()
    source = str(path)
    try:
        header = inputs.read_json(lines[0])["journal"] if lines else None
    except (ValueError, TypeError, KeyError):
        header = None
    if not isinstance(header, dict):
        raise schema.ResultsFileError("not an asyncbench journal (its first line is not a journal header)", location=source)
    schema.check_version(header, source)
    results, torn = [], 0
    known: records.Declared = {}
    for line in lines[1:]:
        try:
            record = inputs.read_json(line)
            if record.keys() == {"metric_info"}:
                known.update(records.declared_from_dict(record["metric_info"]))
            else:
                results.append(records.result_from_dict(record, known))
        except (json.JSONDecodeError, KeyError, TypeError, ValueError, AttributeError):
            torn += 1  # a record cut short by a kill: everything before it is whole
    try:
        report = Report.from_header(header, tuple(results))
    except (KeyError, TypeError, AttributeError) as exc:
        raise schema.ResultsFileError(f"malformed journal header ({type(exc).__name__}: {exc})", location=source) from None
    report = replace(report, interrupted=True)
    try:  # held to the vocabulary a results file is held to (Report.load): a journal is read in its place
        schema.check_file(report.to_dict(), source)
    except InputError as exc:
        raise schema.ResultsFileError(exc.message, location=exc.location, path=exc.path) from None
    return Recovered(report, torn)
