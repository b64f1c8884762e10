"""The history store given by mistake or by a hostile hand, through the real CLI: another application's SQLite
database, a `--history` that reads as a URL, a store whose schema version or tables are not what asyncbench wrote,
and `--history`/`--label` without `--record`. Each is one line (`asyncbench: error: ...`), exit 2, no traceback,
and nothing written (the files' bytes compared before and after).

The cases that differ only in what a command reads (a URL-ish name, a damaged table, a spoilt row) run the commands
in this process (cli.in_process: the same commands, exit status and streams, without 0.5-1.5 s of an interpreter's
start each); another application's database, a file that is not one, the environment variable, PostgreSQL and a
device run them in a fresh interpreter, as a user does."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from asyncbench.history import store, target
from tests.support.cli import asyncbench, in_process, refused
from tests.support.helpers import quick_numpy_results
from tests.support.stores import a_store, snapshot, sql


@pytest.fixture(scope="module")
def results_file(tmp_path_factory) -> Path:
    return quick_numpy_results(tmp_path_factory.mktemp("results") / "r.json")


# --- 1. another application's SQLite database -------------------------------------------------------------------


def another_applications(folder: Path) -> Path:
    path = folder / "app.db"
    sql(path, "CREATE TABLE users (id INTEGER PRIMARY KEY, name TEXT)", "INSERT INTO users (name) VALUES ('ada')")
    return path


RECORDING = {
    "record": lambda results: ("record", str(results)),
    "run --record": lambda results: ("run", "-w", "matmul", "-b", "numpy", "--quick", "--no-progress", "--record", "-o", "new.json"),
}


@pytest.mark.parametrize("command", RECORDING, ids=list(RECORDING))
def test_another_applications_database_is_refused_and_left_as_it_was(command, results_file, tmp_path):
    another_applications(tmp_path)
    (tmp_path / "r.json").write_bytes(results_file.read_bytes())
    before = snapshot(tmp_path)
    done = asyncbench(*RECORDING[command](tmp_path / "r.json"), "--history", "app.db", cwd=tmp_path)
    refused(done, "app.db", "not an asyncbench store")
    assert snapshot(tmp_path) == before  # no table added, no journal left, the run not even started


def test_an_empty_file_or_a_new_one_is_made_a_store(results_file, tmp_path):
    (tmp_path / "empty.sqlite").write_bytes(b"")
    for name in ("empty.sqlite", "new.sqlite"):
        done = in_process("record", str(results_file), "--history", name, cwd=tmp_path)
        assert done.returncode == 0, done.stderr
        assert len(store.open_store(target.resolve(str(tmp_path / name))).recent(10)) == 1


def test_a_file_that_is_not_a_database_is_refused_and_left_as_it_was(results_file, tmp_path):
    (tmp_path / "notes.txt").write_text("not a database\n" * 100)
    before = snapshot(tmp_path)
    refused(asyncbench("record", str(results_file), "--history", "notes.txt", cwd=tmp_path), "notes.txt")
    assert snapshot(tmp_path) == before


# --- 2. paths are paths ------------------------------------------------------------------------------------------

LITERAL = ["a%3Fb.sqlite", "a#b.sqlite", "my store.sqlite", "a@b:c.sqlite", "a%20b.sqlite", ":memory:"]


@pytest.mark.parametrize("name", LITERAL)
def test_a_history_path_names_exactly_that_file(name, results_file, tmp_path):
    done = in_process("record", str(results_file), "--history", name, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert sorted(path.name for path in tmp_path.iterdir()) == [name]  # that file, none other (no `a?b.sqlite`)
    shown = in_process("history", "--history", name, "--format", "json", cwd=tmp_path)
    assert shown.returncode == 0, shown.stderr


URLISH = {
    "x.sqlite?mode=ro": ("x.sqlite?mode=ro", "?"),
    "x?mode=ro": ("x?mode=ro", "?"),
    "sqlite:///x.sqlite": ("sqlite:///x.sqlite", "sqlite:"),
    "sqlite:x.sqlite": ("sqlite:x.sqlite", "sqlite:"),
    "file:x.sqlite": ("file:x.sqlite?mode=ro", "file:"),
    "bogus://x": ("bogus://x", "bogus:"),
    "a newline": ("a\nb.sqlite", "control character"),
}


@pytest.mark.parametrize("case", URLISH, ids=list(URLISH))
@pytest.mark.parametrize("command", ["record", "history", "report"])
def test_a_history_that_reads_as_a_url_is_refused_in_one_line_and_nothing_is_written(command, case, results_file, tmp_path):
    given, word = URLISH[case]
    args = {"record": ("record", str(results_file)), "history": ("history",), "report": ("report", "-o", "page.html")}[command]
    done = in_process(*args, "--history", given, cwd=tmp_path)
    refused(done, "--history", word)
    assert list(tmp_path.iterdir()) == []


def test_the_environment_variable_is_held_to_the_same_rule(results_file, tmp_path):
    done = asyncbench("record", str(results_file), cwd=tmp_path, env={"ASYNCBENCH_HISTORY": "x.sqlite?mode=ro"})
    refused(done, "x.sqlite?mode=ro")
    assert list(tmp_path.iterdir()) == []


# --- 3. a store whose schema is not what asyncbench wrote --------------------------------------------------------

DAMAGED = {
    "a text schema version": ("UPDATE asyncbench_meta SET value = 'two' WHERE key = 'schema_version'", "schema version 'two'"),
    "a negative schema version": ("UPDATE asyncbench_meta SET value = '-1' WHERE key = 'schema_version'", "schema version -1"),
    "schema version 0": ("UPDATE asyncbench_meta SET value = '0' WHERE key = 'schema_version'", "schema version 0"),
    "no schema version": ("DELETE FROM asyncbench_meta WHERE key = 'schema_version'", "schema version"),
    "a table missing": ("DROP TABLE asyncbench_points", "asyncbench_points"),
    "a column missing": ("ALTER TABLE asyncbench_series DROP COLUMN unit", "asyncbench_series"),
}

READERS = {
    "history": lambda results: ("history",),
    "report": lambda results: ("report", "-o", "page.html"),
    "record": lambda results: ("record", str(results)),
    "run --record": lambda results: ("run", "-w", "matmul", "-b", "numpy", "--quick", "--no-progress", "--record", "-o", "new.json"),
}


@pytest.fixture(scope="module")
def recorded_store(results_file, tmp_path_factory) -> Path:
    return a_store(tmp_path_factory.mktemp("store"), results_file)


@pytest.mark.parametrize("damage", DAMAGED, ids=list(DAMAGED))
@pytest.mark.parametrize("command", READERS, ids=list(READERS))
def test_a_damaged_store_is_one_line_naming_the_store_and_what_is_wrong(command, damage, recorded_store, results_file, tmp_path):
    statement, word = DAMAGED[damage]
    folder = tmp_path / "work"
    folder.mkdir()
    (folder / "h.sqlite").write_bytes(recorded_store.read_bytes())
    sql(folder / "h.sqlite", statement)
    before = snapshot(folder)
    done = in_process(*READERS[command](results_file), "--history", "h.sqlite", cwd=folder)
    refused(done, "h.sqlite", word)
    assert snapshot(folder) == before


# --- 4. --history and --label are for recording ------------------------------------------------------------------

QUICK_RUN = ("run", "-w", "matmul", "-b", "numpy", "--quick", "--no-progress", "-o", "new.json")
WITHOUT_RECORD = {
    "run --history --label": (*QUICK_RUN, "--history", "h.sqlite", "--label", "v1"),
    "run --label": (*QUICK_RUN, "--label", "v1"),
    "run --history (an unknown scheme)": (*QUICK_RUN, "--history", "bogus://x"),
    "merge --history": ("merge", "a.json", "b.json", "-o", "new.json", "--history", "h.sqlite"),
}


@pytest.mark.parametrize("case", WITHOUT_RECORD, ids=list(WITHOUT_RECORD))
def test_history_or_label_without_record_is_refused_before_anything_runs(case, tmp_path):
    done = in_process(*WITHOUT_RECORD[case], cwd=tmp_path)
    refused(done, "--record")
    assert list(tmp_path.iterdir()) == []  # nothing ran: no results file, no store


def test_the_environment_variable_alone_still_lets_a_run_go_unrecorded(tmp_path):
    """ASYNCBENCH_HISTORY is where every command's store is by default (CI sets it for a whole job): a run
    without --record neither records nor refuses."""
    done = asyncbench(*QUICK_RUN, cwd=tmp_path, env={"ASYNCBENCH_HISTORY": "h.sqlite"})
    assert done.returncode == 0, done.stderr
    assert sorted(path.name for path in tmp_path.iterdir()) == ["new.json"]


def test_an_unknown_scheme_with_record_is_refused_before_anything_runs(tmp_path):
    refused(asyncbench(*QUICK_RUN, "--record", "--history", "bogus://x", cwd=tmp_path), "bogus:")
    assert list(tmp_path.iterdir()) == []


# a column asyncbench writes as JSON, spoilt, and the commands that read it (`history` reads no case's checks)
ROWS = {
    "history: a machine's facts": ("history", "UPDATE asyncbench_series SET machine_info = '{'", "not JSON"),
    "report: a machine's facts": ("report", "UPDATE asyncbench_series SET machine_info = '{'", "not JSON"),
    "report: a case's checks": ("report", "UPDATE asyncbench_cases SET checks = '['", "not JSON"),
    "report: a case's timelines": ("report", "UPDATE asyncbench_cases SET traces = 'x'", "not JSON"),
    # a new user's edit: a figure as text made `history` and `report` a TypeError in the discount's arithmetic
    "history: a point's value as text": ("history", "UPDATE asyncbench_points SET value = 'abc'", "'abc' where"),
    "report: a point's value as text": ("report", "UPDATE asyncbench_points SET value = 'abc'", "'abc' where"),
    "history: a point's interval as text": ("history", "UPDATE asyncbench_points SET low = 'x'", "'x' where"),
    "history: a point's value beyond a float": ("history", "UPDATE asyncbench_points SET value = 1e999", "'inf' where"),
}


@pytest.mark.parametrize("row", ROWS, ids=list(ROWS))
def test_a_row_that_is_not_what_asyncbench_writes_is_one_line(row, recorded_store, results_file, tmp_path):
    command, statement, said = ROWS[row]
    (tmp_path / "h.sqlite").write_bytes(recorded_store.read_bytes())
    sql(tmp_path / "h.sqlite", statement)
    before = snapshot(tmp_path)
    done = in_process(*READERS[command](results_file), "--history", "h.sqlite", cwd=tmp_path)
    refused(done, "h.sqlite", said)
    assert snapshot(tmp_path) == before


# --- PostgreSQL: other applications' tables may live beside a store; a damaged store is refused as on SQLite ------

POSTGRES = os.environ.get("ASYNCBENCH_TEST_POSTGRES", "")
OTHER = "someone_elses_users"


def postgres(*statements: str) -> None:
    import sqlalchemy as sa

    engine = sa.create_engine(target.resolve(POSTGRES).url)
    with engine.begin() as connection:
        for statement in statements:
            connection.execute(sa.text(statement))
    engine.dispose()


def _emptied() -> None:
    """The test server's database without asyncbench's tables or this test's own."""
    names = ("changes", "points", "series", "cases", "runs", "meta")
    postgres(*(f"DROP TABLE IF EXISTS asyncbench_{name} CASCADE" for name in names), f"DROP TABLE IF EXISTS {OTHER}")


@pytest.mark.postgres
def test_a_postgres_store_beside_other_tables_is_made_and_a_damaged_one_refused(results_file, tmp_path):
    _emptied()
    try:
        postgres(f"CREATE TABLE {OTHER} (id INTEGER)")
        done = asyncbench("record", str(results_file), "--history", POSTGRES, cwd=tmp_path)
        assert done.returncode == 0, done.stderr  # another application's table beside it: the store is made
        postgres("UPDATE asyncbench_meta SET value = '-3' WHERE key = 'schema_version'")
        refused(asyncbench("history", "--history", POSTGRES, cwd=tmp_path), "schema version -3")
        postgres("UPDATE asyncbench_meta SET value = '2' WHERE key = 'schema_version'", "DROP TABLE asyncbench_changes")
        refused(asyncbench("record", str(results_file), "--history", POSTGRES, cwd=tmp_path), "asyncbench_changes")
        postgres("DROP TABLE asyncbench_meta")  # asyncbench's tables without a schema version: not a store to add to
        refused(asyncbench("record", str(results_file), "--history", POSTGRES, cwd=tmp_path), "not an asyncbench store")
    finally:
        _emptied()


def test_a_device_named_as_the_store_is_refused_and_nothing_is_written_beside_it(results_file, tmp_path):
    """A new user's `record --history /dev/null` said "disk I/O error" and left /dev/null-journal behind."""
    journal = Path("/dev/null-journal")
    journal.unlink(missing_ok=True)
    done = asyncbench("record", str(results_file), "--history", "/dev/null", cwd=tmp_path)
    refused(done, "/dev/null", "not a regular file")
    assert not journal.exists()
