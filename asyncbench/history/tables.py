"""The store's schema: one for SQLite and PostgreSQL (SQLAlchemy Core), versioned, upgraded step by step.

runs ─< cases ─< points >─ series ─< changes. A series is one quantity of
one case's variant on one machine; its points are in run order, and its
change points are kept with it (found when a run is recorded), so reading
the history never reruns the detection over every point.
"""

from __future__ import annotations

from typing import Any

from asyncbench.history import machine

SCHEMA_VERSION = 3
PREFIX = "asyncbench_"
#: what a run is (`kind`): a results report's, or an `ab` file's (its points are paired ratios head/base)
RUN, AB = "run", "ab"


def metadata() -> Any:
    import sqlalchemy as sa

    meta = sa.MetaData()
    sa.Table(f"{PREFIX}meta", meta, sa.Column("key", sa.String(64), primary_key=True), sa.Column("value", sa.Text))
    sa.Table(
        f"{PREFIX}runs",
        meta,
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("run_key", sa.String(64), nullable=False, unique=True),
        sa.Column("created", sa.String(40), nullable=False, index=True),
        sa.Column("recorded", sa.String(40), nullable=False),
        sa.Column("label", sa.Text),
        sa.Column("revision", sa.String(64)),
        sa.Column("branch", sa.Text),
        sa.Column("commit_time", sa.String(40)),
        sa.Column("host", sa.Text),
        sa.Column("environment", sa.Text, nullable=False),
        sa.Column("version", sa.String(32)),
        sa.Column("source", sa.Text),
        # schema 3: RUN or AB; and the time the run is ordered by (history.clock: its creation, no later than its
        # recording), written with every run (nullable only because a column added to a table cannot be otherwise)
        sa.Column("kind", sa.String(8)),
        sa.Column("ordered_at", sa.String(40), index=True),
    )
    sa.Table(
        f"{PREFIX}cases",
        meta,
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("run_id", sa.Integer, sa.ForeignKey(f"{PREFIX}runs.id"), nullable=False, index=True),
        sa.Column("case_id", sa.Text, nullable=False),
        sa.Column("machine", sa.String(machine.FINGERPRINT_CHARS), nullable=False),
        sa.Column("workload", sa.Text, nullable=False),
        sa.Column("backend", sa.Text, nullable=False),
        sa.Column("device", sa.Text, nullable=False),
        sa.Column("params", sa.Text, nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("reason", sa.Text),
        sa.Column("checks", sa.Text),
        sa.Column("traces", sa.Text),
    )
    sa.Table(
        f"{PREFIX}series",
        meta,
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("machine", sa.String(machine.FINGERPRINT_CHARS), nullable=False),
        sa.Column("machine_info", sa.Text, nullable=False),
        sa.Column("case_id", sa.Text, nullable=False),
        sa.Column("variant", sa.Text, nullable=False),
        sa.Column("quantity", sa.Text, nullable=False),
        sa.Column("unit", sa.String(16), nullable=False),
        sa.Column("runs", sa.Integer, nullable=False, default=0),  # its points, kept so that no read counts them
        sa.UniqueConstraint("machine", "case_id", "variant", "quantity", name=f"{PREFIX}series_key"),
    )
    sa.Table(
        f"{PREFIX}points",
        meta,
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("series_id", sa.Integer, sa.ForeignKey(f"{PREFIX}series.id"), nullable=False),
        sa.Column("run_id", sa.Integer, sa.ForeignKey(f"{PREFIX}runs.id"), nullable=False),
        sa.Column("case_pk", sa.Integer, sa.ForeignKey(f"{PREFIX}cases.id"), nullable=False, index=True),
        sa.Column("value", sa.Float, nullable=False),
        sa.Column("low", sa.Float),
        sa.Column("high", sa.Float),
        sa.Index(f"{PREFIX}points_series_run", "series_id", "run_id"),
    )
    sa.Table(
        f"{PREFIX}changes",
        meta,
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("series_id", sa.Integer, sa.ForeignKey(f"{PREFIX}series.id"), nullable=False, index=True),
        sa.Column("run_id", sa.Integer, sa.ForeignKey(f"{PREFIX}runs.id"), nullable=False),
        sa.Column("at", sa.Text, nullable=False),
        sa.Column("before", sa.Float, nullable=False),
        sa.Column("after", sa.Float, nullable=False),
        sa.Column("ratio", sa.Float, nullable=False),
        sa.Column("ratio_low", sa.Float),
        sa.Column("ratio_high", sa.Float),
        sa.Column("p_value", sa.Float, nullable=False),
    )
    return meta


def create(connection: Any, meta: Any) -> None:
    """Schema 1: a new store's tables (what a store already has stays)."""
    meta.create_all(connection)  # checkfirst: what a store already has stays


def recount(connection: Any, meta: Any) -> None:
    """Schema 2: each series' `runs` as its points: schema 1 added one to every series of a case on every machine
    whenever any machine recorded that case (a series with one point said "3 runs")."""
    import sqlalchemy as sa

    series, points = meta.tables[f"{PREFIX}series"], meta.tables[f"{PREFIX}points"]
    counted = sa.select(sa.func.count()).where(points.c.series_id == series.c.id).scalar_subquery()
    connection.execute(series.update().values(runs=counted))
