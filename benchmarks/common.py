"""What several benchmarks share: an asyncbench command timed in a fresh interpreter, a CPU hog beside the runs, and
a throwaway git repository.

Not a benchmark: the scripts import it (`from common import ...`; a script run as `python benchmarks/NAME.py` has
benchmarks/ first on sys.path). Each helper is here because two or more scripts had their own copy of it; what only
one script needs stays in that script.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import multiprocessing.synchronize
import random
import subprocess
import sys
import time
from pathlib import Path
from typing import Callable, Collection, Iterator, Mapping, Sequence

#: the most of a failed command's stderr a benchmark prints before it stops
STDERR_TAIL_CHARS = 2000


def timed_asyncbench(
    argv: Sequence[str], *, cwd: Path | None = None, env: Mapping[str, str] | None = None, ok: Collection[int] | None = (0, 1)
) -> tuple[float, subprocess.CompletedProcess[str]]:
    """`python -m asyncbench ARGV` in a fresh interpreter, as a user runs it: its wall seconds and what it printed.

    An exit code outside `ok` stops the benchmark, naming the command and the end of its stderr: by default 0 and 1,
    since a failed check or gate (exit 1) is still a timing; `ok=None` takes any exit code.
    """
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "asyncbench", *argv], cwd=cwd, env=env, capture_output=True, text=True, check=False)
    seconds = time.perf_counter() - started
    if ok is not None and done.returncode not in ok:
        raise SystemExit(f"asyncbench {' '.join(argv)} exited {done.returncode}: {done.stderr.strip()[-STDERR_TAIL_CHARS:]}")
    return seconds, done


def hog(stop: multiprocessing.synchronize.Event, seed: int) -> None:
    """Busy 0.5-4 s, idle 0.5-4 s, until told to stop: another tenant of a shared runner."""
    rng = random.Random(seed)
    while not stop.is_set():
        busy_until = time.monotonic() + rng.uniform(0.5, 4)
        while time.monotonic() < busy_until and not stop.is_set():
            sum(i * i for i in range(10_000))
        stop.wait(rng.uniform(0.5, 4))


@contextlib.contextmanager
def tenant(on: bool, target: Callable[[multiprocessing.synchronize.Event, int], None] | None = None, seed: int = 1) -> Iterator[None]:
    """`target` (`hog` by default) in a process of its own for the block's duration (nothing when not `on`)."""
    stop = multiprocessing.Event()
    process = multiprocessing.Process(target=target or hog, args=(stop, seed), daemon=True) if on else None
    if process is not None:
        process.start()
    try:
        yield
    finally:
        stop.set()
        if process is not None:
            process.join(5)


def git(repo: Path, *args: str) -> None:
    """A git command in a throwaway repository, with an author of its own (the machine may have none)."""
    subprocess.run(["git", "-C", str(repo), "-c", "user.email=b@b", "-c", "user.name=b", *args], check=True, capture_output=True)
