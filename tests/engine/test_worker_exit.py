"""How a worker process ends when it is told to: quickly and cleanly, and in `ab` while the next pair starts.

Ending a process that imported torch took 0.4-0.6 s of a core in the interpreter's teardown of its modules; `ab`
ends a pair of them every block. A worker told to stop runs its exit handlers, flushes its streams and skips that
teardown, and a side's old process ends while its new one imports, the new one being handed back only once the old
is gone (one process per side holds memory, and a GPU's, when a case is set up).
"""

from __future__ import annotations

import atexit
import os
import sys
import threading
import time
from pathlib import Path

import psutil

from asyncbench.engine import isolation, side_process
from asyncbench.results.model import Case, Settings

# Longer than it takes to check that a process is still there, shorter than a worker's EXIT_GRACE_S.
EXIT_HANDLER_S = 2.0

SLOW_TO_EXIT = f'''
import atexit
import time

from asyncbench.workloads.base import Prepared, Workload


class SlowToExit(Workload):
    """Set up, it leaves an exit handler that takes {EXIT_HANDLER_S} s: its process ends that long after it is told to."""

    name = "slow_to_exit"
    summary = "a process slow to end"
    variants = ("run",)

    def setup(self, backend, device, params):
        atexit.register(time.sleep, {EXIT_HANDLER_S})
        return Prepared(variants={{"run": lambda: None}}, sync=lambda: None)
'''


def leave_a_thread_and_an_exit_handler(marker: str, on_progress=None) -> int:
    """What a user's step may leave behind: a thread that never ends (not a daemon) and an exit handler."""
    threading.Thread(target=time.sleep, args=(3600,), daemon=False).start()
    atexit.register(Path(marker).write_text, "ran")
    return os.getpid()


def _alive(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def test_a_worker_told_to_stop_runs_its_exit_handlers_and_exits_0_though_a_thread_of_its_still_runs(tmp_path):
    """Before, the interpreter's exit waited for the thread, so `close` killed the worker after its grace: the exit
    handlers never ran and the exit code was a signal's."""
    marker = tmp_path / "exit-handler-ran"
    worker = isolation.Worker(leave_a_thread_and_an_exit_handler)
    worker.call((str(marker),), timeout_s=60.0)
    process = worker._process
    worker.close()
    assert process.exitcode == 0
    assert marker.read_text() == "ran"


def test_a_renewed_side_s_old_process_ends_while_the_new_one_starts_and_is_gone_once_it_is_ready(tmp_path):
    (tmp_path / "slow_to_exit.py").write_text(SLOW_TO_EXIT)
    case = Case("s[numpy,cpu]", "s", f"{tmp_path / 'slow_to_exit.py'}:SlowToExit", "numpy", "cpu", {}, Settings(warmup=0))
    side = side_process.SideWorker("base", None, sys.executable, {})
    try:
        side.renew([])
        side.ready(60.0)
        assert "variants" in side.call("setup", (case, None), 60.0)
        old = side.worker.pid
        assert old is not None
        side.renew([])  # does not wait the EXIT_HANDLER_S the old process takes to end
        assert _alive(old)
        side.ready(60.0)
        assert not _alive(old)
        assert side.worker.pid not in (None, old)
    finally:
        side.close()
