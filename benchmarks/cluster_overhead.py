"""What running as jobs costs per job: submitting, the job's own start, and gathering (`--executor local|slurm`).

A sweep of N one-case jobs (numpy sync_async, 0.2 s of sampling each) is run
here, through submitit's local executor, and through Slurm (when `sbatch` is
on the PATH; `make slurm` and `bash tests/support/slurm.sh start` give a
single node). Printed per executor:

- submission: submitit's submit calls for all N jobs, divided by N (`sweep.json`'s submit_s);
- per job in all: (the sweep's wall time − the same plan's run here) / N — the job's start on its node
  (interpreter, asyncbench, the worker), the scheduler's dispatch, the polling; on an exclusive single node
  Slurm runs the jobs one after another, so this is each job's whole overhead;
- gathering: (`gather --no-wait` of the N finished jobs − of 1) / (N − 1): reading a job's results, merging
  (both totals printed too: the command's own start and one look at the scheduler dominate).

Goal (the issue's): measured and stated; there is no threshold. Usage: python benchmarks/cluster_overhead.py [--jobs 8]
"""

from __future__ import annotations

import argparse
import json
import shutil
import tempfile
from pathlib import Path

from common import timed_asyncbench  # benchmarks/ is sys.path[0] when this runs as a script

CONFIG = """\
name: overhead
defaults: {{backends: [numpy], devices: [cpu], max_time_s: 0.2, min_samples: 6}}
experiments:
  - workload: sync_async
    sweep: {{n_ops: [{points}]}}
"""


def timed(args: list[str], cwd: Path) -> float:
    return timed_asyncbench([*args, "--no-progress"], cwd=cwd, ok=(0,))[0]


def measure(kind: str, jobs: int, folder: Path) -> dict[str, float]:
    here_s = timed(["run", f"n{jobs}.yaml", "-o", f"here-{kind}.json"], folder)
    sweep_s = timed(
        ["run", f"n{jobs}.yaml", "--executor", kind, "--per", "case", "--job-dir", f"{kind}-{jobs}", "-o", f"{kind}.json"], folder
    )
    timed(["run", "n1.yaml", "--executor", kind, "--job-dir", f"{kind}-1", "-o", f"{kind}-1.json"], folder)
    gather_one = min(timed(["gather", f"{kind}-1", "--no-wait", "-o", "g1.json"], folder) for _ in range(3))
    gather_all = min(timed(["gather", f"{kind}-{jobs}", "--no-wait", "-o", "gn.json"], folder) for _ in range(3))
    manifest = json.loads((folder / f"{kind}-{jobs}" / "sweep.json").read_text())
    return {
        "submit_per_job_s": manifest["submit_s"] / jobs,
        "overhead_per_job_s": (sweep_s - here_s) / jobs,
        "gather_per_job_s": (gather_all - gather_one) / (jobs - 1),
        "gather_one_s": gather_one,
        "gather_all_s": gather_all,
        "sweep_s": sweep_s,
        "here_s": here_s,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=8)
    args = parser.parse_args()
    kinds = ["local"] + (["slurm"] if shutil.which("sbatch") else [])
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch)
        (folder / f"n{args.jobs}.yaml").write_text(CONFIG.format(points=", ".join(str(10 * (i + 1)) for i in range(args.jobs))))
        (folder / "n1.yaml").write_text(CONFIG.format(points="10"))
        for kind in kinds:
            figures = measure(kind, args.jobs, folder)
            print(
                f"{kind:5}  {args.jobs} jobs: submit {figures['submit_per_job_s'] * 1e3:.1f} ms/job · "
                f"overhead {figures['overhead_per_job_s']:.2f} s/job "
                f"(sweep {figures['sweep_s']:.1f} s vs here {figures['here_s']:.1f} s) · "
                f"gather {figures['gather_per_job_s'] * 1e3:.1f} ms/job (1 job {figures['gather_one_s']:.2f} s, "
                f"{args.jobs} jobs {figures['gather_all_s']:.2f} s, each a fresh interpreter)"
            )
    if "slurm" not in kinds:
        print("slurm: skipped (no sbatch on the PATH; `make slurm` and `bash tests/support/slurm.sh start` give one node)")


if __name__ == "__main__":
    main()
