"""The plan: what to run, frozen, as the spec layer hands it to the engine (`Config`: its experiments and where
they run).

"Plan" names this value only: the spec builds it from YAML and the command
line, the engine expands it into cases (engine.expansion), and results store
it (`to_dict`, a results file's `config`) beside what it yielded. Here, below
the engine and the spec alike, because both speak it. An experiment's slots
(`Experiment.cases`) and a case's identity (`Experiment.case_id`) are written
here once: running a plan, cutting it into jobs and listing a job's cases all
use them, so the ids that results files and history stores key on agree.
"""

from __future__ import annotations

import dataclasses
import itertools
from dataclasses import dataclass
from typing import Any, Callable, Mapping

from asyncbench.results import units
from asyncbench.results.model import Expectation, Settings


@dataclass(frozen=True)
class CaseSlot:
    """Where one case of an experiment goes, before anything is resolved: a sweep point on one backend and one
    device spec as written (`cuda` and `auto` are resolved where the case runs)."""

    point: Mapping[str, Any]
    backend: str
    device: str


@dataclass(frozen=True)
class Experiment:
    """One experiment: a workload with its parameters on some backends and devices."""

    name: str
    workload: str
    backends: tuple[str, ...]
    devices: tuple[str, ...]
    params: Mapping[str, Any]  # fully resolved: every param of the workload
    settings: Settings
    explicit: frozenset[str] = frozenset()  # params the config or command line set
    sweep: Mapping[str, tuple[Any, ...]] = dataclasses.field(default_factory=dict)  # param -> values, a cartesian product
    expect: tuple[Expectation, ...] = ()
    #: params set for some backends or device kinds only (`params_for:`), keyed as Param.per_backend
    params_for: Mapping[str, Mapping[str, Any]] = dataclasses.field(default_factory=dict)

    def points(self) -> list[dict[str, Any]]:
        """The params of every sweep point, in order (one point when nothing is swept)."""
        names = list(self.sweep)
        return [{**self.params, **dict(zip(names, values, strict=True))} for values in itertools.product(*self.sweep.values())]

    def cases(self, runs_on: Callable[[str, str], bool]) -> list[CaseSlot]:
        """The experiment's point x backend x device expansion, in plan order: each sweep point on every backend
        and device spec, so a swept experiment's rows read as a trend. A backend is never paired with a kind of
        device it does not run on at all (`runs_on(backend, spec)` false: cupy with cpu, numpy with cuda): that
        is no case, not a skipped one."""
        return [
            CaseSlot(point, backend, device)
            for point in self.points()
            for backend in self.backends
            for device in self.devices
            if runs_on(backend, device)
        ]

    def case_id(self, backend: str, device: str, params: Mapping[str, Any], defaults: Mapping[str, Any]) -> str:
        """A case's identity, which results files, comparisons and history stores match runs by:
        `name[backend,device,param=value...]`.

        Only swept parameters and those that differ from the workload's `defaults` appear, so an id stays short
        and stable while naming everything that changes the work, and every sweep point has its own.
        """
        changed = [f"{k}={units.param(v)}" for k, v in params.items() if k in self.sweep or v != defaults.get(k)]
        return f"{self.name}[{','.join([backend, device, *changed])}]"


def case_parts(case_id: str) -> tuple[str, str, str]:
    """What an id that Experiment.case_id wrote names before its params: (experiment, backend, device), an empty
    string for a part it lacks. For readers that hold only the id (an `ab` file's cases, a report's rows)."""
    name, _, inside = case_id.partition("[")
    backend, device = (inside.split("]")[0].split(",") + ["", ""])[:2]
    return name, backend.strip(), device.strip()


#: where a plan runs: `here` (this machine, the default), or as jobs through submitit: `local` (processes on this
#: machine, the same path as a cluster's) or `slurm`
EXECUTOR_KINDS = ("here", "local", "slurm")
#: what one job runs: an `experiment` with all its cases, or one `case` (a backend, a device and a sweep point)
JOB_UNITS = ("experiment", "case")


@dataclass(frozen=True)
class ExecutorSettings:
    """Where and how a plan's jobs run (the config's `executor:`, `--executor`, `--set executor.KEY=VALUE`)."""

    kind: str = "here"
    per: str = "experiment"
    partition: str | None = None
    gpus_per_node: int = 0
    #: Slurm's time limit per job, in minutes
    time_min: int = 60
    account: str | None = None
    #: each job alone on its node (a benchmark that shares its node measures the neighbour)
    exclusive: bool = True
    #: more sbatch options, by long name without dashes: {"qos": "high", "constraint": "h100"}; True: a flag
    sbatch: Mapping[str, str | bool] = dataclasses.field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {**dataclasses.asdict(self), "sbatch": dict(self.sbatch)}


@dataclass(frozen=True)
class Config:
    """The plan: the experiments to run, in order, and the executor that runs them (`here`, or as jobs)."""

    name: str
    source: str
    experiments: tuple[Experiment, ...]
    executor: ExecutorSettings = ExecutorSettings()
    #: measure what bounds each step-form case's step (`bound: true`, as `run --bound`: measure.perturbation)
    bound: bool = False
    #: also capture each step and time it against the ceiling (`bound_verify: jit|compile|graph`, as `run
    #: --bound-verify`; it implies `bound`); None: not asked
    bound_verify: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """The resolved config, as stored in results JSON."""
        return {
            "name": self.name,
            "source": self.source,
            "experiments": [
                {
                    "name": e.name,
                    "workload": e.workload,
                    "backends": list(e.backends),
                    "devices": list(e.devices),
                    "params": dict(e.params),
                    **({"sweep": {k: list(v) for k, v in e.sweep.items()}} if e.sweep else {}),
                    **({"expect": [x.text for x in e.expect]} if e.expect else {}),
                    **({"params_for": {k: dict(v) for k, v in e.params_for.items()}} if e.params_for else {}),
                    **dataclasses.asdict(e.settings),
                }
                for e in self.experiments
            ],
            **({"executor": self.executor.to_dict()} if self.executor.kind != "here" else {}),
            **({"bound": True} if self.bound else {}),
            **({"bound_verify": self.bound_verify} if self.bound_verify else {}),
        }
