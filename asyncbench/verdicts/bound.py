"""What bounds a step, from its perturbation rounds: each side's slack and cost past it, with intervals, and the
reading (`run --bound`; the observations and the types are results.bound's).

The fit per side: T(d) = a_r + b·max(0, d − s) over the injected lengths d (each delay's measured length, not the
level asked for), rounds as the paired unit: each round has its own intercept a_r, fitted from that round's
unperturbed sample and its samples below the slack, so drift between rounds cancels. The slack s is found by
profile least squares on a fine grid over [0, the largest delay injected]; for each s, b has a closed form
(clamped at 0: a delay cannot make a step faster). Intervals come from a bootstrap over whole rounds (a round is
resampled with all its samples, both sides together, so the sides stay paired), percentile intervals at the
confidence asked for, with a fixed seed so that a file's figures recompute the same.

The arithmetic is done once per round: for each round and each grid point the within-round sums Σ(x−x̄)²,
Σ(x−x̄)(y−ȳ), Σ(y−ȳ)² are additive over rounds, so a resample (a count per round) is one matrix product, and every
resample's whole profile is found at once (fit of 30 rounds × 11 samples: 40–50 ms on a busy 2-core machine).

The reading, from the paired difference (s_device − s_host) / step on each resample (H − D over the step in the
model of an overlapped step, where at least one slack is 0), the step being the unperturbed median the table's
shares are of (each resample's own step in its place had a note say -131% beside a table whose slacks were within
108%): HOST where its interval lies wholly above DECISION_MARGIN, DEVICE wholly below −DECISION_MARGIN, BALANCED
where it lies within ±BALANCE_BAND and neither slack's interval reaches past BALANCE_BAND of the step, else
INCONCLUSIVE; a side named so whose slack of 0 has no knee (bound_readings.no_knee) is not, nor one whose own slack
interval lies wholly above BALANCE_BAND (it had room: bound_rule.has_room), INCONCLUSIVE then. The
difference's interval is kept on the bound (Bound.difference_ci: never stored, a reader's refit makes it again).
With one side measured (no device delay on this backend), only that side's own slack can decide: a
side whose slack lies wholly above DECISION_MARGIN of the step does not set the pace, so the other does (HOST from
the device's slack, DEVICE from the host's; the note says that it rests on one side, and that a step whose waits
leave that side idle reads the same); a side without slack may be the bound or balanced with the other, which one
side cannot tell: INCONCLUSIVE, said "no slack worth naming" only where its slack interval lies within BALANCE_BAND
of the step, else that the interval does not decide (results.bound_rule.one_side).
"""

from __future__ import annotations

import statistics
from typing import TYPE_CHECKING, Any, Sequence

from asyncbench.results import bound_rule, stats, units
from asyncbench.results.bound import SIDES, Bound, BoundKind, Perturbed, Side, SideBound, as_stored
from asyncbench.verdicts import bound_jumps as jumps
from asyncbench.verdicts.bound_readings import NO_FLOOR as NO_FLOOR
from asyncbench.verdicts.bound_readings import NO_KNEE as NO_KNEE
from asyncbench.verdicts.bound_readings import NO_SHARED_CEILING as NO_SHARED_CEILING
from asyncbench.verdicts.bound_readings import NOT_PAST as NOT_PAST
from asyncbench.verdicts.bound_readings import ONE_BOTTLENECK as ONE_BOTTLENECK
from asyncbench.verdicts.bound_readings import TOP_OF_LEVELS as TOP_OF_LEVELS
from asyncbench.verdicts.bound_readings import at_least_top as at_least_top
from asyncbench.verdicts.bound_readings import cost_reading as cost_reading
from asyncbench.verdicts.bound_readings import exceeds as exceeds
from asyncbench.verdicts.bound_readings import floor_unmeasured as floor_unmeasured
from asyncbench.verdicts.bound_readings import held_at_step as held_at_step
from asyncbench.verdicts.bound_readings import knee_missing, undecided
from asyncbench.verdicts.bound_readings import no_ceiling as no_ceiling
from asyncbench.verdicts.bound_readings import no_knee as no_knee
from asyncbench.verdicts.bound_readings import reaches_top as reaches_top
from asyncbench.verdicts.bound_readings import unbounded as unbounded
from asyncbench.verdicts.bound_readings import widest_slack_share as widest_slack_share

if TYPE_CHECKING:
    import numpy

#: bootstrap resamples of the rounds: a 95% interval's ends are then the 25th and 975th of 1000 values, steady to
#: about a tenth of the interval's width between seeds, and the whole fit stays within ~20 ms on 30 rounds
RESAMPLES = 1000
#: the bootstrap's seed: fixed, so the same observations give the same intervals (a file's figures recompute the same)
SEED = 52
#: grid points for the slack over [0, the largest delay injected]: a step of 1/200 of it (0.5% of the step where
#: the levels reach the step's own time), a sixth of the 3% of the step a slack is to be measured within
GRID_POINTS = 201
# The decision rule's thresholds are results.bound_rule's (a results file's reading is held to them on load):
# MIN_ROUNDS, DECISION_MARGIN, BALANCE_BAND
MIN_ROUNDS = bound_rule.MIN_ROUNDS
DECISION_MARGIN = bound_rule.DECISION_MARGIN
BALANCE_BAND = bound_rule.BALANCE_BAND
#: below this a sum of squares (in units of the step squared) is no spread at all: the grid point lies past every
#: sample, and b is undefined there
_FLAT = 1e-12

SYNCHRONOUS_NOTE = "synchronous: the host is the device"
#: the note of a step whose sides both have slack (results.bound_rule.has_room): neither alone sets the pace
BOTH_SLACK = bound_rule.BOTH_SLACK
#: the note of a step with no slack on either side whose device shares the host's cores (Bound.shares_cores): on
#: separate resources that is balance, here it may as well be two sides taking turns on the cores (a 2 ms Python spin
#: beside a 64² product, wholly host work, read so on a busy 2-core machine): which sets the pace is not told
TAKING_TURNS = (
    "no slack on either side, and the device's threads share the host's cores: a delay on either side takes a core "
    "from the other, so balanced sides and sides taking turns on the cores read alike"
)


def fit(
    variant: str,
    observations: Sequence[Perturbed],
    asynchronous: bool,
    confidence: float = stats.CONFIDENCE,
    note: str | None = None,
    steps_per_call: int = 1,
    scale_s: float | None = None,
    shares_cores: bool = False,
    hold_jumps: bool = True,
) -> Bound:
    """The bound of one variant from its perturbation rounds' samples. A synchronous backend (`asynchronous`
    False) gets BoundKind.SYNCHRONOUS and no sides; `note` says what could not be measured (a side without a
    delay on this backend).

    `steps_per_call`: the user's steps one sample runs (the step form's `steps`). One delay of a sample always
    shows, slack or not: the first host spin runs before the device has any of the sample's work, and the last
    device delay lies between the last step and the sample's closing wait. So below the slack the step grows by
    d / steps_per_call, not 0; the fit takes that share off before it looks for the knee (without it, the knee of
    a device-bound step of 20 steps read 5-12% of the step early on the test device), and adds it back to the cost
    past the slack, which is the step's whole slowdown there. With one step a sample every delay shows in full and
    nothing can be told: the engine takes no perturbation rounds then (engine.measuring.ONE_STEP).

    `scale_s`: the step time the rounds' levels were fractions of (measure.perturbation's probe), kept in the bound
    so a threshold check on a share of the step finds its level again (verdicts.bound_checks).

    `shares_cores`: the device's work runs on the host's cores (an asynchronous backend on a CPU). No slack on
    either side then reads INCONCLUSIVE (TAKING_TURNS), not BALANCED, and a ceiling says what it assumes.

    `hold_jumps`: a side's slack is held at the first level below it whose paired slowdown shows the step slowed
    there (verdicts.bound_jumps), as every fit since that rule is; False refits a bound stored before it (its
    `held_at_jump` unset) by the rule it was fitted by."""
    # as the file stores them (to the nanosecond): a reader's refit of the file's observations gives these very figures
    observations = tuple(
        sorted(map(as_stored, observations), key=lambda o: (o.round, "" if o.side is None else str(o.side), o.level_s, o.injected_s))
    )
    rounds = sorted({o.round for o in observations})
    unperturbed = [o.step_s for o in observations if o.side is None]
    step_s = statistics.median(unperturbed) if unperturbed else (statistics.median(o.step_s for o in observations) if observations else 0.0)
    base = Bound(
        variant,
        BoundKind.INCONCLUSIVE,
        step_s,
        len(rounds),
        observations=observations,
        steps_per_call=steps_per_call,
        scale_s=scale_s,
        shares_cores=shares_cores,
    )
    if not asynchronous:
        return _with(base, BoundKind.SYNCHRONOUS, note=note or SYNCHRONOUS_NOTE)
    if not unperturbed or step_s <= 0:
        return _with(base, BoundKind.INCONCLUSIVE, note=_joined(note, "no unperturbed sample: no step to measure a slack from"))
    measured = [side for side in SIDES if any(o.side == side for o in observations)]
    if not measured:
        return _with(base, BoundKind.INCONCLUSIVE, note=_joined(note, "no perturbed sample: nothing injected"))
    return _fitted(base, measured, confidence, note, hold_jumps)


def _with(base: Bound, kind: BoundKind, note: str | None, **changes: Any) -> Bound:
    return Bound(
        variant=base.variant,
        bound=kind,
        step_s=base.step_s,
        rounds=base.rounds,
        sides=changes.get("sides", ()),
        ceiling=changes.get("ceiling"),
        ceiling_ci=changes.get("ceiling_ci"),
        note=note,
        observations=base.observations,
        steps_per_call=base.steps_per_call,
        scale_s=base.scale_s,
        shares_cores=base.shares_cores,
        held_at_jump=changes.get("held_at_jump", False),
        difference_ci=changes.get("difference_ci"),
    )


def _joined(*notes: str | None) -> str | None:
    said = [n for n in notes if n]
    return "; ".join(dict.fromkeys(said)) if said else None


def _fitted(base: Bound, measured: list[Side], confidence: float, note: str | None, hold_jumps: bool = True) -> Bound:
    import numpy

    rounds = sorted({o.round for o in base.observations})
    index = {r: i for i, r in enumerate(rounds)}
    scale = base.step_s  # every figure in units of the step: sums of squares of order 1
    with_interval = len(rounds) >= MIN_ROUNDS
    weights = numpy.ones((1, len(rounds)))
    if with_interval:
        rng = numpy.random.default_rng(SEED)
        draws = rng.integers(0, len(rounds), size=(RESAMPLES, len(rounds)))
        counts = numpy.zeros((RESAMPLES, len(rounds)))
        numpy.add.at(counts, (numpy.arange(RESAMPLES)[:, None], draws), 1.0)
        weights = numpy.vstack([weights, counts])  # row 0: every round once (the estimate); then the resamples
    steps = _steps(base.observations, index, weights) / scale
    tail = stats.expanded_tail(confidence, len(rounds)) if with_interval else 0.0

    def interval(values: numpy.ndarray) -> tuple[float, float] | None:
        if not with_interval:
            return None
        with numpy.errstate(invalid="ignore"):  # an unbounded ceiling (inf) gives a nan end, read as no interval
            low, high = numpy.nanquantile(values[1:], [tail, 1 - tail])
        return (float(low), float(high)) if numpy.isfinite(low) and numpy.isfinite(high) else None

    fits: dict[Side, SideBound] = {}
    slacks: dict[Side, numpy.ndarray] = {}  # per resample: each side's slack (held ones at most their level)
    floors: dict[Side, numpy.ndarray] = {}  # and the least it may be (0 for a held side; else the slack itself)
    held: list[str] = []
    jumped = False
    for side in measured:
        serial = 1.0 / max(base.steps_per_call, 1)
        knee, cost = _profile([o for o in base.observations if o.side in (None, side)], index, weights, scale, serial)
        # a slack lies within the step (the table's, which its share is of): a knee past it (levels beyond the step,
        # and a step that did not slow within them, or one noisy round) is held at the step, and the note says so
        slack = numpy.minimum(knee, 1.0)
        if knee[0] > 1.0:
            past = units.seconds(float(knee[0]) * scale)
            held.append(
                f"the {side}'s slack fit past the step ({past} of {units.seconds(scale)}): held at the step, which a slack cannot exceed"
            )
        # nor past a level below it that already slowed the step (a jump the hinge does not model: bound_jumps): the
        # estimate and every resample held there, so the reading's difference and the ceiling follow. The cost past
        # stays the slope past the knee, where the slope steepens (the note names it): a slope with the knee moved to
        # the held level would blend the flat stretch after the jump into it (0.37 for a cost of 1 past a knee at 70%)
        jump = jumps.first_jump(base, side, float(slack[0]) * scale, confidence) if hold_jumps else None
        floor = slack  # each resample's least slack the evidence allows: the fit's own, or 0 where held (below)
        if jump is not None:
            held.append(jumps.held_said(jump, float(slack[0]) * scale, confidence, base.steps_per_call, base.shares_cores))
            slack = numpy.minimum(slack, jump.injected_s / scale)
            # held, the slack is known to lie below that level and no more: the hinge that placed it is the model the
            # jump broke, so its interval reaches 0 ('~0 [≤ 774 µs]'), never the point [774–774] every resample's knee
            # past the level would give (a precision the data does not have, which also stopped the rounds early)
            floor = numpy.zeros_like(slack)
            jumped = True
        slacks[side], floors[side] = slack, floor
        slack_ci = interval(slack)
        if slack_ci is not None and jump is not None:
            slack_ci = (0.0, slack_ci[1])
        if slack_ci is not None:  # a percentile interval may miss its estimate; a stored one must hold it (results.bound)
            slack_ci = (min(slack_ci[0], float(slack[0])), max(slack_ci[1], float(slack[0])))
        fits[side] = SideBound(
            side=side,
            slack_s=float(slack[0]) * scale,
            slack_ci_s=None if slack_ci is None else (slack_ci[0] * scale, slack_ci[1] * scale),
            cost_past=float(cost[0]),
            cost_past_ci=interval(cost),
            levels_s=_levels([o for o in base.observations if o.side == side]),
        )
    notes: list[str | None] = [note, *held]
    ceiling = ceiling_ci = None
    if Side.DEVICE in slacks:
        floor = steps[:1] - slacks[Side.DEVICE][:1]  # the table's step (row 0), the one its shares are of
        ceilings = numpy.where(floor > 0, steps[:1] / numpy.where(floor > 0, floor, 1.0), numpy.inf)
        if numpy.isfinite(ceilings[0]):
            ceiling = float(ceilings[0])
            # the image of the device's slack interval under the table's step, not a percentile of each resample's
            # own step / (step − slack): that one (≤ 1.00× [1.00–2.82] beside a slack ≤ 577 µs of 955 µs, 2.53×)
            # did not recompute from the numbers printed beside it
            ceiling_ci = bound_rule.ceiling_interval(base.step_s, fits[Side.DEVICE].slack_ci_s)
        # else a floor of 0: no ceiling, which the reading's line says from the numbers (report.bound.unbounded), as
        # it does where only the slack's interval reaches the whole step
    difference = None
    if not with_interval:
        kind = BoundKind.INCONCLUSIVE
        notes.append(f"{base.rounds} perturbation round{'' if base.rounds == 1 else 's'}: too few for an interval (at least {MIN_ROUNDS})")
    else:
        kind, said, difference = _reading(fits, slacks, floors, interval, scale)
        if kind == BoundKind.BALANCED and base.shares_cores:
            kind, said = BoundKind.INCONCLUSIVE, TAKING_TURNS
        notes.append(said)
    sides = tuple(fits[side] for side in measured)
    return _with(
        base,
        kind,
        _joined(*notes),
        sides=sides,
        ceiling=ceiling,
        ceiling_ci=ceiling_ci,
        difference_ci=difference,
        held_at_jump=jumped,
    )


def _reading(
    fits: dict[Side, SideBound], slacks: dict[Side, numpy.ndarray], floors: dict[Side, numpy.ndarray], interval: Any, scale: float
) -> tuple[BoundKind, str | None, tuple[float, float] | None]:
    """The reading from the intervals, what it rests on where that needs saying, and the interval of the paired
    difference (device − host slack) / step it was read from (None with one side measured). `floors`: each side's
    least slack per resample (a side held at a jump may be anywhere from 0 to its level): the difference's low end
    is read with the device at its least and the host at its most, its high end the other way round.

    A side the difference names as the bound (HOST where the device's slack is shown the larger, DEVICE where the
    host's is) is not named so where it has no knee (bound_readings.no_knee: a slack of [0, 0] beside a cost past it
    wholly below 1): its slack of 0 says no delay on it was free, not that it alone sets the pace, which the reading
    would claim (a trial read DEVICE-BOUND, and "cutting host work cannot make it faster", of 40 elementwise ops that
    jit then ran 123× faster). INCONCLUSIVE then, and the note says why in plain words (bound_readings.knee_missing).
    Nor where its own slack interval lies wholly above BALANCE_BAND of the step (results.bound_rule.has_room): it had
    room, so neither side alone sets the pace (a wait in the step does, or the sides sharing cores): INCONCLUSIVE,
    BOTH_SLACK (a trial printed HOST-BOUND beside a host slack of 54% [30–74%] of the step)."""
    shares = {side: fit.slack_ci_s for side, fit in fits.items()}
    if len(fits) == 1:
        [(side, slack_ci)] = shares.items()
        other = Side.DEVICE if side == Side.HOST else Side.HOST
        if slack_ci is not None and slack_ci[0] > DECISION_MARGIN * scale:
            return (
                (BoundKind.DEVICE if side == Side.HOST else BoundKind.HOST),
                (
                    f"from the {side}'s slack alone (no {other} delay measured here): "
                    f"a step whose waits leave the {side} idle reads the same"
                ),
                None,
            )
        # "no slack worth naming" only where the interval shows it (its upper end within the band)
        return BoundKind.INCONCLUSIVE, bound_rule.one_side(side, slack_ci, scale), None
    # a share of the step the table's slacks are shares of (the unperturbed median), not of each resample's own
    lowest = interval(floors[Side.DEVICE] - slacks[Side.HOST])
    highest = interval(slacks[Side.DEVICE] - floors[Side.HOST])
    if lowest is None or highest is None:
        return BoundKind.INCONCLUSIVE, "no interval for the difference of the sides", None
    difference = (lowest[0], highest[1])
    low, high = difference
    idle = all(bound_rule.has_room(ci, scale) for ci in shares.values())
    waits = BOTH_SLACK if idle else None
    named = Side.HOST if low > DECISION_MARGIN else Side.DEVICE if high < -DECISION_MARGIN else None
    if named is not None and no_knee(fits[named], scale):
        return BoundKind.INCONCLUSIVE, knee_missing(named, difference), difference
    if named is not None and bound_rule.has_room(shares[named], scale):
        # the side with less slack has room itself: some delay on it was free, so it does not set the pace either
        return BoundKind.INCONCLUSIVE, BOTH_SLACK, difference
    if named is not None:
        return (BoundKind.HOST if named == Side.HOST else BoundKind.DEVICE), None, difference
    small = all(ci is not None and ci[1] <= BALANCE_BAND * scale for ci in shares.values())
    if low >= -BALANCE_BAND and high <= BALANCE_BAND and small:
        return BoundKind.BALANCED, None, difference
    return BoundKind.INCONCLUSIVE, waits or undecided(difference, shares, scale), difference


def _steps(observations: Sequence[Perturbed], index: dict[int, int], weights: numpy.ndarray) -> numpy.ndarray:
    """The unperturbed step per resample: the weighted median of the rounds' unperturbed samples (a round with
    several, their mean; the estimate's row, the plain median of all of them)."""
    import numpy

    per_round: dict[int, list[float]] = {}
    for o in observations:
        if o.side is None:
            per_round.setdefault(index[o.round], []).append(o.step_s)
    columns = sorted(per_round, key=lambda i: statistics.fmean(per_round[i]))
    values = numpy.array([statistics.fmean(per_round[i]) for i in columns])
    cumulative = numpy.cumsum(weights[:, columns], axis=1)
    total = cumulative[:, -1:]
    at = numpy.argmax(cumulative >= total / 2, axis=1)
    medians = numpy.where(total[:, 0] > 0, values[at], numpy.nan)
    medians[0] = statistics.median(o.step_s for o in observations if o.side is None)
    return medians


def _profile(
    observations: Sequence[Perturbed], index: dict[int, int], weights: numpy.ndarray, scale: float, serial: float = 0.0
) -> tuple[numpy.ndarray, numpy.ndarray]:
    """The slack and the cost past it (in units of the step) for each row of `weights`: the profile least-squares
    hinge with a per-round intercept, its grid the same for every resample, after the share of each delay that
    always shows (`serial`, fit's steps_per_call) is taken off; the cost past the slack has it added back."""
    import numpy

    d = numpy.array([o.injected_s for o in observations]) / scale
    y = numpy.array([o.step_s for o in observations]) / scale - serial * d
    rounds = numpy.array([index[o.round] for o in observations])
    grid = numpy.linspace(0.0, max(float(d.max()), 0.0), GRID_POINTS)
    x = numpy.maximum(d[None, :] - grid[:, None], 0.0)  # grid × samples
    member = numpy.zeros((len(observations), weights.shape[1]))
    member[numpy.arange(len(observations)), rounds] = 1.0
    n = member.sum(axis=0)
    seen = n > 0
    n_safe = numpy.where(seen, n, 1.0)
    # numpy.einsum, not @: BLAS's threads, on a machine busy with the run, took 20× longer on these small products
    sx, sxx, sxy = (numpy.einsum("gn,nr->gr", values, member) for values in (x, x * x, x * y))  # grid × rounds
    sy = y @ member
    cxx = numpy.where(seen, sxx - sx * sx / n_safe, 0.0)
    cxy = numpy.where(seen, sxy - sx * sy / n_safe, 0.0)
    # resamples × grid; b ≥ 0: xy clamped at 0
    xx, xy = numpy.einsum("kr,gr->kg", weights, cxx), numpy.maximum(numpy.einsum("kr,gr->kg", weights, cxy), 0.0)
    xx = numpy.maximum(xx, _FLAT)
    # the fall of the residual sum of squares with the hinge at each grid point (Σ(y−ȳ)² less it is the residual):
    # the slack is where it falls most; among equals the largest (a delay that never slows the step: the top)
    gain = xy * xy / xx
    best = GRID_POINTS - 1 - numpy.argmax(gain[:, ::-1], axis=1)
    rows = numpy.arange(weights.shape[0])
    b = xy[rows, best] / xx[rows, best]
    # between grid points: the vertex of the parabola through the best point and its neighbours (none at the ends)
    inner = (best > 0) & (best < GRID_POINTS - 1)
    left, right = numpy.maximum(best - 1, 0), numpy.minimum(best + 1, GRID_POINTS - 1)
    g0, gl, gr = gain[rows, best], gain[rows, left], gain[rows, right]
    curve = gl - 2 * g0 + gr
    shift = numpy.where(inner & (curve < 0), 0.5 * (gl - gr) / numpy.where(curve < 0, curve, -1.0), 0.0)
    return grid[best] + numpy.clip(shift, -0.5, 0.5) * (grid[1] - grid[0]), b + serial


def _levels(observations: Sequence[Perturbed]) -> tuple[float, ...]:
    """The injected lengths per level asked for: each level's median over its samples, smallest first."""
    by_level: dict[float, list[float]] = {}
    for o in observations:
        by_level.setdefault(o.level_s, []).append(o.injected_s)
    return tuple(sorted(statistics.median(values) for values in by_level.values()))
