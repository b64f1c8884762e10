"""Real signals to a real run: SIGINT → 130, SIGTERM → 143, every finished case saved as valid JSON, the worker gone."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time

import psutil
import pytest

from tests.support.helpers import INTERRUPTIBLE_ASYNCBENCH, command_line

pytestmark = pytest.mark.slow

# The first experiment ends in well under a second; the second would measure for a minute.
CONFIG = """\
defaults: {backends: [numpy], devices: [cpu], warmup: 0, min_samples: 3}
experiments:
  - name: short
    workload: sync_async
    params: {n_ops: 100}
    max_time_s: 0.2
  - name: long
    workload: sync_async
    params: {n_ops: 100}
    min_samples: 1000000
    max_samples: 1000000
    max_time_s: 60
"""


@pytest.mark.parametrize("signum, code", [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
@pytest.mark.parametrize("to_group", [False, True], ids=["to-the-run", "to-its-process-group"])
def test_a_signal_mid_run_saves_the_finished_cases_and_exits_128_plus_signal(tmp_path, signum, code, to_group):
    """`kill PID` reaches the run only; Ctrl-C in a terminal (or a CI runner's cancel) reaches its whole group, workers too."""
    config, out = tmp_path / "c.yaml", tmp_path / "r.json"
    config.write_text(CONFIG)
    run = subprocess.Popen(
        [*INTERRUPTIBLE_ASYNCBENCH, "run", str(config), "--no-progress", "-o", str(out)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,  # its own process group, so that the group can be signalled as a terminal does
    )
    deadline = time.monotonic() + 60
    while not (out.exists() and json.loads(out.read_text())["results"]) and time.monotonic() < deadline:
        time.sleep(0.1)
    time.sleep(0.3)  # into the long case
    workers = psutil.Process(run.pid).children(recursive=True)
    assert any("spawn_main" in command_line(w) for w in workers)  # the case runs in a worker process
    if to_group:
        os.killpg(run.pid, signum)
    else:
        run.send_signal(signum)
    stdout, stderr = run.communicate(timeout=60)
    assert run.returncode == code, stderr
    gone, alive = psutil.wait_procs(workers, timeout=5)
    assert not alive, f"left behind: {alive}"
    data = json.loads(out.read_text())
    assert data["interrupted"] is True
    assert [r["experiment"] for r in data["results"]] == ["short"]
    assert "Traceback" not in stderr
    assert "1 finished case(s) kept" in stderr


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM, signal.SIGKILL])
def test_a_signal_during_comm_overlap_leaves_no_worker_or_rank_behind(tmp_path, signum):
    """The run's worker runs the case and spawns its ranks. A Ctrl-C or SIGTERM to the whole group must end
    all of them; a SIGKILL to the run alone (nothing of it can clean up) must too: each child watches its parent."""
    run = subprocess.Popen(
        [
            *INTERRUPTIBLE_ASYNCBENCH,
            "run",
            "-w",
            "comm_overlap",
            "-b",
            "torch",
            "-d",
            "cpu",
            "--quick",
            "--no-progress",
            "--set",
            "max_time_s=60",
            "--set",
            "min_samples=100000",
            "--set",
            "max_samples=100000",
            "-o",
            str(tmp_path / "r.json"),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    deadline = time.monotonic() + 60
    descendants: list[psutil.Process] = []
    while time.monotonic() < deadline:  # the worker and both ranks, all spawned (multiprocessing's resource tracker is not)
        descendants = psutil.Process(run.pid).children(recursive=True)
        if sum("spawn_main" in command_line(p) for p in descendants) >= 3:
            break
        time.sleep(0.2)
    else:
        pytest.fail("the ranks never started")
    time.sleep(1.0)  # into the measurement
    if signum == signal.SIGKILL:
        run.kill()
    else:
        os.killpg(run.pid, signum)
    _, stderr = run.communicate(timeout=60)
    assert run.returncode == {signal.SIGINT: 130, signal.SIGTERM: 143, signal.SIGKILL: -9}[signum], stderr
    gone, alive = psutil.wait_procs(descendants, timeout=10)
    assert not alive, f"left behind: {[command_line(p) for p in alive]}"
    assert "Traceback" not in stderr
