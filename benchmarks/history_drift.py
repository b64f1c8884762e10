"""Can the history see a planted step on a busy runner? Raw run medians against `ab` ratios to a pinned base.

Builds a throwaway git repository with a user's package (`mypkg.REPEAT`) and
two step workloads: `changed` (REPEAT products of 128² float32 matrices, a
few ms) and `flat` (always 100 such products). Commits it and pins that
commit as the base. Then, with an intermittent CPU hog beside every run
(benchmarks/ab_gate.py's: busy 0.5-4 s, idle 0.5-4 s), records
--runs-before runs with the head's REPEAT at 100 and --runs-after runs with
it grown by --change percent, each run twice in one store:

- `asyncbench run gate.yaml --record --label run-N`: each case's median done
  time, a series that carries the machine's drift between runs;
- `asyncbench ab gate.yaml --base PINNED -o ab.json` then `asyncbench record
  ab.json --label ab-N`: each case's paired ratio head/base, measured round
  by round in the same blocks of processes, where the drift cancels.

Then reads the store and prints, per case and series: the change points the
store found (where, ratio, 95% interval, p), whether the planted step was
found where it starts, after how many of the runs after it (the store looks
again at every record), and whether `flat` shows none; and the spread of the
series (for `flat`'s ratios: what the paired floor,
changes.PAIRED_MIN_MAGNITUDE, stands on). Each series is also judged with
the other kind's floor, to show what the floor does. 30-70 s a run here
(6 to 10 minutes in all).

    python benchmarks/history_drift.py                       # 6 + 6 runs, +30% from the 7th
    python benchmarks/history_drift.py --change 5 --json drift5.json
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any, Sequence

from common import git, tenant, timed_asyncbench  # benchmarks/ is sys.path[0] when this runs as a script

from asyncbench.history import changes, store, target
from asyncbench.history.model import Point, Series

WORKLOAD = """
import numpy as np

import asyncbench
import mypkg


def _step(repeat):
    def make(backend, device, params):
        x = np.ones((128, 128), np.float32)

        def step():
            for _ in range(repeat()):
                x @ x

        return step

    return make


# changed: REPEAT products of 128² matrices (a few ms); flat: always 100 of them
changed = asyncbench.step(sync_every=(0,), steps=1, name="changed")(_step(lambda: mypkg.REPEAT))
flat = asyncbench.step(sync_every=(0,), steps=1, name="flat")(_step(lambda: 100))
"""
CONFIG = """\
defaults: {devices: [cpu], warmup: 2, backends: [numpy]}
experiments:
  - name: changed
    workload: work.py:changed
  - name: flat
    workload: work.py:flat
"""
BASE_REPEAT = 100


def _asyncbench(repo: Path, *args: str, ok: Sequence[int] = (0,), says: str = "", tries: int = 1) -> float:
    """One asyncbench command in the repository; its wall time. An exit outside `ok`, or no `says` in its stderr
    (an `ab` that wrote no file), is said and tried again, `tries` times in all, then stops the benchmark."""
    for attempt in range(1, tries + 1):
        seconds, done = timed_asyncbench(args, cwd=repo, ok=None)
        if done.returncode in ok and says in done.stderr:
            return seconds
        failed = (
            f"asyncbench {' '.join(args)}: exit {done.returncode} (try {attempt} of {tries})\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}"
        )
        print(failed, flush=True)
    raise SystemExit(failed)


def _repository(root: Path) -> str:
    """The throwaway repository, committed: the pinned base's sha."""
    (root / "mypkg.py").write_text(f"REPEAT = {BASE_REPEAT}\n")
    (root / "work.py").write_text(WORKLOAD)
    (root / "gate.yaml").write_text(CONFIG)
    (root / ".gitignore").write_text("*.json\n*.journal\n*.sqlite\n__pycache__/\n.asyncbench/\n")
    git(root, "init", "-q")
    git(root, "add", ".")
    git(root, "commit", "-qm", "base")
    return subprocess.run(["git", "-C", str(root), "rev-parse", "HEAD"], capture_output=True, text=True, check=True).stdout.strip()


def _record_runs(repo: Path, base: str, history: str, repeats: Sequence[int], gate_time: str) -> list[dict[str, Any]]:
    """Each run: the head's REPEAT committed, a recorded `run`, then an `ab` against the pinned base, recorded."""
    walls = []
    for number, repeat in enumerate(repeats, start=1):
        (repo / "mypkg.py").write_text(f"REPEAT = {repeat}\n")
        git(repo, "commit", "-qam", f"run {number}", "--allow-empty")
        run_s = _asyncbench(
            repo, "run", "gate.yaml", "--no-progress", "-o", "run.json", "--record", "--history", history, "--label", f"run-{number}"
        )
        (repo / "ab.json").unlink(missing_ok=True)  # a gate that wrote none must not record the last one again
        ab_s = _asyncbench(
            repo,
            "ab",
            "gate.yaml",
            "--base",
            base,
            "--gate-time",
            gate_time,
            "--no-progress",
            "-o",
            "ab.json",
            ok=(0, 1),
            says="written: ab.json",
            tries=2,
        )
        _asyncbench(repo, "record", "ab.json", "--history", history, "--label", f"ab-{number}", says="recorded as run")
        cases = {case["id"].split("[")[0]: case for case in json.loads((repo / "ab.json").read_text())["cases"]}
        labels = {name: [r["label"] for r in case["ratios"]] for name, case in cases.items()}
        walls.append({"run": number, "repeat": repeat, "run_s": run_s, "ab_s": ab_s, "ab_labels": labels})
        print(f"  run {number:>2}: REPEAT {repeat}, run {run_s:.0f} s, ab {ab_s:.0f} s, ab verdicts {labels}", flush=True)
    return walls


def _spread(values: Sequence[float]) -> dict[str, float]:
    middle = statistics.median(values)
    return {
        "median": middle,
        "min": min(values),
        "max": max(values),
        "max_over_min": max(values) / min(values) - 1,
        "rel_sd": statistics.stdev(values) / statistics.mean(values) if len(values) > 1 else 0.0,
        "most_off_median": max(abs(v / middle - 1) for v in values),
    }


def _judge(points: Sequence[Point], before: int, smallest: float) -> dict[str, Any]:
    """Changes of the whole series at this floor; whether the step (at point `before`, 0-based) is found there, and
    after how many points past it (the store looks again at each record); false changes anywhere, in any prefix."""
    whole = changes.change_points(points, smallest)
    step_run = points[before].run if before < len(points) else None
    first_seen = None
    false_prefixes = 0
    for end in range(3, len(points) + 1):
        found = changes.change_points(points[:end], smallest)
        if any(c.run != step_run for c in found):
            false_prefixes += 1
        if first_seen is None and step_run is not None and any(c.run == step_run for c in found):
            first_seen = end - before  # runs recorded from the step's first on
    return {
        "floor": smallest,
        "changes": [_said(c, points) for c in whole],
        "step_found_at_start": step_run is not None and any(c.run == step_run for c in whole),
        "step_seen_after_runs": first_seen,
        "false_in_prefixes": false_prefixes,
    }


def _said(change: Any, points: Sequence[Point]) -> dict[str, Any]:
    position = next(i for i, p in enumerate(points) if p.run == change.run) + 1
    return {
        "point": position,
        "at": change.at,
        "ratio": change.ratio,
        "low": change.ratio_low,
        "high": change.ratio_high,
        "p": change.p_value,
    }


def _text(change: dict[str, Any]) -> str:
    interval = f"[{change['low']:.3f}, {change['high']:.3f}]" if change["low"] is not None else "[?]"
    return f"point {change['point']} ({change['at']}) ×{change['ratio']:.3f} {interval} p {change['p']:.1e}"


def _analyse(found: Sequence[Series], before: int, truth: float) -> dict[str, Any]:
    kinds = {}
    for one in found:
        name = one.case.split("[")[0]
        if one.quantity == "done_s" and one.variant:
            kind = "raw done_s"
        elif changes.is_paired(one.quantity, one.unit):
            kind = "ab ratio"
        else:
            continue
        points = list(one.points)
        values = [p.value for p in points]
        own = changes.min_magnitude(one.quantity, one.unit)
        other = changes.MIN_MAGNITUDE if own != changes.MIN_MAGNITUDE else changes.PAIRED_MIN_MAGNITUDE
        kinds[f"{name} {kind}"] = {
            "case": name,
            "kind": kind,
            "values": values,
            "intervals": [(p.low, p.high) for p in points],
            "store_changes": [_said(c, points) for c in one.change_points],
            "own_floor": _judge(points, before, own),
            "other_floor": _judge(points, before, other),
            "spread_before": _spread(values[:before]),
            "spread_all": _spread(values),
            "step_measured": statistics.median(values[before:]) / statistics.median(values[:before]) if len(values) > before else None,
            "step_planted": truth if name == "changed" else 1.0,
        }
    return kinds


def _report(kinds: dict[str, Any], before: int, after: int) -> None:
    for label, row in sorted(kinds.items()):
        planted = row["step_planted"]
        values = row["values"]
        unit = "ms" if row["kind"] == "raw done_s" else "x"
        shown = ", ".join(f"{v * 1e3:.2f}" if unit == "ms" else f"{v:.3f}" for v in values)
        print(f"{label} ({unit}): {shown}")
        spread = row["spread_before"] if planted != 1.0 else row["spread_all"]
        which = f"first {before}" if planted != 1.0 else "all"
        print(
            f"  spread ({which}): max/min {spread['max_over_min']:+.1%}, relative SD {spread['rel_sd']:.2%}, "
            f"farthest from the median {spread['most_off_median']:.2%}"
            + (f"; step measured ×{row['step_measured']:.3f} (planted ×{planted:.3f})" if planted != 1.0 else "")
        )
        print(f"  store's change points: {'; '.join(_text(c) for c in row['store_changes']) or 'none'}")
        for key in ("own_floor", "other_floor"):
            judged = row[key]
            words = "; ".join(_text(c) for c in judged["changes"]) or "none"
            if planted != 1.0:
                seen = judged["step_seen_after_runs"]
                verdict = f"step found where it starts: {'yes' if judged['step_found_at_start'] else 'NO'}" + (
                    f", first seen with {seen} of the {after} runs after it recorded" if seen else ""
                )
            else:
                verdict = "no change: " + ("yes" if not judged["changes"] else "NO")
            print(
                f"  floor {judged['floor']:.0%} ({'its own' if key == 'own_floor' else 'the other kind'}'s): {words} — {verdict}; "
                f"prefixes with a false change {judged['false_in_prefixes']}"
            )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs-before", type=int, default=6, help="runs with the head's REPEAT unchanged")
    parser.add_argument("--runs-after", type=int, default=6, help="runs with it grown by --change")
    parser.add_argument("--change", type=float, default=30, help="the planted step, percent more work")
    parser.add_argument("--gate-time", default="60s", help="each `ab` gate's --gate-time")
    parser.add_argument("--no-hog", action="store_true", help="no CPU hog beside the runs")
    parser.add_argument("--json", help="keep every series' values, intervals, changes and spreads here")
    args = parser.parse_args()
    repeat = round(BASE_REPEAT * (1 + args.change / 100))
    truth = repeat / BASE_REPEAT  # the products dominate a sample: the loop and the harness add well under 0.5%
    repeats = [BASE_REPEAT] * args.runs_before + [repeat] * args.runs_after
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # both sides alike; said in the output
    os.environ.pop("ASYNCBENCH_HISTORY", None)
    started = time.perf_counter()
    with tenant(not args.no_hog), tempfile.TemporaryDirectory() as root:
        repo = Path(root) / "repo"
        repo.mkdir()
        base = _repository(repo)
        history = str(Path(root) / "history.sqlite")
        print(
            f"hog {'off' if args.no_hog else 'on'}, OPENBLAS_NUM_THREADS={os.environ['OPENBLAS_NUM_THREADS']}; "
            f"{args.runs_before} runs at REPEAT {BASE_REPEAT}, then {args.runs_after} at {repeat} (×{truth:.2f}); "
            f"ab against the pinned base {base[:10]}, --gate-time {args.gate_time}",
            flush=True,
        )
        walls = _record_runs(repo, base, history, repeats, args.gate_time)
        found = store.open_store(target.resolve(history)).series()
    kinds = _analyse(found, args.runs_before, truth)
    print(
        f"\nchange points at p < {changes.MAX_P_VALUE:g}; floors: raw medians {changes.MIN_MAGNITUDE:.0%}, "
        f"paired ratios {changes.PAIRED_MIN_MAGNITUDE:.0%}; {time.perf_counter() - started:.0f} s in all"
    )
    _report(kinds, args.runs_before, args.runs_after)
    if args.json:
        Path(args.json).write_text(json.dumps({"args": vars(args), "truth": truth, "runs": walls, "series": kinds}, indent=1))


if __name__ == "__main__":
    main()
