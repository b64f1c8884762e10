"""What the cluster tests share: the CLI in a subprocess, small configs, and a real single-node Slurm."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

#: two experiments whose cases take a second or two each: a sweep of two jobs
TWO = """\
name: two
defaults: {backends: [numpy], devices: [cpu], max_time_s: 0.3, min_samples: 6}
experiments:
  - workload: sync_async
    params: {n_ops: 50}
  - workload: barrier
    params: {size: 64}
"""

#: a job that runs for about eight seconds, one case per second: long enough to be stopped mid-run
LONG = """\
name: long
defaults: {backends: [numpy], devices: [cpu], max_time_s: 1, min_samples: 6, max_rel_noise: 0.000001}
experiments:
  - name: slow
    workload: barrier
    params: {size: 64}
    sweep: {background_ops: [1, 2, 3, 4, 5, 6, 7, 8]}
"""

SLURM_SCRIPT = Path(__file__).resolve().parents[1] / "support" / "slurm.sh"


def asyncbench(*args: str, cwd: Path, timeout: float = 240, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "asyncbench", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=timeout,
        env={**os.environ, **env},
    )


def manifest(folder: Path) -> dict:
    return json.loads((folder / "sweep.json").read_text())


@pytest.fixture(scope="session")
def slurm():
    """The local Slurm's daemons, started for the tests that use it and stopped after them."""
    subprocess.run(["bash", str(SLURM_SCRIPT), "start"], check=True, timeout=180)
    yield
    subprocess.run(["bash", str(SLURM_SCRIPT), "stop"], check=False, timeout=60)
