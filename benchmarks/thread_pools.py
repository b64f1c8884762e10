"""What a CPU thread pool does to a timing: the same matmul step, pools free or pinned, alone or beside a neighbour.

Why `run` warns rather than pins by default (docs/guides/cpu-threads.md):
each condition runs in fresh processes, one after another and interleaved
(free, pinned, free, pinned...), and each process times `--samples` steps
of `--iters` float32 products of a `--size`² matrix with itself (torch and
NumPy: torch's OpenMP pool, NumPy's OpenBLAS pool), after a warm-up. A
process is "pinned" with the variables `run --threads 1` sets
(engine.thread_pools.pinning_variables); "free" with none of them.
`--neighbours N` starts N processes that spin on a core each for the whole
benchmark (a busy CI runner, another job on the machine); 0 measures the
machine as it is. Printed per condition: the median over processes of each
process's median step, the spread of the processes' medians (max/min), the
widest spread of one process's samples (p90/p10), and the CPU pressure the
processes saw (Linux PSI: the share of the time some task waited for a CPU).

    python benchmarks/thread_pools.py                        # the machine as it is, then beside one spinning neighbour
    python benchmarks/thread_pools.py --neighbours 0 --repeats 5
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

from asyncbench.engine import thread_pools
from asyncbench.host import pressure

STEP = r"""
import json, os, sys, time
backend, size, iters, samples = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
if backend == "torch":
    import torch
    a = torch.rand(size, size)
    threads = torch.get_num_threads()
else:
    import numpy as np
    a = np.random.default_rng(0).random((size, size), dtype=np.float32)
    threads = None
def step():
    b = a
    for _ in range(iters):
        b = a @ a
    return b
for _ in range(3):
    step()
def stalled():
    try:
        with open("/proc/pressure/cpu") as f:
            return int(f.readline().split()[-1].split("=")[1])
    except OSError:
        return None
s0, w0 = stalled(), time.monotonic()
times = []
for _ in range(samples):
    t = time.perf_counter()
    step()
    times.append(time.perf_counter() - t)
s1, w1 = stalled(), time.monotonic()
load = None if s0 is None else (s1 - s0) / 1e6 / (w1 - w0)
print(json.dumps({"times": times, "pressure": load, "threads": threads}))
"""

SPIN = "while True: pass"


def _one(backend: str, pinned: bool, size: int, iters: int, samples: int) -> dict:
    free = {k: v for k, v in os.environ.items() if k not in thread_pools.pinning_variables(1)}
    env = {**free, **thread_pools.pinning_variables(1)} if pinned else free
    out = subprocess.run(
        [sys.executable, "-c", STEP, backend, str(size), str(iters), str(samples)], env=env, capture_output=True, text=True, check=True
    )
    return json.loads(out.stdout)


def _quantile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def _measure(args: argparse.Namespace, neighbours: int) -> None:
    spinning = [subprocess.Popen([sys.executable, "-c", SPIN]) for _ in range(neighbours)]
    try:
        time.sleep(0.5 if spinning else 0)
        found: dict[tuple[str, bool], list[dict]] = {}
        for _ in range(args.repeats):
            for backend in ("torch", "numpy"):
                for pinned in (False, True):
                    found.setdefault((backend, pinned), []).append(_one(backend, pinned, args.size, args.iters, args.samples))
    finally:
        for process in spinning:
            process.kill()
            process.wait()
    where = f"beside {neighbours} spinning neighbour(s)" if neighbours else "the machine as it is"
    print(
        f"\n{where}: {args.iters} × {args.size}² float32 products per step, {args.samples} steps per process, {args.repeats} processes each"
    )
    print(f"{'backend':8} {'pools':7} {'median step':>12} {'processes max/min':>18} {'p90/p10 (worst)':>16} {'CPU pressure':>14}")
    for (backend, pinned), runs in found.items():
        medians = [statistics.median(r["times"]) for r in runs]
        spreads = [_quantile(r["times"], 0.9) / _quantile(r["times"], 0.1) for r in runs]
        loads = [r["pressure"] for r in runs if r["pressure"] is not None]
        load = f"{min(loads):.2f}–{max(loads):.2f}" if loads else "n/a"
        print(
            f"{backend:8} {'pinned' if pinned else 'free':7} {statistics.median(medians) * 1e3:10.2f} ms "
            f"{max(medians) / min(medians):17.2f}× {max(spreads):15.2f}× {load:>14}"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=512)
    parser.add_argument("--iters", type=int, default=4)
    parser.add_argument("--samples", type=int, default=40)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--neighbours", type=int, default=None, help="spinning neighbours (default: 0, then 1)")
    args = parser.parse_args()
    print(f"{os.cpu_count()} cores; PSI {'readable' if pressure.stalled_us() is not None else 'not reported'}")
    for neighbours in (0, 1) if args.neighbours is None else (args.neighbours,):
        _measure(args, neighbours)


if __name__ == "__main__":
    main()
