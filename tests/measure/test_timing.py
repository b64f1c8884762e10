import itertools
import random
import subprocess
import sys

import pytest

from asyncbench.backends.handles import ResultWait
from asyncbench.measure.procedure import Procedure
from asyncbench.measure.timing import measure, take_sample
from asyncbench.results.model import STOPPED_BY_COUNT, STOPPED_BY_NOISE, STOPPED_BY_TIME, Settings


class TickClock:
    """A clock that advances by a fixed step per read: every interval is exact."""

    def __init__(self, step: float = 1.0):
        self.now = 0.0
        self.step = step

    def __call__(self) -> float:
        self.now += self.step
        return self.now


class RecordingTimer:
    def __init__(self, log: list[str]):
        self.log = log

    def start(self):
        self.log.append("start")

    def stop(self):
        self.log.append("stop")

    def elapsed_s(self):
        self.log.append("elapsed")
        return 0.5


def test_take_sample_orders_issue_timer_sync_done():
    log: list[str] = []
    clock = TickClock()
    issue, done, device = take_sample(lambda: log.append("run"), lambda: log.append("sync"), RecordingTimer(log), clock)
    assert log == ["start", "run", "stop", "sync", "elapsed"]
    assert issue == 1.0
    assert done == 2.0
    assert device == 0.5


def test_take_sample_without_timer_has_no_device_time():
    assert take_sample(lambda: None, lambda: None, None, TickClock())[2] is None


def _result_wait(log: list[str], holds: bool, settled: bool) -> ResultWait:
    def wait(result):
        log.append(f"wait {result}")
        return holds

    def proven():
        log.append("settled?")
        return settled

    return ResultWait(wait, proven, "done")


class LoggingClock(TickClock):
    def __init__(self, log: list[str]):
        super().__init__()
        self.log = log

    def __call__(self) -> float:
        self.log.append("clock")
        return super().__call__()


def test_a_sample_ends_on_its_result_where_nothing_else_was_left_to_run_and_the_proof_comes_after_the_clock():
    """JAX's device-wide sync issues a computation of its own: 4-9% of a sample of 20 tiny steps, which a hand loop
    ending on its last result does not pay. Where the backend proves, after the clock, that nothing issued before is
    still to run, the sample ends on its result, without the sync."""
    log: list[str] = []
    issue, done, _ = take_sample(
        lambda: "out", lambda: log.append("sync"), None, LoggingClock(log), result_wait=_result_wait(log, True, True)
    )
    assert log == ["clock", "clock", "wait out", "clock", "settled?"]
    assert (issue, done) == (1.0, 2.0)


def test_a_sample_whose_proof_fails_or_that_returned_nothing_to_wait_on_ends_at_the_sync():
    log: list[str] = []
    _, done, _ = take_sample(lambda: "out", lambda: log.append("sync"), None, LoggingClock(log), result_wait=_result_wait(log, True, False))
    assert log == ["clock", "clock", "wait out", "clock", "settled?", "sync", "clock"]
    assert done == 3.0  # the done clock is the one after the sync
    log.clear()
    _, done, _ = take_sample(lambda: None, lambda: log.append("sync"), None, LoggingClock(log), result_wait=_result_wait(log, False, True))
    assert log == ["clock", "clock", "wait None", "sync", "clock"]
    assert done == 2.0


def test_a_sample_with_a_device_timer_ends_at_the_sync_whatever_its_result():
    """A timer's events are read after a device-wide sync: its sample never ends on its result alone."""
    log: list[str] = []
    take_sample(lambda: "out", lambda: log.append("sync"), RecordingTimer(log), TickClock(), result_wait=_result_wait(log, True, True))
    assert log == ["start", "stop", "sync", "elapsed"]


def test_every_timed_and_warm_up_sample_of_a_procedure_ends_on_its_result():
    log: list[str] = []
    procedure = Procedure(Settings(warmup=2, min_samples=6, max_samples=6, max_time_s=10.0), result_wait=_result_wait(log, True, True))
    samples, _ = measure({"v": lambda: "out"}, lambda: log.append("sync"), lambda: None, procedure)
    assert len(samples["v"].done_s) == 6
    assert log.count("wait out") == 8
    assert "sync" not in log


def test_constant_samples_stop_at_min_samples_and_variants_interleave():
    order: list[str] = []
    variants = {"a": lambda: order.append("a"), "b": lambda: order.append("b")}
    settings = Settings(warmup=2, min_samples=6, max_samples=100, max_time_s=1e9, max_rel_noise=0.01)
    samples, sampling = measure(variants, lambda: None, lambda: None, Procedure(settings, clock=TickClock()))
    assert len(samples["a"].done_s) == 6
    assert len(samples["b"].done_s) == 6
    assert sampling.rounds == 6
    assert sampling.stopped_by == STOPPED_BY_NOISE
    assert sampling.rel_noise == 0.0
    assert order[:4] == ["a", "b"] * 2  # warm-up rounds in declared order
    timed = [order[i : i + 2] for i in range(4, len(order), 2)]
    assert all(sorted(pair) == ["a", "b"] for pair in timed)  # then rounds: one sample of each
    assert samples["a"].device_s is None


def test_variants_run_in_a_random_order_within_rounds():
    """In a fixed order a position effect (caches, clocks after a heavy variant) biases one variant every round."""
    order: list[str] = []
    names = "abcd"
    variants = {name: (lambda name=name: order.append(name)) for name in names}
    settings = Settings(warmup=0, min_samples=40, max_samples=40, max_time_s=1e9, max_rel_noise=0.0)
    measure(variants, lambda: None, lambda: None, Procedure(settings, clock=TickClock()))
    rounds = [tuple(order[i : i + 4]) for i in range(0, len(order), 4)]
    assert all(sorted(r) == list(names) for r in rounds)
    firsts = {r[0] for r in rounds}
    assert firsts == set(names)  # every variant leads some round
    assert len(set(rounds)) > 10


def noisy_clock(steps=(1.0, 2.0, 5.0)):
    """A clock whose every read advances by the next of `steps`: intervals vary."""
    cycle = itertools.cycle(steps)
    now = [0.0]

    def clock():
        now[0] += next(cycle)
        return now[0]

    return clock


def test_noisy_samples_run_until_time_budget():
    settings = Settings(warmup=0, min_samples=3, max_samples=10_000, max_time_s=500.0, max_rel_noise=0.0001)
    samples, sampling = measure(
        {"v": lambda: None}, lambda: None, lambda: None, Procedure(settings, clock=noisy_clock((1.0, 3.0, 1.0, 7.0, 2.0)))
    )
    n = len(samples["v"].done_s)
    assert 3 < n < 10_000  # went past min_samples, stopped by time, not by max_samples
    assert sum(samples["v"].done_s) <= 500.0
    assert sampling.stopped_by == STOPPED_BY_TIME
    assert sampling.missed_noise_target
    assert sampling.rel_noise > 0.0001


def test_max_samples_caps_the_rounds():
    settings = Settings(warmup=0, min_samples=1, max_samples=7, max_time_s=1e9, max_rel_noise=0.0)
    samples, sampling = measure({"v": lambda: None}, lambda: None, lambda: None, Procedure(settings, clock=noisy_clock()))
    assert len(samples["v"].done_s) == 7
    assert sampling.stopped_by == STOPPED_BY_COUNT


def test_device_times_recorded_with_a_timer():
    settings = Settings(warmup=0, min_samples=3, max_samples=3)
    samples, _ = measure({"v": lambda: None}, lambda: None, lambda: RecordingTimer([]), Procedure(settings, clock=TickClock()))
    assert samples["v"].device_s == (0.5, 0.5, 0.5)


def test_sampling_goes_on_while_the_checks_are_undecided_and_stops_once_decided():
    settings = Settings(warmup=0, min_samples=6, max_samples=1000, max_time_s=1e9, max_rel_noise=0.5)
    asked = []

    def decided(samples):
        asked.append(len(samples["v"].done_s))
        return len(asked) >= 4  # undecided three times, then decided

    looks = (6, 9, 14, 21, 32)
    samples, sampling = measure(
        {"v": lambda: None}, lambda: None, lambda: None, Procedure(settings, decided=decided, looks=looks, clock=TickClock())
    )
    assert asked == [6, 9, 14, 21]  # only at the looks: asked after every round, a verdict on its threshold fails too often
    assert len(samples["v"].done_s) == 21
    assert sampling.stopped_by == STOPPED_BY_NOISE


def test_undecided_checks_stop_at_max_time_s():
    settings = Settings(warmup=0, min_samples=6, max_samples=1000, max_time_s=40.0, max_rel_noise=0.5)
    samples, sampling = measure(
        {"v": lambda: None}, lambda: None, lambda: None, Procedure(settings, decided=lambda s: False, looks=(6, 9), clock=TickClock())
    )
    assert sampling.stopped_by == STOPPED_BY_TIME
    assert 6 <= sampling.rounds < 40


def test_the_statistics_import_is_not_charged_to_the_sampling_budget():
    """In a fresh interpreter scipy.stats is not imported yet: the noise check after the second round once imported
    it inside the loop (1.35 s with torch loaded), so a 1 s max_time_s ran six rounds of a 1 ms workload."""
    code = """
import sys
from asyncbench.measure.procedure import Procedure
from asyncbench.measure.timing import measure
from asyncbench.results.model import Settings

assert "scipy.stats" not in sys.modules

class Clock:  # 1 ms per read, and 100 s more if scipy.stats is imported while sampling
    def __init__(self):
        self.now, self.loaded = 0.0, "scipy.stats" in sys.modules
    def __call__(self):
        if not self.loaded and "scipy.stats" in sys.modules:
            self.loaded, self.now = True, self.now + 100.0
        self.now += 1e-3
        return self.now

_, sampling = measure({"a": lambda: None}, lambda: None, lambda: None, Procedure(Settings(warmup=0), clock=Clock()))
print(sampling.elapsed_s)
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert float(out) < 1.0


class ManualClock:
    """A clock that moves only when told: a sample's work and the noise's computation each take their own time."""

    def __init__(self):
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_the_noise_is_not_recomputed_after_every_round_when_it_costs_more_than_the_samples(monkeypatch):
    """The noise's cost grows with the samples; recomputed after every round it left a gap between samples in which
    JAX's and MXNet's engine threads slept (20 tiny steps a sample read 1.76x a hand loop). Here a sample takes 1 ms
    and the noise 0.2 ms: with NOISE_SHARE 2% it is recomputed once in some 10 ms of sampling, not 400 times."""
    from asyncbench.measure import timing

    clock = ManualClock()
    computed: list[int] = []
    real_noise = timing._noise

    def costly_noise(done: list[float]) -> float:
        computed.append(len(done))
        clock.now += 0.0002
        return real_noise(done)

    monkeypatch.setattr(timing, "_noise", costly_noise)
    draw = random.Random(0).uniform
    sizes = iter([draw(0.0005, 0.0015) for _ in range(400)])  # a noise that never meets 0.1%

    def step() -> None:
        clock.now += next(sizes)

    told: list[int] = []
    settings = Settings(warmup=0, min_samples=6, max_samples=400, max_time_s=1e9, max_rel_noise=0.001)
    samples, sampling = measure({"a": step}, lambda: None, lambda: None, Procedure(settings, clock=clock), lambda p: told.append(p.rounds))
    assert sampling.rounds == 400
    assert sampling.stopped_by == STOPPED_BY_COUNT
    assert len(computed) < 400 / 5, f"the noise was computed {len(computed)} times in 400 rounds"
    assert computed[-1] == 400  # the result's noise is of every sample, not of the last look
    assert sampling.rel_noise == real_noise(list(samples["a"].done_s))
    # progress: some 0.5 s of sampling, told at most every PROGRESS_EVERY_S (50 ms), not after each of 400 rounds
    assert 5 <= len(told) <= 0.5 / timing.PROGRESS_EVERY_S + 2


def test_a_stop_on_the_noise_is_never_taken_on_a_stale_look():
    """The noise is recomputed only now and then (NOISE_SHARE); a look that said quiet some rounds ago does not stop
    sampling whose samples since then are no longer quiet: the stop is decided on every sample so far."""
    from asyncbench.measure import timing

    settings = Settings(warmup=0, min_samples=6, max_samples=400, max_time_s=1e9, max_rel_noise=0.02)
    sampler = timing._Sampler({"a": lambda: None}, lambda: None, {"a": None}, Procedure(settings, clock=TickClock()))
    sampler.done["a"] = [0.001 * (1 + (i % 7)) for i in range(60)]  # spread far past 2%
    sampler.rounds = 60
    sampler.noise, sampler._noise_rounds = 0.0, 50  # quiet, as of ten rounds ago
    assert sampler.stop_reason() != STOPPED_BY_NOISE
    assert sampler.noise > settings.max_rel_noise


def test_a_round_after_the_machines_reference_follows_an_untimed_one_and_a_round_after_none_does_not():
    """After the reference's products (256×256, a thread pool's work) a 16×16 product's next rounds took 3-5× its own
    time, so the first rounds, where the reference is dense, drifted from the rest: each round after work between
    rounds now follows an untimed call of every variant, and only those (a quiet hook costs the case nothing)."""
    log: list[str] = []

    def between_rounds() -> bool:
        hooks = log.count("reference") + log.count("quiet")
        log.append("reference" if hooks in (0, 2) else "quiet")  # work after the 1st and 3rd rounds
        return log[-1] == "reference"

    settings = Settings(warmup=0, min_samples=4, max_samples=4, max_time_s=1e9, max_rel_noise=0.0)
    procedure = Procedure(settings, between_rounds=between_rounds, clock=TickClock())
    samples, _ = measure({"v": lambda: log.append("call")}, lambda: None, lambda: None, procedure)
    assert len(samples["v"].done_s) == 4  # the untimed calls are no samples
    assert " ".join(log) == "call reference call call quiet call reference call call quiet"


@pytest.mark.parametrize(("tick_s", "untimed"), [(1e-6, 4), (1.0, 1)])
def test_after_work_between_rounds_untimed_rounds_run_until_their_count_or_their_time(tick_s: float, untimed: int) -> None:
    """20 tiny JAX steps a sample took +5-9% in the second sample after the reference's products and +2-7% in the
    third: after work between rounds, untimed rounds run until REWARM_ROUNDS of them ran or they took REWARM_S, so
    a fast step is re-warmed by several and a slow one by one (a long sample is back within it)."""
    from asyncbench.measure import timing

    assert untimed == timing.REWARM_ROUNDS or tick_s > timing.REWARM_S  # the second case's one round exceeds it
    log: list[str] = []

    def between_rounds() -> bool:
        log.append("reference")
        return log.count("reference") == 1  # work after the first round only

    settings = Settings(warmup=0, min_samples=2, max_samples=2, max_time_s=1e9, max_rel_noise=0.0)
    procedure = Procedure(settings, between_rounds=between_rounds, clock=TickClock(tick_s))
    samples, _ = measure({"v": lambda: log.append("call")}, lambda: None, lambda: None, procedure)
    assert len(samples["v"].done_s) == 2
    assert " ".join(log) == " ".join(["call", "reference", *["call"] * untimed, "call", "reference"])


def test_the_warm_up_lasts_its_minimum_untimed_and_outside_before_sample_and_none_is_taken_where_none_is_asked():
    """A fast step's first milliseconds run slow (JAX +5.5%, torch +5% in the first 2 ms), and a case that met its
    noise target in a few of them reported them: the warm-up goes on until it took warmup_min_s. Its extra rounds
    are untimed and call no `before_sample` (the NVML guard counts the settings' warm-up samples); `warmup: 0`
    (a user timing the cold start) gets none."""
    clock = ManualClock()
    log: list[str] = []

    def step() -> None:
        clock.now += 0.010
        log.append("call")

    settings = Settings(warmup=1, min_samples=6, max_samples=6, max_time_s=1e9, max_rel_noise=0.0)
    procedure = Procedure(settings, before_sample=lambda: log.append("before"), warmup_min_s=0.05, clock=clock)
    samples, sampling = measure({"v": step}, lambda: None, lambda: None, procedure)
    assert " ".join(log) == "before call" + " call" * 4 + " before call" * 6  # 1 + 4 rounds make 50 ms, then 6 timed
    assert len(samples["v"].done_s) == 6
    assert abs(sampling.elapsed_s - 0.06) < 1e-9  # the sampling's clock starts after the warm-up

    log.clear()
    cold = Settings(warmup=0, min_samples=6, max_samples=6)
    measure({"v": step}, lambda: None, lambda: None, Procedure(cold, warmup_min_s=0.05, clock=clock))
    assert log == ["call"] * 6
