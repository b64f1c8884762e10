"""One request, start to end: plan → engine → save → judge once → what happened.

`run` takes a `RunRequest` (what the command line asked), validates all of
it before anything runs (plan, output files, trace folder, baseline), runs
the cases with a save after each, compares with the baseline, judges the
run once, writes every requested output, and returns a `Session`: the view
to print and the exit code. Ctrl-C (SIGINT) and SIGTERM end it as cleanly:
the finished cases are saved, marked interrupted, and the code is 130/143.
Things said along the way (a file that could not be saved) go through
`say`, so the CLI alone prints. `load_results` reads a results file for
`show`/`compare`, filling in what files older than schema 3 do not store.
"""

from __future__ import annotations

import dataclasses
import signal
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

from asyncbench.errors import EXIT_INTERRUPTED, EXIT_TERMINATED, InputError, InputErrors
from asyncbench.report import view as views
from asyncbench.report.view import ReportView
from asyncbench.report.writers import WRITERS, Writer
from asyncbench.results import ab_file, journal, recordable, records, schema
from asyncbench.results.model import Report, Result
from asyncbench.results.plan import Config, ExecutorSettings, Experiment
from asyncbench.verdicts import compare, outcome

Say = Callable[[str], None]


class Terminated(KeyboardInterrupt):
    """SIGTERM, raised wherever the run is, so that it ends as Ctrl-C does: finished cases saved, workers torn down."""


def raise_terminated(signum: int, frame: Any) -> None:
    raise Terminated()


@dataclass(frozen=True)
class RunRequest:
    """What `asyncbench run` was asked: the plan's sources, the command line's say over it, and the outputs."""

    configs: tuple[str, ...] = ()
    workloads: tuple[str, ...] = ()
    devices: tuple[str, ...] = ()
    backends: tuple[str, ...] = ()
    sets: tuple[str, ...] = ()
    quick: bool = False
    json_path: str | None = None
    #: writer name -> file: the other outputs (markdown, csv, github-benchmark, plot)
    outputs: Mapping[str, str] = field(default_factory=dict)
    baseline: str | None = None
    max_regression: str = "10%"
    strict: bool = False
    allow_inconclusive: bool = False
    isolate: bool = True
    trace_dir: str | None = None
    progress: bool = True
    #: record the run in the history store when it ends (`--record`), there (`--history`; None: the default)
    record: bool = False
    history: str | None = None
    label: str | None = None
    #: the executor's settings the command line gave (--executor, --per, --partition...), as a config's `executor:` keys
    executor: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Session:
    """What a request ended with: the view to print (with the outcome), the exit code, and whether it was cut short."""

    view: ReportView
    code: int
    interrupted: bool
    #: whether this process reports (False on a torchrun rank other than 0: rank 0 reports for everyone)
    reports: bool = True


def plan(request: RunRequest) -> Config:
    """One validated plan from the configs given (or the built-in suite, or -w workloads), with the command line's
    overrides; -w names are resolved once. Imports no framework."""
    from asyncbench.spec import config, overrides

    keys = config.workload_keys(request.workloads)
    if request.configs:
        loaded: list[Config] = []
        refused: list[InputError] = []
        for path in request.configs:  # every file's mistakes, not only the first file's
            try:
                loaded.append(config.load(path))
            except InputError as exc:
                refused.append(exc)
        if refused:
            raise refused[0] if len(refused) == 1 else InputErrors.of(refused)  # one file: its own error, as load raised it
        names = [e.name for c in loaded for e in c.experiments]
        duplicated = sorted({n for n in names if names.count(n) > 1})
        if duplicated:
            raise InputError(f"experiment name(s) {', '.join(duplicated)} appear in more than one config")
        executors = [c.executor for c in loaded if c.executor != ExecutorSettings()]
        if any(other != executors[0] for other in executors[1:]):
            raise InputError("the configs name different executors: give the executor in one of them, or on the command line")
        merged = config.Config(
            name="+".join(c.name for c in loaded),
            source=", ".join(c.source for c in loaded),
            experiments=tuple(e for c in loaded for e in c.experiments),
            executor=executors[0] if executors else ExecutorSettings(),
        )
    elif keys:
        merged = config.for_workloads(keys)
    else:
        merged = config.default_suite()
    return overrides.apply_overrides(
        merged,
        workloads=keys,
        backends=request.backends,
        devices=request.devices,
        sets=request.sets,
        quick=request.quick,
        executor_options=request.executor,
    )


def _inputs(request: RunRequest, command: str) -> list[tuple[str, str | None]]:
    """The files a run or a gather reads, which no output may name (written at the end, it would replace what was
    read: a store overwritten by a CSV is lost for good): its configs, --baseline, and with --record the SQLite store
    (its packages checked first: resolving a PostgreSQL URL needs SQLAlchemy)."""
    read = [*(("CONFIG", config) for config in request.configs), ("--baseline", request.baseline)]
    if request.record:
        require_history(request.history, f"{command} --record", *RECORDING)
        read.append(("--history", store_file(request.history)))
    return read


def store_file(history: str | None) -> str | None:
    """The SQLite store's file (None for a PostgreSQL store): an input of `--record` and `report`."""
    from asyncbench.history import target

    found = target.resolve(history)
    return found.url.removeprefix("sqlite:///") if found.kind == "sqlite" else None


def check_names(request: RunRequest, command: str = "run") -> None:
    """What the output options name, before anything else is read: no two outputs name one file (-o's journal
    included), and none names a file the command reads (_inputs). InputError otherwise."""
    from asyncbench.results import outputs as files

    journal_of = ("-o's journal", str(journal.path_for(request.json_path))) if request.json_path else (None, None)  # written as it runs
    written = [("-o", request.json_path), journal_of, *((WRITERS[name].option, path) for name, path in request.outputs.items())]
    files.check_distinct(written)
    files.check_not_inputs(written, _inputs(request, command))


def check_outputs(request: RunRequest, experiments: Sequence[Experiment], command: str = "run") -> list[tuple[Writer, str]]:
    """Every output file, proven writable before anything runs (InputError: exit 2, not after a long run); no two
    name one file, and none names a file the run reads (_inputs). `command`: the one that asked (`run`, `gather`),
    named where a package it needs is missing."""
    from asyncbench.results import outputs as files  # every command's outputs pass the same check

    check_names(request, command)
    outputs = [(WRITERS[name], path) for name, path in request.outputs.items() if path]
    for writer, path in outputs:
        writer.check_destination(path)
        if writer.needs_sweep and not any(e.sweep for e in experiments):
            raise InputError(f"{writer.option} draws sweeps, and no selected experiment has one (sweep: in a config, or --set KEY=V1,V2)")
    if request.json_path:
        files.check([("-o", request.json_path)])
        _check_no_journal(request.json_path)
    return outputs


def _check_no_journal(path: str) -> None:
    """A journal already at the target holds the only copy of a run that did not end: never overwrite it."""
    left = journal.path_for(path)
    if not left.exists():
        return
    try:
        recovered = journal.read(left)
        held = f"{len(recovered.report.results)} finished case(s) of a run started {recovered.report.created} that did not end"
    except InputError:
        held = "what may be the cases of a run that did not end"
    raise InputError(
        f"{left} holds {held}: `asyncbench show {path}` reads them (`--format json > kept.json` keeps them as a results file); "
        "move or delete the journal to run again with this output",
        location=path,
    )


class _Saver:
    """Keeps every finished case safe as the run goes, at the same cost for the 10th case and the 10,000th.

    Each case is appended to the results file's journal (journal.py); the
    results file itself is written once, when the run ends however it ends,
    and the journal is then removed. A write that fails (a full disk) is said
    once and the run goes on: the cases the journal could not take are kept
    for its next append, and for the results file at the end.
    """

    def __init__(self, path: str | None, say: Say):
        self.path, self.say = path, say
        self.journal: journal.Journal | None = None
        self.declared: records.Declared = {}  # each workload's metric declarations, stored once
        self.lines: list[str] = []  # each finished case serialized once: for the journal, then the results file
        self.records: list[str] = []  # what the journal is to hold: declarations, and those lines
        self.journaled = 0  # how many of the records it holds
        self.failed = False  # the results file could not be written at the end
        self._warned = False

    def begin(self, report: Report) -> None:
        if self.path:
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

    def finish(self, report: Report) -> None:
        """Write the results file (atomically, once); then the journal has done its work and goes."""
        if not self.path:
            return
        try:
            kept_all = len(self.lines) == len(report.results)
            schema.save(report, self.path, *((self.lines, self.declared) if kept_all else ()))
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


def _execute(plan: Config, request: RunRequest, saver: _Saver, trace_dir: str | None) -> tuple[Report, int | None]:
    """Run the plan, saving after every case; on Ctrl-C or SIGTERM save what finished, marked interrupted, and
    return the exit code to end with (130 or 143), else None."""
    from rich.console import Console

    from asyncbench.engine import environment, runner  # after input is validated: running imports frameworks
    from asyncbench.report.progress import ProgressDisplay

    backends_used = [name for e in plan.experiments for name in e.backends]
    workers = runner.start_workers(plan, request.isolate)  # importing their frameworks while this process captures
    report = schema.new_report(plan.to_dict(), environment.capture(backends_used))
    saver.begin(report)
    finished: list[Result] = []

    def on_result(result: Result) -> None:
        finished.append(result)
        display.finish(result)
        saver.keep(result)

    stderr = Console(stderr=True)
    display = ProgressDisplay(enabled=request.progress and stderr.is_terminal, console=stderr)
    previous_handler = signal.signal(signal.SIGTERM, raise_terminated)
    try:
        with display:
            runner.run(
                plan,
                isolate=request.isolate,
                trace_dir=trace_dir,
                on_start=display.start,
                on_progress=display.update,
                on_result=on_result,
                workers=workers,
            )
    except KeyboardInterrupt as stop:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)  # a second SIGTERM must not cut the save short
        interrupted = dataclasses.replace(report, results=tuple(finished), interrupted=True)
        saver.finish(interrupted)
        return interrupted, EXIT_TERMINATED if isinstance(stop, Terminated) else EXIT_INTERRUPTED
    except BaseException:
        saver.finish(dataclasses.replace(report, results=tuple(finished), interrupted=True))  # a bug: keep what finished
        raise
    finally:
        signal.signal(signal.SIGTERM, previous_handler)
    done = dataclasses.replace(report, results=tuple(finished))
    saver.finish(done)
    return done, None


def _torchrun(plan: Config, request: RunRequest) -> tuple[RunRequest, bool]:
    """Under torchrun this process is one rank: only workloads that measure themselves across processes run, the
    rank is its own worker, and only rank 0 reports and writes. Returns the request as this rank runs it."""
    from asyncbench.measure import distributed
    from asyncbench.workloads import WORKLOADS

    launched = distributed.torchrun_rank()
    if launched is None:
        return request, True
    alone = sorted({e.workload for e in plan.experiments if not WORKLOADS[e.workload].across_processes})
    if alone:
        across = ", ".join(name for name, w in WORKLOADS.items() if w.across_processes)
        raise InputError(
            f"under torchrun only {across} runs (it measures itself across the ranks; each rank would run "
            f"{', '.join(alone)} on its own): add -w {across.split(', ')[0]}"
        )
    rank_zero = launched[0] == 0
    request = dataclasses.replace(request, isolate=False)  # torchrun started this process to be a rank: it is the worker
    if not rank_zero:
        request = dataclasses.replace(request, json_path=None, outputs={}, baseline=None, progress=False)
    return request, rank_zero


def run(request: RunRequest, say: Say, the_plan: Config | None = None) -> Session:
    """Run a request (see the module's docstring); InputError for anything wrong with it, before anything runs.
    `the_plan`: the request's plan, where the caller made it already."""
    from asyncbench.engine import trace

    the_plan = the_plan or plan(request)
    request, reports = _torchrun(the_plan, request)
    outputs = check_outputs(request, the_plan.experiments)  # before the store is opened: an output may not name it
    store = open_history(request.history, "run --record") if request.record else None  # a store that cannot be used: before running
    trace_dir = str(trace.check_directory(request.trace_dir)) if request.trace_dir else None
    compare.parse_threshold(request.max_regression)
    base_report = load_results(request.baseline, say) if request.baseline else None
    if base_report is not None:  # every row compared with the baseline gets the samples its interval needs
        from asyncbench.spec import overrides

        the_plan = overrides.with_rounds(the_plan, compare.samples_needed(base_report))
    saver = _Saver(request.json_path, say)
    report, stopped_by = _execute(the_plan, request, saver, trace_dir)
    written = [request.json_path] if request.json_path and not saver.failed else []
    unsaved = [request.json_path] if saver.failed and request.json_path else []

    def record(verdict: outcome.Outcome) -> outcome.Outcome:
        return _record(store, report, request.label, request.json_path, say, verdict) if store is not None and reports else verdict

    view, verdict = conclude(report, request, outputs, base_report, written, unsaved, say, record)
    if stopped_by is not None:
        kept_in = f" in {request.json_path}" if request.json_path and not saver.failed else ""
        say(f"interrupted: {len(report.results)} finished case(s) kept{kept_in}")
        return Session(view, stopped_by, interrupted=True, reports=reports)
    return Session(view, verdict.code, interrupted=False, reports=reports)


def conclude(
    report: Report,
    request: RunRequest,
    outputs: Sequence[tuple[Writer, str]],
    base_report: Report | None,
    written: list[str],
    unsaved: list[str],
    say: Say,
    record: Callable[[outcome.Outcome], outcome.Outcome],
) -> tuple[ReportView, outcome.Outcome]:
    """What a finished report comes to: compared with the baseline, judged once, every output written (`written`
    and `unsaved`: how the JSON fared), recorded (`record`), and the view to print."""
    comparison = (
        compare.compare(base_report, report, compare.parse_threshold(request.max_regression), allow_inconclusive=request.allow_inconclusive)
        if base_report is not None
        else None
    )
    verdict = outcome.judge(
        report, strict=request.strict, allow_inconclusive=request.allow_inconclusive, comparison=comparison, unsaved=unsaved
    )
    view = views.build(report, comparison, verdict)
    written = list(written)
    for writer, path in outputs:
        if writer.needs_sweep and not any(e.swept for e in view.experiments):
            continue  # nothing ran that was swept (every point skipped): no empty picture
        try:
            schema.atomic_write(path, writer.render(view, path))
            written.append(path)
        except OSError as exc:
            say(f"asyncbench: error: cannot write an output: {exc.strerror or exc} ({exc.filename or path})")
            verdict = verdict.with_unsaved(path)
    if written:
        say(f"written: {', '.join(written)}")
    verdict = record(verdict)
    return dataclasses.replace(view, outcome=views.outcome_view(verdict)), verdict


#: what recording needs besides the store's own packages: each series' change points are found as a run is recorded
RECORDING = ("otava.analysis",)


def require_history(given: str | None, needed_by: str, *also: str) -> None:
    """The history's packages, checked before anything runs (extras.require: one line naming how to install
    them, exit 2): SQLAlchemy, psycopg where the store is a PostgreSQL URL, and `also` (RECORDING, plotly)."""
    import os

    from asyncbench import extras
    from asyncbench.history import target

    named = given or os.environ.get(target.ENVIRONMENT) or ""
    postgres = ("psycopg",) if named.startswith(target.POSTGRES_SCHEMES) or target.CONNINFO.match(named) else ()
    extras.require(needed_by, "sqlalchemy", *postgres, *also)


def open_history(given: str | None, needed_by: str = "--record") -> Any:
    """The store a run or `record` writes to: made where there is none, and proven writable before anything runs
    (a read-only file, folder, role or server is InputError now, not exit 3 after the run; so is a package the
    store or recording needs that is not installed)."""
    from asyncbench.history import store, target

    require_history(given, needed_by, *RECORDING)
    return store.open_store(target.resolve(given), writing=True)


def _record(store: Any, report: Report, label: str | None, source: str | None, say: Say, verdict: outcome.Outcome) -> outcome.Outcome:
    """Record a run that has measured: a store that fails now is an error of the run (exit 3), its results kept."""
    from asyncbench.history.store import StoreError

    try:
        done = store.record(report, label=label, source=source)
    except StoreError as exc:
        say(f"asyncbench: error: {exc}")
        return verdict.with_unsaved(f"the history ({store.target.shown})")
    say(f"recorded in {store.target.shown}: run {done.run}, {done.points} points" if done.new else f"already in {store.target.shown}")
    return verdict


def record_files(paths: Sequence[str], history: str | None, label: str | None, say: Say) -> int:
    """`asyncbench record FILE...`: each results file in one transaction; a file already recorded is said so.
    Every file is read and checked (results.recordable, results.ab_file) before anything is recorded: a bad one is
    InputError (one line, exit 2, nothing recorded). A file the store refused (locked, gone) is one line and exit
    2, the others still recorded."""
    from asyncbench.history.store import StoreError

    require_history(history, "record", *RECORDING)
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
        say(f"{path}: recorded as run {done.run} ({done.points} points)" if done.new else f"{path}: already recorded (run {done.run})")
    return 2 if failed else 0


def _recordable(path: str, say: Say) -> Report | ab_file.ABFile:
    """A results file as a Report, or an `ab` results file as results.ab_file reads it, every field the store
    takes checked first (results.recordable, results.ab_file); InputError naming the file and the key otherwise
    (or the results reader's own, for a file that is not JSON or not ours)."""
    import json

    try:
        raw = json.loads(Path(path).read_text(encoding="utf-8"))
    except RecursionError:
        raise InputError("nested too deeply to be a results file", location=path) from None
    except (OSError, UnicodeDecodeError, ValueError):
        raw = None  # the results reader says why
    if ab_file.is_ab(raw):
        return ab_file.from_dict(raw, path)
    if schema.is_results(raw):
        schema.check_version(raw, path)
        recordable.check_file(raw, path)
    report = load_results(path, say)
    recordable.check_file(schema.to_dict(report), path)  # what is stored: a journal beside the file is read instead
    return report


def load_results(path: str | Path, say: Say | None = None) -> Report:
    """A results file, ready to render. Where a run writing it has not ended (still running, or killed), its
    journal is read instead, and `say` tells so. Files older than schema 3 store no units or readings, so those
    are taken from the built-in workloads (a user's workload is not imported to render a file: its old results
    stay bare)."""
    report = _read(Path(path), say or (lambda _: None))
    if report.schema_version >= 3:
        return report
    from asyncbench.workloads import WORKLOADS  # built-ins only: rendering never imports a user's module

    described = [WORKLOADS[r.workload].describe(r) if r.workload in WORKLOADS else r for r in report.results]
    return dataclasses.replace(report, results=tuple(described))


def _read(path: Path, say: Say) -> Report:
    """The report at `path`: the results file, or the journal of a run writing it that has not ended (or the
    journal itself, named directly)."""
    left = path if path.name.endswith(journal.SUFFIX) else journal.path_for(path)
    if not left.exists():
        return schema.load(path)
    recovered = journal.read(left)
    torn = f"; {recovered.torn} record(s) cut short by the interruption left out" if recovered.torn else ""
    say(
        f"{path}: the run writing it has not ended (still running, or killed): "
        f"{len(recovered.report.results)} finished case(s) read from its journal {left}{torn}"
    )
    return recovered.report
