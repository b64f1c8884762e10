"""The plan a CI matrix's shards share, remade from their files: each case given only by the shard that planned it.

A shard's file may have been edited on its way from a CI runner (an
artifact, a cache, a pull request's own job): a row of another shard's case
a thousand times slower, a row of a case no shard planned, a case moved
into the shard's list of planned cases. `merge` takes nothing it cannot
prove from the files alone (`proven`), before anything is merged:

- the plan is the shards' planned cases at their positions (model.ShardOf:
  cases, positions), every position of the plan's `plan_cases` planned once;
- the cut redone (shards.assign, on the cost each case's experiment gives it
  in the file's config) gives every case to the shard whose file lists it:
  a case moved from one shard's list to another's is the mover's mistake;
- the digest redone (shards.digest of each case's identity with its
  settings and checks in each file's config) is the plan every shard
  states: a setting or a check changed in one file is that file's mistake;
- each file's rows are its own shard's planned cases (merge.covers: the
  case, or its device spec resolved where it ran), each once, and a shard
  that finished has a row for every case it planned.

A file could be forged to pass only with every other shard's file forged
alike. Each mistake is one line naming the file and the case (ForgedShard,
exit 2), all of them said at once.
"""

from __future__ import annotations

import dataclasses
import itertools
import json
from dataclasses import dataclass
from typing import Any, Mapping, Sequence

from asyncbench.errors import InputError, InputErrors
from asyncbench.results import merge
from asyncbench.results.model import PlannedCase, Result, Settings, ShardOf
from asyncbench.results.schema import Report
from asyncbench.results.shards import assign, cost, digest, identity

#: the device specs a case resolves where it runs (merge.covers): its row may name another device
RESOLVED = ("auto", "cuda")
#: the most of a value from a file a message shows (a config's values are not held to the names' vocabulary)
SHOWN = 80
#: the most mistakes said a line each: a file with every row forged is said in a screenful, the rest counted
MOST_SAID = 20


class ForgedShard(InputError):
    """A shard's file that gives a case its shard did not plan, or plans what the plan does not hold: one mistake,
    naming the file and the case (a file edited on its way from a CI runner)."""


@dataclass(frozen=True)
class _Claim:
    """A file's word that its shard planned `case` at `position` in the whole plan."""

    path: str
    shard: ShardOf
    case: PlannedCase
    position: int


#: an experiment's settings and its checks' texts, as a file's config states them (the plan's digest holds both)
Experiments = dict[str, tuple[dict[str, Any], list[Any]]]


def _experiments(config: Mapping[str, Any]) -> Experiments:
    """Each experiment of a file's config (the whole plan's, as `run` stored it): its settings and its checks' texts,
    as the plan's digest holds them (engine.shards)."""
    found: Experiments = {}
    experiments = config.get("experiments")
    for experiment in experiments if isinstance(experiments, list) else ():
        if isinstance(experiment, Mapping) and isinstance(experiment.get("name"), str):
            settings = {field.name: experiment.get(field.name) for field in dataclasses.fields(Settings)}
            expect = experiment.get("expect")
            found.setdefault(experiment["name"], (settings, list(expect) if isinstance(expect, list) else []))
    return found


def _plan_cases(shards: Sequence[tuple[str, Report]]) -> int:
    """How many cases the plan has: what every file says, or, where they differ, the count whose positions the files
    fill and whose digest is the plan every shard names (else what most files say, the first file's on a tie)."""
    stated = [_stamp(path, report).plan_cases for path, report in shards]
    counted = sorted(set(stated), key=lambda count: (-stated.count(count), stated.index(count)))
    if len(counted) == 1:
        return counted[0]
    head = _stamp(*shards[0])
    for count in counted:
        filled = {
            position: case
            for path, report in shards
            for case, position in zip(_stamp(path, report).cases, _stamp(path, report).positions, strict=False)
        }
        if all(position in filled for position in range(count)):
            cases = [filled[position] for position in range(count)]
            for _, report in shards:
                experiments = _experiments(report.config)
                if digest([identity(case, *experiments.get(case.experiment, ({}, []))) for case in cases]) == head.plan:
                    return count
    return counted[0]


def _claims(shards: Sequence[tuple[str, Report]], mistakes: list[InputError]) -> tuple[int, dict[int, list[_Claim]]]:
    """How many cases the plan has, and every position of it -> the files that say their shard planned it (one, where
    nothing was forged)."""
    count = _plan_cases(shards)
    claims: dict[int, list[_Claim]] = {}
    for path, report in shards:
        shard = _stamp(path, report)
        if len(shard.cases) != len(shard.positions):
            mistakes.append(ForgedShard(f"{len(shard.positions)} positions for {len(shard.cases)} planned cases", location=path))
            continue
        beyond = [
            f"{case.id!r} at position {position}"
            for case, position in zip(shard.cases, shard.positions, strict=True)
            if not 0 <= position < count
        ]
        if shard.plan_cases != count or beyond:
            added = f": its list adds {', '.join(beyond[:3])}" + (", ..." if len(beyond) > 3 else "") if beyond else ""
            mistakes.append(
                ForgedShard(f"says plan {shard.plan[:12]} has {shard.plan_cases} cases, where it has {count}{added}", location=path)
            )
            continue
        for case, position in zip(shard.cases, shard.positions, strict=True):
            claims.setdefault(position, []).append(_Claim(path, shard, case, position))
    return count, claims


def _digests(
    shards: Sequence[tuple[str, Report]], count: int, claims: Mapping[int, list[_Claim]], mistakes: list[InputError]
) -> Experiments | None:
    """The plan's digest remade from its cases (every position planned) and each file's config: a file whose config
    does not make the plan every shard states had a setting or a check changed; where none does, a planned case
    was. Made once per distinct config (a matrix's are one). The experiments of a config that makes it, or None."""
    head = _stamp(*shards[0])
    if len(claims) < count:  # the first few positions no shard plans (found in at most len(claims) + 5 steps)
        unplanned = list(itertools.islice((position for position in range(count) if position not in claims), 6))
        said = ", ".join(map(str, unplanned[:5])) + (", ..." if len(unplanned) > 5 else "")
        mistakes.append(
            ForgedShard(f"no shard plans position {said} of plan {head.plan[:12]}'s {count} cases: a shard's planned cases were cut")
        )
        return None
    cases = [claims[position][0].case for position in range(count)]
    made: dict[str, str] = {}
    found: list[InputError] = []
    proven: Experiments | None = None
    for path, report in shards:
        experiments = _experiments(report.config)
        key = json.dumps(experiments, sort_keys=True, default=str)
        if key not in made:
            made[key] = digest([identity(case, *experiments.get(case.experiment, ({}, []))) for case in cases])
        if made[key] == head.plan:
            proven = experiments if proven is None else proven
            continue
        found.append(
            ForgedShard(
                f"its config and the shards' planned cases make plan {made[key][:12]}, not plan {head.plan[:12]} that every shard "
                "names: a setting or a check of its config was changed",
                location=path,
            )
        )
    if proven is None:
        strays = _strays(shards, claims)
        mistakes.extend(
            strays
            or [
                ForgedShard(
                    f"the shards' planned cases do not make plan {head.plan[:12]} that every shard names: a planned case's id, "
                    "params or work was changed"
                )
            ]
        )
    mistakes.extend(found if proven is not None else ())
    return proven


def _strays(shards: Sequence[tuple[str, Report]], claims: Mapping[int, list[_Claim]]) -> list[InputError]:
    """Which file lists a case its own config cannot make (where no config makes the plan's digest): an experiment
    it lacks, another workload, a backend or device it does not name, a swept param's value off the sweep, an id
    that does not name the case. (A param that is not swept may differ from the experiment's on purpose: a
    workload's default per backend, `params_for:`.)"""
    configs = {path: report.config.get("experiments") for path, report in shards}
    found: list[InputError] = []
    for position in sorted(claims):
        for claim in claims[position]:
            case, listed = claim.case, configs[claim.path]
            experiment = (
                next((e for e in listed if isinstance(e, Mapping) and e.get("name") == case.experiment), None)
                if isinstance(listed, list)
                else None
            )
            why = _stray(case, experiment)
            if why:
                found.append(ForgedShard(f"plans case {case.id!r} (position {position} of the plan), {why}", location=claim.path))
    return found


def _stray(case: PlannedCase, experiment: Mapping[str, Any] | None) -> str | None:
    """Why `experiment` (as a config stores it) cannot make `case`, or None."""
    if experiment is None:
        return f"of experiment {case.experiment!r}, which its config does not have"
    if case.workload != experiment.get("workload"):
        return f"of workload {case.workload!r}, where its config's experiment runs {_shown(experiment.get('workload'))}"
    for key, value in (("backend", case.backend), ("device", case.device)):
        if value not in (experiment.get(f"{key}s") or ()):
            return f"on {key} {value!r}, which its config's experiment does not name"
    sweep = experiment.get("sweep")
    for name, values in sweep.items() if isinstance(sweep, Mapping) else ():
        if not isinstance(values, list) or name not in case.params or case.params[name] not in values:
            return f"whose {_shown(name)} {_shown(case.params.get(name))} is no point of its config's sweep"
    if not case.id.startswith(f"{case.experiment}[{case.backend},{case.device}"):
        return f"whose id does not name its experiment {case.experiment!r} on {case.backend}, {case.device}"
    return None


def _cut(
    shards: Sequence[tuple[str, Report]],
    count: int,
    claims: Mapping[int, list[_Claim]],
    experiments: Experiments,
    mistakes: list[InputError],
) -> None:
    """The plan's cut redone: each case's cost from the config that makes the plan (`_digests`), and each position
    planned by the shard `assign` gives it to, once."""
    head = _stamp(*shards[0])
    costs = [cost(experiments[claims[position][0].case.experiment][0]["max_time_s"]) for position in range(count)]
    chosen = assign(costs, head.count)
    planner = {report.shard.index: path for path, report in shards if report.shard}
    for position in range(count):
        for claim in claims[position]:
            if claim.shard.index != chosen[position]:
                mistakes.append(
                    ForgedShard(
                        f"plans case {claim.case.id!r} (position {position} of the plan), which the plan's cut gives shard "
                        f"{chosen[position]}/{head.count} ({planner.get(chosen[position], 'not given')}), not {claim.shard}",
                        location=claim.path,
                    )
                )
        if len(claims[position]) > 1 and all(claim.shard.index == chosen[position] for claim in claims[position]):
            mistakes.append(
                ForgedShard(
                    f"plans case {claims[position][-1].case.id!r} (position {position} of the plan) twice",
                    location=claims[position][-1].path,
                )
            )


def _sameness(one: Result | PlannedCase) -> tuple[str, str, str]:
    """What a row shares with the planned case it became where its device spec was resolved (merge.covers)."""
    return (one.experiment, one.backend, json.dumps(dict(one.params), sort_keys=True, default=str))


def _identity(one: Result | PlannedCase) -> tuple[str, str, str, str, str]:
    """What a row shares with the planned case of its id: the work it ran, where, with which params."""
    return (one.experiment, one.workload, one.backend, one.device, json.dumps(dict(one.params), sort_keys=True, default=str))


def _rows(shards: Sequence[tuple[str, Report]], mistakes: list[InputError]) -> None:
    """Each file's rows are its own shard's planned cases (merge.covers), each row once; a shard that finished has
    a row for every case it planned."""
    planner = {case.id: (path, shard) for path, report in shards if (shard := report.shard) for case in shard.cases}
    for path, report in shards:
        shard = _stamp(path, report)
        mine = {case.id: case for case in shard.cases}
        resolved: dict[tuple[str, str, str], list[PlannedCase]] = {}  # device specs resolved where the case ran
        for case in shard.cases:
            if case.device in RESOLVED:
                resolved.setdefault(_sameness(case), []).append(case)
        seen: set[str] = set()
        covered: set[str] = set()
        for row in report.results:
            if row.id in seen:
                mistakes.append(ForgedShard(f"row {row.id!r} given twice", location=path))
                continue
            seen.add(row.id)
            if row.id in mine:
                covered.add(row.id)
                if _identity(row) != _identity(mine[row.id]):  # the id is a name: what ran is its experiment and params
                    mistakes.append(
                        ForgedShard(f"row {row.id!r} is not the case planned under that id (its work or params differ)", location=path)
                    )
                continue
            planned = [case for case in resolved.get(_sameness(row), ()) if merge.covers(row, case)]
            if planned:
                covered.update(case.id for case in planned)
            elif row.id in planner:
                other, theirs = planner[row.id]
                mistakes.append(
                    ForgedShard(
                        f"row {row.id!r} is shard {theirs}'s case ({other} planned it), not shard {shard}'s: merge takes it from {other}",
                        location=path,
                    )
                )
            else:
                mistakes.append(
                    ForgedShard(f"row {row.id!r} is no case of the plan (plan {shard.plan[:12]}, {shard.plan_cases} cases)", location=path)
                )
        if not report.interrupted:
            for case in shard.cases:
                if case.id not in covered:
                    mistakes.append(
                        ForgedShard(
                            f"case {case.id!r}, planned by shard {shard}, has no row though the shard finished: a row was taken out",
                            location=path,
                        )
                    )


def proven(shards: Sequence[tuple[str, Report]]) -> None:
    """That each of a plan's shards' files (`ordered` first) gives only what its shard planned (see the module's
    docstring); ForgedShard, or InputErrors of them (a line each, in file order), otherwise."""
    mistakes: list[InputError] = []
    count, claims = _claims(shards, mistakes)
    experiments = _digests(shards, count, claims, mistakes) if not mistakes else None
    if experiments is not None and not mistakes:
        _cut(shards, count, claims, experiments, mistakes)
    if not mistakes:
        _rows(shards, mistakes)
    if mistakes:
        order = {path: number for number, (path, _) in enumerate(shards)}
        mistakes.sort(key=lambda mistake: order.get(mistake.location or "", len(order)))
        if len(mistakes) > MOST_SAID:
            more = len(mistakes) - MOST_SAID
            mistakes[MOST_SAID:] = [ForgedShard(f"and {more} more mistakes of the same files (the first {MOST_SAID} are said)")]
        raise InputErrors.of(mistakes)


def _stamp(path: str, report: Report) -> ShardOf:
    """A file's shard (shards.ordered proved each file is one's)."""
    if report.shard is None:
        raise InputError("not a shard's results (its run had no --shard I/N)", location=path)
    return report.shard


def _shown(value: object) -> str:
    """A value from a file as a message shows it: its repr (control characters escaped), cut short."""
    shown = repr(value)
    return shown if len(shown) <= SHOWN else shown[: SHOWN - 3] + "..."
