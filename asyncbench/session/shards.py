"""A CI matrix's shards put together: `merge SHARD.json...`, the N files of `run --shard I/N` (session.local) as one.

`merge` reads the N files (each checked as `record` checks a file), proves
they belong together (results.shards) and that each gives only the cases
its shard planned (results.shard_plan), and concludes the merged report as
`run` does (session.run_conclusion): written, judged (--baseline,
--strict), recorded (each shard's own file, under its own machine), exit
code and all. The place (`Merged`) runs nothing: its work was done where
the shards ran.
"""

from __future__ import annotations

import contextlib
import dataclasses
from pathlib import Path
from typing import Any, Sequence

from asyncbench.errors import InputError
from asyncbench.report.view import ReportView
from asyncbench.results import shard_plan, shards
from asyncbench.results.model import SKIPPED
from asyncbench.results.schema import Report
from asyncbench.say import Say
from asyncbench.session import preflight, reading, spine
from asyncbench.session.requests import RunRequest
from asyncbench.session.run_conclusion import RunConclusion
from asyncbench.session.saver import Saver


def _loaded(paths: Sequence[str], request: RunRequest) -> list[tuple[str, Report]]:
    """Every shard's file read and checked; none may be one of the outputs (written at the end, it would be lost)."""
    given = {Path(path).resolve(): path for path in paths}
    for option, path in [("-o", request.outputs.json_path), *request.outputs.files.items()]:
        if path and Path(path).resolve() in given:
            raise InputError(f"{option} {path}: is a shard's results file that merge reads; name another output")
    return [(path, reading.rebuilt(Report.load(path), str(path))) for path in paths]  # made again from their figures, as any reader does


def _pools_beside(report: Report, loaded: Sequence[tuple[str, Report]]) -> Report:
    """The merged rows with what an unsharded run of the plan says of CPU thread pools side by side (engine.
    thread_pools.beside): a shard that ran one backend of an experiment saw no other beside it, so its rows lack the
    note ("threads: numpy, torch each free ...") the whole plan's run prints. Each row is judged by its own shard's
    pools; an experiment whose compared rows come from shards whose pools were sized differently is left as it is
    (results.merge already says each such shard "ran with thread_variables ...")."""
    from asyncbench.engine import thread_pools

    environment_of = {row.id: shard.environment for _, shard in loaded for row in shard.results}
    ran = [row for row in report.results if row.status != SKIPPED]
    compared = thread_pools.compared_of((row.experiment, row.backend, row.device) for row in ran)
    pools = {
        row.id: thread_pools.Pools.of_environment(environment_of[row.id], compared) for row in report.results if row.id in environment_of
    }
    sized: dict[str, set[str]] = {}
    for row in ran:
        if row.id in pools and row.backend in compared.get(row.experiment, ()):
            sized.setdefault(row.experiment, set()).add(repr(sorted(pools[row.id].variables.items())))
    rows = tuple(
        thread_pools.beside(row, pools[row.id]) if row.id in pools and len(sized.get(row.experiment, ())) == 1 else row
        for row in report.results
    )
    return dataclasses.replace(report, results=rows)


class Merged:
    """The place whose work is done: the shards' files, read and proven whole by its preflight, merged."""

    def __init__(self, paths: Sequence[str], request: RunRequest, say: Say):
        self.paths, self.request, self.say = paths, request, say
        self.loaded: list[tuple[str, Report]] = []

    def preflight(self) -> RunConclusion:
        preflight.check_names(self.request, "merge")  # a mistyped option is said before a file is read
        self.loaded = _loaded(self.paths, self.request)
        shard_plan.proven(shards.ordered(self.loaded))  # each file gives only what its shard planned, before anything is merged
        self.report = _pools_beside(shards.merged(self.loaded), self.loaded)
        sweeps = any(e.get("sweep") for e in self.report.config.get("experiments", ()) if isinstance(e, dict))
        return RunConclusion.checked(self.request, sweeps, self.say, "merge", needed_by="merge --record", by_job=True)

    def start(self, saver: Saver, stack: contextlib.ExitStack[Any]) -> None:
        pass  # nothing to start: the shards ran elsewhere

    def execute(self) -> None:
        pass

    def collect(self, interrupted: bool) -> Report:
        # a shard cut short: its lost cases are error rows already (exit 3)
        return dataclasses.replace(self.report, interrupted=True) if interrupted else self.report

    def recorded(self, report: Report) -> list[tuple[Report, str | None]]:
        return [(shard, path) for path, shard in self.loaded]  # each under its own machine

    def stopped_line(self, report: Report, kept_in: str) -> None:
        return None  # nothing was running to be cut short


def merge(paths: Sequence[str], request: RunRequest, say: Say) -> spine.Ended[ReportView]:
    """`asyncbench merge SHARD.json...` (see the module's docstring)."""
    return spine.run(Merged(paths, request, say), say)
