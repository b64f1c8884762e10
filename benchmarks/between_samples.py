"""What the harness does between two timed samples costs a fast case: the rounds it takes in its max_time_s and its
per-step figure, for two versions of asyncbench side by side (measure.timing's NOISE_SHARE and PROGRESS_EVERY_S).

A step form of 20 tiny `x + 1` steps a sample (1×2 float32) on JAX or MXNet on a CPU, run through
engine.runner.run_case in-process with max_time_s=1 and a noise target it never meets (so it samples for its whole
time), in fresh processes of each version's tree, alternated (the first version first in even reruns), so the
machine's drift hits both alike. Per version: each rerun's rounds and per-step median (step_s_k0), and the median of
the per-step figures. A version is a folder holding an asyncbench tree: a worktree of an older commit
(`git worktree add --detach ../before REV`) beside this one.

    python benchmarks/between_samples.py ../before . [-b jax] [--reruns 5]
    python benchmarks/between_samples.py ../before . -b mxnet --python .venv-mxnet/bin/python
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
from pathlib import Path

RERUNS = 5
STEPS = 20
MAX_TIME_S = 1.0

#: run in each version's tree (its own asyncbench on the path): one case, its rounds and per-step median as JSON
CHILD = r"""
import json, sys
import asyncbench
from asyncbench.backends import get_backend
from asyncbench.engine import runner
from asyncbench.results.model import Case, Settings

backend_name, steps, max_time_s = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])

def make(backend, device, params):
    x = backend.random((1, 2), "float32", device)()
    backend.wait(x)
    return lambda: x + 1

workload = asyncbench.step(make, name="between_samples", sync_every=(0,), steps=steps)
settings = Settings(max_time_s=max_time_s, max_samples=1_000_000, max_rel_noise=1e-9)
params = {"steps": steps, "sync_every": [0]}
case = Case(id="between_samples", experiment="bench", workload="between_samples", backend=backend_name, device="cpu",
            params=params, settings=settings)
result = runner.run_case(case, workload, get_backend(backend_name))
samples = result.variants["sync_every=0"].samples.done_s
print(json.dumps({"rounds": len(samples), "per_step_s": result.metrics["step_s_k0"]}))
"""


def one_run(python: str, tree: Path, backend: str) -> dict[str, float]:
    """One fresh process of `tree`'s asyncbench: its rounds and per-step median."""
    env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": str(tree), "JAX_PLATFORMS": "cpu", "HOME": str(Path.home())}
    done = subprocess.run(
        [python, "-c", CHILD, backend, str(STEPS), str(MAX_TIME_S)], cwd=tree, env=env, capture_output=True, text=True, check=False
    )
    lines = [line for line in done.stdout.splitlines() if line.startswith("{")]
    if done.returncode != 0 or not lines:
        raise SystemExit(f"{tree}: the case failed: {done.stderr[-800:]}")
    found: dict[str, float] = json.loads(lines[-1])
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("trees", nargs=2, type=Path, help="two asyncbench trees: the version before, then after")
    parser.add_argument("-b", "--backend", default="jax", choices=("jax", "mxnet"))
    parser.add_argument("--reruns", type=int, default=RERUNS)
    parser.add_argument("--python", default=sys.executable, help="the interpreter (MXNet's environment for -b mxnet)")
    args = parser.parse_args()
    trees = [tree.resolve() for tree in args.trees]
    found: dict[Path, list[dict[str, float]]] = {tree: [] for tree in trees}
    for rerun in range(args.reruns):
        for tree in trees if rerun % 2 == 0 else trees[::-1]:
            found[tree].append(one_run(args.python, tree, args.backend))
    print(f"{args.backend}, {STEPS} tiny steps a sample, max_time_s {MAX_TIME_S:g}, {args.reruns} reruns a version:")
    for tree, runs in found.items():
        per_step = [run["per_step_s"] * 1e6 for run in runs]
        print(
            f"  {tree}: rounds {[int(run['rounds']) for run in runs]}, per step (µs) {[round(v, 2) for v in per_step]}, "
            f"median {statistics.median(per_step):.2f}"
        )


if __name__ == "__main__":
    main()
