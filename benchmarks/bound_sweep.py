"""The slack by perturbation, measured by hand: a dense sweep of delays before each call of a planted step, in a
plain loop that shares no code with `run --bound` (measure.perturbation, verdicts.bound).

On a CPU the accounting's truth (bound_truth: s_host = T0 − H) assumes the two sides overlap without slowing each
other, T0 = max(H, D); where the host's spin and the backend's compute threads share the cores it does not hold
(bound_truth prints T0 / max(H, D)), and what `--bound` measures — how long a side can grow before the step slows —
is then known only by perturbing. This script perturbs: per side, levels of 0 … LEVEL_SPAN × T0 in LEVELS steps,
each level a sample of `steps` step calls with the delay before each (a host spin of its asked length, its real length
recorded; or a queued device op: a hold kernel, or a product calibrated to the level, its cost measured alone), the
levels in a shuffled order every round; then the hinge T(d) = a + b·max(0, d − s) fitted by least squares over a
fine grid of knees s to the levels' medians.

A sample's edges are not the steady step: its first host spin runs while the device is idle (after the last
sample's wait), so below the slack a sample of n steps grows by d, not 0, and a hinge fitted to time per step
bends early (the knee of a device-bound step of 20 steps read ~3% of the step low on the test device). The sweep
therefore times each level twice in a row, n and 2n steps, and takes the marginal time per step,
(T_2n − T_n) / n, in which anything a sample pays once cancels, whatever it is: no model of the edges (`--bound`
models them instead: verdicts.bound's steps_per_call), so the two stay independent.

    python benchmarks/bound_sweep.py -b jax [--rounds 10] [--topology host-bound]
"""

from __future__ import annotations

import argparse
import functools
import random
import statistics
import sys
import time
from pathlib import Path
from typing import Any, Callable, Sequence

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from bound_truth import STEPS, TOPOLOGIES, Topology, backend_named, device_for  # noqa: E402

from asyncbench.backends.base import Backend  # noqa: E402
from asyncbench.workloads import bound_planted  # noqa: E402

#: levels from 0 to LEVEL_SPAN × T0 (the slack is at most T0: a side cannot wait longer than the step takes)
LEVELS, LEVEL_SPAN = 13, 1.2
ROUNDS = 10
#: knees tried per level interval by the hinge fit
KNEES_PER_LEVEL = 20
#: resamples of the rounds for the knee's 95% interval (percentile bootstrap: a fit takes a few ms, so 200 cost ~1 s),
#: with a fixed seed (the same interval from the same rounds)
RESAMPLES, RESAMPLE_SEED = 200, 0


def hinge(points: Sequence[tuple[float, float]]) -> tuple[float, float, float]:
    """The least-squares fit of T(d) = a + b·max(0, d − s) to (d, T) points: (s, a, b), s on a grid of
    KNEES_PER_LEVEL knees per level interval from 0 to the largest d (for each knee, a and b by ordinary least
    squares)."""
    largest = max(d for d, _ in points)
    knees = [largest * i / (KNEES_PER_LEVEL * (len(points) - 1) or 1) for i in range(KNEES_PER_LEVEL * max(len(points) - 1, 1) + 1)]
    best: tuple[float, float, float, float] | None = None
    for knee in knees:
        xs = [max(0.0, d - knee) for d, _ in points]
        ys = [t for _, t in points]
        mean_x, mean_y = statistics.fmean(xs), statistics.fmean(ys)
        spread = sum((x - mean_x) ** 2 for x in xs)
        slope = sum((x - mean_x) * (y - mean_y) for x, y in zip(xs, ys, strict=True)) / spread if spread > 0 else 0.0
        intercept = mean_y - slope * mean_x
        error = sum((y - intercept - slope * x) ** 2 for x, y in zip(xs, ys, strict=True))
        if best is None or error < best[0] - 1e-18:
            best = (error, knee, intercept, slope)
    assert best is not None
    return best[1], best[2], best[3]


def _delays(backend: Backend, device: str, side: str, levels: Sequence[float]) -> list[tuple[float, Callable[[], Any]]]:
    """Per level, the measured length of one delay (a spin's asked length, re-measured as it runs; a device op's cost
    alone; a hold's asked length, which `_HoldLog` replaces by what the holds really took) and a callable that injects
    it."""
    made: list[tuple[float, Callable[[], Any]]] = []
    for level in levels:
        if level <= 0:
            made.append((0.0, lambda: None))
        elif side == "host":
            made.append((level, functools.partial(bound_planted.spin, level)))
        else:
            op, issue = bound_planted.device_op(backend, device, level)
            made.append((op.measured_s, functools.partial(issue, False)))
    return made


class _HoldLog:
    """What the test device's holds really took, from its own log of what ran (its `Device.log`, no code of
    `--bound`'s): a hold asks the stream's thread to sleep, and the sleep overshoots by its wake-up (some 0.1 ms here),
    so read as its asked length a hold is short by that much, and the knee in asked lengths lies early by it (the
    host-bound device slack read 6.2% of the step below `--bound`'s, which reads each delay's length in place). A
    device without a log (a CPU backend's product: its cost is measured alone, bound_planted.calibrate) keeps its
    length.

    The step's own ops are holds too on the test device (`own`: the holds one step call issues), and the one stream
    runs and logs its kernels in the order they were issued, so each call's holds are its delay then its own: the
    delay is every (own + 1)-th hold from the first. Counted with the step's own, the mean read the ops' lengths
    into the delay's (a device-bound step's device slack came out 0.6 ms, where any delay slows it)."""

    def __init__(self, backend: Backend | None, device: str, own: int = 0):
        find = getattr(backend, "device", None)
        self._device = find(device) if callable(find) and hasattr(find(device), "log") else None
        self._every = own + 1

    def start(self) -> None:
        if self._device is not None:
            self._device.log = []

    def mean_s(self) -> float | None:
        """The mean length of the holds since `start` (after the device's barrier), or None without a log or a hold."""
        if self._device is None or not self._device.log:
            return None
        holds = [span.end_s - span.start_s for span in self._device.log if span.what == "hold"]
        self._device.log = None
        if len(holds) % self._every:
            raise RuntimeError(f"{len(holds)} holds logged, not a whole number of calls of {self._every} holds each")
        lengths = holds[:: self._every]
        return statistics.fmean(lengths) if lengths else None


def sweep(
    backend: Backend, device: str, topology: Topology, side: str, step_s: float, rounds: int = ROUNDS, steps: int = STEPS
) -> dict[str, Any]:
    """The step's time per step at each level of delay before each step call on `side`, and the hinge's knee."""
    levels = [step_s * LEVEL_SPAN * i / (LEVELS - 1) for i in range(LEVELS)]
    params = {**bound_planted.planted.defaults(), **topology.params()}
    step = bound_planted.planted_step(backend, device, params)
    delays = _delays(backend, device, side, levels)
    described = getattr(step, "device_op", None)  # bound_planted.DeviceOp: how the step's own ops are made
    own = int(params["ops"]) if described is not None and described.kind == "hold" and float(params["device_s"]) > 0 else 0
    holds = _HoldLog(backend if side == "device" else None, device, own)
    # per level, one entry per round: the delay's measured length and the marginal time per step
    spun: dict[int, list[float]] = {i: [] for i in range(LEVELS)}
    times: dict[int, list[float]] = {i: [] for i in range(LEVELS)}
    order = list(range(LEVELS))
    rng = random.Random(0)

    def sample(index: int, count: int) -> float:
        """The wall time of `count` step calls, each after the level's delay, to the device's end."""
        _, inject = delays[index]
        lengths: list[float] = []
        if index > 0:  # no delay at level 0: nothing to read
            holds.start()
        start = time.perf_counter()
        for _ in range(count):
            if side == "host" and index > 0:
                lengths.append(bound_planted.spin(levels[index]))
            else:
                inject()
            result = step()
        backend.barrier(device)
        taken = time.perf_counter() - start
        del result
        held = holds.mean_s()
        spun[index].append(statistics.fmean(lengths) if lengths else held if held is not None else delays[index][0])
        return taken

    with backend.activate(device):
        step()
        backend.barrier(device)
        for _ in range(rounds):
            rng.shuffle(order)
            for index in order:
                short = sample(index, steps)
                times[index].append((sample(index, 2 * steps) - short) / steps)
    points = _points(spun, times, range(rounds))
    knee, intercept, slope = hinge(points)
    return {
        "side": side,
        "points": points,
        "slack_s": knee,
        "step_s": intercept,
        "cost_past": slope,
        "slack_ci_s": knee_ci(spun, times, rounds),
    }


def _points(spun: dict[int, list[float]], times: dict[int, list[float]], rounds: Sequence[int]) -> list[tuple[float, float]]:
    """Per level, the medians over `rounds` (indices, repeats allowed) of the delay's length and the time per step."""
    return [(statistics.median(spun[i][r] for r in rounds), statistics.median(times[i][r] for r in rounds)) for i in sorted(times)]


def knee_ci(spun: dict[int, list[float]], times: dict[int, list[float]], rounds: int) -> tuple[float, float] | None:
    """The knee's 95% interval: the hinge refitted to RESAMPLES resamples of the rounds (a round is the unit: its
    levels ran together, so its drift is shared), their 2.5th and 97.5th percentiles. None under three rounds."""
    if rounds < 3:
        return None
    draw = random.Random(RESAMPLE_SEED)
    knees = sorted(hinge(_points(spun, times, [draw.randrange(rounds) for _ in range(rounds)]))[0] for _ in range(RESAMPLES))
    return knees[int(0.025 * (RESAMPLES - 1))], knees[int(round(0.975 * (RESAMPLES - 1)))]


def _interval_ms(interval: tuple[float, float] | None) -> str:
    return "" if interval is None else f", its 95% interval [{interval[0] * 1e3:.3f}–{interval[1] * 1e3:.3f}] ms"


def main() -> None:
    from bound_truth import measure

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-b", "--backend", default="jax")
    parser.add_argument("--rounds", type=int, default=ROUNDS)
    parser.add_argument("--topology", action="append", help="a topology's name (default: each)")
    args = parser.parse_args()
    backend = backend_named(args.backend)
    device = device_for(args.backend)
    for topology in TOPOLOGIES:
        if args.topology and topology.name not in args.topology:
            continue
        truth = measure(backend, device, topology, rounds=args.rounds)
        print(
            f"{topology.said()}: H {truth.host_s * 1e3:.3f} D {truth.device_s * 1e3:.3f} T0 {truth.step_s * 1e3:.3f} ms; by accounting "
            f"slack host {truth.slack_host_s * 1e3:.3f}, device {truth.slack_device_s * 1e3:.3f} ms",
            flush=True,
        )
        for side in ("host", "device"):
            found = sweep(backend, device, topology, side, truth.step_s, args.rounds)
            curve = " ".join(f"{d * 1e3:.2f}:{t * 1e3:.2f}" for d, t in found["points"])
            print(
                f"   {side:6} by perturbation: slack {found['slack_s'] * 1e3:.3f} ms ({found['slack_s'] / found['step_s']:.0%} of the "
                f"fitted step {found['step_s'] * 1e3:.3f}){_interval_ms(found['slack_ci_s'])}, cost past it {found['cost_past']:.2f}; "
                f"delay:step ms {curve}",
                flush=True,
            )


if __name__ == "__main__":
    main()
