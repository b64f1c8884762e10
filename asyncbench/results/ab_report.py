"""An `asyncbench ab` results file read back whole, as `ab` wrote it (results.paired.ABReport): what `show` renders.

`record` reads an `ab` file for the store and keeps only what the store
takes (results.ab_file); `show` renders the whole comparison again, with the
writers `ab` printed it with (report.paired): both sides' lines, every row's
medians, ratio and interval, the notes and the sync points new on head. So
the file is first held to everything results.ab_file checks, then to what
only `show` reads (the sync points new on head: a file from elsewhere may
say anything, and what it says reaches the terminal and a pull-request
comment); anything off is an InputError naming the file and the key.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any, Mapping

from asyncbench import inputs
from asyncbench.errors import InputError
from asyncbench.results import ab_file, budget, fields, recordable
from asyncbench.results.fields import At
from asyncbench.results.labels import Label
from asyncbench.results.paired import AB_SCHEMA_VERSION, ABReport, NewSync, PairedCase, PairedRatio, Side
from asyncbench.results.syncs import SYNC_KINDS, SyncKind, SyncPoint


def read_raw(path: str | Path) -> Any:
    """A JSON file's parsed content; InputError naming the file when it is unreadable or not JSON."""
    text = inputs.read_text(path, InputError, "results file")
    try:
        return inputs.read_json(text)
    except json.JSONDecodeError as exc:
        raise InputError(f"not valid JSON (truncated?): {exc.msg} at line {exc.lineno}", location=str(path)) from None
    except ValueError as exc:
        raise InputError(f"not a results file: {exc}", location=str(path)) from None


def from_dict(raw: Any, source: str) -> ABReport:
    """The `ab` report in parsed JSON (results.ab_file.is_ab), every field checked before it is taken."""
    ab_file.from_dict(raw, source)  # everything the store takes, held to its vocabulary
    at = At(source)
    top: Mapping[str, Any] = raw
    cases = [_case(case, at / "cases" / index) for index, case in enumerate(top["cases"])]
    return ABReport(
        created=top["created"],
        tool_version=str(top.get("tool_version") or ""),
        base=_side(top["base"], "base"),
        head=_side(top["head"], "head"),
        max_regression=float(top["max_regression"]),
        # files before schema 3 do not state it: `ab` has always split the one rate, budget.FAMILY_ERROR
        family_error=float(top.get("family_error") or budget.FAMILY_ERROR),
        allow_inconclusive=bool(top.get("allow_inconclusive", False)),
        idle_side=str(top.get("idle_side") or "not stated"),
        cases=tuple(cases),
        interrupted=bool(top.get("interrupted", False)),
        schema_version=int(top.get("schema_version", AB_SCHEMA_VERSION)),
        run_id=str(top.get("run_id") or ""),
    )


def _side(raw: Mapping[str, Any], name: str) -> Side:
    """A side as results.ab_file checked it (its names, variables and facts)."""
    return Side(
        name=str(raw.get("name") or name),
        revision=str(raw.get("revision") or ab_file.WORKING_TREE),
        python=str(raw.get("python") or ""),
        python_version=str(raw.get("python_version") or ""),
        environment=dict(raw.get("environment") or {}),
        facts=dict(raw.get("facts") or {}),
    )


def _number(value: Any) -> float:
    """A figure results.ab_file checked, null (not finite when written) as NaN: shown as no value."""
    return math.nan if value is None else float(value)


def _case(raw: Mapping[str, Any], at: At) -> PairedCase:
    workload, backend, device = (raw.get(key) for key in ("workload", "backend", "device"))
    problems = tuple(str(problem) for problem in raw.get("problems") or () if problem is not None)
    return PairedCase(
        id=raw["id"],
        status=raw["status"],
        reason=raw.get("reason"),
        ratios=tuple(_ratio(ratio) for ratio in raw.get("ratios") or ()),
        rounds=int(raw.get("rounds") or 0),
        elapsed_s=float(raw.get("elapsed_s") or 0.0),
        confidence=None if raw.get("confidence") is None else float(raw["confidence"]),
        lag1_autocorrelation=None if raw.get("lag1_autocorrelation") is None else float(raw["lag1_autocorrelation"]),
        blocks=int(raw.get("blocks") or 0),
        lost=bool(raw.get("lost", False)),
        problems=problems,
        needed_s=None if raw.get("needed_s") is None else float(raw["needed_s"]),
        workload=None if workload is None else str(workload),
        backend=None if backend is None else str(backend),
        device=None if device is None else str(device),
        params=None if raw.get("params") is None else dict(raw["params"]),
        new_syncs=_new_syncs(raw.get("new_syncs"), at / "new_syncs"),
        margin=None if raw.get("margin") is None else float(raw["margin"]),
    )


def _ratio(raw: Mapping[str, Any]) -> PairedRatio:
    interval = raw.get("ratio_ci")
    return PairedRatio(
        name=raw["name"],
        kind=raw["kind"],
        unit=str(raw.get("unit", "")),
        base=_number(raw.get("base")),
        head=_number(raw.get("head")),
        ratio=_number(raw.get("ratio")),
        ratio_ci=None if interval is None else (float(interval[0]), float(interval[1])),
        label=Label(raw["label"]),
        block_log_ratios=tuple(float(value) for value in raw.get("block_log_ratios") or ()),
    )


def _new_syncs(raw: Any, at: At) -> tuple[NewSync, ...] | None:
    """A case's sync points new on head (schema 5: {variant, point}, the point as results.syncs stores one); None
    where no census was taken."""
    if raw is None:
        return None
    found = []
    for index, entry in enumerate(fields.listed(raw, at)):
        where = at / index
        entry = fields.mapping(entry, where)
        found.append(NewSync(fields.name(entry.get("variant"), where / "variant"), _point(entry.get("point"), where / "point")))
    return tuple(found)


def _point(raw: Any, at: At) -> SyncPoint:
    """A sync point, each field held to what results.recordable holds a census's points to."""
    point = fields.mapping(raw, at)
    interval = fields.interval(point.get("wait_ci_s"), at / "wait_ci_s")
    calls, waits = fields.number(point.get("calls_per_step"), at / "calls_per_step"), point.get("wait_s_per_step")
    if calls < 0:
        (at / "calls_per_step").fail(f"a count of waits cannot be negative ({calls:g})")
    blocked = recordable.duration(waits, at / "wait_s_per_step")
    if blocked is None:
        (at / "wait_s_per_step").fail("expected a time in seconds, got null")
    rounds = {}
    for key in ("calls_rounds", "wait_s_rounds"):
        values = fields.optional_list(point.get(key), at / key)
        for number, value in enumerate(values):
            recordable.duration(value, at / key / number)  # a count or a time: a finite number, not negative
        rounds[key] = tuple(float(value) for value in values)
    drained = fields.optional_number(point.get("drained_per_step"), at / "drained_per_step")
    return SyncPoint(
        file=fields.name(point.get("file"), at / "file", empty=False),
        line=fields.count(point.get("line"), at / "line"),
        kind=SyncKind(fields.word(point.get("kind"), at / "kind", SYNC_KINDS)),
        call=fields.name(point.get("call"), at / "call"),
        calls_per_step=calls,
        wait_s_per_step=blocked,
        wait_ci_s=interval,
        drained_per_step=drained,
        calls_rounds=rounds["calls_rounds"],
        wait_s_rounds=rounds["wait_s_rounds"],
    )
