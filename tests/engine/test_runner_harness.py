"""The harness's own sync cost (issue 33): probed with a no-op as every variant is timed, once per backend and device
in a run, and carried on each row (nothing here is a measurement: the clock is made up)."""

from __future__ import annotations

import time

import pytest

from asyncbench.backends.handles import ResultWait
from asyncbench.engine import runner
from asyncbench.measure import harness_cost
from asyncbench.results.model import OK, Settings
from asyncbench.spec import config
from asyncbench.workloads.base import Prepared, Workload


class StepClock:
    """A clock that advances 1 µs per read; `sync` adds its own cost on top, as a backend's sync would: 5 µs, or
    20 µs when the thread slept since the last one (a thread pool waking, as JAX's CPU sync does)."""

    def __init__(self) -> None:
        self.now = 0.0
        self.last_sync = time.perf_counter()

    def __call__(self) -> float:
        self.now += 1e-6
        return self.now

    def sync(self) -> None:
        slept = time.perf_counter() - self.last_sync > harness_cost.IDLE_S / 2
        self.now += 20e-6 if slept else 5e-6
        self.last_sync = time.perf_counter()


def test_the_probe_measures_what_the_sync_and_the_clock_add_with_nothing_queued_at_its_costliest():
    clock = StepClock()
    cost = harness_cost.probe(clock.sync, clock)
    assert cost.n == 3 * harness_cost.NOOP_SAMPLES  # back to back, after a busy spell, after an idle one
    assert cost.sync_s == pytest.approx(21e-6)  # after an idle spell: the sync's 20 µs and one clock read
    assert cost.sync_high_s == pytest.approx(21e-6)
    assert cost.issue_s == pytest.approx(1e-6)


def test_where_samples_may_end_on_their_result_the_probe_still_pays_the_sync_the_costlier_end():
    """The backend's ResultWait (JAX on a CPU) ends a sample on its result where that proves nothing was left to run;
    a step that returns nothing of the backend's still ends at the sync. The probe bounds the harness's cost from
    above, so its no-op pays the sync: a probe of the cheaper end read a JAX step of no work as 'ran ahead' 4-10×."""
    clock = StepClock()
    waited: list[object] = []

    def wait(result: object) -> bool:
        waited.append(result)
        return result is not None

    cost = harness_cost.probe(clock.sync, clock, result_wait=ResultWait(wait, lambda: True, "ready"))
    assert set(waited) == {None}  # asked, and nothing to wait on: the sync ends every no-op sample
    assert cost.sync_s == pytest.approx(21e-6)  # the sync's 20 µs after an idle spell and one clock read


class Noop(Workload):
    name = "noop_probe"
    summary = "does nothing"
    variants = ("noop",)

    def setup(self, backend, device, params) -> Prepared:
        return Prepared(variants={"noop": lambda: None}, sync=lambda: backend.barrier(device))


def test_every_row_carries_its_backends_harness_cost_probed_once_per_run(monkeypatch, fake_backend):
    monkeypatch.setattr(runner, "get_backend", lambda name: fake_backend)
    settings = Settings(warmup=0, min_samples=2, max_samples=2, max_time_s=1.0)
    experiments = tuple(
        config.Experiment(name=name, workload="noop_probe", backends=("fake",), devices=("cpu",), params={}, settings=settings)
        for name in ("a", "b")
    )
    first, second = runner.run(config.Config("c", "<t>", experiments), workloads={"noop_probe": Noop()})
    assert first.status == second.status == OK
    assert first.harness is not None
    assert first.harness == second.harness
    probe = harness_cost.SYNCS_PER_PROBE
    per_case = 2 + 1  # two timed samples and the memory run of its one variant
    assert fake_backend.barriers == probe + 2 * per_case
    runner.run(config.Config("c", "<t>", experiments[:1]), workloads={"noop_probe": Noop()})
    assert fake_backend.barriers == 2 * probe + 3 * per_case  # a new run probes afresh
