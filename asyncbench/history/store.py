"""The store: runs, their cases and every measured quantity, in SQLite or PostgreSQL through SQLAlchemy Core.

One schema for both databases, versioned like the results schema: the
store's own `asyncbench_meta` table says its version, `open_store`
upgrades an older store step by step (MIGRATIONS) and refuses a newer one.
A results file is recorded in one transaction: a crash midway leaves the
store as it was. A run is recorded once: its key is the run's creation time,
host, revision and case ids, the same for a run recorded by `run --record`
and for its results file recorded again later.
"""

from __future__ import annotations

import contextlib
import datetime
import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterator

from asyncbench.errors import InputError
from asyncbench.history import machine
from asyncbench.history.target import Target
from asyncbench.results.model import OK, Check, Report, Result

SCHEMA_VERSION = 1
# A locked SQLite file (another process writing) is waited for this long before the record fails.
SQLITE_BUSY_S = 10.0
# A PostgreSQL server that does not answer within this is unreachable, not slow.
CONNECT_TIMEOUT_S = 10


class StoreError(InputError):
    """The store cannot be used: unreachable, locked, from a newer asyncbench, or not a store."""


@dataclass(frozen=True)
class Recorded:
    """What recording one report did: `new` is False when the run was already in the store."""

    run: int
    new: bool
    points: int


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


def _tables() -> Any:
    import sqlalchemy as sa

    meta = sa.MetaData()
    sa.Table("asyncbench_meta", meta, sa.Column("key", sa.String(64), primary_key=True), sa.Column("value", sa.Text))
    sa.Table(
        "asyncbench_runs",
        meta,
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("run_key", sa.String(64), nullable=False, unique=True),
        sa.Column("created", sa.String(40), nullable=False),
        sa.Column("recorded", sa.String(40), nullable=False),
        sa.Column("label", sa.Text),
        sa.Column("revision", sa.String(64)),
        sa.Column("branch", sa.Text),
        sa.Column("commit_time", sa.String(40)),
        sa.Column("host", sa.Text),
        sa.Column("environment", sa.Text, nullable=False),
        sa.Column("version", sa.String(32)),
        sa.Column("source", sa.Text),
    )
    sa.Table(
        "asyncbench_cases",
        meta,
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("run_id", sa.Integer, sa.ForeignKey("asyncbench_runs.id"), nullable=False, index=True),
        sa.Column("case_id", sa.Text, nullable=False),
        sa.Column("machine", sa.String(machine.FINGERPRINT_CHARS), nullable=False),
        sa.Column("machine_info", sa.Text, nullable=False),
        sa.Column("workload", sa.Text, nullable=False),
        sa.Column("backend", sa.Text, nullable=False),
        sa.Column("device", sa.Text, nullable=False),
        sa.Column("params", sa.Text, nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("reason", sa.Text),
        sa.Column("checks", sa.Text),
        sa.Column("traces", sa.Text),
        sa.Index("asyncbench_cases_series", "case_id", "machine"),
    )
    sa.Table(
        "asyncbench_points",
        meta,
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("case_pk", sa.Integer, sa.ForeignKey("asyncbench_cases.id"), nullable=False, index=True),
        sa.Column("variant", sa.Text, nullable=False),
        sa.Column("quantity", sa.Text, nullable=False),
        sa.Column("unit", sa.String(16), nullable=False),
        sa.Column("value", sa.Float, nullable=False),
        sa.Column("low", sa.Float),
        sa.Column("high", sa.Float),
    )
    return meta


def _create(connection: Any, meta: Any) -> None:
    meta.create_all(connection)


#: version -> the step that brings a store of the version before it there (1: a new store)
MIGRATIONS: dict[int, Callable[[Any, Any], None]] = {1: _create}


class Store:
    """An open store; `record` and `series` each run in a transaction of their own."""

    def __init__(self, target: Target, engine: Any, meta: Any):
        self.target = target
        self._engine = engine
        self._meta = meta

    def table(self, name: str) -> Any:
        return self._meta.tables[f"asyncbench_{name}"]

    def record(self, report: Report, label: str | None = None, source: str | None = None) -> Recorded:
        """Record a report (one transaction); a run already in the store is not recorded again."""
        import sqlalchemy as sa

        runs, cases, points = self.table("runs"), self.table("cases"), self.table("points")
        key = run_key(report)
        with self._failures("record"), self._engine.begin() as connection:
            existing = connection.execute(sa.select(runs.c.id).where(runs.c.run_key == key)).scalar()
            if existing is not None:
                return Recorded(run=existing, new=False, points=0)
            environment = report.environment
            git = _git_facts(str(environment.get("git_sha") or "") or None)
            run = connection.execute(
                runs.insert().values(
                    run_key=key,
                    created=report.created,
                    recorded=datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
                    label=label,
                    revision=environment.get("git_sha"),
                    branch=git.get("branch"),
                    commit_time=git.get("commit_time"),
                    host=environment.get("hostname"),
                    environment=json.dumps(environment, sort_keys=True, default=str),
                    version=report.tool_version,
                    source=source,
                )
            ).inserted_primary_key[0]
            count = 0
            for result in report.results:
                info = machine.describe(environment, result.backend, result.device)
                case = connection.execute(
                    cases.insert().values(
                        run_id=run,
                        case_id=result.id,
                        machine=machine.fingerprint(info),
                        machine_info=json.dumps(info, sort_keys=True),
                        workload=result.workload,
                        backend=result.backend,
                        device=result.device,
                        params=json.dumps(result.params, sort_keys=True, default=str),
                        status=str(result.status),
                        reason=result.reason,
                        checks=json.dumps([_check(c) for c in result.checks]) if result.checks else None,
                        traces=json.dumps(dict(result.traces)) if result.traces else None,
                    )
                ).inserted_primary_key[0]
                rows = [{"case_pk": case, **row} for row in quantities(result)]
                if rows:
                    connection.execute(points.insert(), rows)
                count += len(rows)
            return Recorded(run=run, new=True, points=count)

    def rows(self, pattern: str | None = None) -> Iterator[Any]:
        """Every point of every series whose case id contains `pattern`, in series order, then run order."""
        import sqlalchemy as sa

        runs, cases, points = self.table("runs"), self.table("cases"), self.table("points")
        query = (
            sa.select(
                cases.c.machine,
                cases.c.machine_info,
                cases.c.case_id,
                points.c.variant,
                points.c.quantity,
                points.c.unit,
                runs.c.id,
                runs.c.created,
                runs.c.label,
                runs.c.revision,
                points.c.value,
                points.c.low,
                points.c.high,
            )
            .select_from(points.join(cases, points.c.case_pk == cases.c.id).join(runs, cases.c.run_id == runs.c.id))
            .order_by(cases.c.machine, cases.c.case_id, points.c.variant, points.c.quantity, runs.c.created, runs.c.id)
        )
        if pattern:
            query = query.where(cases.c.case_id.contains(pattern, autoescape=True))
        with self._failures("read"), self._engine.connect() as connection:
            yield from connection.execute(query)

    def latest(self) -> LatestRun | None:
        """The run recorded last (by creation time), with its cases and their points; None in an empty store."""
        import sqlalchemy as sa

        runs, cases, points = self.table("runs"), self.table("cases"), self.table("points")
        with self._failures("read"), self._engine.connect() as connection:
            run = connection.execute(sa.select(runs).order_by(runs.c.created.desc(), runs.c.id.desc()).limit(1)).first()
            if run is None:
                return None
            rows = connection.execute(
                sa.select(cases, points.c.variant, points.c.quantity, points.c.unit, points.c.value, points.c.low, points.c.high)
                .select_from(cases.outerjoin(points, points.c.case_pk == cases.c.id))
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

    def _failures(self, doing: str) -> contextlib.AbstractContextManager[None]:
        return _translated(self.target, doing)


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
    import subprocess

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
    meta = _tables()
    with _translated(target, "open"), engine.begin() as connection:
        kv = meta.tables["asyncbench_meta"]
        kv.create(connection, checkfirst=True)
        found = connection.execute(sa.select(kv.c.value).where(kv.c.key == "schema_version")).scalar()
        version = int(found) if found is not None else 0
        if version > SCHEMA_VERSION:
            raise StoreError(
                f"history {target.shown}: the store is of schema {version}, newer than this asyncbench reads ({SCHEMA_VERSION}): "
                "upgrade asyncbench"
            )
        for step in range(version + 1, SCHEMA_VERSION + 1):
            MIGRATIONS[step](connection, meta)
        if version == 0:
            connection.execute(kv.insert().values(key="schema_version", value=str(SCHEMA_VERSION)))
        elif version < SCHEMA_VERSION:
            connection.execute(kv.update().where(kv.c.key == "schema_version").values(value=str(SCHEMA_VERSION)))
    return Store(target, engine, meta)
