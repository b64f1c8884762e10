"""The census machinery on a pretend framework (census_device): each wait at its user line, counted once however
nested, the frame fallback for a wait no hook covers, nothing on a step that never waits, hooks gone after a round
(also one that raised), and the census rounds kept out of the timed samples."""

from __future__ import annotations

import io
import itertools

import pytest

from asyncbench.backends.handles import SyncHook
from asyncbench.measure import census, timing
from asyncbench.measure.extra_rounds import ExtraRounds
from asyncbench.measure.frames import CAN_WATCH
from asyncbench.measure.procedure import Procedure
from asyncbench.measure.timing import measure
from asyncbench.results.model import Settings
from asyncbench.results.syncs import Census, SyncKind, census_from_dict, census_to_dict
from tests.measure import census_device
from tests.measure.census_device import FRAMEWORK, HOOKS, WAIT_S, Value

value = Value()
SINK = io.StringIO()


def line_of(marker: str) -> int:
    """The line of this file that holds `marker` (where a planted wait stands)."""
    with open(__file__) as source:
        return next(number for number, text in enumerate(source, 1) if marker in text and "line_of" not in text)


def points_by_line(found: Census) -> dict[int, tuple[str, str, float]]:
    assert all(point.file == __file__ for point in found.points), [point.where for point in found.points]
    return {point.line: (point.kind, point.call, point.calls_per_step) for point in found.points}


def planted() -> None:
    value.wait()  # planted: explicit
    float(value)  # planted: nested
    for _ in range(3):
        value.item()  # planted: loop
    print(value, file=SINK)  # planted: print
    value.shape()


def test_each_planted_wait_is_found_at_its_line_once_with_its_kind_and_count():
    found = points_by_line(census.take(planted, HOOKS, FRAMEWORK, fallback=False))
    assert found == {
        line_of("planted: explicit"): (SyncKind.EXPLICIT, "Value.wait", 1),
        line_of("planted: nested"): (SyncKind.CONVERSION, "float(Value)", 1),  # its item and wait inside: not counted again
        line_of("planted: loop"): (SyncKind.CONVERSION, "Value.item", 3),
        line_of("planted: print"): (SyncKind.PRINT, "repr(Value)", 1),
    }


def test_time_blocked_is_the_waits_own_with_an_interval():
    found = census.take(planted, HOOKS, FRAMEWORK, rounds=6, fallback=False)
    loop = next(point for point in found.points if point.line == line_of("planted: loop"))
    assert 3 * WAIT_S <= loop.wait_s_per_step < 3 * WAIT_S + 0.01
    assert loop.wait_ci_s is not None
    assert loop.wait_ci_s[0] <= loop.wait_s_per_step <= loop.wait_ci_s[1]
    assert loop.calls_rounds == (3,) * 6
    assert len(loop.wait_s_rounds) == 6
    assert found.points[0].wait_s_per_step >= found.points[-1].wait_s_per_step  # largest first
    assert found.syncs_per_step == 6


def sync_free() -> None:
    value.shape()
    total = sum(range(1000))
    SINK.write(str(total))


def test_a_step_that_never_waits_has_no_point():
    found = census.take(sync_free, HOOKS, FRAMEWORK)
    assert found.points == ()
    assert found.rounds == census.CENSUS_ROUNDS


def through_a_helper() -> None:
    helper()  # planted: helper's caller


def helper() -> None:
    census_device.sleep_inside()  # planted: fallback


@pytest.mark.skipif(not CAN_WATCH, reason="the frame fallback needs per-thread context switch counts (Linux)")
def test_the_fallback_names_the_user_line_that_called_a_wait_no_hook_covers():
    found = census.take(through_a_helper, HOOKS, FRAMEWORK)
    (point,) = found.points
    assert (point.line, point.kind, point.call) == (
        line_of("planted: fallback"),
        SyncKind.UNKNOWN,
        "tests.measure.census_device.sleep_inside",
    )
    assert WAIT_S * 0.9 <= point.wait_s_per_step < WAIT_S + 0.01


@pytest.mark.skipif(not CAN_WATCH, reason="the frame fallback needs per-thread context switch counts (Linux)")
def test_a_hooked_wait_is_not_counted_again_by_the_fallback():
    found = points_by_line(census.take(planted, HOOKS, FRAMEWORK, fallback=True))
    assert SyncKind.UNKNOWN not in {kind for kind, _, _ in found.values()}
    assert len(found) == 4


def test_hooks_are_in_place_only_inside_a_round_even_when_the_step_raises():
    before = dict(vars(Value))

    def failing() -> None:
        assert vars(Value)["item"] is not before["item"]  # wrapped while the round runs
        value.item()
        raise RuntimeError("the step failed")

    taker = census.Taker(HOOKS, FRAMEWORK)
    with pytest.raises(RuntimeError):
        taker.round({"step": failing}, lambda: None)
    assert dict(vars(Value)) == before
    assert census._recording is None


def test_an_inherited_entry_point_is_removed_again_and_a_missing_one_is_said():
    class Child(Value):
        pass

    hooks = (SyncHook(Child, "item", "conversion", "Child.item"), SyncHook(Child, "absent", "conversion", "Child.absent"))
    child = Child()
    taker = census.Taker(hooks, FRAMEWORK)
    taker.round({"step": lambda: child.item()}, lambda: None)
    assert "item" not in vars(Child)
    assert "Child.absent" in taker.coverage()


def test_the_census_sync_after_the_step_is_not_the_steps():
    taker = census.Taker(HOOKS, FRAMEWORK)
    taker.round({"step": lambda: None}, value.wait)
    assert taker.censuses()["step"].points == ()


def census_of(taker: census.Taker) -> ExtraRounds:
    """A case's extra rounds when it takes a census (`run --syncs`)."""
    return ExtraRounds(((taker, census.SCHEDULE),))


def test_census_rounds_run_between_timed_samples_never_inside_one():
    log: list[str] = []
    variants = {"a": lambda: log.append("a"), "b": lambda: log.append("b")}

    timed_before: list[int] = []

    class Spy(census.Taker):
        def round(self, variants, sync, order=None, preludes=None):
            # the census's own run of `a` and the untimed ones after it (timing.measure's re-warm) are not timed ones
            timed_before.append(log.count("a") - (1 + timing.REWARM_ROUNDS) * self.taken)
            assert log[-1] == "sync"  # a timed sample ended: its sync came last
            super().round(variants, sync, order, preludes)

    spy = Spy(HOOKS, FRAMEWORK, fallback=False)  # one run of each variant per census round
    settings = Settings(warmup=0, min_samples=12, max_samples=12, max_time_s=1e9, max_rel_noise=1.0)
    clock = itertools.count(0.0, 1e-6).__next__  # a µs a read: the re-warm's rounds all run within REWARM_S
    procedure = Procedure(settings, extra_rounds=census_of(spy), clock=clock)
    samples, sampling = measure(variants, lambda: log.append("sync"), lambda: None, procedure)
    assert sampling.rounds == 12
    assert len(samples["a"].done_s) == 12
    # after each of the first CENSUS_ROUNDS timed rounds, then every CENSUS_EVERY-th
    assert timed_before == [1, 2, 3, 4, 5, 6, 10]
    assert spy.taken == 7


def test_a_case_stopped_early_is_topped_up_to_enough_census_rounds():
    spy = census.Taker(HOOKS, FRAMEWORK)
    settings = Settings(warmup=0, min_samples=2, max_samples=2, max_time_s=1e9, max_rel_noise=1.0)
    measure({"a": lambda: None}, lambda: None, lambda: None, Procedure(settings, extra_rounds=census_of(spy)))
    assert spy.taken == census.CENSUS_ROUNDS


def test_a_census_survives_its_json_form():
    found = census.take(planted, HOOKS, FRAMEWORK, fallback=False)
    assert census_from_dict("step", census_to_dict(found)) == found.__class__(
        variant="step", rounds=found.rounds, points=tuple(_rounded(p) for p in found.points), coverage=found.coverage
    )


def _rounded(point):
    import dataclasses

    nine = lambda v: round(v, 9)  # noqa: E731
    return dataclasses.replace(
        point,
        wait_s_per_step=nine(point.wait_s_per_step),
        wait_ci_s=None if point.wait_ci_s is None else (nine(point.wait_ci_s[0]), nine(point.wait_ci_s[1])),
        wait_s_rounds=tuple(map(nine, point.wait_s_rounds)),
    )


def test_a_synchronous_backend_says_why_its_census_is_empty():
    (found,) = census.synchronous(["step"], "numpy", "cpu").values()
    assert found.points == ()
    assert found.rounds == 0
    assert found.coverage == "numpy runs synchronously: nothing waits for a device"


def test_a_case_that_measures_itself_in_other_processes_says_why_it_has_no_census():
    """comm_overlap's ranks measure in their own processes, where no census round runs: each variant says so."""
    from asyncbench.backends import get_backend
    from asyncbench.engine import runner
    from asyncbench.engine.measuring import CaseOptions
    from asyncbench.results.model import OK, Case, Samples, Sampling, StopReason
    from asyncbench.workloads.base import Measured, Workload

    class Elsewhere(Workload):
        name = "elsewhere"
        variants = ("a",)

        def measure_itself(self, backend, device, params, settings):
            sampling = Sampling(rounds=6, elapsed_s=0.1, stopped_by=StopReason.COUNT, rel_noise=None, max_rel_noise=0.1, max_time_s=1)
            return Measured(samples={"a": Samples(issue_s=(0.001,) * 6, done_s=(0.002,) * 6)}, memory={}, sampling=sampling)

        def setup(self, backend, device, params):
            raise AssertionError("never set up here")  # pragma: no cover - measure_itself answers

    case = Case(id="e", experiment="e", workload="elsewhere", backend="numpy", device="cpu", params={}, settings=Settings())
    result = runner.run_case(case, Elsewhere(), get_backend("numpy"), CaseOptions(syncs=True))
    assert result.status == OK, result.reason
    assert result.syncs["a"].note == runner.NO_CENSUS_ACROSS_PROCESSES
    assert result.syncs["a"].points == ()
