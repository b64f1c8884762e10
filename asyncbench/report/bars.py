"""The three clocks drawn as bars: each variant's median issue, done and device time on one scale.

A dependency-free picture of the illusion for terminals and CI summaries:
on an asynchronous backend the issue bar is a sliver of the done bar. Drawn
only for cases whose clocks differ (where issue equals done, as on a
synchronous backend, the bars would repeat the table).
"""

from __future__ import annotations

from asyncbench.results import units
from asyncbench.results.model import OK, Result, VariantResult

#: characters of the longest bar: fits 80 columns with the labels and figures
WIDTH = 32
#: eighths of a character, for bars finer than a whole cell
EIGHTHS = " ▏▎▍▌▋▊▉"
# An issue time within 1% of the done time is the same clock (a synchronous backend): the table leaves out
# its issue column, and there is no picture to draw.
SAME_CLOCK = 0.01
CLOCKS = (("issue", "issue_s"), ("done", "done_s"), ("device", "device_s"))


def bar(value_s: float, scale_s: float, width: int = WIDTH) -> str:
    """A bar of `value_s` on a scale where `scale_s` fills `width` characters (at least a sliver when above 0)."""
    eighths = round(value_s / scale_s * width * 8) if scale_s > 0 else 0
    eighths = max(eighths, 1 if value_s > 0 else 0)
    full, part = divmod(min(eighths, width * 8), 8)
    return ("█" * full + (EIGHTHS[part] if part else "")).ljust(width)


def issue_differs(variant: VariantResult) -> bool:
    """Whether a variant's issue time is a clock of its own: more than SAME_CLOCK away from its done time."""
    return abs(variant.issue_s.median - variant.done_s.median) > SAME_CLOCK * variant.done_s.median


def differs(result: Result) -> bool:
    """Whether some variant's issue time differs from its done time (there is an illusion to draw)."""
    return any(issue_differs(v) for v in result.variants.values())


def clock_bars(result: Result) -> list[str]:
    """Plain-text lines: per variant, its clocks as bars on the case's one scale ([] when there is nothing to draw)."""
    if result.status != OK or not result.variants or not differs(result):
        return []
    scale = max(max(v.done_s.median, v.device_s.median if v.device_s else 0.0) for v in result.variants.values())
    label_width = max(len(name) for name in result.variants)
    lines = []
    for name, variant in result.variants.items():
        for index, (label, clock) in enumerate(CLOCKS):
            stats = getattr(variant, clock)
            if stats is None:
                continue
            head = name if index == 0 else ""
            lines.append(f"{head:<{label_width}}  {label:<6} {bar(stats.median, scale)} {units.seconds(stats.median)}")
    return lines
