"""Two sides, one case, paired round by round in blocks of fresh processes: the measuring half of `asyncbench ab`.

Each side is a worker process (isolation.Worker) started alike: its own interpreter and environment, with its
source tree first on sys.path once the harness is imported, so user workloads and the user's package come from
that side's revision. In every round each variant is sampled once on each side, the variants in a random order
and the two sides in a random order within each pair (randomized multiple interleaved trials: Abedi & Brecht, ICPE
2017). Slow drift of a shared machine then hits both samples of a pair alike, and their ratio cancels it.

That holds only if the side that is not measuring is really idle. A paused side is frozen (SIGSTOP,
isolation.Worker.pause) between its samples: a stopped process cannot spin an OpenMP or OpenBLAS pool, run the GC,
or run a JAX/XLA or MXNet engine thread. A sample ends with the backend's sync, so a GPU side has drained its queue
before it is frozen.

What interleaving cannot cancel is the bias each process carries for its life (memory layout, core placement). So
a case is measured in *blocks* (results.blocks): each block is a fresh pair of processes, set up and warmed alike,
sampled for at least BLOCK_MIN_S and BLOCK_MIN_ROUNDS, and it contributes one median log ratio per verdict; the
verdict comes from an interval over the blocks (signed-rank, narrowed by a sign-test one robust to a wild block),
at the looks of a fixed schedule. A fresh process costs a start (seconds with torch): both sides start at once,
while nothing is measured (a start beside a sample wrecks the sample), and a block samples at least as long as
its start took.

One pair of fresh processes serves a block of *every* open case that runs in the same interpreters
(`shared_block`): each case is set up, warmed, sampled and torn down in turn, so a gate of five torch cases pays
one start per block, not five. Each case's block value still comes from processes no earlier block of it used,
which is all its interval needs; that a case ran after another in the same processes is the same on both sides and
in every block.

Figures (the processes' bias, a block's start and where its time goes): docs/measured.md, section "`asyncbench ab`".
"""

from __future__ import annotations

import math
import random
import statistics
import time
from dataclasses import dataclass, field
from typing import Callable, Sequence

from asyncbench.engine import isolation, paired_ratios
from asyncbench.engine import paired_information as information
from asyncbench.engine.side_process import SideWorker
from asyncbench.errors import describe_failure
from asyncbench.measure import census, perturbation
from asyncbench.measure.timing import ORDER_SEED
from asyncbench.results import blocks
from asyncbench.results.bound import Bound
from asyncbench.results.model import Case, Clocks, Progress, Verdict
from asyncbench.results.paired import METRIC, VARIANT, PairedCase, PairedRatio
from asyncbench.results.syncs import Census, census_from_dict
from asyncbench.verdicts import margin
from asyncbench.workloads.base import Workload

# A block samples at least as long as its processes took to start (torch: 1–3 s): starting then costs at most half
# the case's time, and a slow-starting framework gets longer blocks instead of a gate spent starting processes.
BLOCK_PER_START = 0.5


@dataclass
class Pairing:
    """One case paired on two sides, block after block, until its verdicts are decided or its time is given out.

    `advance(until)` runs blocks up to a moment; a case left undecided may be advanced again later (each block is
    a fresh pair of processes, so the blocks need not follow each other), and `finish` takes its last look."""

    base_case: Case
    head_case: Case
    sides: tuple[SideWorker, SideWorker]
    workload: Workload
    family_error: float  # this case's share of the gate's rate
    margin: float
    on_progress: Callable[[Progress], None] | None = None
    #: told after each block of the case ends, its look taken (a line per block in a CI log: report.progress)
    on_block: Callable[[Pairing], None] | None = None
    rng: random.Random = field(default_factory=lambda: random.Random(ORDER_SEED))
    names: list[str] = field(default_factory=list)  # the variants sampled
    keys: list[tuple[str, str]] = field(default_factory=list)  # the verdicts: gated variants and directed metrics
    values: dict[tuple[str, str], list[float]] = field(default_factory=dict)  # each verdict's block log ratios
    sides_values: dict[tuple[str, str], tuple[list[float], list[float]]] = field(default_factory=dict)
    rounds: int = 0
    elapsed_s: float = 0.0
    problems: list[str] = field(default_factory=list)  # a side's results failed their verification
    judged: tuple[PairedRatio, ...] = ()
    done: PairedCase | None = None  # an error or a skip: nothing more to measure
    looked_at: int = 0  # the block count of the last look
    #: the blocks its looks are scheduled over (results.blocks.BlockBudget): set before its second block, revised before its first look
    max_blocks: int = blocks.MAX_BLOCKS
    scheduled: bool = False  # whether `max_blocks` was scheduled (`schedule`), not the default
    past_target: str | None = None  # went on past the gate's target with "no look" yet or "undecided" at one (engine.gate_time)
    stopped: bool = False  # stopped undecided by its looks so far, its last look taken then (`finish`): decided or not
    #: left undecided before the cap because a next block, at the latest round's pace, would have ended past what the
    #: cap allows (engine.gate_time): (that pace, when it would have ended, the latest end allowed), in the gate's
    #: seconds; None otherwise
    short_of_cap: tuple[float, float, float] | None = None
    #: `ab --syncs`: each side's census (taken once, in the first block), for the points new on head
    syncs: bool = False
    censuses: dict[str, dict[str, Census]] = field(default_factory=dict)
    #: `ab --bound`: each side's bounds (perturbation rounds taken once, in the first block) and why it has none
    #: (a workload with no step to perturb), for what bounds each variant on base and on head
    bound: bool = False
    bounds: dict[str, tuple[dict[str, Bound], str | None]] = field(default_factory=dict)
    #: seconds its blocks spent on rounds that are information, not verdicts (`ab --bound`'s perturbation rounds: up
    #: to BOUND_TIME_FACTOR × max_time_s a side): kept out of `elapsed_s` and off the gate's clock (engine.gate_time,
    #: shared_block), so that asking for them leaves the verdicts the blocks, looks and time they had without
    aside_s: float = 0.0

    @property
    def n_blocks(self) -> int:
        return len(next(iter(self.values.values()), []))

    @property
    def open(self) -> bool:
        """Whether more blocks could still change the case's verdicts."""
        return not self.decided and self.n_blocks < blocks.MAX_BLOCKS

    @property
    def decided(self) -> bool:
        return self.done is not None or (bool(self.judged) and all(r.verdict != Verdict.INCONCLUSIVE for r in self.judged))

    def budget(self) -> blocks.BlockBudget:
        return blocks.BlockBudget(self.family_error, max(len(self.keys), 1), self.max_blocks)

    def schedule(self, max_blocks: int) -> None:
        """Schedule the looks over `max_blocks` blocks (from counts and the clock): before the first look only, as a
        plan made after one could follow what it said."""
        if self.looked_at:
            raise RuntimeError(f"the looks are planned before the first look, not after the one at block {self.looked_at}")
        self.max_blocks = max_blocks
        self.scheduled = True

    def seconds_needed(self) -> float:
        """About how much more time would decide every verdict: at the spread its blocks show, or, short of its first
        look, the time to reach it at its blocks' pace (no spread read: of one block there is none); inf: cannot say."""
        if self.decided:
            return 0.0
        if not self.n_blocks:
            return math.inf
        per_block_s = self.elapsed_s / self.n_blocks
        first = self.budget().first_look()
        if self.n_blocks < first:  # no interval yet: at least until the first look that can give one
            return (first - self.n_blocks) * per_block_s
        needed = [blocks.blocks_needed(self.values[k], self.margin, self.budget().tail_error()) for k in self.keys]
        if any(n is None for n in needed):
            return math.inf
        return (max(n for n in needed if n is not None) - self.n_blocks) * per_block_s

    def advance(self, until: float) -> None:
        """Blocks of this case alone until every verdict is decided at a look or the clock reaches `until`
        (perf_counter seconds)."""
        while self.open and (self.n_blocks == 0 or time.perf_counter() < until):
            shared_block([self], until)

    def block(self, until: float, start_share_s: float) -> None:
        """One block of this case in the processes just started for it (and maybe for other cases: this case's
        share of their start is `start_share_s`), then a look if the schedule has one here."""
        started, aside_s = time.perf_counter(), self.aside_s
        try:
            self._block(until, start_share_s)
            if self.done is None and self.n_blocks in self.budget().schedule() and self.n_blocks > self.looked_at:
                self._judge()
        except isolation.WorkerLost as lost:
            self.done = PairedCase.of(self.head_case, "error", f"lost while measuring: {lost}")
        except Exception as exc:  # noqa: BLE001 - a case's failure is a row; the others still run
            self.done = PairedCase.of(self.head_case, "error", describe_failure(exc))
        finally:
            self.elapsed_s += time.perf_counter() - started + start_share_s - (self.aside_s - aside_s)
        if self.on_block is not None:
            self.on_block(self)

    def finish(self) -> PairedCase:
        """The case's row: its last look (taken now if the blocks stopped between looks). A case that stops
        undecided by its looks so far is told to `on_block` once more, with that look (`stopped`), which may decide it."""
        if self.done is not None:
            return self.done
        told_decided = self.decided  # its last block's look decided it, and said so
        if self.n_blocks > self.looked_at:
            self._judge()
        if not told_decided and not self.stopped:
            self.stopped = True
            if self.on_block is not None:
                self.on_block(self)
        return PairedCase.of(
            self.head_case,
            "ok",
            ratios=self.judged,
            rounds=self.rounds,
            elapsed_s=self.elapsed_s,
            confidence=self.budget().confidence(),
            blocks=self.n_blocks,
            problems=tuple(self.problems),
            needed_s=None if self.decided else self.seconds_needed(),
            never_why=None
            if self.decided
            else next(
                filter(None, (blocks.never_reason(self.values[k], self.margin, self.budget().tail_error()) for k in self.keys)), None
            ),
            new_syncs=information.new_syncs(self.censuses, {side.name: side.tree for side in self.sides})
            if self.syncs and len(self.censuses) == len(self.sides)
            else None,
            margin=self.margin,
            bound_changes=information.bound_changes(self.bounds, list(self.names))
            if self.bound and len(self.bounds) == len(self.sides)
            else None,
        )

    def _setup(self, timeout_s: float) -> bool:
        """The case set up on both sides' fresh processes; False (and `done` set) when it cannot run on both."""
        ready = {}
        # both sides set up and warm at once: nothing is measured yet, and a set-up (a model built, a warm-up
        # round of a 0.15 s training step) taken one side after the other was half of a torch block's time
        try:
            for side, case in zip(self.sides, (self.base_case, self.head_case), strict=True):
                side.send("setup", (case, side.tree))
        except isolation.WorkerLost as lost:
            self.done = PairedCase.of(self.head_case, "error", f"could not set up: {lost}")
            return False
        for side in self.sides:
            try:
                ready[side.name] = side.receive(timeout_s)
            except isolation.WorkerLost as lost:
                lost_head = side.name == "head" and "base" in ready
                self.done = PairedCase.of(self.head_case, "error", f"{side.name}: {lost}", lost=lost_head)
                return False
        skipped = {name: info["skipped"] for name, info in ready.items() if "skipped" in info}
        if skipped:
            alike = len(skipped) == 2 and len(set(skipped.values())) == 1  # both sides skip for one reason: said once
            why = skipped["head"] if alike else "; ".join(f"{name}: {reason}" for name, reason in skipped.items())
            self.done = PairedCase.of(self.head_case, "skipped", why, lost="head" in skipped and "base" not in skipped)
            return False
        if not self.names:
            common = [n for n in ready["head"]["variants"] if n in ready["base"]["variants"]]
            if not common:
                self.done = PairedCase.of(self.head_case, "error", "no variant in common between the two sides")
                return False
            gated = self.workload.gated(self.head_case.params, common)
            # only what is judged is sampled, unless a rate metric needs every variant's clocks
            self.names = common if paired_ratios.directed_metrics(self.workload) or not gated else list(gated)
        return True

    def _block(self, until: float, start_share_s: float) -> None:
        """One block: the case set up, rounds for BLOCK_MIN_ROUNDS and at least BLOCK_MIN_S or as long as its share
        of the processes' start (BLOCK_PER_START), then each verdict's block value."""
        settings = self.head_case.settings
        if not self._setup(settings.timeout_s):
            return
        block_s = max(blocks.BLOCK_MIN_S, BLOCK_PER_START * start_share_s)
        clocks: dict[str, dict[str, list[Clocks]]] = {side.name: {name: [] for name in self.names} for side in self.sides}
        started = time.perf_counter()
        order, count = list(self.names), 0
        while True:
            self.rng.shuffle(order)
            for name in order:
                pair_order = list(self.sides)
                self.rng.shuffle(pair_order)
                for side in pair_order:
                    issue_s, done_s, device_s = side.call("sample", name, settings.timeout_s)
                    clocks[side.name][name].append(Clocks(issue_s, done_s, device_s))
            count += 1
            now = time.perf_counter()
            if count >= blocks.BLOCK_MIN_ROUNDS and (now >= until or now - started >= block_s):
                break
        if self.n_blocks == 0:  # the results are checked once per side, as `run` checks them
            for side in self.sides:
                problem = side.call("verify", None, settings.timeout_s)
                if problem:
                    self.problems.append(f"{side.name}: {problem}")
        if self.syncs and not self.censuses:  # `ab --syncs`: each side's census once, after its first block's rounds, all it is owed
            for side in self.sides:
                taken = side.call("census", census.SCHEDULE.owed(taken=0), settings.timeout_s)
                self.censuses[side.name] = {name: census_from_dict(name, raw) for name, raw in taken.items()}
        if self.bound and not self.bounds:  # `ab --bound`: each side's perturbation rounds once, as the census's
            # the rounds stop at their budget (BOUND_TIME_FACTOR × max_time_s): the call may take that on top of a sample's time
            bound_timeout_s = settings.timeout_s + perturbation.BOUND_TIME_FACTOR * settings.max_time_s
            aside = time.perf_counter()
            for side in self.sides:
                self.bounds[side.name] = information.bounds_read(side.call("bound", None, bound_timeout_s), side.name)
            self.aside_s += time.perf_counter() - aside
        self.rounds += count
        series = paired_ratios.ratio_series(self.workload, self.head_case.params, clocks["base"], clocks["head"])
        if not self.keys:
            gated = set(self.workload.gated(self.head_case.params, self.names))
            self.keys = [k for k in paired_ratios.distinct(series) if k[0] == METRIC or k[1] in gated]
        for key in self.keys:
            old, new, ratios = series.get(key, ([], [], []))
            value = blocks.block_value(ratios)
            if value is None:
                raise RuntimeError(f"{key[1]}: no positive paired ratio in a block")
            self.values.setdefault(key, []).append(value)
            olds, news = self.sides_values.setdefault(key, ([], []))
            olds.extend(old)
            news.extend(new)
        if self.on_progress is not None:
            self.on_progress(Progress(self.rounds, self.elapsed_s + now - started, self._widest()))

    def _judge(self) -> None:
        """A look: every verdict from its blocks' interval against the margin."""
        self.looked_at = self.n_blocks
        tail = self.budget().tail_error()
        units = {m.name: m.unit for m in self.workload.metrics}
        judged = []
        for kind, name in self.keys:
            interval = blocks.interval(self.values[(kind, name)], tail)
            old, new = self.sides_values[(kind, name)]
            judged.append(
                PairedRatio(
                    name,
                    kind,
                    "s" if kind == VARIANT else units.get(name, ""),
                    statistics.median(old),
                    statistics.median(new),
                    blocks.estimate(self.values[(kind, name)]),
                    interval,
                    margin.label_of(interval, self.margin),
                    tuple(self.values[(kind, name)]),
                )
            )
        self.judged = tuple(judged)

    def _widest(self) -> float:
        """The widest relative half-width among the verdicts' intervals so far (inf while one has none)."""
        tail = self.budget().tail_error()
        widths = []
        for values in self.values.values():
            interval = blocks.interval(values, tail)
            widths.append(math.inf if interval is None else (interval[1] - interval[0]) / 2 / blocks.estimate(values))
        return max(widths, default=math.inf)


def shared_block(pairings: Sequence[Pairing], until: float) -> None:
    """One block of each of `pairings`, which run on the same two sides, in one pair of fresh processes: started
    once (both sides at once, while nothing is measured), then each case in turn set up, sampled and torn down,
    sharing the start's cost. A case whose part ended in an error may have lost a process: the next case starts
    a fresh pair. `until` (perf_counter seconds) cuts the cases' sampling short, never below BLOCK_MIN_ROUNDS."""
    sides = pairings[0].sides
    backends = list(dict.fromkeys(backend for p in pairings for backend in (p.base_case.backend, p.head_case.backend)))
    timeout_s = max(p.head_case.settings.timeout_s for p in pairings)
    start_s: float | None = None  # the unshared rest of the running processes' start; None: none running
    aside_s = sum(p.aside_s for p in pairings)
    for index, pairing in enumerate(pairings):
        later = until + sum(p.aside_s for p in pairings) - aside_s  # information rounds of the cases before take no time of this one
        if start_s is None:
            started = time.perf_counter()
            try:
                for side in sides:
                    side.renew(backends)
                for side in sides:
                    side.ready(timeout_s)
            except isolation.WorkerLost as lost:
                for left in pairings[index:]:
                    left.done = PairedCase.of(left.head_case, "error", f"a fresh worker process did not start: {lost}")
                    if left.on_block is not None:
                        left.on_block(left)
                return
            start_s = time.perf_counter() - started
        share_s = start_s / (len(pairings) - index)
        pairing.block(later, share_s)
        failed = pairing.done is not None and pairing.done.status == "error"  # a skip leaves the processes as they were
        start_s = None if failed else start_s - share_s
