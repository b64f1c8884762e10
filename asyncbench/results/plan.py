"""What to run, as the spec layer hands it to the engine: experiments and the plan they make, frozen.

Here, below the engine and the spec alike, because both speak it: the spec
builds a plan from YAML and the command line, the engine expands it into
cases, and results store it (`to_dict`) beside what it yielded.
"""

from __future__ import annotations

import dataclasses
import itertools
from dataclasses import dataclass
from typing import Any, Mapping

from asyncbench.results.model import Expectation, Settings


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


@dataclass(frozen=True)
class Config:
    name: str
    source: str
    experiments: tuple[Experiment, ...]

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
        }
