"""Does the history find a planted step in run medians beside an intermittent neighbour, with the machine seen?

Issue 51's history goal, with the real CLI: --histories stores, each of 12
`asyncbench run --record` runs (numpy, two step workloads: `changed`,
128² products whose count grows --change percent from run 7, and `flat`,
which never changes), with an intermittent CPU hog beside every run
(benchmarks/ab_gate.py's: busy 0.5-4 s, idle 0.5-4 s). Each store then
reads its series back (`asyncbench history --format json`) and this
prints, per history: where the store found changes in `changed` and
`flat`, which runs it discounted and why (history.discount), and whether
the step was found within one run of where it starts; then the counts over
all histories, and, beside them, what the same points give searched as
recorded (every run kept: the history before the machine was seen).

    python benchmarks/history_machine.py                         # 10 histories, +30% from run 7
    python benchmarks/history_machine.py --histories 3 --json h.json --keep stores/
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from common import tenant  # benchmarks/ is sys.path[0] when this runs as a script
from history_drift import CONFIG  # the same two cases, `changed` and `flat`

from asyncbench.history import changes
from asyncbench.history.model import Point

WORKLOAD = """
import os

import numpy as np

import asyncbench


def _step(repeat):
    def make(backend, device, params):
        x = np.ones((128, 128), np.float32)

        def step():
            for _ in range(repeat):
                x @ x

        return step

    return make


changed = asyncbench.step(sync_every=(0,), steps=1, name="changed")(_step(int(os.environ["REPEAT"])))
flat = asyncbench.step(sync_every=(0,), steps=1, name="flat")(_step(100))
"""
RUNS = 12
STEP_AT = 7


def _history(folder: Path, number: int, grown: int, keep: str | None) -> list[dict[str, Any]]:
    Path(keep or folder).mkdir(parents=True, exist_ok=True)
    store = str(Path(keep or folder) / f"h{number}.sqlite")
    for run in range(1, RUNS + 1):
        repeat = grown if run >= STEP_AT else 100
        done = subprocess.run(
            [sys.executable, "-m", "asyncbench", "run", "gate.yaml", "--no-progress", "-o", "run.json", "--record", "--history", store]
            + ["--label", f"run-{run}"],
            cwd=folder,
            env={**os.environ, "REPEAT": str(repeat)},
            capture_output=True,
            text=True,
            check=False,
        )
        if done.returncode not in (0,):
            raise SystemExit(f"run {run}: exit {done.returncode}\n{done.stderr[-2000:]}")
    shown = subprocess.run(
        [sys.executable, "-m", "asyncbench", "history", "--history", store, "--format", "json"], cwd=folder, capture_output=True, text=True
    )
    return json.loads(shown.stdout)


def _found(series: dict[str, Any]) -> list[int]:
    """The runs (1-based) where the store found a change."""
    labels = {p["run"]: int(p["label"].split("-")[1]) for p in series["points"]}
    return [labels[c["run"]] for c in series["change_points"]]


def _as_recorded(series: dict[str, Any]) -> list[int]:
    """The changes of the same points searched as recorded, every run kept."""
    points = [Point(p["run"], p["created"], p["label"], p["revision"], p["value"], p["low"], p["high"]) for p in series["points"]]
    labels = {p.run: int(p.label.split("-")[1]) for p in points if p.label}
    return [labels[c.run] for c in changes.change_points(points)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--histories", type=int, default=10)
    parser.add_argument("--change", type=float, default=30.0, help="the planted step, percent more work")
    parser.add_argument("--json", help="write each history's series here")
    parser.add_argument("--keep", help="keep each history's store (h1.sqlite ...) in this folder")
    args = parser.parse_args()
    grown = round(100 * (1 + args.change / 100))
    tallies = {"seen": {"found": 0, "flat_quiet": 0}, "as recorded": {"found": 0, "flat_quiet": 0}}
    kept = []
    with tenant(True), tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        (folder / "work.py").write_text(WORKLOAD)
        (folder / "gate.yaml").write_text(CONFIG)
        for number in range(1, args.histories + 1):
            every = _history(folder, number, grown, args.keep)
            kept.append(every)
            found = {s["case"].split("[")[0]: s for s in every if s["quantity"] == "done_s" and s["variant"]}
            changed, flat = found["changed"], found["flat"]
            for how, of in (("seen", _found), ("as recorded", _as_recorded)):
                at, flat_at = of(changed), of(flat)
                hit = len(at) == 1 and abs(at[0] - STEP_AT) <= 1
                tallies[how]["found"] += hit
                tallies[how]["flat_quiet"] += not flat_at
                said = "found" if hit else "MISSED"
                print(f"history {number:>2} {how:>11}: changed at {at or 'none'} ({said}), flat at {flat_at or 'none'}")
            for name, one in found.items():
                for run, why in one["discounted"]:
                    label = next(p["label"] for p in one["points"] if p["run"] == run)
                    print(f"    {name}: discounted {label}: {why}")
    for how, counts in tallies.items():
        print(
            f"{how}: step found within one run of run {STEP_AT} in {counts['found']} of {args.histories}; "
            f"no change in flat in {counts['flat_quiet']} of {args.histories}"
        )
    if args.json:
        Path(args.json).write_text(json.dumps(kept, indent=1))


if __name__ == "__main__":
    sys.exit(main())
