"""The one preflight: every output path a command names, checked before anything runs (InputError: exit 2).

A command that measures for minutes must not learn at its end that an
output cannot be written, that two outputs name one file, or that one names
a file the command reads (a store overwritten by a CSV is lost for good), a
file a submission owns in its jobs folder (gathering changes none of them),
or a journal that holds the only copy of a run that did not end. `run`,
`run --executor`, `gather` and `ab` all ask here.
"""

from __future__ import annotations

from pathlib import Path
from typing import Iterable, Sequence

from asyncbench.errors import InputError
from asyncbench.report.writers import WRITERS, Writer
from asyncbench.results import journal
from asyncbench.results import outputs as files
from asyncbench.session import recorder
from asyncbench.session.requests import RunRequest
from asyncbench.spec.manifest import MANIFEST, SubmittedJob

#: (the option that names a file, the file or None where the option was not given)
Named = list[tuple[str | None, str | None]]


def _inputs(request: RunRequest, command: str) -> Named:
    """The files a run or a gather reads, which no output may name (written at the end, it would replace what was
    read): its configs, --baseline, and with --record the SQLite store (its packages checked first: resolving a
    PostgreSQL URL needs SQLAlchemy)."""
    read: Named = [*(("CONFIG", config) for config in request.selection.configs), ("--baseline", request.gate.baseline)]
    if request.recording.record:
        recorder.require_history(request.recording.history, f"{command} --record", *recorder.RECORDING)
        read.append(("--history", recorder.store_file(request.recording.history)))
    return read


def _written(request: RunRequest) -> Named:
    """What the output options name: -o, -o's journal (written as the run goes), and each writer's file."""
    json_path = request.outputs.json_path
    journal_of: Named = [("-o's journal", str(journal.path_for(json_path)))] if json_path else []
    return [("-o", json_path), *journal_of, *((WRITERS[name].option, path) for name, path in request.outputs.files.items())]


def check_names(request: RunRequest, command: str = "run", owned: Iterable[Path] = (), owner: Path | None = None) -> None:
    """What the output options name, before anything else is read: no two outputs name one file (-o's journal
    included), none names a file the command reads, and none one of `owned` or a file under `owner`'s logs (a
    submission's own files, which gathering leaves as they are). InputError otherwise."""
    written = _written(request)
    files.check_distinct(written)
    files.check_not_inputs(written, _inputs(request, command))
    check_not_owned(request, owned, owner)


def submission_files(root: Path, jobs: Iterable[SubmittedJob]) -> list[Path]:
    """A submission's own files in its jobs folder `root`: sweep.json (the manifest), and each job's config,
    results file, journal and outcome file (its logs are under root/logs)."""
    from asyncbench.engine.jobs import outcome_path

    owned = [root / MANIFEST]
    for job in jobs:
        owned += [job.config, job.results, Path(f"{job.results}.journal"), outcome_path(job.results)]
    return owned


def check_not_owned(request: RunRequest, owned: Iterable[Path], owner: Path | None) -> None:
    """InputError for an output that names one of `owned` or a file under `owner`'s logs (submission_files)."""
    mine = {path.resolve() for path in owned}
    for option, path in _written(request):
        if not path or owner is None:
            continue
        target = Path(path).resolve()
        if target in mine or target.is_relative_to(owner / "logs"):
            raise InputError(f"{option} {path}: is one of the submission's own files ({target.name}); gathering leaves them as they are")


def check_outputs(
    request: RunRequest, sweeps: bool, command: str = "run", owned: Iterable[Path] = (), owner: Path | None = None
) -> list[tuple[Writer, str]]:
    """Every output file, proven writable before anything runs (InputError: exit 2, not after a long run); no two
    name one file, and none names a file the run reads. `sweeps`: whether a selected experiment sweeps a param
    (a plot draws sweeps); `command`: the one that asked (`run`, `gather`), named where a package it needs is
    missing; `owned`, `owner`: as check_names takes them. Returns the writers to write with, and where."""
    check_names(request, command, owned, owner)
    outputs = [(WRITERS[name], path) for name, path in request.outputs.files.items() if path]
    for writer, path in outputs:
        writer.check_destination(path)
        if writer.needs_sweep and not sweeps:
            raise InputError(f"{writer.option} draws sweeps, and no selected experiment has one (sweep: in a config, or --set KEY=V1,V2)")
    if request.outputs.json_path:
        files.check([("-o", request.outputs.json_path)])
        _check_no_journal(request.outputs.json_path)
    return outputs


def check_files(written: Sequence[tuple[str, str | None]], read: Sequence[tuple[str, str | None]]) -> None:
    """Outputs that are not a results file and its writers' (`ab -o`, `--markdown`): writable, distinct, and none
    names one of `read` (results.outputs.check)."""
    files.check(written, inputs=read)


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
