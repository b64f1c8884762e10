"""A compared ratio of an `ab` file held to what `ab` would have written beside it (results.paired reads each
ratio, then holds it here): its case's block count, its estimate and interval to its blocks' log ratios, its base
and head medians to the ratios its blocks give, its label to its interval at the case's margin. A file from
elsewhere, or edited by hand, otherwise shows a verdict, or a pair of medians, its own sample does not give.
"""

from __future__ import annotations

import math
from typing import Any, Protocol

from asyncbench.results import blocks as block_stats
from asyncbench.results import units
from asyncbench.results.fields import At
from asyncbench.results.labels import Label, label_of


class Compared(Protocol):
    """What is held here of a ratio as read (results.paired.PairedRatio, which imports this module)."""

    @property
    def unit(self) -> str: ...
    @property
    def base(self) -> float: ...
    @property
    def head(self) -> float: ...
    @property
    def ratio(self) -> float: ...
    @property
    def ratio_ci(self) -> tuple[float, float] | None: ...
    @property
    def label(self) -> Label: ...
    @property
    def block_log_ratios(self) -> tuple[float, ...]: ...


# How far (relative) a stored ratio or interval end may lie from what its blocks give: `ab` writes the very floats
# it computed (JSON keeps them exactly), so only a rewrite of the numbers' last digits by another tool is allowed
# for; an edit of a figure moves it far more.
BLOCKS_TOLERANCE = 1e-6


def _close(stored: float, computed: float) -> bool:
    return math.isclose(stored, computed, rel_tol=BLOCKS_TOLERANCE)


def to_blocks(ratio: Compared, confidence: float | None, at: At) -> None:
    """A ratio whose file keeps its blocks (schema 3 on): its `ratio` the blocks' estimate and its `ratio_ci` their
    interval at the case's confidence, as engine.paired computes them (results.blocks); a file edited by hand (50.0
    in every block beside a ratio of 1.86) otherwise shows a verdict its own sample does not give."""
    values = ratio.block_log_ratios
    if not values:
        return
    if not math.isnan(ratio.ratio):
        expected = block_stats.estimate(values)
        if not _close(ratio.ratio, expected):
            (at / "ratio").fail(f"{ratio.ratio:g} is not the estimate of its block_log_ratios ({expected:g})")
    if confidence is None or not 0 < confidence < 1:
        return
    tail = (1 - confidence) / 2
    # the tail as the file's rounded confidence gives it back may fall a hair either side of the one `ab` used
    candidates = [block_stats.interval(values, tail * nudge) for nudge in (1.0, 1 - 1e-9, 1 + 1e-9)]
    stored = ratio.ratio_ci
    if any(_same_interval(stored, candidate) for candidate in candidates):
        return
    said = "none" if candidates[0] is None else f"[{candidates[0][0]:g}, {candidates[0][1]:g}]"
    shown = "null" if stored is None else f"[{stored[0]:g}, {stored[1]:g}]"
    (at / "ratio_ci").fail(f"{shown} is not the interval its block_log_ratios give at {confidence:g} ({said})")


def to_count(ratio: Compared, blocks: Any, at: At, index: int) -> None:
    """A case's `blocks` is how many blocks each of its ratios keeps (engine.paired: one value per verdict per
    block): the count its verdicts' sample size is read from (the footnote's "train_step: 10") is its blocks'."""
    kept = len(ratio.block_log_ratios)
    if kept and blocks != kept:
        said = "none" if blocks is None else blocks
        (at / "blocks").fail(f"{said} blocks said, {kept} in ratios[{index}].block_log_ratios")


# How far (a factor) the ratio of a ratio's two medians may lie beyond the range of its blocks' ratios. The file
# keeps no side's samples, so nothing in it gives the medians exactly; what bounds them: the pooled medians' ratio
# lies within the range of the rounds' paired ratios (if head ≥ r·base in every round, then median(head) ≥
# r·median(base)), and each block's value is the median of its rounds' ratios, so the rounds' range holds the blocks'
# and exceeds it by the rounds' scatter about their block's median. A factor of 1.5 allows rounds scattered ±50%
# about it (far past any gate that decides at a margin of a few percent); the real files measured (CPU torch, jax,
# numpy; CUDA) lay within 7% of their blocks' range, and a median edited to tell another story (10 ms beside a base of
# 29.8 ms on a row 1.92× slower) lies a factor 5 beyond it.
MEDIANS_SLACK = 1.5


def to_medians(ratio: Compared, rate: bool, at: At) -> None:
    """A ratio's `base` and `head` medians (of each side's pooled samples, engine.paired) tell the story its blocks
    tell: their ratio, oriented as `ratio` is (a `rate`'s inverted: base/head), within MEDIANS_SLACK of the range of
    the blocks' ratios. A file edited by hand (a head of 10 ms beside a base of 29.8 ms on a row 92% slower)
    otherwise shows a head three times faster on a SLOWER row. The key named is `head`: the file cannot say which
    of the two was edited, and the message gives both."""
    values = ratio.block_log_ratios
    if not values or math.isnan(ratio.base) or math.isnan(ratio.head):  # null: not finite when written, no median to hold
        return
    if ratio.base <= 0 or ratio.head <= 0:  # results.paired refuses these first; a 0 is never a pass past this check
        (at / ("head" if ratio.head <= 0 else "base")).fail("a median of a time or a rate is above 0")
    medians = ratio.base / ratio.head if rate else ratio.head / ratio.base
    low, high = math.exp(min(values)) / MEDIANS_SLACK, math.exp(max(values)) * MEDIANS_SLACK
    if not low <= medians <= high:
        oriented = "base/head (a rate)" if rate else "head/base"
        (at / "head").fail(
            f"the medians' ratio {oriented}, {units.quantity(ratio.head, ratio.unit)} against {units.quantity(ratio.base, ratio.unit)}, "
            f"is {medians:.3g}×: not within "
            f"{MEDIANS_SLACK:g}× of the ratios its block_log_ratios give ({math.exp(min(values)):.3g}×–{math.exp(max(values)):.3g}×)"
        )


def _same_interval(stored: tuple[float, float] | None, computed: tuple[float, float] | None) -> bool:
    if stored is None or computed is None:
        return stored is None and computed is None
    return _close(stored[0], computed[0]) and _close(stored[1], computed[1])


def to_margin(ratio: Compared, margin: float, at: At) -> None:
    """A ratio's `label` is the one label_of gives its `ratio_ci` at the case's margin: an `ab` file that says SAME
    of an interval wholly above 1 + margin says a gate passed that failed."""
    expected = label_of(ratio.ratio_ci, margin)
    if ratio.label != expected:
        shown = "no interval" if ratio.ratio_ci is None else f"[{ratio.ratio_ci[0]:g}, {ratio.ratio_ci[1]:g}]"
        (at / "label").fail(f"{str(ratio.label)!r} is not the label of {shown} at a {units.percent(margin)} margin ({str(expected)!r})")
