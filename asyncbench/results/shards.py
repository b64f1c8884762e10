"""A plan cut into N shards for a CI matrix, and the N shards' results files put back together into one report.

`run --shard I/N` measures the I-th of N parts of a plan; each of a matrix's
jobs runs one. The cut (`assign`) is deterministic: it reads only the plan's
cases in plan order and what each is expected to cost, so every machine of
the matrix makes the same cut without talking to the others (no hashing, no
randomness, no clock). Each shard's file says which shard of which plan it
is (model.ShardOf: index, count, a digest of the whole plan). `merged`
checks the N files belong together (one plan, one asyncbench, each shard
once, none missing) before it puts them into one report, each row naming the
machine it ran on, as a Slurm submission's gathering does (results.merge).

A shard's file may have been edited on its way from a CI runner: `merge`
proves first that each file gives only the cases its shard planned
(results.shard_plan), and `merged` takes a case two shards measured from the
shard that planned it as it ran.
"""

from __future__ import annotations

import dataclasses
import hashlib
import heapq
import json
import re
from dataclasses import dataclass
from typing import Any, Mapping, Sequence

from asyncbench.errors import InputError
from asyncbench.results import merge
from asyncbench.results.model import MAX_SHARDS, PlannedCase, Result, ShardOf
from asyncbench.results.schema import Report

#: what --shard reads: this job's shard and how many there are, e.g. 2/4
SHARD = re.compile(r"(\d{1,6})/(\d{1,6})")
#: the word merged error rows and the report's facts name a shard by (results.merge says "shard 2/4 ended ...")
EXECUTOR = "shard"


@dataclass(frozen=True)
class Shard:
    """Which of a matrix's shards this job runs: `index` of `count`, counted from 1 (as a matrix lists them)."""

    index: int
    count: int

    def __str__(self) -> str:
        return f"{self.index}/{self.count}"


def parse(text: str) -> Shard:
    """`--shard I/N` read; InputError (one line naming the shard) for anything but 1 <= I <= N <= MAX_SHARDS."""
    found = SHARD.fullmatch(text.strip())
    if found is None:
        raise InputError(f"--shard {text[:40]!r}: expected I/N, this job's shard of N counted from 1, e.g. --shard 2/4")
    index, count = int(found[1]), int(found[2])
    if count < 1:
        raise InputError(f"--shard {text}: N is how many shards the plan is cut into, at least 1")
    if count > MAX_SHARDS:
        raise InputError(f"--shard {text}: at most {MAX_SHARDS} shards (a CI matrix runs at most {MAX_SHARDS} jobs)")
    if index < 1:
        raise InputError(f"--shard {text}: shards count from 1: the first of {count} is 1/{count}")
    if index > count:
        raise InputError(f"--shard {text}: there are only {count} shards: I is 1 to {count}")
    return Shard(index, count)


def assign(costs: Sequence[int], count: int) -> tuple[int, ...]:
    """The shard (1 to `count`) of each case, given each case's expected cost, in plan order.

    Longest expected cost first (ties: plan order), each case to the shard with the least cost so far (ties: the
    fewest cases, then the lowest index): Graham's LPT rule, within 4/3 of the best cut. With equal costs it deals
    the cases out in turn, so shard sizes differ by at most one. Costs are whole numbers (milliseconds), so the
    sums, and with them the cut, are exact on every machine."""
    loads = [(0, 0, shard) for shard in range(1, count + 1)]  # (cost so far, cases so far, shard): a heap
    chosen = [0] * len(costs)
    for case in sorted(range(len(costs)), key=lambda i: (-costs[i], i)):
        load, cases, shard = heapq.heappop(loads)
        chosen[case] = shard
        heapq.heappush(loads, (load + costs[case], cases + 1, shard))
    return tuple(chosen)


#: a case's expected cost is counted in whole milliseconds, so that the cut is exact arithmetic on every machine
MS_PER_S = 1000


def cost(max_time_s: float) -> int:
    """What a case is expected to cost in the cut: its sampling's time limit (the only cost a plan states), in ms."""
    return round(max_time_s * MS_PER_S)


def identity(case: PlannedCase, settings: Mapping[str, Any], expect: Sequence[str]) -> dict[str, Any]:
    """What makes a case the case it is, for the plan's digest: its id, work, params, settings and checks. The run
    makes the plan's digest with it (engine.shards), `merge` remakes it from a shard's file (`proven`)."""
    return {
        **{field.name: getattr(case, field.name) for field in dataclasses.fields(PlannedCase)},
        "params": dict(case.params),
        "settings": dict(settings),
        "expect": list(expect),
    }


def digest(cases: Sequence[Mapping[str, Any]]) -> str:
    """sha256 (hex) of a plan's cases, in plan order, each a JSON-able mapping: keys sorted, so the digest depends
    on what the cases are, never on how a dict happened to be built."""
    text = json.dumps(list(cases), sort_keys=True, separators=(",", ":"), default=str, allow_nan=True)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


# --- the shards' files put together ------------------------------------------------------------------------------


def _shard_of(path: str, report: Report) -> ShardOf:
    if report.shard is None:
        raise InputError("not a shard's results (its run had no --shard I/N): merge takes the files of `run --shard`", location=path)
    shard = report.shard
    if not 1 <= shard.index <= shard.count <= MAX_SHARDS:
        raise InputError(f"shard {shard} is no shard (I is 1 to N, N at most {MAX_SHARDS})", location=path)
    return shard


def ordered(loaded: Sequence[tuple[str, Report]]) -> list[tuple[str, Report]]:
    """The shards' files in shard order, once every one is proven to belong: the shards of one plan, run by one
    asyncbench, each shard once and none missing. InputError naming the file (or the missing shard) otherwise."""
    if not loaded:
        raise InputError("merge: no shard's results given")
    first_path, first = loaded[0]
    head = _shard_of(first_path, first)
    seen: dict[int, str] = {}
    for path, report in loaded:
        shard = _shard_of(path, report)
        if shard.count != head.count:
            raise InputError(
                f"shard {shard} of {shard.count} shards, where {first_path} is shard {head}: one matrix's shards share N", location=path
            )
        if shard.plan != head.plan:
            raise InputError(
                f"shard {shard} of another plan than {first_path}'s (plan {shard.plan[:12]}, {shard.plan_cases} cases; "
                f"{first_path}: plan {head.plan[:12]}, {head.plan_cases} cases): every shard must run the same configs and options",
                location=path,
            )
        if (report.tool_version, report.schema_version) != (first.tool_version, first.schema_version):
            raise InputError(
                f"shard {shard} was run by asyncbench {report.tool_version} (results schema {report.schema_version}), {first_path} by "
                f"{first.tool_version} (schema {first.schema_version}): every shard must run the same asyncbench",
                location=path,
            )
        if shard.index in seen:
            raise InputError(f"shard {shard} given twice: {seen[shard.index]} is shard {shard} too", location=path)
        seen[shard.index] = path
    missing = [index for index in range(1, head.count + 1) if index not in seen]
    if missing:
        given = ", ".join(f"{index}/{head.count} ({seen[index]})" for index in sorted(seen))
        names = ", ".join(f"{index}/{head.count}" for index in missing)
        shards = "shards" if len(missing) > 1 else "shard"
        raise InputError(f"{shards} {names} missing: {len(missing)} of {head.count} not given (given: {given})")
    return sorted(loaded, key=lambda one: _shard_of(*one).index)


def _places(shards: Sequence[tuple[str, Report]]) -> dict[str, int]:
    """Each planned case's id -> its place in the whole plan (model.ShardOf.positions)."""
    return {
        case.id: place
        for _, report in shards
        if report.shard
        for case, place in zip(report.shard.cases, report.shard.positions, strict=False)
    }


def _position(row: Result, places: Mapping[str, int], shards: Sequence[tuple[str, Report]]) -> int:
    """Where a merged row stands in the whole plan: the place of the planned case it became (its id; or a device spec
    resolved where it ran, cuda -> cuda:0), -1 for none."""
    if row.id in places:
        return places[row.id]
    for _, report in shards:
        for case in report.shard.cases if report.shard else ():
            if merge.covers(row, case):
                return places.get(case.id, -1)
    return -1


def _own(shards: Sequence[tuple[str, Report]]) -> list[tuple[str, Report, tuple[PlannedCase, ...]]]:
    """Each shard's report and planned cases, less a row whose case another shard planned as it ran and measured
    too (this shard's `cuda` became the other's `cuda:0`): the case is taken from the shard that planned it. The
    cases such a row covered are no longer this shard's to finish (a shard cut short gets no error row for them)."""
    exact = {case.id: path for path, report in shards for case in (report.shard.cases if report.shard else ())}
    measured = {(path, row.id) for path, report in shards for row in report.results}
    own = []
    for path, report in shards:
        shard = _shard_of(path, report)
        theirs = [exact.get(row.id, path) != path and (exact[row.id], row.id) in measured for row in report.results]
        if not any(theirs):
            own.append((path, report, shard.cases))
            continue
        given = tuple(row for row, other in zip(report.results, theirs, strict=True) if not other)
        dropped = [row for row, other in zip(report.results, theirs, strict=True) if other]
        planned = tuple(case for case in shard.cases if not any(merge.covers(row, case) for row in dropped))
        own.append((path, dataclasses.replace(report, results=given), planned))
    return own


def merged(loaded: Sequence[tuple[str, Report]]) -> Report:
    """One report of a plan's N shards (`ordered` first): every shard's rows, each naming its machine; a shard cut
    short (interrupted) gives an error row for each case it did not finish; a case two shards both measured (two
    device specs that resolved to one device) is kept once: from the shard that planned it as it ran (`cuda:0`,
    where another's `cuda` became `cuda:0`), else from the first shard, as the whole plan's run keeps it. The files
    are read as they are: `merge` proves first that each gives only what its shard planned (shard_plan.proven)."""
    shards = ordered(loaded)
    ends = []
    for path, report, planned in _own(shards):
        state = "interrupted" if report.interrupted else "finished"
        ends.append(merge.JobEnd(path, str(report.shard), EXECUTOR, state, report.interrupted, path, planned, report))
    first = shards[0][1]
    head = _shard_of(shards[0][0], first)
    facts = {
        "executor": EXECUTOR,
        "plan": head.plan,
        "plan_cases": head.plan_cases,
        "jobs": [
            {"name": path, "shard": str(report.shard), "run_id": report.run_id, "state": end.state}
            for (path, report), end in zip(shards, ends, strict=True)
        ],
    }
    report = merge.merge(str(first.config.get("name", "")), first.config, ends, facts)
    seen: set[str] = set()
    once = []
    places = _places(shards)
    for row in sorted(report.results, key=lambda row: _position(row, places, shards)):  # plan order: as the whole plan's run
        if row.id not in seen:
            seen.add(row.id)
            once.append(row)
    return dataclasses.replace(report, results=_plan_error(once, shards), interrupted=any(r.interrupted for _, r in shards))


def _plan_error(rows: Sequence[Result], shards: Sequence[tuple[str, Report]]) -> tuple[Result, ...]:
    """The rows with each check's family-wise false-alarm rate the whole plan's: a shard's checks share its part of
    it (engine.shards: theirs of the plan's checks, each check at its unsharded confidence), so the merged report
    says the rate the unsharded run says (the sum of the shards' parts), not one shard's part of it."""
    parts = [next((c.family_error for r in report.results for c in r.checks if c.family_error is not None), 0.0) for _, report in shards]
    whole = sum(parts)
    if not whole:
        return tuple(rows)
    return tuple(
        dataclasses.replace(
            row, checks=tuple(dataclasses.replace(c, family_error=whole) if c.family_error is not None else c for c in row.checks)
        )
        if row.checks
        else row
        for row in rows
    )
