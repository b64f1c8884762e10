"""Who a line of a report is about: an experiment's sweep axes, a case's point on them, its backend and device.

The writers and the view name a case the same way ('n_ops=100 torch cpu'), from its results alone.
"""

from __future__ import annotations

import json
from itertools import groupby
from typing import Iterable, Sequence

from asyncbench.results import units
from asyncbench.results.model import Result


def swept_params(results: Sequence[Result]) -> list[str]:
    """The params whose value differs between an experiment's cases: its sweep axes."""
    names = list(dict.fromkeys(name for r in results for name in r.params))
    return [name for name in names if len({json.dumps(r.params.get(name), sort_keys=True) for r in results}) > 1]


def point_label(result: Result, swept: Sequence[str]) -> str:
    """'n_ops=100' for a sweep point ('' when nothing is swept)."""
    return ",".join(f"{name}={units.param(result.params.get(name))}" for name in swept)


def case_label(result: Result, swept: Sequence[str]) -> str:
    """'n_ops=100 torch cpu': who a metric line or a check belongs to."""
    return " ".join(filter(None, (point_label(result, swept), result.backend, result.device)))


def by_experiment(results: Iterable[Result]) -> list[tuple[str, list[Result]]]:
    """Results grouped by experiment, in the order they ran."""
    return [(name, list(group)) for name, group in groupby(results, key=lambda r: r.experiment)]
