"""Human-readable quantities: seconds, bytes, ratios, rates (3 significant digits), their intervals and levels.

The one formatter of the tool: tables, metric lines, readings and checks all
print through it, so the same quantity reads the same everywhere (a metric
declared in MiB prints as the memory column's bytes do). What it prints
follows from the uncertainty: an interval shown as `±` only where that is
what it is (not lopsided, not reaching below zero), a time whose interval
reaches zero as `~0` (not distinguishable from 0), never a negative time,
and a confidence level rounded down to the digits a person reads, never up
past what was achieved.
"""

from __future__ import annotations

import math

#: what is shown where there is no value
NO_VALUE = "–"
#: the unit of a time: what a variant's median is stated in, everywhere a file states one
SECONDS = "s"
#: how a rate's unit ends (GFLOP/s, GB/s): a quantity whose lower value is slower
RATE_SUFFIX = "/s"
_TIME_UNITS = ((1.0, "s"), (1e-3, "ms"), (1e-6, "µs"), (1e-9, "ns"))
_BYTE_UNITS = ((2**40, "TiB"), (2**30, "GiB"), (2**20, "MiB"), (2**10, "KiB"))


def is_rate(unit: str) -> bool:
    """Whether a metric's unit is a rate's (ends in RATE_SUFFIX): the metrics `ab` judges (engine.paired_ratios),
    and the only ones an `ab` file may compare beside its variants' times (results.paired)."""
    return unit.endswith(RATE_SUFFIX) and len(unit) > len(RATE_SUFFIX)


# The longest a number is written out in plain digits: a 21-digit whole number, 20 zeros after the point, past any
# quantity a run measures. A value beyond (a hostile file's `1e300`, quoted back in its refusal) keeps its e-notation
# (`1e+302%`): written out it was a line of 300 digits.
PLAIN_MAX_CHARS = 24


def number(value: float, digits: int = 3, zeros: bool = False) -> str:
    """`digits` significant digits, not in e-notation: 376000, 0.0000123, 4.9. With `zeros` (a measured quantity
    shown in a unit: times, sizes) trailing zeros are kept, so each shows as many figures as its neighbours: 11.0
    beside 10.9, 3.50 beside 9.26, 19.0 (not 11, 3.5, 19); 0 stays 0. A value whose plain digits would run past
    PLAIN_MAX_CHARS keeps its e-notation (1e+300)."""
    text = f"{value:#.{digits}g}".removesuffix(".") if zeros and value != 0 else f"{value:.{digits}g}"
    if "e" not in text or not math.isfinite(value):
        return text
    if abs(value) >= 1:
        plain = f"{value:.0f}"
    else:
        decimals = digits - 1 - math.floor(math.log10(abs(value)))
        plain = f"{value:.{decimals}f}"
    return plain if len(plain) <= PLAIN_MAX_CHARS else text


def percent(fraction: float | None, digits: int = 2) -> str:
    """0.0465 -> '4.7%', 49.0 -> '4900%' (never '4.9e+03%')."""
    if fraction is None or math.isnan(fraction):
        return NO_VALUE
    if math.isinf(fraction):
        return "∞%"
    return f"{number(fraction * 100, digits)}%"


def margin(fraction: float | None) -> str:
    """A margin as the user gave it, in percent, in plain digits (`_percent_of`): 9.9999 -> '999.99%', 1e-9 ->
    '0.0000001%', never rounded across a limit (999.99% printed as `1e+03%`, the 1000% the tool refuses)."""
    if fraction is None or not math.isfinite(fraction):
        return percent(fraction)
    return _percent_of(fraction)


def percent_as_printed(fraction: float, digits: int = 2) -> float:
    """The fraction `percent` prints, read back: 0.4997 -> 0.5 ('50%'). A cut-off on a printed share is held on
    this, so that a share printed as the cut-off is treated as the cut-off (a `±49.97%` printed `±50%`)."""
    if not math.isfinite(fraction):
        return fraction
    return float(number(fraction * 100, digits)) / 100


#: the minus sign of a signed figure shown to a person (U+2212, as compare's "−5.3%" and a memory change's "−4 KiB");
#: machine-readable outputs (JSON, CSV) keep the ASCII hyphen
MINUS = "−"


def signed_percent(fraction: float | None, digits: int = 2) -> str:
    """`percent` with the project's minus sign: -0.13 -> '−13%' (never '-13%' beside compare's '−5.3%')."""
    return percent(fraction, digits).replace("-", MINUS)


# The chances of missing a person reads at a glance (1, 2, 2.5 and 5 times a power of ten: 5%, 1%, 0.25%, 0.01%):
# a Bonferroni share of a family's rate (0.05 / 557 = 0.0089%) is rounded up to the next of them, so a level is
# read as 99.99%, not 99.9911%, and is never stated above what was achieved.
_READABLE_MISSES = (1.0, 2.0, 2.5, 5.0, 10.0)
# A miss within this relative distance of a readable one is that one (0.05 is 5.000000000000004% in floats).
_ROUNDING_SLACK = 1e-9
#: the significant digits of the chance of missing that `exact_confidence` gives: 1 − 2 × 1%/3 reads 99.333%; a
#: rank-based interval moves only where a rank's quantile crosses an integer, which that last 0.0003% all but never does
EXACT_MISS_DIGITS = 3


def readable_miss(miss: float) -> float:
    """A chance of missing rounded up to the next readable one: 0.000089 -> 0.0001, 0.0025 -> 0.0025, 0.012 -> 0.02."""
    if miss <= 0:
        return 0.0
    if miss >= 1:
        return 1.0
    power = 10.0 ** math.floor(math.log10(miss))
    scaled = miss / power
    step = next(s for s in _READABLE_MISSES if scaled <= s * (1 + _ROUNDING_SLACK))
    return min(step * power, 1.0)


def _percent_of(fraction: float) -> str:
    """A fraction as a percentage with the decimals it has, no float noise: 0.9999 -> '99.99%'."""
    text = f"{fraction * 100:.10f}".rstrip("0").rstrip(".")
    return f"{text}%"


def confidence(level: float) -> str:
    """0.95 -> '95%', 0.999911 -> '99.99%', 0.99988 -> '99.98%': the level rounded down to the digits a person
    reads (its chance of missing rounded up: readable_miss), never up past what was achieved."""
    miss = 1 - level
    if miss <= 0:
        return "100%"
    return _percent_of(round(1 - readable_miss(miss), 12))


def exact_confidence(level: float) -> str:
    """0.99 -> '99%', 0.99333 -> '99.333%', 0.996667 -> '99.666%': the level an interval was taken at, its chance
    of missing to EXACT_MISS_DIGITS significant digits (the level rounded down, never overstating the confidence),
    so that an interval recomputed at the level read is the one printed. Every place that names an interval's level
    prints this (a check's detail, compare's header and rows, ab's interval): one rule, the one a stored detail's
    words are held to. `confidence` rounds it down to a readable level, which holds but is not the level
    taken: compare's 3 rows, each at 99.33%, read "99% intervals", and an interval recomputed at 99% was narrower."""
    miss = 1 - level
    if miss <= 0:
        return "100%"
    decimals = max(0, EXACT_MISS_DIGITS - 1 - math.floor(math.log10(miss * 100) + _ROUNDING_SLACK))
    scale = 10**decimals
    return _percent_of(round(math.floor(level * 100 * scale + _ROUNDING_SLACK) / scale / 100, 12))


def chance(miss: float) -> str:
    """A chance of missing, rounded up as `confidence` rounds its level down: 0.000089 -> '0.01%'."""
    return _percent_of(round(readable_miss(miss), 12))


def _scaled(value: float, table: tuple[tuple[float, str], ...], smallest: tuple[float, str]) -> str:
    """The value in the largest unit of `table` it reaches, else in `smallest`; where its rounded figure reaches the
    next unit up, in that one (0.9996 s is '1.00 s', never '1000 ms'; 2**20 - 1 bytes '1.00 MiB', not '1024 KiB')."""
    chosen = next((i for i, (scale, _) in enumerate(table) if abs(value) >= scale), None)
    scale, unit = smallest if chosen is None else table[chosen]
    above = len(table) - 1 if chosen is None else chosen - 1
    if above >= 0 and abs(float(number(value / scale))) * scale >= table[above][0]:
        scale, unit = table[above]
    return f"{number(value / scale, zeros=True)} {unit}"


def seconds(value: float | None) -> str:
    """0.0000041 -> '4.1 µs'; a negative time (a difference of two) -> 'below 0 by 4.1 µs', never '-4.1 µs'."""
    if value is None or math.isnan(value):
        return NO_VALUE
    if value < 0:
        return f"below 0 by {_scaled(-value, _TIME_UNITS, _TIME_UNITS[-1])}"
    return _scaled(value, _TIME_UNITS, _TIME_UNITS[-1])


def time_unit(value: float) -> tuple[float, str]:
    """The unit `seconds` prints `value` in, and its size in seconds: 0.0042 -> (0.001, 'ms'). An axis of times
    near `value` reads in it (the history page's charts)."""
    for scale, unit in _TIME_UNITS:
        if abs(value) >= scale:
            return scale, unit
    return _TIME_UNITS[-1]


def size_bytes(value: float | None) -> str:
    """12_900_000 -> '12.3 MiB'."""
    if value is None:
        return NO_VALUE
    return _scaled(value, _BYTE_UNITS, (1, "B"))


def signed_bytes(value: float | None) -> str:
    """A change in memory: 4096 -> '+4 KiB', -4096 -> '−4 KiB'."""
    if value is None:
        return NO_VALUE
    return ("+" if value >= 0 else MINUS) + size_bytes(abs(value))


#: units a metric may be declared in that are bytes: printed as the memory column prints bytes (size_bytes)
BYTE_SCALES = {"B": 1, "bytes": 1, "KiB": 2**10, "MiB": 2**20, "GiB": 2**30, "TiB": 2**40}


def ratio(value: float | None) -> str:
    """7.912 -> '7.91×', 1.0003 -> '1.00×' (two decimals keep "no effect" visible as 1.00)."""
    if value is None or math.isnan(value):
        return NO_VALUE
    return f"{value:.2f}×" if abs(value) < 100 else f"{value:.0f}×"


def ratio_end(value: float) -> str:
    """An end of a ratio's interval: three significant digits (0.983, 1.03), with two decimals where they would
    leave none (1.00, not 1: a file against itself reads [1.00–1.00], as its ratio reads 1.00×), and in plain digits
    from 1000 up, as `ratio` writes its estimate (577069× [573000–590000], not [5.73e+05–5.9e+05])."""
    shown = f"{value:.3g}"
    if math.isfinite(value) and abs(value) >= 1000:
        return f"{float(shown):.0f}"
    return f"{value:.2f}" if abs(value) < 100 and not any(c in shown for c in ".ein") else shown


def param(value: object) -> str:
    """A param value as it appears in case ids and tables: [64, 64] -> '64x64', True -> 'true'."""
    if isinstance(value, list):
        return "x".join(map(str, value))
    return str(value).lower() if isinstance(value, bool) else str(value)


def quantity(value: float | None, unit: str) -> str:
    """Format a metric value by its declared unit."""
    if value is None:
        return NO_VALUE
    if unit == "s":
        return seconds(value)
    if unit == "x":
        return ratio(value)
    if unit in BYTE_SCALES:
        return size_bytes(value * BYTE_SCALES[unit])
    if unit == "bool":
        return "yes" if value else "NO"
    if unit == "%":
        return signed_percent(value, 3)
    text = number(value).replace("-", MINUS)  # a signed figure shown to a person (an efficiency below 0): MINUS
    return f"{text} {unit}" if unit else text


#: how a time whose interval reaches zero is shown, short, in tables and metric lines (explained once: ZERO_NOTE)
NOT_DISTINGUISHABLE = "~0"
ZERO_NOTE = "~0: a time or cost whose interval reaches 0, not distinguishable from 0 ([≤ x]: the interval's upper end)"


def with_bounds(value: float | None, bounds: tuple[float, float] | None, unit: str) -> str:
    """'1.21× [1.03–1.60]', '118 ms [117–119]': a value and its 95% interval, the unit said once where it can be.

    A time (unit "s", often a difference: a cost, t3) whose interval reaches zero is '~0 [≤ 578 ns]', not
    distinguishable from 0, and one whose interval is [0, 0] plainly '0' (not '~0 [≤ 0 ns]'); one wholly below zero
    is 'below 0 by 4.5 µs [1.2–7.7]'; no negative time is printed."""
    if unit == "s" and value is not None and not math.isnan(value):
        if bounds is not None and bounds[0] <= 0 and bounds[1] == 0:
            return "0"
        if bounds is not None and bounds[0] <= 0 <= bounds[1]:
            return f"{NOT_DISTINGUISHABLE} [≤ {seconds(bounds[1])}]"
        if value < 0:
            magnitude = _pair(-value, None if bounds is None else (-bounds[1], -bounds[0]), unit)
            return f"below 0 by {magnitude}"
    return _pair(value, bounds, unit)


def time_as_shown(value: float, low: float | None, high: float | None) -> tuple[float, float | None, float | None]:
    """A time's median and interval's ends as every export states them (BMF, CSV, github-benchmark, the history
    page), by with_bounds' rule: where the interval reaches 0 (the table's `~0 [≤ x]`, not distinguishable from 0) its
    lower end is 0, and a median below 0 is 0, since no time is below 0 (a '-39 ns' end read as a time that can be
    negative); an interval wholly below 0 (a difference: 'below 0 by'), wholly above it, or none, as it is."""
    if low is None or high is None or not low <= 0 <= high:
        return value, low, high
    return max(value, 0.0), 0.0, high


def _pair(value: float | None, bounds: tuple[float, float] | None, unit: str) -> str:
    """A value and its interval, the interval's unit left out where it is the value's."""
    text = quantity(value, unit)
    if value is None or bounds is None:
        return text
    low, high = (_bound(b, unit) for b in bounds)
    if unit == "x" and math.isfinite(value) and abs(value) >= 100:
        # a ratio of 100 and more reads to its three figures ('134×'): its ends to as many, not an end below 100
        # to two decimals ('134× [50.72–249]'), as compare's ratio ends are (ratio_end)
        low, high = (f"{ratio_end(b) if abs(b) < 99.5 else f'{b:.0f}'}×" if math.isfinite(b) else _bound(b, unit) for b in bounds)
    elif unit == "x" and math.isfinite(value) and abs(value) < 100 and not _within(text, low, high):
        # the ends' decimals (those that show their side of 1) given the value too: never a '1.00×' outside them
        decimals = max(len(end.removesuffix("×").partition(".")[2]) for end in (low, high))
        text = f"{value:.{max(decimals, 2)}f}×"
        if not _within(text, low, high):  # an end cut to fewer decimals than the point took: all three to as many
            text, low, high = _one_decimals(value, bounds, (text, low, high))
    elif unit == SECONDS or unit in BYTE_SCALES:
        text, low, high = _distinct_ends(value, bounds, unit, (text, low, high))
    if unit == "x" and abs(value) < 100 and _ratio_collides(value, bounds, (text, low, high)):
        text, low, high = apart_ratio_ends(value, bounds, (text, low, high))
    if bounds[0] < 0:
        # a signed end beside a range's dash read as one ('[-0.0219–80.7]', '[-3.05–-0.362]'): each end keeps its
        # unit and its minus sign, and the two are apart, as relative_spread's '[−13% … +1535%]'
        return f"{text} [{low} … {high}]"
    suffix = next((s for s in (" " + text.split(" ", 1)[1] if " " in text else "", "×", "%") if s and text.endswith(s)), "")
    if suffix and low.endswith(suffix) and high.endswith(suffix):
        low, high = low.removesuffix(suffix), high.removesuffix(suffix)
    return f"{text} [{low}–{high}]"


# The most significant digits a time or a size takes to keep its interval's ends apart from its median: 1.00147 s in
# [1.00127, 1.00475] reads 1.0015 s [1.0013–1.0048] (5); an end nearer than that reads as the median, as it nearly is.
DISTINCT_DIGITS = 6
_UNIT_SCALES = {name: scale for scale, name in (*_TIME_UNITS, *_BYTE_UNITS, (1, "B"))}


def _distinct_ends(value: float, bounds: tuple[float, float], unit: str, shown: tuple[str, str, str]) -> tuple[str, str, str]:
    """A time's or size's median and interval ends (`shown`, as quantity printed them), with the significant digits
    that keep an end apart from the median where their values differ: '1.00 s [1.00–1.00]' for 1.00147 s in
    [1.00127, 1.00475] hid a lopsided interval as none. The three are then in the median's unit; figures that
    already read distinct are left as they are. Each keeps the unit it was printed in: an end in another unit than
    the median's names it ('39.98 ms [616.4 µs–40.03 ms]', never '[0.6164–40.03]' read as milliseconds)."""
    text, low, high = shown

    def collides(texts: tuple[str, str, str]) -> bool:
        return any(end_text == texts[0] and end != value for end, end_text in zip(bounds, texts[1:], strict=True))

    if not collides(shown) or not all(map(math.isfinite, (value, *bounds))) or " " not in text:
        return shown
    names = [figure.rsplit(" ", 1)[-1] for figure in shown]
    if any(name not in _UNIT_SCALES for name in names):
        return shown
    factor = BYTE_SCALES.get(unit, 1)  # a size declared in MiB, each figure shown in the unit it was
    for digits in range(4, DISTINCT_DIGITS + 1):
        median, first, last = (
            f"{number(x * factor / _UNIT_SCALES[name], digits, zeros=True)} {name}" for x, name in zip((value, *bounds), names, strict=True)
        )
        if not collides((median, first, last)):
            return median, first, last
    return shown


# The most decimals a ratio takes to keep its interval's two ends apart: 1.00017× to 1.00020× read
# '1.0002× [1.0002–1.0002]', an interval of no width; past six decimals the ends are as good as one.
DISTINCT_RATIO_DECIMALS = 6


def apart_ratio_ends(value: float, bounds: tuple[float, float], shown: tuple[str, str, str]) -> tuple[str, str, str]:
    """A ratio and its interval with the fewest decimals (as many as `shown` has at least, one for all three) that
    print its two ends apart from each other and from the ratio where their values differ:
    0.991× in [0.9002, 0.9923] reads '0.991× [0.900–0.992]', never '0.99× [0.90–0.99]', whose upper end reads as the
    ratio and hides that the interval lies wholly below 1. `shown` where even DISTINCT_RATIO_DECIMALS do not."""
    start = max(len(text.removesuffix("×").partition(".")[2]) for text in shown)
    # ends read as each other: as many decimals as part them; an end read as the ratio: as many as show a side of 1
    most = DISTINCT_RATIO_DECIMALS if shown[1] == shown[2] else RATIO_SIDE_DECIMALS
    for decimals in range(start, most + 1):
        texts = (f"{value:.{decimals}f}×", f"{bounds[0]:.{decimals}f}×", f"{bounds[1]:.{decimals}f}×")
        if not _ratio_collides(value, bounds, texts):
            return texts
    return shown


def _ratio_collides(value: float, bounds: tuple[float, float], shown: tuple[str, str, str]) -> bool:
    """Whether a printed ratio and interval (finite) read two figures that differ as one (an end as the ratio, or as
    the other end)."""
    figures = (value, *bounds)
    if not all(map(math.isfinite, figures)):
        return False
    numbers = [float(text.removesuffix("×")) for text in shown]
    return any(numbers[i] == numbers[j] and figures[i] != figures[j] for i, j in ((0, 1), (0, 2), (1, 2)))


def _one_decimals(value: float, bounds: tuple[float, float], shown: tuple[str, str, str]) -> tuple[str, str, str]:
    """A ratio and its ends (`shown`) to the most decimals any took, where the point printed outside them: rounding
    three ordered numbers alike keeps their order. An end of 100 or more, or not finite, keeps its form."""
    figures = (value, *bounds)
    ours = [math.isfinite(x) and abs(x) < 100 for x in figures]
    decimals = max(len(text.removesuffix("×").partition(".")[2]) for text, own in zip(shown, ours, strict=True) if own)
    point, low, high = (f"{x:.{decimals}f}×" if own else text for x, text, own in zip(figures, shown, ours, strict=True))
    return point, low, high


def _within(text: str, low: str, high: str) -> bool:
    """Whether a printed ratio lies inside its printed interval (each as `units.ratio` or `_bound` wrote it)."""
    value, first, last = (float(t.removesuffix("×")) for t in (text, low, high))
    return first <= value <= last


# The most decimals a ratio's bound takes to show on which side of 1 it lies: five, as the illusion's reading beside it
# prints its ends (1.00007× [1.00001–1.00021]); with four, the metric line printed that low end as 1.0000, a side of 1
# it does not lie on.
RATIO_SIDE_DECIMALS = 5


def off_boundary(value: float, boundary: float, decimals: int = 2) -> str:
    """`value` to `decimals` decimals, more (up to RATIO_SIDE_DECIMALS) where those would round it onto a `boundary`
    it does not lie on: '1.003' for 1.0027 beside a boundary of 1, never '1.00'. An interval's end that a reading
    beside it says excludes the boundary ('the delay hurts something else too': a cost past wholly above 1) then
    never prints as the boundary itself ('1.02 [1.00–1.03]' read as an interval that holds 1)."""
    text = f"{value:.{decimals}f}"
    for places in range(decimals + 1, max(decimals, RATIO_SIDE_DECIMALS) + 1):
        if value == boundary or float(text) != boundary:
            break
        text = f"{value:.{places}f}"
    return text


def _bound(value: float, unit: str) -> str:
    """An interval's end; a ratio's end that lies off 1 but rounds to it ('1.00×' for 1.004) gets the decimals that
    show its side, since whether an interval excludes 1 is what a reading beside it says (1.03× [1.004–1.06] is
    "costs", 1.07× [1.00–1.16] is "not shown": both printed 1.00 before)."""
    text = quantity(value, unit)
    if unit != "x" or not math.isfinite(value) or value == 1.0 or abs(value) >= 100 or text != "1.00×":
        return text
    for decimals in range(3, RATIO_SIDE_DECIMALS + 1):
        shown = f"{value:.{decimals}f}×"
        if float(shown[:-1]) != 1.0:
            return shown
    # still 1 at the most decimals: they show no side, only digits ('1.00× [1.0000–1.0001]'): the plain end
    return text
