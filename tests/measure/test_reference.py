"""The machine's reference: sampled between a case's rounds at a bounded share, stored with the case, read back."""

from __future__ import annotations

import json

import pytest

from asyncbench.backends import get_backend
from asyncbench.errors import InputError
from asyncbench.measure import reference
from asyncbench.results import records, schema
from asyncbench.results.fields import At
from asyncbench.results.reference import Reference
from tests.support.helpers import run_workload


class FakeClock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def _taker(clock: FakeClock, reference_s: float) -> reference.Taker:
    def run() -> None:
        clock.now += reference_s

    return reference.Taker(run, "fake work", clock)


def test_the_reference_keeps_near_its_share_of_a_long_case():
    """1000 rounds of 10 ms: a 2 ms reference is sampled after rounds drawn at random, at about 5% of the time."""
    clock = FakeClock()
    taker = _taker(clock, 0.002)
    for _ in range(1000):
        clock.now += 0.010
        taker.between_rounds()
    spent = sum(taker.samples)
    assert 0.03 < spent / (1000 * 0.010) < 0.07
    assert len(taker.finish().samples_s) == len(taker.samples) >= reference.MIN_SAMPLES


def test_a_short_case_takes_its_fewest_samples_between_its_own_rounds():
    """A case of 6 rounds (its min_samples): MIN_SAMPLES spread over those rounds, each round followed by its share,
    so the reference samples the same moments of the machine as the case; none left for the end."""
    clock = FakeClock()
    taker = reference.Taker(lambda: setattr(clock, "now", clock.now + 0.002), "fake work", clock, early_rounds=6)
    after_each = []
    for _ in range(6):
        clock.now += 0.003
        before = len(taker.samples)
        taker.between_rounds()
        after_each.append(len(taker.samples) - before)
    assert sum(after_each) == reference.MIN_SAMPLES
    assert max(after_each) - min(after_each) <= 1
    taken = taker.finish()
    assert len(taken.samples_s) == reference.MIN_SAMPLES
    assert taken.work == "fake work"


def test_rounds_are_drawn_at_random_not_at_a_stride():
    """A fixed stride can lock onto a neighbour's time slices (measured: a case and a reference alternated took a
    CPU hog's slices in turn): the rounds after which samples are taken are not evenly spaced."""
    clock = FakeClock()
    taker = _taker(clock, 0.001)
    taken_after = []
    for index in range(400):
        clock.now += 0.002
        before = len(taker.samples)
        taker.between_rounds()
        if len(taker.samples) > before:
            taken_after.append(index)
    gaps = {b - a for a, b in zip(taken_after[1:], taken_after[2:], strict=False)}
    assert len(gaps) > 3


def test_a_backend_whose_work_cannot_run_gives_no_reference():
    class Broken:
        name = "broken"

        def ones(self, shape, dtype, device):
            raise RuntimeError("no float32 here")

    assert reference.taker_for(Broken(), "cpu") is None  # type: ignore[arg-type]


def test_a_numpy_case_carries_its_machine_reference_and_the_os_account():
    result = run_workload("matmul", "numpy", "cpu", size=64, n_iter=2)
    taken = result.reference
    assert taken is not None
    assert taken.work == reference.work_of("numpy", "cpu") == "float32 256×256 product ×4 on numpy cpu"
    assert len(taken.samples_s) >= reference.MIN_SAMPLES
    assert min(taken.samples_s) > 0
    assert taken.cpu_pressure is None or 0 <= taken.cpu_pressure <= 1
    assert taken.others_cpu is None or 0 <= taken.others_cpu <= 1
    stored = json.loads(records.result_line(result))["reference"]
    read = records.result_from_dict(json.loads(records.result_line(result))).reference
    assert read is not None
    assert read.work == taken.work
    assert read.cpu_pressure == taken.cpu_pressure
    assert read.samples_s == pytest.approx(taken.samples_s, abs=1e-9)  # stored to the nanosecond
    Reference.check(stored, At("r.json", "results[0].reference"))


def test_a_case_measured_in_this_process_takes_the_same_reference():
    backend = get_backend("numpy")
    taker = reference.taker_for(backend, "cpu")
    assert taker is not None
    assert taker.work == reference.work_of("numpy", "cpu")


@pytest.mark.parametrize(
    "bad, said",
    [
        ({"work": "w", "samples_s": []}, "expected 1 to"),
        ({"work": "w", "samples_s": [0.001, -1]}, "takes time"),
        ({"work": "w", "samples_s": [0.001], "cpu_pressure": 1.5}, "at most 1"),
        ({"work": "w", "samples_s": [0.001], "others_cpu": -0.1}, "cannot be negative"),
        ({"work": "w\x1b[2J", "samples_s": [0.001]}, "control character"),
        ({"work": "w", "samples_s": [0.001] * 2001}, "expected 1 to"),
    ],
)
def test_a_stored_reference_is_held_to_its_shape(bad, said):
    with pytest.raises(InputError, match=said):
        Reference.check(bad, At("r.json", "results[0].reference"))


def test_record_refuses_a_results_file_with_a_forged_reference(tmp_path):
    result = run_workload("matmul", "numpy", "cpu", size=64, n_iter=2)
    line = json.loads(records.result_line(result))
    line["reference"]["samples_s"][0] = -0.5
    raw = {
        "schema_version": 10,
        "tool": {"name": "asyncbench", "version": "0"},
        "created": "2026-11-28T07:00:00+00:00",
        "environment": {},
        "config": {},
        "results": [line],
    }
    with pytest.raises(InputError, match="reference"):
        schema.check_file(raw, "r.json")


class FakePressure:
    """/proc/pressure/cpu's stall counter: each read adds `busy` of the time since the last read while busy."""

    def __init__(self, busy_reads: int, share: float = 0.5):
        self.reads, self.busy_reads, self.share = 0, busy_reads, share
        self.total, self.last = 0, None

    def __call__(self) -> int:
        import time

        now = time.monotonic()
        if self.last is not None and self.reads < self.busy_reads * 2:
            self.total += int((now - self.last) * 1e6 * self.share)
        self.last = now
        self.reads += 1
        return self.total


def _settled(monkeypatch, busy_probes: int, limit_s: float = reference.WAIT_LIMIT_S) -> tuple[float | None, reference.Taker]:
    monkeypatch.setattr(reference.pressure, "stalled_us", FakePressure(busy_probes))
    taker = reference.Taker(lambda: None, "fake work")
    return taker.settle(limit_s), taker


def test_a_case_waits_for_a_calm_cpu_before_it_samples(monkeypatch):
    monkeypatch.setattr(reference.Taker, "never_calm", False)
    waited, taker = _settled(monkeypatch, busy_probes=0)
    assert waited is not None
    assert waited < 3 * reference.PROBE_S  # calm at once: one probe
    waited, taker = _settled(monkeypatch, busy_probes=4)
    assert waited is not None
    assert waited >= 4 * reference.PROBE_S  # 4 busy probes of PROBE_S each (the limit, 5 s, far)
    assert not reference.Taker.never_calm
    assert taker.finish().waited_s == waited


def test_a_process_that_found_no_calm_moment_waits_no_more(monkeypatch):
    monkeypatch.setattr(reference.Taker, "never_calm", False)
    waited, _ = _settled(monkeypatch, busy_probes=10_000, limit_s=0.1)
    assert waited is not None
    assert waited >= 0.09  # all of its limit, less at most a run of the work
    assert reference.Taker.never_calm
    again, _ = _settled(monkeypatch, busy_probes=10_000)
    assert again is not None
    assert again < 3 * reference.PROBE_S  # one probe, no wait: the neighbour stays


@pytest.mark.parametrize("run_s", [0.007, 0.03, 0.15])
def test_the_calm_wait_never_runs_past_its_limit(monkeypatch, run_s):
    # A neighbour that stays (every probe busy) and a work whose runs take 7 ms, 30 ms (longer than a probe) or
    # 150 ms: the wait ended past its 1 s limit by up to a probe and a run (1.05-1.15 s stored with max_time_s 2).
    monkeypatch.setattr(reference.Taker, "never_calm", False)
    clock = FakeClock()
    monkeypatch.setattr(reference.pressure, "stalled_us", lambda: int(clock.now * 1e6))  # always some task waits
    waited = _taker(clock, run_s).settle(1.0)
    assert waited is not None
    assert 1.0 - max(run_s, reference.PROBE_S) <= waited <= 1.0
    assert reference.Taker.never_calm


def test_no_pressure_reported_is_no_wait(monkeypatch):
    monkeypatch.setattr(reference.pressure, "stalled_us", lambda: None)
    assert reference.Taker(lambda: None, "fake work").settle() is None


def test_a_case_waits_at_most_a_share_of_its_own_time_and_timeout(monkeypatch):
    monkeypatch.delenv(reference.CALM_WAIT_VARIABLE, raising=False)  # `pytest -n` sets it (tests/conftest.py)
    assert reference.wait_limit_s(max_time_s=10.0, timeout_s=300.0) == reference.WAIT_LIMIT_S
    assert reference.wait_limit_s(max_time_s=1.0, timeout_s=300.0) == 0.5  # --quick
    assert reference.wait_limit_s(max_time_s=10.0, timeout_s=2.0) == pytest.approx(0.1)  # never killed for waiting


def test_the_environment_lowers_the_wait_and_a_value_that_is_not_seconds_is_refused(monkeypatch):
    monkeypatch.setenv(reference.CALM_WAIT_VARIABLE, "0")
    assert reference.wait_limit_s(max_time_s=10.0, timeout_s=300.0) == 0.0
    monkeypatch.setenv(reference.CALM_WAIT_VARIABLE, "1.5")
    assert reference.wait_limit_s(max_time_s=10.0, timeout_s=300.0) == 1.5
    assert reference.wait_limit_s(max_time_s=1.0, timeout_s=300.0) == 0.5  # the case's own share still bounds it
    monkeypatch.setenv(reference.CALM_WAIT_VARIABLE, "60")
    assert reference.wait_limit_s(max_time_s=1000.0, timeout_s=3000.0) == reference.WAIT_LIMIT_S  # lowers, never raises
    for bad in ("soon", "-1", "nan", "inf"):
        monkeypatch.setenv(reference.CALM_WAIT_VARIABLE, bad)
        with pytest.raises(InputError, match="ASYNCBENCH_CALM_WAIT_S=.*expected seconds"):
            reference.wait_limit_s(max_time_s=10.0, timeout_s=300.0)
