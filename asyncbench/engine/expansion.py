"""The expansion: what cases a plan (results.plan.Config) makes: each experiment's sweep points on each backend and
device, with the params a case takes there, its identity, and the reason it is skipped where its backend cannot run
(`expand`).

One expansion, read by every place cases run: a run here (engine.runner), a submission's jobs (engine.jobs), `ab`'s
sides (session.paired).
"""

from __future__ import annotations

from typing import Any, Iterator, Mapping

from asyncbench.backends import Backend
from asyncbench.results.model import Case
from asyncbench.results.plan import Config, Experiment
from asyncbench.workloads import plugins
from asyncbench.workloads.base import Workload


def workloads_of(config: Config, given: Mapping[str, Workload] | None = None) -> dict[str, Workload]:
    """Every experiment's workload by its key: the objects the caller holds (`given`), the others built in or
    loaded by reference (plugins.find: a user's workload is imported once per process)."""
    given = given or {}
    return {e.workload: given[e.workload] if e.workload in given else plugins.find(e.workload) for e in config.experiments}


def params_on(experiment: Experiment, workload: Workload, backend: str, device: str, point: Mapping[str, Any]) -> dict[str, Any]:
    """A sweep point's params for a case on `backend` and `device`: a param the config left at its default takes
    the workload's default for that backend or device kind (Param.per_backend), then `params_for:` applies."""
    params = dict(point)
    for param in workload.params:
        chosen_by_config = param.name in experiment.explicit or param.name in experiment.sweep
        if param.per_backend and not chosen_by_config and params.get(param.name) == param.default:
            params[param.name] = param.default_on(backend, device)
    kind = device.split(":")[0]
    for key in (kind, backend, f"{backend}:{kind}"):
        params.update({name: value for name, value in experiment.params_for.get(key, {}).items() if name not in experiment.sweep})
    return params


def case_of(experiment: Experiment, workload: Workload, backend: str, device: str, point: Mapping[str, Any]) -> Case:
    """The case of a sweep point on `backend` and `device` (resolved here, or a spec where a node resolves it):
    its params there (params_on) and its identity (Experiment.case_id)."""
    params = params_on(experiment, workload, backend, device, point)
    return Case(
        id=experiment.case_id(backend, device, params, workload.defaults()),
        experiment=experiment.name,
        workload=experiment.workload,
        backend=backend,
        device=device,
        params=params,
        settings=experiment.settings,
        expect=experiment.expect,
    )


def expand(
    config: Config, backends: Mapping[str, Backend], workloads: Mapping[str, Workload] | None = None
) -> Iterator[tuple[Case, str | None]]:
    """Every case of the plan `config` (Experiment.cases) with its skip reason (None: runnable), devices resolved; a
    case two device specs both resolve to (cuda and cuda:0) once. `workloads`: as workloads_of takes them."""
    found = workloads_of(config, workloads)
    seen: set[str] = set()
    for experiment in config.experiments:
        for slot in experiment.cases(lambda name, spec: backends[name].runs_on(spec)):
            devices, reason = backends[slot.backend].resolve(slot.device)
            targets = [(slot.device, reason)] if reason else [(device, None) for device in devices]
            for device, skip in targets:
                case = case_of(experiment, found[experiment.workload], slot.backend, device, slot.point)
                if case.id not in seen:
                    seen.add(case.id)
                    yield case, skip
