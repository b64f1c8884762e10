"""Fixes of the GPU code paths that can be shown without a GPU (the rest: tests/test_streams.py),
and the sanity checks every result gets."""

from __future__ import annotations

import dataclasses
import json
import subprocess
from typing import Any

import pytest

from asyncbench.backends import cuda_devices
from asyncbench.backends.torch_backend import TorchBackend
from asyncbench.engine import environment, sanity
from asyncbench.engine.runner import summarize
from asyncbench.host import facts
from asyncbench.results.model import OK, Result, Samples
from asyncbench.results.schema import Report
from asyncbench.workloads import BUILT_IN
from asyncbench.workloads.comm_overlap import overlapped_step
from asyncbench.workloads.copy_overlap import CopyOverlap
from tests.support.cli import invoke


def test_copy_overlap_verifies_bfloat16_inside_torch():
    """`.numpy()` of a bfloat16 tensor raises; the comparison is made with torch.equal instead."""
    prepared = CopyOverlap().setup(TorchBackend(), "cpu", {"size": 16, "n_matrices": 2, "dtype": "bfloat16"})
    prepared.variants["overlapped"]()
    assert prepared.verify() is None


def test_copy_overlap_verify_reports_a_wrong_bfloat16_copy(monkeypatch):
    backend = TorchBackend()
    prepared = CopyOverlap().setup(backend, "cpu", {"size": 16, "n_matrices": 2, "dtype": "bfloat16"})
    monkeypatch.setattr(backend, "copy_to_host", lambda source, destination, non_blocking: destination.fill_(7))
    assert "2 of 2 copied results differ" in prepared.verify()


class _Work:
    def __init__(self, log: list[str], index: int):
        self.log, self.index = log, index

    def wait(self) -> None:
        self.log.append(f"wait {self.index}")


@pytest.mark.parametrize("on_gpu", [True, False])
def test_overlapped_all_reduces_are_waited_for_on_the_device_only_with_nccl(on_gpu):
    """On NCCL, wait() makes the current stream wait for the all-reduce stream, so the end event follows the
    communication; on gloo it would block the host, so it is left to the sync."""
    log: list[str] = []
    pending: list[Any] = []

    def all_reduce(grad: int, async_op: bool) -> _Work:
        assert async_op
        log.append(f"all_reduce {grad}")
        return _Work(log, grad)

    overlapped_step([0, 1], lambda grad: log.append(f"compute {grad}"), all_reduce, pending, on_gpu)
    issued = ["compute 0", "all_reduce 0", "compute 1", "all_reduce 1"]
    assert log == issued + (["wait 0", "wait 1"] if on_gpu else [])
    assert len(pending) == 2  # the sync still waits for every work


def test_the_parent_asks_a_child_process_for_cuda_devices(monkeypatch):
    """Reading device properties through torch here would create a CUDA context in the parent."""
    import torch

    monkeypatch.setattr(torch.version, "cuda", "12.4")
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "is_initialized", lambda: False)
    monkeypatch.setattr(cuda_devices.processes, "in_worker", False)

    def here() -> list[dict]:
        raise AssertionError("queried torch in the parent")

    answer = [{"name": "Test GPU", "memory_bytes": 80 * 2**30, "capability": "9.0"}]
    asked: list[list[str]] = []

    def run(command: list[str], **kwargs: Any) -> subprocess.CompletedProcess:
        asked.append(command)
        return subprocess.CompletedProcess(command, 0, stdout=json.dumps(answer) + "\n", stderr="")

    monkeypatch.setattr(cuda_devices, "_ask_here", here)
    monkeypatch.setattr(cuda_devices.subprocess, "run", run)
    cuda_devices.listing.cache_clear()
    try:
        assert cuda_devices.cuda_devices() == (cuda_devices.CudaDevice("Test GPU", 80 * 2**30, "9.0"),)
        assert len(asked) == 1
        statuses = TorchBackend().probe()
        assert [(s.device, s.detail) for s in statuses if s.available and s.device != "cpu"] == [("cuda:0", "Test GPU")]
        assert len(asked) == 1  # asked once per process
    finally:
        cuda_devices.listing.cache_clear()


def test_variables_that_make_gpu_work_synchronous_are_recorded(monkeypatch):
    monkeypatch.setenv("CUDA_LAUNCH_BLOCKING", "1")
    monkeypatch.setenv("TORCH_NCCL_BLOCKING_WAIT", "0")
    assert facts.synchronizing_variables() == {"CUDA_LAUNCH_BLOCKING": "1"}
    assert environment.capture(["numpy"])["synchronizing_variables"] == {"CUDA_LAUNCH_BLOCKING": "1"}


# --- sanity checks ------------------------------------------------------------------------------------------------


def _result(device: str = "cuda:0", workload: str = "matmul", metrics: dict | None = None, **clocks: tuple[float, ...]) -> Result:
    samples = Samples(
        issue_s=clocks.get("issue_s", (0.001,) * 6), done_s=clocks.get("done_s", (0.010,) * 6), device_s=clocks.get("device_s")
    )
    return Result(
        id=f"t[torch,{device}]",
        experiment="t",
        workload=workload,
        backend="torch",
        device=device,
        params={},
        status=OK,
        variants=summarize({"run": samples}),
        metrics=metrics or {},
    )


def _warnings(result: Result, synchronizing: dict | None = None) -> tuple[str, ...]:
    return sanity.warnings_of(result, BUILT_IN[result.workload], synchronizing or {})


def test_a_sound_result_has_no_warnings():
    assert _warnings(_result(device_s=(0.009,) * 6)) == ()
    assert _warnings(_result(device="cpu")) == ()


def test_device_time_beyond_done_time_is_a_warning():
    (warning,) = _warnings(_result(device_s=(0.009,) * 5 + (0.020,)))
    assert "device time exceeds done time in 1 of 6 samples" in warning
    assert "wrong stream" in warning
    # within the tolerance for the gap between the start event and the host clock: no warning
    assert _warnings(_result(device_s=(0.0104,) * 6)) == ()


def test_issue_time_beyond_done_time_is_a_warning():
    (warning,) = _warnings(_result(issue_s=(0.02,) * 6))
    assert "issue time exceeds done time in 6 of 6 samples" in warning


def test_device_time_on_a_cpu_is_a_warning():
    (warning,) = _warnings(_result(device="cpu", device_s=(0.009,) * 6))
    assert "device time on a CPU" in warning


def test_a_verifying_workload_without_a_passed_verification_is_a_warning():
    assert "no verification passed" in _warnings(_result(workload="copy_overlap"))[0]
    assert _warnings(_result(workload="copy_overlap", metrics={"verified": 1.0})) == ()


def test_cuda_launch_blocking_is_a_warning_on_gpu_rows_only():
    (warning,) = _warnings(_result(), {"CUDA_LAUNCH_BLOCKING": "1"})
    assert "CUDA_LAUNCH_BLOCKING=1 is set" in warning
    assert _warnings(_result(device="cpu"), {"CUDA_LAUNCH_BLOCKING": "1"}) == ()


def test_warnings_survive_the_results_file(tmp_path):
    result = dataclasses.replace(_result(), warnings=("run: device time exceeds done time in 1 of 6 samples",))
    report = Report.new({}, {}, (result,))
    path = tmp_path / "r.json"
    report.save(path)
    assert Report.load(path).results[0].warnings == result.warnings


@pytest.mark.parametrize("fmt", ["terminal", "markdown"])
def test_show_puts_a_warning_under_its_row(tmp_path, fmt):
    result = dataclasses.replace(_result(), warnings=("run: device time exceeds done time in 1 of 6 samples: events on the wrong stream?",))
    path = tmp_path / "r.json"
    Report.new({}, {}, (result,)).save(path)
    args = ["show", str(path)] + ([] if fmt == "terminal" else ["--format", "markdown"])
    shown = invoke(*args)
    assert "⚠" in shown.output
    assert "events on the wrong stream?" in shown.output


def test_gpu_check_without_cuda_says_so_in_one_line_and_runs_nothing(tmp_path):
    import pathlib
    import sys

    script = pathlib.Path(__file__).resolve().parents[2] / "benchmarks" / "gpu_check.py"
    done = subprocess.run([sys.executable, str(script), "--out", str(tmp_path)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.count("\n") == 1
    assert "no CUDA here" in done.stdout
    assert "nothing run" in done.stdout
    assert list(tmp_path.iterdir()) == []
