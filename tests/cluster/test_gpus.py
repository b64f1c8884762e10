"""GPUs in a sweep: each job sees the GPUs its scheduler gives it, and a plan is refused before anything is
submitted where its GPU cases would be given none, or a GPU past those a job has.

submitit's local executor (1.5.4, submitit/local/local.py: `start_controller`) sets every job's
CUDA_VISIBLE_DEVICES to `0..gpus_per_node-1`, so "" by default (no GPU) and, with N > 0, the same GPUs to every
job at once. The model below does the same, and reads the environment the job's `asyncbench run` is started with.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from asyncbench.engine import cluster, jobs, slurm
from asyncbench.errors import InputError
from asyncbench.host import cuda_ids
from asyncbench.results.plan import ExecutorSettings
from asyncbench.spec import config
from tests.support.cli import asyncbench

pytest.importorskip("submitit")

PLAN = """\
name: gpus
defaults: {max_time_s: 0.3, min_samples: 6}
experiments:
  - {workload: sync_async, backends: [torch], devices: [cuda], params: {n_ops: 20}}
  - {workload: barrier, backends: [numpy], devices: [cpu], params: {size: 64}}
  - {workload: matmul, backends: [torch], devices: [cuda:1], params: {size: 64}}
"""


class ModelLocalExecutor:
    """submitit's LocalExecutor as it places GPUs: the controller of each job gets CUDA_VISIBLE_DEVICES set to
    `0..gpus_per_node-1` (visible_gpus left empty), and the job's function runs under it (here, at once)."""

    def __init__(self) -> None:
        self.parameters: dict = {}
        self.started: list[dict] = []  # per job: what its `asyncbench run` was started with

    def update_parameters(self, **parameters) -> None:
        self.parameters.update(parameters)

    def submit(self, run):
        gpus = ",".join(str(k) for k in range(self.parameters.get("gpus_per_node", 0)))
        controller = {**os.environ, "CUDA_VISIBLE_DEVICES": gpus}
        seen: dict = {}

        def started(command, *args, env=None, **kwargs):
            seen["env"] = dict(controller if env is None else env)
            seen["timeout_min"] = self.parameters["timeout_min"]
            return _Done()

        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(os, "environ", controller)
            patch.setattr(subprocess, "run", started)
            patch.setattr(subprocess, "Popen", started)
            run()
        self.started.append(seen)
        return _Job(len(self.started))


class _Done:
    returncode = 0

    def wait(self, timeout=None):
        return 0


class _Job:
    def __init__(self, number: int) -> None:
        self.job_id = str(number)


def _runs(plan_text: str, folder: Path) -> list[jobs.NodeRun]:
    """The sweep's runs as session.jobs makes them (`uses_gpu` where the build has it)."""
    plan = config.loads(plan_text)
    runs = []
    for name, job_plan in jobs.split(plan, "experiment"):
        run = jobs.NodeRun(str(folder / f"{name}.yaml"), str(folder / f"{name}.json"), str(folder))
        run.uses_gpu = any(c.device.startswith("cuda") for c in jobs.planned(job_plan))
        runs.append(run)
    return runs


def _driver_lists(monkeypatch, count: int | None) -> None:
    """CUDA's driver, asked for this process's GPUs, lists `count` (None: no driver answered)."""
    listed = None if count is None else tuple(cuda_ids.Identity(f"GPU-{k}", None) for k in range(count))
    monkeypatch.setattr(cuda_ids, "driver_identities", lambda: listed)


def _submitted(tmp_path: Path, monkeypatch, gpus_per_node: int, visible: str | None) -> list[dict]:
    if visible is None:
        monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)
        _driver_lists(monkeypatch, gpus_per_node)
    else:
        monkeypatch.setenv("CUDA_VISIBLE_DEVICES", visible)
    model = ModelLocalExecutor()
    scheduler = cluster.LocalScheduler(tmp_path, ExecutorSettings(kind="local", gpus_per_node=gpus_per_node, time_min=10))
    monkeypatch.setattr(scheduler, "executor", lambda: (model.update_parameters(timeout_min=10, gpus_per_node=gpus_per_node), model)[1])
    scheduler.submit(_runs(PLAN, tmp_path), [])
    return model.started


def test_a_local_gpu_job_sees_the_first_gpus_this_process_sees_and_a_cpu_job_none(tmp_path, monkeypatch):
    started = _submitted(tmp_path, monkeypatch, gpus_per_node=2, visible="GPU-aaaa,GPU-bbbb,GPU-cccc")
    seen = [s["env"]["CUDA_VISIBLE_DEVICES"] for s in started]
    # cuda:0 and cuda:1 in the job are this process's cuda:0 and cuda:1 (what the user named); the CPU job sees none
    assert seen == ["GPU-aaaa,GPU-bbbb", "", "GPU-aaaa,GPU-bbbb"]


def test_without_a_cuda_visible_devices_a_local_gpu_job_sees_the_drivers_first_gpus(tmp_path, monkeypatch):
    started = _submitted(tmp_path, monkeypatch, gpus_per_node=2, visible=None)
    assert [s["env"]["CUDA_VISIBLE_DEVICES"] for s in started] == ["0,1", "", "0,1"]


def test_a_local_gpu_jobs_limit_covers_waiting_for_the_other_gpu_jobs(tmp_path, monkeypatch):
    started = _submitted(tmp_path, monkeypatch, gpus_per_node=2, visible="0,1")
    assert [s["timeout_min"] for s in started] == [20, 10, 20]  # two GPU jobs, one at a time: each may wait 10 min


def test_local_gpu_jobs_run_one_at_a_time_each_holding_the_sweeps_lock(tmp_path, monkeypatch):
    """Two GPU jobs started together: the second's run starts after the first's ended (a CPU job would not wait)."""
    log = tmp_path / "log"
    record = f"import time,sys; open({str(log)!r},'a').write(f'{{sys.argv[1]}} start {{time.time()}}\\n'); time.sleep(0.6); " + (
        f"open({str(log)!r},'a').write(f'{{sys.argv[1]}} end {{time.time()}}\\n')"
    )
    lock = str(tmp_path / cluster.GPU_LOCK)
    runs = [jobs.NodeRun("a.yaml", str(tmp_path / f"{n}.json"), str(tmp_path)).placed("0", lock, 60.0) for n in ("a", "b")]
    for name, run in zip("ab", runs, strict=True):
        monkeypatch.setattr(run, "command", lambda name=name: [sys.executable, "-c", record, name])
    threads = [threading.Thread(target=run) for run in runs]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    said = [line.split() for line in log.read_text().splitlines()]
    assert [kind for _, kind, _ in said] == ["start", "end", "start", "end"]
    assert said[0][0] == said[1][0] != said[2][0] == said[3][0]


def test_a_local_gpu_jobs_run_past_its_limit_is_stopped(tmp_path, monkeypatch):
    run = jobs.NodeRun("a.yaml", str(tmp_path / "a.json"), str(tmp_path)).placed("0", str(tmp_path / "lock"), 0.5)
    monkeypatch.setattr(run, "command", lambda: [sys.executable, "-c", "import time; time.sleep(60)"])
    started = time.monotonic()
    assert run() == jobs.LIMIT_CODE
    assert time.monotonic() - started < 20


def test_a_gpu_job_cancelled_while_it_waits_for_the_gpus_ends_without_running(tmp_path):
    """submitit's task lets SIGTERM pass (JobEnvironment: `bypass`), as this model of it does: a cancel that came
    while the job waited for the lock must still end it, not leave it to run once the GPUs are free."""
    import fcntl
    import signal

    lock, ran = tmp_path / cluster.GPU_LOCK, tmp_path / "ran"
    script = tmp_path / "task.py"
    script.write_text(
        "import signal, sys\n"
        "from asyncbench.engine import jobs\n"
        "signal.signal(signal.SIGTERM, lambda *_: None)  # submitit's bypass\n"
        f"run = jobs.NodeRun('a.yaml', {str(tmp_path / 'a.json')!r}, {str(tmp_path)!r}).placed('0', {str(lock)!r}, 60.0)\n"
        f"run.command = lambda: [sys.executable, '-c', 'open(sys.argv[1], \"w\")', {str(ran)!r}]\n"
        "print('waiting', flush=True)\n"
        "sys.exit(run())\n"
    )
    with open(lock, "a+b") as held:
        fcntl.flock(held, fcntl.LOCK_EX)  # another GPU job runs
        process = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE, text=True)
        try:
            assert process.stdout.readline().strip() == "waiting"
            time.sleep(0.5)  # in flock by now
            process.send_signal(signal.SIGTERM)
            assert process.wait(timeout=20) == 143
        finally:
            process.kill()
            process.wait()
    assert not ran.exists()


def test_a_job_stopped_at_its_limit_is_failed_with_that_reason(tmp_path):
    """What gather says of it: the cases it finished kept, the rest error rows saying it reached its limit."""
    from asyncbench.engine.cluster import JobState
    from asyncbench.session import following
    from asyncbench.spec.manifest import SubmittedJob

    class Stopped:  # a scheduler whose job ended with NodeRun's code for a run stopped at its limit
        kind = "local"

        def outcome(self, job_id):
            return True, jobs.LIMIT_CODE

        def stderr_tail(self, job_id):
            return None

    entry = SubmittedJob("001-a", "1", tmp_path / "a.yaml", tmp_path / "a.json", ())
    end = following._end(Stopped(), entry, JobState("done", "FINISHED"), lambda line: None)
    assert end.failed
    assert end.reason == "its run reached the job's time limit and was stopped"


@pytest.mark.parametrize(
    ("code", "state", "reason"),
    [
        (143, "INTERRUPTED", "its run was interrupted (exit 143)"),
        (130, "INTERRUPTED", "its run was interrupted (exit 130)"),
        (jobs.LIMIT_CODE, "TIMEOUT", "its run reached the job's time limit and was stopped"),
    ],
)
def test_a_local_job_cancelled_or_stopped_is_not_said_to_have_finished(tmp_path, code, state, reason):
    """Ctrl-C of a local sweep cancels its jobs (SIGTERM, exit 143): gather's error rows said the job "ended
    FINISHED (its run was interrupted (exit 143))"; the local job's state names how it ended."""
    from asyncbench.results import merge
    from asyncbench.session import following
    from asyncbench.spec.manifest import SubmittedJob

    results = tmp_path / "001-a.json"
    jobs.write_outcome(results, code)
    scheduler = cluster.LocalScheduler(tmp_path, ExecutorSettings(kind="local", time_min=10), {"999999999": results})
    said = scheduler.states(["999999999"])["999999999"]
    assert (said.phase, said.state, said.reason) == ("failed", state, reason)
    entry = SubmittedJob("001-a", "999999999", tmp_path / "a.yaml", results, ())
    end = following._end(scheduler, entry, said, lambda line: None)
    assert end.failed
    assert merge._why(end) == f"local job 999999999 ended {state} ({reason}) before this case finished"
    jobs.write_outcome(results, 0)
    assert scheduler.states(["999999999"])["999999999"] == cluster.JobState("done", "FINISHED")


# --- the plan checked against the executor settings ----------------------------------------------------------


def _use(text: str) -> jobs.GpuUse:
    return jobs.gpus_named(config.loads(text))


def _plan(backend: str, device: str, workload: str = "sync_async", params: str = "{}") -> str:
    return f"name: p\nexperiments:\n  - {{workload: {workload}, backends: [{backend}], devices: [{device}], params: {params}}}\n"


GIVEN = {"gpus_per_node": "--gpus-per-node", "sbatch": "--sbatch"}


@pytest.mark.parametrize(
    ("plan", "settings", "said"),
    [
        (_plan("torch", "cuda"), ExecutorSettings(kind="slurm"), "1 case(s) run on a GPU (sync_async[torch,cuda]), but --executor slurm"),
        (
            _plan("torch", "cuda:0"),
            ExecutorSettings(kind="local"),
            "--executor local gives its jobs no GPU: ask for them with --gpus-per-node N",
        ),
        (_plan("torch", "cuda:2"), ExecutorSettings(kind="slurm", gpus_per_node=2), "names cuda:2, but --executor slurm gives each job 2"),
        (_plan("torch", "cuda:1"), ExecutorSettings(kind="slurm", sbatch={"gres": "gpu:h100:1"}), "1 GPU(s) (as --sbatch asks)"),
        # a partner names a GPU too: multi_device's cuda:1 beside the case's cuda:0
        (_plan("torch", "cuda", "multi_device", "{partner: 'cuda:1'}"), ExecutorSettings(kind="local", gpus_per_node=1), "names cuda:1"),
    ],
)
def test_gpu_cases_without_the_gpus_they_name_are_bad_input(plan, settings, said):
    with pytest.raises(InputError, match=None) as raised:
        jobs.check_gpus(_use(plan), settings, GIVEN)
    assert said in raised.value.message
    assert "\n" not in raised.value.message


@pytest.mark.parametrize(
    ("plan", "settings"),
    [
        (_plan("torch", "cuda:1"), ExecutorSettings(kind="slurm", gpus_per_node=2)),
        (_plan("torch", "cuda"), ExecutorSettings(kind="slurm", sbatch={"gres": "gpu:1"})),
        (_plan("torch", "cuda"), ExecutorSettings(kind="slurm", sbatch={"gpus": "a100:1"})),
        (_plan("torch", "cuda"), ExecutorSettings(kind="local", gpus_per_node=1)),
        (_plan("torch", "auto"), ExecutorSettings(kind="slurm")),  # a default (auto) plan runs on what a job has
        (_plan("numpy", "cpu"), ExecutorSettings(kind="local", gpus_per_node=1)),
    ],
)
def test_gpu_cases_given_their_gpus_and_cpu_plans_are_accepted_silently(plan, settings):
    assert jobs.check_gpus(_use(plan), settings, GIVEN) is None


def test_gpus_asked_of_slurm_for_cpu_cases_only_is_a_warning():
    said = jobs.check_gpus(_use(_plan("numpy", "cpu")), ExecutorSettings(kind="slurm", gpus_per_node=1), GIVEN)
    assert said is not None
    assert said.startswith("asyncbench: warning:")
    assert "no case runs on" in said
    # a torch case on auto uses the job's GPUs: no warning
    assert jobs.check_gpus(_use(_plan("torch", "auto")), ExecutorSettings(kind="slurm", gpus_per_node=1), GIVEN) is None


@pytest.mark.parametrize(
    ("sbatch", "count"),
    [({}, 0), ({"gres": "gpu:2"}, 2), ({"gres": "gpu:h100:4"}, 4), ({"gres": "gpu"}, 1), ({"gpus": "h100:3"}, 3),
     ({"gpus-per-task": "2"}, 2), ({"gpus-per-socket": "1"}, None), ({"gres": "nvme:1"}, 0), ({"qos": "high"}, 0)],
)  # fmt: skip
def test_the_gpus_a_slurm_job_asks_for_are_read_from_the_settings(sbatch, count):
    assert slurm.asked_gpus(ExecutorSettings(kind="slurm", sbatch=sbatch)) == count


@pytest.mark.parametrize(
    ("count", "visible", "given"),
    [(0, None, ""), (0, "", ""), (2, None, "0,1"), (1, "3,1", "3"), (2, " GPU-a , GPU-b,GPU-c", "GPU-a,GPU-b")],
)
def test_a_local_job_is_given_the_first_gpus_this_process_sees(count, visible, given, monkeypatch):
    _driver_lists(monkeypatch, 4)  # without CUDA_VISIBLE_DEVICES: the driver's first GPUs
    assert cluster.local_gpus(count, {} if visible is None else {"CUDA_VISIBLE_DEVICES": visible}) == given


def test_more_local_gpus_than_this_process_sees_is_bad_input():
    with pytest.raises(InputError, match=r"--gpus-per-node 2: this process sees 1 GPU\(s\) \(CUDA_VISIBLE_DEVICES='5'\)"):
        cluster.local_gpus(2, {"CUDA_VISIBLE_DEVICES": "5"})


@pytest.mark.parametrize(("listed", "why"), [(None, "no CUDA driver answered"), (0, "CUDA's driver lists 0"), (1, "CUDA's driver lists 1")])
def test_more_local_gpus_than_the_driver_lists_is_bad_input(listed, why, monkeypatch):
    """Without a CUDA_VISIBLE_DEVICES, the GPUs this process sees are those CUDA's driver lists (none on a machine
    without one): a local job given more would run its GPU cases on none, or on GPUs that are not there."""
    _driver_lists(monkeypatch, listed)
    with pytest.raises(InputError, match=rf"--gpus-per-node 2: this process sees {listed or 0} GPU\(s\) \({why}\)"):
        cluster.local_gpus(2, {})


# --- end to end, through submitit's own local executor ----------------------------------------------------------


def test_a_local_gpu_plan_without_gpus_is_one_line_and_exit_2_before_anything_is_submitted(tmp_path):
    (tmp_path / "gpus.yaml").write_text(PLAN)
    done = asyncbench("run", "gpus.yaml", "--executor", "local", "--job-dir", "jobs", cwd=tmp_path)
    assert done.returncode == 2, done.stderr
    assert done.stderr.strip().splitlines() == [
        "asyncbench: error: 2 case(s) run on a GPU (sync_async[torch,cuda,n_ops=20], ...), but --executor local gives its jobs "
        "no GPU: ask for them with --gpus-per-node N"
    ]
    assert not (tmp_path / "jobs").exists()


def test_local_gpus_past_those_this_process_sees_are_one_line_and_exit_2_before_anything_is_submitted(tmp_path):
    """A CPU plan given more --gpus-per-node than any machine here has (no CUDA_VISIBLE_DEVICES: the driver's count)
    is refused as the clusters guide says, not run with GPUs that are not there."""
    (tmp_path / "small.yaml").write_text("name: small\nexperiments:\n  - {workload: barrier, backends: [numpy], devices: [cpu]}\n")
    done = asyncbench(
        "run", "small.yaml", "--executor", "local", "--gpus-per-node", "64", "--job-dir", "jobs", cwd=tmp_path,
        unset=("CUDA_VISIBLE_DEVICES",),
    )  # fmt: skip
    assert done.returncode == 2, done.stderr
    [line] = done.stderr.strip().splitlines()
    assert line.startswith("asyncbench: error: --gpus-per-node 64: this process sees "), line
    assert line.endswith("and a local job is given GPUs it sees"), line
    assert not (tmp_path / "jobs").exists()


def test_each_local_job_records_the_gpus_it_was_given(tmp_path):
    """A sweep with --gpus-per-node 1 where this process sees GPUs 7 and 3: the GPU jobs ran with GPU 7 (their
    cuda:0 is this process's), the CPU job with none, as each job's own results file records it."""
    (tmp_path / "gpus.yaml").write_text(PLAN.replace("cuda:1", "cuda:0"))
    done = asyncbench(
        "run", "gpus.yaml", "--executor", "local", "--gpus-per-node", "1", "--job-dir", "jobs", "-o", "all.json", cwd=tmp_path,
        env={"CUDA_VISIBLE_DEVICES": "7,3"},
    )  # fmt: skip
    assert done.returncode in (0, 1, 3), done.stderr  # no GPU here: the torch cases are skipped (not present)
    # one GPU job at a time: the other is shown queued while it waits for the GPUs
    assert any(line.startswith("jobs: 1 queued · ") for line in done.stderr.splitlines()), done.stderr
    seen = []
    for job in json.loads((tmp_path / "jobs" / "sweep.json").read_text())["jobs"]:
        environment = json.loads(Path(job["results"]).read_text())["environment"]
        seen.append(environment["thread_variables"].get("CUDA_VISIBLE_DEVICES"))
    assert seen == ["7", "", "7"]
    rows = json.loads((tmp_path / "all.json").read_text())["results"]
    assert not any("CUDA_VISIBLE_DEVICES" in warning for row in rows for warning in row["warnings"])  # hardware, not software


def test_the_gpus_jobs_were_given_are_no_software_difference():
    from asyncbench.results import merge

    environments = {
        name: {"python": "3.11", "thread_variables": {"CUDA_VISIBLE_DEVICES": gpus}} for name, gpus in (("a", "0"), ("b", "1"), ("c", ""))
    }
    assert merge.differences(environments) == {}
    environments["c"]["thread_variables"]["OMP_NUM_THREADS"] = "1"
    assert merge.differences(environments) == {"c": ["thread_variables {'OMP_NUM_THREADS': '1'} where most jobs had {}"]}


def test_a_framework_a_job_did_not_use_is_no_software_difference():
    """A torch-only job records no numpy version: `ran with numpy None where most jobs had 2.4.6` was a false
    warning. The merged machine's frameworks are every framework its jobs recorded."""
    from asyncbench.results import merge
    from asyncbench.results.schema import Report

    both = {"torch": {"version": "2.13.0"}, "numpy": {"version": "2.4.6"}}
    environments = {
        "001-sa": {"python": "3.11", "hostname": "vm", "frameworks": both},
        "002-mm": {"python": "3.11", "hostname": "vm", "frameworks": both},
        "003-mine": {"python": "3.11", "hostname": "vm", "frameworks": {"torch": {"version": "2.13.0"}}},
    }
    assert merge.differences(environments) == {}
    environments["003-mine"]["frameworks"] = {"torch": {"version": "2.4.0"}}
    assert merge.differences(environments) == {"003-mine": ["torch 2.4.0 where most jobs had 2.13.0"]}
    environments["003-mine"]["frameworks"] = {"torch": {"version": "2.13.0"}}
    ends = [
        merge.JobEnd(name, "1", "local", "FINISHED", False, None, (), Report.new({"name": "p"}, env, ()))
        for name, env in reversed(environments.items())
    ]
    merged = merge.merge("p", {"name": "p"}, ends, {})
    assert set(merged.environment["machines"]["vm"]["frameworks"]) == {"torch", "numpy"}
