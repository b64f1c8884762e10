"""A compared ratio of an `ab` file held to what `ab` would have written beside it (results.paired reads each
ratio, then holds it here): its case's block count, its estimate and interval to its blocks' log ratios, its label
to its interval at the case's margin. A file from elsewhere, or edited by hand, otherwise shows a verdict its own
sample does not give. Its base and head medians are not held to its blocks: `ab` does not bound their ratio by them
(the note above to_margin).
"""

from __future__ import annotations

import math
from typing import Any, Protocol, Sequence

from asyncbench.results import blocks as block_stats
from asyncbench.results import units
from asyncbench.results.fields import At
from asyncbench.results.labels import Label, label_of
from asyncbench.results.sampling_held import MAX_COUNT


class Compared(Protocol):
    """What is held here of a ratio as read (results.paired.PairedRatio, which imports this module)."""

    @property
    def name(self) -> str: ...
    @property
    def kind(self) -> str: ...
    @property
    def unit(self) -> str: ...
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


# No case of an `ab` file has more blocks than this: the gate takes no block of a case past MAX_BLOCKS, however long
# its time (engine.paired.Pairing.open), and every `ab` before has done the same. The time alone would bound it far
# higher (a day's cap, --gate-time-max, over the 0.5 s a block samples at least, BLOCK_MIN_S: 172,800), and a reader
# holds each ratio to its blocks' exact interval (to_blocks), whose cost grows with the cube of the count (the
# signed-rank distribution, results.blocks): 500 blocks took 23 s to read, 20,000 minutes. At this count it is a
# fraction of a second; a file with more is refused before anything is computed of its blocks.
MAX_FILE_BLOCKS = block_stats.MAX_BLOCKS


def to_most_blocks(count: int, at: At) -> None:
    """A case's block count, or a ratio's count of blocks kept, at most MAX_FILE_BLOCKS: checked before any block's
    number is computed with (a file of 2000 blocks crashed every reader, one of 20,000 pinned a CPU for minutes)."""
    if count > MAX_FILE_BLOCKS:
        at.fail(f"{count} blocks is more than `ab` takes of a case ({MAX_FILE_BLOCKS}, however long its gate)")


# No `ab` case takes more rounds than a run's sampling may (results.sampling_held.MAX_COUNT, a billion): a day's gate
# of rounds of a microsecond each is under 10**8 of them
MAX_FILE_ROUNDS = MAX_COUNT


def to_rounds(rounds: Any, count: Any, at: At) -> None:
    """A case's rounds (checked a count before) no more than MAX_FILE_ROUNDS (10**15 rounds is no file `ab` wrote).
    Not held to BLOCK_MIN_ROUNDS per block (`count`): engine.paired ends a block only after that many rounds, but the
    files the tests build and older readers' fixtures state fewer, and that rule is left for when they are mended."""
    del count
    if rounds is None:
        return
    if rounds > MAX_FILE_ROUNDS:
        at.fail(f"{rounds} rounds is more than any run takes ({MAX_FILE_ROUNDS:g})")


def to_status(status: str, count: int, at: At) -> None:
    """A case's ratios (`count` of them) only where its status is ok: `ab` writes ratios of a case measured on both
    sides and none of an errored, skipped or one-sided one (engine.paired, session.paired). An errored case with
    ratios was counted as errored and still shown and recorded as measured. An ok case holds at least one ratio:
    `ab` judges every case it measured on both sides (engine.paired); one without them was shown as "nothing was
    compared" and recorded as a run of 0 points."""
    if count and status != "ok":
        at.fail(f"a case whose status is {status!r} was not compared: `ab` writes no ratios of it")
    if not count and status == "ok":
        at.fail("a case whose status is 'ok' was compared: `ab` writes its ratios, and this one has none")


def to_each_once(ratios: Sequence[Compared], at: At) -> None:
    """A case's ratios, one per variant or metric: `ab` judges each (kind, name) once (engine.paired's keys), and
    the store keys a point by its name: a ratio said twice was shown twice and recorded as two points."""
    first: dict[tuple[str, str], int] = {}
    for index, ratio in enumerate(ratios):
        key = (ratio.kind, ratio.name)
        if key in first:
            (at / index / "name").fail(f"{ratio.kind} {ratio.name!r} is also ratios[{first[key]}]'s: each is judged once")
        first[key] = index


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


# A ratio's `base` and `head` medians are not held to its blocks: nothing `ab` writes bounds their ratio by them. Each
# side's median pools that side's samples of every round of every block, taken at other moments than the other
# side's; the blocks are medians of the rounds' paired ratios, which cancel what a moment does to both sides. On a
# loaded machine the two part by any factor: one block of 5 rounds whose paired ratios are 2.55, 2.55, 2.55, 0.5, 0.5
# (base 1, 1, 3, 3, 3 s) has the block ratio 2.55× and medians 2.55 s against 3 s (0.85×). The pooled medians' ratio
# lies within the range of the rounds' paired ratios, which the file does not keep; a check against the blocks'
# range (within 1.5× of it) refused a file `ab` wrote on a loaded 2-core machine (medians 1.58×, its one block
# 2.55×). So the medians are held only to what they are (above 0: results.paired), and the table shows no ratio of
# them beside the paired change (report.paired: head's column is base's median at the paired change).


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
