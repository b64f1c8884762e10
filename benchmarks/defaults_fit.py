"""Whether every built-in workload's defaults fit the default timeout_s on every CPU backend here.

Runs `asyncbench run -w W -b B -d cpu` for each built-in workload and each
installed CPU backend (numpy, torch, jax, mxnet), at the workload's defaults
(the per-backend and per-device ones included) and the default settings, and
prints each case's time against timeout_s (300 s): no case may be cut short.
Slow: about 10 minutes on the 2-core machine.

    python benchmarks/defaults_fit.py [-w WORKLOAD ...] [-b BACKEND ...]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

from asyncbench.results.model import Settings
from asyncbench.workloads import BUILT_IN

BACKENDS = ("numpy", "torch", "jax", "mxnet")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-w", "--workload", action="append", choices=sorted(BUILT_IN), help="default: every built-in workload")
    parser.add_argument("-b", "--backend", action="append", choices=BACKENDS, help="default: numpy, torch, jax and mxnet")
    args = parser.parse_args()
    timeout_s = Settings().timeout_s
    worst, cut = 0.0, []
    with tempfile.TemporaryDirectory() as folder:
        for workload in args.workload or list(BUILT_IN):
            out = Path(folder) / f"{workload}.json"
            argv = ["run", "-w", workload, "-d", "cpu", "--no-progress", "-o", str(out)]
            for backend in args.backend or BACKENDS:
                argv += ["-b", backend]
            subprocess.run([sys.executable, "-m", "asyncbench", *argv], capture_output=True, text=True, check=False)
            if not out.exists():
                print(f"{workload}: no results written")
                cut.append(workload)
                continue
            for result in json.loads(out.read_text())["results"]:
                seconds = result.get("case_s") or 0.0
                rounds = (result.get("sampling") or {}).get("rounds")
                worst = max(worst, seconds)
                status = result["status"]
                if status == "error":
                    cut.append(result["id"])
                reason = f"  {result.get('reason', '')[:90]}" if status != "ok" else ""
                print(f"{result['id']:<60} {status:<8} {seconds:7.1f} s  {rounds or '-':>4} rounds{reason}")
    print(f"longest case {worst:.1f} s of timeout_s {timeout_s:g} s; {len(cut)} cut short or failed: {'OK' if not cut else 'OVER'}")


if __name__ == "__main__":
    main()
