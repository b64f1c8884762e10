"""The pieces of a sweep that need no scheduler: executor settings, a job's config, the merged report."""

from __future__ import annotations

import dataclasses

import pytest

from asyncbench.engine import jobs, slurm
from asyncbench.errors import InputError
from asyncbench.results import merge
from asyncbench.results.model import OK, Result
from asyncbench.results.plan import ExecutorSettings
from asyncbench.spec import config, dump, executor, overrides

SWEPT = """\
name: swept
defaults: {backends: [torch, numpy], devices: [cpu, cuda], max_time_s: 2}
executor: {kind: slurm, partition: gpu, gpus_per_node: 1, time_min: "1:30:00", sbatch: {qos: high, requeue: true}}
experiments:
  - workload: sync_async
    params: {n_ops: 100}
    sweep: {dtype: [float32, float64]}
    params_for: {numpy: {n_ops: 50}}
    expect: ["speedup >= 0.5"]
  - workload: barrier
"""


def test_the_executor_is_set_by_the_config_then_set_then_the_options():
    loaded = config.loads(SWEPT)
    assert loaded.executor == ExecutorSettings(
        kind="slurm", partition="gpu", gpus_per_node=1, time_min=90, sbatch={"qos": "high", "requeue": True}
    )
    changed = overrides.apply_overrides(
        loaded, sets=["executor.partition=h100", "executor.time_min=20"], executor_options={"partition": "a100"}
    )
    assert (changed.executor.partition, changed.executor.time_min, changed.executor.kind) == ("a100", 20, "slurm")


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("executor: {kind: slurmm}", "executor.kind: expected one of here, local, slurm, got 'slurmm' (did you mean 'slurm'?)"),
        ("executor: {gpus: 1}", "unknown executor key 'gpus'"),
        ("executor: {time_min: '1:99:zz'}", "executor.time_min: expected minutes or Slurm's D-HH:MM:SS"),
        ("executor: {sbatch: {partition: x}}", "'partition' is set by asyncbench itself"),
        ("executor: [slurm]", "executor must be a mapping"),
    ],
)
def test_a_bad_executor_in_a_config_names_the_key(text, said):
    with pytest.raises(InputError, match=None) as raised:
        config.loads(f"{text}\nexperiments: [{{workload: sync_async}}]")
    assert said in str(raised.value)


def test_a_bad_executor_setting_on_the_command_line_names_the_option():
    plain = config.loads("experiments: [{workload: sync_async}]")
    with pytest.raises(InputError, match="--set 'executor.partitio=x': unknown executor key 'partitio' \\(did you mean 'partition'\\?\\)"):
        overrides.apply_overrides(plain, sets=["executor.partitio=x"])
    with pytest.raises(InputError, match="--gpus-per-node -1: expected a whole number of GPUs"):
        overrides.apply_overrides(plain, executor_options={"gpus_per_node": -1})


@pytest.mark.parametrize(("text", "minutes"), [(30, 30), ("90", 90), ("1:30:00", 90), ("2-00:00:00", 2880), ("0:30", 1), ("1-12", 2160)])
def test_slurm_time_limits_read_as_minutes(text, minutes):
    assert executor.time_minutes(text) == minutes


def test_a_jobs_config_is_the_same_plan_when_read_back():
    plan = overrides.apply_overrides(config.loads(SWEPT), sets=["max_samples=30"])
    back = config.loads(dump.dumps(plan))
    assert back.experiments == plan.experiments
    assert back.executor == ExecutorSettings()  # the job runs where it is


def test_a_quick_plans_job_runs_the_quick_sizes():
    plan = overrides.apply_overrides(config.loads(SWEPT), quick=True)
    back = config.loads(dump.dumps(plan))
    assert jobs.planned(back) == jobs.planned(plan)  # every case, with its params, as the whole plan has it
    assert [e.settings for e in back.experiments] == [e.settings for e in plan.experiments]


def test_per_case_jobs_keep_the_case_ids_of_the_whole_plan():
    plan = config.loads(SWEPT)
    whole = [c.id for c in jobs.planned(plan)]
    per_case = jobs.split(plan, "case")
    assert [c.id for _, job in per_case for c in jobs.planned(job)] == whole
    assert len(per_case) == len(whole) == 2 * 3 + 3  # torch cpu+cuda and numpy cpu, per dtype; barrier the same
    assert len({name for name, _ in per_case}) == len(per_case)
    assert [name for name, _ in jobs.split(plan, "experiment")] == ["001-sync_async", "002-barrier"]


def test_gpu_counts_are_read_from_sinfo_gres():
    assert slurm.gpus_per_node(["(null)", "gpu:4", "gpu:h100:8(S:0-1)", "gpu:a100:2,gpu:v100:1", ""]) == [0, 4, 8, 3]


def test_a_preempted_run_is_requeued_once_then_not_again():
    first = jobs.NodeRun("job.yaml", "job.json", "/tmp")
    again = first.checkpoint()
    assert again.function.requeued == 1
    assert again.function.config_path == "job.yaml"
    assert again.function.checkpoint() is None


def _row(case: str, host: str) -> Result:
    return Result(case, case, "sync_async", "torch", "cpu", {}, OK)


def _report(rows: list[Result], host: str, torch_version: str):
    from asyncbench.results.schema import Report

    environment = {"hostname": host, "python": "3.11.7", "cpu": "EPYC", "frameworks": {"torch": {"version": torch_version}}}
    return Report.new({}, environment, tuple(rows))


def test_merged_rows_name_their_machine_and_a_job_whose_software_differs_says_how():
    planned = (merge.PlannedCase("a", "a", "sync_async", "torch", "cpu", {}),)
    ends = [
        merge.JobEnd("001-a", "1", "slurm", "COMPLETED", False, None, planned, _report([_row("a", "n1")], "n1", "2.13.0")),
        merge.JobEnd("002-b", "2", "slurm", "COMPLETED", False, None, planned, _report([_row("b", "n2")], "n2", "2.13.0")),
        merge.JobEnd("003-c", "3", "slurm", "COMPLETED", False, None, planned, _report([_row("c", "n3")], "n3", "2.4.0")),
    ]
    report = merge.merge("s", {}, ends, {})
    assert [r.machine for r in report.results] == ["n1", "n2", "n3"]
    assert [r.warnings for r in report.results[:2]] == [(), ()]
    assert report.results[2].warnings == ("ran with torch 2.4.0 where most jobs had 2.13.0",)
    assert set(report.environment["machines"]) == {"n1", "n2", "n3"}
    assert report.environment["python"] == "3.11.7"  # shared facts stay at the top
    assert "hostname" not in report.environment


def test_a_failed_job_keeps_what_it_finished_and_every_other_case_is_an_error_row_with_the_state():
    planned = tuple(merge.PlannedCase(c, "e", "sync_async", "torch", "cpu", {}) for c in ("x", "y", "z"))
    partial = _report([dataclasses.replace(_row("x", "n1"), experiment="e")], "n1", "2.13.0")
    end = merge.JobEnd("001-e", "7", "slurm", "TIMEOUT", True, "exit code 0:15", planned, partial)
    rows = merge.merge("s", {}, [end], {}).results
    assert [(r.id, r.status.value) for r in rows] == [("x", "ok"), ("y", "error"), ("z", "error")]
    assert rows[1].reason == "Slurm job 7 ended TIMEOUT (exit code 0:15) before this case finished"
    nothing = merge.JobEnd("002-e", "8", "slurm", "CANCELLED by 0", True, None, planned, None)
    assert [r.status.value for r in merge.merge("s", {}, [nothing], {}).results] == ["error"] * 3


def test_job_progress_is_live_on_a_terminal_and_a_line_per_change_elsewhere():
    import io

    from rich.console import Console

    from asyncbench.report.jobs import JobsDisplay

    said: list[str] = []
    with JobsDisplay(3, True, Console(file=io.StringIO(), force_terminal=False), said.append) as plain:
        for counts in ({"queued": 3}, {"queued": 3}, {"running": 2, "done": 1}):
            plain.update(counts)
    assert said == ["jobs: 3 queued · 0 running · 0 done · 0 failed", "jobs: 0 queued · 2 running · 1 done · 0 failed"]
    screen = io.StringIO()
    with JobsDisplay(3, True, Console(file=screen, force_terminal=True, width=100), said.append) as live:
        live.update({"running": 1, "done": 1, "failed": 1})
    assert len(said) == 2  # on a terminal nothing goes to the log
    assert "2/3" in screen.getvalue()
    with JobsDisplay(3, False, Console(file=io.StringIO(), force_terminal=False), said.append) as quiet:
        quiet.update({"done": 3})
    assert len(said) == 2
