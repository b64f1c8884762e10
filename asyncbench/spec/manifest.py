"""A submission's manifest (`sweep.json` in its jobs folder): what `gather` needs to pick a submission up, read as
untrusted input.

`run --executor ... --no-wait` writes it; `gather FOLDER` reads it, possibly
days later and after anyone could have edited it. Every value is checked
against the manifest's vocabulary before any is used — types, job ids that are
Slurm's (or a local job's process id) and nothing else, paths inside the
folder, no file or planned case that two jobs share, bounded numbers — so
that a damaged or hostile file is one line naming the key (InputError: exit 2), never a traceback, and no value reaches a
subprocess (`sacct -j`) or a path where it could be read as something else.

The file and its keys (`sweep.json`, `asyncbench_sweep`) keep the names they had when a submission was called a
sweep: folders and scripts written before read as they did.
"""

from __future__ import annotations

import dataclasses
import datetime
import json
import math
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping

from asyncbench import inputs
from asyncbench.errors import InputError
from asyncbench.results.merge import PlannedCase
from asyncbench.results.plan import ExecutorSettings
from asyncbench.spec import executor

#: the file in a jobs folder that names its submission's jobs (its old name, kept: folders written before still read)
MANIFEST = "sweep.json"
#: 1 — first version: executor, jobs [{name, job_id, config, results, cases}], submit_s
MANIFEST_VERSION = 1
#: the keys of each version's top level and of each job, and where a job's case comes from (PlannedCase)
TOP_KEYS = frozenset({"asyncbench_sweep", "created", "name", "config", "executor", "submit_s", "jobs"})
JOB_KEYS = frozenset({"name", "job_id", "config", "results", "cases"})
CASE_KEYS = frozenset(field.name for field in dataclasses.fields(PlannedCase))
#: the executors that make jobs (`here` runs in the submitting process and writes no manifest)
JOB_EXECUTORS = ("slurm", "local")
#: the most jobs a submission has: Slurm's controller holds 10,000 jobs by default (MaxJobCount), and a local
#: submission runs each job as a process of its own; a manifest naming more is none asyncbench wrote
MAX_JOBS = 100_000
#: a job's name as `jobs.split` makes it (NNN-slug): it names files on every node
_JOB_NAME = re.compile(r"[A-Za-z0-9_.=+-]{1,100}")
#: a Slurm job id (4711) or a job array's task (4711_3): digits only, so no id can be read as an option by sacct
_SLURM_ID = re.compile(r"([0-9]{1,10})(?:_([0-9]{1,10}))?")
#: Slurm keeps job and array task ids in 32 bits
MAX_SLURM_ID = 0xFFFFFFFF
#: a local job's id is its controller's process id: a positive pid_t
_LOCAL_ID = re.compile(r"[0-9]{1,10}")
MAX_PID = 2**31 - 1


@dataclass(frozen=True)
class SubmittedJob:
    """One job of a submission: its name, the scheduler's id for it (empty until it is submitted), its config and
    results file, the cases it was to run."""

    name: str
    job_id: str
    config: Path
    results: Path
    cases: tuple[PlannedCase, ...]

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "config": str(self.config),
            "results": str(self.results),
            "cases": [dataclasses.asdict(case) for case in self.cases],
            "job_id": self.job_id,
        }


@dataclass(frozen=True)
class Manifest:
    """A submission as its jobs folder names it."""

    name: str
    #: when it was submitted (UTC)
    created: datetime.datetime
    #: the whole plan, as results store it
    config: Mapping[str, Any]
    executor: ExecutorSettings
    submit_s: float
    jobs: tuple[SubmittedJob, ...]

    def to_dict(self) -> dict[str, Any]:
        return {
            "asyncbench_sweep": MANIFEST_VERSION,
            "created": self.created.isoformat(timespec="seconds"),
            "name": self.name,
            "config": dict(self.config),
            "executor": self.executor.to_dict(),
            "submit_s": self.submit_s,
            "jobs": [job.to_dict() for job in self.jobs],
        }


def write_text(manifest: Manifest) -> str:
    return json.dumps(manifest.to_dict(), indent=1)


class _Reader:
    """Checks one manifest's values, each error naming the file and the key."""

    def __init__(self, path: Path, folder: Path):
        self.path, self.folder = path, folder
        self.root: Path | None = None  # the folder resolved, once: not again for each of the jobs' paths
        self.parents: dict[Path, Path] = {}  # each folder a job's path is in, resolved once (they are all in one)

    def error(self, key: str, message: str) -> InputError:
        return InputError(message, location=str(self.path), path=key or None)

    def mapping(self, value: Any, key: str, keys: frozenset[str]) -> dict[str, Any]:
        if not isinstance(value, dict):
            raise self.error(key, f"expected an object, got {_type(value)}")
        unknown = sorted(str(k) for k in value if k not in keys)
        if unknown:
            raise self.error(key, f"unknown key(s) {', '.join(map(repr, unknown))}; a submission's manifest has: {', '.join(sorted(keys))}")
        missing = sorted(keys - set(value))
        if missing:
            raise self.error(key, f"missing key(s) {', '.join(missing)}: not a whole submission's manifest")
        return value

    def text(self, value: Any, key: str) -> str:
        if not isinstance(value, str):
            raise self.error(key, f"expected a string, got {_type(value)}")
        try:
            return executor.plain(value)
        except ValueError as exc:
            raise self.error(key, str(exc)) from None

    def inside(self, value: Any, key: str) -> Path:
        """A path inside the jobs folder (relative ones are taken from it); a path leading out is refused, and so
        is any `..` (asyncbench writes resolved paths: one with `..` was edited, whatever it resolves to)."""
        path = self.folder / self.text(value, key)
        if ".." in Path(value).parts:
            raise self.error(key, f"{value!r} climbs with '..': a submission's manifest names its files inside its jobs folder")
        try:
            resolved = self.resolved(path)
        except (OSError, RuntimeError, ValueError) as exc:
            raise self.error(key, f"cannot resolve {value!r}: {exc}") from None
        if self.root is None:
            self.root = self.folder.resolve()
        if not resolved.is_relative_to(self.root):
            raise self.error(key, f"{value!r} is outside the jobs folder {self.folder}")
        return resolved

    def resolved(self, path: Path) -> Path:
        """`path` resolved as Path.resolve does, with its folder's resolution shared by every path in it: one lstat
        for a plain file, where resolving each of a large submission's paths anew took seconds."""
        if path.is_symlink() or path.name in ("", ".", ".."):
            return path.resolve()
        if path.parent not in self.parents:
            self.parents[path.parent] = path.parent.resolve()
        return self.parents[path.parent] / path.name

    def job_id(self, value: Any, key: str, kind: str) -> str:
        """A Slurm job id (or a local job's pid): digits, bounded — nothing sacct or a signal could read otherwise."""
        text = self.text(value, key)
        if kind == "slurm":
            match = _SLURM_ID.fullmatch(text)
            if not match or any(int(part) > MAX_SLURM_ID for part in match.groups() if part is not None) or int(match[1]) == 0:
                raise self.error(key, f"{text!r} is not a Slurm job id (4711, or 4711_3 for an array's task)")
        elif not _LOCAL_ID.fullmatch(text) or not 0 < int(text) <= MAX_PID:
            raise self.error(key, f"{text!r} is not a local job's id (its process id)")
        return text

    def case(self, value: Any, key: str) -> PlannedCase:
        raw = self.mapping(value, key, CASE_KEYS)
        fields = {name: self.text(raw[name], f"{key}.{name}") for name in CASE_KEYS if name != "params"}
        if not isinstance(raw["params"], dict):
            raise self.error(f"{key}.params", f"expected an object, got {_type(raw['params'])}")
        return PlannedCase(params=raw["params"], **fields)

    def job(self, value: Any, key: str, kind: str) -> SubmittedJob:
        raw = self.mapping(value, key, JOB_KEYS)
        name = self.text(raw["name"], f"{key}.name")
        if not _JOB_NAME.fullmatch(name):
            raise self.error(f"{key}.name", f"{name!r} is not a job's name (letters, digits, _.=+-)")
        if not isinstance(raw["cases"], list):
            raise self.error(f"{key}.cases", f"expected a list, got {_type(raw['cases'])}")
        cases = tuple(self.case(case, f"{key}.cases[{i}]") for i, case in enumerate(raw["cases"]))
        return SubmittedJob(
            name,
            self.job_id(raw["job_id"], f"{key}.job_id", kind),
            self.inside(raw["config"], f"{key}.config"),
            self.inside(raw["results"], f"{key}.results"),
            cases,
        )

    def settings(self, value: Any) -> ExecutorSettings:
        """Through the executor's own table of keys: what a config's `executor:` may hold, a manifest may."""
        if not isinstance(value, dict):
            raise self.error("executor", f"expected an object, got {_type(value)}")
        settings = ExecutorSettings()
        for key, one in value.items():
            try:
                settings = executor.apply(settings, str(key), one)
            except ValueError as exc:
                raise self.error(f"executor.{key}", str(exc)) from None
        if settings.kind not in JOB_EXECUTORS:
            raise self.error("executor.kind", f"expected one of {', '.join(JOB_EXECUTORS)}, got {settings.kind!r}")
        return settings

    def created(self, value: Any) -> datetime.datetime:
        text = self.text(value, "created")
        try:
            when = datetime.datetime.fromisoformat(text)
        except ValueError:
            raise self.error("created", f"expected a date and time (ISO 8601), got {text!r}") from None
        return when if when.tzinfo else when.replace(tzinfo=datetime.timezone.utc)

    def number(self, value: Any, key: str) -> float:
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value < 0:
            raise self.error(key, f"expected a number of seconds (0 or more), got {value!r}"[:200])
        return float(value)


def _type(value: Any) -> str:
    return {dict: "an object", list: "a list", str: "a string", bool: "true or false", type(None): "null"}.get(type(value), "a number")


def _own_files(reader: _Reader, job: SubmittedJob, key: str, files: dict[Path, str]) -> None:
    """Each file `job` reads or writes (its config, its results and what its run leaves beside them: journal,
    outcome file, requeued count), claimed for `key`: InputError naming the key where one of them is claimed already.
    Two jobs given one results file were gathered as that file twice: its rows listed twice, the other's cases lost."""
    from asyncbench.engine.jobs import outcome_path, requeued_path

    results = job.results
    named = [
        (job.config, "config", ""),
        (results, "results", ""),
        (Path(f"{results}.journal"), "results", "journal"),
        (outcome_path(results), "results", "outcome file"),
        (requeued_path(results), "results", "requeued count"),
    ]
    for path, name, beside in named:
        what = f"{key}.{name}" + (f"'s {beside}" if beside else "")
        if path in files:
            said = f"its {beside} {str(path)!r}" if beside else repr(str(path))
            raise reader.error(f"{key}.{name}", f"{said} is {files[path]} too: each job's files are its own")
        files[path] = what


def read(folder: str | Path) -> Manifest:
    """The manifest of the submission in jobs folder `folder`, every value checked (InputError naming the file and the key)."""
    folder = Path(folder)
    try:
        executor.plain(str(folder))
    except ValueError as exc:
        raise InputError(f"the jobs folder: {exc}") from None
    path = folder / MANIFEST
    if not path.exists() and not path.is_symlink():
        raise InputError(f"{folder}: not a jobs folder (no {MANIFEST}; `run --executor ... --no-wait` prints one)")
    text = inputs.read_text(path, InputError, "submission's manifest", limit_bytes=inputs.MAX_MANIFEST_BYTES)
    try:
        document = inputs.read_json(text)
    except ValueError as exc:
        raise InputError(f"cannot read it: {str(exc).splitlines()[0] if str(exc) else type(exc).__name__}", location=str(path)) from None
    if not isinstance(document, dict) or "asyncbench_sweep" not in document:
        raise InputError("not an asyncbench submission's manifest", location=str(path))
    reader = _Reader(path, folder)
    version = document["asyncbench_sweep"]
    if isinstance(version, bool) or not isinstance(version, int) or version < 1:
        raise reader.error("asyncbench_sweep", f"expected a format version (1, 2, ...), got {version!r}"[:200])
    if version > MANIFEST_VERSION:
        raise InputError(f"written by a newer asyncbench (manifest format {version}); upgrade to gather it", location=str(path))
    reader.mapping(document, "", TOP_KEYS)
    settings = reader.settings(document["executor"])
    if not isinstance(document["config"], dict):
        raise reader.error("config", f"expected an object, got {_type(document['config'])}")
    if not isinstance(document["jobs"], list) or not document["jobs"]:
        raise reader.error("jobs", "expected a list of at least one job")
    if len(document["jobs"]) > MAX_JOBS:
        raise reader.error("jobs", f"{len(document['jobs'])} jobs: more than any submission has (at most {MAX_JOBS})")
    jobs: list[SubmittedJob] = []
    seen: dict[str, set[str]] = {"name": set(), "job_id": set()}
    files: dict[Path, str] = {}  # each file a job reads or writes -> the key that named it first
    cases: dict[str, str] = {}  # each planned case's id -> the key of the case that planned it first
    for index, raw in enumerate(document["jobs"]):
        key = f"jobs[{index}]"
        job = reader.job(raw, key, settings.kind)
        for what, values in seen.items():  # said at the second of a name, not after reading thousands more
            if getattr(job, what) in values:
                raise reader.error("jobs", f"more than one job has the {what.replace('_', ' ')} {getattr(job, what)}")
            values.add(getattr(job, what))
        _own_files(reader, job, key, files)
        for number, case in enumerate(job.cases):
            where = f"{key}.cases[{number}]"
            if case.id in cases:  # gathered from two jobs, its rows would be listed twice
                raise reader.error(f"{where}.id", f"{case.id!r} is {cases[case.id]}'s case too: each case is planned by one job")
            cases[case.id] = where
        jobs.append(job)
    return Manifest(
        reader.text(document["name"], "name"),
        reader.created(document["created"]),
        document["config"],
        settings,
        reader.number(document["submit_s"], "submit_s"),
        tuple(jobs),
    )
