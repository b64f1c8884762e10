"""A store's points edited by hand to figures their quantity cannot be, read back by `history`, its gate and `report`:
each is refused in one line naming the table, row and column (exit 2), as a results file refuses the same figure,
never drawn or judged. A new user's findings: a `done_s` of -1 ms in [-2, -0.5] ms printed "below 0 by 1.00 ms" and
was judged by the gate; a `machine_s` of -1 ms printed "the machine's reference took -1.00× its usual time"; one of
1e300 printed a 300-digit ratio; a paired ratio of -0.99× was drawn."""

from __future__ import annotations

from pathlib import Path

import pytest

from asyncbench.history import point_rules, reading, store, target
from asyncbench.results.schema import Report
from tests.support.cli import in_process, refused
from tests.support.helpers import quick_numpy_results
from tests.support.stores import a_store, edited_refused, history, snapshot, sql  # noqa: F401 - history: a SQLite file, or PostgreSQL


@pytest.fixture(scope="module")
def recorded_store(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("store")
    return a_store(folder, quick_numpy_results(folder / "r.json"))


def _point(variant: str, quantity: str, figures: str) -> str:
    """The point of series (`variant`, `quantity`) set to `figures` (value, low, high)."""
    value, low, high = figures.split(",")
    series = f"SELECT id FROM asyncbench_series WHERE variant = '{variant}' AND quantity = '{quantity}'"
    return f"UPDATE asyncbench_points SET value = {value}, low = {low}, high = {high} WHERE series_id = ({series})"


#: a paired ratio's series and point (as an `ab` file's run records them), inserted beside the run's own
PAIRED = (
    "INSERT INTO asyncbench_series (id, machine, machine_info, case_id, variant, quantity, unit, runs) "
    "SELECT 900, machine, machine_info, case_id, '', 'ab:done', 'x', 1 FROM asyncbench_series WHERE id = 1",
    "INSERT INTO asyncbench_points (id, series_id, run_id, case_pk, value, low, high) VALUES (900, 900, 1, 1, {figures})",
)

# each edit, and what the one line says of it (its column and why among it)
EDITS = {
    "a negative variant time": (
        (_point("matmul", "done_s", "-0.001, -0.002, -0.0005"),),
        ("column value", "-0.001 where a time a run measured (s) is at least 0"),
    ),
    "a variant time whose interval reaches below 0": (
        (_point("matmul", "done_s", "0.001, -0.002, 0.002"),),
        ("column low", "-0.002 where a time a run measured (s) is at least 0"),
    ),
    "a variant time past a year": (
        (_point("matmul", "issue_s", "1e300, 1e299, 1e301"),),
        ("column value", "1e+300 where a time a run measured (s) is at most 3.15576e+07"),
    ),
    "a negative machine reference": (
        (_point("", "machine_s", "-0.001, -0.002, -0.0005"),),
        ("column value", "-0.001 where the machine's reference time (s) is at least 1e-06"),
    ),
    "an absurd machine reference": (
        (_point("", "machine_s", "1e300, 1e299, 1e301"),),
        ("column value", "1e+300 where the machine's reference time (s) is at most 3.15576e+07"),
    ),
    "a share of the machine's time past 1": (
        (_point("", "cpu_pressure", "3.5, NULL, NULL"),),
        ("column value", "3.5 where a share of the machine's time is at most 1"),
    ),
    "a case's own time past a year": (
        (_point("", "done_s", "-1e300, -1e301, -1e299"),),
        ("column value", "-1e+300 where a metric in seconds is at least -3.15576e+07"),
    ),
    "a negative rate": (
        (_point("", "gflops", "-5, -6, -4"),),
        ("column value", "-5 where a rate is at least 0"),
    ),
    "a negative paired ratio": (
        (PAIRED[0], PAIRED[1].format(figures="-0.99, -1.2, -0.8")),
        ("asyncbench_points row 900", "column value", "-0.99 where a paired ratio (×) is above 0"),
    ),
}
READERS = {
    "history": ("history",),
    "gate": ("history", "--fail-on-regression"),
    "report": ("report", "-o", "page.html"),
}


@pytest.mark.parametrize("command", READERS, ids=list(READERS))
@pytest.mark.parametrize("edit", EDITS, ids=list(EDITS))
def test_a_point_its_quantity_cannot_be_is_refused_in_one_line(edit, command, recorded_store, tmp_path):
    statements, said = EDITS[edit]
    edited_refused(recorded_store, tmp_path, statements, READERS[command], "asyncbench_points row", *said)


@pytest.mark.parametrize("edit", EDITS, ids=list(EDITS))
def test_recording_the_same_file_again_holds_the_stored_points_it_compares(edit, recorded_store, tmp_path):
    """`record` of a file already recorded compares its figures with the stored points of its run: each is read as
    `history` reads it, a damaged one refused as the store's, never compared bare (a text value was a traceback)."""
    statements, said = EDITS[edit]
    record_again = ("record", str(recorded_store.parent / "r.json"))
    edited_refused(recorded_store, tmp_path, statements, record_again, "asyncbench_points row", *said)


def test_recording_the_same_file_again_refuses_a_stored_point_that_is_text(recorded_store, tmp_path):
    record_again = ("record", str(recorded_store.parent / "r.json"))
    text = ["UPDATE asyncbench_points SET value = 'x'"]
    edited_refused(recorded_store, tmp_path, text, record_again, "asyncbench_points row", "column value")


def test_recording_a_new_run_refuses_a_damaged_point_its_change_search_reads(recorded_store, tmp_path):
    """`record` of a new run searches each of its series for changes over the stored points: a stored time of -1 ms
    is held to its range there too (said as the store's damage, nothing recorded), never searched."""
    import json

    newer = json.loads((recorded_store.parent / "r.json").read_text())
    newer["run_id"], newer["created"] = "0" * 32, "2099-01-01T00:00:00+00:00"  # another run of the same cases
    (tmp_path / "r2.json").write_text(json.dumps(newer))
    statements, said = EDITS["a negative variant time"]
    edited_refused(recorded_store, tmp_path, statements, ("record", "r2.json"), "asyncbench_points row", *said)


@pytest.mark.parametrize("figures", ["-1e300, -1e301, -1e299", "-0.001, -0.002, -0.0005"], ids=["-1e300", "-1 ms"])
def test_a_negative_or_absurd_machine_reference_is_refused_in_postgresql_as_in_sqlite(figures, history, recorded_store, tmp_path):  # noqa: F811
    import sqlalchemy as sa

    opened = store.open_store(target.resolve(history), writing=True)
    opened.record(Report.load(recorded_store.parent / "r.json"), source="r.json")
    engine = sa.create_engine(target.resolve(history).url)
    with engine.begin() as connection:
        connection.execute(sa.text(_point("", "machine_s", figures)))
    engine.dispose()
    for command in READERS.values():
        done = in_process(*command, "--history", history, cwd=tmp_path)
        refused(done, "the store is damaged", "asyncbench_points row", "column value", "the machine's reference time (s) is at least 1e-06")


def test_a_paired_ratio_above_0_and_a_zero_rate_are_read(recorded_store, tmp_path):
    (tmp_path / "h.sqlite").write_bytes(recorded_store.read_bytes())
    sql(tmp_path / "h.sqlite", PAIRED[0], PAIRED[1].format(figures="0.99, 0.9, 1.1"), _point("", "gflops", "0, 0, 0"))
    for command in READERS.values():
        done = in_process(*command, "--history", "h.sqlite", cwd=tmp_path)
        assert done.returncode == 0, done.stderr


def test_a_point_is_held_to_its_quantitys_range_by_the_rule_the_reader_and_recorder_share():
    rule = point_rules.range_of("v", "done_s", "s")
    assert reading.figures(0.001, 0.0005, 0.002, held=rule) == (0.001, 0.0005, 0.002)
    with pytest.raises(reading.DamagedRow, match="a time a run measured"):
        reading.figures(-0.001, -0.002, -0.0005, held=rule)
    assert point_rules.range_of("", "illusion", "x") is None  # a case's own metric in a unit of its own: any finite figure
