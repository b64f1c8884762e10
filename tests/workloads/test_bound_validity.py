"""benchmarks/bound_truth.py's exact truth (the timeline model of the test device) and benchmarks/bound_validity.py's
counting: coverage, slack error, verdicts and cost from reruns, with a fake run_case returning hand-made bounds
(the real `--bound` is another helper's)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from typing import Any

import pytest

from asyncbench.results.bound import Bound, BoundKind, Side, SideBound
from asyncbench.results.model import OK, Result, Samples, Stats, VariantResult

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"


def _load(name: str) -> Any:
    if str(BENCHMARKS) not in sys.path:
        sys.path.insert(0, str(BENCHMARKS))  # bound_validity imports bound_truth as the scripts do
    spec = importlib.util.spec_from_file_location(name, BENCHMARKS / f"{name}.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # its dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def truth() -> Any:
    return _load("bound_truth")


@pytest.fixture(scope="module")
def validity(truth: Any) -> Any:
    return _load("bound_validity")


def test_the_timeline_model_gives_each_side_the_other_sides_excess_as_slack(truth):
    host_bound = truth.exact(truth.Topology("h", 0.0006, 0.0003))
    assert host_bound.step_s == pytest.approx(0.0024)
    assert host_bound.perturbed_host_s == pytest.approx(0.0, abs=1e-6)
    assert host_bound.perturbed_device_s == pytest.approx(0.0012, abs=1e-6)
    device_bound = truth.exact(truth.Topology("d", 0.0001, 0.0005))
    assert device_bound.perturbed_host_s == pytest.approx(0.0016, abs=1e-6)
    assert device_bound.perturbed_host_s == pytest.approx(device_bound.slack_host_s, abs=1e-6)  # no wait: accounting is right


def test_a_wait_in_the_middle_leaves_about_half_the_slack_accounting_claims(truth):
    waits = truth.exact(truth.Topology("w", 0.0001, 0.0005, wait_after=2))
    assert waits.step_s == pytest.approx(0.0021)  # the device idles for one host op after the wait
    assert waits.slack_host_s == pytest.approx(0.0017)
    assert waits.perturbed_host_s == pytest.approx(0.0008, abs=1e-6)
    assert waits.slack("host") == waits.perturbed_host_s  # what --bound is held to


def test_a_measured_truth_without_the_model_is_held_to_the_accounting(truth):
    measured = truth.Truth(host_s=0.001, device_s=0.002, step_s=0.0021, slack_host_s=0.0011, slack_device_s=0.0001)
    assert measured.slack("host") == 0.0011
    assert measured.model_ratio == pytest.approx(1.05)


def _bound(kind: BoundKind, host: tuple[float, float, float], device: tuple[float, float, float]) -> Bound:
    sides = tuple(
        SideBound(side, slack, (low, high), 1.0, (0.9, 1.1)) for side, (slack, low, high) in ((Side.HOST, host), (Side.DEVICE, device))
    )
    return Bound("sync_every=0", kind, 0.002, 20, sides)


def _result(bound: Bound | None, median_s: float) -> Result:
    stats = Stats(median_s, 0.0, median_s, median_s, None, None, 3)
    samples = Samples(issue_s=(median_s,) * 3, done_s=(median_s * 4,) * 3)
    return Result(
        id="c",
        experiment="e",
        workload="w",
        backend="streamsim",
        device="cuda:0",
        params={"steps": 4},
        status=OK,
        variants={"sync_every=0": VariantResult(samples, stats, stats, None)},
        bound={} if bound is None else {"sync_every=0": bound},
    )


def test_reruns_are_counted_against_the_truth(validity, truth):
    # device-bound: T0 2 ms, host slack 1.6 ms, device slack 0 (no wait: H 0.4, D 2.0)
    true = truth.Truth(host_s=0.0004, device_s=0.002, step_s=0.002, slack_host_s=0.0016, slack_device_s=0.0)
    bounds = [
        _bound(BoundKind.DEVICE, (0.00161, 0.00150, 0.00170), (0.0, 0.0, 0.00005)),  # covered, error 0.5%
        _bound(BoundKind.DEVICE, (0.00180, 0.00170, 0.00190), (0.0, 0.0, 0.00005)),  # host missed, error 10%
        _bound(BoundKind.INCONCLUSIVE, (0.00160, 0.00100, 0.00200), (0.00001, 0.0, 0.0001)),  # wrong verdict
    ]
    plain_then_bound = iter(
        [(None, 0.0005), (bounds[0], 0.000501), (bounds[1], 0.0005), (None, 0.000498), (None, 0.0005), (bounds[2], 0.0005)]
    )

    def fake_run(case, bound):  # type: ignore[no-untyped-def]
        given, median = next(plain_then_bound)
        assert (given is not None) == bound  # the plain run asks for no bound, the other does
        return _result(given, median)

    case = validity.case_for(truth.TOPOLOGIES[1], "streamsim", "cuda:0", validity.QUICK_SETTINGS)
    reruns = [validity.rerun(case, fake_run, index) for index in range(3)]
    assert [r.bound for r in reruns] == bounds
    tally = validity.count(true, reruns)
    assert tally.expected == "device"
    assert tally.covered == {"host": 2, "device": 3}
    assert tally.errors["host"] == pytest.approx([0.005, 0.1, 0.0])
    assert tally.verdicts_right == 2
    verdict = validity.judged(tally, 0.03)
    assert verdict["slack_error"]["host"]["within_goal"] == 2
    assert verdict["slack_error"]["host"]["met"] is False
    assert verdict["covered"]["device"] == {"reruns": 3, "goal": 3, "met": True}  # 18 of 20 scaled: 3 of 3
    assert verdict["verdict"]["met"] is False
    assert verdict["timed_rounds"]["median_ratio"] == pytest.approx(1.0, abs=0.005)
    assert "MISSED" in validity.table([(truth.TOPOLOGIES[1], true, verdict)])


def test_the_verdict_expected_follows_the_sides_difference_as_a_share_of_the_step(validity, truth):
    def expected(slack_host: float, slack_device: float) -> str | None:
        return validity.expected_verdict(truth.Truth(0.0, 0.0, 0.001, slack_host, slack_device))

    assert expected(0.0, 0.0002) == "host"  # the device waits 20% of the step: the host sets the pace
    assert expected(0.0002, 0.0) == "device"
    assert expected(0.0, 0.00002) == "not host or device"  # 2%: balanced, so never HOST or DEVICE
    assert expected(0.0, 0.0001) is None  # 10%: not judged
    assert validity.verdict_right("not host or device", BoundKind.BALANCED)
    assert validity.verdict_right("not host or device", BoundKind.INCONCLUSIVE)
    assert not validity.verdict_right("not host or device", BoundKind.HOST)


def test_a_rerun_without_a_bound_is_counted_missing_not_covered(validity, truth):
    true = truth.Truth(0.0004, 0.002, 0.002, 0.0016, 0.0)
    tally = validity.count(true, [validity.Rerun(None, 1.0, 3.0, 0.0005, 0.0005)])
    assert tally.missing == 1
    assert tally.covered == {"host": 0, "device": 0}
    assert tally.cost == [3.0]


def test_the_hand_sweep_finds_the_knee_of_a_hinge():
    sweep = _load("bound_sweep")
    points = [(d, 0.002 + 1.0 * max(0.0, d - 0.0008)) for d in (i * 0.0002 for i in range(13))]
    slack, step, cost = sweep.hinge(points)
    assert slack == pytest.approx(0.0008, abs=2e-5)
    assert step == pytest.approx(0.002)
    assert cost == pytest.approx(1.0)
    flat = [(d, 0.002) for d, _ in points]
    assert sweep.hinge(flat)[2] == pytest.approx(0.0)  # never slows: no cost past any knee


class _EdgedStep:
    """A device-bound step on a fake clock: T0 a step, h of host work in it, and a sample that starts with the
    device idle, so its first spin of d is serial: n steps take d + n·max(T0, h + d)."""

    def __init__(self, step_s: float, host_s: float):
        self.step_s, self.host_s, self.now = step_s, host_s, 0.0
        self.calls, self.spun = 0, 0.0

    def clock(self) -> float:
        return self.now

    def spin(self, seconds: float) -> float:
        self.now += seconds
        self.spun = seconds
        return seconds

    def step(self) -> None:
        self.calls += 1

    def barrier(self, device: str) -> None:
        n, d = self.calls, self.spun
        self.now += d + n * max(self.step_s, self.host_s + d) - n * d  # the spins advanced the clock already
        self.calls, self.spun = 0, 0.0


def test_the_hand_sweep_times_the_marginal_steps_so_a_samples_serial_first_spin_cancels(monkeypatch):
    """Timed per step over one sample, the first spin's d / n bent the hinge early (a device-bound step's host slack
    read ~3% of the step low on the test device); the marginal time of n more steps has no such share."""
    sweep = _load("bound_sweep")
    fake = _EdgedStep(step_s=0.0025, host_s=0.0005)

    class Backend:
        def activate(self, device: str) -> Any:
            import contextlib

            return contextlib.nullcontext()

        barrier = staticmethod(fake.barrier)

    monkeypatch.setattr(sweep.time, "perf_counter", fake.clock)
    monkeypatch.setattr(sweep.bound_planted, "spin", fake.spin)
    monkeypatch.setattr(sweep.bound_planted, "planted_step", lambda backend, device, params: fake.step)
    topology = _load("bound_truth").TOPOLOGIES[1]
    found = sweep.sweep(Backend(), "cpu", topology, "host", 0.0025, rounds=1, steps=20)
    grid = 0.0025 * sweep.LEVEL_SPAN / (sweep.LEVELS - 1) / sweep.KNEES_PER_LEVEL
    assert found["slack_s"] == pytest.approx(0.002, abs=grid)  # T0 − h, not early
    assert found["step_s"] == pytest.approx(0.0025)


def test_on_a_cpu_the_truth_is_the_hand_sweeps_and_validate_counts_each_topology(validity, truth, monkeypatch):
    accounting = truth.Truth(host_s=0.001, device_s=0.003, step_s=0.004, slack_host_s=0.003, slack_device_s=0.001)
    monkeypatch.setattr(validity, "measure", lambda backend, device, topology: accounting)
    monkeypatch.setattr(validity, "backend_named", lambda name: None)
    swept = {"host": 0.002, "device": 0.0}
    sweep_module = _load("bound_sweep")
    monkeypatch.setattr(sweep_module, "sweep", lambda backend, device, topology, side, step_s, rounds: {"slack_s": swept[side]})
    found = validity.truth_of(None, "cpu", truth.TOPOLOGIES[1], "sweep")
    assert (found.slack("host"), found.slack("device")) == (0.002, 0.0)
    assert validity.truth_of(None, "cpu", truth.TOPOLOGIES[1], "accounting").slack("host") == 0.003
    with pytest.raises(SystemExit, match="only the stream test device"):
        validity.truth_of(None, "cpu", truth.TOPOLOGIES[1], "model")


def test_on_the_test_device_the_truth_is_the_sweeps_too_unless_the_model_is_asked_for(validity, truth, monkeypatch):
    modelled = truth.Truth(0.001, 0.003, 0.004, 0.003, 0.001, perturbed_host_s=0.0025, perturbed_device_s=0.0)
    monkeypatch.setattr(validity, "measure", lambda backend, device, topology: modelled)
    swept = {"host": 0.002, "device": 0.0}
    sweep_module = _load("bound_sweep")
    monkeypatch.setattr(sweep_module, "sweep", lambda backend, device, topology, side, step_s, rounds: {"slack_s": swept[side]})
    assert validity.truth_of(None, "cuda:0", truth.TOPOLOGIES[3]).slack("host") == 0.002
    assert validity.truth_of(None, "cuda:0", truth.TOPOLOGIES[3], "model").slack("host") == 0.0025

    good = _bound(BoundKind.DEVICE, (0.0021, 0.0019, 0.0023), (0.0, 0.0, 0.0001))
    rows = validity.validate(
        "jax", 2, validity.QUICK_SETTINGS, truth.TOPOLOGIES[1:2], run=lambda case, bound: _result(good if bound else None, 0.001)
    )
    ((topology, held_to, verdict),) = rows
    assert held_to.slack("host") == 0.002
    assert verdict["covered"]["host"]["reruns"] == 2
    assert verdict["verdict"] == {"expected": "device", "right": 2, "of": 2, "met": True, "got": {"device": 2}}
    assert verdict["slack_error"]["host"]["within_goal"] == 2  # 0.1 ms of a 4 ms step: 2.5%, within JAX's 5%
    assert verdict["slack_error"]["host"]["bias_share"] == pytest.approx(0.025)  # signed: --bound above the truth


def test_the_hand_sweep_reads_a_holds_real_length_from_the_test_devices_log(monkeypatch):
    """A hold's sleep overshoots its asked length; read as asked, the device side's knee lay early by the overshoot
    (the host-bound device slack 6.2% of the step below `--bound`'s, which measures each delay in place)."""
    sweep = _load("bound_sweep")
    from tests.support.stream_device import Span

    overshoot_s = 0.0001

    class Device:
        log: list[Any] | None = None

    target = Device()

    class Backend:
        def activate(self, device: str) -> Any:
            import contextlib

            return contextlib.nullcontext()

        def device(self, name: str) -> Device:
            return target

        def barrier(self, device: str) -> None:
            pass

    def device_op(backend: Any, device: str, seconds: float) -> tuple[Any, Any]:
        def hold(waited: bool) -> None:
            if target.log is not None:
                target.log.append(Span("hold", "s", 0.0, seconds + overshoot_s))
                target.log.append(Span("kernel", "s", 0.0, 1.0))  # a step's kernel: not a hold, not read

        return type("Op", (), {"measured_s": seconds})(), hold

    def planted_step(backend: Any, device: str, params: Any) -> Any:
        def step() -> None:  # the step's own ops are holds too, logged after the call's delay: not the delay's length
            for _ in range(int(params["ops"])):
                if target.log is not None:
                    target.log.append(Span("hold", "s", 0.0, 0.5))

        step.device_op = type("Op", (), {"kind": "hold"})()  # type: ignore[attr-defined]
        return step

    monkeypatch.setattr(sweep.bound_planted, "device_op", device_op)
    monkeypatch.setattr(sweep.bound_planted, "planted_step", planted_step)
    topology = _load("bound_truth").TOPOLOGIES[0]
    found = sweep.sweep(Backend(), "cuda:0", topology, "device", 0.002, rounds=1, steps=2)
    levels = [0.002 * sweep.LEVEL_SPAN * i / (sweep.LEVELS - 1) for i in range(sweep.LEVELS)]
    assert [d for d, _ in found["points"]] == pytest.approx([0.0] + [level + overshoot_s for level in levels[1:]])
    assert target.log is None  # the log is left off between samples


def test_the_hand_sweeps_knee_has_an_interval_from_its_rounds_that_narrows_with_less_noise():
    sweep = _load("bound_sweep")
    import random

    draw = random.Random(1)
    levels = [0.0024 * i / 12 for i in range(13)]

    def rounds_of(noise_s: float, rounds: int) -> tuple[dict[int, list[float]], dict[int, list[float]]]:
        spun = {i: [d] * rounds for i, d in enumerate(levels)}
        times = {i: [0.002 + max(0.0, d - 0.0008) + draw.gauss(0.0, noise_s) for _ in range(rounds)] for i, d in enumerate(levels)}
        return spun, times

    noisy = sweep.knee_ci(*rounds_of(0.00005, 20), 20)
    quiet = sweep.knee_ci(*rounds_of(0.000005, 20), 20)
    grid = 1e-9  # the knees lie on a grid whose point at the knee is 0.0008 within float rounding
    assert noisy[0] - grid <= 0.0008 <= noisy[1] + grid
    assert quiet[0] - grid <= 0.0008 <= quiet[1] + grid
    assert quiet[1] - quiet[0] < noisy[1] - noisy[0]
    assert sweep.knee_ci(*rounds_of(0.00005, 2), 2) is None  # two rounds: no interval


def test_a_rerun_is_consistent_with_a_measured_truth_where_the_two_intervals_together_reach_it(validity, truth):
    # the rerun's interval [1.9, 2.0] misses a truth of 2.05; with the truth's [2.0, 2.1] the rerun reaches 0.05 up,
    # the truth 0.05 down: together √(0.05² + 0.05²) ≈ 0.071, short of their 0.1 apart
    assert not validity.consistent(1.95, (1.9, 2.0), 2.05, None)
    assert not validity.consistent(1.95, (1.9, 2.0), 2.05, (2.0, 2.1))
    assert validity.consistent(1.95, (1.9, 2.0), 2.0, (1.95, 2.05))  # 0.05 ≤ √(0.05² + 0.05²)
    assert validity.consistent(1.95, (1.9, 2.0), 2.0, None)  # strict coverage where the truth has no interval
    assert not validity.consistent(1.95, None, 1.95, (1.9, 2.0))  # no interval of the rerun's: nothing to hold
    true = truth.Truth(0.0004, 0.002, 0.002, 0.0016, 0.0, perturbed_host_s=0.00160, perturbed_host_ci_s=(0.00155, 0.00165))
    bound = _bound(BoundKind.DEVICE, (0.00157, 0.00152, 0.00159), (0.0, 0.0, 0.0001))  # misses 1.60 strictly
    tally = validity.count(true, [validity.Rerun(bound, 1.0, 3.0, 0.0005, 0.0005)])
    assert tally.covered["host"] == 0
    assert tally.consistent["host"] == 1  # 0.03 ms apart, within √(0.02² + 0.05²) ms
    assert tally.half_widths["host"] == [pytest.approx(0.0000350 / 0.002)]
