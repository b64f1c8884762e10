"""Reading the store: series with their newest points and change points, the latest run, the recent runs.

What `history` and `report` show, as the read models of history.model;
every function reads in the connection its caller opened (history.store
opens one per read, its failures in one line). Reading never finds change
points: they were found when each run was recorded (history.recording).
"""

from __future__ import annotations

import json
import math
from typing import Any, Callable, Mapping, Sequence

from asyncbench.history import at_move, changes, clock, discount, model, point_rules, row_rules, tables
from asyncbench.history.model import ChangePoint, LatestCase, LatestRun, Point, RecentRun, Series
from asyncbench.history.row_rules import DamagedRow as DamagedRow  # what history.store says in one line

# Ids per IN list (SQLite allows 32,766 parameters; PostgreSQL more): bounded lists keep every statement small.
CHUNK = 500

#: a store's table by its short name (history.store.Store.table)
Table = Callable[[str], Any]


def newest(
    table_of: Table, connection: Any, series_ids: Sequence[int], last: int, ranges: Mapping[int, point_rules.Range | None] | None = None
) -> dict[int, list[Point]]:
    """Each series' newest `last` points, in run order (the order recorded), each with when its run counts as made
    (Point.ordered_at, which the latest run is chosen by): one indexed `ORDER BY run_id DESC LIMIT` per series, so
    a read costs the points it returns, not the points the store holds; the runs' facts are read once.
    `ranges`: by series id, what its quantity's points can be (point_rules.range_of); one beyond is a damaged row."""
    import sqlalchemy as sa

    points, runs = table_of("points"), table_of("runs")
    # the driver's own cursor: through the database library each of thousands of small queries costs a
    # millisecond of its own; the statement is the same, only its placeholder is the driver's
    mark = "?" if connection.dialect.paramstyle == "qmark" else "%s"
    statement = f"SELECT id, run_id, value, low, high FROM {points.name} WHERE series_id = {mark} ORDER BY run_id DESC LIMIT {int(last)}"
    cursor = connection.connection.driver_connection.cursor()
    raw: dict[int, list[Any]] = {series_id: [] for series_id in series_ids}
    try:
        if connection.dialect.name == "postgresql":  # one round trip for them all: a lateral join
            cursor.execute(
                f"SELECT s.id, p.id, p.run_id, p.value, p.low, p.high FROM unnest(%s::int[]) AS s(id) CROSS JOIN LATERAL "
                f"({statement.replace(mark, 's.id')}) p",
                (list(series_ids),),
            )
            for series_id, *row in cursor.fetchall():
                raw[series_id].append(tuple(row))
            raw = {series_id: found[::-1] for series_id, found in raw.items()}
        else:
            for series_id in series_ids:
                cursor.execute(statement, (series_id,))
                raw[series_id] = cursor.fetchall()[::-1]
    finally:
        cursor.close()
    run_ids = sorted({row[1] for held in raw.values() for row in held})
    facts: dict[int, tuple[str, str | None, str | None, str | None]] = {}
    for start in range(0, len(run_ids), CHUNK):
        query = sa.select(runs.c.id, runs.c.created, runs.c.label, runs.c.revision, runs.c.ordered_at).where(
            runs.c.id.in_(run_ids[start : start + CHUNK])
        )
        for row in connection.execute(query):
            row_rules.run(row)  # a time, a label, a revision as asyncbench writes them, or the store is damaged
            facts[row.id] = (row.created, row.label, row.revision, row.ordered_at)
    made: dict[int, list[Point]] = {}
    for series_id, held in raw.items():
        points_of = made[series_id] = []
        rule = (ranges or {}).get(series_id)
        for point, run, value, low, high in held:
            if run not in facts:  # a point of no run: whose time, label and revision it has is unknown
                raise row_rules.damaged("points", point, "run_id", f"run {run} is not in the store's runs")
            created, label, revision, ordered_at = facts[run]
            points_of.append(Point(run, created, label, revision, *figures(value, low, high, point, rule), ordered_at))
    return made


def _figure(value: Any, column: str, row: Any) -> float:
    """A point's stored figure (or an end of its interval, `column`): a finite number; else the row is damaged."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise _damaged(row, column, f"holds {str(value)[:40]!r} where asyncbench writes a finite number")
    return float(value)


def _bound(value: Any, column: str, row: Any) -> float | None:
    """An end of a point's interval: a finite number, or none (too few rounds for one)."""
    return None if value is None else _figure(value, column, row)


def _damaged(row: Any, column: str, why: str) -> DamagedRow:
    """A point's damaged figure: named by its table, row and column where read from a store (`row`: the points row),
    as every damaged row is (row_rules); a point of a file being recorded (row None) by what it holds."""
    return DamagedRow(f"a point {why}") if row is None else row_rules.damaged("points", row, column, why)


def figures(
    value: Any, low: Any, high: Any, row: Any = None, held: point_rules.Range | None = None
) -> tuple[float, float | None, float | None]:
    """A point's figure and its interval's ends as asyncbench writes them: finite numbers, the figure within its
    interval (a median within the interval of that median, a paired ratio within its own), each within what its
    quantity can be (`held`, point_rules: a time not negative nor past a year, a ratio above 0); else the row is
    damaged. The rule the recorder holds every point to as well (history.recording), so none is drawn outside its
    error bar. `row`: the store's points row they were read from, which the refusal names (None: a file's, being
    recorded)."""
    figure, below, above = _figure(value, "value", row), _bound(low, "low", row), _bound(high, "high", row)
    if held is not None:
        for column, found in (("value", figure), ("low", below), ("high", above)):
            problem = None if found is None else held.problem(found, column != "value")
            if problem is not None:
                raise _damaged(row, column, problem)
    if (below is not None and figure < below) or (above is not None and figure > above):
        shown = f"[{'?' if below is None else f'{below:.6g}'}, {'?' if above is None else f'{above:.6g}'}]"
        raise _damaged(row, "value", f"{figure:.6g} lies outside its own interval {shown}")
    return figure, below, above


def machine_of(
    table_of: Table, connection: Any, series_ids: Sequence[int], last: int, known: Mapping[int, list[Point]] | None = None
) -> dict[int, tuple[dict[int, float], dict[int, float], dict[int, Mapping[str, Any]]]]:
    """For each time series among `series_ids` (history.discount.follows_machine) of a case that records its machine, and the
    reference series of a CPU case: the newest `last` runs' machine reference and CPU pressure of that case, by run,
    and for a CPU case each of those runs' environment (its thread pools: the reference ran in them), by run (what
    discount.judged reads).
    `known`: points already read, by series id (a sibling among them is not read again)."""
    import sqlalchemy as sa

    series = table_of("series")
    rows = []
    for start in range(0, len(series_ids), CHUNK):
        query = sa.select(series.c.id, series.c.machine, series.c.case_id, series.c.quantity, series.c.unit)
        rows += list(connection.execute(query.where(series.c.id.in_(list(series_ids[start : start + CHUNK])))))
    timed = [row for row in rows if discount.follows_machine(row.quantity, row.unit) or row.quantity == discount.MACHINE_QUANTITY]
    cases = sorted({row.case_id for row in timed})
    siblings: dict[tuple[str, str, str], int] = {}
    for start in range(0, len(cases), CHUNK):
        query = sa.select(series.c.id, series.c.machine, series.c.case_id, series.c.quantity).where(
            series.c.case_id.in_(cases[start : start + CHUNK]),
            series.c.variant == "",
            series.c.quantity.in_([discount.MACHINE_QUANTITY, discount.PRESSURE_QUANTITY]),
        )
        siblings.update({(row.machine, row.case_id, row.quantity): row.id for row in connection.execute(query)})
    known = known or {}
    ranges = {i: point_rules.range_of("", quantity, "") for (_, _, quantity), i in siblings.items()}  # the machine's rows
    values = {**known, **newest(table_of, connection, sorted(set(siblings.values()) - set(known)), last, ranges)}
    on_cpu = _on_cpu(table_of, connection, cases)
    environments = _environments(
        table_of, connection, sorted({p.run for (_, case, _), i in siblings.items() if case in on_cpu for p in values.get(i, [])})
    )
    found = {}
    for row in timed:
        machine_id = siblings.get((row.machine, row.case_id, discount.MACHINE_QUANTITY))
        if machine_id is None or (row.quantity == discount.MACHINE_QUANTITY and row.case_id not in on_cpu):
            continue  # no reference; or the reference of a case whose pools it does not run in, searched as recorded
        pressure_id = siblings.get((row.machine, row.case_id, discount.PRESSURE_QUANTITY))
        references = {p.run: p.value for p in values.get(machine_id, [])}
        found[row.id] = (
            references,
            {p.run: p.value for p in values.get(pressure_id, [])} if pressure_id is not None else {},
            {run: environments[run] for run in references if run in environments} if row.case_id in on_cpu else {},
        )
    return found


def _on_cpu(table_of: Table, connection: Any, case_ids: Sequence[str]) -> set[str]:
    """The cases among `case_ids` that run on a CPU device: the ones whose reference runs in their thread pools (as
    `compare` reads them: verdicts.compare)."""
    import sqlalchemy as sa

    cases = table_of("cases")
    found: set[str] = set()
    for start in range(0, len(case_ids), CHUNK):
        query = sa.select(cases.c.case_id, cases.c.device).distinct().where(cases.c.case_id.in_(list(case_ids[start : start + CHUNK])))
        found.update(row.case_id for row in connection.execute(query) if str(row.device).startswith("cpu"))
    return found


def _environments(table_of: Table, connection: Any, run_ids: Sequence[int]) -> dict[int, Mapping[str, Any]]:
    """Each run's environment as recorded (its `thread_variables` among it), by run; one a run that holds none."""
    import sqlalchemy as sa

    runs = table_of("runs")
    found: dict[int, Mapping[str, Any]] = {}
    for start in range(0, len(run_ids), CHUNK):
        query = sa.select(runs.c.id, runs.c.environment).where(runs.c.id.in_(list(run_ids[start : start + CHUNK])))
        for row in connection.execute(query):
            found[row.id] = row_rules.environment(row.id, row.environment)  # JSON of bounded depth, or a damaged store
    return found


def series(table_of: Table, connection: Any, pattern: str | None = None, last: int = 100) -> list[Series]:
    """Every series whose case id contains `pattern`: its newest `last` points, all its change points, its length."""
    import sqlalchemy as sa

    series, table = table_of("series"), table_of("changes")
    query = sa.select(series).order_by(series.c.machine, series.c.case_id, series.c.variant, series.c.quantity)
    if pattern:
        query = query.where(series.c.case_id.contains(pattern, autoescape=True))
    found = list(connection.execute(query))
    for row in found:
        row_rules.series(row)  # names, a quantity and its unit as asyncbench records them, or the store is damaged
    ids = [row.id for row in found]
    ranges = {row.id: point_rules.range_of(row.variant, row.quantity, row.unit) for row in found}
    found_points = newest(table_of, connection, ids, last, ranges)
    changed: dict[int, list[ChangePoint]] = {}
    for start in range(0, len(ids), CHUNK):
        chunk = ids[start : start + CHUNK]
        for row in connection.execute(sa.select(table).where(table.c.series_id.in_(chunk)).order_by(table.c.run_id)):
            row_rules.change(row)  # its figures as the recorder writes them, or the store is damaged
            changed.setdefault(row.series_id, []).append(
                ChangePoint(row.run_id, row.at, row.before, row.after, row.ratio, row.ratio_low, row.ratio_high, row.p_value)
            )
    machines = machine_of(table_of, connection, ids, last, found_points)
    made = []
    for row in found:
        shown = tuple(found_points.get(row.id, ()))
        judged = discount.judged(row.quantity, row.unit, shown, machines[row.id]) if row.id in machines else None
        made.append(
            Series(
                case=row.case_id,
                variant=row.variant,
                quantity=row.quantity,
                unit=row.unit,
                machine=row.machine,
                machine_info=json.loads(row.machine_info),
                points=shown,
                # a store recorded before model.MIN_RUNS held changes of shorter series: too short to tell; one
                # recorded before model.MIN_SIDE_RUNS held changes from a run or two
                change_points=changes.held_apart(changed.get(row.id, ()), [p.run for p in shown], len(shown) >= row.runs)
                if row.runs >= model.MIN_RUNS
                else (),
                runs=row.runs,
                discounted=tuple(judged[1]) if judged is not None else (),
                machine_seen=judged is not None and row.quantity != discount.MACHINE_QUANTITY,
                # the points searched are not the points shown: scaled to the machine's usual speed
                scaled=judged is not None and not set(judged[0]) <= set(shown),
            )
        )
    return at_move.told(made)  # a change at the run its machine moved carries the machine's change


def latest(table_of: Table, connection: Any) -> LatestRun | None:
    """The run made last (by the time it is ordered by: history.clock, its creation but never after it was
    recorded), with its cases and their points; None in an empty store."""
    import sqlalchemy as sa

    runs, cases, points, series = table_of("runs"), table_of("cases"), table_of("points"), table_of("series")
    run = connection.execute(sa.select(runs).order_by(runs.c.ordered_at.desc(), runs.c.id.desc()).limit(1)).first()
    if run is None:
        return None
    row_rules.run(run)
    held = connection.execute(
        sa.select(cases, series.c.id.label("series_row"), series.c.variant, series.c.quantity, series.c.unit)
        .add_columns(points.c.id.label("point_row"), points.c.value, points.c.low, points.c.high)
        .select_from(cases.outerjoin(points, points.c.case_pk == cases.c.id).outerjoin(series, series.c.id == points.c.series_id))
        .where(cases.c.run_id == run.id)
        .order_by(cases.c.id, points.c.id)
    ).all()
    found: dict[int, LatestCase] = {}
    for row in held:
        case = found.get(row.id)
        if case is None:
            row_rules.case(row)
            case = found[row.id] = LatestCase(
                case=row.case_id,
                machine=row.machine,
                status=row.status,
                reason=row.reason,
                checks=row_rules.checks(row),  # each held to a results file's check, or the store is damaged
                traces=row_rules.traces(row),
                quantities=[],
            )
        if row.quantity is not None:
            row_rules.quantity(row.series_row, row.variant, row.quantity, row.unit)
            rule = point_rules.range_of(row.variant, row.quantity, row.unit)
            case.quantities.append((row.variant, row.quantity, row.unit, *figures(row.value, row.low, row.high, row.point_row, rule)))
    return LatestRun(
        run.id,
        run.created,
        run.label,
        run.revision,
        run.branch,
        run.host,
        tuple(found.values()),
        kind=_kind(run.kind),
        clock_ahead=_ahead(run.created, run.recorded),
    )


def recent(table_of: Table, connection: Any, limit: int) -> list[RecentRun]:
    """The newest `limit` runs (by the time each is ordered by: history.clock), newest first."""
    import sqlalchemy as sa

    runs = table_of("runs")
    columns = (runs.c.id, runs.c.created, runs.c.label, runs.c.revision, runs.c.branch, runs.c.host, runs.c.version)
    query = sa.select(*columns, runs.c.kind, runs.c.recorded, runs.c.ordered_at)
    found = list(connection.execute(query.order_by(runs.c.ordered_at.desc(), runs.c.id.desc()).limit(limit)))
    for row in found:
        row_rules.run(row)  # a time, a label, a revision as asyncbench writes them, or the store is damaged
    return [
        RecentRun(
            row.id,
            row.created,
            row.label,
            row.revision,
            row.branch,
            row.host,
            row.version,
            _kind(row.kind),
            _ahead(row.created, row.recorded),
        )
        for row in found
    ]


def _kind(stored: Any) -> str:
    """A run's kind as the store says it: an `ab` run, else a results run."""
    return tables.AB if stored == tables.AB else tables.RUN


def _ahead(created: Any, recorded: Any) -> bool:
    """Whether a run's file says it was made after it was recorded (history.clock); a time no asyncbench wrote
    (an edited row) says nothing of it."""
    try:
        return clock.ahead(str(created), str(recorded))
    except ValueError:
        return False
