"""Sweeps that scale: what the harness costs per case at 100, 1,000 and 10,000 cases.

Each size runs the same mix of tiny numpy `matmul` cases (`max_time_s`
0.05, `min_samples` 6): N/100 experiments, each a sweep of `size` (4 to 13)
× `n_iter` (1 to 10), so every size measures the very same cases and only
their number changes. For each: the wall time of `asyncbench run -o`
(rendering included), the time the cases took where they ran (the sum of
each result's `case_s`: set-up, sampling, memory runs), and the harness
time between — everything but measuring: planning, workers, saving,
progress, rendering. Per-case harness time is given two ways: raw (the
harness over N cases, start-up included), and marginal ((harness(N) −
harness(1)) / (N − 1): the start-up a one-case run pays taken out). Then
the goals: marginal per-case harness at 10,000 over 100 cases ≤ 1.2; the
bookkeeping ≤ 10% of the largest sweep's wall time, measured by running it
again `--in-process` (there everything but measuring is bookkeeping: plan,
journal, describing and judging each result, rendering), with the worker's
round trip per case beside it (the price of isolation, which
`benchmarks/isolation_cost.py` measures on its own); and `show` / `compare`
of the largest file ≤ 3 s with the file ≤ 30 MB.

    python benchmarks/sweep_scale.py [--sizes 100,1000,10000] [--keep DIR]

The whole takes about five minutes on the 2-core machine.
"""

from __future__ import annotations

import argparse
import json
import resource
import sys
import tempfile
from pathlib import Path

from common import timed_asyncbench  # benchmarks/ is sys.path[0] when this runs as a script

RATIO_GOAL = 1.2
HARNESS_SHARE_GOAL = 0.10
READ_GOAL_S = 3.0
FILE_GOAL_BYTES = 30e6
POINTS = 100  # cases per experiment: size 4..13 x n_iter 1..10


def config(cases: int) -> str:
    """A config of `cases` tiny numpy matmul cases, as cases // 100 identical sweeps of 100 points."""
    lines = [
        f"name: tiny-{cases}",
        "defaults: {backends: [numpy], devices: [cpu], warmup: 1, min_samples: 6, max_time_s: 0.05}",
        "experiments:",
    ]
    if cases < POINTS:
        sweep = f"{{n_iter: {list(range(1, cases + 1))}}}"
        lines.append(f"  - {{name: tiny0, workload: matmul, params: {{size: 8}}, sweep: {sweep}}}")
        return "\n".join(lines) + "\n"
    sweep = f"{{size: {list(range(4, 14))}, n_iter: {list(range(1, 11))}}}"
    lines += [f"  - {{name: tiny{k}, workload: matmul, sweep: {sweep}}}" for k in range(cases // POINTS)]
    return "\n".join(lines) + "\n"


def sweep(cases: int, folder: Path, *options: str) -> dict[str, float]:
    """Run a sweep of `cases` cases; its wall time, the cases' own time, and the results file."""
    path = folder / f"tiny-{cases}.yaml"
    path.write_text(config(cases))
    out = folder / f"tiny-{cases}{''.join(options).replace('--', '-')}.json"
    wall, _ = timed_asyncbench(["run", str(path), "-o", str(out), "--no-progress", *options])
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024  # KiB on Linux; the largest process so far
    results = json.loads(out.read_text())["results"]
    if len(results) != cases or any(r["status"] != "ok" for r in results):
        sys.exit(f"the {cases}-case sweep did not run every case ok")
    measuring = sum(r["case_s"] for r in results)
    size = out.stat().st_size
    return {"cases": cases, "wall_s": wall, "measuring_s": measuring, "harness_s": wall - measuring, "bytes": size, "peak_bytes": peak}


def goal(label: str, figure: str, target: str, met: bool) -> None:
    print(f"{label:<62} {figure:>10}   [goal {target}] {'OK' if met else 'OVER'}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="100,1000,10000", help="sweep sizes (cases), comma-separated")
    parser.add_argument("--keep", type=Path, help="keep the configs and results files in this folder")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    folder = args.keep or Path(tempfile.mkdtemp(prefix="asyncbench-sweep-"))
    folder.mkdir(parents=True, exist_ok=True)
    one = sweep(1, folder)
    print(f"{'cases':>7} {'wall':>9} {'measuring':>10} {'harness':>9} {'per case':>9} {'marginal':>9} {'share':>6} {'file':>8}")
    rows = []
    for cases in sizes:
        row = sweep(cases, folder)
        row["marginal_s"] = (row["harness_s"] - one["harness_s"]) / (cases - 1)
        rows.append(row)
        print(
            f"{cases:>7} {row['wall_s']:>8.1f}s {row['measuring_s']:>9.1f}s {row['harness_s']:>8.1f}s "
            f"{row['harness_s'] / cases * 1e3:>7.2f}ms {row['marginal_s'] * 1e3:>7.2f}ms {row['harness_s'] / row['wall_s']:>6.1%} "
            f"{row['bytes'] / 1e6:>6.1f}MB",
            flush=True,
        )
    print(f"(a 1-case run: {one['wall_s']:.2f} s wall, {one['harness_s']:.2f} s harness: the start-up taken out of 'marginal')")
    print(f"(peak RSS of a process of the {rows[-1]['cases']}-case run: {rows[-1]['peak_bytes'] / 2**20:.0f} MiB; it holds every result)")
    first, last = rows[0], rows[-1]
    ratio = last["marginal_s"] / first["marginal_s"]
    goal(f"marginal per-case harness, {last['cases']} : {first['cases']} cases", f"{ratio:.2f}", f"<= {RATIO_GOAL}", ratio <= RATIO_GOAL)
    here = sweep(last["cases"], folder, "--in-process")
    share = here["harness_s"] / here["wall_s"]
    per_case = f"{here['harness_s'] / last['cases'] * 1e3:.2f} ms a case"
    goal(
        f"bookkeeping, {last['cases']} cases --in-process ({per_case})",
        f"{share:.1%}",
        f"<= {HARNESS_SHARE_GOAL:.0%}",
        share <= HARNESS_SHARE_GOAL,
    )
    trip = (last["harness_s"] - here["harness_s"]) / last["cases"] * 1e3
    print(f"in a worker (the default) the harness is {last['harness_s'] / last['wall_s']:.1%}: its round trip adds {trip:.2f} ms a case")
    largest = folder / f"tiny-{last['cases']}.json"
    megabytes = last["bytes"] / 1e6
    goal(
        f"results file, {last['cases']} cases", f"{megabytes:.1f} MB", f"<= {FILE_GOAL_BYTES / 1e6:g} MB", last["bytes"] <= FILE_GOAL_BYTES
    )
    for label, argv in (("show", ["show", str(largest)]), ("compare", ["compare", str(largest), str(largest)])):
        seconds, _ = timed_asyncbench(argv)
        goal(f"{label} of the {last['cases']}-case file", f"{seconds:.2f} s", f"<= {READ_GOAL_S:g} s", seconds <= READ_GOAL_S)
    if args.keep is None:
        print(f"(files in {folder}; --keep DIR to choose where)")


if __name__ == "__main__":
    main()
