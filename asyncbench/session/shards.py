"""A CI matrix's shards: `run --shard I/N` runs one part of the plan here, `merge` puts the N files together.

`run --shard I/N` is `run` (session.local) on the I-th of N parts of the
plan (engine.shards cuts it the same way on every machine), its results
file saying which shard of which plan it is, its checks each judged at the
confidence they have in the whole plan's run. `merge SHARD.json...` reads
the N files (each checked as `record` checks a file), proves they belong
together (results.shards) and that each gives only the cases its shard
planned (results.shard_plan), and concludes the merged report as `run` does:
written, judged (--baseline, --strict), recorded (each shard's own file,
under its own machine), exit code and all.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Callable, Sequence

from asyncbench.errors import InputError
from asyncbench.results import schema, shard_plan, shards
from asyncbench.results.model import Report
from asyncbench.results.plan import Config
from asyncbench.session import preflight, reading, recorder, spine
from asyncbench.session.requests import RunRequest
from asyncbench.session.saver import Saver
from asyncbench.verdicts import outcome

if TYPE_CHECKING:
    from asyncbench.engine.shards import Selected

Say = Callable[[str], None]


def select(the_plan: Config, request: RunRequest, say: Say) -> Selected | None:
    """The part of `the_plan` that `--shard` asks for (None: no --shard, the whole plan). A shard with no case (more
    shards than the plan has cases) is said, and runs nothing: its file, empty, still tells `merge` it was there."""
    if request.shard is None:
        return None
    if request.gate.baseline:
        raise InputError(
            f"--shard {request.shard} with --baseline: compare the merged report (`asyncbench merge SHARD.json... --baseline FILE`)"
        )
    from asyncbench.engine import shards as cut  # the cut asks each backend which devices it runs on: no framework import

    selected = cut.select(the_plan, request.shard)
    if selected.empty:
        say(
            f"shard {request.shard} has no case: the plan has {selected.shard.plan_cases}, fewer than {request.shard.count} "
            "shards; nothing to measure here (the results file says so, for `asyncbench merge`)"
        )
    return selected


def _loaded(paths: Sequence[str], request: RunRequest) -> list[tuple[str, Report]]:
    """Every shard's file read and checked; none may be one of the outputs (written at the end, it would be lost)."""
    given = {Path(path).resolve(): path for path in paths}
    for option, path in [("-o", request.outputs.json_path), *request.outputs.files.items()]:
        if path and Path(path).resolve() in given:
            raise InputError(f"{option} {path}: is a shard's results file that merge reads; name another output")
    return [(path, schema.load(path)) for path in paths]


def merge(paths: Sequence[str], request: RunRequest, say: Say) -> spine.Session:
    """`asyncbench merge SHARD.json...` (see the module's docstring)."""
    preflight.check_names(request, "merge")  # a mistyped option is said before a file is read
    loaded = _loaded(paths, request)
    shard_plan.proven(shards.ordered(loaded))  # each file gives only what its shard planned, before anything is merged
    report = shards.merged(loaded)
    sweeps = any(e.get("sweep") for e in report.config.get("experiments", ()) if isinstance(e, dict))
    outputs = preflight.check_outputs(request, sweeps, "merge")
    recording = request.recording
    store = recorder.open_history(recording.history, "merge --record") if recording.record else None
    base_report = reading.load_results(request.gate.baseline, say) if request.gate.baseline else None
    saver = Saver(request.outputs.json_path, say)
    saver.finish(report)
    by_shard: list[tuple[Report, str | None]] = [(shard, path) for path, shard in loaded]  # each under its own machine

    def record(verdict: outcome.Outcome) -> outcome.Outcome:
        return recorder.record(store, by_shard, recording.label, say, verdict, jobs=True) if store is not None else verdict

    view, verdict = spine.conclude(report, request.gate, outputs, base_report, saver.written, saver.unsaved, say, record)
    return spine.Session(view, verdict.code, interrupted=False)  # a shard cut short: its lost cases are error rows (exit 3)
