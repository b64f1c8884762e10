"""A user's git repository for `asyncbench ab`, and `ab` run in it.

The repository holds a user's package (mypkg, REPEAT = 20), a numpy workload that imports it and a gate config,
committed as the base; a test changes the package for the head. The end-to-end `ab` tests (tests/e2e/) and the
Action's (test_action.py) share it, so that each measures the same real numpy work."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Mapping

from tests.support.cli import asyncbench

WORKLOAD = """
import numpy as np

import asyncbench
import mypkg  # the user's package: each side imports its own revision of it


@asyncbench.step(sync_every=(0,), steps=1)
def work(backend, device, params):
    x = np.ones((96, 96), np.float32)

    def step():
        for _ in range(mypkg.REPEAT):
            x @ x

    return step
"""
CONFIG = """\
defaults: {backends: [numpy], devices: [cpu], min_samples: 6, max_time_s: 3, warmup: 1}
experiments:
  - name: work
    workload: work.py:work
"""
#: one BLAS thread per side: two sides measured at once on a small machine must not fight over its cores
ONE_BLAS_THREAD = {"OPENBLAS_NUM_THREADS": "1"}


def git(repo: Path, *args: str) -> str:
    """`git ARGS` in `repo` as a committer named t; its output, stripped."""
    done = subprocess.run(
        ["git", "-C", str(repo), "-c", "user.email=t@t", "-c", "user.name=t", *args], capture_output=True, text=True, check=True
    )
    return done.stdout.strip()


def committed_repo(folder: Path) -> Path:
    """`folder` made the repository whose base commit has REPEAT = 20; the working tree is left as committed."""
    (folder / "mypkg.py").write_text("REPEAT = 20\n")
    (folder / "work.py").write_text(WORKLOAD)
    (folder / "gate.yaml").write_text(CONFIG)
    git(folder, "init", "-q")
    git(folder, "add", ".")
    git(folder, "commit", "-qm", "base")
    return folder


def ab(*args: str, cwd: Path, env: Mapping[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """`asyncbench ab --no-progress ARGS` in `cwd`, one BLAS thread a side, `env` over the test environment."""
    return asyncbench("ab", "--no-progress", *args, cwd=cwd, env={**ONE_BLAS_THREAD, **(env or {})})
