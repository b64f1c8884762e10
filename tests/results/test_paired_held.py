"""An `ab` file's ratio held to what `ab` writes beside it (results.paired_held): its case's block count is the blocks
it keeps, and its two medians tell the story its blocks tell."""

from __future__ import annotations

import json
import math
from typing import Any

import pytest

from asyncbench.errors import InputError
from asyncbench.results import ab_report, paired, paired_held
from asyncbench.results.labels import Label
from tests.support import ab_files


def _file(gate: paired.PairedRatio) -> dict[str, Any]:
    """A one-case `ab` file of `gate` as `ab` writes it (its JSON)."""
    case = paired.PairedCase("changed[numpy,cpu]", "ok", ratios=(gate,), rounds=64, blocks=len(gate.block_log_ratios))
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


def test_a_median_edited_to_tell_another_story_than_the_blocks_is_refused_naming_it():
    """The trial's edit: head 10 ms beside base 29.8 ms on a row 1.92× slower read as a head three times faster."""
    raw = _file(ab_files.recorded_gate(2, 1.92))
    ratio = raw["cases"][0]["ratios"][0]
    ratio.update(base=0.0298, head=0.0571)
    _read(raw)
    ratio["head"] = 0.010
    with pytest.raises(
        InputError, match=r"cases\[0\]\.ratios\[0\]\.head: the medians' ratio head/base, 10(\.0)? ms against 29\.8 ms, is 0\.336×"
    ):
        _read(raw)
    ratio.update(head=0.0571, base=0.100)  # an edited base is as far from the blocks
    with pytest.raises(InputError, match=r"cases\[0\]\.ratios\[0\]\.head: the medians' ratio"):
        _read(raw)


def test_the_medians_may_lie_within_the_slack_of_the_blocks_range_and_no_further():
    raw = _file(ab_files.recorded_gate(3, 1.3))
    ratio = raw["cases"][0]["ratios"][0]
    top = math.exp(max(ratio["block_log_ratios"]))
    ratio["head"] = ratio["base"] * top * paired_held.MEDIANS_SLACK * 0.999
    _read(raw)
    ratio["head"] = ratio["base"] * top * paired_held.MEDIANS_SLACK * 1.001
    with pytest.raises(InputError, match=r"not within 1\.5× of the ratios its block_log_ratios give"):
        _read(raw)


def test_a_rates_medians_are_read_the_way_its_ratio_is_turned():
    """A rate (GFLOP/s) is slower where it is lower: its ratio is base/head, and so is its medians'."""
    gate = ab_files.recorded_gate(4, 1.3)
    rate = paired.PairedRatio("gflops", paired.METRIC, "GFLOP/s", 13.0, 10.0, gate.ratio, gate.ratio_ci, gate.label, gate.block_log_ratios)
    _read(_file(rate))
    turned = paired.PairedRatio(
        "gflops", paired.METRIC, "GFLOP/s", 10.0, 13.0, gate.ratio, gate.ratio_ci, gate.label, gate.block_log_ratios
    )
    with pytest.raises(InputError, match=r"the medians' ratio base/head \(a rate\)"):
        _read(_file(turned))


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
