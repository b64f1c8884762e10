"""A store's rows held to what asyncbench writes: the reader takes back only what the writer can write.

A store is a file (or a database) anyone may edit, so what history.reading
reads of it is held to the rules a results file is held to before it is
recorded (results.fields, results.recordable): a run's time is an ISO 8601
time, a name is one bounded line, a unit a short word, a status one of the
statuses; a quantity is one the recorder writes (history.recorded); a run's
environment is JSON of bounded depth (inputs.read_json). A row that fails is
DamagedRow naming its table, row and column, which history.store says in one
line (a damaged store, exit 2) instead of showing an edit as a fact.
"""

from __future__ import annotations

import math
from typing import Any, Callable, Mapping

from asyncbench import inputs
from asyncbench.errors import InputError
from asyncbench.history import model, tables
from asyncbench.results import fields, recordable
from asyncbench.results.model import STATUSES, Verdict
from asyncbench.verdicts import syncs

#: the quantities a variant records (history.recorded: its clocks, its census, its bound), each with its unit; a
#: variant's other quantities are paired ratios (PAIRED_PREFIX, unit PAIRED_UNIT) of a recorded `ab` file
VARIANT_QUANTITIES: Mapping[str, str] = {
    "done_s": "s",
    "issue_s": "s",
    "device_s": "s",
    **syncs.SYNC_UNITS,
    **{quantity: "s" for quantity in model.BOUND_SLACKS.values()},
    model.BOUND_READING: model.READING_UNIT,
}
#: the words a case's status is stored as (str of results.model.Status)
STATUS_WORDS = frozenset(str(status) for status in STATUSES)
#: the words a check's verdict is stored as (str of results.model.Verdict: an `expect:` check's, an `ab` ratio's)
VERDICT_WORDS = frozenset(str(verdict) for verdict in Verdict)


class DamagedRow(ValueError):
    """A row that is not what asyncbench writes (history.store says so in one line: a damaged store)."""


class DamagedStoreRow(DamagedRow):
    """A DamagedRow read from the store (one a file being recorded would put there is a DamagedRow only): `record`
    then says the store is damaged, not the file."""


def held(table: str, row: Any, column: str, check: Callable[..., Any], value: Any, *args: Any) -> Any:
    """`value`, read from `column` of `table`'s row `row`, held to a results file's check of the same field
    (results.fields, results.recordable): its value, or DamagedRow naming the table, row and column."""
    try:
        return check(value, fields.At(""), *args)
    except InputError as exc:
        raise damaged(table, row, column, exc.message) from None


def damaged(table: str, row: Any, column: str, why: str) -> DamagedRow:
    """What a row that is not what asyncbench writes is said as: its table, row and column, and why."""
    return DamagedStoreRow(f"{tables.PREFIX}{table} row {row}, column {column}: {why}")


def run(row: Any) -> None:
    """A run's facts that are shown (its times, its label, its revision)."""
    held("runs", row.id, "created", recordable.created, row.created)
    if row.ordered_at is not None:  # a row recorded before schema 3 holds none
        held("runs", row.id, "ordered_at", recordable.created, row.ordered_at)
    held("runs", row.id, "label", fields.optional_name, row.label)
    held("runs", row.id, "revision", fields.sha, row.revision)


def environment(run_id: Any, text: Any) -> dict[str, Any]:
    """A run's environment as the recorder writes it: a JSON object (of a results file's checked environment,
    recordable.check_environment: nested no deeper than recordable.MAX_DEPTH)."""
    found = _json("runs", run_id, "environment", text)
    found = held("runs", run_id, "environment", fields.mapping, found)
    held("runs", run_id, "environment", recordable.nested, found)
    return dict(found)


def series(row: Any) -> None:
    """A series' names (case, variant, quantity) and unit, its quantity one the recorder writes for it, and its
    length a count."""
    held("series", row.id, "case_id", fields.name, row.case_id, False)
    held("series", row.id, "variant", fields.name, row.variant)
    held("series", row.id, "runs", fields.count, row.runs)
    quantity(row.id, row.variant, row.quantity, row.unit)


def quantity(series_id: Any, variant: Any, name: Any, unit: Any) -> None:
    """A series' quantity and unit (`series_id` its row): a variant's is one of VARIANT_QUANTITIES in its own unit,
    or a paired ratio in ×; a case's own (variant '': its metrics, its machine, its ratios) any name."""
    held("series", series_id, "quantity", fields.name, name, False)
    held("series", series_id, "unit", fields.unit, unit)
    if not variant:
        return
    if name.startswith(model.PAIRED_PREFIX):
        wanted = model.PAIRED_UNIT
    elif name in VARIANT_QUANTITIES:
        wanted = VARIANT_QUANTITIES[name]
    else:
        raise damaged("series", series_id, "quantity", f"{name[:80]!r} is no quantity asyncbench records of a variant")
    if unit != wanted:
        raise damaged("series", series_id, "unit", f"{unit!r} where asyncbench records {name} in {wanted!r}")


def case(row: Any) -> None:
    """A case's id and how it ended, and its params as the recorder writes them (results.recordable.params: a JSON
    object of names, nested no deeper than a results file's, recordable.MAX_DEPTH)."""
    held("cases", row.id, "case_id", fields.name, row.case_id, False)
    held("cases", row.id, "status", fields.word, row.status, STATUS_WORDS)
    _within("cases", row.id, "params", recordable.params, _json("cases", row.id, "params", row.params))


def checks(row: Any) -> tuple[dict[str, Any], ...]:
    """A case's stored checks (`row`: its cases row), each held to what a results file's check is held to of what the
    store keeps of it (results.records._check_verdict): its expectation text, its verdict one of the verdicts, its
    value a number or null, its bounds an interval or null; the list nested no deeper than a results file's. A check
    edited to the verdict "pwned" beside markup was shown in the report's latest run as a verdict."""
    if not row.checks:
        return ()
    found = _json("cases", row.id, "checks", row.checks)

    def check_all(value: Any, at: fields.At) -> list[Any]:
        stored = fields.listed(value, at)
        recordable.nested(stored, at)
        for index, check in enumerate(stored):
            check = fields.mapping(check, at / index)
            fields.text(check.get("expect"), at / index / "expect")
            fields.word(check.get("verdict"), at / index / "verdict", VERDICT_WORDS)
            fields.optional_number(check.get("value"), at / index / "value")
            fields.interval(check.get("bounds"), at / index / "bounds")
        return stored

    return tuple(dict(check) for check in _within("cases", row.id, "checks", check_all, found))


def traces(row: Any) -> dict[str, str]:
    """A case's stored timelines (`row`: its cases row): variant to the path `--trace` wrote, each a name (a results
    file's traces: results.records.check)."""
    if not row.traces:
        return {}
    found = _json("cases", row.id, "traces", row.traces)

    def names(value: Any, at: fields.At) -> Mapping[str, Any]:
        stored = fields.mapping(value, at)
        for variant, path in stored.items():
            fields.name(variant, at / variant)
            fields.name(path, at / variant)
        return stored

    return dict(_within("cases", row.id, "traces", names, found))


def _json(table: str, row: Any, column: str, text: Any) -> Any:
    """`column`'s text parsed as the JSON asyncbench writes there (inputs.read_json: bounded), or a damaged row."""
    try:
        return inputs.read_json(text if isinstance(text, str) else "")
    except ValueError as exc:  # json.JSONDecodeError among them
        raise damaged(table, row, column, f"not JSON as asyncbench writes it ({getattr(exc, 'msg', exc)})") from None


def _within(table: str, row: Any, column: str, check: Callable[..., Any], value: Any) -> Any:
    """`held`, saying where inside the column's JSON the check failed (`[0].verdict: ...`)."""
    try:
        return check(value, fields.At(""))
    except InputError as exc:
        raise damaged(table, row, column, str(exc)) from None


#: how far a change's stored ratio may lie from its stored after over before (the recorder writes that quotient,
#: history.changes.change_points, and a float column keeps it whole: only an edit moves it further)
RATIO_TOLERANCE = 1e-9


def change(row: Any) -> None:
    """A change point as the recorder writes it (history.changes): a name where it lies, finite medians before and
    after, a ratio that is their quotient, its interval (both ends or neither) holding it, a p-value in [0, 1]. A
    trial's edited ratio (×0.5 [0.45–0.55] beside 6.89 ms → 14.2 ms) once passed the gate on a ×2 regression, and
    text in these columns gave a traceback."""
    held("changes", row.id, "at", fields.name, row.at, False)
    before = held("changes", row.id, "before", fields.number, row.before)
    after = held("changes", row.id, "after", fields.number, row.after)
    if before == 0:  # no quotient: the recorder wrote inf
        if row.ratio != math.inf:
            raise damaged("changes", row.id, "ratio", f"{str(row.ratio)[:40]!r} where a median of 0 before makes it inf")
    else:
        ratio = held("changes", row.id, "ratio", fields.number, row.ratio)
        if not math.isclose(ratio, after / before, rel_tol=RATIO_TOLERANCE):
            why = f"{ratio:.6g} is not its after over before ({after:.6g} / {before:.6g} = {after / before:.6g})"
            raise damaged("changes", row.id, "ratio", why)
        low = held("changes", row.id, "ratio_low", fields.optional_number, row.ratio_low)
        high = held("changes", row.id, "ratio_high", fields.optional_number, row.ratio_high)
        if (low is None) != (high is None) or (low is not None and high is not None and not low <= ratio <= high):
            raise damaged("changes", row.id, "ratio_low", f"[{low}, {high}] does not hold its ratio {ratio:.6g}")
    p_value = held("changes", row.id, "p_value", fields.number, row.p_value)
    if not 0 <= p_value <= 1:
        raise damaged("changes", row.id, "p_value", f"{p_value:.6g} is no p-value (0 to 1)")
