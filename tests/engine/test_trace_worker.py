"""A traced case leaves its worker to no other case, whatever became of its trace files."""

from __future__ import annotations

import os
from typing import Any, Mapping

from asyncbench.engine import runner
from asyncbench.results.model import OK, Settings
from asyncbench.spec import config
from asyncbench.workloads.base import Metric, Prepared, Workload

FAST = Settings(warmup=0, min_samples=2, max_samples=2, max_time_s=1.0)


class WhichProcess(Workload):
    """Measures nothing worth keeping; says which process ran it."""

    name = "which_process"
    summary = "the pid of the process that ran the case"
    variants = ("run",)
    metrics = (Metric("pid", "", "the process that ran the case"),)

    def setup(self, backend: Any, device: str, params: Mapping[str, Any]) -> Prepared:
        return Prepared(variants={"run": lambda: None}, sync=lambda: None)

    def run_metrics(self, params: Mapping[str, Any], variants: Any) -> dict[str, float | None]:
        return {"pid": float(os.getpid())}


def test_a_traced_case_whose_trace_files_all_failed_to_write_still_hands_the_next_case_a_fresh_worker():
    """The profiler stays attached whether or not its file could be written (a full disk): before, the worker was
    closed only when a trace file existed, so the next case was measured beside the profiler."""
    experiments = tuple(
        config.Experiment(name=name, workload="which_process", backends=("numpy",), devices=("cpu",), params={}, settings=FAST)
        for name in ("first", "second")
    )
    unwritable = os.devnull + "/traces"  # below a file: every write fails (NotADirectoryError)
    first, second = runner.run(
        config.Config("c", "<t>", experiments),
        runner.RunOptions(isolate=True, trace_dir=unwritable),
        workloads={"which_process": WhichProcess()},
    )
    assert (first.status, second.status) == (OK, OK)
    assert first.traces == {}
    assert any("could not be written" in warning for warning in first.warnings)
    assert first.metrics["pid"] != second.metrics["pid"]
