"""A selection made a plan: the configs given (or the built-in suite, or the -w workloads), merged and overridden.

Every place a session runs in starts here (`run` here and as jobs, each of
`ab`'s sides from its own tree). Imports no framework.
"""

from __future__ import annotations

from typing import Any, Mapping

from asyncbench.errors import InputError, InputErrors, repeated
from asyncbench.results.plan import Config, ExecutorSettings
from asyncbench.session.requests import Selection


def plan(selection: Selection, executor: Mapping[str, Any] | None = None) -> Config:
    """One validated plan from the configs given (or the built-in suite, or -w workloads), with the command line's
    overrides (`executor`: its executor settings, as a config's `executor:` keys); -w names are resolved once."""
    from asyncbench.spec import config, named_workloads, overrides

    keys = named_workloads.workload_keys(selection.workloads)
    if selection.configs:
        merged = _merged(selection.configs)
    elif keys:
        merged = named_workloads.for_workloads(keys)
    else:
        merged = config.default_suite()
    return overrides.apply_overrides(
        merged,
        workloads=keys,
        backends=selection.backends,
        devices=selection.devices,
        sets=selection.sets,
        quick=selection.quick,
        executor_options=executor or {},
    )


def _merged(paths: tuple[str, ...]) -> Config:
    """The configs as one plan: every file's mistakes said (not only the first file's), experiments named once
    across them, one executor."""
    from asyncbench.spec import config

    loaded: list[Config] = []
    refused: list[InputError] = []
    for path in paths:
        try:
            loaded.append(config.load(path))
        except InputError as exc:
            refused.append(exc)
    if refused:
        raise refused[0] if len(refused) == 1 else InputErrors.of(refused)  # one file: its own error, as load raised it
    duplicated = repeated(e.name for c in loaded for e in c.experiments)
    if duplicated:
        raise InputError(f"experiment name(s) {', '.join(duplicated)} appear in more than one config")
    executors = [c.executor for c in loaded if c.executor != ExecutorSettings()]
    if any(other != executors[0] for other in executors[1:]):
        raise InputError("the configs name different executors: give the executor in one of them, or on the command line")
    return config.Config(
        name="+".join(c.name for c in loaded),
        source=", ".join(c.source for c in loaded),
        experiments=tuple(e for c in loaded for e in c.experiments),
        executor=executors[0] if executors else ExecutorSettings(),
        bound=any(c.bound for c in loaded),
        bound_verify=next((c.bound_verify for c in loaded if c.bound_verify), None),
    )
