"""The store: runs, their cases, series of every measured quantity and their change points (SQLite or PostgreSQL).

A results file is recorded in one transaction: a crash midway leaves the
store as it was. A run is recorded once: its key is the run's own id
(keys.py), the same for a run recorded by `run --record` and for its results
file recorded again later, and different for any two runs. Recording a run
touches only its own series (its machine's) and finds their change points
again, over their newest CHANGE_WINDOW points (changes found earlier, before
that window, are kept), so reading the history never reruns the detection:
`series` reads each series' newest points, its change points and its
length, whatever the store holds.
"""

from __future__ import annotations

import collections
import contextlib
import datetime
import json
import subprocess
from dataclasses import dataclass
from typing import Any, Mapping, Sequence

from asyncbench.history import changes, database, keys, machine, tables
from asyncbench.history.database import StoreError as StoreError  # what callers of the store catch
from asyncbench.history.model import ChangePoint, Point, Series
from asyncbench.history.target import Target
from asyncbench.results import fields
from asyncbench.results.ab_file import ABFile
from asyncbench.results.ab_file import Ratio as ABRatio
from asyncbench.results.model import OK, Check, Report, Result
from asyncbench.results.paired import VARIANT

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
# The base's commit in an `ab` series' name (ab:NAME@BASE): as many hex digits as `git log --oneline` shows at most.
BASE_SHOWN = 12
# Ids per IN list (SQLite allows 32,766 parameters; PostgreSQL more): bounded lists keep every statement small.
CHUNK = 500


@dataclass(frozen=True)
class Recorded:
    """What recording one report did: `new` is False when the run was already in the store."""

    run: int
    new: bool
    points: int


@dataclass(frozen=True)
class CaseEntry:
    """One case as the store records it, from a results file or from an `ab` file."""

    case_id: str
    workload: str
    backend: str
    device: str
    params: dict[str, Any]
    status: str
    reason: str | None
    checks: list[dict[str, Any]]
    traces: dict[str, str]
    quantities: list[dict[str, Any]]


@dataclass(frozen=True)
class LatestCase:
    """A case of the latest run as the report shows it: status, checks, traces, and (variant, quantity, unit, value,
    low, high) per recorded quantity."""

    case: str
    machine: str
    status: str
    reason: str | None
    checks: tuple[dict[str, Any], ...]
    traces: dict[str, str]
    quantities: list[tuple[str, str, str, float, float | None, float | None]]


@dataclass(frozen=True)
class LatestRun:
    run: int
    created: str
    label: str | None
    revision: str | None
    branch: str | None
    host: str | None
    cases: tuple[LatestCase, ...]


class Store:
    """An open store; each method runs in a transaction of its own."""

    def __init__(self, target: Target, engine: Any, meta: Any):
        self.target = target
        self._engine = engine
        self._meta = meta

    def table(self, name: str) -> Any:
        return self._meta.tables[f"{tables.PREFIX}{name}"]

    def record(self, report: Report, label: str | None = None, source: str | None = None) -> Recorded:
        """Record a results report (one transaction); a run already in the store is not recorded again."""
        environment = report.environment
        entries = [
            CaseEntry(
                case_id=result.id,
                workload=result.workload,
                backend=result.backend,
                device=result.device,
                params=dict(result.params),
                status=str(result.status),
                reason=result.reason,
                checks=[_check(c) for c in result.checks],
                traces=dict(result.traces),
                quantities=quantities(result),
            )
            for result in report.results
        ]
        return self._record(keys.of_report(report), report.created, report.tool_version, environment, entries, label, source)

    def record_ab(self, data: ABFile, label: str | None = None, source: str | None = None) -> Recorded:
        """Record an `asyncbench ab` results file, read and checked by results.ab_file: a run of the head side, on
        the head's machine, whose quantities are each compared variant's and metric's paired ratio head/base
        (`ab:NAME`, unit x, > 1 slower) with its interval, and whose checks are the verdicts. Kept apart from the
        series of plain runs: a paired ratio is not a median of one side."""
        environment = dict(data.environment)
        environment["git_sha"] = data.revision
        # a ratio is head against its base: against another base it is another quantity, not a change in this one
        against = f"@{data.base_revision[:BASE_SHOWN]}" if data.base_revision else ""
        entries = [
            CaseEntry(
                case_id=case.id,
                workload=case.workload,
                backend=case.backend,
                device=case.device,
                params=dict(case.params),
                status=case.status,
                reason=case.reason,
                checks=[_ab_check(r) for r in case.ratios],
                traces={},
                quantities=[
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
                ],
            )
            for case in data.cases
        ]
        return self._record(keys.of_ab(data), data.created, data.tool_version, environment, entries, label, source)

    def _record(
        self,
        key: keys.RunKey,
        created: str,
        version: str,
        environment: Mapping[str, Any],
        entries: Sequence[CaseEntry],
        label: str | None,
        source: str | None,
    ) -> Recorded:
        import sqlalchemy as sa

        runs, cases, points = self.table("runs"), self.table("cases"), self.table("points")
        with self._failures("record"), database.writing(self._engine) as connection:
            existing = connection.execute(sa.select(sa.func.min(runs.c.id)).where(runs.c.run_key.in_(key.all))).scalar()
            if existing is not None:
                return Recorded(run=existing, new=False, points=0)
            git = _git_facts(str(environment.get("git_sha") or "") or None)
            run = connection.execute(
                runs.insert().values(
                    run_key=key.key,
                    created=created,
                    recorded=datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
                    label=label,
                    revision=environment.get("git_sha"),
                    branch=git.get("branch"),
                    commit_time=git.get("commit_time"),
                    host=environment.get("hostname"),
                    environment=json.dumps(environment, sort_keys=True, default=str),
                    version=version,
                    source=source,
                )
            ).inserted_primary_key[0]
            rows = []
            for entry in entries:
                info = machine.describe(environment, entry.backend, entry.device)
                fingerprint = machine.fingerprint(info)
                case = connection.execute(
                    cases.insert().values(
                        run_id=run,
                        case_id=entry.case_id,
                        machine=fingerprint,
                        workload=entry.workload,
                        backend=entry.backend,
                        device=entry.device,
                        params=json.dumps(entry.params, sort_keys=True, default=str),
                        status=entry.status,
                        reason=entry.reason,
                        checks=json.dumps(entry.checks) if entry.checks else None,
                        traces=json.dumps(entry.traces) if entry.traces else None,
                    )
                ).inserted_primary_key[0]
                for quantity in entry.quantities:
                    key_of = (fingerprint, entry.case_id, quantity["variant"], quantity["quantity"])
                    rows.append((key_of, quantity["unit"], info, {"run_id": run, "case_pk": case, **_measured(quantity)}))
            ids = self._series_ids(connection, [(key_of, unit, info) for key_of, unit, info, _ in rows])
            if rows:
                connection.execute(points.insert(), [{"series_id": ids[key_of], **values} for key_of, _, _, values in rows])
            added = collections.Counter(ids[key_of] for key_of, _, _, _ in rows)  # series -> its new points (one, as a rule)
            self._count(connection, added)
            kinds = {ids[key_of]: (key_of[3], unit) for key_of, unit, _, _ in rows}  # what sets each one's floor
            self.refresh_changes(connection, sorted(added), kinds)
            return Recorded(run=run, new=True, points=len(rows))

    def _count(self, connection: Any, added: Mapping[int, int]) -> None:
        """Each series' length grows by the points it got: `runs` is its point count, read by `series`."""
        series = self.table("series")
        grown: dict[int, list[int]] = {}
        for series_id, count in added.items():
            grown.setdefault(count, []).append(series_id)
        for count, ids in grown.items():
            ids.sort()
            for start in range(0, len(ids), CHUNK):
                chunk = ids[start : start + CHUNK]
                connection.execute(series.update().where(series.c.id.in_(chunk)).values(runs=series.c.runs + count))

    def _series_ids(self, connection: Any, wanted: Sequence[tuple[tuple[str, str, str, str], str, dict[str, Any]]]) -> dict[Any, int]:
        """The id of each wanted series (machine, case, variant, quantity), made where it is new; other machines'
        series of the same cases are not among them."""
        import sqlalchemy as sa

        series = self.table("series")
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

    def refresh_changes(self, connection: Any, series_ids: Sequence[int], kinds: Mapping[int, tuple[str, str]] | None = None) -> None:
        """Find the change points of these series again over their newest CHANGE_WINDOW points. A series longer than
        that keeps the changes found before the window and in its first CHANGE_GUARD points, as found then.

        `kinds` is each series' (quantity, unit), which sets the smallest change called in it (changes.min_magnitude:
        a paired ratio of an `ab` file is not a run's median); read from the store where not given."""
        import sqlalchemy as sa

        found = self._newest(connection, series_ids, CHANGE_WINDOW + 1)  # one more: whether the window is the whole series
        if kinds is None:
            kinds = self._kinds(connection, series_ids)
        table = self.table("changes")
        stored: dict[int, list[int]] = {}
        for start in range(0, len(series_ids), CHUNK):
            chunk = list(series_ids[start : start + CHUNK])
            for row in connection.execute(sa.select(table.c.series_id, table.c.run_id).where(table.c.series_id.in_(chunk))):
                stored.setdefault(row.series_id, []).append(row.run_id)
        for series_id in series_ids:
            shown = found.get(series_id, [])
            if not shown:
                continue
            whole = len(shown) <= CHANGE_WINDOW
            shown = shown[-CHANGE_WINDOW:]
            since = shown[0].run if whole else shown[CHANGE_GUARD].run
            before = stored.get(series_id, [])
            if any(run >= since for run in before):
                connection.execute(table.delete().where(table.c.series_id == series_id, table.c.run_id >= since))
            position = {point.run: index for index, point in enumerate(shown)}
            kept = [position[run] for run in before if run < since and run in position]
            rows = [
                {"series_id": series_id, **_change_row(change)}
                for change in changes.change_points(shown, changes.min_magnitude(*kinds[series_id]))
                if change.run >= since and not any(position[change.run] - at <= CHANGE_NEAR for at in kept)
            ]
            if rows:
                connection.execute(table.insert(), rows)

    def _kinds(self, connection: Any, series_ids: Sequence[int]) -> dict[int, tuple[str, str]]:
        """Each series' (quantity, unit), CHUNK series a query."""
        import sqlalchemy as sa

        series = self.table("series")
        kinds: dict[int, tuple[str, str]] = {}
        for start in range(0, len(series_ids), CHUNK):
            query = sa.select(series.c.id, series.c.quantity, series.c.unit).where(series.c.id.in_(list(series_ids[start : start + CHUNK])))
            kinds.update({row.id: (row.quantity, row.unit) for row in connection.execute(query)})
        return kinds

    def _newest(self, connection: Any, series_ids: Sequence[int], last: int) -> dict[int, list[Point]]:
        """Each series' newest `last` points, in run order: one indexed `ORDER BY run_id DESC LIMIT` per series, so
        a read costs the points it returns, not the points the store holds; the runs' facts are read once."""
        import sqlalchemy as sa

        points, runs = self.table("points"), self.table("runs")
        # the driver's own cursor: through the database library each of thousands of small queries costs a
        # millisecond of its own; the statement is the same, only its placeholder is the driver's
        mark = "?" if connection.dialect.paramstyle == "qmark" else "%s"
        statement = f"SELECT run_id, value, low, high FROM {points.name} WHERE series_id = {mark} ORDER BY run_id DESC LIMIT {int(last)}"
        cursor = connection.connection.driver_connection.cursor()
        raw: dict[int, list[Any]] = {series_id: [] for series_id in series_ids}
        try:
            if connection.dialect.name == "postgresql":  # one round trip for them all: a lateral join
                cursor.execute(
                    f"SELECT s.id, p.run_id, p.value, p.low, p.high FROM unnest(%s::int[]) AS s(id) CROSS JOIN LATERAL "
                    f"({statement.replace(mark, 's.id')}) p",
                    (list(series_ids),),
                )
                for series_id, *row in cursor.fetchall():
                    raw[series_id].append(tuple(row))
                raw = {series_id: rows[::-1] for series_id, rows in raw.items()}
            else:
                for series_id in series_ids:
                    cursor.execute(statement, (series_id,))
                    raw[series_id] = cursor.fetchall()[::-1]
        finally:
            cursor.close()
        run_ids = sorted({row[0] for rows in raw.values() for row in rows})
        facts: dict[int, tuple[str, str | None, str | None]] = {}
        for start in range(0, len(run_ids), CHUNK):
            query = sa.select(runs.c.id, runs.c.created, runs.c.label, runs.c.revision).where(runs.c.id.in_(run_ids[start : start + CHUNK]))
            facts.update({row.id: (row.created, row.label, row.revision) for row in connection.execute(query)})
        made: dict[int, list[Point]] = {}
        for series_id, rows in raw.items():
            points_of = made[series_id] = []
            for run, value, low, high in rows:
                created, label, revision = facts[run]
                points_of.append(Point(run, created, label, revision, value, low, high))
        return made

    def series(self, pattern: str | None = None, last: int = 100) -> list[Series]:
        """Every series whose case id contains `pattern`: its newest `last` points, all its change points, its length."""
        import sqlalchemy as sa

        series, table = self.table("series"), self.table("changes")
        query = sa.select(series).order_by(series.c.machine, series.c.case_id, series.c.variant, series.c.quantity)
        if pattern:
            query = query.where(series.c.case_id.contains(pattern, autoescape=True))
        with self._failures("read"), self._engine.connect() as connection:
            found = list(connection.execute(query))
            ids = [row.id for row in found]
            newest = self._newest(connection, ids, last)
            changed: dict[int, list[ChangePoint]] = {}
            for start in range(0, len(ids), CHUNK):
                chunk = ids[start : start + CHUNK]
                for row in connection.execute(sa.select(table).where(table.c.series_id.in_(chunk)).order_by(table.c.run_id)):
                    changed.setdefault(row.series_id, []).append(
                        ChangePoint(row.run_id, row.at, row.before, row.after, row.ratio, row.ratio_low, row.ratio_high, row.p_value)
                    )
        return [
            Series(
                case=row.case_id,
                variant=row.variant,
                quantity=row.quantity,
                unit=row.unit,
                machine=row.machine,
                machine_info=json.loads(row.machine_info),
                points=tuple(newest.get(row.id, ())),
                change_points=tuple(changed.get(row.id, ())),
                runs=row.runs,
            )
            for row in found
        ]

    def latest(self) -> LatestRun | None:
        """The run recorded last (by creation time), with its cases and their points; None in an empty store."""
        import sqlalchemy as sa

        runs, cases, points, series = self.table("runs"), self.table("cases"), self.table("points"), self.table("series")
        with self._failures("read"), self._engine.connect() as connection:
            run = connection.execute(sa.select(runs).order_by(runs.c.created.desc(), runs.c.id.desc()).limit(1)).first()
            if run is None:
                return None
            rows = connection.execute(
                sa.select(cases, series.c.variant, series.c.quantity, series.c.unit, points.c.value, points.c.low, points.c.high)
                .select_from(cases.outerjoin(points, points.c.case_pk == cases.c.id).outerjoin(series, series.c.id == points.c.series_id))
                .where(cases.c.run_id == run.id)
                .order_by(cases.c.id, points.c.id)
            ).all()
        found: dict[int, LatestCase] = {}
        for row in rows:
            case = found.get(row.id)
            if case is None:
                case = found[row.id] = LatestCase(
                    case=row.case_id,
                    machine=row.machine,
                    status=row.status,
                    reason=row.reason,
                    checks=tuple(json.loads(row.checks)) if row.checks else (),
                    traces=dict(json.loads(row.traces)) if row.traces else {},
                    quantities=[],
                )
            if row.quantity is not None:
                case.quantities.append((row.variant, row.quantity, row.unit, row.value, row.low, row.high))
        return LatestRun(run.id, run.created, run.label, run.revision, run.branch, run.host, tuple(found.values()))

    def recent(self, limit: int) -> list[Any]:
        """The newest `limit` runs, newest first: id, created, label, revision, branch, host, version."""
        import sqlalchemy as sa

        runs = self.table("runs")
        columns = (runs.c.id, runs.c.created, runs.c.label, runs.c.revision, runs.c.branch, runs.c.host, runs.c.version)
        with self._failures("read"), self._engine.connect() as connection:
            return list(connection.execute(sa.select(*columns).order_by(runs.c.created.desc(), runs.c.id.desc()).limit(limit)))

    def transaction(self) -> Any:
        """A writing transaction of this store's own (for bulk loads: benchmarks/history_scale.py)."""
        return database.writing(self._engine)

    def _failures(self, doing: str) -> contextlib.AbstractContextManager[None]:
        return database.translated(self.target, doing)


def _change_row(change: ChangePoint) -> dict[str, Any]:
    return {
        "run_id": change.run,
        "at": change.at,
        "before": change.before,
        "after": change.after,
        "ratio": change.ratio,
        "ratio_low": change.ratio_low,
        "ratio_high": change.ratio_high,
        "p_value": change.p_value,
    }


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


def quantities(result: Result) -> list[dict[str, Any]]:
    """A result's recorded quantities: each variant's clocks (median and interval), each metric with its interval."""
    if result.status != OK:
        return []
    rows = []
    for name, variant in result.variants.items():
        for clock in ("done_s", "issue_s", "device_s"):
            summary = getattr(variant, clock)
            if summary is not None:
                rows.append(
                    {
                        "variant": name,
                        "quantity": clock,
                        "unit": "s",
                        "value": summary.median,
                        "low": summary.ci_low,
                        "high": summary.ci_high,
                    }
                )
    for metric, value in result.metrics.items():
        if value is None or value != value:  # NaN: undefined this run
            continue
        bounds = result.bounds.get(metric)
        rows.append(
            {
                "variant": "",
                "quantity": metric,
                "unit": result.unit_of(metric) or "",
                "value": float(value),
                "low": bounds[0] if bounds else None,
                "high": bounds[1] if bounds else None,
            }
        )
    return rows


def _git_facts(sha: str | None) -> dict[str, str]:
    """The branch and commit time of `sha` where the current directory's repository has that commit.

    `sha` comes from a file, so it reaches git only as a commit id: hex digits (fields.is_sha; anything else is
    no revision here, not an option such as `--output=FILE`), named as `SHA^{commit}` after `--end-of-options`."""
    if not sha or not fields.is_sha(sha):
        return {}
    commit = sha.removesuffix(fields.DIRTY)
    try:
        time = subprocess.run(
            ["git", "show", "-s", "--format=%cI", "--end-of-options", f"{commit}^{{commit}}"], capture_output=True, text=True, timeout=10
        )
        branch = subprocess.run(["git", "rev-parse", "--abbrev-ref", "HEAD"], capture_output=True, text=True, timeout=10)
        head = subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return {}
    facts = {}
    if time.returncode == 0 and time.stdout.strip():
        facts["commit_time"] = time.stdout.strip()
        if head.stdout.strip() == commit and branch.returncode == 0 and branch.stdout.strip() != "HEAD":
            facts["branch"] = branch.stdout.strip()
    return facts


def open_store(target: Target, writing: bool = False) -> Store:
    """The store at `target`: refused in one line (StoreError) when it is not there (reading never makes one), is
    from a newer asyncbench, or cannot be reached; an older one is upgraded. `writing`: made where there is none,
    and proven writable now, before a run (a read-only file, folder, role or server is refused here)."""
    engine = database.connect(target, writing)
    meta = tables.metadata()
    database.prepare(target, engine, meta, writing)
    return Store(target, engine, meta)
