"""Time the reference between a case's rounds: the same fixed work in every run, so its change is the machine's.

A `Taker` is made in the process that measures the case, on its backend
and device, so the reference runs with the case's threads and thread pools
and feels what they feel (a neighbour that takes one of two cores slows a
two-thread pool far more than it slows a single thread). `between_rounds`
is the procedure's hook (measure.procedure): it takes a sample when one is due, never inside a
timed sample, and its time is left out of the elapsed time the stopping
rule reads, so the case's own sampling is unchanged. Samples are spread
over the whole of the case's sampling: MIN_SAMPLES over the rounds every
case takes (its min_samples), so that a short case's rounds and its
reference share the same moments, then after rounds drawn at random, at
about REFERENCE_SHARE of the time, so a machine that changes speed during
the case is seen in the same share of reference samples as of the case's.

Before the case samples, `settle` waits (boundedly) for a calm CPU: the
case is not measured in a neighbour's busy spell, nor beside the thread
pool of the case before it still spinning. `finish` adds what the OS said
over the sampling (load, CPU pressure, other processes' CPU, steal, the
wait) and returns a results.reference.Reference. Where the fixed work
cannot be set up (a backend without float32 products on this device), the
case runs without a reference and comparisons of it say so: a reference
never fails a case.
"""

from __future__ import annotations

import math
import os
import random
import time
from typing import Any, Callable, ClassVar

from asyncbench.backends import Backend
from asyncbench.errors import InputError
from asyncbench.host import pressure
from asyncbench.results.model import Settings
from asyncbench.results.reference import MAX_SAMPLES, Reference

# The fixed work: REPEATS products of a SIZE×SIZE float32 matrix, waited for: compute of the kind most cases do,
# split over a CPU backend's thread pool (OpenBLAS, oneDNN and Eigen alike), about 0.75 ms a sample on a 2-core CPU.
# Never change them: references of two runs compare only when their work is the same (`work` names it;
# verdicts.machine compares no other).
SIZE = 256
REPEATS = 4
# The fewest reference samples of a case, whatever its share: enough for the ratio of two runs' references to have
# an interval within about ±2% at a comparison's confidence in the shortest case (15 against 15 gave ±3-4% at
# 99.75%), about 30 ms in all on a 2-core CPU, spread over the rounds every case takes.
MIN_SAMPLES = 40
# At most about this share of a case's sampling time goes to the reference: the cost of seeing the machine.
REFERENCE_SHARE = 0.05
# The rounds after which a sample is taken are drawn at random (each with the probability that keeps the share),
# never at a fixed stride: beside a CPU hog on 2 cores, a case and a reference alternated strictly took the
# hog's time slices in turn (one 2 ms and the other 6 ms, swapping every few hundred ms), so a stride can lock onto
# the scheduler's period. A fixed seed: the same rounds in every run of the same case.
SEED = 0
# Before a case samples, its process waits for a calm CPU: until a probe of PROBE_S of the reference work sees some
# task wait for a CPU at most QUIET of the time (Linux's pressure stall information; a probe that keeps the cores
# busy, since a single neighbour on an otherwise idle 2-core machine makes nothing wait), for at most WAIT_LIMIT_S.
# Beside a CPU hog busy 0.5-4 s and idle 0.5-4 s, most cases then sample in an idle spell, and the cases after
# another backend's do not sample beside its thread pool still spinning. A process whose wait found no calm moment
# (a neighbour that stays) waits no more: it probes once per case, and the case's pressure says what it sampled beside.
PROBE_S = 0.02
QUIET = 0.10
WAIT_LIMIT_S = 5.0
# A case never waits longer than this share of its own max_time_s, nor of its timeout_s (its budget for everything,
# a fresh worker's start included, which the wait counts in): a --quick case (max_time_s 1 s) waits at most 0.5 s,
# a case with a 2 s timeout 0.1 s, and the default (10 s, 300 s) WAIT_LIMIT_S.
WAIT_SHARE_OF_TIME = 0.5
WAIT_SHARE_OF_TIMEOUT = 0.05


# The environment variable that lowers WAIT_LIMIT_S (seconds, ≥ 0; 0: one probe, no wait): where a calm moment never
# comes, each fresh process still waits its full limit once before it learns so (Taker.never_calm). A test suite whose
# own workers keep both cores busy spent 80 s of 226 s of one worker's time in such waits (docs/development.md).
CALM_WAIT_VARIABLE = "ASYNCBENCH_CALM_WAIT_S"


def calm_wait_cap_s() -> float:
    """The most any case waits for a calm CPU: WAIT_LIMIT_S, or less where CALM_WAIT_VARIABLE says so. InputError for
    a value that is not seconds (the session checks it before anything runs; a case's worker inherits it checked)."""
    raw = os.environ.get(CALM_WAIT_VARIABLE, "").strip()
    if not raw:
        return WAIT_LIMIT_S
    try:
        value = float(raw)
    except ValueError:
        value = math.nan
    if not (math.isfinite(value) and value >= 0):
        raise InputError(
            f"{CALM_WAIT_VARIABLE}={raw!r}: expected seconds, a number ≥ 0 (the most a case waits for a calm CPU; "
            f"0: no wait), e.g. {CALM_WAIT_VARIABLE}=0"
        )
    return min(value, WAIT_LIMIT_S)


def wait_limit_s(max_time_s: float, timeout_s: float) -> float:
    """How long a case with these settings waits for a calm CPU at most."""
    return min(calm_wait_cap_s(), WAIT_SHARE_OF_TIME * max_time_s, WAIT_SHARE_OF_TIMEOUT * timeout_s)


def work_of(backend: str, device: str) -> str:
    """The fixed work in words, as two runs must share it: 'float32 256×256 product ×4 on torch cpu'."""
    return f"float32 {SIZE}×{SIZE} product ×{REPEATS} on {backend} {device}"


class Taker:
    """The reference of one case: sampled between its rounds (`between_rounds`), returned by `finish`."""

    #: a wait in this process found no calm moment: its later cases probe once and do not wait (the neighbour stays)
    never_calm: ClassVar[bool] = False

    def __init__(self, run: Callable[[], Any], work: str, clock: Callable[[], float] = time.perf_counter, early_rounds: int = 6):
        self._run = run
        self._early_rounds = max(early_rounds, 1)
        self._clock = clock
        self.work = work
        self.samples: list[float] = []
        self._rounds = 0
        self._started = clock()
        self._spent_s = 0.0
        self._draw = random.Random(SEED).random
        self._os = pressure.Window()
        self.waited_s: float | None = None  # how long `settle` waited for a calm CPU (None: it did not)

    def settle(self, limit_s: float = WAIT_LIMIT_S) -> float | None:
        """Wait for a calm CPU (PROBE_S probes of the fixed work until one's pressure is at most QUIET, for at most
        `limit_s`); the seconds waited, None where the kernel reports no pressure. The OS window starts after it.

        The limit holds: no run of the work is begun that would end past it by the shortest run seen (the last probe
        is cut there; the longest run seen would let one preempted run shorten every probe after it), and no probe is
        begun with less than that left. Only the first probe is whole whatever the limit: it is the check itself (a
        limit under PROBE_S, 0 included, takes that one probe)."""
        if pressure.stalled_us() is None:
            return None
        started = self._clock()
        shortest_run_s = math.inf
        deadline = started + max(limit_s, PROBE_S)  # the first probe's
        while True:
            calm, shortest_run_s = self._calm(deadline, shortest_run_s)
            waited = self._clock() - started
            left_s = limit_s - waited
            if calm or Taker.never_calm or left_s <= 0 or left_s < shortest_run_s:
                break
            deadline = started + limit_s
        Taker.never_calm = Taker.never_calm or not calm
        self._started = self._clock()
        self._os = pressure.Window()
        self.waited_s = waited
        return waited

    def _calm(self, deadline: float, shortest_run_s: float) -> tuple[bool, float]:
        """One probe: the fixed work run for PROBE_S (at least once; no run begun that would end past `deadline` by
        the shortest run seen, `shortest_run_s`), whether some task waited for a CPU at most QUIET of it, and the
        shortest run now seen."""
        before, started = pressure.stalled_us(), self._clock()
        while True:
            begun = self._clock()
            self._run()
            ended = self._clock()
            shortest_run_s = min(shortest_run_s, ended - begun)
            if ended - started >= PROBE_S or ended + shortest_run_s > deadline:
                break
        after, probed = pressure.stalled_us(), max(self._clock() - started, 1e-9)
        calm = before is not None and after is not None and (after - before) / 1e6 / probed <= QUIET
        return calm, shortest_run_s

    def sample(self) -> float:
        """One timed run of the fixed work (s), kept."""
        start = self._clock()
        self._run()
        taken = self._clock() - start
        self.samples.append(taken)
        self._spent_s += taken
        return taken

    def due(self) -> int:
        """How many samples are due after this round: over the case's first `early_rounds` rounds, MIN_SAMPLES
        spread evenly (a short case's rounds and its reference then share the same moments of the machine); after
        them one, in rounds drawn with the probability that keeps the reference near REFERENCE_SHARE of the time."""
        self._rounds += 1
        if len(self.samples) >= MAX_SAMPLES:
            return 0
        if self._rounds <= self._early_rounds:
            return -(-(MIN_SAMPLES - len(self.samples)) // (self._early_rounds - self._rounds + 1))
        rounds_s = max(self._clock() - self._started - self._spent_s, 0.0) / self._rounds
        reference_s = self._spent_s / max(len(self.samples), 1)
        return int(self._draw() < REFERENCE_SHARE * rounds_s / reference_s) if reference_s > 0 else 1

    def between_rounds(self) -> bool:
        """The procedure's hook (Procedure.between_rounds): the samples due after this round; whether there were any
        (the case's next timed round then follows an untimed one, measure.timing)."""
        due = self.due()
        for _ in range(due):
            self.sample()
        return due > 0

    def finish(self) -> Reference:
        """The reference, with at least MIN_SAMPLES samples (those a case cut short lacks taken now), and what the
        OS said over the case's sampling."""
        while len(self.samples) < MIN_SAMPLES:
            self.sample()
        load, stalled, others, steal = self._os.read()
        return Reference(
            work=self.work,
            samples_s=tuple(self.samples),
            load_per_core=load,
            cpu_pressure=stalled,
            others_cpu=others,
            steal=steal,
            waited_s=self.waited_s,
        )


def settled(backend: Backend, device: str, settings: Settings) -> Taker | None:
    """The taker of a case with these settings, after it waited for a calm CPU (`settle`, bounded by wait_limit_s);
    None where the fixed work cannot run there."""
    taker = taker_for(backend, device, settings.min_samples)
    if taker is not None:
        taker.settle(wait_limit_s(settings.max_time_s, settings.timeout_s))
    return taker


def taker_for(backend: Backend, device: str, early_rounds: int = 6) -> Taker | None:
    """The reference taker of a case on `backend` and `device`, its work set up and run once (a warm-up); None
    where the fixed work cannot run there. `early_rounds`: the rounds every case takes (its min_samples), over
    which the first MIN_SAMPLES are spread."""
    try:
        matrix = backend.ones((SIZE, SIZE), "float32", device)

        def run() -> None:
            product = None
            for _ in range(REPEATS):
                product = matrix @ matrix
            backend.wait(product)

        run()
    except Exception:  # noqa: BLE001 - no reference is no failure: the case runs, and its comparisons say so
        return None
    return Taker(run, work_of(backend.name, device), early_rounds=early_rounds)
