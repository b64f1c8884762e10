"""Readings say only what the interval shows: no saving from a wide interval, no negative cost stated as a cost."""

from __future__ import annotations

from asyncbench.results.model import OK, Result


def _metrics_result(workload: str, metrics, bounds, asynchronous=False, device="cpu") -> Result:
    return Result("c", "c", workload, "torch", device, {}, OK, metrics=metrics, bounds=bounds, asynchronous=asynchronous)


def test_a_wide_interval_is_no_saving_however_large_the_median():
    """The issue's example: 15% of the wait saved, from data at ±93%."""
    from asyncbench.workloads import BUILT_IN

    wide = _metrics_result("barrier", {"waitall_s": 0.139, "wait_one_s": 0.118, "saved_fraction": 0.15}, {"saved_fraction": (-0.6, 0.8)})
    reading = BUILT_IN["barrier"].reading(wide)
    assert reading.startswith("no difference shown")
    assert "of the wait saved" not in reading
    clear = _metrics_result("barrier", {"waitall_s": 0.3, "wait_one_s": 0.1, "saved_fraction": 0.66}, {"saved_fraction": (0.6, 0.7)}, True)
    assert "of the wait saved" in BUILT_IN["barrier"].reading(clear)


def test_a_negative_conversion_cost_is_never_stated_as_a_cost():
    from asyncbench.workloads import BUILT_IN

    metrics = {
        "slowdown_item": 0.8,
        "slowdown_numpy": 0.9,
        "slowdown_print": 1.04,
        "item_cost_s": -0.016,
        "numpy_cost_s": -0.0162,
        "print_cost_s": 0.0003,
    }
    bounds = {
        "slowdown_item": (0.4, 2.3),
        "slowdown_numpy": (0.5, 2.0),
        "slowdown_print": (0.7, 1.5),
        "item_cost_s": (-0.05, 0.02),
        "numpy_cost_s": (-0.05, 0.02),
        "print_cost_s": (-0.01, 0.01),
    }
    reading = BUILT_IN["conversion"].reading(_metrics_result("conversion", metrics, bounds))
    assert reading.startswith("no conversion cost shown")
    assert "-16" not in reading


def test_the_step_form_says_nothing_runs_ahead_only_when_the_illusions_interval_shows_it():
    from asyncbench.workloads.step_form import StepWorkload

    workload = StepWorkload(lambda backend, device, params: lambda: None, name="loop")

    def reading(bounds):
        return workload.reading(_metrics_result("loop", {"illusion": 1.1}, {"illusion": bounds}))

    assert "nothing much runs ahead" in reading((1.0, 1.15))
    assert "long before the work is done" in reading((1.3, 1.5))
    for unsettled in ((1.0, 1.6), None):  # across the line, or no interval at all: neither is shown
        assert "nothing much runs ahead" not in reading(unsettled)
        assert "not shown whether the loop runs ahead" in reading(unsettled)


def test_sync_async_names_a_measured_backend_time_even_without_an_interval_for_the_issue_time():
    """Found on a real H100 (results/…/quick/sweep-launch-queue.txt): t2 came with an interval, t1 with none (20 rounds
    that drifted together), and the reading said the backend's time per op 'could not be measured here'."""
    from asyncbench.workloads import BUILT_IN

    metrics = {"speedup": 1.38, "t1_s": 14.3e-6, "t2_s": 2.12e-6, "t3_s": 4.1e-6, "model_error": -0.017}
    bounds = {"speedup": (1.26, 1.45), "t1_s": None, "t2_s": (2.11e-6, 2.14e-6), "t3_s": (2.5e-6, 5.75e-6)}
    result = _metrics_result("sync_async", metrics, bounds, asynchronous=True)
    reading = BUILT_IN["sync_async"].reading(result)
    assert "could not be measured" not in reading
    assert "2.12 µs" in reading
    assert "too few rounds" in reading
    assert "bottleneck" not in reading  # neither side is named the limit without both intervals


def test_small_ops_slower_on_a_gpu_blames_the_shared_device_not_cores():
    """Found on a real H100: two streams on one GPU were 0.98× [0.97–0.99], read as 'workers fight for the same cores'."""
    from asyncbench.workloads import BUILT_IN

    metrics, bounds = {"speedup": 0.98, "overlap_efficiency": -0.04}, {"speedup": (0.97, 0.99)}
    on_gpu = BUILT_IN["small_ops"].reading(_metrics_result("small_ops", metrics, bounds, True, device="cuda:0"))
    assert "cores" not in on_gpu
    assert "one device" in on_gpu
    assert "cores" in BUILT_IN["small_ops"].reading(_metrics_result("small_ops", metrics, bounds))


def test_training_memorys_reading_says_memory_in_the_unit_the_table_uses():
    """The same 4 KiB read '+4 KiB' in the table and '0.00391 MiB' in the reading."""
    from asyncbench.workloads import BUILT_IN

    metrics = {"epoch_s_k0": 0.145, "epoch_s_k1": 0.172, "host_rss_delta_mb_k0": 4 / 1024, "host_rss_delta_mb_k1": 3.58}
    reading = BUILT_IN["training_memory"].reading(_metrics_result("training_memory", metrics, {}))
    assert "4.00 KiB host rss delta" in reading
    assert "3.58 MiB host rss delta" in reading
    assert "0.00391" not in reading


def test_a_synchronous_steps_slowdown_beyond_what_its_waits_can_cost_is_not_called_their_cost():
    """The issue's example: torch on a CPU, a 1.61 ms step, a 2.6 µs sync with nothing queued, and a wait every step
    read 1.03× [1.004–1.07]: at most 1.002× is the waits'; the rest is the variants' order or drift."""
    from dataclasses import replace

    from asyncbench.results.model import HarnessCost
    from asyncbench.workloads.step_reading import StepForm

    metrics = {"step_s_k0": 1.61e-3, "step_s_k1": 1.66e-3, "slowdown_k1": 1.03}
    synchronous = replace(
        _metrics_result("train_quiet", metrics, {"slowdown_k1": (1.004, 1.07)}),
        harness=HarnessCost(sync_s=2.5e-6, sync_high_s=2.6e-6, issue_s=1e-7, n=100),
    )
    reading = StepForm().reading(synchronous)
    assert "costs 1.03" not in reading
    assert "more than its waits can cost (at most 1.002×: 2.60 µs each, nothing queued)" in reading
    assert "the variants' order or the machine's drift" in reading
    # an asynchronous backend's wait drains a queue: its slowdown is read as the wait's cost, as before
    assert "a wait every 1 step(s) costs 1.03" in StepForm().reading(replace(synchronous, asynchronous=True))
    # within what the waits can cost (a 10 µs step): the wait's cost
    tiny = replace(synchronous, metrics={**metrics, "step_s_k0": 1e-5})
    assert "a wait every 1 step(s) costs 1.03" in StepForm().reading(tiny)


def test_a_synchronous_slowdown_whose_interval_reaches_past_what_its_waits_can_cost_is_not_credited_to_them():
    """torch on a loaded 2-core CPU: a 4.8 ms sample of 5 steps, an 18 µs sync (27.4 µs high) with nothing queued,
    and a wait every step read 2.91× [1.01–5.24] (rounds 1.09, 1.01, 4.25, 1.58, 5.24, 4.45: load). The waits can
    cost at most 1.029×: the interval's low end is within that, its point and high end are not, so how much of the
    2.91× is the waits' is not shown (before: 'a wait every 1 step(s) costs 2.91×')."""
    from dataclasses import replace

    from asyncbench.results.model import HarnessCost
    from asyncbench.workloads.step_reading import StepForm

    metrics = {"step_s_k0": 0.96e-3, "step_s_k1": 2.79e-3, "slowdown_k1": 2.91}
    loaded = replace(
        _metrics_result("mm", metrics, {"slowdown_k1": (1.01, 5.24)}),
        harness=HarnessCost(sync_s=18e-6, sync_high_s=27.4e-6, issue_s=1e-7, n=100),
    )
    reading = StepForm().reading(loaded)
    assert "costs 2.91" not in reading
    assert (
        "the variant with a wait every 1 step(s) read 2.91× [1.01–5.24]; its waits can cost at most 1.029× "
        "(27.4 µs each, nothing queued): how much of it is theirs is not shown"
    ) in reading
    assert "more than its waits can cost" not in reading  # its interval reaches within what they can cost
    # the interval wholly within what the waits can cost: the figure can be theirs, read as before
    within = replace(loaded, metrics={**metrics, "slowdown_k1": 1.02}, bounds={"slowdown_k1": (1.01, 1.025)})
    assert "a wait every 1 step(s) costs 1.02" in StepForm().reading(within)
    # an asynchronous backend's wait drains a queue: no ceiling, read as the wait's cost
    assert "a wait every 1 step(s) costs 2.91" in StepForm().reading(replace(loaded, asynchronous=True))


def test_the_step_forms_two_illusions_side_by_side_are_printed_in_one_notation():
    """The trial's torch row: 'illusion 1.00× [1.00–1.0001]; 1.00002× [1.00002–1.00005] beyond the harness's own
    9.98 µs sync' read the raw illusion (1.000034) as smaller than the one beyond the harness (1.00002). Both are
    printed to the same decimals, each told from 1 and from the other."""
    import random
    import re

    from asyncbench.results import stats
    from asyncbench.results.model import HarnessCost, Samples, VariantResult
    from asyncbench.workloads.step_form import StepWorkload

    draw = random.Random(3)
    sync_s = 9.98e-6
    issue = [1e-3 * draw.uniform(0.99, 1.01) for _ in range(40)]
    done = [i * (1 + 2e-5 * draw.uniform(0.9, 1.1)) + sync_s for i in issue]
    variant = VariantResult(Samples(tuple(issue), tuple(done)), stats.summarize(issue), stats.summarize(done), None)
    row = Result(
        "my_step[torch,cpu]",
        "my_step",
        "my_step",
        "torch",
        "cpu",
        {},
        OK,
        variants={"sync_every=0": variant},
        metrics={"illusion": 1.0000340},
        bounds={"illusion": (1.0000268, 1.0000620)},
        asynchronous=True,
        harness=HarnessCost(sync_s=sync_s * 0.9, sync_high_s=sync_s, issue_s=1e-7, n=40),
    )
    reading = StepWorkload(lambda backend, device, params: lambda: None, name="my_step").reading(row)
    found = re.search(r"illusion (\S+)× \[(\S+)–(\S+)\]; (\S+)× \[(\S+)–(\S+)\] beyond the harness's own", reading)
    assert found, reading
    texts = found.groups()
    assert len({len(t.partition(".")[2]) for t in texts}) == 1, reading  # one notation: as many decimals each
    raw, raw_low, raw_high, beyond, low, high = map(float, texts)
    assert raw > beyond, reading  # the larger figure reads larger
    assert 1.0 not in (raw, raw_low, raw_high, beyond, low, high), reading  # each told from 1
    assert raw_low < raw_high, reading
    assert low < high, reading


def test_multi_device_states_no_overlap_as_a_fact_only_where_its_intervals_rule_one_out():
    """The trial: 'the two did not run at once (overlap efficiency −0.0557 [−0.58 … 0.00875], 0.97× [0.78–1.003]):
    they compete for the same resource', of intervals that reach past no overlap."""
    from asyncbench.workloads import BUILT_IN

    def reading(efficiency, speedup):
        metrics = {"overlap_efficiency": -0.0557, "parallel_speedup": 0.97}
        bounds = {"overlap_efficiency": efficiency, "parallel_speedup": speedup}
        return BUILT_IN["multi_device"].reading(_metrics_result("multi_device", metrics, bounds))

    reaching = reading((-0.58, 0.00875), (0.78, 1.003))
    assert reaching.startswith("no overlap shown ("), reaching
    assert "did not run at once" not in reaching
    assert "they may compete for the same resource" in reaching
    below = reading((-0.58, -0.01), (0.78, 0.99))
    assert below.startswith("the two did not run at once ("), below
    assert "they compete for the same resource" in below


def test_a_step_slowdown_wholly_below_1_is_said_with_ends_apart_from_the_point():
    """A torch step on a CPU read "no cost shown for a wait every 4 step(s) (0.99× [0.90–0.99])" of an interval
    [0.9002, 0.9923], wholly below 1: a difference the interval shows, left unsaid, its upper end printed as the
    point. It is said, each end apart from the point, as the metrics line prints it."""
    from asyncbench.results import units
    from asyncbench.workloads.step_reading import StepForm

    metrics = {"step_s_k0": 1.61e-3, "step_s_k4": 1.59e-3, "slowdown_k4": 0.991}
    result = _metrics_result("step", metrics, {"slowdown_k4": (0.9002, 0.9923)})
    reading = StepForm().reading(result)
    assert "no cost shown" not in reading
    assert "a wait every 4 step(s) made the step faster: 0.991× [0.900–0.992]" in reading
    assert units.with_bounds(0.991, (0.9002, 0.9923), "x") == "0.991× [0.900–0.992]"  # the metrics line's formatter


def test_an_asynchronous_steps_wait_cost_where_nothing_ran_ahead_is_said_to_be_the_barriers_own():
    """JAX's inline `x + 1`: the loop did not run ahead (illusion ~1), and a wait every step read 1.76× — the harness's
    barrier, which issues a computation of its own, where `block_until_ready` of each result cost 0.96-1.19× (a
    trial): the reading says whose cost it is, not a `.item()`'s. Where the loop ran ahead, it is the wait's, as before."""
    from asyncbench.workloads.step_reading import StepForm

    metrics = {"step_s_k0": 2.0e-5, "step_s_k1": 3.5e-5, "slowdown_k1": 1.76, "illusion": 1.0}
    bounds = {"slowdown_k1": (1.67, 1.80), "illusion": (0.99, 1.01)}
    inline = _metrics_result("tiny", metrics, bounds, asynchronous=True)
    reading = StepForm().reading(inline)
    assert "nothing much runs ahead" in reading
    assert "a wait every 1 step(s) costs 1.76× [1.67–1.80] — the harness's barrier itself, with nothing queued" in reading
    ahead = _metrics_result("tiny", {**metrics, "illusion": 5.0}, {**bounds, "illusion": (4.0, 6.0)}, asynchronous=True)
    reading = StepForm().reading(ahead)
    assert "the loop returns long before the work is done" in reading
    assert "a wait every 1 step(s) costs 1.76× [1.67–1.80]" in reading
    assert "barrier itself" not in reading
