"""Each place on the spine fills its hooks: `run` here (local.Here), a sweep's jobs followed and gathered
(following.Following, and `run --executor` checking its request once), a matrix's shards merged (shards.Merged) and
`ab`'s pairs (paired.Pairs). The engine is made up here (nothing is measured, no process started); the e2e tests run
the real thing."""

from __future__ import annotations

import contextlib
import dataclasses
import datetime
import json
from pathlib import Path
from typing import Any

import pytest

from asyncbench.errors import EXIT_ERRORS, InputError
from asyncbench.results.ab_report import ABReport
from asyncbench.results.model import PlannedCase, ShardOf
from asyncbench.results.paired import PairedCase, Side
from asyncbench.results.plan import ExecutorSettings
from asyncbench.results.schema import Report
from asyncbench.session import commands, following, jobs, local, paired, preflight, reading, shards, spine
from asyncbench.session.requests import ABRequest, Outputs, RunRequest, Selection
from asyncbench.session.run_conclusion import RunConclusion
from asyncbench.session.saver import Saver
from asyncbench.spec import manifest
from tests.support.helpers import ok_result, report_of

NUMPY_MATMUL = Selection(workloads=("matmul",), backends=("numpy",), devices=("cpu",), quick=True)


def _planned_id() -> str:
    """The id of NUMPY_MATMUL's one case."""
    from asyncbench.backends import get_backend
    from asyncbench.engine import expansion
    from asyncbench.session import planning

    ((case, _),) = expansion.expand(planning.plan(NUMPY_MATMUL), {"numpy": get_backend("numpy")})
    return case.id


# --- run here --------------------------------------------------------------------------------------------------------


@pytest.fixture
def made_up_engine(monkeypatch):
    """`run`'s engine with nothing measured: no workers, a stand-in environment, one ok row per case planned."""
    from asyncbench.engine import environment, runner

    def run(plan: Any, *, on_result: Any, **_: Any) -> None:
        for experiment in plan.experiments:
            on_result(dataclasses.replace(ok_result(f"{experiment.name}[numpy,cpu]"), experiment=experiment.name))

    monkeypatch.setattr(runner, "start_workers", lambda *_: None)
    monkeypatch.setattr(runner, "run", run)
    monkeypatch.setattr(environment, "capture", lambda backends: {"hostname": "here"})


def test_here_checks_first_keeps_each_case_as_it_finishes_and_records_its_own_report(tmp_path, made_up_engine):
    results = tmp_path / "r.json"
    here = local.Here(RunRequest(NUMPY_MATMUL, Outputs(str(results)), progress=False), lambda line: None)
    conclusion = here.preflight()
    assert isinstance(conclusion, RunConclusion)
    assert (conclusion.store, conclusion.by_job) == (None, False)  # no --record; a run's one report
    saver = Saver(str(results), lambda line: None)
    here.start(saver, contextlib.ExitStack())
    assert Path(f"{results}.journal").exists()  # begun: each case goes into the journal as it finishes
    here.execute()
    assert len(saver.lines) == 1
    report = here.collect(interrupted=False)
    assert [r.experiment for r in report.results] == ["matmul"]
    assert here.recorded(report) == [(report, str(results))]
    assert here.stopped_line(report, f" in {results}") == f"interrupted: 1 finished case(s) kept in {results}"
    ended = local.run(RunRequest(NUMPY_MATMUL, Outputs(str(tmp_path / "again.json")), progress=False), lambda line: None)
    assert (ended.code, ended.interrupted, ended.reports) == (0, False, True)


# --- a sweep's jobs, followed and gathered -------------------------------------------------------------------------


class Scheduler:
    """A local scheduler whose jobs are submitted at once and end at once, leaving no results (error rows)."""

    kind = "local"
    poll_s = 0.0

    def __init__(self) -> None:
        self.submitted: list[Any] = []

    def submit(self, runs: Any, submitted: list[str]) -> None:
        self.submitted += runs
        submitted += [str(4711 + index) for index in range(len(runs))]

    def states(self, job_ids: Any) -> dict[str, Any]:
        from asyncbench.engine import cluster

        return {job_id: cluster.JobState("done", "FINISHED") for job_id in job_ids}

    def outcome(self, job_id: str) -> Any:
        return (False, "it failed")

    def stderr_tail(self, job_id: str) -> None:
        return None

    def cancel(self, job_ids: Any) -> None:
        pass


def _sweep(folder: Path) -> None:
    """A sweep of one job in `folder`, as submitting writes its manifest."""
    folder.mkdir()
    case = PlannedCase("matmul[numpy,cpu]", "matmul", "matmul", "numpy", "cpu", {})
    job = manifest.SubmittedJob("001-matmul", "4711", folder / "001-matmul.yaml", folder / "001-matmul.json", (case,))
    now = datetime.datetime.now(datetime.timezone.utc)
    written = manifest.Manifest("one", now, {"name": "one", "experiments": []}, ExecutorSettings(kind="local"), 0.01, (job,))
    (folder / manifest.MANIFEST).write_text(manifest.write_text(written))


def test_following_checks_the_gathering_follows_the_jobs_and_records_each_jobs_own_report(tmp_path):
    _sweep(tmp_path / "sweep")
    said: list[str] = []
    place = following.Following(tmp_path / "sweep", RunRequest(progress=False), said.append, wait=True, scheduler=Scheduler())
    conclusion = place.preflight()
    assert conclusion.by_job  # what is recorded is each job's own report
    place.start(Saver(None, said.append), contextlib.ExitStack())
    place.execute()
    report = place.collect(interrupted=False)
    assert [(r.id, r.status) for r in report.results] == [("matmul[numpy,cpu]", "error")]  # it left no results
    assert place.recorded(report) == []  # no job left a report of its own
    assert place.stopped_line(report, "") == "interrupted: 1 case(s) gathered"
    ended = following.gather(tmp_path / "sweep", RunRequest(progress=False), said.append, wait=False, scheduler=Scheduler())
    assert (ended.code, ended.interrupted) == (EXIT_ERRORS, False)


@pytest.fixture
def made_up_cluster(monkeypatch):
    """submitit's local executor made up: its jobs end at once (jobs.submit and following as `run --executor local`)."""
    from asyncbench.engine import cluster

    made = Scheduler()
    monkeypatch.setattr(cluster, "require_submitit", lambda: None)
    monkeypatch.setattr(cluster, "scheduler", lambda kind, folder, settings, results=None: made)
    return made


def test_run_with_an_executor_checks_its_request_once_before_it_submits(tmp_path, monkeypatch, made_up_cluster):
    """The preflight ran in jobs.submit and again in following.gather: the outputs checked twice, the baseline read
    twice (and whatever it says said twice), the store opened twice."""
    baseline = tmp_path / "base.json"
    report_of([ok_result(_planned_id())]).save(baseline)
    asked: list[str] = []
    check_outputs, load_results = preflight.check_outputs, reading.load_results
    monkeypatch.setattr(preflight, "check_outputs", lambda *a, **k: asked.append("outputs") or check_outputs(*a, **k))
    monkeypatch.setattr(reading, "load_results", lambda path, *a, **k: asked.append(f"read {path}") or load_results(path, *a, **k))
    request = RunRequest(NUMPY_MATMUL, Outputs(str(tmp_path / "all.json")), progress=False, executor={"kind": "local"})
    request = dataclasses.replace(request, gate=dataclasses.replace(request.gate, baseline=str(baseline)))
    ended = commands.run(request, jobs.JobOptions(job_dir=str(tmp_path / "jobs")), lambda line: None, lambda line: None)
    assert ended is not None
    assert ended.code == EXIT_ERRORS  # the job left no results: an error row
    assert asked == ["outputs", f"read {baseline}"]
    assert len(made_up_cluster.submitted) == 1


def test_an_output_that_is_one_of_the_sweeps_own_files_is_refused_before_anything_is_submitted(tmp_path, made_up_cluster):
    (tmp_path / "jobs").mkdir()
    request = RunRequest(NUMPY_MATMUL, Outputs(str(tmp_path / "jobs" / "001-matmul.json")), progress=False, executor={"kind": "local"})
    with pytest.raises(InputError, match="is one of the submission's own files"):
        commands.run(request, jobs.JobOptions(job_dir=str(tmp_path / "jobs")), lambda line: None, lambda line: None)
    assert made_up_cluster.submitted == []
    assert list((tmp_path / "jobs").iterdir()) == []  # the folder as it was


# --- a matrix's shards, merged -------------------------------------------------------------------------------------


def _shard(folder: Path, index: int, count: int, case_ids: list[str]) -> str:
    """A shard's results file, each of its cases run ok."""
    planned = tuple(PlannedCase(i, "m", "matmul", "torch", "cpu", {}) for i in case_ids)
    stamp = ShardOf(index, count, "ab" * 32, 2 * len(case_ids), planned, tuple(range(index - 1, 2 * len(case_ids), count)))
    report = Report.new({"name": "plan", "experiments": []}, {"hostname": f"runner-{index}"}, tuple(map(ok_result, case_ids)))
    path = folder / f"s{index}.json"
    dataclasses.replace(report, shard=stamp).save(path)
    return str(path)


def test_merged_reads_and_proves_the_shards_first_runs_nothing_and_records_each_shard(tmp_path, monkeypatch):
    from asyncbench.results import shard_plan

    proven: list[Any] = []
    monkeypatch.setattr(shard_plan, "proven", proven.append)  # the forgery checks: tests/e2e/test_merge_forgery.py
    paths = [_shard(tmp_path, 2, 2, ["m[torch,cpu,k=b]"]), _shard(tmp_path, 1, 2, ["m[torch,cpu,k=a]"])]
    place = shards.Merged(paths, RunRequest(outputs=Outputs(str(tmp_path / "all.json")), progress=False), lambda line: None)
    conclusion = place.preflight()
    assert conclusion.by_job
    assert len(proven) == 1
    place.start(Saver(None, lambda line: None), contextlib.ExitStack())
    place.execute()
    report = place.collect(interrupted=False)
    assert [r.id for r in report.results] == ["m[torch,cpu,k=a]", "m[torch,cpu,k=b]"]
    assert [path for _, path in place.recorded(report)] == paths  # each shard under its own machine
    assert place.stopped_line(report, "") is None
    ended = shards.merge(paths, RunRequest(outputs=Outputs(str(tmp_path / "all.json")), progress=False), lambda line: None)
    assert json.loads((tmp_path / "all.json").read_text())["results"][0]["id"] == "m[torch,cpu,k=a]"
    assert not ended.interrupted


# --- ab's pairs ------------------------------------------------------------------------------------------------------


class SideWorkers:
    """The gate's side workers made up: each side's, with what it was given; no process started."""

    made: list[Any] = []

    def __init__(self, sides: Any):
        self.sides, self.closed = sides, False
        SideWorkers.made.append(self)

    def for_case(self, side: str, case: Any) -> Any:
        return type("Worker", (), {"tree": None, "call": lambda *a: {"python": "3"}})()

    def close(self) -> None:
        self.closed = True


def test_pairs_check_first_pair_each_case_on_both_sides_save_and_record_nothing(tmp_path, monkeypatch):
    from asyncbench.engine import gate_time, side_process

    SideWorkers.made.clear()
    monkeypatch.setattr(side_process, "SideWorkers", SideWorkers)
    monkeypatch.setattr(gate_time, "gate", lambda pairings, *a, **k: [PairedCase(p.head_case.id, "ok") for p in pairings])
    monkeypatch.setattr(gate_time, "time_notes", lambda *a: [])
    results = tmp_path / "ab.json"
    request = ABRequest(NUMPY_MATMUL, Outputs(str(results)), progress=False, base_env={"X": "1"})
    with pytest.raises(InputError, match="ab needs a base"):
        paired.Pairs(dataclasses.replace(request, base_env={}), lambda line: None).preflight()
    said: list[str] = []
    ended = paired.run(request, said.append)
    (workers,) = SideWorkers.made
    assert workers.sides["base"][2] == {"X": "1"}  # each side's own variables
    assert workers.sides["head"][2] == {}
    assert workers.closed
    written = json.loads(results.read_text())
    assert [(case["id"], case["status"]) for case in written["cases"]] == [(_planned_id(), "ok")]
    assert said[-1] == f"written: {results}"
    assert not ended.interrupted
    place = paired.Pairs(request, said.append)
    assert place.recorded(ABReport("", "", Side("base", "", "", ""), Side("head", "", "", ""), 0.05, 0.01, False, "", ())) == []


def test_ab_concludes_with_its_own_files_in_order_and_a_cut_short_gate_ends_with_the_signals_code(tmp_path):
    report = ABReport("", "", Side("base", "", "", ""), Side("head", "", "", ""), 0.05, 0.01, False, "", (PairedCase("a", "ok"),))
    files = {name: str(tmp_path / name) for name in ("junit", "markdown", "bmf")}
    lost = tmp_path / "nowhere" / "ab.json"
    conclusion = paired.PairedConclusion(ABRequest(outputs=Outputs(str(lost), files)))
    said: list[str] = []
    saver = Saver(str(lost), said.append, conclusion.dumps)
    saver.finish(report)  # its folder is missing: the results file is not saved
    ended = spine.conclude(conclusion, report, saver, 130, [], said.append)
    assert said[1:] == [f"written: {files['markdown']}, {files['bmf']}, {files['junit']}"]  # the comment first, as ab wrote them
    assert ended.code == 130
    assert ended.interrupted
    assert ended.view.reasons[:2] == (
        f"could not write {lost}",
        "interrupted (exit 130): the gate did not finish; each row is what its blocks had measured",
    )
