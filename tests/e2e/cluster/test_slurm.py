"""A sweep on a real single-node Slurm (Debian's slurm-wlm, slurmdbd and munge; `make slurm`): submitted with
sbatch through submitit, followed with sacct, gathered; a job killed with scancel mid-run is an error row with
Slurm's own state; bad input is refused before anything is submitted."""

from __future__ import annotations

import json
import socket
import subprocess
import time
from pathlib import Path

import pytest

from tests.support.cli import asyncbench
from tests.support.cluster_plans import LONG, TWO, manifest

pytestmark = [pytest.mark.slurm, pytest.mark.usefixtures("slurm")]


@pytest.fixture
def sweep_dir(tmp_path: Path) -> Path:
    (tmp_path / "two.yaml").write_text(TWO)
    (tmp_path / "long.yaml").write_text(LONG)
    return tmp_path


def _jobs_known(where: Path) -> int:
    """The jobs Slurm's accounting knows that were submitted from `where` (a test's own folder): an earlier test's
    jobs, whose records reach the accounting late, are not counted (they made a count of all jobs rise by 2)."""
    listed = subprocess.run(["sacct", "-X", "-n", "-P", "-o", "JobID,WorkDir", "-S", "now-1days"], capture_output=True, text=True)
    return sum(1 for line in listed.stdout.splitlines() if line.partition("|")[2].startswith(str(where)))


def test_a_two_experiment_sweep_runs_on_slurm_and_is_gathered_with_each_jobs_machine(sweep_dir):
    done = asyncbench(
        "run", "two.yaml", "--executor", "slurm", "--job-dir", "jobs", "-o", "all.json", "--markdown", "all.md", cwd=sweep_dir
    )
    assert done.returncode == 0, done.stderr
    data = json.loads((sweep_dir / "all.json").read_text())
    assert [r["status"] for r in data["results"]] == ["ok", "ok"]
    node = socket.gethostname().split(".")[0]
    assert {r["machine"] for r in data["results"]} == {node}
    jobs = data["environment"]["sweep"]["jobs"]
    assert [j["state"] for j in jobs] == ["COMPLETED", "COMPLETED"]
    for job in manifest(sweep_dir / "jobs")["jobs"]:  # Slurm ran each job, and accounted for it
        listed = subprocess.run(["sacct", "-X", "-n", "-P", "-o", "JobName,State", "-j", job["job_id"]], capture_output=True, text=True)
        assert listed.stdout.strip() == "asyncbench-jobs|COMPLETED"
    assert "| machine |" in (sweep_dir / "all.md").read_text()


def test_a_job_cancelled_with_scancel_mid_run_is_an_error_row_with_slurms_state(sweep_dir):
    submitted = asyncbench("run", "two.yaml", "long.yaml", "--executor", "slurm", "--no-wait", cwd=sweep_dir)
    assert submitted.returncode == 0, submitted.stderr
    folder = Path(submitted.stdout.strip())
    long_job = next(j for j in manifest(folder)["jobs"] if j["name"].endswith("slow"))
    journal = Path(long_job["results"] + ".journal")
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline and not (journal.exists() and journal.read_text().count("\n") >= 3):
        time.sleep(0.2)  # queued behind the short jobs (each job has the node to itself), then a case or two done
    assert journal.exists(), "the long job never ran"
    subprocess.run(["scancel", long_job["job_id"]], check=True)
    done = asyncbench("gather", str(folder), "-o", "all.json", cwd=sweep_dir)
    assert done.returncode == 3, done.stderr  # cases errored, the rest were measured and saved
    rows = json.loads((sweep_dir / "all.json").read_text())["results"]
    slow = [r for r in rows if r["experiment"] == "slow"]
    assert len(slow) == 8  # no case lost: measured before the cancel, or an error row
    cancelled = [r for r in slow if r["status"] == "error"]
    assert cancelled
    assert all(f"Slurm job {long_job['job_id']} ended CANCELLED" in r["reason"] for r in cancelled)
    assert [r["status"] for r in rows if r["experiment"] != "slow"] == ["ok", "ok"]


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["--partition", "nosuch"], "--partition 'nosuch': Slurm knows no such partition; it has: debug"),
        (["--gpus-per-node", "1"], "--gpus-per-node 1: partition 'debug' has no GPUs"),
        # a -d cuda plan that asks Slurm for no GPU: its jobs would run without one
        (["-b", "torch", "-d", "cuda"], "2 case(s) run on a GPU (sync_async[torch,cuda,n_ops=50], ...), but --executor slurm gives"),
        (["--sbatch", "account=x"], "--sbatch"),
    ],
)
def test_bad_input_is_one_line_and_exit_2_before_anything_is_submitted(sweep_dir, args, said):
    before = _jobs_known(sweep_dir)
    done = asyncbench("run", "two.yaml", "--executor", "slurm", "--job-dir", "jobs", *args, cwd=sweep_dir)
    assert done.returncode == 2, done.stderr
    assert said in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1
    assert not (sweep_dir / "jobs").exists()
    assert _jobs_known(sweep_dir) == before
