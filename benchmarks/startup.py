"""Start-up: which frameworks the light commands import, and how long the commands take.

`asyncbench --help`, `list` and `validate` must import no framework (torch,
cupy, jax, mxnet); `--help` should answer in under 0.15 s (median of 5, with
this interpreter), `run --quick` finish in under 60 s and `run` in under 5
minutes on the 2-core CPU machine. (The goals were 30 s and 2 minutes with
three backends and 5 samples; the suite now runs five backends, MXNet's
cases in their own worker and on one OpenMP thread per engine worker, and at
least 6 samples, the fewest with a 95% interval of the median.) Prints each
figure.

    python benchmarks/startup.py [--skip-full]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time

FRAMEWORKS = ("torch", "cupy", "jax", "mxnet")
HELP_GOAL_S = 0.15
LIGHT = (["--help"], ["list"], ["validate", "configs/async-computation.yaml"])
GOALS_S = {"run --quick": 60.0, "run": 300.0}


def imported_frameworks(argv: list[str]) -> list[str]:
    proc = subprocess.run([sys.executable, "-X", "importtime", "-m", "asyncbench", *argv], capture_output=True, text=True)
    modules = {line.rsplit("|", 1)[-1].strip() for line in proc.stderr.splitlines() if line.startswith("import time:")}
    return [f for f in FRAMEWORKS if f in modules]


def wall_s(argv: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run([sys.executable, "-m", "asyncbench", *argv], capture_output=True, check=False)
    return time.perf_counter() - start


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
        seconds = wall_s(argv)
        goal = GOALS_S[label]
        print(f"asyncbench {label:<45} {seconds:6.2f} s   [goal < {goal:g} s] {'OK' if seconds < goal else 'OVER'}")


if __name__ == "__main__":
    main()
