import itertools

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


def test_constant_samples_stop_at_min_samples_and_variants_interleave():
    order: list[str] = []
    variants = {"a": lambda: order.append("a"), "b": lambda: order.append("b")}
    settings = Settings(warmup=2, min_samples=6, max_samples=100, max_time_s=1e9, max_rel_noise=0.01)
    samples, sampling = measure(variants, lambda: None, lambda: None, settings, clock=TickClock())
    assert len(samples["a"].done_s) == 6
    assert len(samples["b"].done_s) == 6
    assert sampling.rounds == 6
    assert sampling.stopped_by == STOPPED_BY_NOISE
    assert sampling.rel_noise == 0.0
    assert order == ["a", "b"] * (2 + 6)  # warm-up rounds, then timed rounds, alternating
    assert samples["a"].device_s is None


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
    samples, sampling = measure({"v": lambda: None}, lambda: None, lambda: None, settings, clock=noisy_clock((1.0, 3.0, 1.0, 7.0, 2.0)))
    n = len(samples["v"].done_s)
    assert 3 < n < 10_000  # went past min_samples, stopped by time, not by max_samples
    assert sum(samples["v"].done_s) <= 500.0
    assert sampling.stopped_by == STOPPED_BY_TIME
    assert sampling.missed_noise_target
    assert sampling.rel_noise > 0.0001


def test_max_samples_caps_the_rounds():
    settings = Settings(warmup=0, min_samples=1, max_samples=7, max_time_s=1e9, max_rel_noise=0.0)
    samples, sampling = measure({"v": lambda: None}, lambda: None, lambda: None, settings, clock=noisy_clock())
    assert len(samples["v"].done_s) == 7
    assert sampling.stopped_by == STOPPED_BY_COUNT


def test_device_times_recorded_with_a_timer():
    settings = Settings(warmup=0, min_samples=3, max_samples=3)
    samples, _ = measure({"v": lambda: None}, lambda: None, lambda: RecordingTimer([]), settings, clock=TickClock())
    assert samples["v"].device_s == (0.5, 0.5, 0.5)


def test_sampling_goes_on_while_the_checks_are_undecided_and_stops_once_decided():
    settings = Settings(warmup=0, min_samples=6, max_samples=1000, max_time_s=1e9, max_rel_noise=0.5)
    asked = []

    def decided(samples):
        asked.append(len(samples["v"].done_s))
        return len(asked) >= 4  # undecided three times, then decided

    samples, sampling = measure({"v": lambda: None}, lambda: None, lambda: None, settings, clock=TickClock(), decided=decided)
    assert asked == [6, 7, 8, 9]
    assert len(samples["v"].done_s) == 9
    assert sampling.stopped_by == STOPPED_BY_NOISE


def test_undecided_checks_stop_at_max_time_s():
    settings = Settings(warmup=0, min_samples=6, max_samples=1000, max_time_s=40.0, max_rel_noise=0.5)
    samples, sampling = measure({"v": lambda: None}, lambda: None, lambda: None, settings, clock=TickClock(), decided=lambda s: False)
    assert sampling.stopped_by == STOPPED_BY_TIME
    assert 6 <= sampling.rounds < 40
