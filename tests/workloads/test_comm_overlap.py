"""comm_overlap on real gloo ranks, and the launcher's faults: crash, hang, death, Ctrl-C — nothing left behind."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import psutil
import pytest

from asyncbench.measure import distributed
from asyncbench.results.model import ERROR, OK, Result
from asyncbench.workloads import comm_overlap
from tests.support.cli import INTERRUPTIBLE_PREAMBLE, invoke
from tests.support.helpers import no_children_left, run_workload

pytestmark = pytest.mark.slow


# Targets for the launcher: module-level, so the spawned ranks can import them.
def echo_rank(rank, world_size, init_method, payload):
    return (rank, world_size, init_method.startswith("tcp://127.0.0.1:"), payload)


def rank_one_raises(rank, world_size, init_method, *args):
    if rank == 1:
        raise RuntimeError("injected failure on rank 1")
    time.sleep(60)


def rank_one_hangs(rank, world_size, init_method, *args):
    if rank == 1:
        time.sleep(600)
    return "done"


def rank_one_dies(rank, world_size, init_method, *args):
    if rank == 1:
        os.kill(os.getpid(), signal.SIGKILL)
    time.sleep(60)


def sleeps_after_writing_pid(rank, world_size, init_method, directory):
    Path(directory, f"rank{rank}.pid").write_text(str(os.getpid()))
    time.sleep(600)


def port_taken_the_first_time(rank, world_size, init_method, marker):
    """As a rank whose port another process took between free_port() and the bind: the first launch only."""
    if not Path(marker).exists():
        Path(marker).write_text(init_method)
        raise RuntimeError("The server socket has failed to bind to 127.0.0.1: errno: 98 - Address already in use")
    return init_method


def test_a_port_lost_before_the_ranks_bound_it_is_replaced_by_a_new_one(tmp_path):
    marker = tmp_path / "first"
    [second] = distributed.launch(port_taken_the_first_time, 1, (str(marker),), timeout_s=60)
    assert second.startswith("tcp://127.0.0.1:")
    assert marker.read_text() != second  # a new port


def test_launch_returns_every_rank_result_in_rank_order():
    assert distributed.launch(echo_rank, 3, ("x",), timeout_s=60) == [(0, 3, True, "x"), (1, 3, True, "x"), (2, 3, True, "x")]
    assert no_children_left()


@pytest.mark.parametrize(
    "target, timeout_s, fragment",
    [
        (rank_one_raises, 60, "rank 1 failed: RuntimeError: injected failure on rank 1"),
        (rank_one_hangs, 3, "timed out after 3 s: no result from rank(s) 1"),
        (rank_one_dies, 60, "rank 1 died without a result (killed by SIGKILL; the kernel's out-of-memory killer"),
    ],
)
def test_a_failing_rank_is_named_within_the_timeout_and_no_worker_survives(target, timeout_s, fragment):
    started = time.monotonic()
    with pytest.raises(distributed.RankError, match=fragment.replace("(", r"\(").replace(")", r"\)")):
        distributed.launch(target, 2, (), timeout_s=timeout_s)
    assert time.monotonic() - started < timeout_s + 10
    assert no_children_left()


def test_ctrl_c_tears_every_rank_down(tmp_path):
    script = textwrap.dedent(
        f"""
        import sys
        sys.path.insert(0, {str(Path(__file__).resolve().parents[2])!r})
        from asyncbench.measure import distributed
        from tests.workloads.test_comm_overlap import sleeps_after_writing_pid
        distributed.launch(sleeps_after_writing_pid, 2, ({str(tmp_path)!r},), timeout_s=600)
        """
    )
    parent = subprocess.Popen([sys.executable, "-c", INTERRUPTIBLE_PREAMBLE + script], stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    while len(list(tmp_path.glob("rank*.pid"))) < 2 and time.monotonic() < deadline:
        time.sleep(0.1)
    pids = [int(p.read_text()) for p in tmp_path.glob("rank*.pid")]
    assert len(pids) == 2
    parent.send_signal(signal.SIGINT)
    _, stderr = parent.communicate(timeout=30)
    assert parent.returncode != 0
    assert "KeyboardInterrupt" in stderr
    for pid in pids:
        assert not psutil.pid_exists(pid) or psutil.Process(pid).status() == psutil.STATUS_ZOMBIE


def test_comm_overlap_measures_real_gloo_ranks_and_verifies_the_sums():
    result = run_workload("comm_overlap", "torch", "cpu")
    assert result.status == OK, result.reason
    assert set(result.variants) == {"compute_only", "comm_only", "blocking", "overlapped"}
    assert result.metrics["verified"] == 1.0
    assert result.metrics["speedup"] > 0
    assert result.metrics["allreduce_gbps"] > 0
    assert "gloo, 2 spawned ranks" in result.note
    blocking = result.variants["blocking"]
    assert len(blocking.samples.done_s) == blocking.done_s.n >= 3
    assert no_children_left()


def test_a_crashing_rank_is_an_error_row_with_its_message_and_the_run_goes_on(monkeypatch, tmp_path):
    monkeypatch.setattr(comm_overlap, "run_rank", rank_one_raises)
    out = tmp_path / "r.json"
    argv = ["run", "-w", "comm_overlap", "-w", "sync_async", "-b", "torch", "-d", "cpu", "--quick", "--no-progress", "--in-process"]
    result = invoke(*argv, "-o", str(out))
    assert result.exit_code == 3, result.output
    rows = {r["workload"]: r for r in json.loads(out.read_text())["results"]}
    assert rows["comm_overlap"]["status"] == ERROR
    assert "injected failure on rank 1" in rows["comm_overlap"]["reason"]
    assert rows["sync_async"]["status"] == OK
    assert no_children_left()


def test_a_hanging_rank_ends_the_case_at_collective_timeout_s(monkeypatch):
    monkeypatch.setattr(comm_overlap, "run_rank", rank_one_hangs)
    started = time.monotonic()
    result = run_workload("comm_overlap", "torch", "cpu", collective_timeout_s=2.0)
    assert result.status == ERROR
    assert "timed out" in result.reason
    assert "rank(s) 1" in result.reason
    assert time.monotonic() - started < 30
    assert no_children_left()


def test_comm_overlap_is_torch_only_and_nccl_needs_a_gpu_per_rank():
    assert "torch" in run_workload("comm_overlap", "numpy", "cpu").reason


def test_under_torchrun_only_comm_overlap_runs(monkeypatch):
    for name, value in (("RANK", "0"), ("WORLD_SIZE", "2"), ("MASTER_ADDR", "127.0.0.1"), ("MASTER_PORT", "29500")):
        monkeypatch.setenv(name, value)
    result = invoke("run", "-w", "matmul", "--quick")
    assert result.exit_code == 2
    assert "under torchrun only comm_overlap" in result.output


def _reading(metrics, bounds) -> str:
    result = Result("c", "c", "comm_overlap", "torch", "cpu", {}, OK, metrics=metrics, bounds=bounds, asynchronous=False)
    return comm_overlap.CommOverlap().reading(result)


def test_the_reading_says_when_the_parts_do_not_add_up():
    speedup = {"speedup": 1.3}
    assert "do not add up" in _reading({**speedup, "overlap_efficiency": 4.0}, {"speedup": (1.1, 1.5), "overlap_efficiency": (3.0, 5.0)})
    reading = _reading({**speedup, "overlap_efficiency": 0.45}, {"speedup": (1.1, 1.5), "overlap_efficiency": (0.3, 0.6)})
    assert "ran under the compute" in reading
    assert "0.45 [0.3–0.6]" in reading


def test_the_reading_claims_no_overlap_when_the_speedup_bounds_include_1():
    """A 1.1x median whose 95% interval straddles 1 is not evidence of overlap, whatever the efficiency says."""
    reading = _reading({"speedup": 1.1, "overlap_efficiency": 0.45}, {"speedup": (0.9, 1.3), "overlap_efficiency": (0.3, 0.6)})
    assert reading.startswith("no speedup shown")
    assert "1.10× [0.90–1.30]" in reading
    assert "ran under the compute" not in reading
