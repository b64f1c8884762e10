"""A gate's time, given to its cases block by block, where it can decide (`asyncbench ab`'s one time budget).

A fixed time per case wastes a gate's minutes twice over: a fast case that
decides in 4 s leaves its share unused, and a noisy one stops undecided
although the gate has time. Cases here are measured in independent blocks
(engine.paired), and one pair of fresh processes serves a block of every
open case that runs in the same interpreters (paired.shared_block), so all
undecided cases move on together and a case that decides stops taking
time. When the time left cannot decide every case, it goes to the ones it
can: a case whose blocks' spread says it needs more than is left sits out
while another could still decide, and reports the resolution it reached
and the time it would need.
"""

from __future__ import annotations

import time
from typing import Callable

from asyncbench.engine.paired import Pairing, shared_block
from asyncbench.results.blocks import planned_blocks
from asyncbench.results.paired import PairedCase

# When the time runs out with a case this many blocks (or fewer) short of its first look, those blocks are still
# taken. The looks are planned at the first round's pace; a machine that slows after it (another tenant starting
# work) can leave a case one block short of the first look, which is the first count that can give an interval at
# all: without that block the gate's two minutes decided nothing for it (measured on 2 cores beside a test run: a
# gate of configs/ci-gate.yaml stopped at 11 blocks of a first look at 12, every verdict INCONCLUSIVE, each case
# "about 2-3 s more"). Whether the block is taken rests on counts and the clock only, never on the blocks' values,
# so the looks' error is untouched; the gate overruns by the block in progress (as ever) and at most this many more.
GRACE_BLOCKS = 1
# When the time runs out with a case this many blocks (or fewer) short of the count whose interval passes over one
# wild block (results.blocks.robust_blocks: 13-15 in a 2-minute gate of five torch cases), those blocks are still
# taken, while the gate is no more than ROBUST_GRACE_SHARE of its time past its end. Under that count one block
# whose processes drew a wild bias sets an end of the interval: in 49 gates of configs/ci-gate.yaml on identical
# sides before this grace (commit 944044e), all three that exited 1 had a case at 12-13 blocks with a block of +21-40%
# at a 10-25% margin, where the other cases' 15-19 blocks passed over theirs (with it, 2 of 41 and 3 of 49 exited 1:
# a slow stretch left cases four short, or a verdict had two wild blocks; docs/measured.md). Counts and the clock
# decide, never the blocks' values, so the one look's error is untouched. Four blocks, not three: in 49 more gates
# (commit 872694f) two that exited 1 had cases four short after the machine slowed. The share, not the count, bounds
# the overrun: blocks start within a quarter of the gate's time past its end (four blocks of about 8 s for five
# torch cases, three of a slowed machine's 11-13 s), which keeps a 2-minute gate within its 3 minutes.
ROBUST_GRACE_BLOCKS = 4
ROBUST_GRACE_SHARE = 0.25


def gate(pairings: list[Pairing], budget_s: float, on_case: Callable[[int, Pairing], None] | None = None) -> list[PairedCase]:
    """Measure the cases block by block until each is decided or the gate's time is spent; their rows, in order.

    Every case gets its first block whatever the time (a row needs something measured), one GRACE_BLOCKS short
    of its first look gets those blocks too (the look is the first that can give an interval), and one
    ROBUST_GRACE_BLOCKS short of an interval robust to a wild block gets those while the overrun stays small. After that, each round of
    blocks takes the undecided cases that can still decide in the time left, or, when none can, all of them (so
    each reports the resolution it got to). Cases on the same two interpreters share each block's processes."""
    started = time.perf_counter()
    deadline = started + budget_s
    planned = False
    while True:
        undecided = [p for p in pairings if p.open]
        remaining = deadline - time.perf_counter()
        taking = _out_of_time(undecided, -remaining <= ROBUST_GRACE_SHARE * budget_s) if remaining <= 0 else _worth_it(undecided, remaining)
        if not taking:
            break
        groups: dict[tuple[int, int], list[Pairing]] = {}
        for pairing in taking:
            groups.setdefault((id(pairing.sides[0]), id(pairing.sides[1])), []).append(pairing)
        for group in groups.values():
            if on_case is not None:
                on_case(pairings.index(group[0]), group[0])
            shared_block(group, deadline)
        if not planned:  # every case has had its first block: plan the looks at that pace (results.blocks.BlockBudget)
            max_blocks = planned_blocks(budget_s, time.perf_counter() - started)
            for pairing in pairings:
                if pairing.done is None:
                    pairing.plan(max_blocks)
            planned = True
    return [pairing.finish() for pairing in pairings]


def _worth_it(undecided: list[Pairing], remaining_s: float) -> list[Pairing]:
    """The undecided cases the time left could decide (by their blocks' spread; a case without an interval yet
    counts as able to), or all of them when none could."""
    able = [p for p in undecided if p.seconds_needed() <= remaining_s or p.n_blocks < p.budget().first_look()]
    return able or undecided


def _out_of_time(undecided: list[Pairing], in_grace: bool) -> list[Pairing]:
    """Once the gate's time is spent: the cases without a block, those within GRACE_BLOCKS of their first look,
    and, while the gate is `in_grace` (ROBUST_GRACE_SHARE), those within ROBUST_GRACE_BLOCKS of a robust interval."""
    return [
        p
        for p in undecided
        if p.n_blocks == 0
        or 0 < p.budget().first_look() - p.n_blocks <= GRACE_BLOCKS
        or (in_grace and 0 < p.budget().robust_look() - p.n_blocks <= ROBUST_GRACE_BLOCKS)
    ]
