"""An `ab` file's ratio held to what `ab` writes beside it (results.paired_held): its case's block count is the blocks
it keeps; its two medians, pooled over samples taken at other moments, are held only to being above 0."""

from __future__ import annotations

import json
import math
import re
import statistics
from typing import Any

import pytest

from asyncbench.errors import InputError
from asyncbench.results import ab_report, paired, paired_held
from asyncbench.results import blocks as block_stats
from asyncbench.results.labels import Label, label_of
from tests.support import ab_files


def _file(gate: paired.PairedRatio) -> dict[str, Any]:
    """A one-case `ab` file of `gate` as `ab` writes it (its JSON)."""
    case = paired.PairedCase("changed[numpy,cpu]", "ok", ratios=(gate,), rounds=5 * (n := len(gate.block_log_ratios)), blocks=n)
    side = paired.Side("head", "a1b2c3d (HEAD)", "python3", "3.11", facts=ab_files.FACTS)
    report = ab_report.ABReport("2026-01-01T12:00:00+00:00", "0.1.0", side, side, ab_files.MARGIN, 0.01, False, "SIGSTOP", (case,))
    return json.loads(report.to_json())


def _read(raw: dict[str, Any]) -> ab_report.ABReport:
    return ab_report.ABReport.from_dict(raw, "ab.json")


def test_a_gate_as_ab_makes_it_reads_back():
    for seed, ratio in enumerate((0.7, 1.0, 1.02, 1.92)):
        _read(_file(ab_files.recorded_gate(seed, ratio)))


@pytest.mark.parametrize("blocks", [3, 0, None])
def test_a_case_that_says_another_number_of_blocks_than_its_ratios_keep_is_refused(blocks):
    """The trial's edit: `blocks` 3 beside 16 block_log_ratios was shown as the verdicts' sample size."""
    raw = _file(ab_files.recorded_gate(1, 1.3))
    raw["cases"][0]["blocks"] = blocks
    said = "none" if blocks is None else blocks
    with pytest.raises(InputError, match=rf"ab\.json: cases\[0\]\.blocks: {said} blocks said, 16 in ratios\[0\]\.block_log_ratios"):
        _read(raw)


def test_a_file_that_keeps_no_blocks_is_not_held_to_their_count():
    """Files before blocks were kept (schema < 3) state a count and no blocks: nothing to hold it to."""
    raw = ab_files.ab_data(Label.SLOWER)
    assert raw["cases"][0]["blocks"] == 12
    assert not raw["cases"][0]["ratios"][0].get("block_log_ratios")
    _read(raw)


def _one_block_under_load() -> paired.PairedRatio:
    """A ratio as engine.paired makes it (Pairing._judge) of one block of 5 rounds on a loaded machine: paired ratios
    2.55, 2.55, 2.55, 0.5, 0.5 (base 1, 1, 3, 3, 3 s), so the block says 2.55× and the pooled medians 0.85×."""
    old = [1.0, 1.0, 3.0, 3.0, 3.0]
    new = [o * r for o, r in zip(old, (2.55, 2.55, 2.55, 0.5, 0.5), strict=True)]
    value = block_stats.block_value([n / o for o, n in zip(old, new, strict=True)])
    assert value is not None
    values = (value,)
    interval = block_stats.interval(values, 0.005)
    return paired.PairedRatio(
        "sync",
        paired.VARIANT,
        "s",
        statistics.median(old),
        statistics.median(new),
        block_stats.estimate(values),
        interval,
        label_of(interval, ab_files.MARGIN),
        values,
    )


def test_medians_that_part_from_the_blocks_as_a_loaded_machine_parts_them_read_back():
    """The trial's file: `ab` on a loaded 2-core machine wrote medians 1.58× apart beside its one block's 2.55×, and
    its own reader refused it (`not within 1.5× of the ratios its block_log_ratios give`): nothing `ab` writes bounds
    the pooled medians' ratio by its blocks."""
    gate = _one_block_under_load()
    assert gate.head / gate.base < math.exp(gate.block_log_ratios[0]) / 1.5  # past the old check's slack
    raw = _file(gate)
    raw["cases"][0]["confidence"] = 0.99
    read = _read(raw).cases[0].ratios[0]
    assert (read.base, read.head) == (gate.base, gate.head)


def test_a_rates_medians_read_back_whichever_way_they_lie():
    """A rate (GFLOP/s) is slower where it is lower: its medians, pooled as a time's are, may part from its blocks."""
    gate = ab_files.recorded_gate(4, 1.3)
    for base, head in ((13.0, 10.0), (10.0, 13.0)):
        _read(
            _file(
                paired.PairedRatio(
                    "gflops", paired.METRIC, "GFLOP/s", base, head, gate.ratio, gate.ratio_ci, gate.label, gate.block_log_ratios
                )
            )
        )


@pytest.mark.parametrize(("base", "head", "key"), [(None, 0, "head"), (0, 0, "base"), (0, 0.01, "base")])
def test_a_median_of_zero_is_refused_not_let_past_the_medians_check(base, head, key):
    """A CI engineer's edit: head=0 was shown as `0 ns` beside `+1.5% … SAME` (head=0.02 and 1e-9 were refused: zero
    skipped the check of the medians against the blocks)."""
    raw = _file(ab_files.recorded_gate(5, 1.015))
    ratio = raw["cases"][0]["ratios"][0]
    ratio["head"] = head
    if base is not None:
        ratio["base"] = base
    with pytest.raises(InputError, match=rf"cases\[0\]\.ratios\[0\]\.{key}: a median of a time is above 0"):
        _read(raw)


@pytest.mark.parametrize("level", [-1, 0, 1, 2])
def test_a_confidence_outside_0_and_1_is_refused_naming_it(level):
    raw = _file(ab_files.recorded_gate(6, 1.3))
    raw["cases"][0]["confidence"] = level
    with pytest.raises(InputError, match=r"cases\[0\]\.confidence: a confidence level lies between 0 and 1"):
        _read(raw)


@pytest.mark.parametrize(
    ("kind", "unit"), [("variant", "parsecs"), ("variant", "ms"), ("variant", ""), ("metric", "GFLOP"), ("metric", "s")]
)
def test_a_unit_ab_never_writes_is_refused_naming_it(kind, unit):
    """`ab` states a variant's medians in seconds and judges only rates among the metrics: "ms" read the medians (in
    seconds) a thousand times off, "parsecs" was printed as one."""
    raw = _file(ab_files.recorded_gate(7, 1.3))
    raw["cases"][0]["ratios"][0].update(kind=kind, unit=unit)
    with pytest.raises(InputError, match=r"cases\[0\]\.ratios\[0\]\.unit: .* is not the unit of"):
        _read(raw)


@pytest.mark.parametrize("margin", [50, 10, 0, -0.05])
def test_a_margin_outside_the_range_ab_takes_is_refused_naming_it(margin):
    """`--max-regression` and ab_margin take above 0% and under 1000% (verdicts.margin): 50 (5000%) was shown as
    `margin 5e+03%`."""
    raw = _file(ab_files.recorded_gate(8, 1.3))
    raw["max_regression"] = margin
    with pytest.raises(InputError, match=r"ab\.json: max_regression: expected a percentage above 0% and under 1000%"):
        _read(raw)
    raw = _file(ab_files.recorded_gate(8, 1.3))
    raw["cases"][0]["margin"] = margin
    with pytest.raises(InputError, match=r"cases\[0\]\.margin: expected a percentage above 0% and under 1000%"):
        _read(raw)


def _at_confidence(values: list[float], confidence: float) -> dict[str, Any]:
    """A one-case `ab` file of `values` as its blocks, its ratio and interval theirs at `confidence`, as `ab` writes it."""
    tail = (1 - confidence) / 2
    interval = block_stats.interval(values, tail)
    estimate = block_stats.estimate(values)
    gate = paired.PairedRatio(
        "changed", paired.VARIANT, "s", 0.004, 0.004 * estimate, estimate, interval, label_of(interval, ab_files.MARGIN), tuple(values)
    )
    raw = _file(gate)
    raw["cases"][0]["confidence"] = confidence
    return raw


def test_the_most_blocks_ab_takes_of_a_case_read_back_in_well_under_a_second():
    """The trial: 500 blocks took 23 s to refuse and 20,000 minutes, the exact interval's cost growing with the cube
    of the count. At the most `ab` takes of a case (paired_held.MAX_FILE_BLOCKS) a reader holds the file to its blocks'
    exact interval in well under a second, its signed-rank distribution computed afresh (no cache from the writing)."""
    import random
    import time

    rng = random.Random(7)
    raw = _at_confidence([rng.gauss(0.02, 0.05) for _ in range(paired_held.MAX_FILE_BLOCKS)], 0.98)
    block_stats._signed_rank_k.cache_clear()
    started = time.process_time()
    _read(raw)
    assert time.process_time() - started < 1.0


@pytest.mark.parametrize("count", [paired_held.MAX_FILE_BLOCKS + 1, 2000])
def test_more_blocks_than_ab_takes_of_a_case_are_refused_before_any_is_computed(count, monkeypatch):
    """The trial: 2000 blocks crashed every reader (float(2**2000) in the sign test's error), 20,000 pinned the CPU
    for minutes. More than `ab` takes of a case is refused, counted or not, before anything is computed of them."""
    raw = _at_confidence([math.log(1.3)] * 10, 0.98)
    ratio = raw["cases"][0]["ratios"][0]
    ratio["block_log_ratios"] = [math.log(1.3)] * count
    monkeypatch.setattr(block_stats, "_walsh", lambda values: pytest.fail("a block computed"))
    monkeypatch.setattr(block_stats, "_signed_rank_k", lambda n, tail: pytest.fail("a block computed"))
    for blocks, where in ((count, "cases[0].blocks"), (None, "cases[0].ratios[0].block_log_ratios")):
        raw["cases"][0]["blocks"] = blocks
        with pytest.raises(InputError, match=rf"{re.escape(where)}: {count} blocks is more than `ab` takes of a case"):
            _read(raw)


def test_the_sign_tests_error_of_many_blocks_does_not_overflow():
    """float(2**n) overflows past 1023 blocks: the error is a quotient of integers, rounded once."""
    assert block_stats._sign_error(2000) == 0.0
    assert block_stats._sign_error(20) == pytest.approx(21 / 2**20)


def test_a_case_said_twice_is_refused_as_results_files_refuse_it():
    """The trial's edit: a copy of cases[0] appended was shown twice and recorded as two points of one run."""
    raw = _file(ab_files.recorded_gate(1, 1.3))
    raw["cases"].append(raw["cases"][0])
    with pytest.raises(InputError, match=r"ab\.json: cases\[1\]\.id: 'changed\[numpy,cpu\]' is also cases\[0\]'s: a case is one row"):
        _read(raw)


def test_a_ratio_said_twice_in_a_case_is_refused():
    raw = _file(ab_files.recorded_gate(1, 1.3))
    raw["cases"][0]["ratios"].append(raw["cases"][0]["ratios"][0])
    with pytest.raises(InputError, match=r"cases\[0\]\.ratios\[1\]\.name: variant '.*' is also ratios\[0\]'s"):
        _read(raw)


@pytest.mark.parametrize("status", ["error", "skipped", "one-sided"])
def test_a_case_that_was_not_compared_with_ratios_is_refused(status):
    """`ab` writes no ratios of an errored, skipped or one-sided case (engine.paired): the trial's errored case kept
    its ratios, was counted errored and still shown and recorded as measured."""
    raw = _file(ab_files.recorded_gate(1, 1.3))
    raw["cases"][0]["status"] = status
    with pytest.raises(InputError, match=rf"cases\[0\]\.ratios: a case whose status is '{status}' was not compared"):
        _read(raw)
    raw["cases"][0]["ratios"] = []
    _read(raw)


def _built_in(workload: str, params: dict[str, Any], name: str) -> dict[str, Any]:
    raw = _file(ab_files.recorded_gate(1, 1.3))
    case = raw["cases"][0]
    case.update(id=f"{workload}[numpy,cpu]", workload=workload, backend="numpy", device="cpu", params=params)
    case["ratios"][0]["name"] = name
    return raw


def test_a_ratio_of_a_built_in_workload_names_what_ab_judges_of_it():
    """The trial's edit: a ratio named `<img src=x onerror=alert(1)>` of a sync_async case was shown as a row and
    recorded as a series; `ab` names a ratio after a variant it gates (not sync_async's `queued`) or a rate."""
    _read(_built_in("sync_async", {"n_ops": 100}, "async"))
    _read(_built_in("training_memory", {"sync_every": [0, 4]}, "sync_every=4"))
    for workload, params, name in [
        ("sync_async", {"n_ops": 100}, "<img src=x onerror=alert(1)>"),
        ("sync_async", {"n_ops": 100}, "queued"),
        ("training_memory", {"sync_every": [0, 4]}, "sync_every=8"),
    ]:
        refusal = rf"cases\[0\]\.ratios\[0\]\.name: '{re.escape(name)}' is no variant of {workload} that `ab` judges"
        with pytest.raises(InputError, match=refusal):
            _read(_built_in(workload, params, name))


def test_a_ratio_of_a_users_workload_keeps_its_own_name():
    _read(_built_in("work.py:work", {}, "my step"))


@pytest.mark.parametrize("deleted", [True, False])
def test_an_ok_case_without_its_ratios_is_refused(deleted):
    """The trial's edit: an `ab` file whose ok case lost its `ratios` was shown as "nothing was compared" (exit 0) and
    recorded as a run of 0 points; an ok case is one `ab` compared, and it writes that case's ratios."""
    raw = _file(ab_files.recorded_gate(1, 1.3))
    if deleted:
        del raw["cases"][0]["ratios"]
    else:
        raw["cases"][0]["ratios"] = []
    with pytest.raises(InputError, match=r"ab\.json: cases\[0\]\.ratios: a case whose status is 'ok' was compared"):
        _read(raw)
