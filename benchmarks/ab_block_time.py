"""Where one block of an `asyncbench ab` gate spends its time: the processes' start, each case's set-up, sampling.

A gate's verdicts need blocks (each a fresh pair of processes), and a
2-minute gate of configs/ci-gate.yaml gets 10-19 of them on 2 cores; an
interval that passes over two wild blocks needs 17-19. Before making
blocks cheaper, this says what they cost: it runs `asyncbench ab CONFIG
--base HEAD` in this process with the engine's block steps wrapped in
timers (engine.paired.shared_block, Pairing.block and _setup, SideWorker's
renew, ready and call), and prints, per shared block, the seconds each step
took and how many calls it made. The gate's own output is printed as usual
(its verdicts are beside the point: --gate-time is short by default).

    python benchmarks/ab_block_time.py                               # configs/ci-gate.yaml, 60 s
    python benchmarks/ab_block_time.py --config configs/ab-gate.yaml --gate-time 30s
"""

from __future__ import annotations

import argparse
import collections
import contextlib
import functools
import os
import time
from typing import Any, Callable

from asyncbench.engine import gate_time, paired, side_process

#: seconds and calls per (case, step); the case is the one whose block is running ("start": both sides' processes)
SPENT: dict[tuple[str, str], float] = collections.defaultdict(float)
CALLS: collections.Counter[tuple[str, str]] = collections.Counter()
_RUNNING = {"case": "before the first block"}


def _timed(fn: Callable[..., Any], key: Callable[..., tuple[str, str]]) -> Callable[..., Any]:
    @functools.wraps(fn)
    def timed(*args: Any, **kwargs: Any) -> Any:
        started = time.perf_counter()
        try:
            return fn(*args, **kwargs)
        finally:
            at = key(*args, **kwargs)
            SPENT[at] += time.perf_counter() - started
            CALLS[at] += 1

    return timed


def _instrument() -> None:
    """Wrap the block's steps in timers (this process's copy of the engine only)."""
    block = paired.Pairing.block

    def running(self: paired.Pairing, *args: Any) -> tuple[str, str]:
        return (self.head_case.id, "block, all of it")

    def block_of(self: paired.Pairing, *args: Any) -> Any:
        _RUNNING["case"] = self.head_case.id
        return block(self, *args)

    paired.Pairing.block = _timed(block_of, running)  # type: ignore[method-assign]
    paired.Pairing._setup = _timed(paired.Pairing._setup, lambda *a: (_RUNNING["case"], "set-up, both sides"))  # type: ignore[method-assign]
    worker = side_process.SideWorker
    worker.call = _timed(worker.call, lambda self, command, *a: (_RUNNING["case"], f"call {command}"))  # type: ignore[method-assign]
    worker.renew = _timed(worker.renew, lambda *a: ("start", "end old, start new"))  # type: ignore[method-assign]
    worker.ready = _timed(worker.ready, lambda *a: ("start", "wait until started"))  # type: ignore[method-assign]
    gate_time.shared_block = _timed(paired.shared_block, lambda *a: ("all", "shared block"))  # type: ignore[assignment]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--config", default="configs/ci-gate.yaml")
    parser.add_argument("--gate-time", default="60s", help="the gate's --gate-time")
    args = parser.parse_args()
    os.environ.setdefault("OMP_NUM_THREADS", "1")  # the three the CI recipes set (docs/guides/ci.md)
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    os.environ.setdefault("MKL_NUM_THREADS", "1")
    _instrument()
    from asyncbench.cli import main as asyncbench

    argv = ["ab", args.config, "--base", "HEAD", "--gate-time", args.gate_time, "--no-progress"]
    with contextlib.suppress(SystemExit):  # the gate's exit code: its verdicts are beside the point here
        asyncbench(argv, standalone_mode=False)
    blocks = CALLS[("all", "shared block")]
    if not blocks:
        raise SystemExit("no block ran")
    print(f"\n{blocks} shared blocks, {SPENT[('all', 'shared block')] / blocks:.2f} s each; per block:")
    for (case, step), seconds in sorted(SPENT.items()):
        if case != "all":
            print(f"  {case[:48]:48s} {step:22s} {seconds / blocks:6.2f} s  {CALLS[(case, step)] / blocks:6.1f} calls")


if __name__ == "__main__":
    main()
