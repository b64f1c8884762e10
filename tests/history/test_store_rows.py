"""A store's rows edited by hand, read back by `history` and `report`: each read is held to what asyncbench writes
(history.row_rules: a results file's own checks), so an edit is refused in one line naming the table, row and column
(exit 2), never a traceback and never shown as a fact: a point of no run, a run's environment nested 50,000 deep,
a run's time that is no time, a quantity no variant records, a case id of a million characters, a unit that is
markup, a status no case ends with."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from tests.support.cli import in_process, refused
from tests.support.helpers import quick_numpy_results
from tests.support.stores import a_store, edited_refused, sql


@pytest.fixture(scope="module")
def recorded_store(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("store")
    return a_store(folder, quick_numpy_results(folder / "r.json"))


def _first(path: Path, statement: str) -> object:
    connection = sqlite3.connect(path)
    try:
        return connection.execute(statement).fetchone()[0]
    finally:
        connection.close()


def _change(row: int, figures: str) -> str:
    """A change point of series 1 at run 1 inserted as row `row`, its before, after, ratio, ends and p-value `figures`."""
    columns = "id, series_id, run_id, at, before, after, ratio, ratio_low, ratio_high, p_value"
    return f"INSERT INTO asyncbench_changes ({columns}) VALUES ({row}, 1, 1, 'run-1', {figures})"


# each edit, and what the one line says of it (its table, row and column among it)
EDITS = {
    "a point of no run": (
        "INSERT INTO asyncbench_points VALUES (9999, 1, 777, 888, 0.001, NULL, NULL)",
        ("asyncbench_points row 9999", "column run_id", "run 777"),
    ),
    "an environment nested 50,000 deep": (
        "UPDATE asyncbench_runs SET environment = '{\"a\":' || replace(hex(zeroblob(25000)), '0', '[')",
        ("asyncbench_runs row 1", "column environment", "nested too deeply"),
    ),
    "an environment that is not JSON": (
        "UPDATE asyncbench_runs SET environment = '[[['",
        ("asyncbench_runs row 1", "column environment", "not JSON"),
    ),
    "a run's time that is no time": (
        "UPDATE asyncbench_runs SET created = 'yesterday'",
        ("asyncbench_runs row 1", "column created", "'yesterday' is not a time"),
    ),
    "a label with an escape": (
        "UPDATE asyncbench_runs SET label = char(27) || ']8;;http://evil' || char(7) || 'x'",
        ("asyncbench_runs row 1", "column label", "control character"),
    ),
    "a quantity no variant records": (
        "UPDATE asyncbench_series SET quantity = 'rm -rf' WHERE quantity = 'done_s' AND variant != ''",
        ("asyncbench_series row", "column quantity", "'rm -rf' is no quantity"),
    ),
    "a case id of a million characters": (
        "UPDATE asyncbench_series SET case_id = replace(hex(zeroblob(500000)), '0', 'A') WHERE id = 1",
        ("asyncbench_series row 1", "column case_id", "longer than 1000 characters (1000000)"),
    ),
    "a unit that is markup": (
        "UPDATE asyncbench_series SET unit = '<b>' WHERE id = 1",
        ("asyncbench_series row 1", "column unit", "'<b>' is not a unit"),
    ),
    "a clock in another unit": (
        "UPDATE asyncbench_series SET unit = 'ms' WHERE quantity = 'done_s'",
        ("asyncbench_series row", "column unit", "'ms' where asyncbench records done_s in 's'"),
    ),
    # a trial: the guide promised the table, row and column, and these said only "a point holds 'inf'"
    "a point's figure that is a string": (
        "UPDATE asyncbench_points SET value = 'fast' WHERE id = 1",
        ("asyncbench_points row 1", "column value", "holds 'fast' where asyncbench writes a finite number"),
    ),
    "an interval's end that is infinite": (
        "UPDATE asyncbench_points SET high = 9e999 WHERE id = (SELECT min(id) FROM asyncbench_points WHERE high IS NOT NULL)",
        ("asyncbench_points row", "column high", "holds 'inf'"),
    ),
    "a point outside its own interval": (
        "UPDATE asyncbench_points SET value = high * 2 WHERE id = (SELECT min(id) FROM asyncbench_points WHERE high > 0)",
        ("asyncbench_points row", "column value", "lies outside its own interval"),
    ),
    # a trial's: a ratio edited to ×0.5 beside 6.89 ms → 14.2 ms passed the gate on a ×2 regression; text in these
    # columns gave a traceback
    "a change whose ratio is not its after over before": (
        _change(9001, "0.00689, 0.0142, 0.5, 0.45, 0.55, 1e-10"),
        ("asyncbench_changes row 9001", "column ratio", "is not its after over before"),
    ),
    "a change's ratio that is text": (
        _change(9002, "0.001, 0.002, 'abc', 1.9, 2.1, 1e-10"),
        ("asyncbench_changes row 9002", "column ratio", "expected a number"),
    ),
    "a change whose interval misses its ratio": (
        _change(9003, "0.001, 0.002, 2.0, 2.1, 1.95, 1e-10"),
        ("asyncbench_changes row 9003", "column ratio_low", "does not hold its ratio"),
    ),
    "a change's p-value that is no probability": (
        _change(9004, "0.001, 0.002, 2.0, 1.9, 2.1, 7"),
        ("asyncbench_changes row 9004", "column p_value", "no p-value"),
    ),
    "a series' length below nothing": (
        "UPDATE asyncbench_series SET runs = -5 WHERE id = 1",
        ("asyncbench_series row 1", "column runs", "-5"),
    ),
}
READERS = {"history": ("history",), "report": ("report", "-o", "page.html")}


@pytest.mark.parametrize("command", READERS, ids=list(READERS))
@pytest.mark.parametrize("edit", EDITS, ids=list(EDITS))
def test_a_row_edited_by_hand_is_refused_in_one_line_naming_its_table_row_and_column(edit, command, recorded_store, tmp_path):
    statement, said = EDITS[edit]
    edited_refused(recorded_store, tmp_path, [statement], READERS[command], *said)


def test_a_status_no_case_ends_with_is_refused_where_the_latest_run_is_shown(recorded_store, tmp_path):
    (tmp_path / "h.sqlite").write_bytes(recorded_store.read_bytes())
    sql(tmp_path / "h.sqlite", "UPDATE asyncbench_cases SET status = 'pwned' WHERE id = 1")
    done = in_process("report", "-o", "page.html", "--history", "h.sqlite", cwd=tmp_path)
    refused(done, "asyncbench_cases row 1", "column status", "'pwned' is not one of error, ok, skipped")
    assert not (tmp_path / "page.html").exists()


def test_a_store_as_asyncbench_wrote_it_is_read(recorded_store, tmp_path):
    (tmp_path / "h.sqlite").write_bytes(recorded_store.read_bytes())
    assert _first(tmp_path / "h.sqlite", "SELECT count(*) FROM asyncbench_series") > 0
    for command in READERS.values():
        done = in_process(*command, "--history", "h.sqlite", cwd=tmp_path)
        assert done.returncode == 0, done.stderr
