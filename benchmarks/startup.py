"""Start-up: which frameworks the light commands import, and how long the commands take.

`asyncbench --help`, `list` and `validate` must import no framework (torch,
cupy, jax, mxnet); `--help` should answer in under 0.15 s (median of 5, with
this interpreter), and `run` (the built-in suite, with every backend `make
test` installs: numpy, torch, jax, mxnet) and `run --quick` each finish in
under 60 s on the 2-core CPU machine. (The suite's goal was 5 minutes; a
newcomer's first run should not take that long to show what the tool is
for.) Prints each figure, and how many rows ran ahead (the suite must show
asynchrony without a GPU).

    python benchmarks/startup.py [--skip-full]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys

from common import timed_asyncbench  # benchmarks/ is sys.path[0] when this runs as a script

FRAMEWORKS = ("torch", "cupy", "jax", "mxnet")
HELP_GOAL_S = 0.15
LIGHT = (["--help"], ["list"], ["validate", "configs/async-computation.yaml"])
GOALS_S = {"run --quick": 60.0, "run": 60.0}


def imported_frameworks(argv: list[str]) -> list[str]:
    proc = subprocess.run([sys.executable, "-X", "importtime", "-m", "asyncbench", *argv], capture_output=True, text=True)
    modules = {line.rsplit("|", 1)[-1].strip() for line in proc.stderr.splitlines() if line.startswith("import time:")}
    return [f for f in FRAMEWORKS if f in modules]


def wall_s(argv: list[str]) -> float:
    return timed(argv)[0]


def timed(argv: list[str]) -> tuple[float, str]:
    """Seconds the command took, and the last line it printed (a run's headline)."""
    seconds, done = timed_asyncbench(argv, ok=None)
    lines = [line for line in done.stdout.splitlines() if line.strip()]
    return seconds, lines[-1] if lines else done.stderr.strip()[-200:]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--skip-full", action="store_true", help="skip timing the plain `run`")
    args = parser.parse_args()
    help_s = statistics.median(wall_s(["--help"]) for _ in range(5))
    print(f"asyncbench --help, median of 5{'':<30} {help_s:6.3f} s   [goal < {HELP_GOAL_S:g} s] {'OK' if help_s < HELP_GOAL_S else 'OVER'}")
    for argv in LIGHT:
        frameworks = imported_frameworks(argv)
        print(f"asyncbench {' '.join(argv):<45} {wall_s(argv):6.2f} s   imports: {', '.join(frameworks) or 'no framework'}")
    runs = {"run --quick": ["run", "--quick", "--no-progress"]}
    if not args.skip_full:
        runs["run"] = ["run", "--no-progress"]
    for label, argv in runs.items():
        seconds, headline = timed(argv)
        goal = GOALS_S[label]
        print(f"asyncbench {label:<45} {seconds:6.2f} s   [goal < {goal:g} s] {'OK' if seconds < goal else 'OVER'}")
        print(f"    {headline}")


if __name__ == "__main__":
    main()
