"""`ab`'s progress, a case's blocks as they end: where the case stands after each (its paired change so far, the
look's interval and label where one was taken, the next look, decided or not), told to report.progress's display,
which off a terminal writes a line per block into the CI log while the gate goes on."""

from __future__ import annotations

import functools
import math
from typing import TYPE_CHECKING, Callable

from asyncbench.results import blocks

if TYPE_CHECKING:
    from asyncbench.engine.paired import Pairing
    from asyncbench.report.progress import Block, ProgressDisplay

Scrub = Callable[[str | None], str | None]


def _as_it_is(text: str | None) -> str | None:
    return text


def report_blocks(pairings: list[Pairing], display: ProgressDisplay, scrub: Scrub = _as_it_is) -> None:
    """Each case's blocks told to `display` as they end, with the case's place among `pairings`: off a terminal, a
    line per block in the log while the gate goes on. `scrub`: what masks the sides' secret values in an error's
    reason (side_variables.scrubber), as in every other output."""
    for index, pairing in enumerate(pairings):
        pairing.on_block = functools.partial(_tell_block, display, index, len(pairings), scrub)


def _tell_block(display: ProgressDisplay, index: int, total: int, scrub: Scrub, pairing: Pairing) -> None:
    display.block(block_of(pairing, index, total, scrub))


def block_of(pairing: Pairing, index: int, total: int, scrub: Scrub = _as_it_is) -> Block:
    """Where a case stands after its latest block: each verdict's paired change so far (the look's interval and label
    where one was taken at this block), the scheduled blocks and the next look, whether it is decided (an error's
    reason through `scrub`)."""
    from asyncbench.report.progress import Block

    count = pairing.n_blocks
    measured = [(name, values) for (_, name), values in pairing.values.items() if values]
    schedule = pairing.budget().schedule() if pairing.scheduled else ()
    ended = pairing.done
    return Block(
        case_id=pairing.head_case.id,
        index=index,
        total=total,
        blocks=count,
        scheduled=pairing.max_blocks if pairing.scheduled else None,
        changes=tuple((name, blocks.estimate(values)) for name, values in measured),
        judged=pairing.judged if count and (pairing.looked_at == count or pairing.stopped) else (),
        next_look=next((look for look in schedule if look > count), None),
        decided=pairing.decided,
        elapsed_s=pairing.elapsed_s,
        rounds=pairing.rounds,
        last=tuple((name, math.exp(values[-1])) for name, values in measured),
        status=ended.status if ended is not None else "ok",
        reason=scrub(ended.reason) if ended is not None else None,
        stopped=pairing.stopped,
        margin=pairing.margin,
    )
