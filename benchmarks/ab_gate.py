"""How often `asyncbench ab` cries wolf, catches a real slowdown, and covers the truth, on this machine.

Builds a throwaway git repository with a user's package (`mypkg.REPEAT`) and
two step workloads: a fast one (REPEAT products of 64² matrices, about 0.6 ms a
sample) and a slow one (4 × REPEAT products of 256², about 100 ms; both on one
core of the 2-core machine, 2026-11-27). Then,
with an intermittent CPU hog beside the runs (busy 0.5-4 s, idle 0.5-4 s,
started and stopped here), for each condition CHANGE@MARGIN, --runs gates of
`ab --base HEAD` with the head's REPEAT grown by CHANGE percent, at that margin:

- gates that exit 1 (on identical sides: false alarms; goal at most 1%);
- per case, each label's count, wrong verdicts (FASTER anywhere; SLOWER where
  the planted change is within the margin), and how often the interval
  covers the planted ratio (goal at least 95%);
- the wall time of each gate.

    python benchmarks/ab_gate.py --runs 10                     # 0@5, 0@1, 2@1: 30 gates
    python benchmarks/ab_gate.py --runs 100 --conditions 0@5   # the issue's 100 identical gates

Prints rates with their Clopper-Pearson 95% intervals (scipy); --json FILE
keeps every gate's ratios and intervals, rewritten after each gate, and
--summarize FILE prints the report of such a file (of a run stopped early too).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
from pathlib import Path

from common import git, tenant, timed_asyncbench  # benchmarks/ is sys.path[0] when this runs as a script

WORKLOAD = """
import numpy as np

import asyncbench
import mypkg


def _step(size, repeat):
    def make(backend, device, params):
        x = np.ones((size, size), np.float32)

        def step():
            for _ in range(repeat(params)):
                x @ x

        return step

    return make


# fast: REPEAT products of 64² matrices (about 0.6 ms); slow: 4 × REPEAT products of 256² (about 100 ms, one core;
# until 2026-11-27 it was 8 × REPEAT, which took 0.22-0.38 s there, not the 100 ms a slow case was meant to be)
fast = asyncbench.step(sync_every=(0,), steps=1, name="fast")(_step(64, lambda p: mypkg.REPEAT))
slow = asyncbench.step(sync_every=(0,), steps=1, name="slow")(_step(256, lambda p: 4 * mypkg.REPEAT))
"""
CONFIG = """\
defaults: {devices: [cpu], warmup: 2, backends: [numpy]}
experiments:
  - name: fast
    workload: work.py:fast
  - name: slow
    workload: work.py:slow
"""
BASE_REPEAT = 100


def _repository(root: Path) -> Path:
    (root / "mypkg.py").write_text(f"REPEAT = {BASE_REPEAT}\n")
    (root / "work.py").write_text(WORKLOAD)
    (root / "gate.yaml").write_text(CONFIG)
    git(root, "init", "-q")
    git(root, "add", ".")
    git(root, "commit", "-qm", "base")
    return root


KEPT: list[dict] = []


def _gate(repo: Path, repeat: int, margin: str, gate_time: str, keep: Path | None, gate_time_max: str | None = None) -> dict:
    """One `ab --base HEAD` with the head's REPEAT set: its record in KEPT (REPEAT, margin, exit code, wall time, the
    cases' rows), and KEPT rewritten to `keep` (--json) so that a run of hours stopped early keeps every gate it
    finished."""
    (repo / "mypkg.py").write_text(f"REPEAT = {repeat}\n")
    command = ["ab", "gate.yaml", "--base", "HEAD", "--no-progress", "-o", "ab.json"]
    command += ["--max-regression", margin, "--gate-time", gate_time, *(["--gate-time-max", gate_time_max] if gate_time_max else [])]
    wall, done = timed_asyncbench(command, cwd=repo, ok=None)
    if done.returncode not in (0, 1):
        print(done.stdout[-2000:], done.stderr[-2000:], file=sys.stderr)
    data = json.loads((repo / "ab.json").read_text())
    record = {"repeat": repeat, "margin": margin, "code": done.returncode, "wall_s": wall, "cases": data["cases"]}
    KEPT.append(record)
    if keep is not None:
        keep.write_text(json.dumps(KEPT, indent=1))
    print(f"REPEAT {repeat}, margin {margin}: exit {done.returncode} in {wall:.0f} s", file=sys.stderr, flush=True)
    return record


def _rate(hits: int, runs: int) -> str:
    from scipy.stats import binomtest

    if runs == 0:
        return "0/0"
    interval = binomtest(hits, runs).proportion_ci(0.95)
    return f"{hits}/{runs} = {hits / runs:.1%} [95% CI {interval.low:.1%}–{interval.high:.1%}]"


def _condition(
    repo: Path, runs: int, change: float, margin: str, gate_time: str, keep: Path | None, gate_time_max: str | None = None
) -> None:
    """`runs` gates with the head's work grown by `change` percent, then what they show (`_report`)."""
    repeat = round(BASE_REPEAT * (1 + change / 100))
    _report([_gate(repo, repeat, margin, gate_time, keep, gate_time_max) for _ in range(runs)])


def _report(gates: list[dict]) -> None:
    """Exits, verdicts and coverage of the planted truth over gates of one condition (as KEPT holds them)."""
    repeat, margin = gates[0]["repeat"], gates[0]["margin"]
    truth = repeat / BASE_REPEAT  # the products dominate a sample: the loop and the harness add well under 0.5%
    codes, walls = [g["code"] for g in gates], [g["wall_s"] for g in gates]
    per_case: dict[str, list[dict]] = {}
    for gate in gates:
        for case in gate["cases"]:
            per_case.setdefault(case["id"].split("[")[0], []).extend(case["ratios"] or ())
    what = "identical sides" if repeat == BASE_REPEAT else f"planted {truth - 1:+.1%} (REPEAT {BASE_REPEAT} → {repeat})"
    print(
        f"{what}, margin {margin}: gates that exit 1: {_rate(sum(c == 1 for c in codes), len(gates))}; "
        f"other exits {sorted(set(codes) - {0, 1})}"
    )
    for name, rows in per_case.items():
        labels = [r["label"] for r in rows]
        covered = sum(1 for r in rows if r["ratio_ci"] and r["ratio_ci"][0] <= truth <= r["ratio_ci"][1])
        wrong = sum(1 for r in rows if r["label"] == "FASTER" or (r["label"] == "SLOWER" and truth <= 1 + float(margin.strip("%")) / 100))
        print(
            f"  {name}: "
            + ", ".join(f"{label} {labels.count(label)}" for label in ("SAME", "NOT SLOWER", "FASTER", "SLOWER", "INCONCLUSIVE"))
            + f"; wrong verdicts {_rate(wrong, len(rows))}; interval covers the truth {_rate(covered, len(rows))}"
        )
    print(f"  wall time of one gate: median {statistics.median(walls):.0f} s, max {max(walls):.0f} s")


def summarize(path: Path) -> None:
    """--summarize: the report of every condition in a --json file, a finished run's or one stopped early."""
    kept = json.loads(path.read_text())
    for condition in dict.fromkeys((g["repeat"], g["margin"]) for g in kept):
        _report([g for g in kept if (g["repeat"], g["margin"]) == condition])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=20, help="gates per condition")
    parser.add_argument("--conditions", default="0@5,0@1,2@1", help="CHANGE@MARGIN in percent, comma-separated")
    parser.add_argument("--gate-time", default="120s", help="each gate's --gate-time")
    parser.add_argument("--gate-time-max", default=None, help="each gate's --gate-time-max [ab's default: 3 x --gate-time]")
    parser.add_argument("--no-hog", action="store_true", help="no CPU hog beside the runs")
    parser.add_argument("--json", help="keep every gate's cases, ratios and intervals here (rewritten after each gate)")
    parser.add_argument("--summarize", metavar="FILE", help="print the report of a --json file (a run stopped early too), run nothing")
    args = parser.parse_args()
    if args.summarize:
        summarize(Path(args.summarize))
        return
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # both sides alike (set it to try others); said in the output
    with tenant(not args.no_hog), tempfile.TemporaryDirectory() as root:
        repo = _repository(Path(root))
        print(f"hog {'off' if args.no_hog else 'on'}, OPENBLAS_NUM_THREADS={os.environ['OPENBLAS_NUM_THREADS']}")
        for item in filter(None, args.conditions.split(",")):
            change, _, margin = item.partition("@")
            keep = Path(args.json) if args.json else None
            _condition(repo, args.runs, float(change), f"{margin or 5}%", args.gate_time, keep, args.gate_time_max)


if __name__ == "__main__":
    main()
