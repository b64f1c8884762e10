"""Jobs' results gathered into one report: every case once, each row naming the machine it ran on.

A job that finished gives its rows as they are. A job that failed, was
cancelled, timed out or was preempted gives the rows it finished before it
ended (its results file's journal) and an error row, with the scheduler's own
state and reason, for every case it did not: a case is never lost. A job
requeued after preemption says so on its rows. Jobs whose software differs
from the others' (an asyncbench, Python or framework version, a precision
setting) keep their rows, with the difference named on each.
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from dataclasses import dataclass
from typing import Any, Mapping, Sequence

from asyncbench.results.model import ERROR, Result
from asyncbench.results.model import PlannedCase as PlannedCase  # where engine.jobs and spec.manifest name it
from asyncbench.results.schema import Report

#: environment keys that make two jobs' software differ (hardware differs on purpose: jobs on several nodes compare it)
SOFTWARE_KEYS = ("asyncbench", "python", "matmul_precision", "thread_variables", "synchronizing_variables", "gpu_variables", "git_sha")


@dataclass(frozen=True)
class JobEnd:
    """What became of one job: its results (None: it left none), how it ended, and what it was to run."""

    name: str
    job_id: str
    executor: str  # "slurm" or "local"
    state: str  # the scheduler's word: COMPLETED, "CANCELLED by 0", TIMEOUT, FINISHED...
    failed: bool
    reason: str | None
    planned: tuple[PlannedCase, ...]
    report: Report | None = None
    requeued: int = 0


def covers(row: Result, case: PlannedCase) -> bool:
    """Whether `row` is what planned `case` became (its id, or a device spec resolved where it ran)."""
    if row.id == case.id:
        return True
    # a device spec resolved on the node (cuda -> cuda:0, cuda:1; auto -> what was there) covers the rows it became
    same_case = (row.experiment, row.backend, dict(row.params)) == (case.experiment, case.backend, dict(case.params))
    return same_case and case.device in ("auto", "cuda") and (case.device == "auto" or row.device.startswith("cuda"))


def planned_rows(rows: Sequence[Result], planned: Sequence[PlannedCase]) -> tuple[list[Result], list[Result]]:
    """`rows` split into those a planned case became and those none did: a job's results are taken only for the
    cases it was to run, as `merge` takes a shard's (a row of a case it did not plan is no row of this submission)."""
    ids = {case.id for case in planned}  # a row of its case's own id is matched at once, not against every case
    kept: list[Result] = []
    unplanned: list[Result] = []
    for row in rows:
        (kept if row.id in ids or any(covers(row, case) for case in planned) else unplanned).append(row)
    return kept, unplanned


def unfinished(rows: Sequence[Result], planned: Sequence[PlannedCase]) -> list[PlannedCase]:
    """The planned cases no row covers."""
    ids = {row.id for row in rows}
    return [case for case in planned if case.id not in ids and not any(covers(row, case) for row in rows)]


def missing(end: JobEnd) -> list[PlannedCase]:
    """The cases a job that failed did not finish (its error rows); none for a job that did not fail."""
    return unfinished(end.report.results if end.report is not None else (), end.planned) if end.failed else []


def _why(end: JobEnd) -> str:
    who = {"slurm": f"Slurm job {end.job_id}", "local": f"local job {end.job_id}"}.get(end.executor, f"{end.executor} {end.job_id}")
    reason = f" ({end.reason})" if end.reason else ""
    return f"{who} ended {end.state}{reason} before this case finished"


def _software(environment: Mapping[str, Any]) -> dict[str, Any]:
    facts = {key: environment.get(key) for key in SOFTWARE_KEYS}
    if isinstance(facts["thread_variables"], Mapping):  # the GPUs a job was given are hardware, as its machine is
        facts["thread_variables"] = {k: v for k, v in facts["thread_variables"].items() if k != "CUDA_VISIBLE_DEVICES"}
    for name, framework in (environment.get("frameworks") or {}).items():
        if isinstance(framework, Mapping):
            facts[name] = framework.get("version")
    return facts


def differences(environments: Mapping[str, Mapping[str, Any]]) -> dict[str, list[str]]:
    """job name -> how its software differs from what most jobs ran ("torch 2.4.0 where the others had 2.13.0").
    A framework is compared among the jobs that recorded it: a job that did not use numpy records no numpy
    version, which is no difference."""
    software = {name: _software(env) for name, env in environments.items()}
    keys = {key for facts in software.values() for key in facts}
    said: dict[str, list[str]] = {}
    for key in sorted(keys):
        recorded = {name: facts[key] for name, facts in software.items() if key in facts}
        counts = Counter(repr(value) for value in recorded.values())
        if len(counts) < 2:
            continue
        usual = counts.most_common(1)[0][0]
        usual_value = next(value for value in recorded.values() if repr(value) == usual)
        for name, value in recorded.items():
            if repr(value) != usual:
                said.setdefault(name, []).append(f"{key} {value} where most jobs had {usual_value}")
    return said


def _machines(environments: Sequence[Mapping[str, Any]]) -> dict[str, dict[str, Any]]:
    """Each machine's environment, by its hostname; its `frameworks` the union of what its jobs recorded (each job
    records only the frameworks it used: one torch-only job beside a numpy one ran both on that machine)."""
    machines: dict[str, dict[str, Any]] = {}
    for env in environments:
        host = str(env.get("hostname"))
        machine = {**env}
        before, own = machines.get(host, {}).get("frameworks"), env.get("frameworks")
        if isinstance(before, Mapping) and isinstance(own, Mapping):
            machine["frameworks"] = {**before, **own}
        machines[host] = machine
    return machines


def merge(name: str, config: Mapping[str, Any], ends: Sequence[JobEnd], gathered: Mapping[str, Any]) -> Report:
    """One report of every job that ended (a job still queued or running has no rows yet). `gathered`: where the
    jobs were gathered from (a submission's jobs folder, executor and jobs; a matrix's shards), stored as the
    environment's `sweep` (the key keeps its old name: files written before read as they did)."""
    environments = {end.name: end.report.environment for end in ends if end.report is not None}
    differ = differences(environments)
    rows: list[Result] = []
    for end in ends:
        kept = list(end.report.results) if end.report is not None else []
        host = str(end.report.environment.get("hostname")) if end.report is not None else None
        said = tuple(f"ran with {d}" for d in differ.get(end.name, ()))
        if end.requeued:
            times = "once" if end.requeued == 1 else f"{end.requeued} times"
            said += (f"its job was preempted and requeued {times}: measured in full by the requeued run",)
        rows.extend(dataclasses.replace(r, machine=host, warnings=(*r.warnings, *said)) for r in kept)
        rows.extend(
            Result(
                c.id, c.experiment, c.workload, c.backend, c.device, dict(c.params), ERROR, reason=_why(end), machine=host, warnings=said
            )
            for c in missing(end)
        )
    machines = _machines(list(environments.values()))
    common = _common(list(environments.values()))
    environment = {**common, "machines": machines, "sweep": dict(gathered)}
    return Report.new(config, environment, tuple(rows))


def _common(environments: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """The environment facts every job shares (a fact that differs is in each machine's own environment)."""
    if not environments:
        return {}
    first = environments[0]
    return {key: value for key, value in first.items() if all(env.get(key) == value for env in environments[1:])}
