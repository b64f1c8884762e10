"""Sweeps through submitit's local executor: the same path as Slurm's, with each job a process on this machine."""

from __future__ import annotations

import json
import signal
import socket
import subprocess
import time
from pathlib import Path

import psutil
import pytest

from tests.support.cli import INTERRUPTIBLE_ASYNCBENCH, asyncbench
from tests.support.cluster_plans import LONG, TWO, manifest
from tests.support.signals import catches

pytest.importorskip("submitit")


@pytest.fixture
def sweep_dir(tmp_path: Path) -> Path:
    (tmp_path / "two.yaml").write_text(TWO)
    (tmp_path / "long.yaml").write_text(LONG)
    return tmp_path


def test_two_experiments_become_two_jobs_gathered_into_one_report_naming_each_rows_machine(sweep_dir):
    done = asyncbench(
        "run", "two.yaml", "--executor", "local", "--job-dir", "jobs", "-o", "all.json", "--markdown", "all.md", cwd=sweep_dir
    )
    assert done.returncode == 0, done.stderr
    assert "submitted 2 job(s)" in done.stderr
    data = json.loads((sweep_dir / "all.json").read_text())
    assert [r["id"] for r in data["results"]] == ["sync_async[numpy,cpu,n_ops=50]", "barrier[numpy,cpu,size=64]"]
    assert {r["machine"] for r in data["results"]} == {socket.gethostname()}
    assert list(data["environment"]["machines"]) == [socket.gethostname()]
    jobs = data["environment"]["sweep"]["jobs"]
    assert [(j["name"], j["state"], j["failed"]) for j in jobs] == [
        ("001-sync_async", "FINISHED", False),
        ("002-barrier", "FINISHED", False),
    ]
    assert "| backend | device | machine | variant |" in (sweep_dir / "all.md").read_text()
    for job in manifest(sweep_dir / "jobs")["jobs"]:  # each job's own results file, with its own environment
        assert json.loads(Path(job["results"]).read_text())["environment"]["hostname"] == socket.gethostname()


def test_per_case_makes_a_job_of_each_case_and_the_ids_are_those_of_the_whole_plan(sweep_dir):
    done = asyncbench(
        "run", "two.yaml", "--executor", "local", "--per", "case", "--set", "sync_async.n_ops=20,40", "--job-dir", "jobs", "-o", "all.json",
        cwd=sweep_dir,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert len(manifest(sweep_dir / "jobs")["jobs"]) == 3
    ids = [r["id"] for r in json.loads((sweep_dir / "all.json").read_text())["results"]]
    assert ids == ["sync_async[numpy,cpu,n_ops=20]", "sync_async[numpy,cpu,n_ops=40]", "barrier[numpy,cpu,size=64]"]


def test_no_wait_prints_the_folder_and_gather_waits_writes_and_can_be_run_again(sweep_dir):
    submitted = asyncbench("run", "two.yaml", "--executor", "local", "--no-wait", cwd=sweep_dir)
    assert submitted.returncode == 0, submitted.stderr
    folder = Path(submitted.stdout.strip())
    assert submitted.stdout == f"{folder}\n"
    assert folder.is_dir()
    assert folder.parent == (sweep_dir / ".asyncbench" / "jobs").resolve()
    first = asyncbench("gather", str(folder), "-o", "first.json", "--record", "--history", "h.sqlite", cwd=sweep_dir)
    assert first.returncode == 0, first.stderr
    assert "recorded in h.sqlite: 2 job(s)" in first.stderr
    again = asyncbench("gather", str(folder), "-o", "again.json", "--record", "--history", "h.sqlite", "--no-wait", cwd=sweep_dir)
    assert again.returncode == 0, again.stderr
    assert "0 job(s), 2 already there" in again.stderr
    rows = [
        [(r["id"], r["status"], r["metrics"]) for r in json.loads((sweep_dir / name).read_text())["results"]]
        for name in ("first.json", "again.json")
    ]
    assert rows[0] == rows[1]
    assert len(rows[0]) == 2


def test_gather_record_reads_every_jobs_file_as_record_does_and_stores_none_of_a_tampered_one(sweep_dir):
    """A job's results file is read as `record` reads a file (results.schema.check_file, as every reader does): one with a
    tampered field is never read, its cases are error rows naming the key (exit 3), and only the other job's are
    stored, as when a job fails."""
    submitted = asyncbench("run", "two.yaml", "--executor", "local", "--no-wait", cwd=sweep_dir)
    assert submitted.returncode == 0, submitted.stderr
    folder = Path(submitted.stdout.strip())
    assert asyncbench("gather", str(folder), cwd=sweep_dir).returncode == 0  # waits for both jobs
    first = Path(manifest(folder)["jobs"][0]["results"])
    data = json.loads(first.read_text())
    tampered = {result["id"] for result in data["results"]}
    data["environment"]["git_sha"] = "--output=pwned"  # would reach `git show` as an option
    first.write_text(json.dumps(data))
    done = asyncbench("gather", str(folder), "--record", "--history", "h.sqlite", "--no-wait", cwd=sweep_dir)
    assert done.returncode == 3, done.stderr
    assert "environment.git_sha" in done.stdout + done.stderr
    assert not (sweep_dir / "pwned").exists()
    shown = asyncbench("history", "--history", "h.sqlite", "--format", "json", cwd=sweep_dir)
    stored = {series["case"] for series in json.loads(shown.stdout or "[]")}
    assert stored, shown.stderr
    assert not stored & tampered, (stored, tampered)


def test_each_gathered_job_is_recorded_under_its_own_machine(sweep_dir):
    done = asyncbench("run", "two.yaml", "--executor", "local", "--record", "--history", "h.sqlite", "--label", "sweep-1", cwd=sweep_dir)
    assert done.returncode == 0, done.stderr
    shown = asyncbench("history", "--history", "h.sqlite", "--format", "json", cwd=sweep_dir)
    series = json.loads(shown.stdout)
    assert {s["case"] for s in series} == {"sync_async[numpy,cpu,n_ops=50]", "barrier[numpy,cpu,size=64]"}
    assert all(p["label"] == "sweep-1" for s in series for p in s["points"])


def _children_named(word: str) -> list[psutil.Process]:
    found = []
    for process in psutil.Process().children(recursive=True):
        try:
            if any(word in part for part in process.cmdline()):
                found.append(process)
        except psutil.NoSuchProcess:
            continue
    return found


def test_ctrl_c_cancels_the_jobs_it_submitted_says_how_many_and_saves_what_was_gathered(sweep_dir):
    process = subprocess.Popen(
        [*INTERRUPTIBLE_ASYNCBENCH, "run", "two.yaml", "long.yaml", "--executor", "local", "--job-dir", "jobs", "-o", "all.json"],
        cwd=sweep_dir,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 120
        journal = sweep_dir / "jobs" / "003-slow.json.journal"
        while time.monotonic() < deadline and not (journal.exists() and journal.read_text().count("\n") >= 3):
            time.sleep(0.2)  # the long job has finished a case or two
        assert journal.exists(), "the long job never started"
        process.send_signal(signal.SIGINT)
        out, err = process.communicate(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
    assert process.returncode == 130, err
    data = json.loads((sweep_dir / "all.json").read_text())
    assert data["interrupted"] is True
    left = [job["name"] for job in data["environment"]["sweep"]["jobs"] if job["state"] == "not ended"]
    assert "003-slow" in left
    assert f"cancelled {len(left)} job(s) this command submitted" in err
    assert "Traceback" not in err
    deadline = time.monotonic() + 30
    while _children_named("submitit") and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not _children_named("submitit")  # the cancelled job's processes are gone


BROKEN_ON_NODES = """\
import os
import asyncbench

if os.environ.get("SUBMITIT_EXECUTOR"):  # in a job: as a module that imports a library the nodes lack
    raise ImportError("no module named 'vendorlib' on this node")


@asyncbench.step(sync_every=(0,), steps=1)
def fine(backend, device, params):
    return lambda: None
"""


def test_a_job_whose_run_fails_is_an_error_row_for_each_of_its_cases_with_the_reason(sweep_dir):
    (sweep_dir / "mine.py").write_text(BROKEN_ON_NODES)
    (sweep_dir / "user.yaml").write_text(
        "defaults: {backends: [numpy], devices: [cpu], max_time_s: 0.3}\nexperiments:\n  - workload: mine.py:fine\n"
    )
    done = asyncbench("run", "user.yaml", "two.yaml", "--executor", "local", "-o", "all.json", cwd=sweep_dir)
    assert done.returncode == 3, done.stderr  # a case errored, the others ran
    rows = json.loads((sweep_dir / "all.json").read_text())["results"]
    assert [r["status"] for r in rows] == ["error", "ok", "ok"]
    assert rows[0]["id"].startswith("fine[numpy,cpu")
    assert "asyncbench exited 2" in rows[0]["reason"]
    assert "vendorlib" in rows[0]["reason"]


def test_a_preempted_job_is_requeued_once_and_says_so(sweep_dir):
    submitted = asyncbench("run", "long.yaml", "--executor", "local", "--no-wait", "--set", "max_time_s=0.3", cwd=sweep_dir)
    folder = Path(submitted.stdout.strip())
    job_id = manifest(folder)["jobs"][0]["job_id"]
    deadline = time.monotonic() + 60
    task = None
    while task is None and time.monotonic() < deadline:
        try:
            task = next((p for p in psutil.Process(int(job_id)).children() if "submitit.core._submit" in " ".join(p.cmdline())), None)
        except psutil.NoSuchProcess:
            break
        time.sleep(0.1)
    assert task is not None, "the job's task never started"
    # submitit installs its handler only once the job's pickle is loaded (imports and all: over 1.5 s on a loaded
    # machine, where a fixed sleep sent the signal before it and the job died of it): wait until the task catches it
    while not catches(task.pid, signal.SIGUSR2) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert catches(task.pid, signal.SIGUSR2), "the job's task never installed its handler"
    time.sleep(0.5)  # it is measuring
    task.send_signal(signal.SIGUSR2)  # what Slurm sends before it preempts a job (submitit's signal)
    done = asyncbench("gather", str(folder), "-o", "all.json", cwd=sweep_dir)
    assert done.returncode == 0, done.stderr
    rows = json.loads((sweep_dir / "all.json").read_text())["results"]
    assert len(rows) == 8
    assert all(r["status"] == "ok" for r in rows)
    assert all("preempted and requeued once" in " ".join(r["warnings"]) for r in rows)


def test_no_sbatch_on_the_path_is_one_line_and_exit_2(sweep_dir):
    done = asyncbench("run", "two.yaml", "--executor", "slurm", cwd=sweep_dir, env={"PATH": "/nonexistent"})
    assert done.returncode == 2, done.stderr
    assert "sbatch, sacct, sinfo, scancel, scontrol not found on the PATH" in done.stderr


def test_gather_of_a_folder_that_is_no_sweep_is_one_line_and_exit_2(sweep_dir):
    (sweep_dir / "empty").mkdir()
    done = asyncbench("gather", "empty", cwd=sweep_dir)
    assert done.returncode == 2
    assert done.stderr == "asyncbench: error: empty: not a jobs folder (no sweep.json; `run --executor ... --no-wait` prints one)\n"


def test_a_job_dir_that_holds_something_is_refused_before_submitting(sweep_dir):
    (sweep_dir / "jobs").mkdir()
    (sweep_dir / "jobs" / "kept.txt").write_text("another sweep's")
    done = asyncbench("run", "two.yaml", "--executor", "local", "--job-dir", "jobs", cwd=sweep_dir)
    assert done.returncode == 2
    assert "already holds something" in done.stderr
    assert sorted(p.name for p in (sweep_dir / "jobs").iterdir()) == ["kept.txt"]


def test_job_options_without_an_executor_are_refused(sweep_dir):
    done = asyncbench("run", "two.yaml", "--no-wait", cwd=sweep_dir)
    assert done.returncode == 2
    assert done.stderr == "asyncbench: error: --no-wait is for jobs: add --executor slurm (or local)\n"
