"""How a fast step's first milliseconds compare with the rest of its sampling: what measure.timing's WARMUP_MIN_S is for.

A step form of 20 tiny `x + 1` steps a sample (1×2 float32), run through engine.runner.run_case in-process with
`warmup: 1`, max_time_s 0.6 and a noise target it never meets (so it samples for its whole time), in fresh processes
of the given asyncbench tree (a worktree of a commit before WARMUP_MIN_S shows the cold start the old warm-up left;
this tree shows what is left after it). Each sample is placed by the sampling time elapsed at its end; per window of
that time (0-2 ms, 2-5, ... 200-400) the median of its samples over the median of those after 400 ms, then per window
the median of that ratio over the processes. Held to one CPU (`--affinity`, pyperf's) by default: on 2 shared cores
JAX's threads move between the cores in spells of 50-100 ms that run 0.65x or 1.45x the rest, which hide the
decay.

    python benchmarks/cold_start.py [TREE] [-b jax] [--processes 10] [--affinity 0]
"""

from __future__ import annotations

import argparse
import itertools
import json
import statistics
import subprocess
import sys
from pathlib import Path

PROCESSES = 10
STEPS = 20
MAX_TIME_S = 0.6
#: the windows of sampling time (s) whose samples are compared with those after the last edge
EDGES = (0.0, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.4)

#: run in the tree's own process: one case, each sample's done_s in order, as JSON
CHILD = r"""
import json, sys
import asyncbench
from asyncbench.backends import get_backend
from asyncbench.engine import runner
from asyncbench.results.model import Case, Settings

name, steps, max_time_s = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
backend = get_backend(name)

def make(backend, device, params):
    x = backend.random((1, 2), "float32", device)()
    backend.wait(x)
    return lambda: x + 1

workload = asyncbench.step(make, name="cold", sync_every=(0,), steps=steps)
settings = Settings(warmup=1, max_time_s=max_time_s, max_rel_noise=1e-9, max_samples=10_000_000)
case = Case(id=f"cold[{name},cpu]", experiment="cold", workload="cold", backend=name, device="cpu",
            params={"steps": steps, "sync_every": [0]}, settings=settings)
result = runner.run_case(case, workload, backend)
(variant,) = result.variants.values()
print(json.dumps(list(variant.samples.done_s)))
"""


def windows(done_s: list[float]) -> list[float | None]:
    """Per window of EDGES, the median sample in it over the median after the last edge (None: no sample in it)."""
    ends, elapsed = [], 0.0
    for sample in done_s:
        elapsed += sample
        ends.append(elapsed)
    tail = statistics.median([s for s, end in zip(done_s, ends, strict=True) if end > EDGES[-1]])
    ratios: list[float | None] = []
    for low, high in itertools.pairwise(EDGES):
        inside = [s for s, end in zip(done_s, ends, strict=True) if low < end <= high]
        ratios.append(statistics.median(inside) / tail if inside else None)
    return ratios


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("tree", nargs="?", default=str(Path(__file__).resolve().parents[1]), help="an asyncbench tree")
    parser.add_argument("-b", "--backend", default="jax")
    parser.add_argument("--processes", type=int, default=PROCESSES)
    parser.add_argument("--affinity", default="0", help="the CPUs each process is held to ('' for none)")
    parser.add_argument("--python", default=sys.executable)
    args = parser.parse_args(argv)
    pinned = ["taskset", "-c", args.affinity] if args.affinity else []
    per_process = []
    for _ in range(args.processes):
        command = [*pinned, args.python, "-c", CHILD, args.backend, str(STEPS), str(MAX_TIME_S)]
        done = subprocess.run(command, cwd=args.tree, env=None, capture_output=True, text=True, check=True)
        per_process.append(windows(json.loads(done.stdout.strip().splitlines()[-1])))
    print(f"{args.backend}, {args.processes} processes of {args.tree}, {STEPS} tiny steps a sample, CPUs {args.affinity or 'any'}")
    print("window (ms)      | median sample / median after 400 ms (median over processes)")
    for index, (low, high) in enumerate(itertools.pairwise(EDGES)):
        seen = [ratio for ratios in per_process if (ratio := ratios[index]) is not None]
        said = f"{statistics.median(seen):.3f}" if seen else "no sample"
        print(f"{low * 1e3:5g}-{high * 1e3:<5g}      | {said}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
