"""A plan as jobs, and what each job runs on its node.

`split` cuts a plan into jobs (one per experiment, or per case) and
`planned` lists the cases a job is to run, both before anything runs and
without a framework: a device spec such as `cuda` stays as given, resolved
on the node. `NodeRun` is the job itself: `asyncbench run` on the job's own
config, so a node measures what a run there would; submitit pickles it, and
calls its `checkpoint` on preemption.
"""

from __future__ import annotations

import dataclasses
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

from asyncbench.backends import BACKENDS
from asyncbench.engine import runner
from asyncbench.results.merge import PlannedCase
from asyncbench.results.plan import Config, ExecutorSettings, Experiment

#: a job preempted this often is not requeued again: once is a hiccup, twice a partition that will not let it finish
MAX_REQUEUES = 1


# --- on the node ------------------------------------------------------------------------------------------------


class NodeRun:
    """What a job runs on its node: `asyncbench run` on the job's config into the job's results file; returns its
    exit code. submitit calls `checkpoint` when Slurm signals preemption: the job is requeued (MAX_REQUEUES times),
    starting over, and the run after a requeue leaves a file saying so (`requeued`)."""

    def __init__(self, config_path: str, results_path: str, cwd: str, requeued: int = 0):
        self.config_path, self.results_path, self.cwd, self.requeued = config_path, results_path, cwd, requeued

    def __call__(self) -> int:
        if self.requeued:
            requeued_path(self.results_path).write_text(f"{self.requeued}\n", encoding="utf-8")
            left = Path(self.results_path + ".journal")  # the interrupted attempt's cases: this one measures them anew
            if left.exists():
                left.replace(Path(self.results_path).with_suffix(f".attempt{self.requeued}.journal"))
        command = [sys.executable, "-m", "asyncbench", "run", self.config_path, "-o", self.results_path, "--no-progress"]
        # an exception here (submitit's requeue exits from its signal handler) kills the run: subprocess.run does
        return subprocess.run(command, cwd=self.cwd, check=False).returncode

    def checkpoint(self, *args: Any, **kwargs: Any) -> Any:
        """submitit's hook on preemption: what to run when requeued (None: not requeued)."""
        if self.requeued >= MAX_REQUEUES:
            return None
        from submitit.helpers import DelayedSubmission

        return DelayedSubmission(NodeRun(self.config_path, self.results_path, self.cwd, self.requeued + 1))


# --- the jobs of a plan ------------------------------------------------------------------------------------------

#: characters a job's name keeps from its experiment or case (the rest become '-'): it names files on every node
_UNSAFE = re.compile(r"[^A-Za-z0-9_.=+-]+")


def _slug(text: str) -> str:
    return _UNSAFE.sub("-", text).strip("-")[:80] or "job"


def _runs_on(backend: str, spec: str) -> bool:
    """Whether a backend runs on a device spec's kind at all, asked of its class: no framework is imported."""
    return BACKENDS[backend].runs_on(spec)


def split(config: Config, per: str) -> list[tuple[str, Config]]:
    """The plan's jobs, each (a name unique in the sweep, its own plan): one per experiment, or one per case (an
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
    workloads = runner.workloads_of(config)
    cases = []
    for experiment in config.experiments:
        for slot in experiment.cases(_runs_on):
            case = runner.case_of(experiment, workloads[experiment.workload], slot.backend, slot.device, slot.point)
            cases.append(PlannedCase(case.id, case.experiment, case.workload, case.backend, case.device, case.params))
    return cases


def requeued_path(results_path: str | Path) -> Path:
    return Path(results_path).with_suffix(".requeued")


def requeued(results_path: str | Path) -> int:
    """How often a job's run was requeued after preemption (0: never), as the run after a requeue left it; a file
    that says no count (damaged, edited) is taken as none: it adds a note to rows, it must not stop the gathering."""
    try:
        said = requeued_path(results_path).read_text(encoding="utf-8").strip()
    except (OSError, UnicodeDecodeError):
        return 0
    return int(said) if said.isascii() and said.isdigit() and len(said) <= len(str(MAX_REQUEUES)) + 1 else 0
