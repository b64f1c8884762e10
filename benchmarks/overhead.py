"""Harness overhead: asyncbench's per-op time for sync_async/async versus a hand-written loop.

Both measure `y = x + 1` on a 1×2 torch CPU tensor, n_ops times, in this one
process, alternated so machine drift hits both alike. Prints the ratio of
medians (asyncbench / hand loop); the goal is ≤ 1.05.

    python benchmarks/overhead.py [--rounds 15] [--n-ops 10000]
"""

from __future__ import annotations

import argparse
import statistics
import time

import torch

from asyncbench.backends import get_backend
from asyncbench.engine import runner
from asyncbench.results.model import Case, Settings
from asyncbench.workloads import BUILT_IN

GOAL = 1.05


def hand_loop_per_op_s(n_ops: int, samples: int) -> float:
    x = torch.ones(1, 2)
    times = []
    for _ in range(samples):
        start = time.perf_counter()
        for _ in range(n_ops):
            y = x + 1
        times.append(time.perf_counter() - start)
    del y
    return statistics.median(times) / n_ops


def asyncbench_per_op_s(n_ops: int, samples: int) -> float:
    case = Case(
        id="overhead",
        experiment="overhead",
        workload="sync_async",
        backend="torch",
        device="cpu",
        params={"n_ops": n_ops, "shape": [1, 2], "dtype": "float32"},
        settings=Settings(warmup=1, min_samples=samples, max_samples=samples),
    )
    result = runner.run_case(case, BUILT_IN[case.workload], get_backend("torch"))
    return result.variants["async"].done_s.median / n_ops


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--n-ops", type=int, default=10_000)
    parser.add_argument("--samples", type=int, default=5)
    args = parser.parse_args()
    hand_loop_per_op_s(args.n_ops, 2)  # warm-up
    ratios, tool, hand = [], [], []
    for _ in range(args.rounds):
        t = asyncbench_per_op_s(args.n_ops, args.samples)
        h = hand_loop_per_op_s(args.n_ops, args.samples)
        tool.append(t)
        hand.append(h)
        ratios.append(t / h)
    ratio = statistics.median(ratios)
    print(f"torch {torch.__version__}, {torch.get_num_threads()} threads, n_ops {args.n_ops}, {args.rounds} alternations")
    print(f"asyncbench per op: {statistics.median(tool) * 1e6:.3f} µs   hand loop per op: {statistics.median(hand) * 1e6:.3f} µs")
    print(f"overhead ratio (median of per-round ratios): {ratio:.3f}  [goal ≤ {GOAL}] {'OK' if ratio <= GOAL else 'OVER'}")


if __name__ == "__main__":
    main()
