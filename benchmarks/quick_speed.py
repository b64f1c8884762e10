"""Is `run --quick` quick? Its wall time against the built-in suite's, backend by backend, in one run.

`--quick` is the smoke test: it should take at most half the suite's time
on every backend (it took 23.4 s against the suite's 22.6 s before its
max_time_s went from 1 s to 0.2 s and training_memory's quick size below the
suite's). For each backend (`-b`), the suite and `--quick` run one after
the other in fresh processes, `--repeat` times, alternating which goes first
so that a machine growing busier does not favour one; printed: each wall
time, the median ratio quick / suite, and where the time went (the sum of
the cases' own times, the rest outside them: the interpreter's start, the
environment's capture, planning and the worker's start where they do not
overlap; and each case's, with --cases).

    python benchmarks/quick_speed.py                        # numpy, torch and jax: about 2 minutes on 2 cores
    python benchmarks/quick_speed.py -b numpy --repeat 3    # one backend, three pairs
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
from pathlib import Path

from common import timed_asyncbench  # benchmarks/ is sys.path[0] when this runs as a script

GOAL = 0.5  # quick / suite, at most


def timed_run(backend: str, quick: bool, folder: Path) -> tuple[float, dict[str, float]]:
    """Wall seconds of `asyncbench run -b BACKEND [--quick]`, and each case's own time (case_s)."""
    out = folder / f"{backend}{'-quick' if quick else ''}.json"
    argv = ["run", "-b", backend, "--no-progress", "-o", str(out), *(["--quick"] if quick else [])]
    seconds, _ = timed_asyncbench(argv)  # exit 1 (a check failed, or nothing measured) is still a timing
    cases = {r["id"]: r.get("case_s") or 0.0 for r in json.loads(out.read_text())["results"]}
    return seconds, cases


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-b", "--backend", action="append", help="a backend to time (repeatable) [numpy, torch, jax]")
    parser.add_argument("--repeat", type=int, default=1, help="pairs of runs per backend [1]")
    parser.add_argument("--cases", action="store_true", help="print each case's time too")
    args = parser.parse_args()
    backends = args.backend or ["numpy", "torch", "jax"]
    worst = 0.0
    with tempfile.TemporaryDirectory() as tmp:
        for backend in backends:
            ratios = []
            for repeat in range(args.repeat):
                order = (False, True) if repeat % 2 == 0 else (True, False)
                walls: dict[bool, float] = {}
                cases: dict[bool, dict[str, float]] = {}
                for quick in order:
                    walls[quick], cases[quick] = timed_run(backend, quick, Path(tmp))
                ratios.append(walls[True] / walls[False])
                own = {quick: sum(cases[quick].values()) for quick in walls}
                print(
                    f"{backend}: suite {walls[False]:.1f} s (cases {own[False]:.1f} s, outside them {walls[False] - own[False]:.1f} s), "
                    f"--quick {walls[True]:.1f} s (cases {own[True]:.1f} s, outside them {walls[True] - own[True]:.1f} s): {ratios[-1]:.2f}"
                )
                if args.cases:
                    for quick in (False, True):
                        shown = ", ".join(f"{case.split('[')[0]} {s:.2f}" for case, s in cases[quick].items() if s)
                        print(f"    {'--quick' if quick else 'suite  '}: {shown}")
            ratio = statistics.median(ratios)
            worst = max(worst, ratio)
            print(f"{backend}: --quick / suite = {ratio:.2f} (median of {len(ratios)}; goal ≤ {GOAL})")
    print(f"worst backend: {worst:.2f} — {'within' if worst <= GOAL else 'OVER'} the goal of {GOAL}")


if __name__ == "__main__":
    main()
