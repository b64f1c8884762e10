"""Do the shipped gate configs pass unchanged code under `asyncbench ab`, and in how long?

For each config (default: configs/ci-gate.yaml and configs/ab-gate.yaml),
--runs gates of `asyncbench ab CONFIG --base HEAD` (head: the working tree,
so commit first to measure identical sides), one BLAS/OpenMP thread per
process as the CI recipes set, at the default --gate-time (or --gate-time
and --gate-time-max as given; --alternate gates each config alternately
with the target alone and with the cap, so both see the same hours), and
with --head-at-head both sides from HEAD (identical sides although the
working tree is not committed). Printed per
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
    python benchmarks/ab_configs.py --config configs/ci-gate.yaml --runs 4 --head-at-head \
        --gate-time 120s --gate-time-max 360s --alternate                 # the target alone, then with the cap
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from collections import defaultdict
from pathlib import Path
from typing import Sequence

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))
from ab_gate import _rate  # noqa: E402 - the same rates as ab_gate.py's
from common import tenant, timed_asyncbench  # noqa: E402

CONFIGS = ("configs/ci-gate.yaml", "configs/ab-gate.yaml")
GOAL_S = 180.0  # a gate's wall time, at most
MAD_TO_SD = 1.4826  # a normal's SD from its median absolute deviation


def one_gate(config: str, out: Path, times: Sequence[str] = (), head_at_head: bool = False) -> tuple[int, float, dict]:
    """(exit code, wall seconds, the ab file) of one `ab CONFIG --base HEAD` (`times`: its gate-time options)."""
    env = {**os.environ, "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1"}
    argv = ["ab", config, "--base", "HEAD", "--no-progress", "-o", str(out), *times]
    argv += ["--head", "HEAD"] if head_at_head else []
    seconds, done = timed_asyncbench(argv, cwd=ROOT, env=env)
    return done.returncode, seconds, json.loads(out.read_text())


def spread(values: list[float]) -> str:
    centre = statistics.median(values)
    sd = MAD_TO_SD * statistics.median(abs(v - centre) for v in values)
    return f"±{sd * 100:.1f}% (robust SD), {min(values) * 100:+.1f}% … {max(values) * 100:+.1f}% over {len(values)} blocks"


def report(config: str, gates: list[tuple[int, float, dict]], what: str = "") -> None:
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
    print(f"\n{config}{what}: {len(gates)} gates of identical sides")
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
    for case_id in dict.fromkeys(case_id for case_id, _ in labels):
        rows = [c for _, _, data in gates for c in data["cases"] if c["id"] == case_id and c.get("ratios")]
        counts = sorted(c.get("blocks", 0) for c in rows)
        with_intervals = [c for c in rows if all(r.get("ratio_ci") for r in c["ratios"])]
        excluded = [max(r["ratio_ci"][1] for r in c["ratios"]) - 1 for c in with_intervals]
        detectable = [max(_detectable(r, c.get("margin") or 0.0) for r in c["ratios"]) for c in with_intervals]
        print(
            f"  {case_id}: blocks {counts[0]}-{counts[-1]} (median {statistics.median(counts):g}); "
            + (
                f"slowdowns excluded beyond {_spread(excluded)}; the smallest it would have called SLOWER {_spread(detectable)}"
                if with_intervals
                else "no interval"
            )
        )


def _detectable(ratio: dict, margin: float) -> float:
    """The smallest slowdown this verdict's interval would have called SLOWER, as a fraction: the interval moved up
    until its lower end clears 1 + margin ((1 + margin) x estimate / lower end, minus 1)."""
    low = ratio["ratio_ci"][0]
    return (1 + margin) * ratio["ratio"] / low - 1 if low > 0 else float("inf")


def _spread(values: list[float]) -> str:
    """'+3.1% (median; +2.0 … +4.4%)'."""
    return f"{statistics.median(values) * 100:+.1f}% (median; {min(values) * 100:+.1f} … {max(values) * 100:+.1f}%)"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--config", action="append", help=f"a config to gate (repeatable) [{', '.join(CONFIGS)}]")
    parser.add_argument("--runs", type=int, default=3, help="gates per config [3]")
    parser.add_argument("--hog", action="store_true", help="an intermittent CPU hog beside the gates")
    parser.add_argument("--json", help="keep every gate's ab file, exit and wall time here (JSON, per config), after each gate")
    parser.add_argument("--summarize", metavar="FILE", help="print the report of a --json file (a run stopped early too), run nothing")
    parser.add_argument("--gate-time", help="each gate's --gate-time (its target) [ab's default]")
    parser.add_argument("--gate-time-max", help="each gate's --gate-time-max (its cap) [ab's default]")
    parser.add_argument(
        "--alternate", action="store_true", help="alternate gates with --gate-time-max equal to --gate-time (no cap) and as given"
    )
    parser.add_argument(
        "--head-at-head", action="store_true", help="both sides from HEAD (--head HEAD): identical whatever the working tree"
    )
    args = parser.parse_args()
    if args.summarize:
        for key, kept in json.loads(Path(args.summarize).read_text()).items():
            config, _, what = key.partition(" ")
            report(config, [(g["gate_exit"], g["gate_wall_s"], g) for g in kept], f" {what}" if what else "")
        return
    dirty = subprocess.run(["git", "status", "--porcelain", "--", "configs", "asyncbench"], cwd=ROOT, capture_output=True, text=True)
    if dirty.stdout.strip() and not args.head_at_head:
        print("note: the working tree differs from HEAD: the sides are not identical", file=sys.stderr)
    with tenant(args.hog), tempfile.TemporaryDirectory() as tmp:
        _configs(args, Path(tmp))


def _settings(args: argparse.Namespace) -> list[tuple[str, list[str]]]:
    """(what, the gate-time options) of each setting gated: one, or with --alternate the target alone and the cap."""
    given = ["--gate-time", args.gate_time] if args.gate_time else []
    given += ["--gate-time-max", args.gate_time_max] if args.gate_time_max else []
    if not args.alternate:
        return [(f" ({' '.join(given)})" if given else "", given)]
    target = args.gate_time or "120s"
    return [(f" (--gate-time {target}, no cap)", ["--gate-time", target, "--gate-time-max", target]), (f" ({' '.join(given)})", given)]


def _configs(args: argparse.Namespace, tmp: Path) -> None:
    kept: dict[str, list[dict]] = {}
    settings = _settings(args)
    for config in args.config or CONFIGS:
        gates: dict[str, list[tuple[int, float, dict]]] = {what: [] for what, _ in settings}
        for run in range(args.runs):
            for what, times in settings:
                gates[what].append(one_gate(config, tmp / f"ab{run}.json", times, args.head_at_head))
                code, seconds, data = gates[what][-1]
                print(f"{config}{what} gate {run + 1}/{args.runs}: exit {code} in {seconds:.0f} s", file=sys.stderr, flush=True)
                kept.setdefault(config + what, []).append({**data, "gate_exit": code, "gate_wall_s": seconds})
                if args.json:  # after every gate: a run of hours stopped early keeps each gate it finished
                    Path(args.json).write_text(json.dumps(kept, indent=1))
        for what, _ in settings:
            report(config, gates[what], what)


if __name__ == "__main__":
    main()
