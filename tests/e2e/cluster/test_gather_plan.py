"""`gather` holds each job to what its submission's manifest planned for it: no file and no case two jobs share (the
manifest is refused, one line naming the key, exit 2), from each job's results only the cases that job planned (a
planned case with no row is an error row), and a gather that has measured nothing yet is no pass (exit 1)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from asyncbench.errors import InputError
from asyncbench.session import following
from tests.support.cli import asyncbench
from tests.support.cluster_plans import LONG, TWO, manifest

pytest.importorskip("submitit")

#: sync_async twice (job 001, two cases), barrier once (job 002)
SWEPT = ("--set", "sync_async.n_ops=20,40")


@pytest.fixture(scope="module")
def gathered(tmp_path_factory) -> Path:
    """A local submission of TWO (job 001 planning two cases), its jobs ended and gathered once: its jobs folder."""
    folder = tmp_path_factory.mktemp("gathered")
    (folder / "two.yaml").write_text(TWO)
    done = asyncbench("run", "two.yaml", *SWEPT, "--executor", "local", "--job-dir", "jobs", "-o", "all.json", cwd=folder)
    assert done.returncode == 0, done.stderr
    return folder / "jobs"


def _edited(gathered: Path, tmp_path: Path, edit) -> Path:
    """A copy of the gathered submission's folder whose sweep.json `edit` changed (its paths kept, as a copy's are)."""
    folder = tmp_path / "jobs"
    folder.mkdir()
    document = manifest(gathered)
    for job in document["jobs"]:
        for key in ("config", "results"):
            job[key] = Path(job[key]).name
        for source in (Path(job["config"]), Path(job["results"]), Path(job["results"]).with_suffix(".outcome.json")):
            (folder / source.name).write_bytes((gathered / source.name).read_bytes())
    edit(document["jobs"])
    (folder / "sweep.json").write_text(json.dumps(document))
    return folder


def _gather(folder: Path):
    return asyncbench("gather", str(folder), "--no-wait", "-o", "t.json", cwd=folder.parent, timeout=120)


def _rows(folder: Path) -> list[tuple[str, str]]:
    return [(r["id"], r["status"]) for r in json.loads((folder.parent / "t.json").read_text())["results"]]


# --- no file and no case two jobs share --------------------------------------------------------------------------


def test_two_jobs_given_one_results_file_are_refused_naming_the_key_never_gathered_twice(gathered, tmp_path):
    def share(jobs):
        jobs[0]["results"] = jobs[1]["results"]

    folder = _edited(gathered, tmp_path, share)
    done = _gather(folder)
    assert done.returncode == 2, done.stderr
    assert done.stderr.count("\n") == 1, done.stderr
    assert "jobs[1].results" in done.stderr
    assert "is jobs[0].results too" in done.stderr
    assert not (tmp_path / "t.json").exists()


def test_two_jobs_planning_one_case_are_refused_naming_the_key(gathered, tmp_path):
    def twice(jobs):
        jobs[1]["cases"] = [*jobs[1]["cases"], jobs[0]["cases"][1]]

    done = _gather(_edited(gathered, tmp_path, twice))
    assert done.returncode == 2, done.stderr
    assert "jobs[1].cases[1].id" in done.stderr
    assert "is jobs[0].cases[1]'s case too" in done.stderr


@pytest.mark.parametrize(
    ("edit", "key"),
    [
        (lambda jobs: jobs[1].update(config=jobs[0]["results"]), "jobs[1].config"),
        (lambda jobs: jobs[1].update(config=Path(jobs[0]["results"]).with_suffix(".outcome.json").name), "jobs[1].config"),
        (lambda jobs: jobs[1].update(results=Path(jobs[0]["results"]).with_suffix(".yaml").name), "jobs[1].results"),
    ],
    ids=["config is another's results", "config is another's outcome file", "outcome file shared through the suffix"],
)
def test_a_file_two_jobs_would_read_or_write_is_refused_in_the_manifest(gathered, tmp_path, edit, key):
    folder = _edited(gathered, tmp_path, edit)
    with pytest.raises(InputError, match=re.escape(key) + r": .* too: each job's files are its own$"):
        following.read_manifest(folder)


# --- from each job only the cases it planned ---------------------------------------------------------------------


def test_a_row_of_a_case_the_job_did_not_plan_is_not_taken_and_its_planned_case_is_an_error_row(gathered, tmp_path):
    def rename(jobs):
        jobs[0]["cases"][0]["id"] = "x"

    done = _gather(_edited(gathered, tmp_path, rename))
    assert done.returncode == 3, done.stderr
    rows = _rows(tmp_path / "jobs")
    assert ("x", "error") in rows
    assert "sync_async[numpy,cpu,n_ops=20]" not in [i for i, _ in rows]
    assert len(rows) == 3
    assert (
        "job 001-sync_async: its results hold 1 case(s) it was not planned to run (sync_async[numpy,cpu,n_ops=20]): not taken"
        in done.stderr
    )


def test_a_job_planned_one_case_gives_that_case_alone(gathered, tmp_path):
    def cut(jobs):
        jobs[0]["cases"] = jobs[0]["cases"][1:]

    done = _gather(_edited(gathered, tmp_path, cut))
    assert done.returncode == 0, done.stderr
    assert _rows(tmp_path / "jobs") == [("sync_async[numpy,cpu,n_ops=40]", "ok"), ("barrier[numpy,cpu,size=64]", "ok")]
    assert "it was not planned to run (sync_async[numpy,cpu,n_ops=20]): not taken" in done.stderr


# --- a gather of nothing measured ----------------------------------------------------------------------------------


def test_a_gather_without_waiting_while_every_job_runs_measured_nothing_and_exits_1(tmp_path):
    (tmp_path / "long.yaml").write_text(LONG)
    submitted = asyncbench("run", "long.yaml", "--executor", "local", "--no-wait", cwd=tmp_path)
    assert submitted.returncode == 0, submitted.stderr
    folder = Path(submitted.stdout.strip())
    early = asyncbench("gather", str(folder), "--no-wait", "-o", "partial.json", cwd=tmp_path)
    done = asyncbench("gather", str(folder), "-o", "all.json", cwd=tmp_path)  # waits: no job is left running
    assert done.returncode == 0, done.stderr
    assert early.returncode == 1, early.stderr
    assert "1 job(s) still queued or running" in early.stderr
    assert "nothing was measured: 1 job(s) still queued or running, none ended" in early.stdout + early.stderr
    assert json.loads((tmp_path / "partial.json").read_text())["results"] == []
