"""How often does a gate fail when nothing changed? The false-failure rate of configs/ci-gate.yaml.

Runs the gate config N times back to back (each a fresh process, as CI
would), then counts
- runs whose `expect:` checks failed or were inconclusive (exit 1 by
  default), runs that would fail with --allow-inconclusive, and each
  check's verdicts over the runs, and
- pairs of runs (every earlier run as the baseline of every later one) in
  which `compare` finds a SLOWER variant, for several --max-regression
  thresholds, and the distribution of the changes that drives it.
Nothing changed between the runs, so every failure is a false one.

    python benchmarks/gate_stability.py               # 10 runs of configs/ci-gate.yaml
    python benchmarks/gate_stability.py --runs 12 --config my-gate.yaml
    python benchmarks/gate_stability.py --reuse DIR   # analyse run*.json already in DIR
"""

from __future__ import annotations

import argparse
import itertools
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from asyncbench.results.schema import Report
from asyncbench.verdicts import checks, compare

ROOT = Path(__file__).resolve().parent.parent
THRESHOLDS = (0.10, 0.25, 0.40, 0.60)


def run_gate(config: Path, runs: int, directory: Path) -> list[Path]:
    paths = []
    for index in range(runs):
        path = directory / f"run{index + 1}.json"
        proc = subprocess.run(
            [sys.executable, "-m", "asyncbench", "run", str(config), "--no-progress", "-o", str(path)],
            capture_output=True,
            text=True,
        )
        print(f"run {index + 1}/{runs}: exit {proc.returncode}", flush=True)
        paths.append(path)
    return paths


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--config", type=Path, default=ROOT / "configs" / "ci-gate.yaml")
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--reuse", type=Path, help="analyse the run*.json in this directory instead of running")
    args = parser.parse_args()

    if args.reuse:
        paths = sorted(args.reuse.glob("run*.json"), key=lambda p: int(p.stem.removeprefix("run")))
    else:
        paths = run_gate(args.config, args.runs, Path(tempfile.mkdtemp(prefix="gate-stability-")))
    reports = [Report.load(p) for p in paths]

    check_failures = [sum(1 for r in report.results for c in r.checks if checks.failed(c)) for report in reports]
    runs_failing = sum(1 for n in check_failures if n)
    runs_failing_allowed = sum(
        1 for report in reports if any(checks.failed(c, allow_inconclusive=True) for r in report.results for c in r.checks)
    )
    print(
        f"\nexpect checks: {runs_failing}/{len(reports)} runs would exit 1 (a check failed, inconclusive or not measured; "
        f"per run: {check_failures}); with --allow-inconclusive {runs_failing_allowed}/{len(reports)}"
    )
    verdicts_per_check: dict[str, dict[str, int]] = {}
    for report in reports:
        for row in report.results:
            for check in row.checks:
                counts = verdicts_per_check.setdefault(f"{row.experiment}: {check.expect}", {})
                counts[str(check.verdict)] = counts.get(str(check.verdict), 0) + 1
    for name, counts in verdicts_per_check.items():
        print(f"  {name}: {json.dumps(counts)}")
    rounds = [r.sampling.rounds for report in reports for r in report.results if r.sampling is not None]
    if rounds:
        print(f"rounds per case: median {statistics.median(rounds):g}, max {max(rounds)}")

    pairs = list(itertools.combinations(range(len(reports)), 2))
    print(f"baseline comparisons: every earlier run as the baseline of every later one ({len(pairs)} pairs)")
    for threshold in THRESHOLDS:
        failing, verdicts = 0, {}
        for old, new in pairs:
            comparison = compare.compare(reports[old], reports[new], threshold)
            failing += bool(comparison.regressions)
            for row in comparison.rows:
                verdicts[row.label] = verdicts.get(row.label, 0) + 1
        print(
            f"  --max-regression {threshold:4.0%}: {failing}/{len(pairs)} pairs would fail ({failing / len(pairs):.1%}); "
            f"{json.dumps(verdicts)}"
        )
    changes = [abs(row.ratio - 1) for old, new in pairs for row in compare.compare(reports[old], reports[new]).rows]
    if len(changes) > 1:
        deciles = statistics.quantiles(changes, n=10)
        print(
            f"|change of a median| between identical runs: median {statistics.median(changes):.1%}, "
            f"90th percentile {deciles[-1]:.1%}, max {max(changes):.1%}"
        )


if __name__ == "__main__":
    main()
