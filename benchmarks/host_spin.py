"""`run --bound`'s host delay: how long a spin of d really takes, with and without a process competing for the cores.

Three spins of each asked length, interleaved: the tool's (measure.host_spin.busy: hashing on its core until its
clock passes), the one it replaced (a clock loop with `time.sleep(0)` at every turn, to hand on the GIL: each sleep
is a point where the scheduler may give the core away), and a bare clock loop (the least a spin can take). With
`--hog N`, N processes busy the cores beside them (common.cpu_hog's intermittent hog, always on here), as a loaded
machine does. Per spin and length: the 10th, 50th and 90th percentile of `--spins` spins, in µs.

    python benchmarks/host_spin.py [--hog 2] [--spins 400]
"""

from __future__ import annotations

import argparse
import multiprocessing
import multiprocessing.synchronize
import sys
import time
from pathlib import Path
from typing import Callable

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from asyncbench.measure.host_spin import busy  # noqa: E402

ASKED_S = (25e-6, 50e-6, 100e-6, 500e-6)
#: a pause between spins, as a step's own work would be: the spins do not run back to back
BETWEEN_S = 200e-6


def sleeping(seconds: float) -> None:
    """The spin the tool had: a clock loop that sleeps 0 s (hands on the GIL, and maybe the core) at every turn."""
    started = now = time.perf_counter()
    while now - started < seconds:
        time.sleep(0)
        now = time.perf_counter()


def bare(seconds: float) -> None:
    """A clock loop and nothing else: the least a spin of `seconds` can take."""
    started = now = time.perf_counter()
    while now - started < seconds:
        now = time.perf_counter()


SPINS: dict[str, Callable[[float], object]] = {
    "hashing (the tool's)": busy,
    "sleep(0) each turn (before)": sleeping,
    "bare clock loop": bare,
}


def _hog(stop: multiprocessing.synchronize.Event) -> None:
    while not stop.is_set():
        sum(i * i for i in range(10_000))


def percentiles(seconds: float, spins: int) -> dict[str, list[float]]:
    taken: dict[str, list[float]] = {name: [] for name in SPINS}
    for _ in range(spins):
        for name, spin in SPINS.items():
            started = time.perf_counter()
            spin(seconds)
            taken[name].append(time.perf_counter() - started)
            bare(BETWEEN_S)
    return {name: [sorted(values)[int(q * len(values))] * 1e6 for q in (0.1, 0.5, 0.9)] for name, values in taken.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hog", type=int, default=0, help="processes that busy the cores beside the spins")
    parser.add_argument("--spins", type=int, default=400)
    args = parser.parse_args()
    stop = multiprocessing.Event()
    hogs = [multiprocessing.Process(target=_hog, args=(stop,), daemon=True) for _ in range(args.hog)]
    for hog in hogs:
        hog.start()
    try:
        print(f"{args.hog} hog process(es); µs taken by a spin of each asked length: 10th / 50th / 90th percentile")
        for seconds in ASKED_S:
            for name, (p10, p50, p90) in percentiles(seconds, args.spins).items():
                print(f"  {seconds * 1e6:5.0f} µs  {name:30s} {p10:7.1f} {p50:7.1f} {p90:7.1f}")
    finally:
        stop.set()
        for hog in hogs:
            hog.join(timeout=5)


if __name__ == "__main__":
    main()
