"""What running cases in a worker process costs, and whether it changes what they measure.

Three figures, each measured in this one run:
- a worker's start-up: the first call into a fresh worker that imports the
  framework, against a call into a warm one (the pipe round trip);
- a whole run: `asyncbench run CONFIG` wall time in a worker (the default)
  and `--in-process`, alternated N times so that machine drift hits both;
- the figures: each case's median done time in a worker / in-process,
  per variant (1.00 = isolation does not change the measurement), next to
  the noise floor: how far the in-process runs alone spread (max / min).

    python benchmarks/isolation_cost.py [CONFIG] [--runs N] [--framework torch|numpy]
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from pathlib import Path

from common import timed_asyncbench  # benchmarks/ is sys.path[0] when this runs as a script

from asyncbench.engine import isolation

DEFAULT_CONFIG = "configs/ci-gate.yaml"


def import_framework(name: str, on_progress=None) -> str:
    """A worker target: import the framework (a no-op once imported)."""
    __import__(name)
    return name


def worker_start_s(framework: str) -> tuple[float, float]:
    """(first call into a fresh worker, median warm call) in seconds."""
    worker = isolation.Worker(import_framework)
    try:
        start = time.perf_counter()
        worker.call((framework,), timeout_s=120)
        first = time.perf_counter() - start
        warm = []
        for _ in range(20):
            start = time.perf_counter()
            worker.call((framework,), timeout_s=120)
            warm.append(time.perf_counter() - start)
        return first, statistics.median(warm)
    finally:
        worker.close()


def run_once(config: str, out: Path, in_process: bool) -> float:
    argv = ["run", config, "--no-progress", "-o", str(out), *(["--in-process"] if in_process else [])]
    return timed_asyncbench(argv, ok=None)[0]


def medians(path: Path) -> dict[tuple[str, str], float]:
    data = json.loads(path.read_text())
    return {(r["id"], name): v["done_s"]["median"] for r in data["results"] if r["status"] == "ok" for name, v in r["variants"].items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("config", nargs="?", default=DEFAULT_CONFIG)
    parser.add_argument("--runs", type=int, default=3, help="runs of each kind, alternated")
    parser.add_argument("--framework", default="torch", help="what the worker imports in the start-up figure")
    args = parser.parse_args()

    first, warm = worker_start_s(args.framework)
    print(f"worker start-up (spawn + import {args.framework}): {first:.2f} s; a call into a warm worker: {warm * 1e3:.2f} ms")

    walls: dict[bool, list[float]] = {True: [], False: []}
    ratios: dict[tuple[str, str], list[float]] = {}
    here_medians: dict[tuple[str, str], list[float]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for index in range(args.runs):
            paths = {}
            for in_process in (False, True):
                paths[in_process] = Path(tmp, f"{index}-{in_process}.json")
                walls[in_process].append(run_once(args.config, paths[in_process], in_process))
            isolated, here = medians(paths[False]), medians(paths[True])
            for key in isolated.keys() & here.keys():
                ratios.setdefault(key, []).append(isolated[key] / here[key])
                here_medians.setdefault(key, []).append(here[key])
    worker_s, here_s = statistics.median(walls[False]), statistics.median(walls[True])
    print(
        f"asyncbench run {args.config}, median of {args.runs}: in a worker {worker_s:.2f} s, in-process {here_s:.2f} s, "
        f"difference {worker_s - here_s:+.2f} s ({worker_s / here_s:.2f}x)"
    )
    print("per case and variant: median done time in a worker / in-process (median [range] over runs);")
    print("in-process runs alone: max / min over runs (the noise floor)")
    for key, values in sorted(ratios.items()):
        spread = max(here_medians[key]) / min(here_medians[key])
        print(f"  {statistics.median(values):5.2f} [{min(values):.2f}-{max(values):.2f}]   {spread:5.2f}   {key[0]} {key[1]}")


if __name__ == "__main__":
    main()
