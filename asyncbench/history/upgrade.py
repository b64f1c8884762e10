"""The store's upgrade to schema 3: what each run is and when it counts as made; the wrongly recorded `ab` runs removed.

Until schema 3, recording an `ab` file stored, as each paired ratio's
point, the value of the gate's last block (a log ratio: 0.07 for a gate
9.6% slower, −0.02 for an unchanged one) beside the gate's true interval
(results.ab_file read the file's ratio and then overwrote it). The ratio
itself is in no column of the store (a case's checks held the same wrong
value), so it cannot be mended here. Such a point lies outside its own
interval (the interval is about 1, the value about 0), which every reader
now refuses as a damaged row; so each `ab` run with such a point, or with
a point that has no interval (an undecided gate, where the wrong value
cannot be told from a right one), is removed with its cases, points and
the change points of its series, and the upgrade names the files they
were recorded from: recording those again stores their ratios, as any
file not yet recorded. `ab` runs whose points all lie within their
intervals (files written before gates kept their blocks) were recorded
right, and stay.

Each run is also marked as a results run or an `ab` run (`kind`: the page
marks `ab` runs among the recent ones), and given the time it is ordered by
(history.clock: a clock that was ahead makes no run the latest for ever).
"""

from __future__ import annotations

from typing import Any, Callable, Sequence

from asyncbench.history import changes, clock, tables
from asyncbench.history.reading import CHUNK

# The files named in the upgrade's note, at most (the rest are counted).
NAMED_FILES = 5


def to_schema_3(connection: Any, meta: Any) -> str | None:
    """Bring a store of schema 2 (or a new one) to schema 3 in the caller's writing transaction; what the user must
    hear of it (the `ab` runs removed and their files), or None."""
    table = _tables(meta)
    _add_columns(connection, table["runs"])
    removed = _remove_wrong_ab_runs(connection, meta)
    _mark_kinds(connection, meta)
    _order(connection, table["runs"])
    if not removed:
        return None
    files = [source for source in removed if source]
    named = ", ".join(repr(source) for source in files[:NAMED_FILES])  # a path is data: repr shows its controls
    if len(files) > NAMED_FILES:
        named += f" and {len(files) - NAMED_FILES} more"
    again = f"record their files again to store their ratios: {named}" if files else "their files are not known"
    return (
        f"the history was upgraded: {len(removed)} `ab` run(s) removed, whose points held each gate's last block's "
        f"log ratio instead of its ratio (an earlier asyncbench's mistake; the ratio is not in the store); {again}"
    )


def _tables(meta: Any) -> dict[str, Any]:
    return {name: meta.tables[f"{tables.PREFIX}{name}"] for name in ("runs", "cases", "series", "points", "changes")}


def _add_columns(connection: Any, runs: Any) -> None:
    """The runs' new columns and their index, where the store has them not (a store made new has them already)."""
    import sqlalchemy as sa

    have = {column["name"] for column in sa.inspect(connection).get_columns(runs.name)}
    for name in ("kind", "ordered_at"):
        if name not in have:
            kind = runs.c[name].type.compile(dialect=connection.dialect)
            connection.execute(sa.text(f"ALTER TABLE {runs.name} ADD COLUMN {name} {kind}"))
    for index in runs.indexes:
        index.create(connection, checkfirst=True)


def _paired(series: Any) -> Any:
    """The `ab` series: paired ratios head/base (history.changes.is_paired)."""
    return (series.c.quantity.startswith(changes.PAIRED_PREFIX, autoescape=True)) & (series.c.unit == changes.PAIRED_UNIT)


def _remove_wrong_ab_runs(connection: Any, meta: Any) -> list[str | None]:
    """Remove every `ab` run with a point outside its own interval or without one (the module's docstring says
    why); the change points of the series they were in are found again. The removed runs' sources, in run order."""
    import sqlalchemy as sa

    table = _tables(meta)
    runs, cases, series, points, found = table["runs"], table["cases"], table["series"], table["points"], table["changes"]
    wrong = sa.or_(points.c.low.is_(None), points.c.high.is_(None), points.c.value < points.c.low, points.c.value > points.c.high)
    query = sa.select(points.c.run_id).distinct().select_from(points.join(series, series.c.id == points.c.series_id))
    bad = sorted(row.run_id for row in connection.execute(query.where(_paired(series), wrong)))
    if not bad:
        return []
    affected: set[int] = set()
    sources: list[str | None] = []
    for chunk in _chunks(bad):
        in_them = sa.select(points.c.series_id).distinct().where(points.c.run_id.in_(chunk))
        affected |= {row.series_id for row in connection.execute(in_them)}
        sources += [row.source for row in connection.execute(sa.select(runs.c.source).where(runs.c.id.in_(chunk)).order_by(runs.c.id))]
    for chunk in _chunks(sorted(affected)):
        connection.execute(found.delete().where(found.c.series_id.in_(chunk)))
    for chunk in _chunks(bad):
        connection.execute(found.delete().where(found.c.run_id.in_(chunk)))
        connection.execute(points.delete().where(points.c.run_id.in_(chunk)))
        connection.execute(cases.delete().where(cases.c.run_id.in_(chunk)))
        connection.execute(runs.delete().where(runs.c.id.in_(chunk)))
    counted = sa.select(sa.func.count()).where(points.c.series_id == series.c.id).scalar_subquery()
    kept = []
    for chunk in _chunks(sorted(affected)):
        connection.execute(series.update().where(series.c.id.in_(chunk)).values(runs=counted))
        connection.execute(series.delete().where(series.c.id.in_(chunk), series.c.runs == 0))
        kept += [row.id for row in connection.execute(sa.select(series.c.id).where(series.c.id.in_(chunk)))]
    if kept:
        _find_changes_again(connection, meta, kept)
    return sources


def _find_changes_again(connection: Any, meta: Any, series_ids: Sequence[int]) -> None:
    """The change points of series that lost runs, found again over what they keep (history.edivisive: Otava's
    analysis, shipped with asyncbench)."""
    from asyncbench.history import recording

    recording.refresh_changes(lambda name: meta.tables[f"{tables.PREFIX}{name}"], connection, series_ids)


def _mark_kinds(connection: Any, meta: Any) -> None:
    """Each run not yet marked: AB where it has a paired ratio among its points, else RUN (an `ab` run whose every
    case failed has no point to tell it by, and reads as a results run)."""
    import sqlalchemy as sa

    table = _tables(meta)
    runs, series, points = table["runs"], table["series"], table["points"]
    ab_runs = sa.select(points.c.run_id).select_from(points.join(series, series.c.id == points.c.series_id)).where(_paired(series))
    connection.execute(runs.update().where(runs.c.kind.is_(None), runs.c.id.in_(ab_runs)).values(kind=tables.AB))
    connection.execute(runs.update().where(runs.c.kind.is_(None)).values(kind=tables.RUN))


def _order(connection: Any, runs: Any) -> None:
    """Each run's `ordered_at` (history.clock), where it has none: its creation, no later than its recording."""
    import sqlalchemy as sa

    rows = list(connection.execute(sa.select(runs.c.id, runs.c.created, runs.c.recorded).where(runs.c.ordered_at.is_(None))))
    values = []
    for row in rows:
        try:
            at = clock.ordered_at(row.created, row.recorded)
        except (TypeError, ValueError):  # a time no asyncbench wrote (an edited row): ordered by its text, as before
            at = str(row.created)
        values.append({"run": row.id, "at": at})
    if values:
        connection.execute(runs.update().where(runs.c.id == sa.bindparam("run")).values(ordered_at=sa.bindparam("at")), values)


def _chunks(ids: Sequence[int]) -> list[list[int]]:
    return [list(ids[start : start + CHUNK]) for start in range(0, len(ids), CHUNK)]


#: version -> the step that brings a store of the version before it there, in the caller's writing transaction
#: (history.database.prepare): 1 a new store; 2 runs keyed by the run's own id (history.keys) and each series' run
#: count recounted; 3 runs' kind and order, and the `ab` runs recorded with a wrong ratio removed. A step returns
#: what a user must hear of it, or None.
MIGRATIONS: dict[int, Callable[[Any, Any], str | None]] = {1: tables.create, 2: tables.recount, 3: to_schema_3}
