"""Whether a row ran ahead: its call returned before its work was done, by more than the harness's own sync.

A variant's illusion is done / issue, round by round. Its done time holds
what the harness adds after every call whatever the work (the backend's sync
with nothing queued, a clock read: model.HarnessCost, measured per backend
and device), so a no-op "ran ahead" by that alone: a no-op numpy step
measured 1.35×, a numpy 16×16 product 1.09×. So each round's illusion is
taken beyond that cost, max(done − sync_high_s, issue) / issue (the work is
done no sooner than it was issued), and a variant ran
ahead only when the 95% interval of its median lies wholly above
ILLUSION_NOTICEABLE; wholly below, it did not; across it, the data do not
say. A variant whose rounds give no interval is not judged, and says why
("no 95% interval at n = 20"), rather than being left out or counted either
way. A synchronous backend's sync waits for nothing, so on one a row never
ran ahead: what separates its clocks is the harness.

One rule for every reader: the report's "What ran ahead", the headline's
count and the workloads' readings of their illusion.
"""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass
from typing import Iterable

from asyncbench.results import stats, units
from asyncbench.results.model import OK, HarnessCost, Result, VariantResult
from asyncbench.results.step_figures import ILLUSION

# An illusion beyond the harness's cost whose whole 95% interval is above this ran ahead. Timer noise and what is
# left of a sync with nothing queued after its measured cost stay far under 20%, while what the tool exists to show
# runs ahead by 2-100x (a GPU's queue, JAX's dispatch: 39x for a JAX matmul on a 2-core CPU), so a 1.2x line
# separates the two with room on both sides.
ILLUSION_NOTICEABLE = 1.2

RAN_AHEAD, NOT_AHEAD, UNDECIDED = 1, -1, 0


@dataclass(frozen=True)
class Judged:
    """How one variant (the row's deciding one) stands: `state` RAN_AHEAD, NOT_AHEAD, UNDECIDED (its interval
    straddles ILLUSION_NOTICEABLE) or None (not judged: `why`)."""

    state: int | None
    variant: str
    illusion: float | None  # the median of the rounds' illusions beyond the harness's cost
    bounds: tuple[float, float] | None  # its 95% interval
    n: int  # rounds with an issue time above 0
    harness_s: float | None  # what was subtracted from each done time (None: not measured, an older file)
    why: str = ""
    floored: bool = False  # the interval's lower end was below 1× and is shown as 1× (the work is not done before issue)

    @property
    def judged(self) -> bool:
        return self.state is not None

    def figure(self, shown: str | None = None) -> str:
        """'1.02× [≤1.00–1.05] beyond the harness's own 310 ns sync': the illusion the judgment rests on. An interval
        wholly at or below 1× beyond the harness's sync (done less it no later than the issue: 0.92× once) is floored to
        1× by the rule, not measured there, so it is said as what it is: "did not run ahead beyond the harness's own
        182 µs sync", never '1.00× [1.00–1.00]' as if a zero-width interval had been measured; a lower end floored
        alone reads '≤1.00'. `shown`: the illusion and its interval as printed beside another figure (side_by_side)."""
        if self.harness_s is not None and self.bounds is not None and self.bounds[1] <= 1.0:
            return (
                f"did not run ahead beyond the harness's own {units.seconds(self.harness_s)} sync (done less it came within the issue time)"
            )
        # without an interval (a synchronous backend's rounds judged without one) it says so, as every figure does
        shown = shown or units.with_bounds(self.illusion, self.bounds, "x") + (" [?]" if self.bounds is None else "")
        if self.floored and self.bounds is not None:
            shown = shown.replace("[", "[≤", 1)
        if self.harness_s is None:
            return f"{shown} (the harness's own sync cost not measured)"
        return f"{shown} beyond the harness's own {units.seconds(self.harness_s)} sync"


def harness_s(harness: HarnessCost | None) -> float | None:
    """What is subtracted from each done time: the upper end of the no-op's median done − issue (None: not measured)."""
    return None if harness is None else max(harness.sync_high_s, 0.0)


def _no_interval(values: list[float]) -> str:
    """Why a variant's rounds give no 95% interval of their median illusion: too few, or too few independent."""
    n = len(values)
    if stats.order_rank(n) is None:
        return f"no 95% interval at n = {n} (too few rounds)"
    return f"no 95% interval at n = {n} (consecutive rounds drifted together: too few independent ones for it)"


def variant(name: str, measured: VariantResult, harness: HarnessCost | None, asynchronous: bool | None = None) -> Judged:
    """How one variant stands (see the module docstring)."""
    cost = harness_s(harness)
    pairs = zip(measured.samples.issue_s, measured.samples.done_s, strict=False)
    values = [(done - (cost or 0.0)) / issue for issue, done in pairs if issue > 0]
    if not values:
        return Judged(None, name, None, None, 0, cost, "no round with an issue time above 0")
    # The work is done no sooner than it was issued: a round whose sync cost less than the bound subtracted is 1×, not
    # below. Clamped after the order statistics (clamping keeps their order), as ties at 1× would read as drift.
    illusion = max(statistics.median(values), 1.0)
    interval = stats.median_ci(values)
    bounds = None if interval is None else (max(interval[0], 1.0), max(interval[1], 1.0))
    floored = interval is not None and interval[0] < 1.0
    if asynchronous is False:  # its sync waits for nothing: whatever separates issue from done is the harness
        return Judged(NOT_AHEAD, name, illusion, bounds, len(values), cost, floored=floored)
    if bounds is None:
        return Judged(None, name, illusion, None, len(values), cost, _no_interval(values))
    return Judged(stats.side(bounds, ILLUSION_NOTICEABLE), name, illusion, bounds, len(values), cost, floored=floored)


def judge(result: Result, names: Iterable[str] | None = None) -> Judged | None:
    """How a row stands, from its variants (or only `names`): ran ahead when any variant did; else not judged when
    any variant could not be; else undecided when any straddles; else not. None: a row not ok, or no variant."""
    if result.status != OK:
        return None
    chosen = list(result.variants) if names is None else [n for n in names if n in result.variants]
    each = [variant(name, result.variants[name], result.harness, result.asynchronous) for name in chosen]
    for wanted in (RAN_AHEAD, None, UNDECIDED, NOT_AHEAD):
        found = next((j for j in each if j.state == wanted), None)
        if found is not None:
            return found
    return None


def ran_ahead(result: Result) -> bool:
    """Whether the row ran ahead beyond the harness's own cost (judge)."""
    judged = judge(result)
    return judged is not None and judged.state == RAN_AHEAD


def not_judged(result: Result) -> Judged | None:
    """The row's unjudged variant, when nothing it measured ran ahead and one could not be judged; else None."""
    judged = judge(result)
    return judged if judged is not None and judged.state is None else None


def for_reading(result: Result, name: str) -> tuple[int | None, str, str]:
    """What a workload's reading of its illusion may state about variant `name`, the reading's own illusion figure
    (the `illusion` metric with its interval), and the figure the judgment rests on ('' for the reading's own figure):
    the judgment beyond the harness's cost where the result holds the variant's rounds, else (a result made of
    metrics alone) the `illusion` metric's interval against ILLUSION_NOTICEABLE. Where a reading prints the two side
    by side, both are in one notation (`side_by_side`): '1.00× [1.00–1.0001]; 1.00002× [1.00002–1.00005] beyond ...'
    read the larger figure as the smaller."""
    value, bounds = result.metrics.get(ILLUSION), result.bounds.get(ILLUSION)
    own = units.with_bounds(value, bounds, "x")
    if result.status == OK and name in result.variants:
        judged = variant(name, result.variants[name], result.harness, result.asynchronous)
        if judged.state is None:
            return None, own, judged.why
        paired = None
        if value is not None and bounds is not None and judged.illusion is not None and judged.bounds is not None:
            paired = side_by_side((value, bounds), (judged.illusion, judged.bounds))
        if paired is None or judged.figure().startswith("did not run ahead"):
            return judged.state, own, judged.figure()
        return judged.state, paired[0], judged.figure(paired[1])
    return stats.side(bounds, ILLUSION_NOTICEABLE), own, "" if bounds is not None else "no interval"


Figure = tuple[float, tuple[float, float]]


def side_by_side(first: Figure, second: Figure) -> tuple[str, str] | None:
    """Two ratios, each with its interval, printed side by side in one notation: the fewest decimals (two at least,
    units.DISTINCT_RATIO_DECIMALS at most) at which every figure and end off 1 reads off 1, the two ratios read apart
    where they differ, and each interval's ends read apart where they differ: '1.00003× [1.00003–1.00006]' beside
    '1.00002× [1.00002–1.00005]', never '1.00× [1.00–1.0001]' beside the second. None for a ratio of 100 or more or
    one not finite (each is printed as units.with_bounds prints it)."""
    numbers = [x for value, bounds in (first, second) for x in (value, *bounds)]
    if not all(math.isfinite(x) and abs(x) < 100 for x in numbers):
        return None

    def shown(decimals: int) -> list[str]:
        return [f"{x:.{decimals}f}" for x in numbers]

    def apart(decimals: int) -> bool:
        texts = shown(decimals)
        off_one = all(float(t) != 1.0 for x, t in zip(numbers, texts, strict=True) if x != 1.0)
        pairs = ((0, 3), (1, 2), (4, 5))  # the two ratios, the first's ends, the second's ends
        return off_one and all(texts[i] != texts[j] for i, j in pairs if numbers[i] != numbers[j])

    decimals = next((d for d in range(2, units.DISTINCT_RATIO_DECIMALS + 1) if apart(d)), units.DISTINCT_RATIO_DECIMALS)
    texts = shown(decimals)
    return f"{texts[0]}× [{texts[1]}–{texts[2]}]", f"{texts[3]}× [{texts[4]}–{texts[5]}]"
