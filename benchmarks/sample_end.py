"""A JAX sample's end, in a tight alternation: ended on its own result (backends.handles.ResultWait), at the device-wide
barrier, and a hand loop's `block_until_ready` of its last result, each a sample of `--steps` tiny `x + 1` steps.

One process held to one CPU, the three taken in turn `--samples` times after a warm-up, so the machine's drift hits
each alike; printed: each end's median sample over the hand loop's. What the sample's end costs apart from a case
run's surroundings (its machine reference, untimed rounds), which benchmarks/fidelity_backends.py measures with them.

    JAX_PLATFORMS=cpu PJRT_NPROC=1 python benchmarks/sample_end.py [--samples 3000] [--steps 20] [--cpu 0]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from asyncbench.backends import get_backend  # noqa: E402
from asyncbench.measure.timing import take_sample  # noqa: E402

#: samples of each end before the timed ones: XLA's dispatch path and the caches warm
WARMUP = 300


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=3000)
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--cpu", type=int, default=0, help="the CPU the process is held to")
    args = parser.parse_args(argv)
    os.sched_setaffinity(0, {args.cpu})
    backend = get_backend("jax")
    ends, x = backend.result_wait("cpu"), backend.ones((1, 2), "float32", "cpu")
    steps = args.steps

    def run() -> Any:
        for _ in range(steps - 1):
            x + 1
        return x + 1

    def sync() -> None:
        backend.barrier("cpu")

    def hand() -> float:
        started = time.perf_counter()
        run().block_until_ready()
        return time.perf_counter() - started

    takers = {
        "result end": lambda: take_sample(run, sync, None, result_wait=ends)[1],
        "barrier end": lambda: take_sample(run, sync, None)[1],
        "hand loop": hand,
    }
    for _ in range(WARMUP):
        for take in takers.values():
            take()
    taken: dict[str, list[float]] = {name: [] for name in takers}
    for _ in range(args.samples):
        for name, take in takers.items():
            taken[name].append(take())
    hand_s = statistics.median(taken["hand loop"])
    print(f"{steps} steps a sample, {args.samples} samples each, CPU {args.cpu}; hand loop {hand_s * 1e6:.1f} µs a sample")
    for name in ("result end", "barrier end"):
        print(f"  {name}: {statistics.median(taken[name]) / hand_s:.3f}× the hand loop")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
