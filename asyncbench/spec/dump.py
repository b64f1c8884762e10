"""A plan written back as a config: what a job runs on its node (`config.loads(dumps(plan))` is the same plan).

Params are written only where the config or the command line set them (or
--quick changed them), so a param left at its default still takes the workload's default for the backend
and device where it runs (Param.per_backend); every measurement setting is
written, so the job measures as the submitting command asked. A user workload
is named by its canonical reference (an absolute file path, a module or a
plugin name): a cluster's nodes see the submitting machine's files at the same
paths (a shared home or project folder), as every Slurm user relies on.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import yaml

from asyncbench.results.plan import Config, Experiment
from asyncbench.workloads import plugins


def _experiment(experiment: Experiment) -> dict[str, Any]:
    written: dict[str, Any] = {
        "name": experiment.name,
        "workload": experiment.workload,
        "backends": list(experiment.backends),
        "devices": list(experiment.devices),
    }
    defaults = plugins.find(experiment.workload).defaults()
    params = {
        name: value
        for name, value in experiment.params.items()
        if name not in experiment.sweep and (name in experiment.explicit or value != defaults.get(name))  # --quick's sizes too
    }
    if params:
        written["params"] = params
    if experiment.sweep:
        written["sweep"] = {name: list(values) for name, values in experiment.sweep.items()}
    if experiment.params_for:
        written["params_for"] = {key: dict(params) for key, params in experiment.params_for.items()}
    if experiment.expect:
        written["expect"] = [check.text for check in experiment.expect]
    settings = {name: value for name, value in dataclasses.asdict(experiment.settings).items() if value is not None}
    if "ab_margin" in settings:  # read back only as a percentage (spec.schema.coerce_setting)
        settings["ab_margin"] = f"{settings['ab_margin'] * 100:.15g}%"
    written.update(settings)
    return written


def dumps(config: Config) -> str:
    """The plan as config YAML, without its executor: the job runs where it is."""
    document = {"name": config.name, "experiments": [_experiment(e) for e in config.experiments]}
    return yaml.safe_dump(document, sort_keys=False, allow_unicode=True)
