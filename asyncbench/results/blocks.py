"""The statistics of a paired gate (`asyncbench ab`): the process block as the unit of independence.

Two worker processes running identical code differ by a bias of their own (memory layout, core placement), kept
for their whole life. Rounds inside one pair of processes share that bias, so an interval over rounds shrinks
around a biased ratio and calls identical code faster or slower. So a gate's unit is the *block*: a fresh pair of
processes (one per side), set up alike and sampled in interleaved rounds for a short while, which gives one number
per verdict, the median log paired ratio of its rounds. Blocks are independent, each with a fresh bias, and the
verdict comes from them alone.

The biases are heavy-tailed (now and then one side's process is slow for its whole life), which wrecks Student's
t. So the interval is the exact signed-rank (Wilcoxon) interval of the blocks' centre, around their Hodges–Lehmann
estimate: it assumes only that a block is as likely to be off either way, and a wild block moves the estimate by
one rank. Its ends resist a wild block less (with a dozen blocks the averages of the wildest block with each other
one set them), so a look's interval is the intersection of two exact intervals whose tails add up to the look's:
the sign-test interval of the blocks' median with just the error that passes over one wild block each way (its
2nd smallest and largest block: (n + 1)/2^n), and the signed-rank interval with the rest. The truth lies outside
the intersection only when it lies outside one of them. Where the look's error cannot buy that sign interval, the
signed-rank one takes all of it (under min_blocks blocks there is no interval); with many blocks a share of the
error (WILD_SHARE) buys a sign interval that passes over several wild blocks.

A gate whose time holds too few blocks for a look before its last (the first look would come past
EARLY_LOOK_SHARE of the schedule) looks once, when its time runs out, with the whole error: so late an early look
would cost most of the error, and every verdict's robustness with it.

The question is one-sided (verdicts.margin.label_of: is head slower than base by more than the margin?), so each
tail of the interval carries the error of one wrong verdict. The gate's family-wise rate is split evenly over its
cases, each case's verdicts and the looks of the fixed block schedule, over the blocks the gate's time
holds (BlockBudget), so stopping early at a look cannot inflate it; the interval shown is two-sided at
1 − 2·(that share).

Figures (the processes' bias, wild blocks, the design before blocks against this one): docs/measured.md, section
"`asyncbench ab`"; the idea for users: docs/concepts/pairing.md.
"""

from __future__ import annotations

import functools
import math
import statistics
from dataclasses import dataclass
from typing import Sequence

from asyncbench.results import units

# The first look: at a per-look error near 1e-4 (a 1% rate over a dozen verdicts and their looks), the signed-rank
# interval needs 14 blocks (all on one side: 2^−14); a gate of one or two verdicts gets one from 10. Looking
# earlier spends budget on looks that cannot decide.
FIRST_LOOK_BLOCKS = 10
# Each look has half again as many blocks as the one before: the number of looks, and with it the share of the
# budget each one gets, grows only with the logarithm of the blocks.
LOOK_GROWTH = 1.5
# A look before the last is scheduled only when it can come this far into the schedule, or sooner: one later saves less
# than half the gate's blocks when it decides, and costs the last look two thirds of its error (a third to itself,
# a third to the spare look when the time runs out), which at 15-16 blocks is the error that buys an interval robust
# to one wild block (results.blocks._log_interval). A 2-minute gate of five torch cases schedules 12-16 blocks: one look.
EARLY_LOOK_SHARE = 0.5
# The most blocks a case is looked at over. 100 blocks of 0.5 s is a fast case's whole 2-minute gate; slower
# cases reach fewer, and the looks they never reach still hold their share of the budget (the cost of a fixed schedule).
MAX_BLOCKS = 100
# A block samples at least this long and this many rounds. Shorter blocks give more of them per second, but each
# needs a fresh pair of processes set up and warmed, and a median of fewer rounds is far from normal.
BLOCK_MIN_S = 0.5
BLOCK_MIN_ROUNDS = 5


@functools.lru_cache(maxsize=32)
def looks(first: int = FIRST_LOOK_BLOCKS, max_blocks: int = MAX_BLOCKS) -> tuple[int, ...]:
    """The block counts at which verdicts are looked at: 10, 15, 23, 35, 53, 80, 100 (from `first` on)."""
    at = [min(first, max_blocks)]
    while at[-1] < max_blocks:
        at.append(min(max(math.ceil(at[-1] * LOOK_GROWTH), at[-1] + 1), max_blocks))
    return tuple(at)


def scheduled_blocks(gate_s: float, first_round_s: float) -> int:
    """The blocks a case's looks are scheduled over: as many as the gate's time holds at its first round's pace (a
    block of every case, the slowest: it also verifies results and warms the imports), at most MAX_BLOCKS."""
    if first_round_s <= 0:
        return MAX_BLOCKS
    return max(1, min(MAX_BLOCKS, math.floor(gate_s / first_round_s)))


def revised_blocks(taken: int, left_s: float, pace_s: float) -> int:
    """The blocks a case's looks are scheduled over at a later pace: the `taken` ones and as many more as the time
    left holds at `pace_s` a block (the rounds after the first: that one also verifies the results and warms the
    imports, 2.6x a later block in a torch gate), at most MAX_BLOCKS. The gate revises a plan only upward and only
    before the case's first look (engine.gate_time): like the first plan it rests on counts and the clock alone."""
    if pace_s <= 0:
        return MAX_BLOCKS
    return max(taken, min(MAX_BLOCKS, taken + math.floor(left_s / pace_s)))


@functools.lru_cache(maxsize=256)
def _split(family_error: float, verdicts: int, max_blocks: int) -> tuple[int, tuple[int, ...]]:
    """(the looks the rate is split over, the block counts looked at while blocks go on): one look and none while
    they go on when the schedule has no room for a look before its last (the look is taken when the time runs out), else
    the fewest looks L such that the schedule
    from the first block count giving an interval at family_error / verdicts / (L + 1) holds at most L looks
    (the + 1: a last look when the time runs out between two). More looks scheduled mean a smaller error each, so
    a later first interval and fewer looks after it: the first L that fits is found by counting up."""
    whole = family_error / max(verdicts, 1)
    if max(FIRST_LOOK_BLOCKS, min_blocks(whole)) > EARLY_LOOK_SHARE * max_blocks:  # no room for a look before the last
        return 1, ()
    for counted in range(1, 64):
        tail = whole / (counted + 1)
        first = max(FIRST_LOOK_BLOCKS, min_blocks(tail))
        schedule = looks(first, max(max_blocks, first))
        if len(schedule) <= counted:
            return counted + 1, schedule
    raise AssertionError("a schedule of looks grows with the logarithm of the blocks: 64 looks are never needed")


@dataclass(frozen=True)
class BlockBudget:
    """One case's share of a gate's family-wise false-alarm rate, over its verdicts and its looks.

    The looks are scheduled before the second block (engine.gate_time), from how many blocks the gate's time
    holds at the first round's pace (`max_blocks`): a 2-minute gate of five torch cases reaches 14-16 blocks, and
    an error split over the looks of 100 blocks it never reaches put its first interval at 14 blocks where 12
    suffice. The first round is the slowest (it verifies the results and warms the imports: a torch case's first
    block took 10 s of a 100 s cap, its later ones 3.7 s), so until a case's first look the plan grows to what the
    later rounds' pace holds (revised_blocks): planned over 10 blocks, a clear +75% had its one look at the cap,
    after 26. The schedule, first or revised, rests on durations and counts, never on the blocks' ratios: a block
    samples for a set time, and under identical sides a slow base process and a slow head one take as long and
    point opposite ways, so the signed ranks stay exact whatever the schedule; and no plan changes after a look
    has been judged under it, so each look's share of the error is the one its plan fixed. Blocks past the schedule
    are kept for the last look when time runs out."""

    family_error: float  # the case's share of the gate's rate
    verdicts: int
    max_blocks: int = MAX_BLOCKS

    @property
    def looks(self) -> int:
        """The looks the budget is split over: the schedule's, and one more when time runs out between two."""
        return _split(self.family_error, self.verdicts, self.max_blocks)[0]

    def tail_error(self) -> float:
        """The chance one look at one verdict is wrong: each tail of its interval."""
        return self.family_error / max(self.verdicts, 1) / self.looks

    def schedule(self) -> tuple[int, ...]:
        """This case's looks while its blocks go on: from the first block count that can give an interval at its
        error (a look before that could decide nothing) to the scheduled blocks; none for a one-look schedule."""
        return _split(self.family_error, self.verdicts, self.max_blocks)[1]

    def first_look(self) -> int:
        """The fewest blocks a look can decide from: the schedule's first, or for a one-look schedule the count that
        gives an interval at all."""
        schedule = self.schedule()
        return schedule[0] if schedule else min_blocks(self.tail_error())

    def robust_look(self) -> int:
        """The fewest blocks a look's interval passes over a wild block from (robust_blocks at its error)."""
        return robust_blocks(self.tail_error())

    def confidence(self) -> float:
        """The confidence of the two-sided interval shown, whose each tail is `tail_error`."""
        return 1 - 2 * self.tail_error()

    def describe(self) -> str:
        verdicts = f"{self.verdicts} verdict{'' if self.verdicts == 1 else 's'}"
        looks = "one look each, when the time runs out" if self.looks == 1 else f"up to {self.looks} looks each"
        return (
            f"{units.percent(self.family_error)} for this case, split over {verdicts} and {looks}: "
            f"intervals at {units.confidence(self.confidence())}"
        )


def block_value(ratios: Sequence[float]) -> float | None:
    """A block's number for one verdict: the median log paired ratio of its rounds (None without a positive one)."""
    logs = [math.log(r) for r in ratios if r > 0 and math.isfinite(r)]
    return statistics.median(logs) if logs else None


def _walsh(values: Sequence[float]) -> list[float]:
    """Every pairwise mean (x_i + x_j) / 2, i ≤ j, sorted: the Walsh averages the signed-rank statistic counts."""
    return sorted((a + values[j]) / 2 for i, a in enumerate(values) for j in range(i, len(values)))


def estimate(values: Sequence[float]) -> float:
    """The ratio the blocks estimate: exp of the Hodges–Lehmann estimate of their log ratios (the median of the
    Walsh averages): a block whose process drew a wild bias moves it by one rank, not by its size."""
    return _exp(statistics.median(_walsh(values)))


@functools.lru_cache(maxsize=512)
def _signed_rank_k(n: int, tail_error: float) -> int:
    """The k whose k-th smallest and k-th largest Walsh averages bound the centre with each tail at most
    `tail_error`: the largest k with P(T ≤ k − 1) ≤ tail_error for the signed-rank statistic T of n values,
    from its exact null distribution (the count of subsets of the ranks 1..n by their sum). 0: none (too few)."""
    top = n * (n + 1) // 2
    counts = [1] + [0] * top
    for rank in range(1, n + 1):
        for total in range(top, rank - 1, -1):
            counts[total] += counts[total - rank]
    below, k = 0, 0
    for total in range(top + 1):
        below += counts[total]
        if below / 2**n > tail_error:
            break
        k = total + 1
    return k


def min_blocks(tail_error: float) -> int:
    """The fewest blocks that give an interval at all: all n blocks on one side has probability 2^−n."""
    return max(2, math.ceil(math.log2(1 / tail_error)))


def interval(values: Sequence[float], tail_error: float) -> tuple[float, float] | None:
    """The ratio's interval from the blocks' log ratios, each tail `tail_error`: the exact signed-rank (Wilcoxon)
    interval of their centre, narrowed by the sign-test interval that passes over one wild block where the error
    can buy it (see the module's docstring), turned back into a ratio; None when there are too few blocks for any
    (min_blocks)."""
    bounds = _log_interval(values, tail_error)
    return None if bounds is None else (_exp(bounds[0]), _exp(bounds[1]))


# The sign-test interval is bought to pass over this many wild blocks each way: its ends are the blocks one further in.
WILD_BLOCKS = 1


def _sign_error(n: int, wild: int = WILD_BLOCKS) -> float:
    """The error of each tail of the sign-test interval [x(wild+1), x(n−wild)] of n blocks: P(Bin(n, ½) ≤ wild).
    A quotient of integers, exact and rounded once: float(2**n) overflows past 1023 blocks."""
    below: int = sum(math.comb(n, i) for i in range(wild + 1))
    return below / (1 << n)


def robust_blocks(tail_error: float) -> int:
    """The fewest blocks whose interval passes over a wild block at `tail_error` (the sign-test part costs
    (n + 1)/2^n of it): 13 at 0.2%, 15 at 0.05%; at most MAX_BLOCKS."""
    n = min_blocks(tail_error)
    while _sign_error(n) > tail_error and n < MAX_BLOCKS:
        n += 1
    return n


# Where a small share of a look's error buys more, the sign-test interval passes over as many wild blocks as this
# share of the error buys (at least WILD_BLOCKS): at 35 blocks and a look's 0.01%, four each way for a tenth of it,
# while the signed-rank interval, left nine tenths, widens by under 1% for blocks near normal. On a noisy day the
# wild blocks come in threes: conversion's `print` on identical sides, 35 blocks with +28%, +53% and +93% among
# blocks within ±8%, stayed INCONCLUSIVE at a 10% margin ([0.973–1.104]) passing over one (issue 53).
WILD_SHARE = 0.1


def _keeps_estimate(n: int, wild: int) -> bool:
    """Whether the sign-test interval passing over `wild` blocks each way always holds the estimate: the Walsh
    averages that involve none of the `wild` lowest blocks are all at or above the interval's lower end, and when
    they are at least half of the n(n+1)/2 their median (the estimate) is too (the same above). More wild blocks
    than this could leave a gate's ratio outside its own interval (23 of 78 blocks at one side: the estimate in the
    wild ones, the interval beyond them), which no reader may be shown (history.recording refuses such a point)."""
    touched = wild * (n - wild) + wild * (wild + 1) // 2
    return 4 * touched <= n * (n + 1)


def _wild(n: int, tail_error: float) -> int:
    """How many wild blocks each way the sign-test part passes over: WILD_BLOCKS, or more where WILD_SHARE of the
    error buys them, never so many that the interval could leave out the estimate (_keeps_estimate)."""
    wild = WILD_BLOCKS
    while 2 * (wild + 1) < n and _sign_error(n, wild + 1) <= WILD_SHARE * tail_error and _keeps_estimate(n, wild + 1):
        wild += 1
    return wild


def _log_interval(values: Sequence[float], tail_error: float) -> tuple[float, float] | None:
    """`interval` on the log scale."""
    n = len(values)
    if _sign_error(n) > tail_error:  # the error cannot buy robustness to a wild block: all of it to the signed-rank
        return _signed_rank_interval(values, tail_error)
    wild = _wild(n, tail_error)
    sign_error = _sign_error(n, wild)
    ordered = sorted(values)
    sign = ordered[wild], ordered[n - 1 - wild]
    rank = _signed_rank_interval(values, tail_error - sign_error)
    if rank is None:
        return sign
    return max(sign[0], rank[0]), min(sign[1], rank[1])


def _signed_rank_interval(values: Sequence[float], tail_error: float) -> tuple[float, float] | None:
    """The exact signed-rank interval of the blocks' centre on the log scale, each tail `tail_error` (None: too few)."""
    k = _signed_rank_k(len(values), tail_error)
    if k == 0:
        return None
    walsh = _walsh(values)
    return walsh[k - 1], walsh[len(walsh) - k]


# exp() of more than this overflows a float: such an interval end is "more than 10^300 times", as good as unbounded.
_LARGEST_LOG = 700.0


def _exp(value: float) -> float:
    return math.exp(max(min(value, _LARGEST_LOG), -_LARGEST_LOG))


# Spread of the blocks, robust to the few whose process drew a wild bias: the MAD scaled to a normal's SD.
_MAD_TO_SD = 1.4826


# The fewest blocks whose spread is read at all (blocks_needed, never_reason): the spread of one block is none, and
# the MAD of two is half their distance, no spread to project from.
SPREAD_BLOCKS = 3


def blocks_needed(values: Sequence[float], margin: float, tail_error: float) -> int | None:
    """How many blocks in all would likely decide the verdict if the blocks went on as they have: the first look
    after these blocks at which the gate's own interval (the exact signed-rank interval) of an ideal sample with the
    blocks' centre and robust spread (normal quantiles) no longer reaches across 1 + margin. The exact interval,
    not a normal approximation of it: at 10–20 blocks its discrete ranks make it far wider than z·σ/√n, and an
    estimate from the approximation promised 40 s where the gate then stayed undecided.
    None when none within MAX_BLOCKS would (the centre sits on the margin) or there are too few blocks to say."""
    if len(values) < SPREAD_BLOCKS:
        return None
    from scipy.stats import norm

    centre = statistics.median(_walsh(values))
    spread = _MAD_TO_SD * statistics.median(abs(v - statistics.median(values)) for v in values)
    line = math.log1p(margin)
    for n in looks(max(FIRST_LOOK_BLOCKS, min_blocks(tail_error))):
        if n <= len(values):
            continue
        bounds = _log_interval([centre + spread * float(norm.ppf((i + 0.5) / n)) for i in range(n)], tail_error)
        if bounds is not None and (bounds[1] < line or bounds[0] > line):
            return n
    return None


def never_reason(values: Sequence[float], margin: float, tail_error: float) -> str | None:
    """Why no look up to MAX_BLOCKS would decide the verdict (`blocks_needed` None with blocks enough to say), in
    blocks_needed's own terms: "margin" where the interval MAX_BLOCKS blocks of this spread would give is narrower
    than the margin itself, so only the estimate's nearness to the margin keeps it reaching across; "spread" where
    even that interval is as wide as the margin or wider, so the blocks are too wild for any estimate near no change
    (a note said "sits on the margin" of a -14% estimate at a +5% margin whose blocks spread ±81%). None otherwise."""
    if len(values) < SPREAD_BLOCKS or blocks_needed(values, margin, tail_error) is not None:
        return None
    from scipy.stats import norm

    spread = _MAD_TO_SD * statistics.median(abs(v - statistics.median(values)) for v in values)
    bounds = _log_interval([spread * float(norm.ppf((i + 0.5) / MAX_BLOCKS)) for i in range(MAX_BLOCKS)], tail_error)
    if bounds is None:
        return "spread"
    return "margin" if (bounds[1] - bounds[0]) / 2 < abs(math.log1p(margin)) else "spread"
