"""Child processes that never outlive the run: spawned, watching their parent, torn down on every path.

Shared by `distributed` (one process per rank) and `isolation` (a worker per
run of cases). Children are started with the spawn method, never fork: a
forked child would inherit the parent's framework state and threads (a CUDA
context cannot cross a fork).

A child dies with its parent even when the parent is killed outright
(SIGKILL, which no cleanup sees) and even when the child itself is frozen:
`ab` stops its idle side with SIGSTOP, and a stopped process neither runs
a watching thread nor acts on SIGTERM, so it would stay stopped forever,
holding the caller's pipes. The kernel's parent-death signal (Linux
PR_SET_PDEATHSIG) with SIGKILL ends it whatever its state; elsewhere a
thread that polls the parent is all there is.
"""

from __future__ import annotations

import contextlib
import ctypes
import multiprocessing
import os
import signal
import sys
import threading
import time
from typing import Any

SPAWN = multiprocessing.get_context("spawn")
# After terminate() (SIGTERM), how long a child gets to exit before SIGKILL.
TERMINATE_GRACE_S = 2.0
# How often a child checks that its parent is still there.
PARENT_POLL_S = 1.0
# How often a parent looks at silent children while it waits (a dead one is seen at once through its pipe).
WAIT_POLL_S = 0.5
# What a death by signal usually means, for the message that reports it.
DEATH_HINTS = {
    "SIGKILL": "the kernel's out-of-memory killer sends SIGKILL: the case may need less memory",
    "SIGSEGV": "a crash in native code",
    "SIGBUS": "a crash in native code",
    "SIGABRT": "native code aborted",
}

#: whether this process is a case worker (where a case may create CUDA contexts freely); set by the worker itself
in_worker = False


# prctl's option (linux/prctl.h): the signal the kernel sends this process when the thread that started it exits.
PR_SET_PDEATHSIG = 1
# That signal: SIGKILL is the one signal a stopped (SIGSTOP) process acts on without being continued first.
PARENT_DEATH_SIGNAL = signal.SIGKILL


def _exit_with_parent(parent: int) -> None:
    while True:
        time.sleep(PARENT_POLL_S)
        if os.getppid() != parent:
            os._exit(1)


def _die_with_parent() -> bool:
    """Ask the kernel to SIGKILL this process when its parent dies (Linux only); whether it was arranged.

    The kernel ties the signal to the parent's thread that started this process: every child here is started
    from its parent's main thread, which lives as long as the parent does."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return bool(libc.prctl(PR_SET_PDEATHSIG, int(PARENT_DEATH_SIGNAL), 0, 0, 0) == 0)
    except (OSError, AttributeError):
        return False


def watch_parent(parent: int) -> None:
    """In a child: die with the parent, even a parent killed by SIGKILL and even while this child is stopped
    (the parent-death signal); where there is none, exit within PARENT_POLL_S of the parent's death."""
    if _die_with_parent() and os.getppid() != parent:
        os._exit(1)  # the parent died before the signal was arranged: the kernel will not send it now
    threading.Thread(target=_exit_with_parent, args=(parent,), name="asyncbench-parent-watch", daemon=True).start()


def send_or_exit(channel: Any, message: Any) -> None:
    """In a child: send to the parent, or exit quietly (SystemExit, so `finally` blocks run) if the parent is gone.

    A parent killed outright (SIGKILL) leaves its children writing into a
    broken pipe; a traceback on the terminal would tell the user nothing new.
    """
    try:
        channel.send(message)
    except (BrokenPipeError, ConnectionResetError, EOFError):
        raise SystemExit(1) from None


def describe_exit(code: int | None) -> str:
    """A process's exit code in words: 'killed by SIGSEGV; a crash in native code', 'exit code 1', 'still running'."""
    if code is None:
        return "still running"
    if code < 0:
        with contextlib.suppress(ValueError):
            name = signal.Signals(-code).name
            return f"killed by {name}" + (f"; {DEATH_HINTS[name]}" if name in DEATH_HINTS else "")
    return f"exit code {code}"


def teardown(processes: list[Any]) -> None:
    """Terminate, then kill, and join every process that is still alive."""
    for process in processes:
        if process.is_alive():
            process.terminate()
    deadline = time.monotonic() + TERMINATE_GRACE_S
    for process in processes:
        process.join(max(0.0, deadline - time.monotonic()))
        if process.is_alive():
            process.kill()
            process.join()
