"""A paired ratio beside medians whose own ratio contradicts it: the row says why, in `ab`'s words.

A new user's trial (a loaded 2-core machine): `sync_async` printed sync 5.36 ms and async 7.70 ms (their ratio 0.70)
beside `speedup 1.05× [1.01–1.08]` and "not waiting is 1.05× faster"; a step run printed sync_every=0 44.7 ms and
sync_every=1 42.5 ms beside `slowdown_k1 1.05× [1.02–1.11]`, "a wait every 1 step(s) costs 1.05×". The paired figure
(each round's own ratio, its median) is the right one; nothing said why the medians disagreed, and `metric_info`
called the figure "sync done time / async done time", as if it were the medians' ratio.
"""

from __future__ import annotations

import random

from asyncbench.engine import rounds, runner
from asyncbench.results import paired_medians, units
from asyncbench.results.model import OK, Result, Samples
from asyncbench.workloads.step_form import StepWorkload
from asyncbench.workloads.sync_async import SyncAsync

# rounds at a fast moment for both variants, at a slow one for both, and ones where the faster variant ran fast and
# the other slow: every pair of one moment says 1.05×, yet most of the slower variant's samples are slow ones
BOTH_FAST, BOTH_SLOW, SPLIT = 12, 18, 11


def _drifting(slower: str, faster: str, base_s: float = 0.005) -> dict:
    """Samples of two variants whose rounds drifted: `slower` 1.05× `faster` in every round of one moment."""
    moments = ["fast"] * BOTH_FAST + ["slow"] * BOTH_SLOW + ["split"] * SPLIT
    rng = random.Random(7)
    rng.shuffle(moments)  # the moments come and go over the rounds, not in one run of them
    pairs = []
    for moment in moments:
        fast, slow, ratio = base_s * rng.uniform(1, 1.02), 2 * base_s * rng.uniform(1, 1.02), rng.uniform(1.04, 1.06)
        if moment == "fast":
            pairs.append((ratio * fast, fast))
        elif moment == "slow":
            pairs.append((ratio * slow, slow))
        else:
            pairs.append((ratio * fast, slow))  # the slower variant's round at a fast moment, the other's at a slow one
    return runner.summarize(
        {
            slower: Samples(tuple(s / 10 for s, _ in pairs), tuple(s for s, _ in pairs)),
            faster: Samples(tuple(f / 10 for _, f in pairs), tuple(f for _, f in pairs)),
        }
    )


def _result(workload, params: dict, variants: dict) -> Result:
    metrics, bounds = rounds.figures(workload, params, variants, asynchronous=False)
    return Result(
        "c", "c", workload.name, "torch", "cpu", params, OK, variants=variants, metrics=metrics, bounds=bounds, asynchronous=False
    )


def test_a_speedup_beside_medians_that_contradict_it_says_why_in_abs_words():
    variants = _drifting("sync", "async")
    result = _result(SyncAsync(), {"n_ops": 1000, "shape": [1, 2], "dtype": "float32"}, variants)
    low, high = result.bounds["speedup"]
    assert low > 1  # the pairs: not waiting is faster
    assert variants["sync"].done_s.median < variants["async"].done_s.median  # the medians: waiting looks faster
    reading = SyncAsync().reading(result)
    assert f"not waiting is {units.with_bounds(result.metrics['speedup'], result.bounds['speedup'], 'x')}" in reading, reading
    own = units.ratio(paired_medians.medians_ratio(result, "sync", "async"))
    assert own in ("0.51×", "0.52×", "0.53×")
    said = f"sync / async medians give {own}, outside speedup's paired [{units.ratio_end(low)}–{units.ratio_end(high)}]"
    assert said in reading, reading
    assert paired_medians.other_moments("the other") in reading
    assert "judge by the paired figure (each round's own ratio)" in reading


def test_a_slowdown_beside_medians_that_contradict_it_says_why():
    workload = StepWorkload(lambda backend, device, params: lambda: None, name="loop")
    variants = _drifting("sync_every=1", "sync_every=0")
    result = _result(workload, {"steps": 20, "sync_every": [0, 1]}, variants)
    reading = workload.reading(result)
    slowdown = units.with_bounds(result.metrics["slowdown_k1"], result.bounds["slowdown_k1"], "x")
    assert f"a wait every 1 step(s) costs {slowdown}" in reading, reading
    own = units.ratio(paired_medians.medians_ratio(result, "sync_every=1", "sync_every=0"))
    assert f"sync_every=1 / sync_every=0 medians give {own}, outside slowdown_k1's paired [" in reading, reading


def test_medians_within_the_paired_interval_say_nothing_more():
    workload = StepWorkload(lambda backend, device, params: lambda: None, name="loop")
    samples = {
        name: Samples((0.001,) * 9, tuple(k * (1 + i * 1e-3) for i in range(9)))
        for name, k in (("sync_every=0", 1.0), ("sync_every=1", 1.2))
    }
    result = _result(workload, {"steps": 20, "sync_every": [0, 1]}, runner.summarize(samples))
    assert "medians give" not in workload.reading(result)
    assert paired_medians.apart(result, {"slowdown_k1": ("sync_every=1", "sync_every=0")}) == ""


def test_the_figures_help_says_it_is_the_median_of_each_rounds_ratio():
    assert SyncAsync().metric("speedup").help == f"sync done time / async done time: {paired_medians.PAIRED_HELP}"
    slowdown = StepWorkload(lambda backend, device, params: lambda: None, name="loop").metric("slowdown_k1")
    assert paired_medians.PAIRED_HELP in slowdown.help
    assert "each round's own ratio (paired)" in paired_medians.PAIRED_HELP


def test_ab_keys_its_head_column_in_the_same_words():
    from asyncbench.report import paired

    assert f"not head's own median, which {paired_medians.other_moments('base')};" in paired.PAIRED_KEY


def test_a_figure_said_outside_an_interval_prints_the_digits_that_show_it():
    """A trial printed 'sync / async medians give 0.91×, outside speedup's paired [0.91–1.26]' for a true 0.909."""
    result = Result("c", "c", "sync_async", "torch", "cpu", {}, OK, metrics={"speedup": 1.06}, bounds={"speedup": (0.9124, 1.26)})
    said = paired_medians.outside(result, "speedup", 0.9093, "sync / async medians give")
    assert said == "sync / async medians give 0.909×, outside speedup's paired [0.912–1.26]"
    result = Result("c", "c", "sync_async", "torch", "cpu", {}, OK, metrics={"speedup": 1.06}, bounds={"speedup": (0.9104, 1.26)})
    said = paired_medians.outside(result, "speedup", 0.9093, "sync / async medians give")
    assert said == "sync / async medians give 0.909×, outside speedup's paired [0.91–1.26]", said
    assert paired_medians.outside(result, "speedup", 1.0, "x") == ""


def test_a_narrow_interval_is_printed_with_the_digits_that_keep_the_figure_outside_it_and_its_ends_apart():
    """A trial (a gathered sweep): 'sync / async medians give 1.054×, outside speedup's paired [1.05–1.05]' of an
    interval [1.05376, 1.05430]: the figure read inside it, and its two ends as one."""
    result = Result("c", "c", "sync_async", "numpy", "cpu", {}, OK, metrics={"speedup": 1.054}, bounds={"speedup": (1.053757, 1.054299)})
    said = paired_medians.outside(result, "speedup", 1.05476, "sync / async medians give")
    assert said == "sync / async medians give 1.0548×, outside speedup's paired [1.0538–1.0543]"


def _barrier(waitall_s: float, wait_one_s: float, saved: float, bounds: tuple[float, float]) -> Result:
    metrics = {"waitall_s": waitall_s, "wait_one_s": wait_one_s, "saved_fraction": saved}
    return Result("c", "c", "barrier", "mxnet", "cpu", {}, OK, metrics=metrics, bounds={"saved_fraction": bounds}, asynchronous=True)


def test_the_barriers_saving_says_it_is_each_rounds_own_and_where_the_medians_part_from_it():
    """A trial: 'returns after 705 µs instead of 2.42 ms: 66.6% [30.9–85.9] of the wait saved' read as 1 − 0.705/2.42
    (70.9%); 66.6% is the median of each round's own saving."""
    from asyncbench.workloads import BUILT_IN

    barrier = BUILT_IN["barrier"]
    inside = barrier.reading(_barrier(2.42e-3, 705e-6, 0.666, (0.309, 0.859)))
    assert inside == (
        "waiting for the one result returns after 705 µs instead of 2.42 ms: each round's own share of the wait saved, "
        "its median 66.6% [30.9–85.9]"
    )
    apart = barrier.reading(_barrier(2.42e-3, 705e-6, 0.55, (0.45, 0.65)))
    assert "1 − wait_one / waitall medians give 70.9%, outside saved_fraction's paired [45–65]" in apart, apart
    assert paired_medians.other_moments("the other") in apart
    assert apart.endswith("judge by the paired figure (each round's own saving)")
