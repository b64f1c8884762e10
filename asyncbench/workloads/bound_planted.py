"""A step with a planted topology, whose truth is known: what `run --bound` is validated against.

    asyncbench run -w asyncbench.workloads.bound_planted:planted -b jax -d cpu --set host_s=0.0006 --set device_s=0.0003

One step issues `ops` ops; before each, the host spins for `host_s` (a busy loop: the host's cost per op), and
each op is device work of `device_s`: on a device with a hold kernel (the stream test device, CUDA) one kernel of
exactly that length; elsewhere (JAX and MXNet on a CPU) a square product whose size is calibrated at set-up so
that one costs `device_s` measured alone — large enough never to run inline on the calling thread (XLA runs a
computation under 1000 FLOPs there). `wait_after` m > 0 makes the host wait for op m's result in the middle of
the step (an `.item()` in a training loop); 0: no wait, the step runs ahead.

Per step the host's time is about H = ops × host_s and the device's D = ops × device_s; without a wait the step
takes T0 = max(H, D) in steady state, and a side's slack (how much it can grow before the step slows) is
T0 − its own time: exact on the test device (spins and simulated kernels), measured apart from `--bound` on a CPU
(benchmarks/bound_truth.py), where the host's spin and the backend's compute threads share the cores.

Shipped in the package, not among the built-in workloads (`asyncbench list`): it measures asyncbench, not an
array framework, and a user checking `--bound` on their own machine names it by module, with no clone needed.
"""

from __future__ import annotations

import dataclasses
import time
from dataclasses import dataclass
from typing import Any, Callable, Mapping

from asyncbench.backends.base import Backend
from asyncbench.measure.host_spin import busy as spin
from asyncbench.workloads.base import FLOAT, INT, Param, Prepared
from asyncbench.workloads.step_form import StepWorkload

#: the smallest calibrated product: 2·16³ = 8192 FLOPs, well above the 1000 under which XLA's CPU client runs a
#: computation inline on the calling thread (ASYNC-CPU-BACKENDS.md): an op of the planted step always queues
SMALLEST_SIDE = 16
#: a product this small is the "trivial" device work of device_s = 0: 16 FLOPs, run inline on JAX, microseconds
TRIVIAL_SIDE = 2
#: the largest calibrated product (a 4096² product takes about a second on a 2-core CPU): a longer op is asked for
#: with several ops, not one
LARGEST_SIDE = 4096
#: ops issued back to back per calibration sample, then one wait: the wait's own cost (0.26 ms on JAX's CPU client)
#: spread thin, as it is in the step
CALIBRATION_OPS = 8
#: samples per calibrated size (their least: op_cost_s), and refinements of the size
CALIBRATION_SAMPLES = 7
CALIBRATION_REFINEMENTS = 4
#: the first size tried (a 128² product: about 0.1 ms on a 2-core CPU), and how close to the asked cost is close
#: enough (a side³ step of one is 1-2% at the sizes of 0.5 ms ops)
FIRST_SIDE = 128
CALIBRATION_TOLERANCE = 0.03


@dataclass(frozen=True)
class DeviceOp:
    """How one op's device work is made: a hold kernel of `seconds`, or a product of `side`² (its cost measured)."""

    #: "hold" (a kernel of exactly the asked length) or "product" (a calibrated square product)
    kind: str
    #: the cost asked for, per op (s)
    seconds: float
    #: the product's side (0 for a hold)
    side: int
    #: the product's cost measured alone at set-up, per op (s); the hold's asked length
    measured_s: float

    def said(self) -> str:
        if self.kind == "hold":
            return f"device work per op: a hold kernel of {self.seconds * 1e3:.3g} ms"
        return (
            f"device work per op: a {self.side}² product, {self.measured_s * 1e3:.3g} ms measured alone (asked {self.seconds * 1e3:.3g} ms)"
        )


def _product(backend: Backend, device: str, side: int) -> Callable[[], Any]:
    """A callable that issues one `side`² product on the device (compiled where the backend's users compile)."""
    x = backend.random((side, side), "float32", device)()
    multiply = backend.compiled(lambda a: a @ a) or (lambda a: a @ a)
    multiply(x)  # compiled now, not in the first timed step
    return lambda: multiply(x)


def op_cost_s(backend: Backend, device: str, issue: Callable[[], Any], samples: int = CALIBRATION_SAMPLES) -> float:
    """What one op issued by `issue` costs on the device, measured alone: CALIBRATION_OPS back to back, then a wait
    for the last, per op; the least of `samples`: on a shared machine a neighbour only ever adds time, and the size
    chosen should not move with whoever was running at set-up (the step's truth is measured, not assumed)."""
    backend.wait(issue())
    costs = []
    for _ in range(samples):
        start = time.perf_counter()
        out = None
        for _ in range(CALIBRATION_OPS):
            out = issue()
        backend.wait(out)
        costs.append((time.perf_counter() - start) / CALIBRATION_OPS)
    return min(costs)


def calibrate(backend: Backend, device: str, seconds: float) -> tuple[int, float]:
    """The side of a square product that costs about `seconds` on this device, and its measured cost: measured at
    FIRST_SIDE, then solved for on a cost that grows as side³, a few times (each new size compiles once on JAX); of
    the sizes tried, the one closest to `seconds` (a noisy measurement can send the last guess astray)."""
    side = FIRST_SIDE
    tried = {side: op_cost_s(backend, device, _product(backend, device, side))}
    for _ in range(CALIBRATION_REFINEMENTS):
        cost = tried[side]
        if abs(cost - seconds) <= CALIBRATION_TOLERANCE * seconds:
            break
        side = max(SMALLEST_SIDE, min(LARGEST_SIDE, round(side * (seconds / max(cost, 1e-9)) ** (1 / 3))))
        if side in tried:
            break
        tried[side] = op_cost_s(backend, device, _product(backend, device, side))
    best = min(tried, key=lambda size: abs(tried[size] - seconds))
    return best, tried[best]


#: (backend, device, asked cost) -> the calibrated side and its measured cost, for the life of the process: every set-up
#: of the same topology in one process (a case's variants, the truth's parts in benchmarks/bound_truth.py, `--bound`'s
#: reruns) plants the same op, not one whose size moved with the machine's load at its calibration
_CALIBRATED: dict[tuple[str, str, float], tuple[int, float]] = {}


def device_op(backend: Backend, device: str, seconds: float) -> tuple[DeviceOp, Callable[[bool], Any]]:
    """The op of the planted step: its description and a callable that issues one (`waited`: the step waits for it or
    returns it, so it returns an array; else it may return None)."""
    marker = _product(backend, device, TRIVIAL_SIDE)
    if seconds > 0 and backend.hold(device, seconds):  # a device with a hold kernel: exact lengths
        backend.barrier(device)

        def hold(waited: bool) -> Any:
            backend.hold(device, seconds)
            # a trivial kernel behind a hold that is waited for or returned, none behind the others: the test device
            # sleeps once per kernel, and a sleep of microseconds overshoots by tens of them
            return marker() if waited else None

        return DeviceOp("hold", seconds, 0, seconds), hold
    if seconds <= 0:
        chosen, described = marker, DeviceOp("product", 0.0, TRIVIAL_SIDE, op_cost_s(backend, device, marker))
    else:
        key = (backend.name, device, seconds)
        if key not in _CALIBRATED:
            _CALIBRATED[key] = calibrate(backend, device, seconds)
        side, cost = _CALIBRATED[key]
        chosen, described = _product(backend, device, side), DeviceOp("product", seconds, side, cost)

    def product(waited: bool) -> Any:
        return chosen()

    return described, product


def planted_step(backend: Backend, device: str, params: Mapping[str, Any]) -> Callable[[], Any]:
    """One step: `ops` times a host spin of `host_s` then one op of `device_s`; after op `wait_after` (> 0) the
    host waits for its result."""
    host_s, ops, wait_after = float(params["host_s"]), int(params["ops"]), int(params["wait_after"])
    described, issue = device_op(backend, device, float(params["device_s"]))
    wait = backend.wait

    def step() -> Any:
        out = None
        for index in range(1, ops + 1):
            if host_s > 0:
                spin(host_s)
            out = issue(index in (wait_after, ops))
            if index == wait_after:
                wait(out)
        return out

    step.device_op = described  # type: ignore[attr-defined]  # read by PlantedStep.setup and benchmarks/bound_truth.py
    return step


class PlantedStep(StepWorkload):
    """The planted step as a step-form workload; its set-up note says what the device work per op is."""

    def __init__(self) -> None:
        #: the device op of the latest set-up (what its note says)
        self.last_op: DeviceOp | None = None

        def bound_planted(backend: Backend, device: str, params: Mapping[str, Any]) -> Callable[[], Any]:
            step = planted_step(backend, device, params)
            self.last_op = step.device_op  # type: ignore[attr-defined]
            return step

        bound_planted.__doc__ = planted_step.__doc__
        super().__init__(
            bound_planted,
            summary="a planted topology: ops × (host spin, device op), an optional wait: the truth --bound is checked against",
            sync_every=(0,),
            params=(
                Param("host_s", FLOAT, 0.0006, "host busy spin before each op (s)", minimum=0.0, maximum=1.0),
                Param(
                    "device_s",
                    FLOAT,
                    0.0003,
                    "device work per op (s): a hold kernel, or a product calibrated to it",
                    minimum=0.0,
                    maximum=1.0,
                ),
                Param("ops", INT, 4, "ops per step", minimum=1, maximum=10_000),
                Param("wait_after", INT, 0, "the host waits for op m's result (0: no wait)", minimum=0, maximum=10_000),
            ),
        )

    def setup(self, backend: Backend, device: str, params: Mapping[str, Any]) -> Prepared:
        if params["wait_after"] > params["ops"]:
            raise ValueError(f"wait_after={params['wait_after']} names no op: the step has {params['ops']}")
        prepared = super().setup(backend, device, params)
        said = self.last_op.said() if self.last_op is not None else None
        return dataclasses.replace(prepared, note="; ".join(filter(None, (prepared.note, said))) or None)


#: the planted step: `-w asyncbench.workloads.bound_planted:planted`
planted = PlantedStep()
