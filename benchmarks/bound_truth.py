"""The truth `run --bound` is checked against: each planted topology's host time, device time, step time and slacks,
measured apart from `--bound` (and, on the stream test device, also computed exactly).

A topology (asyncbench/workloads/bound_planted.py) is `ops` ops per step, each a host spin of h then device work of
k, with an optional wait for op m's result. Its truth, per step:
- H, the host alone: the step with its device work made trivial (device_s = 0: a 2² product, inline on JAX);
- D, the device alone: the ops with no host cost (host_s = 0), waited for only at the sample's end;
- T0, the real step;
each the median of `rounds` interleaved samples (the three in turn, so drift hits all three), with its 95% interval.
Then the accounting slacks s_host = max(T0 − H, 0), s_device = max(T0 − D, 0) (the issue's model, exact without a
wait: T0 = max(H, D)), and how well the model holds: T0 / max(H, D).

On the stream test device the truth is also exact: holds of exactly k, and a timeline model (`simulate`) of the host
and the device as two one-at-a-time resources gives the step's time under any injected delay, so the slack by
perturbation — the largest delay before each step call that leaves the step's time unchanged, which is what
`--bound` measures — is known, wait or none (with a wait it is not the accounting's figure). The model takes the
host's and the device's time per op as measured (H / ops, D / ops): on a quiet machine the spin and the hold with
tens of µs of issue and sleep overshoot, on a loaded one (its kernels are Python threads sharing the cores and the
GIL with the host's) much more, and the step itself no longer T0 = max(H, D): say what you measure.

    python benchmarks/bound_truth.py -b jax [--rounds 15] [--steps 20]
    python benchmarks/bound_truth.py -b streamsim
    /work/main/.venv-mxnet/bin/python benchmarks/bound_truth.py -b mxnet     # MXNet in its own environment
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Mapping, Sequence

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from asyncbench.backends.base import Backend  # noqa: E402
from asyncbench.results import stats  # noqa: E402
from asyncbench.workloads.bound_planted import planted  # noqa: E402

#: the step-form variant the planted step runs (no wait but the sample's own)
VARIANT = "sync_every=0"
#: steps per sample: a sample's ramp (the device idle until the first op is issued) is h / steps of the step
STEPS = 20
ROUNDS = 15
#: the simulator's steps from rest, and the later ones whose time per step is the steady state's
SIMULATED_STEPS, SETTLED_FROM = 200, 100
#: how close the bisection for a slack gets (s), and how much slower than T0 counts as slower (s per step)
SLACK_RESOLUTION_S, SLOWER_S = 1e-7, 1e-9


@dataclass(frozen=True)
class Topology:
    """A planted topology: per op, a host spin of `host_s` and device work of `device_s`; `wait_after` m > 0: the
    host waits for op m's result."""

    name: str
    host_s: float
    device_s: float
    ops: int = 4
    wait_after: int = 0

    def params(self) -> dict[str, Any]:
        return {"host_s": self.host_s, "device_s": self.device_s, "ops": self.ops, "wait_after": self.wait_after}

    def said(self) -> str:
        wait = f", wait after op {self.wait_after}" if self.wait_after else ""
        return f"{self.name} (h {self.host_s * 1e3:g} ms, k {self.device_s * 1e3:g} ms, N {self.ops}{wait})"


#: the issue's topologies, ops of ≥ 0.5 ms where a side is the slower one: host-bound, device-bound, balanced, and the
#: device-bound one with a wait in the middle of the step
TOPOLOGIES = (
    Topology("host-bound", 0.0006, 0.0003),
    Topology("device-bound", 0.0001, 0.0005),
    Topology("balanced", 0.0005, 0.0005),
    Topology("device-bound, wait", 0.0001, 0.0005, wait_after=2),
)


@dataclass(frozen=True)
class Truth:
    """A topology's truth per step (s): host alone, device alone, the step, and each side's slack."""

    host_s: float
    device_s: float
    step_s: float
    #: the slacks by accounting: max(T0 − H, 0), max(T0 − D, 0)
    slack_host_s: float
    slack_device_s: float
    #: the slacks by perturbation (the largest delay before each step call that leaves T0 unchanged): exact on the
    #: test device (the timeline model); elsewhere None, as only `--bound` measures it
    perturbed_host_s: float | None = None
    perturbed_device_s: float | None = None
    #: 95% intervals of the measured parts (None: computed, not measured)
    host_ci_s: tuple[float, float] | None = None
    device_ci_s: tuple[float, float] | None = None
    step_ci_s: tuple[float, float] | None = None
    #: 95% intervals of the slacks by perturbation where a sweep measured them (bound_sweep's bootstrap over its
    #: rounds): the truth's own noise, which a single truth held to by every rerun passes to all of them alike
    perturbed_host_ci_s: tuple[float, float] | None = None
    perturbed_device_ci_s: tuple[float, float] | None = None

    def slack_ci(self, side: str) -> tuple[float, float] | None:
        """The 95% interval of the slack `--bound` is held to, where it was measured (None: exact or computed)."""
        return self.perturbed_host_ci_s if side == "host" else self.perturbed_device_ci_s

    @property
    def model_ratio(self) -> float:
        """How well the overlap model holds: T0 / max(H, D) (1: exactly; above: the sides slow each other)."""
        return self.step_s / max(self.host_s, self.device_s)

    def slack(self, side: str) -> float:
        """The slack `--bound` is held to: by perturbation where known (the test device), else by accounting."""
        perturbed = self.perturbed_host_s if side == "host" else self.perturbed_device_s
        if perturbed is not None:
            return perturbed
        return self.slack_host_s if side == "host" else self.slack_device_s


def accounting(host_s: float, device_s: float, step_s: float) -> tuple[float, float]:
    """The slacks by accounting: how much longer than each side's own time the step takes."""
    return max(step_s - host_s, 0.0), max(step_s - device_s, 0.0)


# --- exact, on the stream test device ---------------------------------------------------------------------------


def simulate(
    host_per_op_s: float,
    device_per_op_s: float,
    ops: int,
    wait_after: int = 0,
    host_delay_s: float = 0.0,
    device_delay_s: float = 0.0,
    steps: int = SIMULATED_STEPS,
    settled_from: int = SETTLED_FROM,
) -> float:
    """The steady time per step of the planted step on a device that runs one op at a time in issue order: before
    each step call a host spin of `host_delay_s` or a queued device delay of `device_delay_s` (what `--bound`
    injects), then per op a host cost, the op's issue (no time) and its device time; after op `wait_after` the host
    waits for it. Steps from rest; the time per step of those from `settled_from` on (the regime is periodic)."""
    host = device = 0.0
    settled = 0.0
    for step in range(steps):
        if step == settled_from:
            settled = max(host, device)
        host += host_delay_s
        if device_delay_s > 0:
            device = max(host, device) + device_delay_s
        for index in range(1, ops + 1):
            host += host_per_op_s
            device = max(host, device) + device_per_op_s
            if index == wait_after:
                host = max(host, device)
    return (max(host, device) - settled) / (steps - settled_from)


def perturbed_slack(host_per_op_s: float, device_per_op_s: float, ops: int, wait_after: int, side: str) -> float:
    """The largest delay before each step call, on `side`, that leaves the step's time unchanged (bisection: the
    step's time is non-decreasing in the delay)."""
    unperturbed = simulate(host_per_op_s, device_per_op_s, ops, wait_after)

    def slower(delay: float) -> bool:
        host_delay, device_delay = (delay, 0.0) if side == "host" else (0.0, delay)
        return simulate(host_per_op_s, device_per_op_s, ops, wait_after, host_delay, device_delay) > unperturbed + SLOWER_S

    low, high = 0.0, 2 * unperturbed + SLACK_RESOLUTION_S
    if slower(SLACK_RESOLUTION_S):
        return 0.0
    while high - low > SLACK_RESOLUTION_S:
        middle = (low + high) / 2
        low, high = (low, middle) if slower(middle) else (middle, high)
    return low


def exact(topology: Topology, host_per_op_s: float | None = None, device_per_op_s: float | None = None) -> Truth:
    """The exact truth of a topology on the test device: by default as planted (a spin of h, a hold of k, nothing
    else); given the host's and the device's measured time per op (the spin and the issue's own cost; a hold and its
    sleep's overshoot), the timeline model's slacks for what really ran."""
    h = topology.host_s if host_per_op_s is None else host_per_op_s
    k = topology.device_s if device_per_op_s is None else device_per_op_s
    n, m = topology.ops, topology.wait_after
    step_s = simulate(h, k, n, m)
    host_s, device_s = n * h, n * k
    slack_host, slack_device = accounting(host_s, device_s, step_s)
    return Truth(
        host_s,
        device_s,
        step_s,
        slack_host,
        slack_device,
        perturbed_host_s=perturbed_slack(h, k, n, m, "host"),
        perturbed_device_s=perturbed_slack(h, k, n, m, "device"),
    )


# --- measured, on any backend -------------------------------------------------------------------------------------


def _prepared(backend: Backend, device: str, topology: Topology, steps: int, **changed: float) -> Any:
    params = {**planted.defaults(), **topology.params(), **changed, "steps": steps, "sync_every": [0]}
    return planted.setup(backend, device, params)


def measure(backend: Backend, device: str, topology: Topology, rounds: int = ROUNDS, steps: int = STEPS) -> Truth:
    """H, D and T0 measured in `rounds` interleaved samples of `steps` steps (their medians and 95% intervals), and
    the accounting slacks from them. On a backend with a hold kernel (the test device), the exact slacks by
    perturbation too, from the timeline model with the host's measured time per op."""
    from asyncbench.measure.timing import take_sample

    parts = {
        "host": _prepared(backend, device, topology, steps, device_s=0.0),
        "device": _prepared(backend, device, topology, steps, host_s=0.0),
        "step": _prepared(backend, device, topology, steps),
    }
    per_step: dict[str, list[float]] = {name: [] for name in parts}
    with backend.activate(device):
        for prepared in parts.values():  # warm-up: compiled, queues filled once
            take_sample(prepared.variants[VARIANT], prepared.sync, None)
        for index in range(rounds):
            order = list(parts)[index % 3 :] + list(parts)[: index % 3]
            for name in order:
                prepared = parts[name]
                _, done_s, _ = take_sample(prepared.variants[VARIANT], prepared.sync, None)
                per_step[name].append(done_s / steps)
    for prepared in parts.values():
        if prepared.close is not None:
            prepared.close()
    medians = {name: statistics.median(values) for name, values in per_step.items()}
    intervals = {name: stats.median_ci(values, independent=True) for name, values in per_step.items()}
    slack_host, slack_device = accounting(medians["host"], medians["device"], medians["step"])
    truth = Truth(
        medians["host"],
        medians["device"],
        medians["step"],
        slack_host,
        slack_device,
        host_ci_s=intervals["host"],
        device_ci_s=intervals["device"],
        step_ci_s=intervals["step"],
    )
    if planted.last_op is not None and planted.last_op.kind == "hold":
        per_op = (medians["host"] / topology.ops, medians["device"] / topology.ops)
        modelled = exact(topology, *per_op)
        truth = replace(truth, perturbed_host_s=modelled.perturbed_host_s, perturbed_device_s=modelled.perturbed_device_s)
    return truth


def backend_named(name: str) -> Backend:
    """A backend by name; `streamsim` is the stream test device (tests/support/stream_device.py, one GPU)."""
    if name == "streamsim":
        from tests.support.stream_device import StreamSimBackend

        return StreamSimBackend(gpus=1, pool=2)
    from asyncbench.backends import get_backend

    return get_backend(name)


def split_cores(backend_name: str, host_cpu: int, device_cpu: int) -> Backend:
    """The backend with its compute threads held to `device_cpu` and this thread (the host's: Python's) to `host_cpu`.

    On a CPU the planted step's two sides share the cores: a delay on one takes a core from the other, and the step
    is not the max of its sides (T0 / max(H, D) of 1.09–1.65 on two shared cores), which no hinge fits. Held apart,
    host and device are two resources as on a GPU, and the planted truth means what it says. Threads inherit their
    creator's affinity: this thread is held to the device's CPU while the backend starts its pools (an import and a
    first product, waited for), then moves to the host's; `thread_census` says where every thread ended up.
    """
    os.sched_setaffinity(0, {device_cpu})
    backend = backend_named(backend_name)
    device = device_for(backend_name)
    with backend.activate(device):
        x = backend.random((64, 64), "float32", device)()
        multiply = backend.compiled(lambda a: a @ a) or (lambda a: a @ a)
        backend.wait(multiply(x))
    os.sched_setaffinity(0, {host_cpu})
    return backend


def thread_census() -> str:
    """This process's threads by the CPUs they may run on, e.g. '{0}: 1 thread, {1}: 9 threads'."""
    held: dict[str, int] = {}
    for task in os.listdir("/proc/self/task"):
        try:
            cpus = "{" + ",".join(str(cpu) for cpu in sorted(os.sched_getaffinity(int(task)))) + "}"
        except OSError:  # the thread ended while it was counted
            continue
        held[cpus] = held.get(cpus, 0) + 1
    return ", ".join(f"{cpus}: {count} thread{'s' if count > 1 else ''}" for cpus, count in sorted(held.items()))


def device_for(backend_name: str) -> str:
    return "cuda:0" if backend_name == "streamsim" else "cpu"


def _ms(seconds: float | None) -> str:
    return "–" if seconds is None else f"{seconds * 1e3:.3f}"


def _interval(interval: tuple[float, float] | None) -> str:
    return "" if interval is None else f" [{interval[0] * 1e3:.3f}–{interval[1] * 1e3:.3f}]"


def table(rows: Sequence[tuple[Topology, Truth]], exact_rows: Mapping[str, Truth] | None = None) -> str:
    """The truth per topology, in ms per step, with the model's ratio and the slacks."""
    lines = []
    for topology, truth in rows:
        lines.append(f"{topology.said()}:")
        lines.append(
            f"   H {_ms(truth.host_s)}{_interval(truth.host_ci_s)}  D {_ms(truth.device_s)}{_interval(truth.device_ci_s)}  "
            f"T0 {_ms(truth.step_s)}{_interval(truth.step_ci_s)}  max(H, D) {_ms(max(truth.host_s, truth.device_s))}  "
            f"T0 / max(H, D) {truth.model_ratio:.3f}"
        )
        perturbed = (
            f"; by perturbation host {_ms(truth.perturbed_host_s)}, device {_ms(truth.perturbed_device_s)}"
            if truth.perturbed_host_s is not None
            else ""
        )
        lines.append(
            f"   slack by accounting: host {_ms(truth.slack_host_s)} ({truth.slack_host_s / truth.step_s:.0%} of the step), "
            f"device {_ms(truth.slack_device_s)} ({truth.slack_device_s / truth.step_s:.0%}){perturbed}"
        )
        planted_exact = (exact_rows or {}).get(topology.name)
        if planted_exact is not None:
            lines.append(
                f"   planted exactly (spin alone, no issue cost): T0 {_ms(planted_exact.step_s)}, slack by perturbation host "
                f"{_ms(planted_exact.perturbed_host_s)}, device {_ms(planted_exact.perturbed_device_s)}; by accounting host "
                f"{_ms(planted_exact.slack_host_s)}, device {_ms(planted_exact.slack_device_s)}"
            )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-b", "--backend", default="jax", help="jax, mxnet, streamsim (the stream test device), ...")
    parser.add_argument("--rounds", type=int, default=ROUNDS)
    parser.add_argument("--steps", type=int, default=STEPS)
    args = parser.parse_args()
    backend = backend_named(args.backend)
    device = device_for(args.backend)
    rows = []
    for topology in TOPOLOGIES:
        rows.append((topology, measure(backend, device, topology, args.rounds, args.steps)))
        if planted.last_op is not None:
            print(f"{topology.name}: {planted.last_op.said()}", flush=True)
    exact_rows = {topology.name: exact(topology) for topology in TOPOLOGIES} if args.backend == "streamsim" else None
    print(f"{args.backend} {device}, {args.rounds} rounds of {args.steps} steps; ms per step, 95% intervals:")
    print(table(rows, exact_rows))


if __name__ == "__main__":
    main()
