"""Do the shipped gate configs pass unchanged code under `asyncbench ab`, and in how long?

For each config (default: configs/ci-gate.yaml and configs/ab-gate.yaml),
--runs gates of `asyncbench ab CONFIG --base HEAD` (head: the working tree,
so commit first to measure identical sides), one BLAS/OpenMP thread per
process as the CI recipes set, at the default --gate-time. Printed per
config: gates that exited non-zero (goal: at most 1 in 100, with its
Clopper-Pearson 95% interval), wrong verdicts (FASTER or SLOWER on identical
code), each gate's wall time (goal: at most 3 minutes), and per verdict the
labels, the margin it was judged at and its blocks' spread: the robust SD
and the extremes of each block's log paired ratio, pooled over the gates.
That spread is what a case's `ab_margin` must allow (the config's comments
quote it).

    python benchmarks/ab_configs.py --runs 3                              # ~13 minutes on 2 cores
    python benchmarks/ab_configs.py --runs 100 --config configs/ci-gate.yaml
    python benchmarks/ab_configs.py --hog --runs 5                        # beside an intermittent CPU hog
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))
from ab_gate import _rate, tenant  # noqa: E402 - the same tenant and rates as ab_gate.py's

CONFIGS = ("configs/ci-gate.yaml", "configs/ab-gate.yaml")
GOAL_S = 180.0  # a gate's wall time, at most
MAD_TO_SD = 1.4826  # a normal's SD from its median absolute deviation


def one_gate(config: str, out: Path) -> tuple[int, float, dict]:
    """(exit code, wall seconds, the ab file) of one `ab CONFIG --base HEAD`."""
    env = {**os.environ, "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1"}
    argv = [sys.executable, "-m", "asyncbench", "ab", config, "--base", "HEAD", "--no-progress", "-o", str(out)]
    start = time.perf_counter()
    done = subprocess.run(argv, cwd=ROOT, env=env, capture_output=True, text=True, check=False)
    seconds = time.perf_counter() - start
    if done.returncode not in (0, 1):
        raise SystemExit(f"ab {config} exited {done.returncode}: {done.stderr.strip()[-400:]}")
    return done.returncode, seconds, json.loads(out.read_text())


def spread(values: list[float]) -> str:
    centre = statistics.median(values)
    sd = MAD_TO_SD * statistics.median(abs(v - centre) for v in values)
    return f"±{sd * 100:.1f}% (robust SD), {min(values) * 100:+.1f}% … {max(values) * 100:+.1f}% over {len(values)} blocks"


def report(config: str, gates: list[tuple[int, float, dict]]) -> None:
    failed = sum(code != 0 for code, _, _ in gates)
    walls = sorted(seconds for _, seconds, _ in gates)
    labels: dict[tuple[str, str], list[str]] = defaultdict(list)
    logs: dict[tuple[str, str], list[float]] = defaultdict(list)
    margins: dict[str, set[float]] = defaultdict(set)
    wrong = 0
    for _, _, data in gates:
        for case in data["cases"]:
            if case.get("margin") is not None:
                margins[case["id"]].add(case["margin"])
            for ratio in case.get("ratios") or ():
                key = (case["id"], ratio["name"])
                labels[key].append(ratio["label"])
                logs[key] += ratio.get("block_log_ratios") or []
                wrong += ratio["label"] in ("FASTER", "SLOWER")
    print(f"\n{config}: {len(gates)} gates of identical sides")
    print(f"  gates that exit non-zero: {_rate(failed, len(gates))}   (goal: at most 1%)")
    print(f"  wrong verdicts (FASTER or SLOWER): {wrong}")
    print(
        f"  wall time: median {statistics.median(walls):.0f} s, longest {walls[-1]:.0f} s; "
        f"{sum(w > GOAL_S for w in walls)} over {GOAL_S:.0f} s"
    )
    for (case_id, name), found in labels.items():
        counts = ", ".join(f"{label} {found.count(label)}" for label in sorted(set(found)))
        margin = "/".join(f"{m * 100:g}%" for m in sorted(margins[case_id])) or "?"
        blocks = spread(logs[(case_id, name)]) if len(logs[(case_id, name)]) >= 3 else "no blocks kept"
        print(f"  {case_id} {name}: {counts}; margin {margin}; blocks {blocks}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--config", action="append", help=f"a config to gate (repeatable) [{', '.join(CONFIGS)}]")
    parser.add_argument("--runs", type=int, default=3, help="gates per config [3]")
    parser.add_argument("--hog", action="store_true", help="an intermittent CPU hog beside the gates")
    parser.add_argument("--json", help="keep every gate's ab file, exit and wall time here (JSON, per config), after each gate")
    args = parser.parse_args()
    dirty = subprocess.run(["git", "status", "--porcelain", "--", "configs", "asyncbench"], cwd=ROOT, capture_output=True, text=True)
    if dirty.stdout.strip():
        print("note: the working tree differs from HEAD: the sides are not identical", file=sys.stderr)
    with tenant(args.hog), tempfile.TemporaryDirectory() as tmp:
        _configs(args, Path(tmp))


def _configs(args: argparse.Namespace, tmp: Path) -> None:
    kept: dict[str, list[dict]] = {}
    for config in args.config or CONFIGS:
        gates: list[tuple[int, float, dict]] = []
        kept[config] = []
        for run in range(args.runs):
            gates.append(one_gate(config, tmp / f"ab{run}.json"))
            code, seconds, data = gates[-1]
            print(f"{config} gate {run + 1}/{args.runs}: exit {code} in {seconds:.0f} s", file=sys.stderr, flush=True)
            kept[config].append({**data, "gate_exit": code, "gate_wall_s": seconds})
            if args.json:  # after every gate: a run of hours stopped early keeps each gate it finished
                Path(args.json).write_text(json.dumps(kept, indent=1))
        report(config, gates)


if __name__ == "__main__":
    main()
