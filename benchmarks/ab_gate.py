"""How often `asyncbench ab` cries wolf, and how often it catches a real slowdown, on this machine.

Builds a throwaway git repository with a user's package (`mypkg.REPEAT`) and
a workload that runs REPEAT small products per sample, plus the built-in
torch and numpy matmul. Then, with an intermittent CPU hog beside the runs
(busy 0.5-4 s, idle 0.5-4 s, started and stopped here):

- identical sides: `ab --base HEAD` on a clean tree, --runs times at the
  default 5% margin: every exit 1 is a false alarm (goal: at most 1%);
- a planted slowdown: the head's REPEAT grown by each change of --planted
  (CHANGE@MARGIN, default 10%@5% and 2%@1%), --planted-runs times each: the
  share of runs that say SLOWER for the user's workload; a change is only
  SLOWER beyond its margin, so a small change is looked for with a small
  margin — and identical sides are run at that margin too, --planted-runs
  times, to show what the small margin costs in false alarms;
- the wall time of each gate.

    python benchmarks/ab_gate.py                              # 20 runs per condition
    python benchmarks/ab_gate.py --runs 100 --planted-runs 20 # the issue's 100 identical gates (1-2 hours on 2 cores)

Prints rates, with their Clopper-Pearson 95% intervals (scipy), and times;
--json FILE keeps every gate's ratios and intervals.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

WORKLOAD = """
import numpy as np

import asyncbench
import mypkg


@asyncbench.step(sync_every=(0,), steps=1)
def work(backend, device, params):
    x = np.ones((128, 128), np.float32)

    def step():
        for _ in range(mypkg.REPEAT):
            x @ x

    return step
"""
CONFIG = """\
defaults: {devices: [cpu], min_samples: 10, max_time_s: 15, warmup: 2}
experiments:
  - name: user-work
    workload: work.py:work
    backends: [numpy]
  - name: gate-matmul
    workload: matmul
    backends: [torch]
    params: {size: 256, n_iter: 10, include_rng: false}
"""
BASE_REPEAT = 100


def _hog(stop: multiprocessing.synchronize.Event, seed: int) -> None:
    """Busy 0.5-4 s, idle 0.5-4 s, until told to stop: another tenant of a shared runner."""
    rng = random.Random(seed)
    while not stop.is_set():
        busy_until = time.monotonic() + rng.uniform(0.5, 4)
        while time.monotonic() < busy_until and not stop.is_set():
            sum(i * i for i in range(10_000))
        stop.wait(rng.uniform(0.5, 4))


def _git(repo: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(repo), "-c", "user.email=b@b", "-c", "user.name=b", *args], check=True, capture_output=True)


def _repository(root: Path) -> Path:
    (root / "mypkg.py").write_text(f"REPEAT = {BASE_REPEAT}\n")
    (root / "work.py").write_text(WORKLOAD)
    (root / "gate.yaml").write_text(CONFIG)
    _git(root, "init", "-q")
    _git(root, "add", ".")
    _git(root, "commit", "-qm", "base")
    return root


KEPT: list[dict] = []


def _gate(repo: Path, repeat: int, margin: str = "5%") -> tuple[int, dict[str, str], float]:
    """One `ab --base HEAD` with the head's REPEAT set: (exit code, label per case and variant, wall time)."""
    (repo / "mypkg.py").write_text(f"REPEAT = {repeat}\n")
    started = time.perf_counter()
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "asyncbench",
            "ab",
            "gate.yaml",
            "--base",
            "HEAD",
            "--no-progress",
            "-o",
            "ab.json",
            "--max-regression",
            margin,
        ],
        cwd=repo,
        capture_output=True,
        text=True,
        check=False,
    )
    wall = time.perf_counter() - started
    if done.returncode not in (0, 1):
        print(done.stdout[-2000:], done.stderr[-2000:], file=sys.stderr)
    data = json.loads((repo / "ab.json").read_text())
    KEPT.append({"repeat": repeat, "margin": margin, "code": done.returncode, "wall_s": wall, "cases": data["cases"]})
    labels = {f"{case['id']} {r['name']}": r["label"] for case in data["cases"] for r in case["ratios"]}
    return done.returncode, labels, wall


def _rate(hits: int, runs: int) -> str:
    from scipy.stats import binomtest

    interval = binomtest(hits, runs).proportion_ci(0.95)
    return f"{hits}/{runs} = {hits / runs:.0%} [95% CI {interval.low:.0%}–{interval.high:.0%}]"


def _identical(repo: Path, runs: int, margin: str, walls: list[float]) -> None:
    if runs == 0:
        return
    codes, verdicts = [], []
    for _ in range(runs):
        code, found, wall = _gate(repo, BASE_REPEAT, margin)
        codes.append(code)
        verdicts += found.values()
        walls.append(wall)
    print(f"identical sides, margin {margin}: runs that exit 1 (false alarms): {_rate(sum(c == 1 for c in codes), len(codes))}")
    print("  verdicts: " + ", ".join(f"{label} {verdicts.count(label)}" for label in ("SAME", "INCONCLUSIVE", "SLOWER", "FASTER")))


def _planted(repo: Path, runs: int, change: float, margin: str, walls: list[float]) -> None:
    repeat = round(BASE_REPEAT * (1 + change / 100))
    found = []
    for _ in range(runs):
        _, labels, wall = _gate(repo, repeat, margin)
        walls.append(wall)
        found.append(next(label for key, label in labels.items() if key.startswith("user-work")))
    print(
        f"planted +{change:g}% (REPEAT {BASE_REPEAT} → {repeat}), margin {margin}: SLOWER in {_rate(found.count('SLOWER'), len(found))}; "
        f"SAME {found.count('SAME')}, INCONCLUSIVE {found.count('INCONCLUSIVE')}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=20, help="identical-side gates at the 5%% margin")
    parser.add_argument("--planted-runs", type=int, default=20, help="gates per planted change (and identical ones at its margin)")
    parser.add_argument("--planted", default="10@5,2@1", help="CHANGE@MARGIN in percent, comma-separated")
    parser.add_argument("--no-hog", action="store_true", help="no CPU hog beside the runs")
    parser.add_argument("--json", help="keep every gate's cases, ratios and intervals here")
    args = parser.parse_args()
    stop = multiprocessing.Event()
    hog = None if args.no_hog else multiprocessing.Process(target=_hog, args=(stop, 1), daemon=True)
    if hog is not None:
        hog.start()
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # both sides alike (set it to try others); said in the output
    walls: list[float] = []
    try:
        with tempfile.TemporaryDirectory() as root:
            repo = _repository(Path(root))
            threads = os.environ["OPENBLAS_NUM_THREADS"]
            print(f"hog {'off' if args.no_hog else 'on'}, OPENBLAS_NUM_THREADS={threads}, torch's own thread settings")
            _identical(repo, args.runs, "5%", walls)
            for item in filter(None, args.planted.split(",")):
                change, _, margin = item.partition("@")
                _planted(repo, args.planted_runs, float(change), f"{margin or 5}%", walls)
                if margin and margin != "5":
                    _identical(repo, args.planted_runs, f"{margin}%", walls)
    finally:
        stop.set()
        if hog is not None:
            hog.join(5)
        if args.json:
            Path(args.json).write_text(json.dumps(KEPT, indent=1))
    print(f"wall time of one gate: median {statistics.median(walls):.0f} s, max {max(walls):.0f} s")


if __name__ == "__main__":
    main()
