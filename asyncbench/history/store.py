"""The store: runs, their cases, series of every measured quantity and their change points (SQLite or PostgreSQL).

A results file is recorded in one transaction: a crash midway leaves the
store as it was. A run is recorded once: its key is the run's creation
time, host, revision and case ids, the same for a run recorded by `run
--record` and for its results file recorded again later. Recording a run
finds the change points of the series it touched again, over their newest
CHANGE_WINDOW points (changes found earlier, before that window, are kept),
so reading the history never reruns the detection: `series` reads each
series' newest points, its change points and its length, whatever the
store holds.
"""

from __future__ import annotations

import contextlib
import datetime
import hashlib
import json
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator, Mapping, Sequence

from asyncbench.errors import InputError
from asyncbench.history import changes, machine, tables
from asyncbench.history.model import ChangePoint, Point, Series
from asyncbench.history.target import Target
from asyncbench.results.model import OK, Check, Report, Result

# A locked SQLite file (another process writing) is waited for this long before the record fails.
SQLITE_BUSY_S = 10.0
# A PostgreSQL server that does not answer within this is unreachable, not slow.
CONNECT_TIMEOUT_S = 10
# Change points are looked for again, when a run is recorded, over each touched series' newest this many points:
# Otava takes 0.02 s on 1,000 points, so recording stays a second or two however long the history grows.
CHANGE_WINDOW = 1000
# Ids per IN list (SQLite allows 32,766 parameters; PostgreSQL more): bounded lists keep every statement small.
CHUNK = 500


class StoreError(InputError):
    """The store cannot be used: unreachable, locked, from a newer asyncbench, or not a store."""


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
        return self._record(run_key(report), report.created, report.tool_version, environment, entries, label, source)

    def record_ab(self, data: Mapping[str, Any], label: str | None = None, source: str | None = None) -> Recorded:
        """Record an `asyncbench ab` results file: a run of the head side, on the head's machine, whose quantities
        are each compared variant's and metric's paired ratio head/base (`ab:NAME`, unit x, > 1 slower) with its
        interval, and whose checks are the verdicts. Kept apart from the series of plain runs: a paired ratio is
        not a median of one side."""
        head = data["head"]
        environment = dict(head.get("facts") or {})
        stated = str(head.get("revision") or "")  # "a1b2c3d (origin/main)", or "working tree"
        revision = stated.split(" ")[0] if stated and stated != "working tree" else environment.get("git_sha")
        environment["git_sha"] = revision
        entries = []
        for case in data["cases"]:
            name, _, inside = case["id"].partition("[")
            backend, device = (inside.rstrip("]").split(",") + ["", ""])[:2]
            ratios = case.get("ratios") or []
            entries.append(
                CaseEntry(
                    case_id=case["id"],
                    workload=name,
                    backend=backend,
                    device=device,
                    params={},
                    status=str(case["status"]),
                    reason=case.get("reason"),
                    checks=[_ab_check(r) for r in ratios],
                    traces={},
                    quantities=[
                        {
                            "variant": r["name"] if r["kind"] == "variant" else "",
                            "quantity": f"ab:{r['name']}",
                            "unit": "x",
                            "value": r["ratio"],
                            "low": r["ratio_ci"][0] if r.get("ratio_ci") else None,
                            "high": r["ratio_ci"][1] if r.get("ratio_ci") else None,
                        }
                        for r in ratios
                        if r.get("ratio") is not None
                    ],
                )
            )
        identity = json.dumps(["ab", data["created"], revision, [(c["id"], c["status"]) for c in data["cases"]]])
        key = hashlib.sha256(identity.encode()).hexdigest()
        return self._record(key, data["created"], str(data.get("tool_version", "")), environment, entries, label, source)

    def _record(
        self,
        key: str,
        created: str,
        version: str,
        environment: Mapping[str, Any],
        entries: Sequence[CaseEntry],
        label: str | None,
        source: str | None,
    ) -> Recorded:
        import sqlalchemy as sa

        runs, cases, points = self.table("runs"), self.table("cases"), self.table("points")
        with self._failures("record"), self._engine.begin() as connection:
            existing = connection.execute(sa.select(runs.c.id).where(runs.c.run_key == key)).scalar()
            if existing is not None:
                return Recorded(run=existing, new=False, points=0)
            git = _git_facts(str(environment.get("git_sha") or "") or None)
            run = connection.execute(
                runs.insert().values(
                    run_key=key,
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
                series = self.table("series")
                touched = sorted(set(ids.values()))
                for start in range(0, len(touched), CHUNK):
                    chunk = touched[start : start + CHUNK]
                    connection.execute(series.update().where(series.c.id.in_(chunk)).values(runs=series.c.runs + 1))
            self.refresh_changes(connection, sorted(set(ids.values())))
            return Recorded(run=run, new=True, points=len(rows))

    def _series_ids(self, connection: Any, wanted: Sequence[tuple[tuple[str, str, str, str], str, dict[str, Any]]]) -> dict[Any, int]:
        """The id of each series (machine, case, variant, quantity), made where it is new."""
        import sqlalchemy as sa

        series = self.table("series")
        ids: dict[Any, int] = {}
        cases = sorted({key[1] for key, _, _ in wanted})
        for start in range(0, len(cases), CHUNK):
            query = sa.select(series.c.id, series.c.machine, series.c.case_id, series.c.variant, series.c.quantity).where(
                series.c.case_id.in_(cases[start : start + CHUNK])
            )
            for row in connection.execute(query):
                ids[(row.machine, row.case_id, row.variant, row.quantity)] = row.id
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

    def refresh_changes(self, connection: Any, series_ids: Sequence[int]) -> None:
        """Find the change points of these series again over their newest CHANGE_WINDOW points; the changes found
        before that window stay as they were."""
        found = self._newest(connection, series_ids, CHANGE_WINDOW)
        table = self.table("changes")
        for series_id in series_ids:
            shown = found.get(series_id, [])
            if not shown:
                continue
            connection.execute(table.delete().where(table.c.series_id == series_id, table.c.run_id >= shown[0].run))
            rows = [{"series_id": series_id, **_change_row(c)} for c in changes.change_points(shown)]
            if rows:
                connection.execute(table.insert(), rows)

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
        """A transaction of this store's own (for bulk loads: benchmarks/history_scale.py)."""
        return self._engine.begin()

    def _failures(self, doing: str) -> contextlib.AbstractContextManager[None]:
        return _translated(self.target, doing)


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


def _ab_check(ratio: Mapping[str, Any]) -> dict[str, Any]:
    return {
        "expect": f"ab {ratio['name']} ({ratio['label']})",
        "verdict": ratio["verdict"],
        "value": ratio["ratio"],
        "bounds": ratio["ratio_ci"],
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


def run_key(report: Report) -> str:
    """The same for a run recorded as it ends and for its results file recorded later (no float is part of it:
    the file rounds samples to the nanosecond)."""
    environment = report.environment
    identity = [report.created, environment.get("hostname"), environment.get("git_sha"), [(r.id, str(r.status)) for r in report.results]]
    return hashlib.sha256(json.dumps(identity, default=str).encode()).hexdigest()


def _git_facts(sha: str | None) -> dict[str, str]:
    """The branch and commit time of `sha` where the current directory's repository has that commit."""
    if not sha:
        return {}
    commit = sha.removesuffix("-dirty")
    try:
        time = subprocess.run(["git", "show", "-s", "--format=%cI", commit], capture_output=True, text=True, timeout=10)
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


@contextlib.contextmanager
def _translated(target: Target, doing: str) -> Iterator[None]:
    """Database failures as one line without the password: unreachable, locked, not a store."""
    import sqlalchemy.exc

    try:
        yield
    except sqlalchemy.exc.SQLAlchemyError as exc:
        original = getattr(exc, "orig", None) or exc
        text = " ".join(str(original).split())
        if "locked" in text.lower():
            text = f"the SQLite file is locked by another process (waited {SQLITE_BUSY_S:g} s): {text}"
        raise StoreError(f"history {target.shown}: cannot {doing}: {target.scrub(text)}") from None


def open_store(target: Target) -> Store:
    """Connect, create or upgrade the schema, refuse a store of a newer asyncbench (StoreError, one line)."""
    import sqlalchemy as sa

    if target.kind == "sqlite":
        path = Path(target.url.removeprefix("sqlite:///"))
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise StoreError(f"history {target.shown}: cannot create its folder: {exc.strerror or exc}") from None
        engine = sa.create_engine(target.url, connect_args={"timeout": SQLITE_BUSY_S})
    else:
        engine = sa.create_engine(target.url, connect_args={"connect_timeout": CONNECT_TIMEOUT_S}, pool_pre_ping=True)
    meta = tables.metadata()
    with _translated(target, "open"), engine.begin() as connection:
        kv = meta.tables[f"{tables.PREFIX}meta"]
        kv.create(connection, checkfirst=True)
        found = connection.execute(sa.select(kv.c.value).where(kv.c.key == "schema_version")).scalar()
        version = int(found) if found is not None else 0
        if version > tables.SCHEMA_VERSION:
            raise StoreError(
                f"history {target.shown}: the store is of schema {version}, newer than this asyncbench reads "
                f"({tables.SCHEMA_VERSION}): upgrade asyncbench"
            )
        for step in range(version + 1, tables.SCHEMA_VERSION + 1):
            tables.MIGRATIONS[step](connection, meta)
        if version == 0:
            connection.execute(kv.insert().values(key="schema_version", value=str(tables.SCHEMA_VERSION)))
        elif version < tables.SCHEMA_VERSION:
            connection.execute(kv.update().where(kv.c.key == "schema_version").values(value=str(tables.SCHEMA_VERSION)))
    return Store(target, engine, meta)
