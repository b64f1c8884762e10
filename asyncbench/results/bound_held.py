"""A stored bound's figures held to what the fit and the verification write (results.bound_rule.check_derived calls
`check_figures` after the slacks): a hand edit that passes every shape check would otherwise be shown as measured.

- the step is the median of its unperturbed observations (verdicts.bound.fit takes it so), where the file keeps them;
- a side's slack and both ends of its interval lie within the step: the fit holds a knee past the step at the step
  (and its note says so), so a slack of 181% of the step (a step edited to 500 µs beside a slack of ≤ 907 µs) is
  no fit's;
- a side's cost past its slack lies within its own interval, or, where it has none (fewer than five rounds) or the
  bootstrap's percentile interval missed its estimate (the fit does not widen it, as it widens the slack's), it is
  the slope the fit gives from the stored observations at the stored slack (`_cost_at`: one least-squares slope per
  candidate grid point, no bootstrap and no refit of the slack). A file without observations and without an
  interval leaves it unheld: nothing to hold it to (asyncbench always stores the observations);
- a side's `levels_s` are the medians of its observations' injected lengths, one per level asked, smallest first
  (verdicts.bound._levels), where the file keeps them: a forged `[0.5]` was shown and written back out as measured;
  a file without observations keeps its levels as stored (nothing to hold them to);
- its `scale_s` (the probed step its levels are fractions of) is at least the step its levels were asked of: no
  level lies past MAX_INJECTED_SHARE of it (a scale of 0 beside levels of milliseconds is no run's), where the file
  keeps its observations (files before scale_s store none). Held to a bound, not re-derived: the sweep's shares
  (measure.perturbation.LEVELS) live above this layer, and a scale edited upwards stays within it;
- `verified.reached` is median(plain − captured over its stored pairs) / the device's slack (verdicts.verified), and
  lies within its own interval; it is absent where the writer says none (no device slack above 0, no pairs);
- `verified.note` of a timed capture is held to the forms verdicts.verified writes (`_note_held`): each of its
  "; "-joined parts begins as one of NOTE_PARTS does (a "FORGED: jit saved 9 ms" appended is none). It is held, not
  rebuilt: its writer lives above this layer (verdicts), files written before say other forms of the same figures
  (a "faster than the floor" beside a slack without an interval), and two parts are not the tool's own words at all
  (torch.compile's graph-break example, and a refused capture's reason, which is the backend's: not held).

Not held here: the bound's own `note` (its fit's parts follow the engine's own note, its rounds' budget and a side
without a delay, in words that changed from version to version) and a result's `note` and `warnings` (the backend's
and the sanity checks' lines, many writers); `show` prints them as stored.

Each is refused in one line naming the file and the key, "not what asyncbench writes".
"""

from __future__ import annotations

import math
import re
import statistics
from typing import Any, Mapping

from asyncbench.results import recordable, units
from asyncbench.results.bound import MAX_INJECTED_SHARE, BoundKind, Side, interval_of
from asyncbench.results.fields import At

#: how far a stored time may lie from the one it was computed from: stored to the nanosecond, so two apart at most
_ROUNDING_S = 2.02e-9
#: verdicts.bound's grid for the slack (GRID_POINTS) and its floor for a sum of squares (_FLAT): the cost past the
#: slack is the slope at the grid point the slack was found at (the slack itself is interpolated between points)
GRID_POINTS = 201
_FLAT = 1e-12
#: how each part of a timed capture's note begins (verdicts.verified, this version's forms and those before it):
#: `{how}` is the capture's own word ("jit saved 651 µs [0–1.48 ms] a step" after "the device's slack is ~0 […]")
NOTE_PARTS = (
    "synchronous: no ceiling to compare with",
    "no device slack measured: no ceiling to compare with",
    "whether it ran faster than the floor (step − the device's slack) is not judged",
    "faster than the floor (step − the device's slack)",
    "the device has no slack: cutting host work cannot save anything",
    "the device's slack is ",
    # a device on the host's cores (verdicts.bound_readings.NO_SHARED_CEILING): no floor, the saving in time
    "no ceiling on a device that shares the host's cores",
    "{how} saved ",
    "{how} lost ",
    "no interval for the share: it ",
    "no interval: too few rounds, or the device's slack reaches 0",
    "slower than the plain step (",
    "the plain step took ",
    # the parenthesis after a saving: "(the median of the rounds' paired savings; the sides' own medians: captured …)"
    "the sides' own medians: ",
)
#: torch.compile's caveat (backends.step_capture): after its count, an example in dynamo's own words, which may hold
#: anything, "; " included: the rest of the note is not held past it
COMPILE_CAVEAT = re.compile(r"compile: \d+ graph break\(s\): the compiled step runs partly eagerly; e\.g\. ")
#: how far a cost recomputed from the stored observations may lie from the stored one: each observation is stored to
#: the nanosecond, which on a step of microseconds moves a slope by about a thousandth; an edit moves it by more
COST_TOLERANCE = 0.01
#: how far (a share of it) a stored level may lie from the median recomputed from the stored observations, beyond
#: _ROUNDING_S: both are stored to the nanosecond and a median of two is their mean, so they agree to a few ns; a
#: millionth is that on a 1 ms level, and any edit a reader would notice moves it by far more
LEVELS_TOLERANCE = 1e-6


def check_figures(raw: Mapping[str, Any], at: At) -> None:
    """InputError (file and key, one line) for the first of a stored bound's figures its own numbers contradict (the
    module's docstring)."""
    step = float(raw["step_s"])
    observations = list(raw.get("observations") or ())
    unperturbed = [float(o[4]) for o in observations if o[1] is None]
    if unperturbed and abs(statistics.median(unperturbed) - step) > _ROUNDING_S:
        (at / "step_s").fail(
            f"{units.seconds(step)} is not the median of its unperturbed observations "
            f"({units.seconds(statistics.median(unperturbed))}): {recordable.NOT_WRITTEN}"
        )
    for name, fit in (raw.get("sides") or {}).items():
        where = at / "sides" / str(name)
        _scale_held(raw.get("scale_s"), [o for o in observations if o[1] == name], at / "scale_s")
        _within_step(fit, step, where)
        _levels_held(fit, [o for o in observations if o[1] == name], where)
        jumped = raw.get("held_at_jump") is True
        _cost_held(fit, [o for o in observations if o[1] in (None, name)], step, int(raw.get("steps_per_call") or 1), where, jumped)
    if raw.get("verified") is not None:
        _reached_held(raw, at / "verified")
        _note_held(raw["verified"], at / "verified" / "note")


def _scale_held(scale: Any, observations: list[Any], at: At) -> None:
    """No level a side's observations were asked at lies past MAX_INJECTED_SHARE of the stored `scale_s` (beyond the
    nanosecond each is stored to), where the file keeps both: the sweep's levels reach 1.5 of it, a check's at most
    MAX_INJECTED_SHARE (measure.perturbation injects no more), so a scale of 0, or of under half the step its levels
    were asked of, is no run's."""
    if scale is None or not observations:
        return
    asked = max(float(observation[2]) for observation in observations)
    if asked > MAX_INJECTED_SHARE * float(scale) + _ROUNDING_S:
        at.fail(
            f"{units.seconds(float(scale))} is not the step its levels were asked as shares of: one was asked at "
            f"{units.seconds(asked)}, past the {MAX_INJECTED_SHARE:g}× of it any level is: {recordable.NOT_WRITTEN}"
        )


def _within_step(fit: Mapping[str, Any], step: float, at: At) -> None:
    """A slack and its interval's ends lie within the step (the fit holds a knee past it at the step)."""
    if step <= 0:
        return
    interval = interval_of(fit.get("slack_ci_s"))
    for key, value in (("slack_s", float(fit["slack_s"])), *(("slack_ci_s", end) for end in interval or ())):
        if value > step + _ROUNDING_S:
            (at / key).fail(
                f"{units.seconds(value)} is {units.percent(value / step)} of the {units.seconds(step)} step: a slack lies within "
                f"the step (the fit holds one past it at the step, and says so): {recordable.NOT_WRITTEN}"
            )


def _levels_held(fit: Mapping[str, Any], observations: list[Any], at: At) -> None:
    """A side's levels are the medians of its observations' injected lengths per level asked, smallest first
    (verdicts.bound._levels), where the file keeps the side's observations."""
    if not observations:
        return  # no observations: nothing to hold them to
    by_level: dict[float, list[float]] = {}
    for observation in observations:
        by_level.setdefault(float(observation[2]), []).append(float(observation[3]))
    expected = sorted(statistics.median(lengths) for lengths in by_level.values())
    stored = [float(level) for level in fit.get("levels_s") or ()]
    if len(stored) != len(expected) or any(
        abs(have - want) > _ROUNDING_S + LEVELS_TOLERANCE * abs(want) for have, want in zip(stored, expected, strict=True)
    ):
        said = ", ".join(units.seconds(level) for level in stored) or "none"
        found = ", ".join(units.seconds(level) for level in expected)
        (at / "levels_s").fail(
            f"[{said}] are not the medians of its observations' injected lengths per level ([{found}]): {recordable.NOT_WRITTEN}"
        )


def _cost_held(fit: Mapping[str, Any], observations: list[Any], step: float, steps_per_call: int, at: At, jumped: bool = False) -> None:
    """The cost past the slack within its own interval, else the fit's slope from the stored observations (`jumped`:
    the bound's `held_at_jump`, where a slack may have been held below the knee its cost is the slope past)."""
    cost = float(fit["cost_past"])
    interval = interval_of(fit.get("cost_past_ci"))
    if interval is not None:
        slack = recordable.SUMMARY_TOLERANCE * max(abs(interval[0]), abs(interval[1]))
        if interval[0] - slack <= cost <= interval[1] + slack:
            return
    perturbed = [o for o in observations if o[1] is not None]
    if not perturbed or step <= 0:
        if interval is not None:
            (at / "cost_past").fail(
                f"{cost:.3g} lies outside its own interval [{interval[0]:.3g}–{interval[1]:.3g}], and no observations "
                f"give it: {recordable.NOT_WRITTEN}"
            )
        return  # no interval, no observations: nothing to hold it to
    candidates = _costs(observations, float(fit["slack_s"]) / step, step, 1.0 / max(steps_per_call, 1), jumped)
    if not any(abs(cost - found) <= COST_TOLERANCE * max(1.0, abs(found)) for found in candidates):
        said = f"lies outside its own interval [{interval[0]:.3g}–{interval[1]:.3g}] and " if interval is not None else ""
        near = min(candidates, key=lambda found: abs(found - cost))
        # the slack or the cost was edited: which, the pair cannot tell (a trial edited slack_s and read of cost_past)
        slack_s = units.seconds(float(fit["slack_s"]))
        (at / "cost_past").fail(
            f"{cost:.3g} {said}is not the slope its observations give past its slack_s of {slack_s} ({near:.3g}): "
            f"the cost or the slack is {recordable.NOT_WRITTEN}"
        )


def _costs(observations: list[Any], share: float, scale: float, serial: float, jumped: bool = False) -> list[float]:
    """The slopes the fit can have given at a slack of `share` of the step: at the grid points within a step of it
    (the slack is interpolated between them), or at every point at or past the step where the slack was held at it,
    or at every point at or past the slack where it may have been held at a jump below its knee (`jumped`:
    verdicts.bound_jumps; the cost is then the slope past the knee, which the file does not store)."""
    longest = max(float(o[3]) for o in observations) / scale
    if longest <= 0:
        return [serial]
    width = longest / (GRID_POINTS - 1)
    grid = [index * width for index in range(GRID_POINTS)]
    if share >= 1 - 1e-6:  # held at the step: the knee was at the step or past it
        points = [point for point in grid if point >= 1 - width]
    elif jumped:  # held at a level that slowed the step: the knee was there or past it
        points = [point for point in grid if point >= share - 1.5 * width]
    else:
        points = [point for point in grid if abs(point - share) <= 1.5 * width]
    return [_cost_at(observations, point, scale, serial) for point in points or [min(grid, key=lambda p: abs(p - share))]]


def _cost_at(observations: list[Any], knee: float, scale: float, serial: float) -> float:
    """verdicts.bound._profile's slope at one knee (units of the step), every round once: the within-round least
    squares of step − serial·d against max(0, d − knee), clamped at 0, with the serial share added back."""
    sums: dict[Any, list[float]] = {}
    for observation in observations:
        d = float(observation[3]) / scale
        y = float(observation[4]) / scale - serial * d
        x = max(d - knee, 0.0)
        total = sums.setdefault(observation[0], [0.0, 0.0, 0.0, 0.0, 0.0])
        total[0] += 1
        total[1] += x
        total[2] += y
        total[3] += x * x
        total[4] += x * y
    xx = sum(sxx - sx * sx / n for n, sx, _, sxx, _ in sums.values())
    xy = sum(sxy - sx * sy / n for n, sx, sy, _, sxy in sums.values())
    return max(xy, 0.0) / max(xx, _FLAT) + serial


def _reached_held(raw: Mapping[str, Any], at: At) -> None:
    """`reached` = median(plain − captured) / the device's slack, from the stored pairs (verdicts.verified)."""
    verified = raw["verified"]
    reached = verified.get("reached")
    if reached is None:
        return
    reached = float(reached)
    recordable.within_own_interval(reached, verified.get("reached_ci"), at / "reached")
    device = (raw.get("sides") or {}).get(str(Side.DEVICE))
    slack = None if device is None else float(device["slack_s"])
    if str(raw["bound"]) == str(BoundKind.SYNCHRONOUS) or slack is None or slack <= 0 or not verified.get("pairs"):
        why = "no pairs stored" if slack is not None and slack > 0 else "no device slack above 0 to be a share of"
        (at / "reached").fail(f"{units.percent(reached)} with {why}: {recordable.NOT_WRITTEN}")
    saving = statistics.median(float(plain) - float(captured) for plain, captured in verified["pairs"])
    expected = saving / slack
    tolerance = (_ROUNDING_S + abs(expected) * _ROUNDING_S) / slack + recordable.SUMMARY_TOLERANCE * abs(expected)
    if not math.isclose(reached, expected, rel_tol=0.0, abs_tol=tolerance):
        (at / "reached").fail(
            f"{units.percent(reached)} is not its saving over the device's slack ({units.seconds(saving)} of "
            f"{units.seconds(slack)}: {units.percent(expected)}): {recordable.NOT_WRITTEN}"
        )


def _note_held(verified: Mapping[str, Any], at: At) -> None:
    """A timed capture's note, part by part, of a form verdicts.verified writes (the module's docstring)."""
    note, how = verified.get("note"), str(verified["how"])
    if note is None or verified.get("step_s") is None:
        return  # none, or a refused capture's reason: the backend's words
    starts = tuple(part.replace("{how}", how) for part in NOTE_PARTS)
    rest = str(note)
    while rest:
        caveat = COMPILE_CAVEAT.match(rest) if how == "compile" else None
        if caveat is not None:
            return
        if not rest.startswith(starts):
            part = rest.split("; ", 1)[0]
            at.fail(f"{part[:80]!r} is no part of a note `--bound-verify` writes: {recordable.NOT_WRITTEN}")
        _, _, rest = rest.partition("; ")
