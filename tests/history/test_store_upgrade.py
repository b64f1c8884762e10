"""A store from before schema 3 (issue 53, items 1 and 12): its wrongly recorded `ab` runs removed, named, and recorded
right when their files are recorded again; each run marked as a results or an `ab` run; and a run whose file says it
was made in the future recorded as data, but never the latest run for it."""

from __future__ import annotations

import dataclasses
import datetime
import math
import sqlite3

import pytest

from asyncbench.history import clock, store, tables, target
from asyncbench.results.schema import Report
from tests.support.ab_files import recorded_ab, recorded_gate
from tests.support.cli import asyncbench
from tests.support.helpers import quick_numpy_results
from tests.support.stores import history  # noqa: F401 - a store: a SQLite file, or the test PostgreSQL database


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    return Report.load(quick_numpy_results(tmp_path_factory.mktemp("results") / "r.json"))


def _as_schema_2(where: str, wrong_runs: list[int]) -> None:
    """What an asyncbench before schema 3 left: no kind or ordered_at, and each `ab` run of a file with blocks stored
    with its last block's log ratio as the point, beside the true interval (a +9.6% gate's: its case's checks held
    the same, so the ratio is nowhere in the store)."""
    import sqlalchemy as sa

    engine = sa.create_engine(target.resolve(where).url)
    with engine.begin() as connection:
        for run in wrong_runs:
            connection.execute(sa.text("UPDATE asyncbench_points SET value = 0.0938 WHERE run_id = :run"), {"run": run})
        connection.execute(sa.text("DROP INDEX ix_asyncbench_runs_ordered_at"))
        connection.execute(sa.text("ALTER TABLE asyncbench_runs DROP COLUMN ordered_at"))
        connection.execute(sa.text("ALTER TABLE asyncbench_runs DROP COLUMN kind"))
        connection.execute(sa.text("UPDATE asyncbench_meta SET value = '2' WHERE key = 'schema_version'"))
    engine.dispose()


def test_an_upgrade_removes_the_wrong_ab_runs_names_their_files_and_they_record_right_again(history, results):  # noqa: F811
    path = history
    opened = store.open_store(target.resolve(path), writing=True)
    assert opened.record(results, source="/ci/r.json").run == 1
    old = recorded_ab(dataclasses.replace(recorded_gate(1, 1.0), block_log_ratios=()), 1)  # a file before blocks: right
    assert opened.record_ab(old, source="/ci/ab-old.json").run == 2
    wrong = [recorded_ab(recorded_gate(day, 1.096), day) for day in (2, 3)]
    for day, data in zip((2, 3), wrong, strict=True):
        assert opened.record_ab(data, label=f"pr-{day}", source=f"/ci/ab-{day}.json").run == 1 + day
    _as_schema_2(path, [3, 4])
    said: list[str] = []
    upgraded = store.open_store(target.resolve(path), say=said.append)
    [note] = said
    assert "2 `ab` run(s) removed" in note
    assert "'/ci/ab-2.json', '/ci/ab-3.json'" in note
    assert "record their files again" in note
    assert sorted((run.id, run.kind) for run in upgraded.recent(10)) == [(1, "run"), (2, "ab")]
    [series] = upgraded.series("changed")
    assert [(p.run, p.value) for p in series.points] == [(2, old.cases[0].ratios[0].ratio)]
    assert series.runs == 1
    assert series.change_points == ()
    store.open_store(target.resolve(path), say=said.append)
    assert len(said) == 1  # said once, at the upgrade
    again = store.open_store(target.resolve(path), writing=True)
    for data in wrong:
        assert again.record_ab(data).new  # recorded again: the run was removed, so its file is not "already there"
    [series] = again.series("changed")
    values = [p.value for p in series.points]
    assert values[1:] == [data.cases[0].ratios[0].ratio for data in wrong]
    assert all(math.isclose(v, 1.096, rel_tol=0.01) for v in values[1:])
    assert all(p.low <= p.value <= p.high for p in series.points)


def test_an_upgraded_store_reads_in_history_and_says_so_once(tmp_path, results):
    path = tmp_path / "h.sqlite"
    opened = store.open_store(target.resolve(str(path)), writing=True)
    opened.record(results)
    opened.record_ab(recorded_ab(recorded_gate(5, 1.05), 5), source=str(tmp_path / "ab.json"))
    _as_schema_2(str(path), [2])
    first = asyncbench("history", "--history", "h.sqlite", cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    assert "1 `ab` run(s) removed" in first.stderr
    assert "Traceback" not in first.stderr
    second = asyncbench("history", "--history", "h.sqlite", cwd=tmp_path)
    assert second.returncode == 0, second.stderr
    assert "removed" not in second.stderr


def test_an_upgrade_with_nothing_wrong_says_nothing_and_keeps_every_run(tmp_path, results):
    path = tmp_path / "h.sqlite"
    opened = store.open_store(target.resolve(str(path)), writing=True)
    opened.record(results)
    opened.record_ab(recorded_ab(dataclasses.replace(recorded_gate(1, 1.0), block_log_ratios=()), 1))
    _as_schema_2(str(path), [])
    said: list[str] = []
    upgraded = store.open_store(target.resolve(str(path)), say=said.append)
    assert said == []
    assert sorted((run.id, run.kind) for run in upgraded.recent(10)) == [(1, "run"), (2, "ab")]


def _created(report, when: datetime.datetime, run_id: str):
    return dataclasses.replace(report, created=when.isoformat(timespec="seconds"), run_id=run_id)


def test_a_run_from_a_clock_ahead_is_recorded_but_never_the_latest_for_ever(history, results):  # noqa: F811
    """A file made on a machine whose clock says 2099: recorded (its measurements are data), shown with its own time
    and marked, and the latest run only until a run made after it was recorded comes."""
    now = datetime.datetime.now(datetime.timezone.utc)
    opened = store.open_store(target.resolve(history), writing=True)
    opened.record(_created(results, now - datetime.timedelta(days=1), "a" * 32))
    ahead = opened.record(_created(results, datetime.datetime(2099, 1, 1, tzinfo=datetime.timezone.utc), "b" * 32))
    latest = opened.latest()
    assert (latest.run, latest.created, latest.clock_ahead) == (ahead.run, "2099-01-01T00:00:00+00:00", True)
    later = opened.record(_created(results, datetime.datetime.now(datetime.timezone.utc), "c" * 32))  # made after it was recorded
    assert opened.latest().run == later.run
    assert not opened.latest().clock_ahead
    assert [(run.id, run.clock_ahead) for run in opened.recent(10)] == [(later.run, False), (ahead.run, True), (1, False)]


def test_a_run_of_a_time_zone_far_east_is_ordered_by_its_moment_not_its_text(history, results):  # noqa: F811
    """`created` of +09:00 reads later as text than a later moment in UTC: the runs are ordered by the moment."""
    opened = store.open_store(target.resolve(history), writing=True)
    east = datetime.timezone(datetime.timedelta(hours=9))
    first = opened.record(_created(results, datetime.datetime(2026, 1, 1, 18, 0, tzinfo=east), "d" * 32))  # 09:00 UTC
    second = opened.record(_created(results, datetime.datetime(2026, 1, 1, 10, 0, tzinfo=datetime.timezone.utc), "e" * 32))
    assert [run.id for run in opened.recent(10)] == [second.run, first.run]
    assert opened.latest().run == second.run


def test_the_order_of_a_run_is_its_creation_never_after_its_recording():
    assert clock.ordered_at("2026-01-01T12:00:00+02:00", "2026-02-01T00:00:00+00:00") == "2026-01-01T10:00:00.000000+00:00"
    assert clock.ordered_at("2099-01-01T00:00:00+00:00", "2026-02-01T00:00:00+00:00") == "2026-02-01T00:00:00.000000+00:00"
    assert clock.ordered_at("2026-01-01T00:00:00", "2026-02-01T00:00:00+00:00") == "2026-01-01T00:00:00.000000+00:00"
    assert clock.ahead("2099-01-01T00:00:00+00:00", "2026-02-01T00:00:00+00:00")
    assert not clock.ahead("2026-01-01T00:00:00+00:00", "2026-02-01T00:00:00+00:00")


def test_a_new_store_is_of_schema_3_and_an_ab_file_is_an_ab_run(tmp_path):
    opened = store.open_store(target.resolve(str(tmp_path / "h.sqlite")), writing=True)
    opened.record_ab(recorded_ab(recorded_gate(1, 1.0), 1))
    connection = sqlite3.connect(tmp_path / "h.sqlite")
    assert connection.execute("SELECT value FROM asyncbench_meta WHERE key = 'schema_version'").fetchone() == (str(tables.SCHEMA_VERSION),)
    assert tables.SCHEMA_VERSION == 3
    assert connection.execute("SELECT kind FROM asyncbench_runs").fetchall() == [("ab",)]
    connection.close()
    assert opened.recent(1)[0].kind == "ab"
