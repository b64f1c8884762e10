"""Jobs through submitit: a plan's experiments (or cases) as jobs on a Slurm cluster, or as processes here.

asyncbench writes no scheduler. submitit submits (sbatch, or a local process
with the same life cycle), pickles what a job runs, and on Slurm's preemption
signal checkpoints and requeues it; Slurm schedules; `sacct` says what became
of a job, in Slurm's own words. What a job runs is `asyncbench run JOB.yaml -o
JOB.json` on its node (`jobs.NodeRun`), so a node measures exactly what a run
there would, into a results file of its own that carries its own environment.
How the job's run ended is read from the outcome file it leaves beside that
(`jobs.read_outcome`), never from submitit's pickles: unpickling runs code, and
a jobs folder is untrusted. Its logs are read as bounded text.

GPUs: Slurm gives each job the GPUs it asks for (`gpus_per_node`, a GPU
`gres`), its own, numbered from cuda:0 in the job. submitit's local executor
would give every job CUDA_VISIBLE_DEVICES="" (none) or, all at once, the same
GPUs 0..N-1; so here a local job whose cases may use a GPU is given the first
`gpus_per_node` GPUs this process sees (`local_gpus`), and such jobs run one
at a time (a lock in the jobs folder), as Slurm's exclusive jobs would on
one node: two jobs on one GPU, or on its host's cores, measure each other.

submitit is an extra (`pip install 'asyncbench[cluster]'`), imported only here
and only when jobs are submitted or read.
"""

from __future__ import annotations

import abc
import contextlib
import io
import os
import stat
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator, Mapping, Sequence

from asyncbench import extras
from asyncbench.engine import slurm
from asyncbench.engine.jobs import LIMIT_CODE, NodeRun, read_outcome
from asyncbench.errors import EXIT_INTERRUPTED, EXIT_TERMINATED, InputError
from asyncbench.host import cuda_ids
from asyncbench.results.plan import ExecutorSettings

#: where submitit keeps each job's pickles and logs, under the jobs folder (%j: the job's id)
LOGS = "logs/%j"
#: how much of a job's stderr log is read for its last line: a traceback's end fits many times over, and a log grown
#: to gigabytes (or a link to a device) is never read whole
STDERR_TAIL_BYTES = 64 * 1024
#: a line from a job's log or failure as a reason keeps it: what an error row shows
LINE_MAX_CHARS = 400

#: what each phase is made of, in Slurm's states (sacct's State, first word)
QUEUED_STATES = frozenset({"PENDING", "CONFIGURING", "REQUEUED", "REQUEUE_HOLD", "REQUEUE_FED", "RESIZING"})
RUNNING_STATES = frozenset({"RUNNING", "COMPLETING", "STAGE_OUT", "SIGNALING", "SUSPENDED"})
DONE_STATES = frozenset({"COMPLETED"})
#: the phase of a job the scheduler does not list (yet): the gatherer decides how long "yet" may last
UNLISTED = "unlisted"
#: how long before a job's time limit Slurm warns it (submitit's default): time to save and requeue
SIGNAL_DELAY_S = 90
#: the file a local GPU job holds (flock) while it runs, in the jobs folder: one GPU job at a time
GPU_LOCK = "gpus.lock"


@dataclass(frozen=True)
class JobState:
    """Where a job stands: a phase (queued, running, done, failed) and the scheduler's own word for it."""

    phase: str
    #: Slurm's state as sacct says it ("CANCELLED by 0", "TIMEOUT"); for local jobs RUNNING, FINISHED, INTERRUPTED,
    #: TIMEOUT, FAILED or ENDED (local_end)
    state: str
    #: why, where the scheduler says: Slurm's Reason, the exit code, or the job's last line of stderr
    reason: str | None = None


def require_submitit() -> Any:
    """submitit, or the one line (extras.require, exit 2) saying how to install it: before anything is submitted."""
    extras.require("running as jobs (executor local or slurm)", "submitit")
    import submitit

    return submitit


# --- submitting and following -----------------------------------------------------------------------------------


class Scheduler(abc.ABC):
    """The jobs of one submission (one jobs folder): submitted, their states read, cancelled, their ends read.
    Subclasses: Slurm, local."""

    kind = ""
    #: seconds between looks at the jobs' states
    poll_s = 0.25

    def __init__(self, folder: Path, settings: ExecutorSettings, results: Mapping[str, Path] | None = None):
        """`results`: each job's results file, by its id (the manifest's), beside which the job leaves its outcome;
        `submit` adds those of the jobs it submits."""
        self.submitit = require_submitit()
        self.folder = folder
        self.logs = folder / LOGS
        self.settings = settings
        self.results: dict[str, Path] = dict(results or {})

    @abc.abstractmethod
    def executor(self) -> Any:
        """submitit's executor, with the submission's settings."""

    @abc.abstractmethod
    def submit(self, runs: Sequence[NodeRun], submitted: list[str]) -> None:
        """Submit one job per run, in order, appending each id to `submitted` (what a refusal midway leaves there
        is what to cancel)."""

    @abc.abstractmethod
    def job(self, job_id: str) -> Any:
        """submitit's handle on a job, from its id (in any process)."""

    @abc.abstractmethod
    def states(self, job_ids: Sequence[str]) -> dict[str, JobState]:
        """Where each job stands."""

    def cancel(self, job_ids: Sequence[str]) -> None:
        for job_id in job_ids:
            self.job(job_id).cancel(check=False)

    def outcome(self, job_id: str) -> tuple[bool, Any] | None:
        """How the job's run ended, as its outcome file says: (True, its exit code) or (False, its failure's reason);
        None: it has not said (not ended, or it died first). Never submitit's result pickle: see the module's doc."""
        results = self.results.get(job_id)
        return None if results is None else read_outcome(results)

    def stderr_tail(self, job_id: str) -> str | None:
        """The last line the job wrote to stderr that says something (submitit's own log lines left out), from the
        log's last STDERR_TAIL_BYTES; None where it has none, or it is no regular file."""
        path = self.job(job_id).paths.stderr
        try:
            if not stat.S_ISREG(path.stat().st_mode):  # a FIFO would block, a device never end
                return None
            with path.open("rb") as handle:
                handle.seek(max(0, handle.seek(0, os.SEEK_END) - STDERR_TAIL_BYTES))
                lines = handle.read(STDERR_TAIL_BYTES).decode("utf-8", errors="replace").splitlines()
        except OSError:
            return None
        said = [line for line in lines if line.strip() and "submitit" not in line and not line.startswith("srun:")]
        return last_line(said[-1]) if said else None


class SlurmScheduler(Scheduler):
    kind = "slurm"
    #: one sacct call for every job each time: light on a shared controller, prompt enough for jobs of minutes
    poll_s = 2.0

    def executor(self) -> Any:
        settings = self.settings
        # no requeue after a timeout: the run would start over and time out again; preemption requeues (NodeRun)
        executor = self.submitit.SlurmExecutor(folder=self.logs, max_num_timeout=0)
        parameters: dict[str, Any] = {
            "time": settings.time_min,
            "nodes": 1,
            "ntasks_per_node": 1,
            "signal_delay_s": _signal_delay_s(settings),
        }
        if settings.partition:
            parameters["partition"] = settings.partition
        if settings.gpus_per_node:
            parameters["gpus_per_node"] = settings.gpus_per_node
        if settings.account:
            parameters["account"] = settings.account
        if settings.exclusive:
            parameters["exclusive"] = True
        if settings.sbatch:
            parameters["additional_parameters"] = dict(settings.sbatch)
        executor.update_parameters(**parameters)
        return executor

    def submit(self, runs: Sequence[NodeRun], submitted: list[str]) -> None:
        """All jobs in one sbatch call, as a job array (one task per job, each its own allocation and node):
        submitit leaves 0.2 s between separate submissions to spare the controller, 20 s for a hundred jobs."""
        executor = self.executor()
        executor.update_parameters(job_name=f"asyncbench-{self.folder.name}"[:100])
        # submitit prints sbatch's refusal to stderr and raises it too: said once, in the error's one line
        with contextlib.redirect_stderr(io.StringIO()), executor.batch():
            jobs = [executor.submit(run) for run in runs]
        submitted.extend(str(job.job_id) for job in jobs)
        self.results.update((str(job.job_id), Path(run.results_path)) for job, run in zip(jobs, runs, strict=True))

    def job(self, job_id: str) -> Any:
        return self.submitit.SlurmJob(folder=self.logs, job_id=job_id)

    def states(self, job_ids: Sequence[str]) -> dict[str, JobState]:
        """One sacct call for every job: its state, reason and exit code, as Slurm says them."""
        if not job_ids:
            return {}
        # ids the manifest's reader checked (digits): joined into the option's own argument, never read as one
        listed = slurm.run(["sacct", "-X", "-n", "-P", "-o", "JobID,State,Reason,ExitCode", f"--jobs={','.join(job_ids)}"])
        found: dict[str, JobState] = {}
        for line in listed.stdout.splitlines():
            fields = line.split("|")
            if len(fields) < 4:
                continue
            job_id, state, reason, exit_code = fields[:4]
            word = state.split()[0] if state.strip() else "UNKNOWN"
            said = (reason if reason not in ("None", "") else None, f"exit code {exit_code}" if exit_code not in ("0:0", "") else None)
            found[job_id] = JobState(_phase(word), state.strip(), "; ".join(r for r in said if r) or None)
        # a job sacct does not list was only just submitted, or is not this cluster's: the caller knows since when
        return {job_id: found.get(job_id, JobState(UNLISTED, "UNKNOWN", "sacct lists no such job")) for job_id in job_ids}


def _signal_delay_s(settings: ExecutorSettings) -> int:
    """How long before the time limit a job is warned (submitit's USR2): 90 s, or a tenth of a short limit, which
    would otherwise be warned, and taken for timed out, the moment it starts."""
    return min(SIGNAL_DELAY_S, max(1, settings.time_min * 6))


def _phase(word: str) -> str:
    if word in QUEUED_STATES:
        return "queued"
    if word in RUNNING_STATES:
        return "running"
    return "done" if word in DONE_STATES else "failed"


class LocalScheduler(Scheduler):
    """submitit's local executor: each job a process on this machine, with Slurm's life cycle (pickles, logs,
    preemption signal, requeue). A job's id is its controller's process id."""

    kind = "local"

    def __init__(self, folder: Path, settings: ExecutorSettings, results: Mapping[str, Path] | None = None):
        super().__init__(folder, settings, results)
        self._jobs: dict[str, Any] = {}

    def executor(self) -> Any:
        executor = self.submitit.LocalExecutor(folder=self.logs, max_num_timeout=0)
        # no GPUs through submitit (it would give every job the same ones): each run sets its own (NodeRun.gpus)
        executor.update_parameters(timeout_min=self.settings.time_min, gpus_per_node=0, signal_delay_s=_signal_delay_s(self.settings))
        return executor

    def placed(self, runs: Sequence[NodeRun]) -> list[tuple[NodeRun, int]]:
        """Each run with the GPUs it sees and its controller's time limit in minutes: a run whose cases may use a
        GPU sees `local_gpus` and holds the jobs folder's GPU lock, its own limit counted from when it holds it (its
        controller's covers waiting for every other GPU run); any other run sees no GPU."""
        gpus = local_gpus(self.settings.gpus_per_node, os.environ)
        waiting = sum(1 for run in runs if run.uses_gpu) if gpus else 0
        limit_min = self.settings.time_min
        return [
            (run.placed(gpus, str(self.folder / GPU_LOCK), limit_min * 60.0), limit_min * waiting)
            if run.uses_gpu and gpus
            else (run.placed("", None, None), limit_min)
            for run in runs
        ]

    def submit(self, runs: Sequence[NodeRun], submitted: list[str]) -> None:
        executor = self.executor()
        with _detached_output():
            for run, timeout_min in self.placed(runs):
                executor.update_parameters(timeout_min=timeout_min)
                job = executor.submit(run)
                self._jobs[str(job.job_id)] = job  # holds the process: its state is read from it
                self.results[str(job.job_id)] = Path(run.results_path)
                submitted.append(str(job.job_id))

    def job(self, job_id: str) -> Any:
        if job_id not in self._jobs:
            self._jobs[job_id] = self.submitit.LocalJob(folder=self.logs, job_id=job_id)
        return self._jobs[job_id]

    def states(self, job_ids: Sequence[str]) -> dict[str, JobState]:
        states = {}
        gpu_jobs = (self.folder / GPU_LOCK).exists()  # some job waits, or waited, for the GPUs
        for job_id in job_ids:
            job = self.job(job_id)
            process = getattr(job, "_process", None)
            ended = self.outcome(job_id)
            if ended is not None and (process is None or process.poll() is not None):
                states[job_id] = local_end(*ended)
            elif process is not None:
                code = process.poll()
                if code is None:
                    states[job_id] = _live(int(job_id), gpu_jobs)
                else:
                    states[job_id] = JobState("failed", "ENDED", f"its process ended with code {code} and left no outcome")
            elif _alive(int(job_id)):
                states[job_id] = _live(int(job_id), gpu_jobs)
            else:
                states[job_id] = JobState("failed", "ENDED", "its process ended and left no outcome")
        return states

    def cancel(self, job_ids: Sequence[str]) -> None:
        """As `scancel` does on Slurm: SIGTERM to every process of the job (submitit's task lets it pass; the
        `asyncbench run` under it saves the cases it finished and ends, and so does the job)."""
        import psutil

        for job_id in job_ids:
            try:
                for process in psutil.Process(int(job_id)).children(recursive=True):
                    process.terminate()
            except psutil.NoSuchProcess:
                continue


def local_end(ok: bool, value: int | str) -> JobState:
    """A local job's state from its outcome file: its run's exit code (`ok`) or its failure. A run stopped by a
    signal (the submitter's Ctrl-C cancelling it, as `scancel` does) or at its time limit saves what it finished and
    ends on its own, but did not finish: INTERRUPTED or TIMEOUT (Slurm's word), never FINISHED."""
    if not ok:
        return JobState("failed", "FAILED", last_line(value))
    if value in (EXIT_INTERRUPTED, EXIT_TERMINATED):
        return JobState("failed", "INTERRUPTED", f"its run was interrupted (exit {value})")
    if value == LIMIT_CODE:
        return JobState("failed", "TIMEOUT", "its run reached the job's time limit and was stopped")
    return JobState("done", "FINISHED")


@contextlib.contextmanager
def _detached_output() -> Iterator[None]:
    """While local jobs start, this process's stdout and stderr are /dev/null, so their controllers do not inherit
    them (each job writes to its own log files): `folder=$(asyncbench run ... --no-wait)` returns at once rather
    than when the last job ends and closes the pipe it was handed."""
    sys.stdout.flush()
    sys.stderr.flush()
    kept = [os.dup(1), os.dup(2)]
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, 1)
        os.dup2(devnull, 2)
        yield
    finally:
        os.dup2(kept[0], 1)
        os.dup2(kept[1], 2)
        for descriptor in (*kept, devnull):
            os.close(descriptor)


def _live(pid: int, gpu_jobs: bool) -> JobState:
    """A live job's state: queued while its run has not started (a GPU job waiting for the one that runs), else
    running. Asked of its processes only where the submission has GPU jobs."""
    if not gpu_jobs:
        return JobState("running", "RUNNING")
    import psutil

    try:
        started = any(p.cmdline()[1:4] == ["-m", "asyncbench", "run"] for p in psutil.Process(pid).children(recursive=True))
    except psutil.Error:
        started = True  # it ended meanwhile: the next look says how
    return JobState("running", "RUNNING") if started else JobState("queued", "WAITING", "for the GPUs, held by another job")


def _alive(pid: int) -> bool:
    """Whether a job's controller still runs (an exited child not yet reaped counts as ended)."""
    import psutil

    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def local_gpus(count: int, environ: Mapping[str, str], option: str = "--gpus-per-node") -> str:
    """The CUDA_VISIBLE_DEVICES of a local job given `count` GPUs: the first `count` this process sees (its own
    CUDA_VISIBLE_DEVICES, indices or UUIDs; without one, the driver's 0..count-1), so that the job's cuda:N is this
    process's cuda:N; "" for none. InputError where this process sees fewer: without a CUDA_VISIBLE_DEVICES, those
    CUDA's driver lists (none where it cannot be asked: no driver, no GPU), asked in a child process."""
    if count == 0:
        return ""
    said = environ.get("CUDA_VISIBLE_DEVICES")
    if said is None:
        listed = cuda_ids.driver_identities()
        if listed is None or len(listed) < count:
            sees = "no CUDA driver answered" if listed is None else f"CUDA's driver lists {len(listed)}"
            raise InputError(
                f"{option} {count}: this process sees {len(listed or ())} GPU(s) ({sees}), and a local job is given GPUs it sees"
            )
        return ",".join(str(index) for index in range(count))
    seen = [entry.strip() for entry in said.split(",") if entry.strip()]
    if len(seen) < count:
        raise InputError(
            f"{option} {count}: this process sees {len(seen)} GPU(s) (CUDA_VISIBLE_DEVICES={said!r}), and a local job is given GPUs it sees"
        )
    return ",".join(seen[:count])


def last_line(text: Any) -> str | None:
    """The last line of a traceback or a log that says something, as data: control characters shown as escapes
    (never passed on to a terminal), cut to LINE_MAX_CHARS."""
    lines = [line.strip() for line in str(text).splitlines() if line.strip()]
    if not lines:
        return None
    return "".join(c if c.isprintable() else ascii(c)[1:-1] for c in lines[-1])[:LINE_MAX_CHARS]


SCHEDULERS: Mapping[str, type[Scheduler]] = {"slurm": SlurmScheduler, "local": LocalScheduler}


def scheduler(kind: str, folder: Path, settings: ExecutorSettings, results: Mapping[str, Path] | None = None) -> Scheduler:
    return SCHEDULERS[kind](folder, settings, results)
