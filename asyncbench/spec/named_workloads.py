"""The configs the command line makes without a file: `run -w NAME` (`for_workloads`), from `-w` names resolved to
the workload registry's keys (`workload_keys`).

A file's config is read by spec.config; these are built from names alone, each workload with its defaults on the
backends its code is for, and are validated as a file's are (the same `Experiment` and `Config`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Iterable, Sequence

from asyncbench.backends import BACKENDS
from asyncbench.errors import InputError, repeated
from asyncbench.results.model import Settings
from asyncbench.results.plan import Config, Experiment
from asyncbench.spec.config import DEFAULT_DEVICES
from asyncbench.spec.schema import workload_of
from asyncbench.workloads import plugins
from asyncbench.workloads.step_form import StepWorkload


def for_workloads(keys: Sequence[str]) -> Config:
    """A config that runs the workloads with these registry keys (already resolved: `workload_keys`) with their
    defaults on every backend (`run -w NAME` without CONFIG) — a step on those its code is for (backends_for: no
    skipped row on a backend nobody asked for; -b replaces these)."""
    experiments = []
    for key in keys:
        workload = plugins.find(key)
        experiments.append(
            Experiment(
                name=workload.name,
                workload=key,
                backends=workload.backends_for(tuple(BACKENDS)) if isinstance(workload, StepWorkload) else tuple(BACKENDS),
                devices=DEFAULT_DEVICES,
                params=workload.defaults(),
                settings=Settings(),
            )
        )
    duplicated = repeated(e.name for e in experiments)
    if duplicated:
        raise InputError(f"-w names two workloads called {', '.join(map(repr, duplicated))}: run them from a config with distinct names")
    return Config(name="workloads", source="<command line>", experiments=tuple(experiments))


def workload_keys(names: Iterable[str]) -> list[str]:
    """The registry keys of `-w` names (built-in, file, module or plugin; a file relative to the working
    directory), each loaded once; InputError naming the option for a bad one."""
    keys = []
    for name in dict.fromkeys(names):
        try:
            keys.append(workload_of(name, Path.cwd())[0])
        except ValueError as exc:
            raise InputError(f"-w {name!r}: {exc}") from None
    return list(dict.fromkeys(keys))
