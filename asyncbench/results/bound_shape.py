"""A stored bound held to its shape before it is read (results.records calls check_bound for each variant, and `ab`'s
parent for each side's answer): every field what results.bound.bound_to_dict writes, every number within what a case
can take; results.bound_rule then holds its reading and ceiling to its own numbers."""

from __future__ import annotations

import math
import statistics
from typing import Any

from asyncbench.results import fields, recordable
from asyncbench.results.bound import SIDES, VERIFY_HOWS, BoundKind, shares_host_cores
from asyncbench.results.fields import At

#: the most perturbation rounds a stored bound may claim: a round runs the step once per level and side, so ten
#: thousand are hours of a case's time; a file that claims more is no asyncbench file
MAX_ROUNDS = 10_000
#: the most levels a side may have been injected at (a sweep and the levels that adapt to the knee: a few dozen)
MAX_LEVELS = 64
#: the fields of one stored observation, in order
OBSERVATION = ("round", "side", "level_s", "injected_s", "step_s")
_KINDS = tuple(str(kind) for kind in BoundKind)
_SIDE_WORDS = tuple(str(side) for side in SIDES)


def check_bound(raw: Any, at: At) -> None:
    """InputError (file and key) for the first field of a stored bound (a result's `bound[variant]`, schema 11) that
    is not what bound_to_dict writes: its reading, step, rounds, each side's slack, cost and levels with their
    intervals, the ceiling, the note and each observation (a list no longer than its rounds allow)."""
    bound = fields.mapping(raw, at)
    fields.word(bound.get("bound"), at / "bound", _KINDS)
    step = recordable.duration(fields.number(bound.get("step_s"), at / "step_s"), at / "step_s")
    rounds = fields.count(bound.get("rounds"), at / "rounds")
    measured = fields.optional_mapping(bound.get("sides"), at / "sides")
    if step is not None and step <= 0 and (rounds > 0 or measured):
        # the fit writes a step of 0 only where nothing was measured (no round, no side): its slacks are shares of it
        (at / "step_s").fail(f"a step of {step:g} s with {rounds} round(s) and {len(measured)} side(s): a measured step takes time")
    if "steps_per_call" in bound and fields.count(bound["steps_per_call"], at / "steps_per_call") < 1:
        (at / "steps_per_call").fail("a sample runs at least one step")
    if rounds > MAX_ROUNDS:
        (at / "rounds").fail(f"{rounds} perturbation rounds is more than any case takes ({MAX_ROUNDS})")
    for name, fit in measured.items():
        where = at / "sides" / name
        fields.word(name, where, _SIDE_WORDS)
        fit = fields.mapping(fit, where)
        recordable.duration(fields.number(fit.get("slack_s"), where / "slack_s"), where / "slack_s")
        fields.interval(fit.get("slack_ci_s"), where / "slack_ci_s")
        if fields.number(fit.get("cost_past"), where / "cost_past") < 0:
            (where / "cost_past").fail("a delay cannot make a step faster: the cost past the slack is at least 0")
        fields.interval(fit.get("cost_past_ci"), where / "cost_past_ci")
        levels = fields.optional_list(fit.get("levels_s"), where / "levels_s")
        if len(levels) > MAX_LEVELS:
            (where / "levels_s").fail(f"{len(levels)} levels, more than a side is injected at ({MAX_LEVELS})")
        for index, level in enumerate(levels):
            recordable.duration(fields.number(level, where / "levels_s" / index), where / "levels_s" / index)
    ceiling = fields.optional_number(bound.get("ceiling"), at / "ceiling")
    if ceiling is not None and ceiling <= 0:
        (at / "ceiling").fail(f"a speed-up of {ceiling:g}: the ceiling is a ratio of two times, above 0")
    fields.interval(bound.get("ceiling_ci"), at / "ceiling_ci")
    low_only = fields.optional_number(bound.get("ceiling_ci_low"), at / "ceiling_ci_low")
    if low_only is not None and low_only < 1:
        (at / "ceiling_ci_low").fail(f"{low_only:g}×: cutting host work cannot make a step slower, a ceiling is at least 1")
    fields.optional_text(bound.get("note"), at / "note")
    for flag in ("shares_cores", "held_at_jump"):
        if bound.get(flag) not in (None, True, False):
            (at / flag).fail(f"{bound[flag]!r}: true or false")
    scale = fields.optional_number(bound.get("scale_s"), at / "scale_s")
    if scale is not None:  # the step's own measured time the levels are shares of: a year at most, as any measured time
        recordable.measured_time(scale, at / "scale_s")
    if bound.get("verified") is not None:
        _check_verified(bound["verified"], at / "verified", rounds)
    observations = fields.optional_list(bound.get("observations"), at / "observations")
    if len(observations) > rounds * (1 + len(SIDES) * MAX_LEVELS):
        (at / "observations").fail(f"{len(observations)} samples for {rounds} rounds of at most {MAX_LEVELS} levels a side")
    if not _all_well_formed(observations):  # the whole list at once; else each observation, to name the first wrong one
        _check_observations(observations, at)
    if observations:  # the rounds are those the observations were taken in (verdicts.bound counts them); none: unheld
        taken = len({observation[0] for observation in observations})
        if taken != rounds:
            (at / "rounds").fail(f"{rounds} perturbation round(s) said, {taken} in its observations: {recordable.NOT_WRITTEN}")


def _check_observations(observations: list[Any], at: At) -> None:
    """InputError for the first stored observation that is not [round, side or null, level_s, injected_s, step_s]."""
    for index, observation in enumerate(observations):
        where = at / "observations" / index
        values = fields.listed(observation, where)
        if len(values) != len(OBSERVATION):
            where.fail(f"expected [{', '.join(OBSERVATION)}], got {len(values)} value(s)")
        if fields.count(values[0], where / 0) >= MAX_ROUNDS:
            (where / 0).fail(f"round {values[0]}: beyond any case's {MAX_ROUNDS} rounds")
        if values[1] is not None:
            fields.word(values[1], where / 1, _SIDE_WORDS)
        for number in (2, 3, 4):
            recordable.duration(fields.number(values[number], where / number), where / number)


def _check_verified(raw: Any, at: At, rounds: int) -> None:
    """InputError for the first field of a stored `verified` (--bound-verify) that is not what verified_to_dict writes."""
    verified = fields.mapping(raw, at)
    fields.word(verified.get("how"), at / "how", VERIFY_HOWS)
    step = fields.optional_number(verified.get("step_s"), at / "step_s")
    if step is not None:
        recordable.duration(step, at / "step_s")
    fields.interval(verified.get("step_ci_s"), at / "step_ci_s")
    fields.optional_number(verified.get("reached"), at / "reached")
    fields.interval(verified.get("reached_ci"), at / "reached_ci")
    fields.optional_text(verified.get("note"), at / "note")
    if verified.get("past_floor") not in (None, True, False):
        (at / "past_floor").fail(f"expected true or false, got {type(verified['past_floor']).__name__}")
    pairs = fields.optional_list(verified.get("pairs"), at / "pairs")
    if len(pairs) > MAX_ROUNDS:
        (at / "pairs").fail(f"{len(pairs)} rounds, more than any case takes ({MAX_ROUNDS})")
    for index, pair in enumerate(pairs):
        values = fields.listed(pair, at / "pairs" / index)
        if len(values) != 2:
            (at / "pairs" / index).fail(f"expected [plain_s, captured_s], got {len(values)} value(s)")
        for number in (0, 1):
            recordable.duration(fields.number(values[number], at / "pairs" / index / number), at / "pairs" / index / number)
    recordable.within_own_interval(step, verified.get("step_ci_s"), at / "step_s")
    if step is not None and pairs:  # the captured step's time is the median of its rounds' (verdicts.verified)
        captured = statistics.median(pair[1] for pair in pairs)
        if not math.isclose(step, captured, rel_tol=recordable.SUMMARY_TOLERANCE, abs_tol=recordable.SAMPLE_ROUNDING_S):
            (at / "step_s").fail(f"{step:g} is not the median of the captured step's rounds ({captured:g}): {recordable.NOT_WRITTEN}")


def check_shares_cores(raw: Any, device: Any, at: At) -> None:
    """InputError where a stored bound's `shares_cores` contradicts the device of the result it sits in: a run sets it
    from the device alone (results.bound.shares_host_cores), true on a CPU and left out elsewhere, and it changes the
    reading (no slack on either side is inconclusive, not balanced) and the ceiling's words, so `false` on a CPU (a
    hand-edit that drops "on shared cores") or `true` on an accelerator is refused. Left out on a CPU is a file from
    before the field (schema 11), read as not sharing. Called after check_bound, on a well-formed bound."""
    said = fields.mapping(raw, at).get("shares_cores")
    if said is None or not isinstance(device, str):
        return
    if said is not shares_host_cores(device):
        why = "a CPU device always shares the host's cores" if shares_host_cores(device) else "only a CPU device shares them"
        (at / "shares_cores").fail(f"{str(said).lower()} on device {device!r}: {why}")


def _all_well_formed(observations: list[Any]) -> bool:
    """Whether every observation is [round, side or null, level_s, injected_s, step_s] as written, at C speed where
    it can be (a bound of many rounds holds tens of thousands)."""
    if not all(type(o) is list and len(o) == len(OBSERVATION) for o in observations):
        return False
    rounds = [o[0] for o in observations]
    if observations and not ({type(r) for r in rounds} == {int} and min(rounds) >= 0 and max(rounds) < MAX_ROUNDS):
        return False
    if not {o[1] for o in observations} <= {None, *_SIDE_WORDS}:
        return False
    return fields.all_numbers([value for o in observations for value in o[2:]], least=0)
