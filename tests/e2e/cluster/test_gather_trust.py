"""What `gather` reads from a sweep's folder is data, never code: each job's outcome from the small JSON file the job
wrote (never submitit's pickles, which run code when unpickled), every file bounded and checked; and what it says of
jobs the scheduler does not know matches its rows and its exit code (error rows exit 3, and only they)."""

from __future__ import annotations

import dataclasses
import datetime
import json
import os
import pathlib
import pickle
import stat
from pathlib import Path

import pytest

from asyncbench.results.merge import PlannedCase
from asyncbench.results.plan import ExecutorSettings
from asyncbench.spec import manifest
from tests.support.cli import asyncbench
from tests.support.cluster_plans import TWO

pytest.importorskip("submitit")

#: the one case of ONE, as jobs.planned makes it
CASE = PlannedCase("barrier[numpy,cpu,size=64]", "barrier", "barrier", "numpy", "cpu", {"size": 64})
#: a plan of that one case, quick
ONE = """\
name: one
defaults: {backends: [numpy], devices: [cpu], max_time_s: 0.3, min_samples: 6}
experiments:
  - workload: barrier
    params: {size: 64}
"""
#: a process id no process has (above Linux's largest pid_max): a local job that ended long ago
GONE_PID = "4194304"
AN_HOUR_AGO = datetime.datetime.now(datetime.timezone.utc) - datetime.timedelta(hours=1)


class _Planted:
    """A pickle that creates a file when it is unpickled: code run by whoever unpickles it."""

    def __init__(self, marker: Path):
        self.marker = marker

    def __reduce__(self):
        return pathlib.Path.touch, (pathlib.Path(self.marker),)


def _plant(folder: Path, marker: Path) -> list[Path]:
    """Every pickle under the sweep's folder (submitit's results and the submitted functions) replaced by a planted one."""
    planted = sorted(folder.rglob("*.pkl"))
    for path in planted:
        path.write_bytes(pickle.dumps(("success", _Planted(marker))))
    return planted


def _fake_sacct(folder: Path) -> dict[str, str]:
    """A PATH whose Slurm commands answer and list no job: a cluster that does not know the sweep's ids."""
    folder.mkdir()
    for tool in ("sbatch", "sacct", "sinfo", "scancel", "scontrol"):
        (folder / tool).write_text("#!/bin/sh\nexit 0\n")
        (folder / tool).chmod(0o755)
    return {"PATH": f"{folder}:{os.environ['PATH']}"}


def _sweep(folder: Path, kind: str, job_ids: list[str]) -> list[Path]:
    """A sweep's manifest of one job per id (the first to run CASE, each other CASE at a size of its own: a case is
    one job's), submitted an hour ago; each job's results path."""
    folder.mkdir(parents=True, exist_ok=True)
    jobs = tuple(
        manifest.SubmittedJob(
            f"{n:03d}-barrier", job_id, folder / f"{n:03d}-barrier.yaml", folder / f"{n:03d}-barrier.json", (_case_of_size(64 * n),)
        )
        for n, job_id in enumerate(job_ids, 1)
    )
    written = manifest.Manifest("one", AN_HOUR_AGO, {"name": "one", "experiments": []}, ExecutorSettings(kind=kind), 0.01, jobs)
    (folder / manifest.MANIFEST).write_text(manifest.write_text(written))
    return [job.results for job in jobs]


def _case_of_size(size: int) -> PlannedCase:
    return dataclasses.replace(CASE, id=f"barrier[numpy,cpu,size={size}]", params={"size": size})


def _outcome(results: Path) -> Path:
    return results.with_suffix(".outcome.json")


@pytest.fixture(scope="module")
def measured(tmp_path_factory) -> Path:
    """A whole results file of CASE, as a job's run writes it."""
    folder = tmp_path_factory.mktemp("measured")
    (folder / "one.yaml").write_text(ONE)
    done = asyncbench("run", "one.yaml", "-o", "one.json", "--no-progress", cwd=folder)
    assert done.returncode == 0, done.stderr
    return folder / "one.json"


def _no_traceback(done) -> None:
    assert "Traceback" not in done.stderr, done.stderr
    assert "\x1b" not in done.stderr + done.stdout


# --- pickles: never read ---------------------------------------------------------------------------------------------


def test_gather_never_unpickles_a_pickle_planted_in_the_sweeps_folder_and_says_what_the_jobs_said(tmp_path):
    """submitit's result pickles, and the submitted functions it pickled, replaced by pickles that run code when
    unpickled: gather reads each job's own outcome file instead, and reports what the real run did."""
    (tmp_path / "two.yaml").write_text(TWO)
    ran = asyncbench("run", "two.yaml", "--executor", "local", "--job-dir", "jobs", "-o", "ran.json", "--no-progress", cwd=tmp_path)
    assert ran.returncode == 0, ran.stderr
    marker = tmp_path / "pwned"
    planted = _plant(tmp_path / "jobs", marker)
    assert any(p.name.endswith("_result.pkl") for p in planted)
    assert any(p.name.endswith("_submitted.pkl") for p in planted)
    done = asyncbench("gather", "jobs", "-o", "gathered.json", "--no-progress", cwd=tmp_path, timeout=60)
    assert not marker.exists(), "gather unpickled a planted pickle"
    assert done.returncode == 0, done.stderr
    _no_traceback(done)
    rows = [
        [(r["id"], r["status"]) for r in json.loads((tmp_path / name).read_text())["results"]] for name in ("ran.json", "gathered.json")
    ]
    assert rows[0] == rows[1] == [("sync_async[numpy,cpu,n_ops=50]", "ok"), ("barrier[numpy,cpu,size=64]", "ok")]
    assert all(_outcome(Path(j["results"])).is_file() for j in json.loads((tmp_path / "jobs" / "sweep.json").read_text())["jobs"])


# --- each job's outcome file: read as bounded, checked data -----------------------------------------------------------


def _fifo(path: Path) -> None:
    os.mkfifo(path)


def _dev_zero(path: Path) -> None:
    path.symlink_to("/dev/zero")


#: outcome files that are no job's: each is the job's failure, said in one printable line naming the file
HOSTILE_OUTCOMES = {
    "not JSON": b"{exit_code: 0",
    "a list": b"[0]",
    "an exit code as true": b'{"exit_code": true}',
    "an exit code as text": b'{"exit_code": "0"}',
    "a 5000-digit exit code": b'{"exit_code": ' + b"9" * 5000 + b"}",
    "an exit code past any": b'{"exit_code": 100000}',
    "both keys": b'{"exit_code": 0, "error": "x"}',
    "an unknown key": b'{"exit_code": 0, "pickle": "x"}',
    "a deep nesting": b'{"error": ' + b"[" * 3000 + b"]" * 3000 + b"}",
    "a megabyte of reason": json.dumps({"error": "x" * 1_000_000}).encode(),
    "a reason with an escape": json.dumps({"error": "\x1b]52;c;cHduZWQ=\x07\x1b[2J"}).encode(),
    "a reason with a newline": json.dumps({"error": "one\ntwo"}).encode(),
    "an empty reason": b'{"error": ""}',
    "a FIFO": _fifo,
    "a link to /dev/zero": _dev_zero,
    "a folder": lambda path: path.mkdir(),
}


@pytest.mark.parametrize("what", list(HOSTILE_OUTCOMES))
def test_an_outcome_file_that_is_no_jobs_is_that_jobs_failure_in_one_line_never_a_hang_or_a_traceback(tmp_path, what):
    (results,) = _sweep(tmp_path / "sweep", "local", [GONE_PID])
    planted = HOSTILE_OUTCOMES[what]
    if callable(planted):
        planted(_outcome(results))
    else:
        _outcome(results).write_bytes(planted)
    done = asyncbench("gather", "sweep", "-o", "all.json", "--no-progress", cwd=tmp_path, timeout=30)
    assert done.returncode == 3, done.stderr  # its case is an error row: the job left no results
    _no_traceback(done)
    (row,) = json.loads((tmp_path / "all.json").read_text())["results"]
    assert row["status"] == "error"
    assert "001-barrier.outcome.json: not a job's outcome file" in row["reason"], row["reason"]
    assert row["reason"].isprintable()
    assert len(row["reason"]) < 500


@pytest.mark.parametrize("planted", [b'{"exit_code": "rm -rf /"}', b'{"exit_code": 1e999}', b'{"exit_code": 0.0}'])
def test_an_outcome_file_that_is_no_jobs_beside_whole_results_makes_its_cases_error_rows_never_ok_rows(tmp_path, measured, planted):
    """Its results whole, its outcome file garbage: the job's end is unknown, so it is failed with the file's
    refusal as the reason, and its case an error row (exit 3). gather said `1 failed`, then `1 case: 1 ok`, exit 0."""
    (results,) = _sweep(tmp_path / "sweep", "local", [GONE_PID])
    results.write_bytes(measured.read_bytes())
    _outcome(results).write_bytes(planted)
    done = asyncbench("gather", "sweep", "-o", "all.json", "--no-progress", cwd=tmp_path, timeout=60)
    assert done.returncode == 3, done.stderr
    _no_traceback(done)
    (row,) = json.loads((tmp_path / "all.json").read_text())["results"]
    assert row["status"] == "error"
    assert "001-barrier.outcome.json: not a job's outcome file" in row["reason"], row["reason"]
    (job,) = json.loads((tmp_path / "all.json").read_text())["environment"]["sweep"]["jobs"]
    assert job["failed"] is True


@pytest.mark.parametrize("which", ["results", "journal"])
def test_a_results_file_or_journal_that_is_a_fifo_is_that_jobs_error_rows_never_a_hang(tmp_path, measured, which):
    """A job writes a regular file there; a named pipe in its place would block gather until something wrote into
    it (it did, until killed at 60 s): refused unopened, the job's case an error row naming it, exit 3."""
    (results,) = _sweep(tmp_path / "sweep", "local", [GONE_PID])
    _outcome(results).write_text('{"exit_code": 0}')
    if which == "journal":
        results.write_bytes(measured.read_bytes())
    os.mkfifo(Path(f"{results}.journal") if which == "journal" else results)
    done = asyncbench("gather", "sweep", "-o", "all.json", "--no-progress", cwd=tmp_path, timeout=30)
    assert done.returncode == 3, done.stderr
    _no_traceback(done)
    assert "not a regular file, so none its job wrote); its cases are error rows" in done.stderr, done.stderr
    (row,) = json.loads((tmp_path / "all.json").read_text())["results"]
    assert row["status"] == "error"


@pytest.mark.parametrize(
    ("written", "said"),
    [
        ({"exit_code": 2}, "asyncbench exited 2"),
        ({"exit_code": 143}, "its run was interrupted (exit 143)"),
        ({"error": "UncompletedJobError: Job not requeued because: timed-out"}, "UncompletedJobError: Job not requeued because: timed-out"),
    ],
)
def test_a_jobs_own_outcome_file_says_how_it_ended(tmp_path, written, said):
    (results,) = _sweep(tmp_path / "sweep", "local", [GONE_PID])
    _outcome(results).write_text(json.dumps(written))
    done = asyncbench("gather", "sweep", "-o", "all.json", "--no-progress", cwd=tmp_path, timeout=30)
    assert done.returncode == 3, done.stderr
    (row,) = json.loads((tmp_path / "all.json").read_text())["results"]
    assert said in row["reason"], row["reason"]


def test_the_requeued_count_and_the_stderr_log_are_read_bounded(tmp_path):
    """A job's `.requeued` file and its stderr log as links to /dev/zero: gather reads neither without end; a
    stderr log of megabytes gives its last line."""
    (results,) = _sweep(tmp_path / "sweep", "local", [GONE_PID])
    _outcome(results).write_text(json.dumps({"exit_code": 2}))
    results.with_suffix(".requeued").symlink_to("/dev/zero")
    logs = tmp_path / "sweep" / "logs" / GONE_PID
    logs.mkdir(parents=True)
    (logs / f"{GONE_PID}_0_log.err").symlink_to("/dev/zero")
    done = asyncbench("gather", "sweep", "-o", "all.json", "--no-progress", cwd=tmp_path, timeout=30)
    assert done.returncode == 3, done.stderr
    (row,) = json.loads((tmp_path / "all.json").read_text())["results"]
    assert "asyncbench exited 2" in row["reason"]
    (logs / f"{GONE_PID}_0_log.err").unlink()
    (logs / f"{GONE_PID}_0_log.err").write_text("noise\n" * 1_000_000 + "ModuleNotFoundError: vendorlib \x1b[2J\n")
    done = asyncbench("gather", "sweep", "-o", "all.json", "--no-progress", cwd=tmp_path, timeout=30)
    assert done.returncode == 3, done.stderr
    (row,) = json.loads((tmp_path / "all.json").read_text())["results"]
    assert "asyncbench exited 2: ModuleNotFoundError: vendorlib \\x1b[2J" in row["reason"], row["reason"]


# --- jobs the scheduler does not know: what gather says matches its rows and its exit code ---------------------------


def test_jobs_slurm_no_longer_knows_are_error_rows_only_for_what_they_left_no_results_for_and_exit_3(tmp_path, measured):
    """Job 1 ran whole and said so (its results and outcome file), then Slurm's accounting forgot it; job 2 left
    nothing. Only job 2's case is an error row, only job 2 is named as such, and the gather exits 3."""
    first, _ = _sweep(tmp_path / "sweep", "slurm", ["4711", "4712"])
    first.write_bytes(measured.read_bytes())
    _outcome(first).write_text('{"exit_code": 0}')
    done = asyncbench("gather", "sweep", "-o", "all.json", "--no-progress", cwd=tmp_path, timeout=60, env=_fake_sacct(tmp_path / "bin"))
    assert done.returncode == 3, done.stderr
    _no_traceback(done)
    rows = json.loads((tmp_path / "all.json").read_text())["results"]
    assert [r["status"] for r in rows] == ["ok", "error"]
    assert "Slurm job 4712 ended UNKNOWN (sacct lists no such job" in rows[1]["reason"]
    warned = [line for line in done.stderr.splitlines() if "does not know" in line]
    assert len(warned) == 1, done.stderr
    assert "job(s) 4712 " in warned[0]
    assert "4711" not in warned[0]
    assert "1 case(s) they left no results for are error rows" in warned[0]
    jobs = json.loads((tmp_path / "all.json").read_text())["environment"]["sweep"]["jobs"]
    assert [(j["job_id"], j["failed"]) for j in jobs] == [("4711", False), ("4712", True)]


def test_a_job_slurm_forgot_whose_results_are_whole_is_no_error_row_and_gather_does_not_say_it_is(tmp_path, measured):
    """Its results whole, no outcome file (a sweep from an older asyncbench): its rows kept, exit 0, and the line
    naming the id Slurm does not know must not say its cases are error rows (it did, and gather exited 0)."""
    (results,) = _sweep(tmp_path / "sweep", "slurm", ["4711"])
    results.write_bytes(measured.read_bytes())
    done = asyncbench("gather", "sweep", "-o", "all.json", "--no-progress", cwd=tmp_path, timeout=60, env=_fake_sacct(tmp_path / "bin"))
    rows = json.loads((tmp_path / "all.json").read_text())["results"]
    assert [r["status"] for r in rows] == ["ok"]
    assert done.returncode == 0, done.stderr
    assert "does not know job(s) 4711" in done.stderr
    assert "error rows" not in done.stderr, done.stderr


def test_a_job_writes_its_outcome_as_one_printable_bounded_line_and_gather_reads_it_back(tmp_path):
    """No outcome file yet: the job has not ended. An exit code reads back as it was; a failure's reason is one
    printable line (control characters shown, never passed on), cut to its bound."""
    from asyncbench.engine import jobs

    assert jobs.read_outcome(tmp_path / "a.json") is None
    jobs.write_outcome(tmp_path / "a.json", 0)
    assert jobs.read_outcome(tmp_path / "a.json") == (True, 0)
    assert stat.S_IMODE(_outcome(tmp_path / "a.json").stat().st_mode) & 0o444
    jobs.write_outcome(tmp_path / "a.json", "RuntimeError: one\ntwo \x1b[2J" + "x" * 5000)
    ok, reason = jobs.read_outcome(tmp_path / "a.json")
    assert not ok
    assert reason.startswith("RuntimeError: one two \\x1b[2J")
    assert len(reason) <= jobs.REASON_MAX_CHARS
