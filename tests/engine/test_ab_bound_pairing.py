"""`ab --bound` in the engine: each side's bounds taken once (in the first block, as the census is), the flip read
from the two, the verdicts left as they are, the rounds' time kept off the gate's clock; a side's answer held to a
stored bound's shape."""

from __future__ import annotations

import random
import time
from typing import Any

import pytest

from asyncbench.engine import gate_time, paired
from asyncbench.results.bound import Bound, BoundKind, Side, SideBound, bound_to_dict
from asyncbench.results.bound_change import Change
from tests.support.fake_sides import BiasedSide, Clock, FakeWork, fake_case

LEVELS = (2.5e-4, 5e-4, 7.5e-4, 1e-3, 1.5e-3)


def _bound(kind: BoundKind, host_slack_s: float, device_slack_s: float) -> dict[str, Any]:
    sides = tuple(
        SideBound(side, slack, (max(slack - 2e-5, 0.0), slack + 2e-5), 1.0, (0.95, 1.05), LEVELS)
        for side, slack in ((Side.HOST, host_slack_s), (Side.DEVICE, device_slack_s))
    )
    return bound_to_dict(Bound("step", kind, 1e-3, 12, sides=sides))


class BoundSide(BiasedSide):
    """A fake side that answers "bound" with a fixed reading, counting the calls."""

    def __init__(self, name: str, rng: random.Random, answer: Any):
        super().__init__(name, rng, 0.001, 0.001)
        self.answer, self.asked = answer, 0

    def call(self, command: str, payload: Any, timeout_s: float) -> Any:
        if command == "bound":
            self.asked += 1
            return self.answer
        return super().call(command, payload, timeout_s)


def _pairing(base_answer: Any, head_answer: Any, bound: bool = True) -> tuple[paired.Pairing, BoundSide, BoundSide]:
    rng = random.Random(5)
    base, head = BoundSide("base", rng, base_answer), BoundSide("head", rng, head_answer)
    pairing = paired.Pairing(fake_case(), fake_case(), (base, head), FakeWork(), 0.01, 0.05, bound=bound)  # type: ignore[arg-type]
    return pairing, base, head


def test_each_side_takes_its_bounds_once_and_a_flip_is_read_from_the_two():
    host = {"bounds": {"step": _bound(BoundKind.HOST, 0.0, 4e-4)}, "note": None}
    device = {"bounds": {"step": _bound(BoundKind.DEVICE, 4e-4, 0.0)}, "note": None}
    pairing, base, head = _pairing(host, device)
    for _ in range(3):
        paired.shared_block([pairing], 0.0)  # three blocks, each cut to its least rounds
    row = pairing.finish()
    assert pairing.n_blocks > 1
    assert (base.asked, head.asked) == (1, 1)
    assert row.bound_changes is not None
    (change,) = row.bound_changes
    assert (change.variant, change.change) == ("step", Change.FLIPPED)
    assert change.base is not None
    assert change.head is not None
    assert (change.base.bound, change.head.bound) == (BoundKind.HOST, BoundKind.DEVICE)

    plain, _, _ = _pairing(host, device, bound=False)
    for _ in range(3):
        paired.shared_block([plain], 0.0)
    unbound = plain.finish()
    assert unbound.bound_changes is None
    assert [r.label for r in unbound.ratios] == [r.label for r in row.ratios]  # the bound changes no verdict


def test_a_workload_with_no_step_to_perturb_is_not_measured_with_its_reason():
    why = {"bounds": {}, "note": "--bound measures step-form workloads (@asyncbench.step, -w file.py:Name): no bound for this one"}
    pairing, _, _ = _pairing(why, why)
    paired.shared_block([pairing], 0.0)
    (change,) = pairing.finish().bound_changes or ()
    assert (change.change, change.why) == (Change.NOT_MEASURED, why["note"])


def test_a_side_answer_off_a_bound_s_shape_is_the_case_s_one_line_error():
    bad = {"bounds": {"step": {**_bound(BoundKind.HOST, 0.0, 4e-4), "bound": "cpu-bound"}}, "note": None}
    pairing, _, _ = _pairing(bad, bad)
    paired.shared_block([pairing], 0.0)
    row = pairing.finish()
    assert row.status == "error"
    assert "the base side's bounds" in (row.reason or "")
    assert "cpu-bound" in (row.reason or "")
    assert "\n" not in (row.reason or "")


class _SlowBoundSide(BoundSide):
    """A side whose samples take 0.1 s of the gate's clock, and whose perturbation rounds take 40 s of it."""

    def __init__(self, name: str, rng: random.Random, answer: Any, clock: Clock):
        super().__init__(name, rng, answer)
        self.clock = clock

    def call(self, command: str, payload: Any, timeout_s: float) -> Any:
        self.clock.now_s += {"sample": 0.1, "bound": 40.0}.get(command, 0.0)
        return super().call(command, payload, timeout_s)


def _gated(monkeypatch: Any, bound: bool) -> tuple[paired.Pairing, Any]:
    clock = Clock()
    monkeypatch.setattr(time, "perf_counter", clock)
    rng = random.Random(3)
    answer = {"bounds": {"step": _bound(BoundKind.HOST, 0.0, 4e-4)}, "note": None}
    sides = (_SlowBoundSide("base", rng, answer, clock), _SlowBoundSide("head", rng, answer, clock))
    pairing = paired.Pairing(fake_case(), fake_case(), sides, FakeWork(), 0.01, 0.05, bound=bound)  # type: ignore[arg-type]
    (row,) = gate_time.gate([pairing], 30.0)
    return pairing, row


def test_the_perturbation_rounds_take_none_of_the_gates_time(monkeypatch):
    """80 s of perturbation rounds in a 30 s gate: the verdicts get the blocks, the looks and the time they get
    without them (before, the first block's rounds spent the gate, and its one block decided nothing)."""
    plain, plain_row = _gated(monkeypatch, bound=False)
    bound, bound_row = _gated(monkeypatch, bound=True)
    assert bound.aside_s == 80.0
    assert (bound_row.blocks, bound.max_blocks) == (plain_row.blocks, plain.max_blocks)
    assert bound_row.blocks > 1
    assert bound_row.ratios == plain_row.ratios
    assert bound_row.elapsed_s == pytest.approx(plain_row.elapsed_s)  # the case's time is its blocks', not its information rounds'
    assert bound_row.bound_changes is not None
