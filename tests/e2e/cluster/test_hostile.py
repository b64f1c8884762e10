"""Sweeps and executors under hostile input and faults: control characters in what reaches a batch script, tampered
`sweep.json` files, job ids the scheduler does not know, a refused submission, an unreachable Slurm controller.
Each is one line and exit 2 (or error rows, for jobs the scheduler lost), never a traceback, and nothing submitted,
created or written that was not there. The tests marked `slurm` run the real single-node Slurm (tests/support/slurm.sh);
the others need none (the local executor, captured outputs of Slurm's commands)."""

from __future__ import annotations

import datetime
import json
import os
import stat
import subprocess
import time
from pathlib import Path
from typing import Callable

import pytest

from asyncbench.engine import cluster, slurm
from asyncbench.errors import InputError
from asyncbench.results.plan import ExecutorSettings
from asyncbench.session import following, jobs, planning
from asyncbench.session.requests import Outputs, RunRequest, Selection
from asyncbench.spec import config, executor, overrides
from tests.support.cli import asyncbench
from tests.support.cluster_plans import CASE, SLURM_SCRIPT, TWO
from tests.support.cluster_plans import planted_sweep as _sweep

pytest.importorskip("submitit")

#: what Slurm 22.05's commands said here with slurmctld stopped (`scontrol shutdown slurmctld`) or slurmdbd stopped
SINFO_DOWN = "slurm_load_partitions: Unable to contact slurm controller (connect failure)\n"
PING_DOWN = (
    "Slurmctld(primary) at vm is DOWN\n*****************************************\n"
    "** RESTORE SLURMCTLD DAEMON TO SERVICE **\n*****************************************\n"
)
SCONTROL_DOWN = "slurm_load_partitions error: Unable to contact slurm controller (connect failure)\n"
SACCT_DBD_DOWN = (
    "sacct: error: slurm_persist_conn_open_without_init: failed to open persistent connection to host:localhost:6819: "
    "Connection refused\nsacct: error: Sending PersistInit msg: Connection refused\n"
    "sacct: error: Problem talking to the database: Connection refused\n"
)


@pytest.fixture
def sweep_dir(tmp_path: Path) -> Path:
    (tmp_path / "two.yaml").write_text(TWO)
    return tmp_path


def _one_line_exit_2(done: subprocess.CompletedProcess[str]) -> str:
    assert done.returncode == 2, done.stderr
    assert len(done.stderr.strip().splitlines()) == 1, done.stderr
    assert "Traceback" not in done.stderr
    return done.stderr


def _fake_slurm(folder: Path, **outputs: tuple[str, int]) -> dict[str, str]:
    """A PATH whose sbatch, sacct, sinfo, scancel and scontrol print captured output and exit with its code."""
    folder.mkdir()
    for tool in ("sbatch", "sacct", "sinfo", "scancel", "scontrol"):
        said, code = outputs.get(tool, ("", 0))
        script = folder / tool
        script.write_text(f"#!/bin/sh\ncat >&2 <<'EOF'\n{said}EOF\nexit {code}\n")
        script.chmod(script.stat().st_mode | stat.S_IXUSR)
    return {"PATH": f"{folder}:{os.environ['PATH']}"}


# --- control characters: bad input before anything is created or submitted ---------------------------------------


@pytest.mark.parametrize(
    "args",
    [
        ["--sbatch", "comment=x\ntouch pwned"],
        ["--sbatch", "comment=x\r\n#SBATCH --wrap=id"],
        ["--sbatch", "comment\n=x"],
        ["--sbatch", "comment=a\x85b"],  # C1: NEL
        ["--account", "a\x1bb"],
        ["--partition", "gpu\x7f"],
        ["--set", "executor.account=a\x01b"],
        ["--job-dir", "jobs\nx"],
        ["--job-dir", "jobs\x1b[31m"],
        ["--job-dir", "jobs-%j"],
    ],
)
def test_a_control_character_in_an_executor_value_is_one_line_and_exit_2_before_anything_is_created(sweep_dir, args):
    done = asyncbench("run", "two.yaml", "--executor", "local", "--no-wait", *args, cwd=sweep_dir, timeout=60)
    assert ("control character" if "%" not in args[1] else "read by Slurm as a pattern") in _one_line_exit_2(done)
    assert sorted(p.name for p in sweep_dir.iterdir()) == ["two.yaml"]  # no job folder, no .asyncbench


@pytest.mark.parametrize(
    "executor_yaml",
    ['{kind: local, partition: "gpu\\0"}', '{kind: local, sbatch: {comment: "x\\r\\ny"}}', '{kind: local, account: "a\\u009bb"}'],
)
def test_a_control_character_in_a_configs_executor_names_the_key(sweep_dir, executor_yaml):
    (sweep_dir / "bad.yaml").write_text(f"executor: {executor_yaml}\n{TWO}")
    done = asyncbench("run", "bad.yaml", "--no-wait", cwd=sweep_dir, timeout=60)
    said = _one_line_exit_2(done)
    assert "bad.yaml" in said
    assert "executor." in said
    assert "control character" in said
    assert not (sweep_dir / ".asyncbench").exists()


def test_an_sbatch_key_without_a_value_is_refused_unless_it_is_an_sbatch_flag():
    plain = config.loads("experiments: [{workload: sync_async}]")
    with pytest.raises(InputError, match=r"--sbatch 'qos': sbatch option 'qos' needs a value \(qos=VALUE\); only sbatch's flags"):
        overrides.apply_overrides(plain, executor_options={"sbatch": {"qos": True}})
    with pytest.raises(InputError, match=r"executor.sbatch: sbatch option 'mem' needs a value"):
        config.loads("executor: {sbatch: {mem: true}}\nexperiments: [{workload: sync_async}]")
    flagged = overrides.apply_overrides(plain, executor_options={"sbatch": {"requeue": True, "qos": "high"}})
    assert flagged.executor.sbatch == {"requeue": True, "qos": "high"}


@pytest.mark.parametrize("option", ["wrap=touch pwned", "array=0-99", "ntasks-per-node=8", "parsable", "wait", "test-only"])
def test_an_sbatch_option_that_would_replace_the_job_or_sbatchs_answer_is_refused(option):
    plain = config.loads("experiments: [{workload: sync_async}]")
    key, _, value = option.partition("=")
    with pytest.raises(InputError, match=f"--sbatch '{option}': '{key}' would change what each job runs or what sbatch answers"):
        overrides.apply_overrides(plain, executor_options={"sbatch": {key: value or True}})


def test_an_sbatch_key_without_a_value_on_the_command_line_is_one_line(sweep_dir):
    done = asyncbench("run", "two.yaml", "--executor", "local", "--sbatch", "qos", "--no-wait", cwd=sweep_dir, timeout=60)
    assert "--sbatch 'qos': sbatch option 'qos' needs a value" in _one_line_exit_2(done)


# --- errors name what the user typed ------------------------------------------------------------------------------


def test_a_bad_time_limit_names_the_option_or_the_config_key_the_user_gave(sweep_dir):
    done = asyncbench("run", "two.yaml", "--executor", "local", "--time-limit", "0m", cwd=sweep_dir, timeout=60)
    said = _one_line_exit_2(done)
    assert "--time-limit '0m': a time limit must be more than nothing" in said
    assert "--time-min" not in said
    (sweep_dir / "limited.yaml").write_text(f"executor: {{kind: local, time_min: 0}}\n{TWO}")
    assert "executor.time_min: a time limit must be more than nothing" in _one_line_exit_2(
        asyncbench("run", "limited.yaml", cwd=sweep_dir, timeout=60)
    )
    assert executor.given_as("partition", {}, ["executor.partition=x"]) == "--set executor.partition"
    assert executor.given_as("partition", {"partition": "x"}, []) == "--partition"
    assert executor.given_as("time_min", {}, []) == "executor.time_min"


# --- tampered sweep.json: one line, exit 2, nothing written -------------------------------------------------------


#: hostile changes to a whole manifest's JSON (document), its first job's (job) at hand
CHANGES: dict[str, Callable[[dict, dict], object]] = {
    "a list": lambda document, job: [document],
    "a string": lambda document, job: "sweep",
    "null": lambda document, job: None,
    "version as a string": lambda document, job: {**document, "asyncbench_sweep": "1"},
    "version as true": lambda document, job: {**document, "asyncbench_sweep": True},
    "version huge": lambda document, job: {**document, "asyncbench_sweep": 10**30},
    "no jobs key": lambda document, job: {k: v for k, v in document.items() if k != "jobs"},
    "only the version": lambda document, job: {"asyncbench_sweep": 1},
    "an unknown key": lambda document, job: {**document, "extra": 1},
    "jobs as an object": lambda document, job: {**document, "jobs": {"a": job}},
    "no jobs": lambda document, job: {**document, "jobs": []},
    "a job as a string": lambda document, job: {**document, "jobs": ["001-barrier"]},
    "a job without job_id": lambda document, job: {**document, "jobs": [{k: v for k, v in job.items() if k != "job_id"}]},
    "job id as a number": lambda document, job: {**document, "jobs": [{**job, "job_id": 4711}]},
    "job id an option": lambda document, job: {**document, "jobs": [{**job, "job_id": "--format=JobName"}]},
    "job id with a comma": lambda document, job: {**document, "jobs": [{**job, "job_id": "4711,1"}]},
    "job id huge": lambda document, job: {**document, "jobs": [{**job, "job_id": "9" * 30}]},
    "job id zero": lambda document, job: {**document, "jobs": [{**job, "job_id": "0"}]},
    "job id with a newline": lambda document, job: {**document, "jobs": [{**job, "job_id": "4711\n"}]},
    "config outside the folder": lambda document, job: {**document, "jobs": [{**job, "config": "/etc/passwd"}]},
    "results escaping by ..": lambda document, job: {**document, "jobs": [{**job, "results": "../../elsewhere.json"}]},
    "results climbing back in": lambda document, job: {**document, "jobs": [{**job, "results": "x/../001-barrier.json"}]},
    "a job name with a slash": lambda document, job: {**document, "jobs": [{**job, "name": "../x"}]},
    "two jobs of one name": lambda document, job: {**document, "jobs": [job, {**job, "job_id": "4712"}]},
    "two jobs of one id": lambda document, job: {**document, "jobs": [job, {**job, "name": "002-barrier"}]},
    "cases as a string": lambda document, job: {**document, "jobs": [{**job, "cases": "barrier"}]},
    "a case without its id": lambda document, job: {
        **document,
        "jobs": [{**job, "cases": [{k: v for k, v in job["cases"][0].items() if k != "id"}]}],
    },
    "a case's params as a list": lambda document, job: {**document, "jobs": [{**job, "cases": [{**job["cases"][0], "params": [64]}]}]},
    "executor as a list": lambda document, job: {**document, "executor": ["local"]},
    "executor with an unknown key": lambda document, job: {**document, "executor": {**document["executor"], "gpus": 1}},
    "executor kind here": lambda document, job: {**document, "executor": {**document["executor"], "kind": "here"}},
    "executor sbatch with a newline": lambda document, job: {
        **document,
        "executor": {**document["executor"], "sbatch": {"comment": "a\nb"}},
    },
    "executor time huge": lambda document, job: {**document, "executor": {**document["executor"], "time_min": 10**30}},
    "config as a list": lambda document, job: {**document, "config": []},
    "name as a number": lambda document, job: {**document, "name": 5},
    "created not a date": lambda document, job: {**document, "created": "yesterday"},
    "submit_s NaN": lambda document, job: {**document, "submit_s": float("nan")},
    "submit_s negative": lambda document, job: {**document, "submit_s": -1},
}


def _tamper(document: dict, change: str) -> object:
    """`document` with one hostile change (a key of CHANGES)."""
    return CHANGES[change](document, document["jobs"][0])


TAMPERED = list(CHANGES)


@pytest.mark.parametrize("kind", ["local", "slurm"])
@pytest.mark.parametrize("change", TAMPERED)
def test_every_tampered_manifest_is_one_input_error_before_any_value_is_used(tmp_path, change, kind):
    document = _sweep(tmp_path / "sweep", kind)
    (tmp_path / "sweep" / "sweep.json").write_text(json.dumps(_tamper(document, change)))
    with pytest.raises(InputError) as refused:
        following.read_manifest(tmp_path / "sweep")
    assert "\n" not in str(refused.value)
    assert "sweep.json" in str(refused.value)


def test_a_manifest_of_repeated_names_is_refused_at_the_second_job_and_one_of_too_many_jobs_before_any(tmp_path, monkeypatch):
    """20,000 jobs of one name (7.8 MB) took 22.5 s to be refused: every name counted against every other, every
    path resolved anew. The repeat is said at the second job, before the malformed third is read; more jobs than
    any submission has are refused before one is read."""
    from asyncbench.spec import manifest

    document = _sweep(tmp_path / "sweep")
    job = document["jobs"][0]
    (tmp_path / "sweep" / "sweep.json").write_text(json.dumps({**document, "jobs": [job, {**job, "job_id": "4712"}, "garbage"]}))
    with pytest.raises(InputError, match="jobs: more than one job has the name 001-barrier$"):
        following.read_manifest(tmp_path / "sweep")
    monkeypatch.setattr(manifest, "MAX_JOBS", 2)
    (tmp_path / "sweep" / "sweep.json").write_text(json.dumps({**document, "jobs": [job, "garbage", "garbage"]}))
    with pytest.raises(InputError, match=r"jobs: 3 jobs: more than any submission has \(at most 2\)"):
        following.read_manifest(tmp_path / "sweep")


def test_a_whole_manifest_reads_back_as_it_was_written(tmp_path):
    _sweep(tmp_path / "sweep", "slurm", "4711_3")
    read = following.read_manifest(tmp_path / "sweep")
    assert [(j.name, j.job_id, j.cases) for j in read.jobs] == [("001-barrier", "4711_3", (CASE,))]
    assert read.executor == ExecutorSettings(kind="slurm")


@pytest.mark.parametrize(
    "change",
    ["version as a string", "only the version", "executor with an unknown key", "job id an option", "job id huge", "cases as a string"],
)
def test_gather_of_a_tampered_manifest_is_one_line_exit_2_and_writes_nothing(tmp_path, change):
    document = _sweep(tmp_path / "sweep")
    (tmp_path / "sweep" / "sweep.json").write_text(json.dumps(_tamper(document, change)))
    before = sorted(p.name for p in (tmp_path / "sweep").iterdir())
    done = asyncbench("gather", "sweep", "--no-wait", "-o", "all.json", "--markdown", "all.md", cwd=tmp_path, timeout=60)
    assert "sweep.json" in _one_line_exit_2(done)
    assert not (tmp_path / "all.json").exists()
    assert not (tmp_path / "all.md").exists()
    assert sorted(p.name for p in (tmp_path / "sweep").iterdir()) == before


@pytest.mark.parametrize("output", [["-o", "sweep/sweep.json"], ["--markdown", "sweep/001-barrier.json"], ["-o", "sweep/logs/x.json"]])
def test_gather_refuses_to_write_over_the_sweeps_own_files(tmp_path, output):
    _sweep(tmp_path / "sweep")
    before = (tmp_path / "sweep" / "sweep.json").read_bytes()
    done = asyncbench("gather", "sweep", "--no-wait", *output, cwd=tmp_path, timeout=60)
    assert f"{output[0]} {output[1]}: is one of the submission's own files" in _one_line_exit_2(done)
    assert (tmp_path / "sweep" / "sweep.json").read_bytes() == before


def test_sacct_is_asked_for_checked_ids_in_one_argument_never_an_option(monkeypatch, tmp_path):
    asked = []
    monkeypatch.setattr(slurm, "run", lambda command, *a: asked.append(command) or subprocess.CompletedProcess(command, 0, "", ""))
    states = cluster.SlurmScheduler(tmp_path, ExecutorSettings(kind="slurm")).states(["4711", "4712_3"])
    assert asked[0][-1] == "--jobs=4711,4712_3"
    assert "-j" not in asked[0]
    assert {s.phase for s in states.values()} == {cluster.UNLISTED}


def test_a_damaged_requeued_count_is_taken_as_none(tmp_path):
    from asyncbench.engine import jobs

    jobs.requeued_path(tmp_path / "r.json").write_text("9" * 5000)
    assert jobs.requeued(tmp_path / "r.json") == 0


#: a user's workload module that says when it is imported (a gather must not import it: it only reads results)
IMPORT_SAYS = """\
import pathlib

pathlib.Path(__file__).with_name("imported").write_text("gather imported the user's module")
"""


@pytest.mark.parametrize("swept", [True, False], ids=["a-swept-plan", "a-plan-without-sweeps"])
def test_gather_learns_which_experiments_sweep_from_its_manifest_without_importing_a_jobs_user_module(tmp_path, swept):
    """It re-loaded every job's config only to learn whether a --plot has sweeps to draw: importing the user's
    workload module (its code run again, in the process that gathers) for what sweep.json already holds."""
    folder = tmp_path / "sweep"
    experiment = {"name": "mine", "workload": "mine.py:Mine", **({"sweep": {"n": [1, 2]}} if swept else {})}
    _sweep(folder, "slurm", plan={"name": "two", "experiments": [experiment]})
    (folder / "mine.py").write_text(IMPORT_SAYS)
    (folder / "001-barrier.yaml").write_text("experiments:\n  - name: mine\n    workload: mine.py:Mine\n")
    request = RunRequest(outputs=Outputs(files={"plot": str(tmp_path / "sweep.png")}), progress=False)
    if swept:
        ended = following.gather(folder, request, lambda line: None, wait=False, scheduler=_Unlisting())
        assert ended.code != 2
    else:
        with pytest.raises(InputError, match="--plot draws sweeps, and no selected experiment has one"):
            following.gather(folder, request, lambda line: None, wait=False, scheduler=_Unlisting())
    assert not (folder / "imported").exists()


@pytest.mark.parametrize(
    "given, said", [("qos", "sbatch option 'qos' needs a value (qos=VALUE)"), ("=high", "--sbatch with an empty name")]
)
@pytest.mark.parametrize("executor_kind", ["local", "here"])
def test_an_sbatch_key_without_its_value_is_one_line_and_exit_2_on_the_command_line(sweep_dir, given, said, executor_kind):
    """`--sbatch qos` must not reach sbatch as a bare flag (only sbatch's own flags go without a value), whatever
    the executor: nothing runs, nothing is created."""
    done = asyncbench("run", "two.yaml", "--executor", executor_kind, "--sbatch", given, "--no-progress", cwd=sweep_dir, timeout=60)
    assert said in _one_line_exit_2(done)
    assert sorted(p.name for p in sweep_dir.iterdir()) == ["two.yaml"]


# --- job ids the scheduler does not know ---------------------------------------------------------------------------


class _Unlisting:
    """A Slurm scheduler that lists none of the jobs it is asked about (a folder from another cluster)."""

    kind = "slurm"
    poll_s = 0.05

    def states(self, job_ids):
        return {job_id: cluster.JobState(cluster.UNLISTED, "UNKNOWN", "sacct lists no such job") for job_id in job_ids}

    def outcome(self, job_id):
        return None

    def stderr_tail(self, job_id):
        return None

    def cancel(self, job_ids):
        pass


def test_gather_waits_a_bounded_grace_for_jobs_sacct_does_not_list_then_makes_them_error_rows(tmp_path, monkeypatch):
    monkeypatch.setattr(following, "UNLISTED_GRACE_S", 0.5)
    in_an_hour = datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(hours=1)  # a clock ahead: the grace runs from now
    _sweep(tmp_path / "sweep", "slurm", "4711", created=in_an_hour)
    said: list[str] = []
    started = time.monotonic()
    ended = following.gather(tmp_path / "sweep", RunRequest(outputs=Outputs(str(tmp_path / "all.json")), progress=False), said.append,
                         wait=True, scheduler=_Unlisting())  # fmt: skip
    assert 0.5 <= time.monotonic() - started < 10
    assert ended.code == 3  # error rows, as any job that ended without its cases
    assert any("does not know job(s) 4711" in line for line in said)
    rows = json.loads((tmp_path / "all.json").read_text())["results"]
    assert [(r["status"], "sacct lists no such job" in r["reason"]) for r in rows] == [("error", True)]


def test_gather_without_waiting_keeps_an_unlisted_job_pending_within_the_grace(tmp_path):
    _sweep(tmp_path / "sweep", "slurm", "4711")
    said: list[str] = []
    ended = following.gather(tmp_path / "sweep", RunRequest(progress=False), said.append, wait=False, scheduler=_Unlisting())
    assert ended.code != 2
    assert any("1 job(s) still queued or running" in line for line in said)


# --- an unreachable Slurm, said as such ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("tool", "output", "daemon"),
    [
        ("sinfo", SINFO_DOWN, "the Slurm controller"),
        ("scontrol", PING_DOWN, "the Slurm controller"),
        ("scontrol", SCONTROL_DOWN, "the Slurm controller"),
        ("sacct", SACCT_DBD_DOWN, "Slurm's accounting daemon (slurmdbd)"),
    ],
)
def test_captured_outputs_of_an_unreachable_slurm_are_said_as_such_in_one_line(tool, output, daemon):
    said = slurm.refused(tool, output, 1)
    assert said.startswith(f"{daemon} cannot be reached ({tool}: ")
    assert "\n" not in said
    assert "*****" not in said
    assert slurm.refused("sbatch", "sbatch: error: Invalid feature specification\n", 1) == (
        "sbatch failed: sbatch: error: Invalid feature specification"
    )


def test_a_controller_that_is_down_is_said_at_once_not_as_a_missing_partition(tmp_path, sweep_dir):
    env = _fake_slurm(tmp_path / "bin", sinfo=(SINFO_DOWN, 1), scontrol=(PING_DOWN, 1))
    started = time.monotonic()
    done = asyncbench("run", "two.yaml", "--executor", "slurm", "--job-dir", "jobs", cwd=sweep_dir, timeout=60, env=env)
    said = _one_line_exit_2(done)
    assert time.monotonic() - started < 15
    assert "the Slurm controller cannot be reached (scontrol: Slurmctld(primary) at vm is DOWN)" in said
    assert "partition" not in said
    assert not (sweep_dir / "jobs").exists()


def test_gather_with_slurms_accounting_down_is_one_line_and_leaves_the_jobs(tmp_path):
    _sweep(tmp_path / "sweep", "slurm", "4711")
    env = _fake_slurm(tmp_path / "bin", sacct=(SACCT_DBD_DOWN, 1))
    done = asyncbench("gather", "sweep", "--no-wait", "-o", "all.json", cwd=tmp_path, timeout=60, env=env)
    said = _one_line_exit_2(done)
    assert "Slurm's accounting daemon (slurmdbd) cannot be reached" in said
    assert "asyncbench gather sweep" in said
    assert not (tmp_path / "all.json").exists()


class _Recovering(_Unlisting):
    """A scheduler whose accounting fails twice (slurmdbd restarting), then says the job failed."""

    def __init__(self):
        self.failures = 2

    def states(self, job_ids):
        if self.failures:
            self.failures -= 1
            raise InputError(slurm.refused("sacct", SACCT_DBD_DOWN, 1))
        return {job_id: cluster.JobState("failed", "FAILED", "exit code 1:0") for job_id in job_ids}


def test_a_waiting_gather_rides_out_a_short_outage_of_the_accounting_and_gives_up_after_a_bounded_one(tmp_path, monkeypatch):
    _sweep(tmp_path / "sweep", "slurm", "4711")
    request = RunRequest(progress=False)
    ended = following.gather(tmp_path / "sweep", request, lambda line: None, wait=True, scheduler=_Recovering())
    assert ended.code == 3  # the job's state, read once the accounting answered again
    monkeypatch.setattr(following, "OUTAGE_S", 0.2)
    lasting = _Recovering()
    lasting.failures = 10**6
    with pytest.raises(InputError, match=r"accounting daemon \(slurmdbd\) cannot be reached .*; the jobs are left as they are"):
        following.gather(tmp_path / "sweep", request, lambda line: None, wait=True, scheduler=lasting)


# --- a refused submission leaves the job folder as it was ----------------------------------------------------------


class _Refusing(cluster.LocalScheduler):
    def submit(self, runs, submitted):
        raise RuntimeError("sbatch: error: Batch job submission failed: Invalid qos specification\nmore")


@pytest.mark.parametrize("existed", [False, True])
def test_a_refused_submission_leaves_the_job_dir_as_it_was(sweep_dir, monkeypatch, existed):
    monkeypatch.chdir(sweep_dir)
    monkeypatch.setattr(cluster, "scheduler", lambda kind, folder, settings: _Refusing(folder, settings))
    if existed:
        (sweep_dir / "deep").mkdir()
    request = RunRequest(Selection(configs=("two.yaml",)), executor={"kind": "local"}, progress=False)
    with pytest.raises(InputError, match=r"submitting job 1 of 2 failed \(sbatch: error: .*Invalid qos specification\)"):
        jobs.submit(request, planning.plan(request.selection, request.executor), jobs.JobOptions(job_dir="deep/er/jobs"), lambda line: None)
    if existed:
        assert list((sweep_dir / "deep").iterdir()) == []
    else:
        assert not (sweep_dir / "deep").exists()


# --- on the real Slurm: the rest of its tests are in test_slurm.py ---------------------------------------------------


# Alone, after the parallel part (make test): it stops the one Slurm controller, which another process's jobs would
# meet DOWN, and it holds the refusal to 5 s, which the parallel part's load would stretch.
@pytest.mark.slurm
@pytest.mark.alone
@pytest.mark.usefixtures("slurm")
def test_a_stopped_slurm_controller_is_said_in_one_line_within_seconds(sweep_dir):
    subprocess.run(["scontrol", "shutdown", "slurmctld"], check=True, capture_output=True, timeout=30)
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and subprocess.run(["pgrep", "-x", "slurmctld"], capture_output=True).returncode == 0:
            time.sleep(0.2)
        started = time.monotonic()
        done = asyncbench("run", "two.yaml", "--executor", "slurm", "--job-dir", "jobs", cwd=sweep_dir, timeout=60)
        took = time.monotonic() - started
        said = _one_line_exit_2(done)
        assert "the Slurm controller cannot be reached" in said
        assert "partition" not in said
        assert took < 5, took
        assert not (sweep_dir / "jobs").exists()
    finally:
        subprocess.run(["bash", str(SLURM_SCRIPT), "start"], check=True, timeout=180, capture_output=True)
