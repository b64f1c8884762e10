"""What bounds a case's step (`run --bound`): the perturbation fit as the view model shows it, under the case's lines.

A table per case, a row per side a variant was perturbed on: the variant, its reading (HOST-BOUND, DEVICE-BOUND,
BALANCED, INCONCLUSIVE), the side, the side's slack with its 95% interval (as a time: '~0 [≤ x]'
where the interval reaches 0; '≥ x' where its interval's low end reaches the largest delay injected, which it is then at least) and its
share of the step in brackets, the cost past it, and on the variant's first row the ceiling of cutting host work ('≤ 1.43×
[1.39–1.47]': at most that much faster; '–' where the device's slack may reach the whole step, said in one line
by one rule: `unbounded`). Under it a line per variant, with its unperturbed step, the reading in words
("device-bound: the host could take 420 µs
[400–440] more per step (38% of it) before the step slows; no gain shown: cutting host work makes it at most 1.06×
faster (1.00× [1.00–1.06])": from the ceiling's interval, "cannot make it faster" only where it is [1, 1]), what the cost
past a slack says where it differs from 1 (verdicts.bound.cost_reading), where the perturbation rounds' step lies
outside the timed step's interval that it does (`step_apart`), and, where the same result has a census
(`--syncs`), what removing its waits could save at most: the device's slack, never the time blocked. A variant of a
synchronous backend is one line ("synchronous: the host is the device"), never a row; a case of such variants only is
one line, no table. Every writer (terminal, markdown) lays out the same BoundView.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping, Sequence

from asyncbench.results import units
from asyncbench.results.bound import TABLE_NAMES, Bound, BoundKind, Side, SideBound, Verified
from asyncbench.results.model import VariantResult
from asyncbench.results.syncs import Census
from asyncbench.verdicts import bound as fitting

TITLE = "what bounds the step"
HEADERS: tuple[str, ...] = ("variant", "reading", "side", "slack (of step)", "cost past", "ceiling")
#: which columns hold figures (right-aligned), in HEADERS order
FIGURES: tuple[bool, ...] = (False, False, False, True, True, True)
#: the columns never wrapped: the words (the figures wrap at their spaces, a value above its interval: six columns
#: whose longest words fit an 80-column terminal)
NO_WRAP: tuple[bool, ...] = (True, True, True, False, False, False)
#: how each reading is named in the table (a synchronous variant has no row: its line says it)
READING = TABLE_NAMES
#: what the line says where the device's slack may reach the whole step (`unbounded`), whatever its estimate: the
#: ceiling's column reads '–' then, never '≤ 1.00× [1.00×–no upper bound]' (at most anything is no ceiling)
NO_CEILING = "cutting host work has no ceiling measured here: the device's slack may reach the whole step"
#: what a checked capture's share is of where the table's ceiling reads '–' (`ceiling`): the device's slack, which
#: the share is computed from, never a ceiling the table says was not measured ("reached 270% ±? of the ceiling")
NO_CEILING_SHARE = "of the device's slack (no ceiling measured here)"
#: what slack and cost past are, said under every report that shows a bound (view.legend)
BOUND_NOTE = (
    "slack: how much a side's work per step can grow before the step slows, measured by injecting delays (its 95% "
    "interval over the perturbation rounds); cost past: the step's slowdown per second of delay past the slack (1: that "
    "side alone sets the pace); ceiling: the most cutting host work could speed the step up, step / (step − "
    "the device's slack), its interval that of the device's slack under the same step"
)


@dataclass(frozen=True)
class BoundView:
    """One case's bounds: the table's rows (empty: only synchronous variants), a reading per variant, notes."""

    title: str  # 'what bounds the step (n=100 jax cpu)'
    headers: tuple[str, ...]
    figures: tuple[bool, ...]
    no_wrap: tuple[bool, ...]
    rows: tuple[tuple[str, ...], ...]
    summary: tuple[str, ...]  # a line per variant: its reading in words, and what its cost past and its waits say
    notes: tuple[str, ...]  # why a reading is partial or absent


def slack(fit: SideBound) -> str:
    """A side's slack with its interval: '420 µs [400–440]', '~0 [≤ 12 µs]', '≥ 800 µs' where its interval's low end
    reaches the largest delay injected (fitting.at_least_top: nothing past it was seen, surely), '420 µs ±?' without
    an interval. An estimate at the top whose interval reaches lower is said with its interval, as any other."""
    if fitting.at_least_top(fit):
        return f"≥ {units.seconds(max(fit.levels_s))}"
    if fit.slack_ci_s is None:
        return f"{units.seconds(fit.slack_s)} ±?"
    return units.with_bounds(fit.slack_s, fit.slack_ci_s, "s")


def share(fit: SideBound, step_s: float) -> str:
    """The slack as a share of the step, said as the slack is (`slack`): '38%'; '≥ 73%' where its interval's low
    end reaches the largest delay injected (fitting.at_least_top); '≤ 38%' where its interval reaches 0, as the
    slack beside it reads '~0 [≤ x]' (the point estimate's share there would contradict it, and so would '≥ x' of
    an estimate at the top); plainly '0%' where its interval is [0, 0], as the slack reads '0' (units.with_bounds),
    never '≤ 0%'."""
    if step_s <= 0:
        return units.NO_VALUE
    if fitting.at_least_top(fit):
        return f"≥ {units.percent(max(fit.levels_s) / step_s)}"
    if fit.slack_ci_s is not None and fit.slack_ci_s[0] <= 0 and fit.slack_ci_s[1] == 0:
        return units.percent(0.0)
    if fit.slack_ci_s is not None and fit.slack_ci_s[0] <= 0 <= fit.slack_ci_s[1]:
        return f"≤ {units.percent(fit.slack_ci_s[1] / step_s)}"
    return units.percent(fit.slack_s / step_s)


def cost(fit: SideBound, step_s: float) -> str:
    """The cost past the slack with its interval ('0.98 [0.93–1.04]', two decimals: 1.00 is one bottleneck); '–'
    where nothing was seen past the slack, or where the slack was held at the step (`step_s`, the bound's:
    fitting.held_at_step), whose cost past was not measured (the line under the table says so)."""
    if fitting.reaches_top(fit) or fitting.held_at_step(fit, step_s):
        return units.NO_VALUE
    if fit.cost_past_ci is None:
        return f"{fit.cost_past:.2f} ±?"
    # the reading beside it rests on whether the interval excludes 1 (fitting.cost_reading): an end off 1 never prints
    # as 1 ('1.02 [1.003–1.03]', not '[1.00–1.03]' beside "the delay hurts something else too"), and the estimate
    # takes as many decimals where two would put it outside the ends printed beside it
    low, high = (units.off_boundary(end, fitting.ONE_BOTTLENECK) for end in fit.cost_past_ci)
    shown = f"{fit.cost_past:.2f}"
    if not float(low) <= float(shown) <= float(high):
        shown = f"{fit.cost_past:.{max(len(end.partition('.')[2]) for end in (low, high))}f}"
    return f"{shown} [{low}–{high}]"


def unbounded(bound: Bound) -> bool:
    """Whether the device's slack may reach the whole step, so that cutting host work has no ceiling measured
    (verdicts.bound.unbounded: the rule the checked capture's words follow too)."""
    return fitting.unbounded(bound)


def ceiling(bound: Bound) -> str:
    """The ceiling of cutting host work: '1.43× [1.39–1.47]'; '1.44× ±?' without an interval, as the slack it is read
    from says; '–' where it cannot be said: no device side, the device's slack may reach the whole step (`unbounded`:
    NO_CEILING says why, under the table), or the device shares the host's cores (NO_SHARED_CEILING says why)."""
    if fitting.no_ceiling(bound):
        return units.NO_VALUE
    if bound.ceiling_ci is None:
        return f"{units.with_bounds(bound.ceiling, None, 'x')} ±?"
    return units.with_bounds(bound.ceiling, bound.ceiling_ci, "x")


def _rows(bound: Bound) -> list[tuple[str, ...]]:
    rows: list[tuple[str, ...]] = []
    for index, fit in enumerate(bound.sides):
        first = index == 0
        rows.append(
            (
                bound.variant if first else "",
                READING[bound.bound] if first else "",
                str(fit.side),
                f"{slack(fit)} ({share(fit, bound.step_s)})",
                cost(fit, bound.step_s),
                (f"≤ {ceiling(bound)}" if ceiling(bound) != units.NO_VALUE else units.NO_VALUE) if first else "",
            )
        )
    return rows


def _cutting(bound: Bound) -> str:
    """What cutting host work could buy, in words; on a device that shares the host's cores, that no ceiling is
    shown and why (NO_SHARED_CEILING: its slack says whether a core was free, not how long its own work takes)."""
    device = bound.side(Side.DEVICE)
    if bound.shares_cores and device is not None:  # before the ceiling's words, none of which hold on shared cores
        return fitting.NO_SHARED_CEILING
    if fitting.floor_unmeasured(bound):  # before "cannot make it faster", which its ceiling of [1, 1] would say
        return fitting.NO_FLOOR
    if unbounded(bound) and device is not None:
        return f"{NO_CEILING} ({slack(device)} of the {units.seconds(bound.step_s)} step)"
    if bound.ceiling is None:
        return "what cutting host work could buy was not measured (no device delay here)"
    if bound.ceiling_ci is not None and bound.ceiling_ci[1] <= 1:
        said = "cutting host work cannot make it faster"  # the device's slack is [0, 0]: the interval says so
    elif bound.ceiling_ci is not None and bound.ceiling_ci[0] <= 1:
        # a `~0 [≤ x]` slack is said from its interval (its upper end), as the table says it: no gain is shown, and
        # up to the ceiling's high end is not ruled out ("cannot make it faster" once stood beside [1.00–1.06])
        said = f"no gain shown: cutting host work makes it at most {_high(bound.ceiling_ci[1])} faster ({ceiling(bound)})"
    else:
        said = f"cutting host work makes it at most {ceiling(bound)} faster"
    return said


def _high(end: float) -> str:
    """The ceiling interval's high end as its interval prints it ('1.06×'; '1.004×' off 1, never '1.00×')."""
    return units.with_bounds(end, None, "x") if end >= 100 or f"{end:.2f}" != "1.00" else f"{units.off_boundary(end, 1.0)}×"


def _more(fit: SideBound, step_s: float) -> str:
    """'could take 420 µs [400–440] more per step (38% of it)'."""
    return f"could take {slack(fit)} more per step ({share(fit, step_s)} of it) before the step slows"


def _decided_by(bound: Bound) -> str:
    """The interval a reading of two sides was decided from, in words ("the host's slack exceeds the device's by 55%
    to 85% of the step (paired, round by round); "), or nothing where the bound has none (one side measured, or a
    bound `ab` read): the sides' own intervals beside it may overlap (host 822 µs [673 µs–1.02 ms], device ~0 [≤ 708
    µs]) where the paired difference, round by round, does not."""
    return "" if bound.difference_ci is None else f"{fitting.exceeds(bound.difference_ci)}; "


def reading(bound: Bound) -> str:
    """The reading in words: 'device-bound: the host's slack exceeds the device's by 34% to 42% of the step (paired,
    round by round); the host could take 420 µs [400–440] more per step (38% of it) before the step slows; no gain
    shown: cutting host work makes it at most 1.01× faster (1.00× [1.00–1.01])'."""
    host, device = bound.side(Side.HOST), bound.side(Side.DEVICE)
    if bound.bound == BoundKind.SYNCHRONOUS:
        return bound.note or fitting.SYNCHRONOUS_NOTE
    if not bound.rounds:  # nothing was measured: no interval to speak of (one step a sample, rounds cut at once)
        return f"not measured: {bound.note}" if bound.note else "not measured: no perturbation round"
    decided = _decided_by(bound)
    if bound.bound == BoundKind.DEVICE:
        said = f"device-bound: {decided}the host {_more(host, bound.step_s)}" if host is not None else "device-bound"
        return f"{said}; {_cutting(bound)}"
    if bound.bound == BoundKind.HOST:
        said = f"host-bound: {decided}the device {_more(device, bound.step_s)}" if device is not None else "host-bound"
        return f"{said}; {_cutting(bound)}"
    if bound.bound == BoundKind.BALANCED:
        band = fitting.BALANCE_BAND
        if bound.difference_ci is None:
            return f"balanced: host and device take about as long (within {units.percent(band)} of the step); {_cutting(bound)}"
        decided = f"{fitting.exceeds(bound.difference_ci)}, within ±{units.percent(band)}"
        return f"balanced: host and device take about as long: {decided}; {_cutting(bound)}"
    said = "inconclusive: the intervals do not tell host from device"
    low, high = bound.difference_ci or (0.0, 0.0)
    if low > fitting.DECISION_MARGIN or high < -fitting.DECISION_MARGIN:  # decided, but its side has no knee (the note)
        said = "inconclusive: the side the slacks point to is not shown to set the pace"
    return said + (f" ({bound.note})" if bound.note else "")


def _waits(bound: Bound, census: Census | None) -> str | None:
    """With a census of the same variant: what removing its waits could save at most (the device's slack, not the
    time blocked)."""
    if census is None or not census.syncs or bound.bound == BoundKind.SYNCHRONOUS:
        return None
    blocked = units.seconds(census.wait_s)
    device = bound.side(Side.DEVICE)
    if device is None:
        return f"removing the waits saves at most the device's slack, not measured here; the {blocked} blocked per step is not a saving"
    return (
        f"removing the waits would save at most the device's slack, {slack(device)} per step; the {blocked} blocked per step "
        "is not a saving (the work waited for still runs)"
    )


def verified(found: Verified, bound: Bound | None = None) -> str:
    """The ceiling checked, in words: 'jit: 1.2 ms [1.1–1.3] a step, reached 85% [70%–98%] of the ceiling'; a refused
    capture: 'jit: not timed: <why>'. Where `bound` (the one it checked) has no ceiling to show (its column reads
    '–': verdicts.bound.no_ceiling), the share is said of what it is, the device's slack, and that no ceiling was
    measured: 'reached 270% ±? of the device's slack (no ceiling measured here)', never "of the ceiling"."""
    if found.step_s is None:
        return f"{found.how}: not timed: {found.note or 'no capture'}"
    said = f"{found.how}: {units.with_bounds(found.step_s, found.step_ci_s, 's')} a step"
    if found.reached is not None:
        of = NO_CEILING_SHARE if bound is not None and fitting.no_ceiling(bound) else "of the ceiling"
        said += f", reached {_reached(found.reached, found.reached_ci, of)}"
    return f"{said}; {found.note}" if found.note else said


def _reached(share: float, interval: tuple[float, float] | None, of: str) -> str:
    """The share of the ceiling a capture reached, with its interval: '80% [74%–87%] of the ceiling'; where the
    interval holds 0 (the paired saving it is read from may be none, or a loss) no share is shown reached: '~0 of the
    ceiling [from −10% to 68%; median 30%]', '~0 … [≤ 68%; median 30%]' (verdicts.verified words the saving in time
    beside it so), never "reached 30% [−10%–68%]"."""
    if interval is None:
        return f"{units.percent(share)} ±? {of}"
    low, high = interval
    if not low <= 0 <= high or low == high == 0:
        return f"{units.percent(share)} [{units.percent(low)}–{units.percent(high)}] {of}"
    median = "" if share == 0 else f"; median {units.percent(share)}"
    ends = f"≤ {units.percent(high)}" if low == 0 else f"from {units.percent(low)} to {units.percent(high)}"
    return f"{units.NOT_DISTINGUISHABLE} {of} [{ends}{median}]"


def step_apart(bound: Bound, timed: VariantResult | None) -> str | None:
    """Where the perturbation rounds' unperturbed step (the one the slacks' shares, the levels and the ceiling are
    of) lies outside the 95% interval of the timed rounds' step (their done time over the steps a sample ran), what
    that means, in one line; None where it lies within, or either is not known. A trial's table said "step 934 µs
    in its perturbation rounds" beside a timed step_s_k0 of 542 µs [531–563]: the perturbation rounds ran at other
    moments, beside their own delays, and a neighbour or the delays' own cost can slow them."""
    if timed is None or bound.bound == BoundKind.SYNCHRONOUS or bound.rounds <= 0:
        return None
    low, high = timed.done_s.ci_low, timed.done_s.ci_high
    if low is None or high is None:
        return None
    per = max(bound.steps_per_call, 1)
    if low / per <= bound.step_s <= high / per:
        return None
    said = units.with_bounds(timed.done_s.median / per, (low / per, high / per), "s")
    return (
        f"its perturbation rounds' step, {units.seconds(bound.step_s)}, lies outside the timed rounds' {said}: the "
        "slacks' shares, the levels and the ceiling are of the perturbation rounds' step, which differed from the "
        "timed one (e.g. a neighbour, or the delays' own cost)"
    )


def _summary(bound: Bound, census: Census | None, timed: VariantResult | None = None) -> list[tuple[str, str]]:
    """A variant's lines under the table: (who, words), who its name (with the step its slacks are shares of, first)."""
    # the unperturbed step of the perturbation rounds, which the slacks are shares of: not the timed rounds' figure
    # (the same step, sampled at other moments), so it says where it comes from, and where the two differ beyond the
    # timed step's interval, that they do (`step_apart`)
    measured = bound.bound != BoundKind.SYNCHRONOUS and bound.rounds > 0
    step = f" (step {units.seconds(bound.step_s)} in its perturbation rounds)" if measured else ""
    lines = [(f"{bound.variant}{step}", reading(bound))]
    apart = step_apart(bound, timed)
    if apart is not None:
        lines.append((bound.variant, apart))
    device = bound.side(Side.DEVICE)
    if bound.bound == BoundKind.INCONCLUSIVE and bound.shares_cores and device is not None:  # the others' reading says it
        lines.append((bound.variant, fitting.NO_SHARED_CEILING))
    elif bound.bound == BoundKind.INCONCLUSIVE and fitting.floor_unmeasured(bound):  # the others' reading says it
        lines.append((bound.variant, fitting.NO_FLOOR))
    elif bound.bound == BoundKind.INCONCLUSIVE and unbounded(bound) and device is not None:
        lines.append((bound.variant, f"{NO_CEILING} ({slack(device)} of the {units.seconds(bound.step_s)} step)"))
    for fit in bound.sides:
        said = fitting.cost_reading(fit, bound.step_s)
        if said == fitting.NOT_PAST:
            lines.append((bound.variant, f"the cost past the {fit.side}'s slack: {said}"))
        elif said is not None:
            lines.append(
                (bound.variant, f"past the {fit.side}'s slack each second of delay costs the step {cost(fit, bound.step_s)}: {said}")
            )
    waits = _waits(bound, census)
    if waits is not None:
        lines.append((bound.variant, waits))
    if bound.verified is not None:
        lines.append((bound.variant, verified(bound.verified, bound)))
    return lines


def _said_once(bounds: Mapping[str, Bound], lines: Sequence[tuple[str, str]]) -> list[str]:
    """Each line's words said once, where several variants' are the same (a synchronous step's three `sync_every`
    variants each said "synchronous: …" and a refused compile's whole sentence, three times over): named by who they
    are said of ("every variant" where that is each variant's plain name), at the place the first of them said it."""
    said: dict[str, list[str]] = {}
    for who, words in lines:
        said.setdefault(words, []).append(who)
    return [
        f"{'every variant' if len(bounds) > 1 and set(who) == set(bounds) else ', '.join(dict.fromkeys(who))}: {words}"
        for words, who in said.items()
    ]


def bound_view(
    who: str,
    bounds: Mapping[str, Bound],
    order: Sequence[str] = (),
    censuses: Mapping[str, Census] | None = None,
    timed: Mapping[str, VariantResult] | None = None,
) -> BoundView | None:
    """What bounds one case's step (`who`: its label), its variants in `order` (the timings table's; any others after),
    or None where nothing was measured (no --bound). `censuses`: the same result's census (`--syncs`), for what
    removing its waits could save; `timed`: its variants' timed figures, whose step the bound's is compared with
    (`step_apart`)."""
    if not bounds:
        return None
    bounds = {name: bounds[name] for name in (*order, *bounds) if name in bounds}
    censuses, timed = censuses or {}, timed or {}
    rows = [row for bound in bounds.values() if bound.bound != BoundKind.SYNCHRONOUS for row in _rows(bound)]
    told = [line for bound in bounds.values() for line in _summary(bound, censuses.get(bound.variant), timed.get(bound.variant))]
    summary = _said_once(bounds, told)
    noted: dict[str, list[str]] = {}  # a note, and the variants it is said of (an inconclusive one's is in its reading)
    for bound in bounds.values():
        if bound.note and bound.bound not in (BoundKind.SYNCHRONOUS, BoundKind.INCONCLUSIVE):
            noted.setdefault(bound.note, []).append(bound.variant)
    notes = tuple(note if len(names) == len(bounds) else f"{', '.join(names)}: {note}" for note, names in noted.items())
    # one variant: its name is in the lines under the table, and an 80-column terminal needs the room
    kept = slice(1, None) if len(bounds) == 1 else slice(None)
    return BoundView(
        title=f"{TITLE} ({who})",
        headers=HEADERS[kept],
        figures=FIGURES[kept],
        no_wrap=NO_WRAP[kept],
        rows=tuple(row[kept] for row in rows),
        summary=tuple(summary),
        notes=notes,
    )
