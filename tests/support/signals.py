"""Whether a process has a handler for a signal: a test that signals a child at a point of its work waits for the
child's handler first (a fixed sleep, under a CI run's load, sent it before and the signal's default action ended
the child before any of its code ran)."""

from __future__ import annotations

from pathlib import Path


def catches(pid: int, signum: int) -> bool:
    """Whether process `pid` has a handler for `signum` (its SigCgt mask in /proc; False once it is gone)."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return False
    caught = next((int(line.split()[1], 16) for line in status.splitlines() if line.startswith("SigCgt:")), 0)
    return bool(caught >> (int(signum) - 1) & 1)
