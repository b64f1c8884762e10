"""The one recorder: what a command measured, into the history store (`run --record`, `gather --record`, `record`).

The store's packages are checked and the store opened, proven writable,
before anything runs (`open_history`); the reports go in when the command
ends (`record`); `record FILE...` reads and checks every file before it
records any (`record_files`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Sequence

from asyncbench import inputs
from asyncbench.errors import EXIT_INPUT, EXIT_OK, InputError
from asyncbench.results import ab_file, ab_report, schema
from asyncbench.results.schema import Report
from asyncbench.say import Say
from asyncbench.session import reading
from asyncbench.verdicts import outcome

#: what recording needs besides the store's own packages: nothing (each series' change points are found as a run is
#: recorded, by Otava's analysis, which ships inside asyncbench: history.edivisive)
RECORDING: tuple[str, ...] = ()


def require_history(given: str | None, needed_by: str, *also: str) -> None:
    """The history's packages, checked before anything runs (extras.require: one line naming how to install
    them, exit 2): SQLAlchemy, psycopg where the store is a PostgreSQL URL, and `also` (RECORDING, plotly)."""
    import os

    from asyncbench import extras
    from asyncbench.history import target

    named = given or os.environ.get(target.ENVIRONMENT) or ""
    postgres = ("psycopg",) if named.startswith(target.POSTGRES_SCHEMES) or target.CONNINFO.match(named) else ()
    extras.require(needed_by, "sqlalchemy", *postgres, *also)


def store_file(history: str | None) -> str | None:
    """The SQLite store's file (None for a PostgreSQL store): an input of `--record` and `report`."""
    from asyncbench.history import target

    found = target.resolve(history)
    return str(found.path) if found.path is not None else None


def open_history(given: str | None, needed_by: str = "--record") -> Any:
    """The store a run or `record` writes to: made where there is none, and proven writable before anything runs
    (a read-only file, folder, role or server is InputError now, not exit 3 after the run; so is a package the
    store or recording needs that is not installed)."""
    from asyncbench.history import store, target

    require_history(given, needed_by, *RECORDING)
    return store.open_store(target.resolve(given), writing=True)


def record(
    store: Any,
    reports: Sequence[tuple[Report, str | None]],
    label: str | None,
    say: Say,
    verdict: outcome.Outcome,
    *,
    jobs: bool = False,
) -> outcome.Outcome:
    """Record what a command measured, each report with its source file (a job's own, with its machine's
    fingerprint): a store that fails now is an error of the command (exit 3), its results kept. A report recorded
    before (gathered again) is said so, not stored twice. `jobs`: the reports are a submission's jobs' or a matrix's
    shards', each read from its file as `record` reads one (Report.load, journal.read: held to results.schema.check_file
    as it was read; a file that was not is its job's error rows); an empty one is left out."""
    from asyncbench.history.store import StoreError

    if jobs:
        reports = [(report, path) for report, path in reports if report.results]
    done = []
    for report, path in reports:
        try:
            done.append(store.record(report, label=label, source=path))
        except StoreError as exc:
            say(f"asyncbench: error: {exc}")
            return verdict.with_unsaved(f"the history ({store.target.shown})")
    if jobs:
        again = sum(not one.new for one in done)
        say(f"recorded in {store.target.shown}: {len(done) - again} job(s)" + (f", {again} already there" if again else ""))
    for one in done if not jobs else ():
        say(f"recorded in {store.target.shown}: run {one.run}, {one.points} points" if one.new else f"already in {store.target.shown}")
    return verdict


def record_files(paths: Sequence[str], history: str | None, label: str | None, say: Say) -> int:
    """`asyncbench record FILE...`: each results file in one transaction; a file already recorded is said so.
    Every file is read and checked (results.schema, results.ab_file) before anything is recorded, and before
    the store's packages are (importing Otava's analysis imports SciPy's statistics, a second or two): a bad one, or
    one that holds no case, is InputError (one line, exit 2, nothing recorded). A file the store refused (locked, gone) is one line and exit
    2, the others still recorded."""
    from asyncbench.history.store import StoreError

    reports = [(path, _recordable(path, say)) for path in paths]
    store = open_history(history, "record")
    failed = 0
    for path, report in reports:
        source = str(Path(path).resolve())
        try:
            if isinstance(report, Report):
                done = store.record(report, label=label, source=source)
            else:
                done = store.record_ab(report, label=label, source=source)
        except StoreError as exc:
            say(f"asyncbench: error: {path}: {exc}")
            failed += 1
            continue
        if done.differs:  # the same run (its id) with other content: an edited file, its new content not recorded
            say(f"asyncbench: error: {path}: already recorded as run {done.run}, but {done.differs}: not recorded (a run is recorded once)")
            failed += 1
            continue
        say(
            f"{path}: recorded as run {done.run} ({done.points} point{'' if done.points == 1 else 's'})"
            if done.new
            else f"{path}: already recorded (run {done.run})"
        )
    return EXIT_INPUT if failed else EXIT_OK


def _recordable(path: str, say: Say) -> Report | ab_file.ABFile:
    """A results file as a Report, or an `ab` results file as results.ab_file reads it, every field the store
    takes checked first (results.schema, results.ab_file); InputError naming the file and the key otherwise
    (or the results reader's own, for a file that is not JSON or not ours), and naming the file where it holds no
    case (reading.no_case: a run interrupted before its first case finished)."""
    try:
        raw = inputs.read_json(inputs.read_text(path, schema.ResultsFileError, "results file"))
    except ValueError:
        raw = None  # the results reader says why
    read: Report | ab_file.ABFile
    if ab_report.is_ab(raw):
        read = ab_file.from_dict(raw, path)
        empty = reading.no_case(path, read.cases, bool(raw.get("interrupted")))
    else:
        # held to the store's vocabulary as it is read (Report.from_dict; a journal beside it is read instead, and
        # held to it as well: results.journal), parsed once
        read = reading.load_results(path, say, raw=raw)
        empty = reading.no_case(path, read.results, read.interrupted)
    if not empty:
        empty = _all_skipped(path, read.cases if isinstance(read, ab_file.ABFile) else read.results)
    if empty:  # a run that measured nothing is no run of its series: refused as a bad file is, before any is stored
        raise InputError(f"{empty}: a run that measured nothing is not recorded (nothing was recorded)")
    return read


def _all_skipped(path: str, cases: Sequence[Any]) -> str | None:
    """Why a run whose every case was skipped (a backend not here, a step for another backend) measured nothing: it
    holds cases but no figure (a trial's CI recorded such a file as "run 1 (0 points)" and its `record` step passed,
    beside the run's own exit 1); None where some case ran (one that errored is recorded, its error the latest run)."""
    if cases and all(str(case.status) == "skipped" for case in cases):
        return f"{path}: every case was skipped ({len(cases)} case{'' if len(cases) == 1 else 's'})"
    return None
