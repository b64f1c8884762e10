"""Perturbation rounds (`run --bound`, issue 52): the step timed with a delay injected before each of its calls.

A perturbation round is an extra round (measure.extra_rounds: interleaved with the timed rounds on SCHEDULE, never
inside a timed sample). In each round, per variant, one sample runs unperturbed and one per (side, level): on the
host side a busy spin of the level before each step call (its real length recorded: preemption stretches a spin),
on the device side a delay of the level queued where the step's work runs, before each step call, the host not
waiting (Backend.device_delay; its length measured in place each sample where the backend has events, else alone
each round). The round's samples run in a seeded random order, so that a position in the round (caches, clocks left
by the sample before) shifts no level every round.

Levels are fractions of the variant's own step time (LEVELS × the median of the PROBE_SAMPLES fastest untimed,
unperturbed samples taken before its first round, after the timed rounds' warm-up, probed until those agree:
Taker._probe): a side's slack lies in [0, step], so the levels span it and one goes past. They are fixed for the
case: every round has the same levels (and, after a look, the knee's), so a level's samples pair across rounds (its
median over rounds is one figure), and a slow probe shifts the levels, never the fit, which reads the delays'
measured lengths.

How many rounds: the first BOUND_ROUNDS (one after each of the first timed rounds), then, with a look to judge by (the
engine's `spread`: the rounds so far fitted by verdicts.bound), one after each timed round and after the last until
every side's slack interval is within PRECISION_SHARE of the step, or the rounds have spent their budget (the note
then says how wide they still were). Each look also puts two more levels at each side's knee estimate (KNEE_WIDTH
either side, on KNEE_GRID), in every round from then on: the fit pairs each round by its own intercept, so rounds
with more levels pair as well as any. A look refits every round (some 40 ms on 30 rounds): it comes only once the
rounds since the last took 1 / REFIT_SHARE times as long.

A threshold check on the slack (`slack_s[host] >= 1ms`, `slack_share[host] >= 20%`, `ceiling[host] <= 1.10`) adds its
own level (a results.bound.Injection, from verdicts.bound_checks through the case's CaseOptions): in every round from
the first, on its side, beside the sweep's, so that each round pairs a sample at exactly that level with its own
unperturbed one (the check is judged from that paired difference). A level the sweep injects already is not injected
twice; one past MAX_INJECTED_SHARE of the step is not injected at all (the check then says it was not measured).

Each sample is timed as a timed sample is (timing.take_sample: its prelude, the host clock, the step, the case's
sync) and becomes a results.bound.Perturbed: its step time is the done time over the steps one call runs. What the
observations say (each side's slack and the cost past it) is verdicts.bound's.
"""

from __future__ import annotations

import random
import statistics
import time
from dataclasses import dataclass
from typing import Any, Callable, Mapping, Sequence

from asyncbench.backends.device_delays import unread_said
from asyncbench.backends.handles import DeviceDelay
from asyncbench.measure.extra_rounds import Preludes, Schedule, Variants
from asyncbench.measure.host_spin import HostSpin
from asyncbench.measure.timing import take_sample
from asyncbench.results.bound import MAX_INJECTED_SHARE, Injection, Perturbed, Side, same_level

#: the delays per step call, as fractions of the step's own time: four within [0, step], where a side's slack (the
#: knee) lies, so that the fit has points on both sides of any knee but one right at a side's edge; one past the step
#: (1.5), where every side is past its slack, for the cost past it
LEVELS = (0.25, 0.5, 0.75, 1.0, 1.5)
# Ten rounds: a bootstrap over rounds (verdicts.bound) needs some ten units for its percentile interval to mean
# anything, and the order statistics of a median's 95% interval need six. A round runs 1 + 2·len(LEVELS) = 11 samples
# per variant, each longer by its delay (host delays add up to sum(LEVELS) = 4 step times, device ones at most as
# much): ten rounds cost some 150-190 samples, about what a case that samples for its 10 s max_time_s takes, and
# with a worker's start, set-up, compile and memory run a plain run of a case is rarely under its sampling time, so
# `--bound` stays within the 10× a plain run. One round after each of the first ten timed rounds (a case
# stopped at its six min_samples is topped up after its last), then one per BOUND_EVERY timed rounds: a long case
# gets narrower intervals at about the share of its time ten rounds cost a short one.
BOUND_ROUNDS = 10
BOUND_EVERY = 10
SCHEDULE = Schedule(first=BOUND_ROUNDS, every=BOUND_EVERY, least=BOUND_ROUNDS)
# A case's perturbation rounds stop once they took this many times its max_time_s (50 s by default): a round costs some
# 15-19 samples per variant, so a step of seconds would take minutes a round and pass the case's timeout_s (300 s)
# before its ten rounds. Capped, `--bound` adds at most some 5× the sampling time of a case that samples for its
# max_time_s, within the 10× a plain run; the rounds it cut are said in the bound's note.
BOUND_TIME_FACTOR = 5.0
#: the stop rule past the first BOUND_ROUNDS (with a `spread` to judge by, as the engine gives): rounds go on, one after
#: each timed round and then after the last, until every measured side's slack interval has a half-width within this
#: share of the step (the issue's "stop when the slack's interval is within 5% of the step"), or the budget is spent.
#: Read when a round is due, not bound once: a caller may change it (inf: stop after the first rounds)
PRECISION_SHARE = 0.05
#: the most perturbation rounds a case takes, whatever its budget: a step of microseconds takes thousands of rounds
#: within its budget, each stored with all its samples (a results file of megabytes, a fit of seconds: a 3-step JAX
#: step ran 442 s), and past a hundred rounds an interval narrows only by the square root of their number
MAX_ROUNDS = 100
#: past the first BOUND_ROUNDS, the stop rule's rounds go on only while all the rounds together have taken under this
#: many times what the rest of the case took since they were set up (its warm-up, timed rounds, census): the issue's
#: "within 10× a plain run", with the worker's start, imports and set-up (not counted here) as the margin. A short
#: case (its noise met in a dozen samples) then stops after its first rounds with wider intervals, where the budget
#: alone let its rounds run to 15-19× a plain run (benchmarks/bound_validity.py); a case that samples for its
#: max_time_s keeps the budget's rounds
COST_SHARE = 8.0
#: the fit that judges the stop rule takes some 40 ms (30 rounds): it is redone only once the rounds since the last
#: one took 1 / REFIT_SHARE times as long as it did, so that judging costs at most ~this share of the rounds' time
#: (a round of a 1 ms step takes ~20 ms: a refit every few rounds; of a 50 ms step: after every round). Its time
#: counts against the rounds' budget.
REFIT_SHARE = 0.1
#: the order of each round's samples is random, the same from run to run
ORDER_SEED = 52
#: the untimed samples whose median sets a variant's levels: three, so that one preempted sample does not
PROBE_SAMPLES = 3
#: the PROBE_SAMPLES fastest probes agree when the slowest is within this factor of the fastest: past a stall that
#: spans probes (MXNet on a loaded CPU: 4.8 s, 1.1 s, then 47 ms for a 40 ms sample), on a loaded machine within ~30%
PROBE_AGREEMENT = 1.5
#: the most probes a variant takes while its fastest do not agree (then their median, whatever their spread)
MAX_PROBES = 3 * PROBE_SAMPLES

#: a variant rebuilt with a callable run before each of the user's step calls (Prepared.perturbable)
Perturbable = Callable[[Callable[[], None]], Mapping[str, Callable[[], Any]]]
#: levels that adapt to the knee: at each look of the stop rule, each side gets two more levels, its slack's estimate
#: ± KNEE_WIDTH of the step, in the rounds from then on (the fixed LEVELS bracket a knee only to within a quarter
#: step: on the test device a knee between two of them kept its interval at ±7-30% of the step after 200 rounds).
#: 0.15: outside the ±5% the rounds stop at, so the two lie on either side of the knee while its estimate is that close
KNEE_WIDTH = 0.15
#: the knee's levels are put on a grid of this share of the step: a knee estimate that moves a little from look to look
#: keeps its levels (they pair across rounds), and a side is never injected at more than some 30 + len(LEVELS) levels
#: (results.bound.MAX_LEVELS)
KNEE_GRID = 0.05


@dataclass(frozen=True)
class Look:
    """What the stop rule's look at the rounds so far found (the engine's fit: measure may not import it)."""

    #: the widest half-width of every variant's and side's slack interval, as a share of its step (inf: a side has none)
    widest: float
    #: each (variant, side)'s slack estimate (s): where its knee's levels go
    slack_s: Mapping[tuple[str, Side], float]


#: a look at the rounds so far: every variant's samples fitted (engine.measuring makes it from verdicts.bound.fit)
Spread = Callable[[Mapping[str, Sequence[Perturbed]]], Look]


def _nothing() -> None:
    return None


@dataclass(frozen=True)
class _Planned:
    """One sample of a round: a variant, and where and how much to delay (side None: unperturbed)."""

    variant: str
    side: Side | None
    #: the delay asked for before each step call (s)
    level_s: float


class Taker:
    """The perturbation rounds of one case: `round` per round (an ExtraKind), `observations` at the end.

    `perturbable`: the case's Prepared.perturbable; `delay`: the backend's device delay (None: host side only);
    `steps_per_call`: the user's steps one call of a variant runs (what a sample's done time is divided by)."""

    def __init__(
        self,
        perturbable: Perturbable,
        delay: DeviceDelay | None,
        steps_per_call: int = 1,
        levels: Sequence[float] = LEVELS,
        clock: Callable[[], float] = time.perf_counter,
        seed: int = ORDER_SEED,
        budget_s: float | None = None,
        schedule: Schedule = SCHEDULE,
        spread: Spread | None = None,
        injections: Sequence[Injection] = (),
        cost_share: float | None = None,
    ):
        """`budget_s`: the time after which no more round is taken (None: no limit; the engine gives
        BOUND_TIME_FACTOR × the case's max_time_s). `schedule`: when rounds come (the Taker is its own pace for
        ExtraRounds: `due`, `owed`); with a `spread` its first rounds, then the stop rule (PRECISION_SHARE); without
        one, the schedule as it is. `injections`: the levels the case's threshold checks are judged at, in every
        round beside the sweep's. `cost_share` (None: no such limit; the engine gives COST_SHARE for `run`): past
        the first rounds, no more once the rounds have taken this many times the rest of the case's time since the
        Taker was made."""
        self.perturbable, self.delay, self.steps_per_call = perturbable, delay, steps_per_call
        self.budget_s, self.spent_s, self.skipped = budget_s, 0.0, 0
        self.schedule, self.spread = schedule, spread
        #: the stop rule's last look: the rounds it saw, the widest half-width share it found, what the fit took
        self.looked_at, self.widest, self.fit_s = -1, float("inf"), 0.0
        self._since_look_s = 0.0  # the rounds' time since the last look
        self._counted_owed = False
        #: each (variant, side)'s levels at its knee, as fractions of the step, from the latest look (none before it)
        self.knee_levels: dict[tuple[str, Side], tuple[float, ...]] = {}
        self.levels, self.clock = tuple(levels), clock
        self._shuffle = random.Random(seed).shuffle
        self.samples: dict[str, list[Perturbed]] = {}
        self._rounds: dict[str, int] = {}
        self.sides = (Side.HOST, Side.DEVICE) if delay is not None else (Side.HOST,)
        self.scale_s: dict[str, float] = {}  # each variant's step time the levels are fractions of (PROBE_SAMPLES)
        self.injections = tuple(injections)
        self.cost_share, self.created = cost_share, clock()
        #: each variant's device samples left out because their delay's length could not be read (`unread_said`)
        self.unread: dict[str, int] = {}

    @property
    def taken(self) -> int:
        """Perturbation rounds taken so far (those of the variant with fewest)."""
        return min(self._rounds.values(), default=0)

    def round(
        self, variants: Variants, sync: Callable[[], None], order: Sequence[str] | None = None, preludes: Preludes | None = None
    ) -> None:
        """One perturbation round: each variant's unperturbed sample and one per (side, level), in a random order.
        `variants` are the timed ones, by name: the samples run the perturbable ones of the same names."""
        if self.budget_s is not None and self.spent_s >= self.budget_s:
            self.skipped += 1  # out of time: the rounds taken are what the fit gets
            return
        started = self.clock()
        names = list(order or variants)
        preludes = preludes or {}
        for name in names:
            if name not in self.scale_s:  # the levels' scale, before the variant's first round
                self.scale_s[name] = self._probe(name, sync, preludes.get(name))
        planned = [_Planned(name, None, 0.0) for name in names]
        planned += [_Planned(name, side, f * self.scale_s[name]) for name in names for side in self.sides for f in self.levels]
        planned += [
            _Planned(name, side, f * self.scale_s[name]) for (name, side), knee in self.knee_levels.items() if name in names for f in knee
        ]
        planned += self._checked(names, planned)
        self._shuffle(planned)
        for plan in planned:
            self._take(plan, sync, preludes.get(plan.variant))
        for name in names:
            self._rounds[name] = self._rounds.get(name, 0) + 1
        took = self.clock() - started
        self.spent_s += took
        self._since_look_s += took

    def _probe(self, name: str, sync: Callable[[], None], prelude: Callable[[], None] | None) -> float:
        """The step time `name`'s levels are fractions of: the median of its PROBE_SAMPLES fastest unperturbed samples,
        probed until those agree (PROBE_AGREEMENT) or MAX_PROBES are taken. The fastest, as a stall only lengthens a
        sample: the first three's median was a stall's where it spanned two (MXNet: levels 11-67× the 2 ms step)."""
        probes: list[float] = []
        while True:
            probes.append(self._sample(name, _nothing, sync, prelude))
            fastest = sorted(probes)[:PROBE_SAMPLES]
            if len(fastest) < PROBE_SAMPLES:
                continue
            if fastest[-1] <= PROBE_AGREEMENT * fastest[0] or len(probes) >= MAX_PROBES:
                return statistics.median(fastest)

    def _checked(self, names: Sequence[str], planned: Sequence[_Planned]) -> list[_Planned]:
        """The samples at the checks' own levels in this round: one per variant, side and level that the sweep's
        `planned` ones do not inject already, within MAX_INJECTED_SHARE of the step, on a side this backend delays."""
        added: list[_Planned] = []
        for name in names:
            scale = self.scale_s[name]
            for injection in self.injections:
                if injection.variant not in (None, name) or injection.side not in self.sides:
                    continue
                level_s = injection.seconds(scale)
                if not 0 < level_s <= MAX_INJECTED_SHARE * scale:
                    continue
                there = [p for p in (*planned, *added) if p.variant == name and p.side == injection.side]
                if not any(same_level(p.level_s, level_s) for p in there):
                    added.append(_Planned(name, injection.side, level_s))
        return added

    def out_of_time(self) -> bool:
        """Whether the rounds (and the stop rule's fits) have spent their budget."""
        return self.budget_s is not None and self.spent_s >= self.budget_s

    def over_cost(self) -> bool:
        """Whether the rounds have taken `cost_share` times the rest of the case's time since the Taker was made (never
        without a `cost_share`): the stop rule asks for no more rounds then."""
        if self.cost_share is None:
            return False
        rest_s = self.clock() - self.created - self.spent_s
        return self.spent_s >= self.cost_share * max(rest_s, 0.0)

    def precise(self) -> bool:
        """Whether the stop rule holds: every side's slack interval within PRECISION_SHARE of the step, at the last
        look; a new look (a fit) once the rounds since the last took 1 / REFIT_SHARE times its cost (the first
        after the schedule's first rounds). Without a `spread`, never."""
        if self.spread is None or self.taken < self.schedule.first:
            return False
        if self.looked_at != self.taken and self._since_look_s * REFIT_SHARE >= self.fit_s:
            started = self.clock()
            look = self.spread(self.observations())
            self.widest = look.widest
            self._adapt(look)
            self.fit_s = self.clock() - started
            self.spent_s += self.fit_s
            self.looked_at, self._since_look_s = self.taken, 0.0
        return self.widest <= PRECISION_SHARE

    def _adapt(self, look: Look) -> None:
        """Each side's knee levels from now on: its slack estimate ± KNEE_WIDTH of the step, on KNEE_GRID, within
        (0, the largest fixed level], leaving out the fixed levels (their samples are there already)."""
        top = max(self.levels)
        for (name, side), slack_s in look.slack_s.items():
            scale = self.scale_s.get(name)
            if not scale or side not in self.sides:
                continue
            knee = slack_s / scale
            found = {round(round((knee + sign * KNEE_WIDTH) / KNEE_GRID) * KNEE_GRID, 6) for sign in (-1, 1)}
            self.knee_levels[(name, side)] = tuple(
                sorted(f for f in found if KNEE_GRID <= f <= top and all(abs(f - level) > 1e-6 for level in self.levels))
            )

    def due(self, timed_rounds: int, taken: int) -> bool:
        """Whether a round follows timed round `timed_rounds` (ExtraRounds' pace): the schedule's first rounds
        (a round past the budget skips itself), then with a `spread` one after each timed round until the stop rule
        holds or the budget is spent; without one, the schedule's."""
        if self.spread is None or taken < self.schedule.first:
            return self.schedule.due(timed_rounds, taken)
        return self._goes_on(taken)

    def _goes_on(self, taken: int) -> bool:
        """Past the first rounds: whether one more round is wanted (budget and MAX_ROUNDS left, the stop rule not
        met). A look's fit counts against the budget, so the budget is read again after it: a round that would find
        it spent is never asked for (it would be skipped, and said as cut)."""
        if self.out_of_time() or self.over_cost() or taken >= MAX_ROUNDS:
            return False
        return not self.precise() and not self.out_of_time() and not self.over_cost()

    def owed(self, taken: int) -> int:
        """The rounds still owed after the last timed round (ExtraRounds asks again after each): the schedule's
        first rounds, then with a `spread` one more while the stop rule does not hold and the budget lasts. None
        once the budget is spent (the rounds it cut are said in the note)."""
        if self.out_of_time():
            if not self._counted_owed:  # asked again after each owed round of another kind: counted once
                self.skipped += self.schedule.owed(taken)
                self._counted_owed = True
            return 0
        first = self.schedule.owed(taken)
        if first or self.spread is None:
            return first
        return 1 if self._goes_on(taken) else 0

    def cut_short(self, widest: float | None = None) -> str | None:
        """What a variant's bound note says when rounds were skipped for time, or the stop rule did not hold by the
        budget (None: neither). `widest`: that variant's own widest slack half-width over its step in the final fit
        (None: the stop rule's last look, over every variant): a variant whose own intervals met the rule gets no
        such note, and the width said is the one its table shows, not a look's from rounds before."""
        if not self.skipped:
            capped = self.taken >= MAX_ROUNDS
            costly = not capped and not self.out_of_time() and self.over_cost()
            found = self.widest if widest is None else widest
            if self.spread is None or not (self.out_of_time() or capped or costly) or found <= PRECISION_SHARE:
                return None
            if found == float("inf"):
                widest_said = "no interval"
            elif widest is None:
                widest_said = f"±{found:.1%} of the step at round {self.looked_at}"
            else:
                widest_said = f"±{found:.1%} of the step after {self.taken} rounds"
            if capped:
                stopped = f"at their most, {MAX_ROUNDS} rounds"
            elif costly:
                stopped = (
                    f"after {self.taken}, at {self.cost_share:g}× the rest of the case's time (a longer max_time_s or more "
                    f"min_samples gives them more)"
                )
            else:
                stopped = f"at their budget of {self.budget_s:.3g} s ({BOUND_TIME_FACTOR:g}× max_time_s) after {self.taken}"
            return (
                f"perturbation rounds stopped {stopped}, a slack's interval still wider than ±{PRECISION_SHARE:.0%} of the "
                f"step ({widest_said})"
            )
        # what happened, not a limit broken: the first rounds are taken whatever they take, and the rest were skipped
        # ("past their budget of 0.005 s" read as a promise the tool broke, of rounds that took 0.66 s)
        return (
            f"{self.taken} perturbation round(s) only, the rest skipped: the rounds taken took {self.spent_s:.3g} s, past "
            f"the {self.budget_s:.3g} s ({BOUND_TIME_FACTOR:g}× max_time_s) the rounds are given (fewer steps a sample "
            "make rounds shorter)"
        )

    def unread_said(self, variant: str) -> str | None:
        """What a variant's bound note says of its device samples left out, their delay's length unread (None: none)."""
        return unread_said(self.unread.get(variant, 0))

    def _take(self, plan: _Planned, sync: Callable[[], None], prelude: Callable[[], None] | None) -> None:
        """One sample of a round, kept as a Perturbed."""
        level_s = plan.level_s
        if plan.side is None:
            step_s, injected_s = self._sample(plan.variant, _nothing, sync, prelude), 0.0
        elif plan.side == Side.HOST:
            spin = HostSpin(level_s, self.clock)
            step_s = self._sample(plan.variant, spin, sync, prelude)
            injected_s = spin.mean_s()
        else:
            delay = self.delay
            assert delay is not None
            alone_s = None if delay.in_place else delay.alone_s(level_s)  # after the last sample's sync: an idle device
            if not delay.in_place and alone_s is None:
                # its length unread this round (it read ~0 s: the machine's noise): a sample the fit would see as a
                # delay of 0 s that ran is not taken, and the note counts it (`unread_said`)
                self.unread[plan.variant] = self.unread.get(plan.variant, 0) + 1
                return
            step_s = self._sample(plan.variant, delay.before_step(level_s), sync, prelude)
            measured = delay.measured_s()
            injected_s = measured if measured is not None else alone_s if alone_s is not None else level_s
        number = self._rounds.get(plan.variant, 0)
        self.samples.setdefault(plan.variant, []).append(Perturbed(number, plan.side, level_s, injected_s, step_s))

    def _sample(self, variant: str, before_step: Callable[[], None], sync: Callable[[], None], prelude: Callable[[], None] | None) -> float:
        """One sample of `variant` with `before_step` before each step call, timed as timing.take_sample times one:
        its done time per step."""
        run = self.perturbable(before_step)[variant]
        return take_sample(run, sync, None, self.clock, prelude)[1] / self.steps_per_call

    def observations(self) -> dict[str, tuple[Perturbed, ...]]:
        """Every variant's samples, in the order taken."""
        return {name: tuple(samples) for name, samples in self.samples.items()}
