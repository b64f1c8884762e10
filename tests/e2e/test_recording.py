# ruff: noqa: F811 (the `history` fixture, imported, is every parametrized test's argument)
"""Every run is itself, and recording stays cheap: run ids, writers that take turns, reads that make nothing,
read-only stores refused before a run, and a run that touches only its own machine's series.

Processes that race start real interpreters at once; each command run alone runs in this process (cli.in_process: the
same command, exit status and streams, without an interpreter's start, 0.5-1.5 s, each)."""

from __future__ import annotations

import contextlib
import copy
import dataclasses
import hashlib
import json
import os
import subprocess
import sys
import uuid
from pathlib import Path
from typing import Any, Iterator

import pytest

from asyncbench.history import recording, store, target
from asyncbench.results import stats
from asyncbench.results.schema import Report
from tests.support.cli import cli_env, in_process
from tests.support.helpers import quick_numpy_results

# `history`: a fresh SQLite file, or the test PostgreSQL database emptied
from tests.support.stores import POSTGRES, empty_postgres, history  # noqa: F401

#: pairs of processes started at once: a race lost one pair in four or more before (9 of 12 pairs failed); the rarer
#: one, a new PostgreSQL store read between two looks (1 pair in 32), has a test of its own in tests/history/test_store.py
PAIRS = 2


@pytest.fixture(scope="module")
def results(tmp_path_factory) -> dict[str, Any]:
    """One real quick run's results file, parsed: each test writes its own runs from it."""
    return json.loads(quick_numpy_results(tmp_path_factory.mktemp("results") / "r.json").read_text())


def _run(raw: dict[str, Any], path: Path, run_id: str | None = "", created: str | None = None, **environment: Any) -> Path:
    """A results file of another run like `raw`: the same second (or `created`), host, revision and cases (a run
    that ended beside it), its own id (None: none, as files before schema 6), on the machine `environment` changes."""
    made = copy.deepcopy(raw)
    made["created"] = created or made["created"]
    if run_id is None:
        made.pop("run_id", None)
        made["schema_version"] = 5
        for result in made["results"]:  # nor a machine reference, which came in schema 10
            result.pop("reference", None)
    else:
        made["run_id"] = run_id or uuid.uuid4().hex
    made["environment"].update(environment)
    path.write_text(json.dumps(made))
    return path


def _started(*args: str, cwd: Path) -> subprocess.Popen:
    """`python -m asyncbench ARGS` started, not waited for (several run at once), in cli.asyncbench's environment."""
    return subprocess.Popen(
        [sys.executable, "-m", "asyncbench", *args], cwd=cwd, env=cli_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )


def _at_once(commands: list[tuple[str, ...]], cwd: Path) -> list[tuple[int, str]]:
    """Start every command, then wait for each: (exit status, stderr) in order."""
    started = [_started(*command, cwd=cwd) for command in commands]
    said = [process.communicate(timeout=300)[1] for process in started]
    return [(process.returncode, stderr) for process, stderr in zip(started, said, strict=True)]


def test_two_runs_that_end_in_the_same_second_are_two_runs_and_a_file_is_still_recorded_once(history, tmp_path, results):
    first, second = _run(results, tmp_path / "a.json"), _run(results, tmp_path / "b.json")
    done = in_process("record", "a.json", "b.json", "--history", history, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "a.json: recorded as run 1" in done.stderr, done.stderr
    assert "b.json: recorded as run 2" in done.stderr, done.stderr
    again = in_process("record", str(first), str(second), "--history", history, cwd=tmp_path)
    assert "a.json: already recorded (run 1)" in again.stderr
    assert "b.json: already recorded (run 2)" in again.stderr
    assert len(store.open_store(target.resolve(history)).recent(10)) == 2


def test_files_without_a_run_id_are_keyed_by_their_whole_content(history, tmp_path, results):
    """Files of schema 5: two runs in the same second are still two, one file recorded twice is still one run."""
    _run(results, tmp_path / "a.json", run_id=None)
    other = copy.deepcopy(results)
    other["results"][0]["variants"] = copy.deepcopy(other["results"][0]["variants"])
    for variant in other["results"][0]["variants"].values():
        # another run's numbers: its samples 1.5 times as long, its summaries and figures theirs (a reader holds each
        # to the samples: the illusion, done / issue, stays; the clocks' metrics grow and the products' rate falls by as much)
        for clock in ("issue_s", "done_s"):
            variant["samples"][clock] = [value * 1.5 for value in variant["samples"][clock]]
            variant[clock] = dataclasses.asdict(stats.summarize(variant["samples"][clock]))
    metrics, bounds = other["results"][0]["metrics"], other["results"][0]["bounds"]
    for name, factor in (("gflops", 1 / 1.5), ("issue_s", 1.5), ("done_s", 1.5)):  # the clocks restated, too
        metrics[name] *= factor
        if bounds.get(name) is not None:  # none where the rounds gave no interval (a busy machine)
            bounds[name] = [value * factor for value in bounds[name]]
    _run(other, tmp_path / "b.json", run_id=None)
    done = in_process("record", "a.json", "b.json", "a.json", "--history", history, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "b.json: recorded as run 2" in done.stderr, done.stderr
    assert "a.json: already recorded (run 1)" in done.stderr, done.stderr


def test_an_older_store_is_upgraded_its_counts_mended_and_its_runs_still_known(history, tmp_path, results):
    """A schema 1 store keyed runs by (second, host, revision, cases) and counted every machine's series on each
    record: upgraded, its series count their points, and a file it holds is still "already recorded"."""
    import sqlalchemy as sa

    old = _run(results, tmp_path / "old.json", run_id=None)
    assert in_process("record", str(old), "--history", history, cwd=tmp_path).returncode == 0
    environment = results["environment"]
    identity = [
        results["created"],
        environment.get("hostname"),
        environment.get("git_sha"),
        [(r["id"], r["status"]) for r in results["results"]],
    ]
    legacy = hashlib.sha256(json.dumps(identity, default=str).encode()).hexdigest()  # what schema 1 stored
    engine = sa.create_engine(target.resolve(history).url)
    with engine.begin() as connection:
        connection.execute(sa.text("UPDATE asyncbench_runs SET run_key = :key"), {"key": legacy})
        connection.execute(sa.text("UPDATE asyncbench_series SET runs = 3"))
        connection.execute(sa.text("UPDATE asyncbench_meta SET value = '1' WHERE key = 'schema_version'"))
    engine.dispose()
    opened = store.open_store(target.resolve(history))
    assert {s.runs for s in opened.series()} == {1}
    again = opened.record(Report.load(old))
    assert (again.new, again.run) == (False, 1)


def test_two_processes_that_make_one_new_store_at_once_both_record(history, tmp_path, results):
    for pair in range(PAIRS):
        where = str(tmp_path / f"new{pair}.sqlite") if history.endswith(".sqlite") else empty_postgres()
        files = [str(_run(results, tmp_path / f"p{pair}{side}.json")) for side in "ab"]
        ended = _at_once([("record", file, "--history", where) for file in files], tmp_path)
        assert [code for code, _ in ended] == [0, 0], ended
        assert len(store.open_store(target.resolve(where)).recent(10)) == 2, pair


def test_two_processes_recording_into_one_store_at_once_both_record(history, tmp_path, results):
    in_process("record", str(_run(results, tmp_path / "first.json")), "--history", history, cwd=tmp_path)
    for pair in range(PAIRS):
        files = [str(_run(results, tmp_path / f"p{pair}{side}.json")) for side in "ab"]
        ended = _at_once([("record", file, "--history", history) for file in files], tmp_path)
        assert [code for code, _ in ended] == [0, 0], ended
        assert all("recorded as run" in said for _, said in ended), ended
    assert len(store.open_store(target.resolve(history)).recent(100)) == 1 + 2 * PAIRS


def test_two_runs_recording_as_they_end_at_once_both_record(history, tmp_path):
    ended = _at_once(
        [
            ("run", "-w", "matmul", "-b", "numpy", "--quick", "--no-progress", "-o", f"{side}.json", "--record", "--history", history)
            for side in "ab"
        ],
        tmp_path,
    )
    assert [code for code, _ in ended] == [0, 0], ended
    assert len(store.open_store(target.resolve(history)).recent(10)) == 2


def test_a_run_interrupted_before_its_first_case_is_refused_and_nothing_is_recorded(tmp_path, results):
    """The trial: a run stopped by SIGTERM before any case finished (`"interrupted": true`, no results) was
    `recorded as run 1 (0 points)`, exit 0: a run that measured nothing stored as a run. It is refused in one line,
    exit 2, as a bad file is: before the store is opened, so a file beside it is not recorded either and no store
    is made. An `ab` file that compared no case alike."""
    empty = copy.deepcopy(results)
    empty.update(results=[], interrupted=True)
    (tmp_path / "int.json").write_text(json.dumps(empty))
    _run(results, tmp_path / "a.json")
    done = in_process("record", "a.json", "int.json", "--history", "h.sqlite", cwd=tmp_path)
    assert done.returncode == 2, done.stderr
    assert done.stderr.strip().splitlines() == [
        "asyncbench: error: int.json holds no case (its run was interrupted before its first case finished): "
        "a run that measured nothing is not recorded (nothing was recorded)"
    ]
    assert not (tmp_path / "h.sqlite").exists()


def test_a_run_whose_every_case_was_skipped_is_refused_and_nothing_is_recorded(tmp_path, results):
    """A trial's CI recorded a run whose one case was skipped (its step runs on numpy only, asked for on torch) as
    `recorded as run 1 (0 points)`, exit 0, beside the run's own exit 1: a run that measured nothing."""
    skipped = copy.deepcopy(results)
    first = skipped["results"][0]
    first.update(
        status="skipped",
        reason="cupy not installed",
        variants={},
        metrics={},
        bounds={},
        checks=[],
        sampling=None,
        unavailable=True,
        asynchronous=None,
        traces={},
        metric_info={},
        reading=None,
        case_s=None,
        note=None,
    )
    for key in ("reference", "harness", "memory", "bound", "census", "trace_detail"):
        first.pop(key, None)
    skipped["results"] = [first]
    (tmp_path / "skip.json").write_text(json.dumps(skipped))
    done = in_process("record", "skip.json", "--history", "h.sqlite", cwd=tmp_path)
    assert done.returncode == 2, done.stderr
    assert done.stderr.strip().splitlines() == [
        "asyncbench: error: skip.json: every case was skipped (1 case): a run that measured nothing is not recorded (nothing was recorded)"
    ]
    assert not (tmp_path / "h.sqlite").exists()


def test_reading_where_there_is_no_store_says_so_and_makes_nothing(tmp_path):
    for command in (["history"], ["report", "-o", "page.html"]):
        for where in (["--history", "typo/h.sqlite"], []):  # a mistyped path; the default in a folder with none
            done = in_process(*command, *where, cwd=tmp_path)
            assert done.returncode == 2, done.stderr
            assert "no store there" in done.stderr
            assert len(done.stderr.strip().splitlines()) == 1, done.stderr
    assert sorted(os.listdir(tmp_path)) == []


@pytest.mark.postgres
def test_reading_a_database_with_no_store_says_so_and_makes_nothing(tmp_path):
    import sqlalchemy as sa

    empty = empty_postgres()
    done = in_process("history", "--history", empty, cwd=tmp_path)
    assert done.returncode == 2, done.stderr
    assert "no asyncbench store there" in done.stderr
    engine = sa.create_engine(target.resolve(empty).url)
    assert not [name for name in sa.inspect(engine).get_table_names() if name.startswith("asyncbench_")]
    engine.dispose()


@contextlib.contextmanager
def _read_only(path: Path) -> Iterator[None]:
    """`path` made unwritable: by its mode, or (as root, whom modes do not stop) immutable."""
    if os.geteuid() != 0:
        mode = path.stat().st_mode
        path.chmod(mode & ~0o222)
        try:
            yield
        finally:
            path.chmod(mode)
        return
    if subprocess.run(["chattr", "+i", str(path)], capture_output=True).returncode != 0:
        pytest.skip("running as root, where only an immutable file is unwritable, and chattr +i is refused here")
    try:
        yield
    finally:
        subprocess.run(["chattr", "-i", str(path)], check=True)


@pytest.mark.parametrize("unwritable", ["file", "folder"])
def test_a_read_only_sqlite_store_is_refused_before_the_run(tmp_path, unwritable, results):
    folder = tmp_path / "store"
    folder.mkdir()  # a store the user names is made in a folder that exists
    where = str(folder / "h.sqlite")
    assert in_process("record", str(_run(results, tmp_path / "first.json")), "--history", where, cwd=tmp_path).returncode == 0
    with _read_only(folder / "h.sqlite" if unwritable == "file" else folder):
        ran = in_process(
            "run", "-w", "matmul", "-b", "numpy", "--quick", "--no-progress", "-o", "r.json", "--record", "--history", where, cwd=tmp_path
        )
        recorded = in_process("record", str(_run(results, tmp_path / "second.json")), "--history", where, cwd=tmp_path)
        shown = in_process("history", "--history", where, cwd=tmp_path)
    assert ran.returncode == 2, ran.stderr
    assert "cannot write" in ran.stderr
    assert "Traceback" not in ran.stderr
    assert not (tmp_path / "r.json").exists()  # refused before running, not after
    assert recorded.returncode == 2
    assert "cannot write" in recorded.stderr
    assert shown.returncode == 0, shown.stderr  # reading a read-only store is fine


@pytest.mark.postgres
def test_a_read_only_postgres_store_is_refused_before_the_run(tmp_path, results):
    empty_postgres()
    assert in_process("record", str(_run(results, tmp_path / "first.json")), "--history", POSTGRES, cwd=tmp_path).returncode == 0
    setting = "-c%20default_transaction_read_only%3Don"  # a standby's
    if "options=" in POSTGRES:  # a worker's schema (tests/conftest.py): its options come last in the URL
        read_only = f"{POSTGRES}%20{setting}"
    else:
        read_only = POSTGRES + ("&" if "?" in POSTGRES else "?") + f"options={setting}"
    ran = in_process(
        "run", "-w", "matmul", "-b", "numpy", "--quick", "--no-progress", "-o", "r.json", "--record", "--history", read_only, cwd=tmp_path
    )
    assert ran.returncode == 2, ran.stderr
    assert "cannot write" in ran.stderr
    assert "read-only" in ran.stderr
    assert not (tmp_path / "r.json").exists()


def test_a_run_touches_only_its_own_machines_series_and_each_series_counts_its_points(history, tmp_path, results, monkeypatch):
    """Two machines share case ids; a run of one finds changes again only in its own series, and leaves the other
    machine's as they were (before: every machine's series of those cases, each counted one run more)."""
    from asyncbench.history import changes

    here = [
        Report.load(_run(results, tmp_path / f"here{index}.json", created=f"2026-01-0{index + 1}T00:00:00+00:00")) for index in range(3)
    ]
    there = _run(results, tmp_path / "there.json", cpu="Another CPU")
    assert in_process("record", str(there), "--history", history, cwd=tmp_path).returncode == 0
    opened = store.open_store(target.resolve(history))
    looked_at = []
    real = changes.change_points

    def counted(points, *smallest):
        looked_at.append(len(points))
        return real(points, *smallest)

    monkeypatch.setattr(changes, "change_points", counted)
    for report in here:
        opened.record(report)
    found = opened.series()
    machines = {s.machine for s in found}
    assert len(machines) == 2
    theirs = [s for s in found if s.machine_info["cpu"] == "Another CPU"]
    ours = [s for s in found if s.machine_info["cpu"] != "Another CPU"]
    assert len(looked_at) == 3 * len(ours)  # each run: its own series, no other machine's
    assert all(s.runs == 1 and len(s.points) == 1 for s in theirs)
    assert all(s.runs == 3 and len(s.points) == 3 for s in ours)
    shown = in_process("history", "--history", history, "--format", "json", cwd=tmp_path)
    assert all(s["runs"] == len(s["points"]) for s in json.loads(shown.stdout))


def test_a_change_older_than_the_window_stays_found_once(tmp_path, results):
    """A step found while it was new stays, once, after it has left the window that recording looks at again."""
    import dataclasses
    import random

    opened = store.open_store(target.resolve(str(tmp_path / "h.sqlite")), writing=True)
    report = Report.load(_run(results, tmp_path / "r.json"))
    rng = random.Random(0)
    step_at, runs = 20, recording.CHANGE_WINDOW + 50

    def scaled(factor: float) -> dict:
        return {  # each median within its interval, as every recorded point is
            name: dataclasses.replace(
                v,
                done_s=dataclasses.replace(v.done_s, median=(m := factor * rng.lognormvariate(0, 0.01)), ci_low=m * 0.99, ci_high=m * 1.01),
            )
            for name, v in report.results[0].variants.items()
        }

    # the machine quiet in every run: the real run's reference may have sampled beside the other test process, and a
    # run above compare's pressure is discounted as beside a neighbour (history.discount), leaving nothing to search
    first = report.results[0]
    quiet = None if first.reference is None else dataclasses.replace(first.reference, cpu_pressure=0.0, others_cpu=0.0)
    for run in range(1, runs + 1):
        result = dataclasses.replace(first, variants=scaled(1.5 if run >= step_at else 1.0), reference=quiet)
        assert opened.record(dataclasses.replace(report, results=(result,), run_id=uuid.uuid4().hex)).new
    [done] = [s for s in opened.series() if s.quantity == "done_s" and s.variant]
    assert done.runs == runs
    assert [change.run for change in done.change_points] == [step_at]
