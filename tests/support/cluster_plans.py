"""What the cluster tests share: small plans whose jobs take a second or two, the local Slurm's script, and a
sweep's manifest as written."""

from __future__ import annotations

import json
from pathlib import Path

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

#: installs, starts and stops the local single-node Slurm (`make slurm`)
SLURM_SCRIPT = Path(__file__).resolve().parent / "slurm.sh"


def manifest(folder: Path) -> dict:
    """The sweep.json a sweep wrote in `folder`."""
    return json.loads((folder / "sweep.json").read_text())
