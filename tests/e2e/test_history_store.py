# ruff: noqa: F811 (the `history` fixture, imported, is every parametrized test's argument)
"""The history store through the commands (`record`, `history`, `report`), for real: a SQLite file and a PostgreSQL
server (`make postgres`). Runs, a run recorded as it ends, the default store, libpq's password and a locked store run
in a fresh interpreter; the refusals and reads, in this process (cli.in_process: the same commands, without an
interpreter's start each). The store's own tests: tests/history/test_store.py."""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from asyncbench.history import store, target
from asyncbench.results.schema import Report
from tests.support.cli import asyncbench, cli_env, in_process
from tests.support.helpers import quick_numpy_results
from tests.support.stores import POSTGRES, empty_postgres, history  # noqa: F401 - the fixture, imported


def test_a_results_file_is_recorded_once_and_its_run_is_the_same_as_the_one_recorded_as_it_ended(history, tmp_path):
    ran = asyncbench(
        "run", "-w", "matmul", "-b", "numpy", "--quick", "--no-progress", "-o", "r.json", "--record", "--history", history, cwd=tmp_path
    )
    assert ran.returncode == 0, ran.stderr
    assert "recorded in" in ran.stderr
    again = asyncbench("record", "r.json", "--history", history, cwd=tmp_path)
    assert again.returncode == 0, again.stderr
    assert "already recorded (run 1)" in again.stderr
    opened = store.open_store(target.resolve(history))
    assert [run.id for run in opened.recent(10)] == [1]


# The planted step is in time slept, not in arithmetic: between processes on a shared machine the same arithmetic
# drifts (twelve processes of 20 products of 96² floats: medians 356–410 µs, a 14% spread; a Python loop: 54%),
# and 6 + 6 such points then miss p < 0.001 now and then. The pipeline under test — record, store, detect, report
# where — is the same either way; how often steps are found under real noise is measured by
# benchmarks/history_changes.py.
GROWING = """
import os
import time
import asyncbench

GROWN = 26 if int(os.environ["RUN"]) >= 7 else 20  # 30% more work from the 7th run on


def _waits(units):
    def run():
        time.sleep(units * 2e-4)  # 4 ms, then 5.2 ms: a wait for work done elsewhere (a device, a server)

    return run


@asyncbench.step(sync_every=(0,), steps=1)
def flat(backend, device, params):
    return _waits(20)


@asyncbench.step(sync_every=(0,), steps=1)
def grows(backend, device, params):
    return _waits(GROWN)
"""


RUNS = 12


@pytest.fixture(scope="session")  # not module: under xdist the module's fixture was built again for the second store
def planted_runs(tmp_path_factory) -> list[Path]:
    """The twelve runs' results files, run once for both stores (twelve fresh processes: most of the test's time).
    Each store records them as `run --record` would, through store.record (the first test here checks that a run
    recorded as it ended is the run its file holds)."""
    folder = tmp_path_factory.mktemp("planted")
    (folder / "mine.py").write_text(GROWING)
    (folder / "c.yaml").write_text(
        textwrap.dedent("""\
        defaults: {backends: [numpy], devices: [cpu], max_time_s: 0.25, min_samples: 10}
        experiments:
          - workload: mine.py:flat
          - workload: mine.py:grows
        """)
    )
    files = []
    for run in range(1, RUNS + 1):
        done = asyncbench("run", "c.yaml", "--in-process", "--no-progress", "-o", f"run-{run}.json", cwd=folder, env={"RUN": str(run)})
        assert done.returncode == 0, done.stderr
        files.append(folder / f"run-{run}.json")
    return files


@pytest.mark.slow
def test_a_planted_step_is_found_where_it_starts_and_a_flat_series_shows_none(history, tmp_path, planted_runs):
    """Twelve recorded runs of a user workload whose work grows 30% from the 7th, beside one that stays flat."""
    opened = store.open_store(target.resolve(history), writing=True)
    for run, path in enumerate(planted_runs, start=1):
        # recorded without the machine's reference: the step is in time slept, which no machine moves, and the runs are
        # measured beside the suite's other tests, whose load would discount some of them (history.discount, tested
        # with real series in tests/history/test_machine_history.py); the pipeline under test is the same
        report = Report.load(path)
        report = dataclasses.replace(report, results=tuple(dataclasses.replace(r, reference=None) for r in report.results))
        assert opened.record(report, label=f"run-{run}", source=str(path)).new
    shown = in_process("history", "--history", history, "--format", "json", cwd=tmp_path)
    assert shown.returncode == 0, shown.stderr
    series = json.loads(shown.stdout)
    done_s = {s["case"].split("[")[0]: s for s in series if s["quantity"] == "done_s" and s["variant"]}
    assert len(done_s) == 2
    assert [p["label"] for p in done_s["grows"]["points"]] == [f"run-{i}" for i in range(1, RUNS + 1)]
    values = str({name: [round(p["value"] * 1e6) for p in one["points"]] for name, one in done_s.items()})  # a str: shown whole
    assert [c["at"] for c in done_s["grows"]["change_points"]] == ["run-7"], values
    assert done_s["grows"]["change_points"][0]["ratio"] > 1.15
    assert done_s["flat"]["change_points"] == [], values


def test_a_store_from_a_newer_asyncbench_is_refused_in_one_line(history, tmp_path):
    import sqlalchemy as sa

    store.open_store(target.resolve(history), writing=True)
    engine = sa.create_engine(target.resolve(history).url)
    with engine.begin() as connection:
        connection.execute(sa.text("UPDATE asyncbench_meta SET value = '99' WHERE key = 'schema_version'"))
    engine.dispose()
    shown = in_process("history", "--history", history, cwd=tmp_path)
    assert shown.returncode == 2
    assert "newer than this asyncbench reads" in shown.stderr
    assert "Traceback" not in shown.stderr


def test_a_file_that_is_not_results_is_refused_and_nothing_is_recorded(tmp_path):
    (tmp_path / "notes.json").write_text('{"hello": 1}')
    good = quick_numpy_results(tmp_path / "good.json")
    done = in_process("record", str(good), "notes.json", "--history", "h.sqlite", cwd=tmp_path)
    assert done.returncode == 2
    assert "notes.json" in done.stderr
    assert "Traceback" not in done.stderr
    assert not (tmp_path / "h.sqlite").exists()  # nothing recorded: the store was not even made


def test_a_sqlite_store_that_is_not_a_database_is_one_line(tmp_path):
    (tmp_path / "h.sqlite").write_text("not a database\n" * 100)
    done = in_process("history", "--history", "h.sqlite", cwd=tmp_path)
    assert done.returncode == 2
    assert "cannot open" in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1


@pytest.mark.postgres
def test_a_postgres_password_never_shows_in_errors(tmp_path):
    wrong = POSTGRES.replace("://asyncbench:asyncbench@", "://asyncbench:s3cret-word@")
    done = in_process("history", "--history", wrong, cwd=tmp_path)
    assert done.returncode == 2
    assert "s3cret-word" not in done.stderr + done.stdout
    assert "***" in done.stderr


def test_an_unreachable_postgres_is_one_line_without_the_password(tmp_path):
    done = in_process("history", "--history", "postgresql://me:hunter2@127.0.0.1:9/none", cwd=tmp_path)
    assert done.returncode == 2
    assert "cannot open" in done.stderr
    assert "hunter2" not in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1


def test_a_locked_sqlite_store_is_one_line_and_exit_2(tmp_path):
    import sqlite3

    good = quick_numpy_results(tmp_path / "good.json")
    store.open_store(target.resolve(str(tmp_path / "h.sqlite")), writing=True)
    holder = sqlite3.connect(tmp_path / "h.sqlite")
    holder.execute("BEGIN EXCLUSIVE")  # another process writing, for longer than the store waits
    # the store's wait for the lock (database.SQLITE_BUSY_S, 10 s) cut to 1 s in the recording process: the lock is
    # held throughout, so the record fails the same way, 9 s sooner
    impatient = (
        "from asyncbench.history import database; database.SQLITE_BUSY_S = 1.0; "
        "import runpy; runpy.run_module('asyncbench', run_name='__main__', alter_sys=True)"
    )
    try:  # its own interpreter, not tests.support.cli's runner: `python -m asyncbench` cannot cut the store's wait
        done = subprocess.run(
            [sys.executable, "-c", impatient, "record", str(good), "--history", "h.sqlite"],
            capture_output=True, text=True, timeout=600, cwd=tmp_path, env=cli_env(),
        )  # fmt: skip
    finally:
        holder.rollback()
        holder.close()
    assert done.returncode == 2, done.stderr
    assert "locked by another process (waited 1 s)" in done.stderr
    assert "Traceback" not in done.stderr


def test_without_history_the_store_is_a_sqlite_file_in_the_current_directory(tmp_path):
    good = quick_numpy_results(tmp_path / "good.json")
    done = asyncbench("record", str(good), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert (tmp_path / ".asyncbench" / "history.sqlite").exists()
    shown = asyncbench("report", "-o", "page.html", cwd=tmp_path)
    assert shown.returncode == 0, shown.stderr
    assert (tmp_path / "page.html").read_text().startswith("<!doctype html>")
    empty = asyncbench("report", "-o", "none.html", "--history", "empty.sqlite", cwd=tmp_path)
    assert empty.returncode == 2
    assert "no store there" in empty.stderr


@pytest.mark.postgres
def test_a_postgres_url_without_a_password_takes_libpqs_own(tmp_path):
    """PGPASSWORD (and ~/.pgpass) apply as for psql: the URL need not carry the password."""
    bare = POSTGRES.replace("://asyncbench:asyncbench@", "://asyncbench@")
    empty_postgres()
    done = asyncbench(
        "record", str(quick_numpy_results(tmp_path / "r.json")), "--history", bare, cwd=tmp_path, env={"PGPASSWORD": "asyncbench"}
    )
    assert done.returncode == 0, done.stderr


def test_an_ab_results_file_is_recorded_as_paired_ratios_of_the_head_side(history, tmp_path):
    from asyncbench.results import ab_report, paired
    from asyncbench.results.labels import Label

    facts = Report.load(quick_numpy_results(tmp_path / "r.json")).environment
    side = paired.Side("head", "a1b2c3d (HEAD)", "python3", "3.11", facts=facts)
    ratio = paired.PairedRatio("matmul", paired.VARIANT, "s", 0.010, 0.013, 1.3, (1.22, 1.38), Label.SLOWER)
    case = paired.PairedCase("matmul[numpy,cpu]", "ok", ratios=(ratio,), rounds=40)
    report = ab_report.ABReport(
        "2026-11-23T12:00:00+00:00", "0.1.0", dataclasses.replace(side, name="base"), side, 0.05, 0.01, False, "SIGSTOP", (case,)
    )
    (tmp_path / "ab.json").write_text(report.to_json())
    done = in_process("record", "ab.json", "--history", history, "--label", "pr-12", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    again = in_process("record", "ab.json", "--history", history, cwd=tmp_path)
    assert "already recorded" in again.stderr
    [series] = store.open_store(target.resolve(history)).series("matmul")
    assert (series.variant, series.quantity, series.unit) == ("matmul", "ab:matmul@a1b2c3d", "x")
    assert series.points[0][4:7] == (1.3, 1.22, 1.38)  # value, low, high
    assert series.points[0].label == "pr-12"
    assert series.points[0].revision == "a1b2c3d"
