"""A sweep on a real single-node Slurm (Debian's slurm-wlm, slurmdbd and munge; `make slurm`): submitted with
sbatch through submitit, followed with sacct, gathered; a job killed with scancel mid-run is an error row with
Slurm's own state; bad and hostile input is refused before anything is submitted; job ids Slurm does not know are
error rows. Every test on the real Slurm is in this file but one (test_hostile.py's stopped controller, run alone):
`make test` gives a file to one process, so these run one after another beside the other tests, and no other
process's job or count meets theirs."""

from __future__ import annotations

import datetime
import json
import socket
import subprocess
import time
from pathlib import Path

import pytest

from tests.support.cli import asyncbench
from tests.support.cluster_plans import LONG, TWO, manifest, planted_sweep

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


def _one_line_exit_2(done: subprocess.CompletedProcess[str]) -> str:
    assert done.returncode == 2, done.stderr
    assert len(done.stderr.strip().splitlines()) == 1, done.stderr
    assert "Traceback" not in done.stderr
    return done.stderr


def test_a_newline_in_an_sbatch_value_never_reaches_slurm(sweep_dir):
    before = _jobs_known(sweep_dir)
    marker = sweep_dir / "pwned"
    done = asyncbench(
        "run", "two.yaml", "--executor", "slurm", "--sbatch", f"comment=x\ntouch {marker}", "--job-dir", "jobs", cwd=sweep_dir
    )
    assert "control character" in _one_line_exit_2(done)
    assert _jobs_known(sweep_dir) == before
    assert not (sweep_dir / "jobs").exists()
    assert not marker.exists()


def test_a_submission_slurm_refuses_leaves_the_job_dir_so_the_same_command_can_run_again(sweep_dir):
    refused = asyncbench(
        "run", "two.yaml", "--executor", "slurm", "--sbatch", "constraint=nosuch", "--job-dir", "sweeps/one", cwd=sweep_dir
    )
    assert "Invalid feature specification" in _one_line_exit_2(refused)
    assert not (sweep_dir / "sweeps").exists()
    again = asyncbench("run", "two.yaml", "--executor", "slurm", "--job-dir", "sweeps/one", "--no-wait", cwd=sweep_dir)
    assert again.returncode == 0, again.stderr
    subprocess.run(["scancel", *(j["job_id"] for j in json.loads((sweep_dir / "sweeps/one/sweep.json").read_text())["jobs"])], check=False)


def test_a_partition_from_a_config_is_named_as_the_configs_key(sweep_dir):
    (sweep_dir / "part.yaml").write_text(f"executor: {{kind: slurm, partition: nosuch}}\n{TWO}")
    done = asyncbench("run", "part.yaml", "--job-dir", "jobs", cwd=sweep_dir)
    assert "executor.partition 'nosuch': Slurm knows no such partition; it has: debug" in _one_line_exit_2(done)


def test_gather_gives_up_on_job_ids_slurm_does_not_know_and_names_them(tmp_path):
    an_hour_ago = datetime.datetime.now(datetime.timezone.utc) - datetime.timedelta(hours=1)
    planted_sweep(tmp_path / "sweep", "slurm", "4000000000", created=an_hour_ago)
    started = time.monotonic()
    done = asyncbench("gather", "sweep", "-o", "all.json", cwd=tmp_path, timeout=60)
    assert time.monotonic() - started < 30
    assert done.returncode == 3, done.stderr
    assert "slurm does not know job(s) 4000000000" in done.stderr
    rows = json.loads((tmp_path / "all.json").read_text())["results"]
    assert [r["status"] for r in rows] == ["error"]
    assert "Slurm job 4000000000 ended UNKNOWN (sacct lists no such job" in rows[0]["reason"]
