"""The one formatter: numbers that read right (issue 33): levels rounded for people and never up, intervals as `±`
only where that is what they are, no negative time, the same bytes in the same words everywhere."""

from __future__ import annotations

import random
import re

import pytest

from asyncbench.results import spreads, units

MINUS = re.compile(r"[-−]\s*\d")  # a minus sign before a digit, ASCII or typographic


@pytest.mark.parametrize("level, shown", [(0.999911, "99.99%"), (0.99988, "99.98%"), (1 - 0.01 / 12 / 15, "99.99%")])
def test_a_level_reads_as_people_write_it(level, shown):
    """The issue's 99.9911% is 99.99% (a Bonferroni share of 1% over 12 verdicts and 15 looks: 99.9944%)."""
    assert units.confidence(level) == shown
    for usual in ("95%", "99%", "99.5%", "99.75%", "99.9%", "99.99%"):  # the usual levels keep their own digits
        assert units.confidence(float(usual.removesuffix("%")) / 100) == usual


def test_a_level_is_never_rounded_up_past_what_was_achieved():
    draw = random.Random(33)
    for _ in range(2000):
        level = 1 - 10 ** draw.uniform(-6, -0.5)
        shown = float(units.confidence(level).removesuffix("%")) / 100
        assert shown <= level + 1e-12, (level, units.confidence(level))
        assert len(units.confidence(level)) <= len("99.99975%")  # digits a person reads, not the float's


def test_a_chance_of_missing_is_rounded_up_as_its_level_is_rounded_down():
    assert units.chance(0.000089) == "0.01%"
    assert units.chance(0.05) == "5%"
    assert units.chance(0.0025) == "0.25%"


@pytest.mark.parametrize("low, high", [(0.5, 11.0), (0.9, 6.0), (0.999, 1.2)])
def test_a_lopsided_interval_is_shown_as_its_bounds_not_as_a_plus_minus(low, high):
    """The issue's `±501%`: half of a lopsided interval, read as reaching below zero."""
    cell = spreads.spread(1.0, low, high)
    assert "±" not in cell
    assert cell.startswith("1.00 s [")


def test_no_plus_minus_ever_reaches_below_zero_and_a_symmetric_interval_keeps_its_own():
    draw = random.Random(8)
    for _ in range(2000):
        median = 10 ** draw.uniform(-7, 1)
        low, high = median * draw.uniform(0.01, 1), median * draw.uniform(1, 20)
        cell = spreads.spread(median, low, high)
        if "±" in cell:
            assert float(cell.split("±")[1].removesuffix("%")) < 100
    assert spreads.spread(0.002, 0.0019, 0.0021) == "2.00 ms ±5%"
    assert spreads.spread(0.002, None, None) == "2.00 ms ±?"


def test_a_plus_minus_that_would_print_as_the_cut_off_is_shown_as_its_bounds():
    """`run configs/ci-gate.yaml` printed `17.0 ms ±50%`: a half-width of 49.97% is under the cut-off, but it reads
    as 50%, which the docs say takes the `[a–b]` form. The rule is held on the share as printed, in every writer."""
    median = 0.017
    low, high = median * (1 - 0.4997), median * (1 + 0.4997)
    assert spreads.shows_bounds(median, low, high)
    assert "±" not in spreads.spread(median, low, high)
    assert spreads.relative_spread(median, low, high).startswith("[")
    # just below what prints as 50% keeps its ±
    low, high = median * (1 - 0.494), median * (1 + 0.494)
    assert spreads.spread(median, low, high) == "17.0 ms ±49%"
    assert spreads.relative_spread(median, low, high) == "±49%"


def test_a_time_whose_interval_reaches_zero_is_not_distinguishable_from_zero():
    """The issue's `t3 [-1.16 µs–578 ns]` and `numpy_cost -4.51 µs`."""
    shown = units.with_bounds(-4.51e-6, (-1.16e-6 * 5, 5.78e-7), "s")
    assert shown.startswith(units.NOT_DISTINGUISHABLE)
    assert "578 ns" in shown
    assert not MINUS.search(shown)
    assert not MINUS.search(units.with_bounds(2e-7, (-1.16e-6, 5.78e-7), "s"))


def test_no_negative_time_is_printed():
    assert not MINUS.search(units.seconds(-4.51e-6))
    wholly_below = units.with_bounds(-4.51e-6, (-7e-6, -1e-6), "s")
    assert wholly_below.startswith("below 0 by 4.51 µs")
    assert not MINUS.search(wholly_below)
    assert not MINUS.search(units.with_bounds(-4.51e-6, None, "s"))


def test_the_same_bytes_read_the_same_in_a_table_and_a_metric_line():
    """The issue's `+4 KiB` (now `+4.00 KiB`) in the table and `0.00391 MiB` in the metric line."""
    assert units.quantity(4096 / 2**20, "MiB") == units.size_bytes(4096) == "4.00 KiB"
    assert units.with_bounds(4096 / 2**20, (2048 / 2**20, 8192 / 2**20), "MiB") == "4.00 KiB [2.00–8.00]"
    assert units.signed_bytes(4096) == "+4.00 KiB"
    assert units.signed_bytes(-4096) == "−4.00 KiB"


def test_times_keep_three_significant_figures_with_their_trailing_zeros() -> None:
    """A new user read `11 ms ±1.4%` (10.97 ms) beside `10.9 ms`, `3.5 ms ±?` beside `9.26 ms` and `[28–32.9]`:
    fewer figures than the neighbours, as if less were known. Every time shows three; zero stays 0."""
    assert spreads.spread(0.01097, 0.01097 * 0.986, 0.01097 * 1.014) == "11.0 ms ±1.4%"
    assert spreads.spread(0.0034996, None, None) == "3.50 ms ±?"
    assert units.with_bounds(0.0306, (0.028, 0.0329), "s") == "30.6 ms [28.0–32.9]"
    assert units.with_bounds(0.0176, (0.0164, 0.019), "s") == "17.6 ms [16.4–19.0]"
    assert units.seconds(0.0) == "0 ns"
    assert units.seconds(0.123) == "123 ms"


def test_a_figure_that_rounds_up_to_the_next_unit_is_shown_in_it():
    """0.9996 s printed as '1000 ms' (three figures of 999.6 ms): the rounded figure reached the next unit."""
    from asyncbench.results import units

    assert units.seconds(0.9996) == "1.00 s"
    assert units.seconds(0.0009996) == "1.00 ms"
    assert units.seconds(0.00099949) == "999 µs"
    assert units.size_bytes(2**20 - 1) == "1.00 MiB"
    assert units.size_bytes(1023.9) == "1.00 KiB"


def test_a_lopsided_interval_too_narrow_for_three_digits_keeps_its_ends_apart_from_the_median():
    """1.00147 s in [1.00127, 1.00475] read '1.00 s [1.00–1.00]', as if it had no width: times and sizes get the
    digits that keep an end apart from the median where they differ; figures already distinct are unchanged."""
    assert spreads.spread(1.00147, 1.00127, 1.00475) == "1.0015 s [1.0013–1.0048]"
    assert units.with_bounds(12.0, (11.99, 12.5), "MiB") == "12.00 MiB [11.99–12.50]"
    assert units.with_bounds(1.0, (1.0, 1.00475), "s") == "1.000 s [1.000–1.005]"  # an end at the median reads as it
    assert units.with_bounds(0.118, (0.117, 0.119), "s") == "118 ms [117–119]"
    assert spreads.spread(8.31e-3, 8.2e-3, 9.9e-3) == "8.31 ms [8.20–9.90]"


def test_an_end_kept_apart_in_another_unit_than_the_median_names_its_unit():
    """A table row printed '39.98 ms [0.6164–40.03]': the lower end, 616 µs, given the median's digits in its own
    unit lost the unit, so it read as 0.6164 ms... beside ends in ms. Each end names its unit where it is not the
    median's, as '39.5 ms [609 µs–39.7 ms]' does."""
    assert spreads.spread(0.03998, 0.0006164, 0.04003) == "39.98 ms [616.4 µs–40.03 ms]"
    assert units.with_bounds(0.03998, (0.0006164, 0.04003), "s") == "39.98 ms [616.4 µs–40.03 ms]"
    assert spreads.spread(0.0395, 0.000609, 0.0397) == "39.5 ms [609 µs–39.7 ms]"


def test_a_signed_interval_keeps_each_end_s_sign_and_unit_apart_from_the_range():
    """`run --quick` on torch cpu printed a barrier's saved fraction as '-1119% [-6440–97]' (a saved 45% as
    '[-0.0219–80.7]': the % left off both ends) and an overlap efficiency as '-1.07 [-3.05–-0.362]': an ASCII minus
    beside the range's dash reads as one. A signed end keeps its unit and the project's minus sign, the two ends
    apart."""
    assert units.with_bounds(-11.189, (-64.4, 0.9698), "%") == "−1119% [−6440% … 97%]"
    assert units.with_bounds(0.45, (-0.000219, 0.807), "%") == "45% [−0.0219% … 80.7%]"
    assert units.with_bounds(-1.07, (-3.05, -0.362), "") == "−1.07 [−3.05 … −0.362]"
    assert units.with_bounds(-0.151, (-3.61, 1.81), "") == "−0.151 [−3.61 … 1.81]"
    assert units.with_bounds(0.45, (0.4, 0.5), "%") == "45% [40–50]"  # unsigned: as before
    assert units.quantity(-0.5, "%") == "−50%"


def test_a_ratio_of_a_hundred_and_more_has_ends_of_as_many_figures():
    """The trial's 'illusion 134× [50.72–249]': a point of three figures beside an end of four."""
    assert units.with_bounds(134.2, (50.72, 249.3), "x") == "134× [50.7–249]"
    assert units.with_bounds(389.3, (30.64, 648.7), "x") == "389× [30.6–649]"
    assert units.with_bounds(150.0, (2.345, 1000.2), "x") == "150× [2.35–1000]"


def test_a_ratio_end_that_no_decimal_shown_tells_from_one_reads_as_one():
    """'illusion 1.00× [1.00000–1.00001]': five decimals (RATIO_SIDE_DECIMALS) that still read 1 say no side of it,
    only digits."""
    assert units.with_bounds(1.000003, (1.000001, 1.000008), "x") == "1.00× [1.00–1.00001]"
    assert units.with_bounds(1.03, (1.004, 1.06), "x") == "1.03× [1.004–1.06]"  # a side shown is kept


def test_every_printed_level_is_rounded_down_never_up():
    """One rule for every interval's level (a check's detail, compare, ab): the level rounded down to three digits of
    its miss, never overstating the confidence; compare's header once rounded 1 − 1%/3 up to 99.667% while a check
    at 1 − 0.2%/9 read the truncated 99.9777%."""
    assert units.exact_confidence(1 - 0.01 / 3) == "99.666%"
    assert units.exact_confidence(1 - 0.002 / 9) == "99.9777%"
    assert units.exact_confidence(1 - 0.02 / 3) == "99.333%"
    assert units.exact_confidence(0.95) == "95%"
    assert units.exact_confidence(1.0) == "100%"
    assert not hasattr(units, "nearest_confidence")  # no second rule to print a level by


def test_a_ratio_interval_whose_ends_differ_is_never_printed_with_no_width():
    # a --syncs run's illusion, 1.0002× [1.00017, 1.00020], printed '1.0002× [1.0002–1.0002]'
    assert units.with_bounds(1.0002, (1.00017, 1.00020), "x") == "1.00020× [1.00017–1.00020]"
    assert units.with_bounds(1.21, (1.03, 1.60), "x") == "1.21× [1.03–1.60]"  # ends already apart: as before
    assert units.with_bounds(1.0, (1.0, 1.0), "x") == "1.00× [1.00–1.00]"  # an interval of no width says so


def test_a_ratio_s_interval_ends_are_written_in_the_notation_of_its_estimate():
    """`577069× [5.73e+05–5.9e+05]`: the estimate in digits, its interval's ends in exponents. From 1000 up both are
    plain digits, the ends still at three significant ones."""
    assert units.ratio(577069.0) == "577069×"
    assert units.ratio_end(573000.4) == "573000"
    assert units.ratio_end(590123.0) == "590000"
    assert units.ratio_end(1234.5) == "1230"
    assert units.ratio_end(999.4) == "999"
    assert units.ratio_end(1.0) == "1.00"


def test_an_illusion_end_just_above_1_prints_above_1_as_its_reading_does():
    # a trial's metric line printed `illusion 1.0001× [1.0000–1.0002]` beside the reading's `1.00007× [1.00001–1.00021]`:
    # a low end above 1 printed as 1
    assert units.with_bounds(1.00007, (1.00001, 1.00021), "x") == "1.00007× [1.00001–1.0002]"


def _ratio_figures(shown: str) -> tuple[float, float, float]:
    """A ratio and its interval's ends as `with_bounds` printed them: '1.0009× [1.0004–1.0015]' -> the three numbers."""
    said = re.fullmatch(r"(\S+)× \[(\S+?)(?:–| … )(\S+?)\]", shown)
    assert said is not None, shown
    point, low, high = (float(text.removesuffix("×")) for text in said.groups())
    return point, low, high


def test_a_ratio_whose_end_was_cut_below_its_point_takes_one_number_of_decimals():
    """`run` of a torch step file printed `illusion 1.0011× [1.0004–1.001]` on a metric line (the reading below it:
    `1.0011× [1.0004–1.0015]`): the upper end, 1.00145, got the three decimals that showed its side of 1, the point
    four, and the point printed lay above the end printed. Where that happens the three take one number of decimals;
    every other interval reads as before (a stored check's detail is held to it)."""
    assert units.with_bounds(1.00108, (1.000367, 1.00145), "x") == "1.0011× [1.0004–1.0014]"
    assert units.with_bounds(1.000863, (1.000367, 1.00145), "x") == "1.0009× [1.0004–1.001]"  # within: as before
    assert units.with_bounds(1.03, (1.004, 1.06), "x") == "1.03× [1.004–1.06]"


def test_a_printed_ratio_lies_within_its_printed_interval():
    """Over many intervals, near 1 and far from it: the ends printed, read back, hold the point printed."""
    draw = random.Random(1011)
    for _ in range(20000):
        centre = draw.choice((1.0, 1.0, draw.uniform(0.01, 150)))
        low, point, high = sorted(centre * (1 + draw.choice((-1, 1)) * 10 ** draw.uniform(-7, -0.3)) for _ in range(3))
        shown = units.with_bounds(point, (low, high), "x")
        value, first, last = _ratio_figures(shown)
        assert first <= value <= last, ((point, low, high), shown)


@pytest.mark.parametrize(
    ("fraction", "shown"),
    [(9.9999, "999.99%"), (1e-9, "0.0000001%"), (0.05, "5%"), (0.051, "5.1%"), (0.025, "2.5%"), (10.0, "1000%")],
)
def test_a_margin_is_printed_as_the_user_gave_it(fraction, shown):
    """A trial: `--max-regression 999.99%` printed `margin 1e+03%`, the 1000% the tool refuses; 0.0000001% printed
    `1e-07%`: a margin is printed in plain digits, as given, never rounded across a limit."""
    assert units.margin(fraction) == shown
