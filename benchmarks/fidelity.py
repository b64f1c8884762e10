"""Fidelity: asyncbench's matmul median against torch.utils.benchmark's blocked_autorange median.

The same op (n_iter random size×size products, as the matmul workload runs
it), the same process and thread count, alternated. Prints the ratio of
medians (asyncbench / torch.utils.benchmark); the goal is 0.95–1.05.

    python benchmarks/fidelity.py [--device cpu|cuda:0] [--size 1000] [--rounds 5]
"""

from __future__ import annotations

import argparse
import statistics

import torch
import torch.utils.benchmark as torch_benchmark

from asyncbench.backends import get_backend
from asyncbench.engine import runner
from asyncbench.results.model import Case, Settings
from asyncbench.workloads import BUILT_IN

GOAL = (0.95, 1.05)


def asyncbench_median_s(device: str, size: int, n_iter: int, max_time_s: float) -> float:
    case = Case(
        id="fidelity",
        experiment="fidelity",
        workload="matmul",
        backend="torch",
        device=device,
        params={"size": size, "n_iter": n_iter, "dtype": "float32", "include_rng": True},
        settings=Settings(warmup=1, min_samples=10, max_time_s=max_time_s, max_rel_noise=0.01),
    )
    result = runner.run_case(case, BUILT_IN[case.workload], get_backend("torch"))
    if result.status != "ok":
        raise SystemExit(f"asyncbench case failed: {result.reason}")
    return result.variants["matmul"].done_s.median


def torch_benchmark_median_s(device: str, size: int, n_iter: int, max_time_s: float) -> float:
    timer = torch_benchmark.Timer(
        stmt="for _ in range(n_iter):\n    a = torch.randn(size, size, device=device)\n    b = a @ a",
        globals={"torch": torch, "size": size, "n_iter": n_iter, "device": device},
        num_threads=torch.get_num_threads(),
    )
    return timer.blocked_autorange(min_run_time=max_time_s).median


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--size", type=int, default=1000)
    parser.add_argument("--n-iter", type=int, default=10)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--time-s", type=float, default=2.0, help="measuring time per tool per round")
    args = parser.parse_args()
    ours, theirs = [], []
    for _ in range(args.rounds):
        ours.append(asyncbench_median_s(args.device, args.size, args.n_iter, args.time_s))
        theirs.append(torch_benchmark_median_s(args.device, args.size, args.n_iter, args.time_s))
    ratio = statistics.median(ours) / statistics.median(theirs)
    low, high = GOAL
    print(f"torch {torch.__version__} on {args.device}, {torch.get_num_threads()} threads, {args.n_iter}× randn+mm {args.size}²")
    print(
        f"asyncbench median {statistics.median(ours) * 1e3:.3f} ms   torch.utils.benchmark median {statistics.median(theirs) * 1e3:.3f} ms"
    )
    print(f"fidelity ratio: {ratio:.3f}  [goal {low}–{high}] {'OK' if low <= ratio <= high else 'OUTSIDE'}")


if __name__ == "__main__":
    main()
