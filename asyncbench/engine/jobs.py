"""A plan as jobs, and what each job runs on its node.

`split` cuts a plan into jobs (one per experiment, or per case) and
`planned` lists the cases a job is to run, both before anything runs and
without a framework: a device spec such as `cuda` stays as given, resolved
on the node. `NodeRun` is the job itself: `asyncbench run` on the job's own
config, so a node measures what a run there would; submitit pickles it, and
calls its `checkpoint` on preemption.

How a job ended is the small JSON file it leaves beside its results
(`write_outcome`, `read_outcome`): its run's exit code, or its failure's one
line. `gather` reads that, checked as data, and never submitit's result
pickles: unpickling runs whatever code a pickle names, and a jobs folder is
read as untrusted input.

GPUs (`gpus_named`): a job sees the GPUs its scheduler gives it, numbered
from cuda:0 in the job — Slurm's allocation (`gpus_per_node` or a GPU
`gres`), or, on the local executor, the first `gpus_per_node` GPUs this
process sees (`NodeRun.gpus`), one GPU job at a time (`NodeRun.lock`). So a
plan whose cases run on a GPU and asks for none, or names a GPU past those
a job is given, is refused before anything is submitted.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import re
import signal
import stat
import subprocess
import sys
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator, Mapping

from asyncbench import inputs
from asyncbench.backends import BACKENDS
from asyncbench.engine import expansion
from asyncbench.errors import EXIT_TERMINATED, InputError, describe_failure
from asyncbench.results import writing
from asyncbench.results.merge import PlannedCase
from asyncbench.results.plan import Config, ExecutorSettings, Experiment

#: a job preempted this often is not requeued again: once is a hiccup, twice a partition that will not let it finish
MAX_REQUEUES = 1
#: how long a run past its time limit has, after SIGTERM, to save the cases it finished before it is killed
STOP_GRACE_S = 30.0
#: what a job stopped at its time limit by NodeRun returns (as `timeout` exits; no `asyncbench run` exits so)
LIMIT_CODE = 124
#: a requeued count's file at most: the count, a newline, and room for a CRLF
REQUEUED_MAX_BYTES = 16
#: what a job's outcome file is named by, beside its results file (NAME.json -> NAME.outcome.json)
OUTCOME_SUFFIX = ".outcome.json"
#: a failure's reason as a job keeps it: one line, as an error row shows it (a traceback's last line fits)
REASON_MAX_CHARS = 400
#: an outcome file's size at most: a reason of REASON_MAX_CHARS, each character JSON-escaped at worst (\uXXXX, 6 bytes),
#: and its key; a larger file is none a job wrote, and is not read
OUTCOME_MAX_BYTES = 6 * REASON_MAX_CHARS + 64
#: the exit codes a job's run can end with: a process's 0..255, or -N where signal N killed it (as Popen says)
EXIT_CODES = range(-64, 256)


# --- on the node ------------------------------------------------------------------------------------------------


class NodeRun:
    """What a job runs on its node: `asyncbench run` on the job's config into the job's results file; returns its
    exit code. submitit calls `checkpoint` when Slurm signals preemption: the job is requeued (MAX_REQUEUES times),
    starting over, and the run after a requeue leaves a file saying so (`requeued`).

    On the local executor (cluster.LocalScheduler) a job says itself which GPUs its run sees: `gpus` is the run's
    CUDA_VISIBLE_DEVICES (None: as the scheduler set it, Slurm from the job's allocation); a GPU job holds `lock`
    (a file's flock, released when its process ends however it ends) while it runs, so that GPU jobs run one at a
    time, and `limit_s` bounds its run from when it holds the lock, its time limit not spent waiting for it."""

    def __init__(
        self,
        config_path: str,
        results_path: str,
        cwd: str,
        requeued: int = 0,
        *,
        uses_gpu: bool = False,
        gpus: str | None = None,
        lock: str | None = None,
        limit_s: float | None = None,
    ):
        self.config_path, self.results_path, self.cwd, self.requeued = config_path, results_path, cwd, requeued
        self.uses_gpu, self.gpus, self.lock, self.limit_s = uses_gpu, gpus, lock, limit_s

    def placed(self, gpus: str, lock: str | None, limit_s: float | None) -> NodeRun:
        """This run as the local executor gives it: `gpus` visible, holding `lock` (None: none), bounded."""
        return NodeRun(
            self.config_path, self.results_path, self.cwd, self.requeued, uses_gpu=self.uses_gpu, gpus=gpus, lock=lock, limit_s=limit_s
        )

    def command(self) -> list[str]:
        return [sys.executable, "-m", "asyncbench", "run", self.config_path, "-o", self.results_path, "--no-progress"]

    def environment(self, inherited: Mapping[str, str]) -> dict[str, str] | None:
        """The run's environment: the job's own (None), or it with CUDA_VISIBLE_DEVICES set to `gpus`."""
        return None if self.gpus is None else {**inherited, "CUDA_VISIBLE_DEVICES": self.gpus}

    def __call__(self) -> int:
        """The run's exit code, also left in the job's outcome file (`write_outcome`); a failure (submitit's "not
        requeued" from its signal handler, a run that cannot start) leaves its one line there and is raised on. A
        requeue (SystemExit from submitit's handler) leaves none: the requeued attempt writes its own."""
        outcome_path(self.results_path).unlink(missing_ok=True)  # an earlier attempt's, if any: this one says its own
        try:
            code = self._attempt()
        except Exception as exc:
            write_outcome(self.results_path, describe_failure(exc))
            raise
        write_outcome(self.results_path, code)
        return code

    def _attempt(self) -> int:
        if self.requeued:
            requeued_path(self.results_path).write_text(f"{self.requeued}\n", encoding="utf-8")
            left = Path(self.results_path + ".journal")  # the interrupted attempt's cases: this one measures them anew
            if left.exists():
                left.replace(Path(self.results_path).with_suffix(f".attempt{self.requeued}.journal"))
        try:
            with _holding(self.lock):
                return _run(self.command(), self.cwd, self.environment(os.environ), self.limit_s)
        except _Cancelled:
            return EXIT_TERMINATED  # as a run cancelled while it ran says it

    def checkpoint(self, *args: Any, **kwargs: Any) -> Any:
        """submitit's hook on preemption: what to run when requeued (None: not requeued)."""
        if self.requeued >= MAX_REQUEUES:
            return None
        from submitit.helpers import DelayedSubmission

        again = NodeRun(self.config_path, self.results_path, self.cwd, self.requeued + 1, uses_gpu=self.uses_gpu)
        return DelayedSubmission(again if self.gpus is None else again.placed(self.gpus, self.lock, self.limit_s))


class _Cancelled(Exception):
    """SIGTERM (a cancel: scancel, or the local scheduler's) came while the job waited for its lock."""


def _cancelled(signum: int, frame: Any) -> None:
    raise _Cancelled


@contextlib.contextmanager
def _holding(lock: str | None) -> Iterator[None]:
    """`lock`'s flock held (waiting for it) while the body runs; nothing without one. While it waits, SIGTERM
    ends the wait (_Cancelled): submitit's task lets SIGTERM pass, so a job cancelled before its run started
    would otherwise wait on and run later."""
    if lock is None:
        yield
        return
    import fcntl

    with open(lock, "a+b") as handle:
        main = threading.current_thread() is threading.main_thread()  # only the main thread may set a handler
        kept = signal.signal(signal.SIGTERM, _cancelled) if main else None
        try:
            fcntl.flock(handle, fcntl.LOCK_EX)  # released when the file is closed, or when this process dies
        finally:
            if main:
                signal.signal(signal.SIGTERM, signal.SIG_DFL if kept is None else kept)
        yield


def _run(command: list[str], cwd: str, env: Mapping[str, str] | None, limit_s: float | None) -> int:
    """The run's exit code; LIMIT_CODE where it ran past `limit_s`, and was stopped as Slurm stops a job at its
    limit: SIGTERM (it saves the cases it finished), then SIGKILL after STOP_GRACE_S. An exception here (submitit's
    requeue exits from its signal handler) kills the run, as subprocess.run does."""
    process = subprocess.Popen(command, cwd=cwd, env=None if env is None else dict(env))
    try:
        try:
            return process.wait(timeout=limit_s)
        except subprocess.TimeoutExpired:
            print(f"asyncbench: the job reached its time limit ({limit_s:g} s with its GPUs): stopped", file=sys.stderr, flush=True)
            process.terminate()
            try:
                process.wait(timeout=STOP_GRACE_S)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
            return LIMIT_CODE
    except BaseException:
        process.kill()
        process.wait()
        raise


# --- the jobs of a plan ------------------------------------------------------------------------------------------

#: characters a job's name keeps from its experiment or case (the rest become '-'): it names files on every node
_UNSAFE = re.compile(r"[^A-Za-z0-9_.=+-]+")


def _slug(text: str) -> str:
    return _UNSAFE.sub("-", text).strip("-")[:80] or "job"


def _runs_on(backend: str, spec: str) -> bool:
    """Whether a backend runs on a device spec's kind at all, asked of its class: no framework is imported."""
    return BACKENDS[backend].runs_on(spec)


def split(config: Config, per: str) -> list[tuple[str, Config]]:
    """The plan's jobs, each (a name unique in the submission, its own plan): one per experiment, or one per case (an
    experiment on one backend, one device spec and one sweep point; a swept param keeps its one value swept, so the
    case's id is the id it has in the whole plan)."""
    jobs: list[tuple[str, Config]] = []

    def add(label: str, experiment: Experiment) -> None:
        jobs.append(
            (f"{len(jobs) + 1:03d}-{_slug(label)}", dataclasses.replace(config, experiments=(experiment,), executor=ExecutorSettings()))
        )

    for experiment in config.experiments:
        if per == "experiment":
            add(experiment.name, experiment)
            continue
        for slot in experiment.cases(_runs_on):
            swept = {name: (slot.point[name],) for name in experiment.sweep}
            one = dataclasses.replace(experiment, backends=(slot.backend,), devices=(slot.device,), params=dict(slot.point), sweep=swept)
            add("-".join([experiment.name, slot.backend, slot.device, *(f"{k}={v[0]}" for k, v in swept.items())]), one)
    return jobs


def planned(config: Config) -> list[PlannedCase]:
    """The cases a job's plan makes, known before it runs: device specs stay as given (a node resolves `cuda`)."""
    workloads = expansion.workloads_of(config)
    cases = []
    for experiment in config.experiments:
        for slot in experiment.cases(_runs_on):
            case = expansion.case_of(experiment, workloads[experiment.workload], slot.backend, slot.device, slot.point)
            cases.append(PlannedCase(case.id, case.experiment, case.workload, case.backend, case.device, case.params))
    return cases


#: a param's value that names a GPU beside the case's device (multi_device's partner: cuda:1); `cuda` is cuda:0
_GPU_NAME = re.compile(r"cuda(?::(\d+))?")


@dataclass(frozen=True)
class GpuUse:
    """The GPUs a plan's cases name, known before anything runs."""

    #: the cases that run on a GPU: their device, or a param (a partner), names one
    named: tuple[str, ...] = ()
    #: the cases on `auto` with a framework that runs on a GPU: they use the GPUs a job is given, if any
    auto: tuple[str, ...] = ()
    #: the highest GPU index a case names (cuda:N; `cuda` is cuda:0), and the first case naming it; -1: none
    highest: int = -1
    highest_case: str | None = None

    @property
    def any(self) -> bool:
        return bool(self.named or self.auto)


def gpus_named(config: Config) -> GpuUse:
    """Which of the plan's cases run on a GPU, and the highest GPU index they name (no framework is imported)."""
    named, auto, highest, highest_case = [], [], -1, None
    for case in planned(config):
        names = [case.device, *(value for value in case.params.values() if isinstance(value, str))]
        indices = [int(found[1] or 0) for name in names if (found := _GPU_NAME.fullmatch(name))]
        if indices:
            named.append(case.id)
            if max(indices) > highest:
                highest, highest_case = max(indices), case.id
        elif case.device == "auto" and _runs_on(case.backend, "cuda"):
            auto.append(case.id)
    return GpuUse(tuple(named), tuple(auto), highest, highest_case)


def check_gpus(use: GpuUse, settings: ExecutorSettings, given_as: Mapping[str, str]) -> str | None:
    """What the executor settings give a plan's GPU cases, checked before anything is submitted: InputError where a
    case runs on a GPU and the jobs are given none (Slurm would run it without one, the local executor hide them),
    or a case names a GPU past those a job is given (a job numbers its GPUs from cuda:0); a warning (returned) where
    Slurm is asked for GPUs no case uses, which each job would hold idle. `given_as`: how the user gave each key."""
    from asyncbench.engine import slurm

    option = given_as.get("gpus_per_node", "--gpus-per-node")
    count = slurm.asked_gpus(settings) if settings.kind == "slurm" else settings.gpus_per_node
    where = f"--executor {settings.kind}"
    if use.named and count == 0:
        how = "--gpus-per-node N, or --sbatch gres=gpu:N" if settings.kind == "slurm" else "--gpus-per-node N"
        cases = f"{len(use.named)} case(s) run on a GPU ({use.named[0]}{', ...' if len(use.named) > 1 else ''})"
        raise InputError(f"{cases}, but {where} gives its jobs no GPU: ask for them with {how}")
    if count is not None and use.highest >= count:
        asked = f"{option} {count}" if settings.gpus_per_node else f"as {given_as.get('sbatch', '--sbatch')} asks"
        raise InputError(
            f"{use.highest_case} names cuda:{use.highest}, but {where} gives each job {count} GPU(s) ({asked}), "
            f"which the job numbers cuda:0 to cuda:{count - 1}"
        )
    if settings.kind == "slurm" and count != 0 and not use.any:
        return f"asyncbench: warning: {where} asks Slurm for GPUs that no case runs on (every case is on the CPU): each job holds them idle"
    return None


def requeued_path(results_path: str | Path) -> Path:
    return Path(results_path).with_suffix(".requeued")


def requeued(results_path: str | Path) -> int:
    """How often a job's run was requeued after preemption (0: never), as the run after a requeue left it; a file
    that says no count (damaged, edited, not a small regular file) is taken as none: it adds a note to rows, it must
    not stop the gathering."""
    path = requeued_path(results_path)
    try:
        if not path.is_file() or path.stat().st_size > REQUEUED_MAX_BYTES:  # a FIFO, /dev/zero: never read
            return 0
        said = path.read_text(encoding="utf-8").strip()
    except (OSError, UnicodeDecodeError):
        return 0
    return int(said) if said.isascii() and said.isdigit() and len(said) <= len(str(MAX_REQUEUES)) + 1 else 0


def outcome_path(results_path: str | Path) -> Path:
    return Path(results_path).with_suffix(OUTCOME_SUFFIX)


def write_outcome(results_path: str | Path, ended: int | str) -> None:
    """A job's outcome, beside its results file, written whole or not at all: its run's exit code (an int), or its
    failure's reason (a str: on one line, control characters shown as escapes, cut to REASON_MAX_CHARS)."""
    if isinstance(ended, int):
        document: dict[str, int | str] = {"exit_code": ended}
    else:
        line = " ".join(ended.split()) or "failed without a word"
        document = {"error": "".join(c if c.isprintable() else ascii(c)[1:-1] for c in line)[:REASON_MAX_CHARS]}
    writing.atomic_write(outcome_path(results_path), json.dumps(document) + "\n")


class Refused(str):
    """A failure's reason that is the outcome file's refusal, not the job's own word: the file is none a job writes,
    so how the job ended is unknown, and what its results file says is not taken either (gather makes its cases
    error rows with this reason, never rows of a job it counts as failed)."""


def read_outcome(results_path: str | Path) -> tuple[bool, int | str] | None:
    """How a job ended, as its outcome file says: (True, its run's exit code) or (False, its failure's reason); None:
    it has left none (not ended, or it died before it could). A file a job would not have written (not a regular
    file, too large, not JSON, other keys, types or bounds) is (False, a line saying so): read as data, never run."""
    path = outcome_path(results_path)
    try:
        info = path.stat()
    except FileNotFoundError:
        return None
    except OSError as exc:
        return False, Refused(f"{path.name}: cannot be read ({exc.strerror})")
    refused = f"{path.name}: not a job's outcome file"
    if not stat.S_ISREG(info.st_mode) or info.st_size > OUTCOME_MAX_BYTES:
        return False, Refused(f"{refused} (a regular file of at most {OUTCOME_MAX_BYTES} bytes)")
    try:
        document = inputs.read_json(inputs.read_text(path, what="job's outcome file", limit_bytes=OUTCOME_MAX_BYTES))
    except (InputError, ValueError):
        return False, Refused(f"{refused} (not JSON)")
    if isinstance(document, dict) and document.keys() == {"exit_code"}:
        code = document["exit_code"]
        if type(code) is int and code in EXIT_CODES:
            return True, code
    elif isinstance(document, dict) and document.keys() == {"error"}:
        reason = document["error"]
        if isinstance(reason, str) and 0 < len(reason) <= REASON_MAX_CHARS and reason.isprintable():
            return False, reason
    return False, Refused(f'{refused} ({{"exit_code": {EXIT_CODES.start}..{EXIT_CODES.stop - 1}}} or {{"error": one printable line}})')
