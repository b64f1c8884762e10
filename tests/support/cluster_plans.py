"""What the cluster tests share: small plans whose jobs take a second or two, the local Slurm's script, a sweep's
manifest as written, and one planted (its jobs need not exist)."""

from __future__ import annotations

import datetime
import json
from pathlib import Path

from asyncbench.results.merge import PlannedCase
from asyncbench.results.plan import ExecutorSettings
from asyncbench.spec import manifest as sweep_manifest

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


#: a case as jobs.planned makes it: the one job of a planted sweep
CASE = PlannedCase("barrier[numpy,cpu,size=64]", "barrier", "barrier", "numpy", "cpu", {"size": 64})


def planted_sweep(
    folder: Path, kind: str = "local", job_id: str = "4711", created: datetime.datetime | None = None, plan: dict | None = None
) -> dict:
    """A whole sweep's manifest in `folder` (the jobs need not exist), as submitting writes it; its JSON. `plan`: the
    sweep's plan as the manifest stores it (Config.to_dict)."""
    folder.mkdir(parents=True, exist_ok=True)
    job = sweep_manifest.SubmittedJob("001-barrier", job_id, folder / "001-barrier.yaml", folder / "001-barrier.json", (CASE,))
    when = created or datetime.datetime.now(datetime.timezone.utc)
    stored = plan or {"name": "two", "experiments": []}
    written = sweep_manifest.Manifest("two", when, stored, ExecutorSettings(kind=kind), 0.01, (job,))
    (folder / sweep_manifest.MANIFEST).write_text(sweep_manifest.write_text(written))
    return json.loads(sweep_manifest.write_text(written))
