"""Can two separate runs be compared on a shared machine? `compare` of identical code beside a neighbour, and of a planted change.

Issue 51's goals, measured with the real CLI (`asyncbench run` twice, then
`asyncbench compare`), on numpy and torch in every run (one case each):

- `identical`: the same code twice, one of the two runs beside a neighbour
  (alternately a steady CPU hog for the whole run and an intermittent one,
  busy 0.5-4 s / idle 0.5-4 s; which run gets it alternates too). Any
  FASTER or SLOWER is a wrong verdict;
- `planted`: two quiet runs, the current one doing --change percent more
  work (the step's product count grown), each verdict SLOWER is a catch.

The step is a chain of 300² float32 products on the backend's own arrays
(--ops of them, 8 by default: about 5 ms), work of another shape than the
machine's reference (4 products of 256²). Prints each verdict, its exit code, the
case's ratio and the machine's (its reference) and whether the machine
counted as moved, then the counts per scenario and backend, and how much
each case felt the machine's change (verdicts.machine.sensitivity: log case
/ log machine, where the machine moved by more than 5%).

    python benchmarks/separate_runs.py --pairs 25                      # 25 identical pairs, 10 planted at +25%
    python benchmarks/separate_runs.py --pairs 0 --planted 20 --change 10
    python benchmarks/separate_runs.py --json runs.json --keep kept/
    python benchmarks/separate_runs.py --rejudge kept/                 # the kept pairs judged with and without the machine
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any, Iterator

from common import tenant  # benchmarks/ is sys.path[0] when this runs as a script

WORKLOAD = """
import os

import asyncbench


@asyncbench.step(sync_every=(0,), steps=1, name="chain")
def chain(backend, device, params):
    ops = int(os.environ["PLANTED_OPS"])
    x = backend.ones((300, 300), "float32", device)

    def step():
        y = x
        for _ in range(ops):
            y = x @ x
        return y

    return step
"""


def _steady(stop: Any, seed: int) -> None:
    """Busy until told to stop: a neighbour that stays for the whole run."""
    while not stop.is_set():
        sum(i * i for i in range(10_000))


@contextlib.contextmanager
def neighbour(kind: str | None, seed: int) -> Iterator[None]:
    """A CPU hog in a process of its own, steady or intermittent (ab_gate's), under way before the block runs;
    nothing for None."""
    with tenant(kind is not None, _steady if kind == "steady" else None, seed):
        if kind is not None:
            time.sleep(0.3)
        yield


def run(folder: Path, name: str, ops: int, beside: str | None, seed: int) -> Path:
    out = folder / f"{name}.json"
    env = {**os.environ, "PLANTED_OPS": str(ops)}
    with neighbour(beside, seed):
        subprocess.run(
            [
                "asyncbench",
                "run",
                "-w",
                f"{folder / 'work.py'}:chain",
                "-d",
                "cpu",
                "-b",
                "numpy",
                "-b",
                "torch",
                "-o",
                str(out),
                "--no-progress",
            ],
            env=env,
            check=False,
            capture_output=True,
            cwd=folder,
        )
    return out


def compare(folder: Path, baseline: Path, current: Path, margin: str) -> tuple[int, list[dict[str, Any]]]:
    done = subprocess.run(
        ["asyncbench", "compare", str(baseline), str(current), "--format", "json", "--max-regression", margin],
        capture_output=True,
        text=True,
        cwd=folder,
    )
    if done.returncode not in (0, 1):
        raise SystemExit(f"compare failed ({done.returncode}): {done.stderr}")
    return done.returncode, json.loads(done.stdout)["rows"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=25, help="identical pairs, one run beside a neighbour")
    parser.add_argument("--planted", type=int, default=10, help="pairs of quiet runs with a planted change")
    parser.add_argument("--change", type=float, default=25.0, help="the planted change, percent")
    parser.add_argument("--ops", type=int, default=8, help="products of 300² matrices per step")
    parser.add_argument("--margin", default="10%")
    parser.add_argument("--json", help="write every verdict here")
    parser.add_argument("--keep", help="keep every pair's two results files in this folder (to judge them again)")
    parser.add_argument("--rejudge", help="judge the pairs kept in this folder again, with the machine and as before it")
    args = parser.parse_args()
    if args.rejudge:
        rejudge(Path(args.rejudge), args.margin)
        return
    rows: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        (folder / "work.py").write_text(WORKLOAD)
        for pair in range(args.pairs):
            kind = ("steady", "intermittent")[pair % 2]
            loud_first = pair % 4 >= 2
            first = run(folder, "a", args.ops, kind if loud_first else None, pair)
            second = run(folder, "b", args.ops, None if loud_first else kind, pair)
            code, compared = compare(folder, first, second, args.margin)
            _keep(args.keep, f"identical-{pair}", first, second)
            rows += [_row("identical", pair, kind, code, row, 1.0) for row in compared]
            _show(rows[-len(compared) :])
        grown = round(args.ops * (1 + args.change / 100))
        for pair in range(args.planted):
            first = run(folder, "a", args.ops, None, pair)
            second = run(folder, "b", grown, None, pair)
            code, compared = compare(folder, first, second, args.margin)
            _keep(args.keep, f"planted-{pair}", first, second)
            rows += [_row(f"planted +{grown / args.ops - 1:.0%}", pair, None, code, row, grown / args.ops) for row in compared]
            _show(rows[-len(compared) :])
    _summary(rows)
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1))


def rejudge(folder: Path, margin: str) -> None:
    """Each kept pair compared as `compare` does now and as it did before references (the same samples, the
    references dropped): the labels of each scenario both ways."""
    import dataclasses

    from asyncbench.results.schema import Report
    from asyncbench.verdicts import compare as comparing

    limit = comparing.parse_threshold(margin)
    tallies: dict[tuple[str, str], Counter[str]] = {}
    for first in sorted(folder.glob("*-a.json")):
        scenario = first.name.split("-")[0]
        pair = [Report.load(str(first)), Report.load(str(first).replace("-a.json", "-b.json"))]
        blind = [dataclasses.replace(r, results=tuple(dataclasses.replace(x, reference=None) for x in r.results)) for r in pair]
        for how, (old, new) in (("with the machine", pair), ("as before", blind)):
            for row in comparing.compare(old, new, limit).rows:
                tallies.setdefault((scenario, how), Counter())[str(row.label)] += 1
    for (scenario, how), counts in sorted(tallies.items()):
        print(f"{scenario:>10} {how:>16}: " + ", ".join(f"{n} {label}" for label, n in counts.most_common()))


def _keep(folder: str | None, name: str, first: Path, second: Path) -> None:
    if folder:
        Path(folder).mkdir(parents=True, exist_ok=True)
        shutil.copy(first, Path(folder) / f"{name}-a.json")
        shutil.copy(second, Path(folder) / f"{name}-b.json")


def _row(scenario: str, pair: int, kind: str | None, code: int, row: dict[str, Any], truth: float) -> dict[str, Any]:
    backend = row["id"].split("[", 1)[1].split(",", 1)[0]
    case, machine = row.get("case_ratio"), row.get("machine_ratio")
    felt = math.log(case / truth) / math.log(machine) if case and machine and abs(math.log(machine)) > math.log(1.05) else None
    return {
        "scenario": scenario,
        "pair": pair,
        "neighbour": kind,
        "backend": backend,
        "truth": truth,
        "label": row["label"],
        "exit": code,
        "case_ratio": case,
        "case_ci": row.get("case_ci"),
        "ratio": row.get("ratio"),
        "interval": row.get("ratio_ci"),
        "machine_ratio": machine,
        "machine_ci": row.get("machine_ci"),
        "machine_moved": row.get("machine_moved"),
        "machine": row.get("machine"),
        "sensitivity": felt,
    }


def _show(rows: list[dict[str, Any]]) -> None:
    for r in rows:
        machine = "-" if r["machine_ratio"] is None else f"{r['machine_ratio']:.3f}{' moved' if r['machine_moved'] else ''}"
        print(
            f"{r['scenario']:>14} {r['pair']:>3} {r['neighbour'] or 'quiet':>12} {r['backend']:>6}: {r['label']:<12} exit {r['exit']} "
            f"case {r['case_ratio']:.3f} machine {machine}",
            flush=True,
        )


def _summary(rows: list[dict[str, Any]]) -> None:
    print()
    for (scenario, backend), labels in sorted(_grouped(rows).items()):
        counts = Counter(labels)
        print(f"{scenario:>14} {backend:>6}: {len(labels)} verdicts: " + ", ".join(f"{n} {label}" for label, n in counts.most_common()))
    for moved in (False, True):
        felt = sorted(r["sensitivity"] for r in rows if r["sensitivity"] is not None and r["machine_moved"] is moved)
        if felt:
            where = "judged as moved (no verdict)" if moved else "taken out"
            print(
                f"sensitivity s = log(case / truth) / log(machine), machine moved > 5%, {where}: {len(felt)} cases, "
                f"min {felt[0]:.2f}, median {felt[len(felt) // 2]:.2f}, max {felt[-1]:.2f}"
            )
    wrong = sum(1 for r in rows if r["scenario"] == "identical" and r["label"] in ("FASTER", "SLOWER"))
    print(f"wrong verdicts on identical code: {wrong} of {sum(1 for r in rows if r['scenario'] == 'identical')}")


def _grouped(rows: list[dict[str, Any]]) -> dict[tuple[str, str], list[str]]:
    grouped: dict[tuple[str, str], list[str]] = {}
    for r in rows:
        grouped.setdefault((r["scenario"], r["backend"]), []).append(r["label"])
    return grouped


if __name__ == "__main__":
    sys.exit(main())
