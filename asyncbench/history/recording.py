"""Recording a run: its row, its cases, a point per quantity in its machine's series, their change points found again.

A results report and an `ab` file become one Recording (what is stored:
the run's key, facts and case entries); `record` stores it in the writing
transaction its caller opened (history.store: one per run, so a crash
midway leaves the store as it was). Recording a run touches only its own
series (its machine's) and finds their change points again over their newest
CHANGE_WINDOW points (changes found earlier, before that window, are kept),
so reading the history never reruns the detection.
"""

from __future__ import annotations

import collections
import datetime
import json
from dataclasses import asdict, dataclass
from typing import Any, Mapping, Sequence

from asyncbench.history import again, changes, clock, discount, keys, machine, model, point_rules, reading, recorded, tables
from asyncbench.history.model import ChangePoint
from asyncbench.history.reading import CHUNK, Table
from asyncbench.host import git
from asyncbench.results import fields
from asyncbench.results.ab_file import ABCase, ABFile
from asyncbench.results.ab_file import Ratio as ABRatio
from asyncbench.results.model import Check, Result
from asyncbench.results.paired import VARIANT
from asyncbench.results.schema import Report

# Change points are looked for again, when a run is recorded, in each series it added to, over the series' newest
# this many points: twice Otava's window (changes.WINDOW), the most it compares a point with when it splits. A run
# of 50 cases adds to 400 series, and Otava takes 1 to 3 ms on 100 points (about ten times that on 1,000), so
# recording stays under a second however long the history grows (benchmarks/history_scale.py --record).
CHANGE_WINDOW = 2 * changes.WINDOW
# A change within a window's first this many points has less than Otava's window before it there: it was judged
# while it was newer, with that much before it, and stays as found then.
CHANGE_GUARD = changes.WINDOW
# A change found within this many points after one kept from the guard is that one again, its split moved by the
# points that came since (Otava's split of a gradual step shifts by a point or two): not a second change.
CHANGE_NEAR = 5
# The base's commit in an `ab` series' name (ab:NAME@BASE), as the `ab` file names it (`ab` writes 10 hex digits,
# session.sides; docs/guides/history.md says so), cut to as many as `git log --oneline` shows at most.
BASE_SHOWN = 12


@dataclass(frozen=True)
class Recorded:
    """What recording one report did: `new` is False when the run was already in the store."""

    run: int
    new: bool
    points: int
    #: where the run was already there: what of this file's content differs from what was recorded of it ('' none)
    differs: str = ""


@dataclass(frozen=True)
class CaseEntry:
    """One case as the store records it, from a results file or from an `ab` file: the case as its file holds it
    (which case, the results.model.CaseIdentity both share; how it ended), and what each
    records of its own (checks, traces, quantities)."""

    case: Result | ABCase
    checks: list[dict[str, Any]]
    traces: dict[str, str]
    quantities: list[dict[str, Any]]


@dataclass(frozen=True)
class Recording:
    """One run as the store records it: its key, when it was made and by which asyncbench, its machine's facts
    (`git_sha` the revision it ran), and its cases."""

    key: keys.RunKey
    created: str
    version: str
    environment: Mapping[str, Any]
    entries: Sequence[CaseEntry]
    #: tables.RUN, or tables.AB for an `ab` file's run (its points paired ratios head/base)
    kind: str = tables.RUN


def of_report(report: Report) -> Recording:
    """What recording a results report stores."""
    environment = report.environment
    entries = [
        CaseEntry(result, [_check(c) for c in result.checks], dict(result.traces), recorded.quantities(result)) for result in report.results
    ]
    return Recording(keys.of_report(report), report.created, report.tool_version, environment, entries)


def of_ab(data: ABFile) -> Recording:
    """What recording an `asyncbench ab` results file stores (read and checked by results.ab_file, each case with
    what it ran): a run of the head side, on the head's machine, whose quantities are each compared variant's and
    metric's paired ratio head/base (`ab:NAME`, unit x, > 1 slower) with its interval, and whose checks are the
    verdicts. Kept apart from the series of plain runs: a paired ratio is not a median of one side."""
    environment = dict(data.environment)
    environment["git_sha"] = data.revision
    # a ratio is head against its base: against another base it is another quantity, not a change in this one
    against = f"@{data.base_revision[:BASE_SHOWN]}" if data.base_revision else ""
    entries = [CaseEntry(case, [_ab_check(r) for r in case.ratios], {}, _paired_quantities(case, against)) for case in data.cases]
    return Recording(keys.of_ab(data), data.created, data.tool_version, environment, entries, kind=tables.AB)


def _paired_quantities(case: ABCase, against: str) -> list[dict[str, Any]]:
    """An `ab` case's quantities: each ratio that was measured, `ab:NAME` (against its base: `@BASE`)."""
    return [
        {
            "variant": r.name if r.kind == VARIANT else "",
            "quantity": f"{changes.PAIRED_PREFIX}{r.name}{against}",
            "unit": changes.PAIRED_UNIT,
            "value": r.ratio,
            "low": r.ratio_ci[0] if r.ratio_ci else None,
            "high": r.ratio_ci[1] if r.ratio_ci else None,
        }
        for r in case.ratios
        if r.ratio is not None
    ]


def record(table_of: Table, connection: Any, recording: Recording, label: str | None, source: str | None) -> Recorded:
    """Store one run in the writing transaction `connection` (history.database.writing): its row, its cases, a
    point per recorded quantity in its machine's series (made where new), and those series' change points found
    again. A run whose key is already there is not stored twice."""
    import sqlalchemy as sa

    runs, cases, points = table_of("runs"), table_of("cases"), table_of("points")
    key, environment = recording.key, recording.environment
    _check_points(recording)
    existing = connection.execute(sa.select(sa.func.min(runs.c.id)).where(runs.c.run_key.in_(key.all))).scalar()
    if existing is not None:
        return Recorded(run=existing, new=False, points=0, differs=again.differs(table_of, connection, existing, recording.entries))
    dated = git_facts(str(environment.get("git_sha") or "") or None)
    now = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")
    run = connection.execute(
        runs.insert().values(
            run_key=key.key,
            created=recording.created,
            recorded=now,
            kind=recording.kind,
            ordered_at=clock.ordered_at(recording.created, now),  # a clock that was ahead makes no run the latest
            label=label,
            revision=environment.get("git_sha"),
            branch=dated.get("branch"),
            commit_time=dated.get("commit_time"),
            host=environment.get("hostname"),
            environment=json.dumps(environment, sort_keys=True, default=str),
            version=recording.version,
            source=source,
        )
    ).inserted_primary_key[0]
    rows = []
    for entry in recording.entries:
        which = entry.case
        info = machine.describe(environment, which.backend, which.device)
        fingerprint = machine.fingerprint(info)
        case = connection.execute(
            cases.insert().values(
                run_id=run,
                case_id=which.id,
                machine=fingerprint,
                workload=which.workload,
                backend=which.backend,
                device=which.device,
                params=json.dumps(dict(which.params), sort_keys=True, default=str),
                status=str(which.status),
                reason=which.reason,
                checks=json.dumps(entry.checks) if entry.checks else None,
                traces=json.dumps(entry.traces) if entry.traces else None,
            )
        ).inserted_primary_key[0]
        for quantity in entry.quantities:
            key_of = (fingerprint, which.id, quantity["variant"], quantity["quantity"])
            rows.append((key_of, quantity["unit"], info, {"run_id": run, "case_pk": case, **_measured(quantity)}))
    ids = _series_ids(table_of, connection, [(key_of, unit, info) for key_of, unit, info, _ in rows])
    if rows:
        connection.execute(points.insert(), [{"series_id": ids[key_of], **values} for key_of, _, _, values in rows])
    added = collections.Counter(ids[key_of] for key_of, _, _, _ in rows)  # series -> its new points (one, as a rule)
    _count(table_of, connection, added)
    kinds = {ids[key_of]: (key_of[3], unit) for key_of, unit, _, _ in rows}  # what sets each one's floor
    refresh_changes(table_of, connection, sorted(added), kinds)
    return Recorded(run=run, new=True, points=len(rows))


def _count(table_of: Table, connection: Any, added: Mapping[int, int]) -> None:
    """Each series' length grows by the points it got: `runs` is its point count, read by `series`."""
    series = table_of("series")
    grown: dict[int, list[int]] = {}
    for series_id, count in added.items():
        grown.setdefault(count, []).append(series_id)
    for count, ids in grown.items():
        ids.sort()
        for start in range(0, len(ids), CHUNK):
            chunk = ids[start : start + CHUNK]
            connection.execute(series.update().where(series.c.id.in_(chunk)).values(runs=series.c.runs + count))


def _series_ids(
    table_of: Table, connection: Any, wanted: Sequence[tuple[tuple[str, str, str, str], str, dict[str, Any]]]
) -> dict[Any, int]:
    """The id of each wanted series (machine, case, variant, quantity), made where it is new; other machines'
    series of the same cases are not among them."""
    import sqlalchemy as sa

    series = table_of("series")
    ids: dict[Any, int] = {}
    named = {key for key, _, _ in wanted}
    machines = sorted({key[0] for key in named})
    cases = sorted({key[1] for key in named})
    for start in range(0, len(cases), CHUNK):
        query = sa.select(series.c.id, series.c.machine, series.c.case_id, series.c.variant, series.c.quantity).where(
            series.c.machine.in_(machines), series.c.case_id.in_(cases[start : start + CHUNK])
        )
        for row in connection.execute(query):
            key = (row.machine, row.case_id, row.variant, row.quantity)
            if key in named:
                ids[key] = row.id
    for key, unit, info in wanted:
        if key not in ids:
            ids[key] = connection.execute(
                series.insert().values(
                    machine=key[0],
                    case_id=key[1],
                    variant=key[2],
                    quantity=key[3],
                    unit=unit,
                    machine_info=json.dumps(info, sort_keys=True),
                )
            ).inserted_primary_key[0]
    return ids


def refresh_changes(
    table_of: Table, connection: Any, series_ids: Sequence[int], kinds: Mapping[int, tuple[str, str]] | None = None
) -> None:
    """Find the change points of these series again over their newest CHANGE_WINDOW points. A series longer than
    that keeps the changes found before the window and in its first CHANGE_GUARD points, as found then.

    `kinds` is each series' (quantity, unit), which sets the smallest change called in it (changes.min_magnitude:
    a paired ratio of an `ab` file is not a run's median); read from the store where not given."""
    import sqlalchemy as sa

    if kinds is None:
        kinds = _kinds(table_of, connection, series_ids)
    # what bounds a step (history.model.is_bound) is drawn, not searched: a slack near 0 has no ratio, a reading is a word
    series_ids = [series_id for series_id in series_ids if not model.is_bound(kinds[series_id][0])]
    # one more: whether the window is the whole series; each point held to its quantity's range, as `history` holds it
    variants = _variants(table_of, connection, series_ids)
    ranges = {series_id: point_rules.range_of(variants[series_id], *kinds[series_id]) for series_id in series_ids}
    found = reading.newest(table_of, connection, series_ids, CHANGE_WINDOW + 1, ranges)
    table = table_of("changes")
    stored: dict[int, list[int]] = {}
    for start in range(0, len(series_ids), CHUNK):
        chunk = list(series_ids[start : start + CHUNK])
        for row in connection.execute(sa.select(table.c.series_id, table.c.run_id).where(table.c.series_id.in_(chunk))):
            stored.setdefault(row.series_id, []).append(row.run_id)
    machines = reading.machine_of(table_of, connection, series_ids, CHANGE_WINDOW + 1)
    for series_id in series_ids:
        shown = found.get(series_id, [])
        if not shown:
            continue
        whole = len(shown) <= CHANGE_WINDOW
        shown = shown[-CHANGE_WINDOW:]
        judged = discount.judged(*kinds[series_id], shown, machines[series_id]) if series_id in machines else None
        searched = judged[0] if judged is not None else shown  # the runs on a moved machine left out
        since = shown[0].run if whole else shown[CHANGE_GUARD].run
        before = stored.get(series_id, [])
        if any(run >= since for run in before):
            connection.execute(table.delete().where(table.c.series_id == series_id, table.c.run_id >= since))
        position = {point.run: index for index, point in enumerate(searched)}
        kept = [position[run] for run in before if run < since and run in position]
        rows = [
            {"series_id": series_id, **_change_row(change)}
            for change in changes.change_points(searched, changes.min_magnitude(*kinds[series_id]))
            if change.run >= since and not any(position[change.run] - at <= CHANGE_NEAR for at in kept)
        ]
        if rows:
            connection.execute(table.insert(), rows)


def _kinds(table_of: Table, connection: Any, series_ids: Sequence[int]) -> dict[int, tuple[str, str]]:
    """Each series' (quantity, unit), CHUNK series a query."""
    import sqlalchemy as sa

    series = table_of("series")
    kinds: dict[int, tuple[str, str]] = {}
    for start in range(0, len(series_ids), CHUNK):
        query = sa.select(series.c.id, series.c.quantity, series.c.unit).where(series.c.id.in_(list(series_ids[start : start + CHUNK])))
        kinds.update({row.id: (row.quantity, row.unit) for row in connection.execute(query)})
    return kinds


def _variants(table_of: Table, connection: Any, series_ids: Sequence[int]) -> dict[int, str]:
    """Each series' variant ('' for a case's own), CHUNK series a query."""
    import sqlalchemy as sa

    series = table_of("series")
    variants: dict[int, str] = {}
    for start in range(0, len(series_ids), CHUNK):
        query = sa.select(series.c.id, series.c.variant).where(series.c.id.in_(list(series_ids[start : start + CHUNK])))
        variants.update({row.id: row.variant for row in connection.execute(query)})
    return variants


def _change_row(change: ChangePoint) -> dict[str, Any]:
    """A change point as the store's changes table holds it: its fields, by name, `run` as the runs row it points at
    (`run_id`); history.reading makes the ChangePoint back from the row."""
    row = {name: value for name, value in asdict(change).items() if name not in model.READ_FIELDS}
    row["run_id"] = row.pop("run")
    return row


def _check_points(recording: Recording) -> None:
    """Every point held to the rule its reader holds it to (reading.figures: finite, within its own interval), before
    anything is written: reading.DamagedRow naming the case and the quantity otherwise. asyncbench never writes such
    a point, so it is a file made by hand or damaged, or a bug here (the one that stored an `ab` gate's last block's
    log ratio beside its true interval), refused rather than drawn outside its own error bar."""
    for entry in recording.entries:
        for quantity in entry.quantities:
            try:
                rule = point_rules.range_of(quantity["variant"], quantity["quantity"], quantity["unit"])
                reading.figures(quantity["value"], quantity["low"], quantity["high"], held=rule)  # as the reader will
                if quantity["quantity"] == model.BOUND_READING and model.reading_word(quantity["value"]) == model.UNKNOWN_READING:
                    codes = f"0-{len(model.BOUND_READINGS) - 1}"
                    raise reading.DamagedRow(f"a reading {quantity['value']!r} where asyncbench writes one of {codes}")
                if model.is_bound(quantity["quantity"]) and quantity["unit"] == "s" and quantity["value"] < 0:
                    raise reading.DamagedRow(f"a slack of {quantity['value']:.6g} s: a side cannot grow by less than nothing")
            except reading.DamagedRow as exc:
                name = " ".join(part for part in (entry.case.id, quantity["variant"], quantity["quantity"]) if part)
                raise reading.DamagedRow(f"{name}: {exc}") from None


def _measured(quantity: dict[str, Any]) -> dict[str, Any]:
    return {"value": quantity["value"], "low": quantity["low"], "high": quantity["high"]}


def _ab_check(ratio: ABRatio) -> dict[str, Any]:
    return {
        "expect": f"ab {ratio.name} ({ratio.label})",
        "verdict": str(ratio.verdict),
        "value": ratio.ratio,
        "bounds": list(ratio.ratio_ci) if ratio.ratio_ci else None,
    }


def _check(check: Check) -> dict[str, Any]:
    return {"expect": check.expect, "verdict": str(check.verdict), "value": check.value, "bounds": check.bounds}


def git_facts(sha: str | None) -> dict[str, str]:
    """The branch and commit time of `sha` where the current directory's repository has that commit.

    `sha` comes from a file, so it reaches git (host.git) only as a commit id: hex digits (fields.is_sha; anything
    else is no revision here, not an option such as `--output=FILE`), named as `SHA^{commit}` after
    `--end-of-options`."""
    if not sha or not fields.is_sha(sha):
        return {}
    commit = sha.removesuffix(fields.DIRTY)
    time = git.commit_time(commit)
    if time is None:
        return {}
    branch = git.branch_at(commit)
    return {"commit_time": time, **({"branch": branch} if branch is not None else {})}
