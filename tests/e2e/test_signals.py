"""Real signals to a real run: SIGINT → 130, SIGTERM → 143, every finished case saved as valid JSON, the worker gone."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time

import psutil
import pytest

from tests.support.cli import INTERRUPTIBLE_ASYNCBENCH
from tests.support.helpers import command_line

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
    wait_for_journaled_cases(out, 1)
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
    assert not (tmp_path / "r.json.journal").exists()  # the results file holds them: the journal has done its work


def _is_case(line: str) -> bool:
    try:
        return "id" in json.loads(line)
    except ValueError:
        return False


def wait_for_journaled_cases(out, count: int) -> None:
    """Until the run writing `out` has `count` finished cases in its journal (or a minute passed)."""
    journal = out.parent / f"{out.name}.journal"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        # the header, the workloads' metric declarations, then a line per case: count the cases' own lines (complete
        # ones: a line still being written does not parse)
        if journal.exists() and sum(1 for line in journal.read_text().splitlines() if _is_case(line)) >= count:
            return
        time.sleep(0.05)
    raise AssertionError(f"no {count} case(s) in {journal} after a minute")


def test_a_run_killed_with_sigkill_leaves_every_finished_case_readable_by_show_and_compare(tmp_path):
    """Nothing of the run can clean up after SIGKILL: its journal is what is left, and show and compare read it."""
    config, out = tmp_path / "c.yaml", tmp_path / "r.json"
    config.write_text(CONFIG.replace("name: short", "name: short\n    sweep: {n_ops: [10, 20, 30]}"))
    run = subprocess.Popen([*INTERRUPTIBLE_ASYNCBENCH, "run", str(config), "--no-progress", "-o", str(out)], start_new_session=True)
    wait_for_journaled_cases(out, 3)
    time.sleep(0.3)  # into the long case
    workers = psutil.Process(run.pid).children(recursive=True)
    run.kill()
    run.wait(timeout=30)
    psutil.wait_procs(workers, timeout=10)  # each watches its parent and goes
    assert not out.exists()
    shown = subprocess.run([*INTERRUPTIBLE_ASYNCBENCH, "show", str(out), "--format", "json"], capture_output=True, text=True, timeout=60)
    assert shown.returncode == 0, shown.stderr
    data = json.loads(shown.stdout)
    assert [r["id"] for r in data["results"]] == [f"short[numpy,cpu,n_ops={n}]" for n in (10, 20, 30)]
    assert data["interrupted"] is True
    assert data["metric_info"]["sync_async"]["speedup"]["unit"] == "x"  # declared once in the journal, then for each case
    assert "has not ended" in shown.stderr
    assert "3 finished case(s) read from its journal" in shown.stderr
    # the journal's cases are short: rows too short for an interval are INCONCLUSIVE, which fails unless allowed
    compared = subprocess.run(
        [*INTERRUPTIBLE_ASYNCBENCH, "compare", str(out), str(out), "--allow-inconclusive"], capture_output=True, text=True, timeout=60
    )
    assert compared.returncode == 0, compared.stderr
    assert "over 6 row(s)" in compared.stdout  # 3 cases, each with its sync and async variants, compared
    assert "SLOWER" not in compared.stdout
    again = subprocess.run([*INTERRUPTIBLE_ASYNCBENCH, "run", str(config), "-o", str(out)], capture_output=True, text=True, timeout=60)
    assert again.returncode == 2  # the journal is the only copy of those cases: a new run must not overwrite it
    assert "holds 3 finished case(s) of a run started" in again.stderr


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


def _still_running(processes: list[psutil.Process], timeout_s: float) -> list[psutil.Process]:
    """Those of `processes` still running after up to timeout_s (an exited one waiting to be reaped has ended)."""
    deadline = time.monotonic() + timeout_s
    while True:
        left = []
        for process in processes:
            try:
                if process.status() != psutil.STATUS_ZOMBIE:
                    left.append(process)
            except psutil.NoSuchProcess:
                pass
        if not left or time.monotonic() >= deadline:
            return left
        time.sleep(0.05)


def test_a_run_killed_while_its_worker_is_stopped_leaves_no_worker(tmp_path):
    """A stopped worker (as `ab` freezes its idle side between samples, or a debugger holds one) runs no thread that
    watches its parent and holds a SIGTERM until continued: when the run is killed outright, only the kernel's
    parent-death signal (SIGKILL, which a stopped process obeys) ends it, instead of leaving it stopped forever."""
    config, out = tmp_path / "c.yaml", tmp_path / "r.json"
    config.write_text(CONFIG)
    run = subprocess.Popen(
        [*INTERRUPTIBLE_ASYNCBENCH, "run", str(config), "--no-progress", "-o", str(out)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    wait_for_journaled_cases(out, 1)
    time.sleep(0.3)  # into the long case
    children = psutil.Process(run.pid).children(recursive=True)
    workers = [p for p in children if "spawn_main" in command_line(p)]
    assert workers
    for worker in workers:
        worker.suspend()  # SIGSTOP
    run.kill()
    run.wait(timeout=30)
    alive = _still_running(children, 5)  # the workers, and multiprocessing's resource tracker (it sees its pipe close)
    for left in alive:  # a failure here must not leave stopped processes on the machine
        left.kill()
    assert not alive, f"left behind: {[command_line(p) for p in alive]}"


def test_a_second_sigterm_while_ab_saves_what_it_decided_is_ignored_as_runs_is(tmp_path, monkeypatch):
    """`ab` had a SIGTERM policy of its own, drifted from `run`'s: it put SIGTERM's previous handler back before it
    saved, so a supervisor's second SIGTERM (systemd, a CI runner's cancel, `timeout`) cut the save short. Both go
    through one policy now: the first SIGTERM ends the pairing (exit 143), a second one while the decided cases are
    saved is ignored. The first SIGTERM arrives as the gate starts, the second as its file is written."""
    from click.testing import CliRunner

    from asyncbench import cli
    from asyncbench.engine import gate_time
    from asyncbench.results import outputs
    from tests.support.ab_repo import CONFIG, WORKLOAD

    (tmp_path / "mypkg.py").write_text("REPEAT = 20\n")
    (tmp_path / "work.py").write_text(WORKLOAD)
    (tmp_path / "gate.yaml").write_text(CONFIG)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("OPENBLAS_NUM_THREADS", "1")
    write = outputs.write
    reached: list[str] = []

    def first_sigterm(*args, **kwargs):
        os.kill(os.getpid(), signal.SIGTERM)
        raise AssertionError("the first SIGTERM did not stop the gate")

    def saved_under_a_second_sigterm(path, content, say):
        os.kill(os.getpid(), signal.SIGTERM)
        return write(path, content, say)

    monkeypatch.setattr(gate_time, "gate", first_sigterm)
    monkeypatch.setattr(outputs, "write", saved_under_a_second_sigterm)

    def callers_handler(signum, frame):
        reached.append("SIGTERM reached ab's caller")

    before = signal.signal(signal.SIGTERM, callers_handler)
    try:
        done = CliRunner().invoke(cli.main, ["ab", "gate.yaml", "--base-env", "X_SIDE=base", "--no-progress", "-o", "ab.json"])
        assert reached == []  # ignored while the file was saved, not handed to the handler from before
        assert signal.getsignal(signal.SIGTERM) is callers_handler  # which is back after it
    finally:
        signal.signal(signal.SIGTERM, before)
    assert done.exit_code == 143, done.output
    assert "Traceback" not in done.output
    assert json.loads((tmp_path / "ab.json").read_text())["interrupted"] is True
