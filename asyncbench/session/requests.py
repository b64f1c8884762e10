"""What a command asked, read once from the command line into typed parts: the selection, the outputs, the gate.

The CLI parses every option where it reads it (a margin is a number here, a
KEY=VALUE list a mapping, a gate time seconds), so the session never parses
a string again and a typo is one line, exit 2, before anything runs. Every
measuring command's request is a `Request` (what it runs, where its report
goes, how it is judged, how much it shows while it works: the parts the
spine reads, session.spine); `run`, `gather` and `merge` ask a `RunRequest`,
`ab` an `ABRequest`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Mapping

from asyncbench.errors import InputError
from asyncbench.results import blocks, budget, units
from asyncbench.results.shards import Shard
from asyncbench.verdicts.compare import DEFAULT_MAX_REGRESSION

# Two minutes: what a pull request's check can wait for. A millisecond numpy or torch case decides a 1% margin in
# 5–30 s of it; the textbook's slow cases (conversion's print, training_memory) cannot resolve 2% in it and say what
# they resolved instead.
DEFAULT_GATE_TIME_S = 120.0
# The cap when --gate-time-max is not given: three times the target (6 minutes for the default 2). The looks are
# planned over the blocks the cap holds, so a gate of torch cases on 2 cores (8-13 s a block) plans 27-45 of them and
# has looks a decided case stops at (from 12-14 blocks); the 12-16 blocks of 2 minutes alone allowed none before
# the last, and every case, however clear, ran the whole time. Three, not two: simulated gates of ci-gate.yaml's
# shape on unchanged code on a noisy day (blocks ±5-13%) failed INCONCLUSIVE in 100 of 100 with 2 minutes alone, 84
# with a 4-minute cap, 23 with 6 and 18 with 8 (benchmarks/ab_stopping.py, 100 gates each); on a quiet day the cap
# took the 3 of 100 failures to none, at 131 s median (121 s without) and 171 s at most.
GATE_TIME_MAX_FACTOR = 3.0
#: the longest a gate's target or cap may be: a day (a default cap of 3 × a 20 h target is held to it too)
MAX_GATE_TIME_S = 86400.0
# The margin when `ab --max-regression` is not given: a gate measured in one run, paired, can hold a tighter margin
# than `run --baseline` across runs (10%).
DEFAULT_MARGIN = 0.05
# The units a --gate-time may carry, in seconds. None is not one: "30" may mean 30 s or 30 minutes, and a gate
# cut to a fortieth of what its author meant ends INCONCLUSIVE (`--max-regression` refuses a bare 5 alike).
#: a gate's time in seconds, minutes or hours (a cap may be up to a day, which reads best in hours)
GATE_TIME_UNITS = {"s": 1.0, "m": 60.0, "min": 60.0, "h": 3600.0}
# Below this a gate cannot reach a verdict even for the fastest case: any interval needs min_blocks of the gate's
# rate (7 at 1%, for one case of one verdict looked at once: all on one side has a chance of 2^−7), and the looks
# scheduled while blocks go on start at FIRST_LOOK_BLOCKS (10); each block a fresh pair of processes sampled at
# least BLOCK_MIN_S (0.5 s), 10 blocks are 5 s of sampling alone; with the pairs' starts a 1 ms numpy case took
# 9.1 s to its first look (11 blocks) beside a CPU hog on the 2-core runner.
MIN_GATE_TIME_S = 10.0


@dataclass(frozen=True)
class Selection:
    """What to run: the configs (none: the built-in suite, or the -w workloads), and the command line's say over them."""

    configs: tuple[str, ...] = ()
    workloads: tuple[str, ...] = ()
    devices: tuple[str, ...] = ()
    backends: tuple[str, ...] = ()
    sets: tuple[str, ...] = ()
    quick: bool = False


@dataclass(frozen=True)
class Outputs:
    """The files a finished report is written to: the results file (-o; `run`'s journaled as the cases finish) and
    the other writers' (writer name -> file: markdown, csv, github-benchmark, bmf, junit, plot; `ab` writes its own
    markdown, bmf and junit)."""

    json_path: str | None = None
    files: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Gate:
    """How a finished report is judged: its margin (--max-regression, a fraction: 0.1 is 10%), --allow-inconclusive
    (an undecided verdict passes); for `run`, against --baseline, and --strict (a skip fails). `ab` has no baseline
    (its base side is one) and no --strict."""

    baseline: str | None = None
    max_regression: float = DEFAULT_MAX_REGRESSION
    strict: bool = False
    allow_inconclusive: bool = False


@dataclass(frozen=True)
class Recording:
    """Whether the report goes into the history when it ends (`--record`), which one (`--history`; None: the
    default), under which label."""

    record: bool = False
    history: str | None = None
    label: str | None = None


@dataclass(frozen=True)
class Request:
    """What every measuring command asks besides where its cases run: what to run (none for `gather` and `merge`,
    which read what ran), where its report goes, how it is judged, and its progress on stderr (-q, --no-progress:
    none; -v: more: report.progress)."""

    selection: Selection = Selection()
    outputs: Outputs = Outputs()
    gate: Gate = Gate()
    progress: bool = True
    verbose: bool = False


@dataclass(frozen=True)
class RunRequest(Request):
    """What `asyncbench run` (or `gather` and `merge`, which select nothing) was asked."""

    recording: Recording = Recording()
    #: each case in a worker process (False: --in-process)
    isolate: bool = True
    trace_dir: str | None = None
    #: take each case's census of where its steps waited (`--syncs`: Result.syncs)
    syncs: bool = False
    #: measure what bounds each step-form case's step (`--bound`: Result.bound); a config's `bound: true` too
    bound: bool = False
    #: also capture each step and time it against the ceiling (`--bound-verify jit|compile|graph`: Bound.verified)
    bound_verify: str | None = None
    #: the executor's settings the command line gave (--executor, --per, --partition...), as a config's `executor:` keys
    executor: Mapping[str, Any] = field(default_factory=dict)
    #: the one part of the plan to run here (`--shard I/N`, one job of a CI matrix; None: the whole plan)
    shard: Shard | None = None


@dataclass(frozen=True)
class ABRequest(Request):
    """What `asyncbench ab` was asked: the selection as `run` takes it (its configs, -w, -b, -d, --set, --quick), the
    outputs (-o, --markdown, --bmf, --junit), the gate (its margin, --allow-inconclusive), the two sides (each side's
    variables parsed: side_variables.parse_env) and the gate's time in seconds."""

    gate: Gate = Gate(max_regression=DEFAULT_MARGIN)
    base: str | None = None
    head: str | None = None
    base_python: str | None = None
    base_env: Mapping[str, str] = field(default_factory=dict)
    head_env: Mapping[str, str] = field(default_factory=dict)
    family_error: float = budget.FAMILY_ERROR
    #: the gate's target time, given to its cases by how far each is from a decision (engine.gate_time)
    gate_time_s: float = DEFAULT_GATE_TIME_S
    #: its cap: undecided cases go on past the target up to it, and the looks are planned over it (None: the
    #: target times GATE_TIME_MAX_FACTOR)
    gate_time_max_s: float | None = None
    #: also take each side's census of where its step waits, once per case (`--syncs`): the points new on head
    syncs: bool = False
    #: also take each side's perturbation rounds, once per case (`--bound`): what bounds each variant's step on base
    #: and on head, and where it flipped; information only, never the gate's verdict
    bound: bool = False

    def __post_init__(self) -> None:
        if self.gate_time_max_s is not None and self.gate_time_max_s < self.gate_time_s:
            raise InputError(
                f"--gate-time-max {units.seconds(self.gate_time_max_s)} is shorter than --gate-time "
                f"{units.seconds(self.gate_time_s)}: the cap is the most a gate takes, at least its target"
            )

    @property
    def gate_cap_s(self) -> float:
        """The most the gate measures for (past it only the grace blocks of engine.gate_time)."""
        if self.gate_time_max_s is not None:
            return self.gate_time_max_s
        return max(self.gate_time_s, min(self.gate_time_s * GATE_TIME_MAX_FACTOR, MAX_GATE_TIME_S))


def parse_gate_time(text: str, option: str = "--gate-time") -> float:
    """'90s', '2m', '1h' → seconds; InputError (naming `option`) for a number without its unit (ambiguous: seconds or
    minutes?), for anything else, or under MIN_GATE_TIME_S."""
    match = re.fullmatch(r"\s*([0-9]+(?:\.[0-9]*)?)\s*(s|min|m|h)?\s*", str(text))
    if match is None:
        raise InputError(f"{option} {text!r}: expected a duration such as 90s, 2m or 1h")
    if match.group(2) is None:
        raise InputError(
            f"{option} {text!r}: write the duration with its unit, such as {_with_units(match.group(1))}: "
            "a plain number is ambiguous (seconds or minutes?)"
        )
    seconds = float(match.group(1)) * GATE_TIME_UNITS[match.group(2)]
    if not MIN_GATE_TIME_S <= seconds <= MAX_GATE_TIME_S:
        raise InputError(
            f"{option} {text!r}: expected from {MIN_GATE_TIME_S:g} s (the least in which a gate can reach a verdict: "
            f"its interval needs at least {blocks.min_blocks(budget.FAMILY_ERROR)} blocks of fresh processes, each "
            f"sampled at least {blocks.BLOCK_MIN_S:g} s, and the looks taken while blocks go on start at "
            f"{blocks.FIRST_LOOK_BLOCKS}) to a day"
        )
    return seconds


def _with_units(number: str) -> str:
    """The user's `number` with each unit it is ambiguous between (seconds, minutes) where that duration is one the
    option takes; else the default target, written with its unit. `--gate-time 0` was told "such as 0s or 0m", and
    `0s` then refused as under 10 s."""
    taken = [f"{number}{unit}" for unit in ("s", "m") if MIN_GATE_TIME_S <= float(number) * GATE_TIME_UNITS[unit] <= MAX_GATE_TIME_S]
    if taken:
        return " or ".join(taken)
    minutes = DEFAULT_GATE_TIME_S / GATE_TIME_UNITS["m"]
    default = f"{minutes:g}m" if minutes.is_integer() else f"{DEFAULT_GATE_TIME_S:g}s"
    return f"{default} (the default; from {MIN_GATE_TIME_S:g}s to a day)"
