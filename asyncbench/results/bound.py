"""What bounds a step, measured by perturbation (`run --bound`): the observations and what they say.

A step that runs ahead has two sides that can set its pace: the host issuing work (Python, the framework's
dispatch) and the device doing it (a GPU, or a CPU backend's engine threads). Accounting from one trace says how
the time was spent; it does not say what would happen if one side got slower or faster. `--bound` measures that:
in rounds of their own (measure.perturbation, never mixed into the timed samples), a calibrated delay is injected
before each of the user's step calls, on one side at a time and at several levels, and the step's time is read at
each level. A side's *slack* is how much it can grow before the step slows; past it the step slows by the *cost
past* it per second of delay (≈ 1: that side alone sets the pace; < 1: partial overlap; > 1: the delay hurts
something else too). The fit, T(d) = a + b·max(0, d − s), and its intervals are verdicts.bound's.

Plain frozen dataclasses, no framework: a bound is read, compared and rendered without torch. Stored in a results
file (schema 11) as a result's `bound`: {variant: bound_to_dict(bound)}, absent when `--bound` was not asked for;
held to its shape (results.bound_shape.check_bound, which results.records calls) before `bound_from_dict` reads it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Mapping

from asyncbench.results.word import Word


class Side(Word):
    """Where a delay is injected: before each step call on the host (a busy spin), or queued on the device."""

    HOST = "host"
    DEVICE = "device"


SIDES = tuple(Side)
#: the quantities a threshold check on the bound names (`slack_s[host] >= 1ms`; verdicts.bound_levels judges them)
SLACK_S, SLACK_SHARE, CEILING = "slack_s", "slack_share", "ceiling"


class BoundKind(Word):
    """What bounds a step, read from the sides' slack intervals (verdicts.bound)."""

    HOST = "host"  # the host sets the pace: its slack is zero, the device's is not
    DEVICE = "device"  # the device sets the pace: its slack is zero, the host's is not
    BALANCED = "balanced"  # the two sides take about as long: neither has slack worth naming
    INCONCLUSIVE = "inconclusive"  # the intervals do not decide between the readings above
    #: a synchronous backend (NumPy, torch on a CPU): the host is the device, and there is nothing to tell apart
    SYNCHRONOUS = "synchronous"


#: how each reading is named in `run --bound`'s table (report.bound), and wherever a line sets another reading beside
#: the table's (verdicts.bound_checks: a check read at its own level), so that both name it alike
TABLE_NAMES = {
    BoundKind.HOST: "HOST-BOUND",
    BoundKind.DEVICE: "DEVICE-BOUND",
    BoundKind.BALANCED: "BALANCED",
    BoundKind.INCONCLUSIVE: "INCONCLUSIVE",
    BoundKind.SYNCHRONOUS: "synchronous",
}


@dataclass(frozen=True)
class Perturbed:
    """One sample of a perturbation round: the step run with a delay before each of its calls (or none)."""

    #: the perturbation round it was taken in (counted from 0): the unit of pairing, so drift between rounds cancels
    round: int
    #: where the delay was injected; None for the round's unperturbed sample (level 0)
    side: Side | None
    #: the delay asked for before each step call (s)
    level_s: float
    #: the delay's measured length per step call (s): a host spin's real length, a device delay measured in place
    #: that round. What the fit reads: preemption stretches a spin, and a queued op costs more beside the step
    injected_s: float
    #: the sample's time per step (s): its done time over the steps it ran
    step_s: float


#: a threshold check's level past this share of the step is not injected (measure.perturbation): a side's slack lies
#: within the step, and a level of seconds on a step of microseconds would run for hours (each sample injects it
#: before every step call). Its check is then not measured, and says so (verdicts.bound_checks)
MAX_INJECTED_SHARE = 2.0
#: two levels this close (s) are one: a stored level is rounded to the nanosecond (below), and a check's share of the
#: step computed again from the stored scale may differ from the injected one by a rounding or two
SAME_LEVEL_S = 2e-9


def same_level(first_s: float, second_s: float) -> bool:
    """Whether two delays per step call are the same level (within SAME_LEVEL_S)."""
    return abs(first_s - second_s) <= SAME_LEVEL_S


@dataclass(frozen=True)
class Injection:
    """A delay a threshold check on the slack asks the perturbation rounds to inject (verdicts.bound_checks judges
    the check from the paired difference at it): on `side`, either `level_s` seconds before each step call
    (`slack_s[host] >= 1ms`) or `share` of the step (`slack_share`, `ceiling`: measure.perturbation's scale), in
    every variant or only in `variant`. Plain data: it travels to the case's worker in its CaseOptions."""

    side: Side
    level_s: float | None = None
    share: float | None = None
    variant: str | None = None

    def seconds(self, scale_s: float) -> float:
        """The delay per step call (s), for a variant whose levels are fractions of `scale_s`."""
        return self.level_s if self.level_s is not None else (self.share or 0.0) * scale_s


@dataclass(frozen=True)
class SideBound:
    """One side's fit: how much it can grow before the step slows, and what each second past that costs."""

    side: Side
    #: the slack (s per step) with its interval (None: too few rounds for one)
    slack_s: float
    slack_ci_s: tuple[float, float] | None
    #: the step's slowdown per second of delay past the slack (b), with its interval
    cost_past: float
    cost_past_ci: tuple[float, float] | None
    #: the injected lengths the fit saw, per step (the levels' medians over rounds), smallest first
    levels_s: tuple[float, ...] = ()


class VerifyHow(Word):
    """How `--bound-verify` captures the step to check the ceiling against (a backend's capture_step)."""

    JIT = "jit"  # jax.jit of the user's step
    COMPILE = "compile"  # torch.compile of it (graph breaks keep its Python side effects)
    GRAPH = "graph"  # a CUDA graph of it, captured once and replayed


VERIFY_HOWS = tuple(str(how) for how in VerifyHow)


@dataclass(frozen=True)
class Verified:
    """The ceiling checked (`--bound-verify`): the step captured (jit, compile, graph) and timed in rounds paired with
    the plain step's. `reached` = (T0 − T_verify) / the device's slack: the share of what cutting host work could save
    that the capture did save (1: all of it; above 1 with its interval: faster than the floor, so it changed the
    device's work too). None where it was refused or cannot be said (the note says why)."""

    how: VerifyHow
    #: the captured step's time per step (median over the rounds) with its interval; None: not timed (refused)
    step_s: float | None = None
    step_ci_s: tuple[float, float] | None = None
    reached: float | None = None
    reached_ci: tuple[float, float] | None = None
    #: why it was refused, or what the figure cannot say, in one line
    note: str | None = None
    #: per round, the plain step's and the captured step's time per step, so every figure can be recomputed
    pairs: tuple[tuple[float, float], ...] = ()
    #: faster than the floor (step − the device's slack) beyond the intervals: the capture changed the device's work
    #: too (fused or folded ops), which cutting host cost alone cannot do
    past_floor: bool = False


def shares_host_cores(device: str) -> bool:
    """Whether a case's device runs its work on the host's own cores (Bound.shares_cores): a CPU device (`cpu`,
    `cpu:0`) always does, an accelerator never. The one rule the engine sets it by and a results file is held to."""
    return device.startswith("cpu")


@dataclass(frozen=True)
class Bound:
    """What bounds one variant of one case: the reading, each side's fit, the ceiling, and the raw observations."""

    variant: str
    bound: BoundKind
    #: the unperturbed step's time per step over the perturbation rounds (median of their level-0 samples)
    step_s: float
    #: perturbation rounds taken
    rounds: int
    sides: tuple[SideBound, ...] = ()
    #: the fastest the step could run if only host work were cut: step_s / (step_s − the device's slack), with its
    #: interval, the image of the device's slack interval under the same step (its high end math.inf where that
    #: slack may reach the whole step: no upper bound); None where it cannot be said (a synchronous backend, no
    #: device side)
    ceiling: float | None = None
    ceiling_ci: tuple[float, float] | None = None
    #: why the reading is partial or absent, in one line ("synchronous: the host is the device")
    note: str | None = None
    #: every perturbed sample, so any figure can be recomputed from the file
    observations: tuple[Perturbed, ...] = ()
    #: the user's steps a sample ran (the step form's `steps`): one delay a sample always shows, so below the slack
    #: a step grows by d / steps_per_call (verdicts.bound.fit takes it off)
    steps_per_call: int = 1
    #: the ceiling checked by capturing the step (`--bound-verify`); None: not asked
    verified: Verified | None = None
    #: the step time the levels are fractions of (the median of the untimed probe samples before the first round,
    #: measure.perturbation.PROBE_SAMPLES): a threshold check on a share of the step (`slack_share`, `ceiling`) is
    #: injected at its share of this, and re-judged from the file by finding that level again. None: not taken
    scale_s: float | None = None
    #: the device's work runs on the host's own cores (an asynchronous backend on a CPU: XLA's, MXNet's threads): a
    #: delay on either side takes a core from the other, so "no slack on either side" may be two sides taking turns
    #: rather than two balanced ones, and cutting host work may free cores for the device (verdicts.bound.fit)
    shares_cores: bool = False
    #: a side's slack was held at a level that already slowed the step (a jump the hinge does not model:
    #: verdicts.bound_jumps), and its note says so. A reader refits the bound by the rule it was fitted by: a file
    #: written before slacks were held stores none, and reads as it was written
    held_at_jump: bool = False
    #: the interval of (device − host slack) / step over the resampled rounds, the sides paired round by round: what a
    #: reading of two sides is read from (verdicts.bound), and what its line under the table quotes. Not stored in a
    #: file: a reader makes it again from the observations (session.reading refits every fitted bound), so nothing is
    #: shown that a reader cannot check. None: one side or none measured, too few rounds, or not fitted here (`ab`)
    difference_ci: tuple[float, float] | None = None

    def side(self, side: Side | str) -> SideBound | None:
        """The fit of one side (None: not measured)."""
        return next((fit for fit in self.sides if fit.side == side), None)


# Seconds are stored to the nanosecond, as raw samples are (results.nanoseconds.SAMPLE_DECIMALS).
_DECIMALS = 9


def _seconds(value: float) -> float:
    return round(value, _DECIMALS)


def as_stored(observation: Perturbed) -> Perturbed:
    """An observation as a results file stores it, each time to the nanosecond: what verdicts.bound.fit fits, so that
    a file's figures are what its stored observations give, to the last digit (session.reading holds them to that)."""
    o = observation
    return Perturbed(o.round, o.side, _seconds(o.level_s), _seconds(o.injected_s), _seconds(o.step_s))


def _pair(pair: tuple[float, float] | None, digits: int | None = _DECIMALS) -> list[float] | None:
    if pair is None:
        return None
    return [round(pair[0], digits), round(pair[1], digits)] if digits is not None else [pair[0], pair[1]]


def _bounded(interval: tuple[float, float] | None) -> bool:
    return interval is None or math.isfinite(interval[1])


def bound_to_dict(bound: Bound) -> dict[str, Any]:
    """A bound as a results file stores it (under its variant's name in the result's `bound`)."""
    return {
        "bound": str(bound.bound),
        "step_s": _seconds(bound.step_s),
        "rounds": bound.rounds,
        "steps_per_call": bound.steps_per_call,
        "sides": {
            str(fit.side): {
                "slack_s": _seconds(fit.slack_s),
                "slack_ci_s": _pair(fit.slack_ci_s),
                "cost_past": fit.cost_past,
                "cost_past_ci": _pair(fit.cost_past_ci, None),
                "levels_s": [_seconds(level) for level in fit.levels_s],
            }
            for fit in bound.sides
        },
        "ceiling": bound.ceiling,
        # an interval without an upper end (the device's slack may reach the whole step) is stored as its low end
        # alone, `ceiling_ci_low`, beside a null `ceiling_ci`: a reader from before reads it as no interval
        "ceiling_ci": _pair(bound.ceiling_ci, None) if _bounded(bound.ceiling_ci) else None,
        **({"ceiling_ci_low": bound.ceiling_ci[0]} if bound.ceiling_ci is not None and not _bounded(bound.ceiling_ci) else {}),
        "note": bound.note,
        "observations": [
            [o.round, None if o.side is None else str(o.side), _seconds(o.level_s), _seconds(o.injected_s), _seconds(o.step_s)]
            for o in bound.observations
        ],
        **({"verified": verified_to_dict(bound.verified)} if bound.verified is not None else {}),
        **({"scale_s": _seconds(bound.scale_s)} if bound.scale_s is not None else {}),
        **({"shares_cores": True} if bound.shares_cores else {}),
        **({"held_at_jump": True} if bound.held_at_jump else {}),
    }


def verified_to_dict(verified: Verified) -> dict[str, Any]:
    """A bound's `verified` as a results file stores it."""
    return {
        "how": str(verified.how),
        "step_s": None if verified.step_s is None else _seconds(verified.step_s),
        "step_ci_s": _pair(verified.step_ci_s),
        "reached": verified.reached,
        "reached_ci": _pair(verified.reached_ci, None),
        "note": verified.note,
        "pairs": [[_seconds(plain), _seconds(captured)] for plain, captured in verified.pairs],
        "past_floor": verified.past_floor,
    }


def verified_from_dict(raw: Mapping[str, Any]) -> Verified:
    """A bound's `verified` read back (check_bound checked it)."""
    return Verified(
        how=VerifyHow(raw["how"]),
        step_s=None if raw.get("step_s") is None else float(raw["step_s"]),
        step_ci_s=interval_of(raw.get("step_ci_s")),
        reached=None if raw.get("reached") is None else float(raw["reached"]),
        reached_ci=interval_of(raw.get("reached_ci")),
        note=raw.get("note"),
        pairs=tuple((float(plain), float(captured)) for plain, captured in raw.get("pairs", ())),
        past_floor=raw.get("past_floor") is True,
    )


def interval_of(raw: Any) -> tuple[float, float] | None:
    return None if raw is None else (float(raw[0]), float(raw[1]))


def bound_from_dict(variant: str, raw: Mapping[str, Any]) -> Bound:
    """A bound read back from a results file (results.records checks the shapes before it calls this)."""
    return Bound(
        variant=variant,
        bound=BoundKind(raw["bound"]),
        step_s=float(raw["step_s"]),
        rounds=int(raw["rounds"]),
        sides=tuple(
            SideBound(
                side=Side(name),
                slack_s=float(fit["slack_s"]),
                slack_ci_s=interval_of(fit.get("slack_ci_s")),
                cost_past=float(fit["cost_past"]),
                cost_past_ci=interval_of(fit.get("cost_past_ci")),
                levels_s=tuple(float(level) for level in fit.get("levels_s", ())),
            )
            for name, fit in raw.get("sides", {}).items()
        ),
        ceiling=None if raw.get("ceiling") is None else float(raw["ceiling"]),
        ceiling_ci=interval_of(raw.get("ceiling_ci")) if raw.get("ceiling_ci_low") is None else (float(raw["ceiling_ci_low"]), math.inf),
        note=raw.get("note"),
        observations=tuple(
            Perturbed(int(r), None if side is None else Side(side), float(level), float(injected), float(step))
            for r, side, level, injected, step in raw.get("observations", ())
        ),
        steps_per_call=int(raw.get("steps_per_call", 1)),
        verified=verified_from_dict(raw["verified"]) if raw.get("verified") is not None else None,
        scale_s=None if raw.get("scale_s") is None else float(raw["scale_s"]),
        shares_cores=raw.get("shares_cores") is True,
        held_at_jump=raw.get("held_at_jump") is True,
    )
