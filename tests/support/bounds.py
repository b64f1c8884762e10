"""Bounds built by hand (results.bound), for what stores, reads and renders them: figures chosen, not fitted."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

from asyncbench.results.bound import Bound, BoundKind, Perturbed, Side, SideBound
from asyncbench.results.model import Result
from tests.support.helpers import ok_result, report_of

#: a host delay's asked and injected lengths: a spin runs a little longer than asked
HOST_LEVELS = ((0.0002, 0.000202), (0.0008, 0.000808))


def _ns(seconds: float) -> float:
    """To the nanosecond, as a results file stores seconds (so a bound reads back equal)."""
    return round(seconds, 9)


def device_bound(variant: str = "matmul") -> Bound:
    """A device-bound step of 1.1 ms: the host could take 0.42 ms more (38% of it) before the step slows, the
    device none; no gain shown from cutting host work (ceiling 1.00× [1.00–1.01])."""
    observations = tuple(
        [Perturbed(r, None, 0.0, 0.0, 0.0011) for r in range(6)]
        + [
            Perturbed(r, Side.HOST, level, injected, _ns(0.0011 + max(0.0, injected - 0.00042)))
            for r in range(6)
            for level, injected in HOST_LEVELS
        ]
        + [Perturbed(r, Side.DEVICE, level, level, _ns(0.0011 + level)) for r in range(6) for level in (0.0002, 0.0008)]
    )
    return Bound(
        variant=variant,
        bound=BoundKind.DEVICE,
        step_s=0.0011,
        rounds=6,
        sides=(
            SideBound(Side.HOST, 0.00042, (0.0004, 0.00044), 0.98, (0.93, 1.04), (0.000202, 0.000808)),
            SideBound(Side.DEVICE, 0.0, (0.0, 0.000012), 1.01, (0.97, 1.05), (0.0002, 0.0008)),
        ),
        ceiling=1.0,
        ceiling_ci=(1.0, 1.011),
        observations=observations,
    )


def host_bound(variant: str = "matmul") -> Bound:
    """A host-bound step of 1 ms whose device has 0.3 ms of slack: cutting host work makes it at most ×1.43 faster."""
    return Bound(
        variant=variant,
        bound=BoundKind.HOST,
        step_s=0.001,
        rounds=30,
        sides=(
            SideBound(Side.HOST, 0.0, (0.0, 0.00001), 1.0, (0.96, 1.03), (0.0001, 0.0005)),
            SideBound(Side.DEVICE, 0.0003, (0.00028, 0.00032), 0.6, (0.5, 0.7), (0.0001, 0.0005)),
        ),
        ceiling=0.001 / (0.001 - 0.0003),  # step / (step − the device's slack), as the fit computes it
        ceiling_ci=(1.39, 1.47),
    )


def synchronous(variant: str = "matmul") -> Bound:
    return Bound(variant=variant, bound=BoundKind.SYNCHRONOUS, step_s=0.002, rounds=6, note="synchronous: the host is the device")


def result_with(*bounds: Bound, case_id: str = "m[torch,cpu]") -> Result:
    """An ok result whose variants' bounds are these (each bound's variant one of the result's: a reader refuses a
    bound of a variant the result does not have)."""
    result = ok_result(case_id)
    [timed] = result.variants.values()
    variants = {**result.variants, **{bound.variant: timed for bound in bounds}}
    return dataclasses.replace(result, variants=variants, bound={bound.variant: bound for bound in bounds})


def verified_host_bound(variant: str = "matmul") -> Bound:
    """host_bound with its ceiling checked by jit: 760 µs a step, 80% [74%–87%] of the 300 µs the device's slack allows."""
    from asyncbench.results.bound import Verified, VerifyHow

    pairs = tuple((0.001, 0.00076) for _ in range(12))
    return dataclasses.replace(
        host_bound(variant),
        verified=Verified(VerifyHow.JIT, 0.00076, (0.000758, 0.000762), 0.8, (0.7375, 0.8714), None, pairs),
    )


def stored_file(bound: Bound, folder: Path, observations: bool) -> Path:
    """A results file of one result holding `bound` (its variant `a`'s perturbation rounds dropped unless
    `observations`), as a file written by a rule before today's stores a reading: for tests of how it is read now."""
    raw = json.loads(report_of([result_with(bound)]).to_json())
    if not observations:
        raw["results"][0]["bound"]["a"]["observations"] = []
    path = folder / "r.json"
    path.write_text(json.dumps(raw))
    return path
