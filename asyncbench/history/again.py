"""A file recorded again: what of it differs from what the store holds of its run.

A file edited after it was recorded (a case renamed, a variant, a figure) keeps its run's id, so `record` finds the run
already there; "already recorded" alone dropped its new content without a word, so what differs is said. The stored
rows compared are read as `history` reads them (row_rules, reading.figures): a damaged one is the store's damage, said
in one line, never parsed bare.
"""

from __future__ import annotations

import math
from typing import Any, Mapping, Protocol, Sequence

from asyncbench.history import point_rules, reading, row_rules
from asyncbench.history.reading import Table


class Entry(Protocol):
    """A case of the file as history.recording holds it (its CaseEntry): the case, its checks and its quantities."""

    @property
    def case(self) -> Any: ...

    @property
    def checks(self) -> Sequence[Mapping[str, Any]]: ...

    @property
    def quantities(self) -> Sequence[Mapping[str, Any]]: ...


# Two figures of one run read back are the same figure within this share: a run recorded as it ends (`run --record`)
# and its file recorded later hold one figure, the file's written to the nanosecond and read back through JSON.
SAME_FIGURE = 1e-6


def differs(table_of: Table, connection: Any, run: int, entries: Sequence[Entry]) -> str:
    """What of a file's cases (`entries`) differs from what the store holds of its run (`run`, the same key): its
    cases (which, how they ended, their checks' verdicts) and its points (which quantities, their values); '' where
    nothing does. What the store does not record of a file (a case's time) is not compared."""
    import sqlalchemy as sa

    cases, points, series = table_of("cases"), table_of("points"), table_of("series")
    stored = set()
    for row in connection.execute(sa.select(cases).where(cases.c.run_id == run)):
        row_rules.case(row)  # each read as a report reads it (row_rules): a damaged row is said, never parsed bare
        stored.add((row.case_id, row.status, tuple((c["expect"], c["verdict"]) for c in row_rules.checks(row))))
    given = {(e.case.id, str(e.case.status), tuple((c["expect"], c["verdict"]) for c in e.checks)) for e in entries}
    if stored != given:
        changed = sorted({case[0] for case in stored ^ given})
        return f"its cases differ ({changed[0]}{f' and {len(changed) - 1} more' if len(changed) > 1 else ''})"
    held = {}
    for row in connection.execute(
        sa.select(series.c.id.label("series_row"), series.c.case_id, series.c.variant, series.c.quantity, series.c.unit)
        .add_columns(points.c.id.label("point_row"), points.c.value, points.c.low, points.c.high)
        .join(series, series.c.id == points.c.series_id)
        .where(points.c.run_id == run)
    ):
        row_rules.quantity(row.series_row, row.variant, row.quantity, row.unit)
        rule = point_rules.range_of(row.variant, row.quantity, row.unit)
        held[(row.case_id, row.variant, row.quantity)] = reading.figures(row.value, row.low, row.high, row.point_row, rule)[0]
    figures = {(e.case.id, q["variant"], q["quantity"]): q["value"] for e in entries for q in e.quantities}
    if held.keys() != figures.keys():
        return f"its quantities differ ({' '.join(part for part in sorted(held.keys() ^ figures.keys())[0] if part)})"
    moved = sorted(key for key, value in figures.items() if not math.isclose(value, held[key], rel_tol=SAME_FIGURE))
    return f"its figures differ ({' '.join(part for part in moved[0] if part)})" if moved else ""
