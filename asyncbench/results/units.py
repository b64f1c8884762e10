"""Human-readable quantities: seconds, bytes, ratios, rates (3 significant digits)."""

from __future__ import annotations

import math

#: what is shown where there is no value
NO_VALUE = "–"
_TIME_UNITS = ((1.0, "s"), (1e-3, "ms"), (1e-6, "µs"), (1e-9, "ns"))
_BYTE_UNITS = ((2**40, "TiB"), (2**30, "GiB"), (2**20, "MiB"), (2**10, "KiB"))


def number(value: float, digits: int = 3) -> str:
    """`digits` significant digits, never in e-notation: 376000, 0.0000123, 4.9."""
    text = f"{value:.{digits}g}"
    if "e" not in text:
        return text
    if abs(value) >= 1:
        return f"{value:.0f}"
    decimals = digits - 1 - math.floor(math.log10(abs(value)))
    return f"{value:.{decimals}f}"


def percent(fraction: float | None, digits: int = 2) -> str:
    """0.0465 -> '4.7%', 49.0 -> '4900%' (never '4.9e+03%')."""
    if fraction is None or math.isnan(fraction):
        return NO_VALUE
    if math.isinf(fraction):
        return "∞%"
    return f"{number(fraction * 100, digits)}%"


def confidence(level: float) -> str:
    """0.95 -> '95%', 0.99988 -> '99.988%': the digits it takes to tell the level from 100%."""
    miss = 1 - level
    if miss <= 0:
        return "100%"
    digits = max(0, math.ceil(-math.log10(miss)) - 1)
    return f"{level * 100:.{digits}f}".rstrip("0").rstrip(".") + "%"


def _scaled(value: float, table: tuple[tuple[float, str], ...], smallest: tuple[float, str]) -> str:
    """The value in the largest unit of `table` it reaches, else in `smallest`."""
    for scale, unit in table:
        if abs(value) >= scale:
            return f"{number(value / scale)} {unit}"
    scale, unit = smallest
    return f"{number(value / scale)} {unit}"


def seconds(value: float | None) -> str:
    """0.0000041 -> '4.1 µs'."""
    if value is None or math.isnan(value):
        return NO_VALUE
    return _scaled(value, _TIME_UNITS, _TIME_UNITS[-1])


def size_bytes(value: float | None) -> str:
    """12_900_000 -> '12.3 MiB'."""
    if value is None:
        return NO_VALUE
    return _scaled(value, _BYTE_UNITS, (1, "B"))


def ratio(value: float | None) -> str:
    """7.912 -> '7.91×', 1.0003 -> '1.00×' (two decimals keep "no effect" visible as 1.00)."""
    if value is None or math.isnan(value):
        return NO_VALUE
    return f"{value:.2f}×" if abs(value) < 100 else f"{value:.0f}×"


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
    if unit == "bytes":
        return size_bytes(value)
    if unit == "bool":
        return "yes" if value else "NO"
    if unit == "%":
        return percent(value, 3)
    text = number(value)
    return f"{text} {unit}" if unit else text


def with_bounds(value: float | None, bounds: tuple[float, float] | None, unit: str) -> str:
    """'1.21× [1.03–1.60]', '118 ms [117–119]': a value and its 95% interval, the unit said once where it can be."""
    text = quantity(value, unit)
    if value is None or bounds is None:
        return text
    low, high = (quantity(b, unit) for b in bounds)
    suffix = next((s for s in (" " + text.split(" ", 1)[1] if " " in text else "", "×", "%") if s and text.endswith(s)), "")
    if suffix and low.endswith(suffix) and high.endswith(suffix):
        low, high = low.removesuffix(suffix), high.removesuffix(suffix)
    return f"{text} [{low}–{high}]"
