"""What bounds a variant's step on base and on head, and whether it flipped (`ab --bound`, issue 52).

Each side of `ab --bound` takes the case's perturbation rounds once, as `run --bound` takes them (engine.side_process),
and fits each variant's bound (results.bound.Bound, verdicts.bound.fit). A `BoundChange` keeps, per variant, what
each side read and each side's slack intervals, and says what changed:

- FLIPPED: both readings are decided (HOST, DEVICE or BALANCED) and differ: host-bound on base, device-bound on head;
- UNCHANGED: both decided, the same;
- UNDECIDED: one side or both read INCONCLUSIVE (their intervals did not decide): nothing is claimed, a flip least
  of all: an inconclusive reading may be either side's, and a flip from it would be a guess;
- NOT_MEASURED: a side has no reading to compare (a synchronous backend: the host is the device; no step to
  perturb; one step a sample), said in one line (`why`).

The change is a function of the two readings (`change_of`), so a file that states another is refused on reading it,
as is any kind, number or interval off its vocabulary: the file may come from anywhere (results.ab_report).
Stored in an `ab` file (schema 6) as a case's `bound_changes`: a list of {variant, change, base, head, why}; null
where `--bound` was not asked for, as in older files.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

from asyncbench.results import bound_rule, case_held, fields, recordable
from asyncbench.results.bound import SIDES, Bound, BoundKind, Side
from asyncbench.results.bound_shape import MAX_ROUNDS
from asyncbench.results.fields import At
from asyncbench.results.word import Word


class Change(Word):
    """What happened to a variant's bound between base and head."""

    FLIPPED = "flipped"  # both decided, and they differ
    UNCHANGED = "unchanged"  # both decided, the same
    UNDECIDED = "undecided"  # a side's reading is INCONCLUSIVE: no flip is claimed
    NOT_MEASURED = "not measured"  # a side has no reading (synchronous, no step to perturb): `why` says why


CHANGES = tuple(str(change) for change in Change)
#: the readings a flip may be stated from: each says which side sets the pace, or that neither does
DECIDED = (BoundKind.HOST, BoundKind.DEVICE, BoundKind.BALANCED)
_KINDS = tuple(str(kind) for kind in BoundKind)
_SIDE_WORDS = tuple(str(side) for side in SIDES)


@dataclass(frozen=True)
class Slack:
    """One measured side's slack on one revision, with its 95% interval (None: too few rounds for one)."""

    side: Side
    slack_s: float
    slack_ci_s: tuple[float, float] | None
    #: the largest delay injected, where the slack's interval's low end reaches it (it is then at least that: '≥ x');
    #: None: it does not
    at_least_s: float | None = None


@dataclass(frozen=True)
class Reading:
    """What one revision's perturbation rounds read of a variant: the reading, its step, its rounds, each side's slack,
    and why the reading is partial or absent (the bound's note)."""

    bound: BoundKind
    step_s: float
    rounds: int
    slacks: tuple[Slack, ...] = ()
    note: str | None = None
    #: the shortest unperturbed step a resample of its rounds can have (results.bound_rule.shortest_step): a host- or
    #: device-bound reading is held to its slack intervals by the margin of it, as a results file's is. None: no
    #: unperturbed sample (the fit then reads nothing)
    shortest_step_s: float | None = None

    @classmethod
    def of(cls, bound: Bound, top_share: float) -> Reading:
        """A bound as `ab` keeps it: its reading and slacks (its observations stay with the side that took them).
        `top_share`: a slack whose interval's low end is within this share of the largest delay injected reaches it
        (verdicts.bound.TOP_OF_LEVELS)."""
        slacks = []
        for fit in bound.sides:
            top = max(fit.levels_s, default=0.0)
            # at least the top only where the interval's low end reaches it (verdicts.bound.at_least_top), not the
            # estimate alone: an interval reaching 0 beside '≥ x' said "at least" what the data do not
            low = fit.slack_s if fit.slack_ci_s is None else fit.slack_ci_s[0]
            reaches = top > 0 and low >= top_share * top
            slacks.append(Slack(fit.side, fit.slack_s, fit.slack_ci_s, top if reaches else None))
        stored = [(o.round, o.side, o.level_s, o.injected_s, o.step_s) for o in bound.observations]
        shortest = bound_rule.shortest_step(stored) if any(o.side is None for o in bound.observations) else None
        return cls(bound.bound, bound.step_s, bound.rounds, tuple(slacks), bound.note, shortest)

    def slack(self, side: Side) -> Slack | None:
        return next((found for found in self.slacks if found.side == side), None)


def change_of(base: BoundKind | None, head: BoundKind | None) -> Change:
    """The change between two readings (None: that side has none): a flip only between two decided readings."""
    if base is None or head is None or BoundKind.SYNCHRONOUS in (base, head):
        return Change.NOT_MEASURED
    if base not in DECIDED or head not in DECIDED:
        return Change.UNDECIDED
    return Change.FLIPPED if base != head else Change.UNCHANGED


@dataclass(frozen=True)
class BoundChange:
    """One variant's bound on base and on head, and what changed (`change_of` their readings)."""

    variant: str
    change: Change
    base: Reading | None
    head: Reading | None
    #: why no flip can be stated (NOT_MEASURED, UNDECIDED), in one line; None for FLIPPED and UNCHANGED
    why: str | None = None

    @classmethod
    def of(cls, variant: str, base: Reading | None, head: Reading | None, why: str | None = None) -> BoundChange:
        """The change between two readings; `why`: what a missing reading lacks (the side's note)."""
        change = change_of(base.bound if base else None, head.bound if head else None)
        if change == Change.NOT_MEASURED:
            why = why or _first_note(base, head) or "no reading on one side"
        elif change == Change.UNDECIDED:
            undecided = [name for name, side in (("base", base), ("head", head)) if side and side.bound not in DECIDED]
            why = f"{' and '.join(undecided)}: INCONCLUSIVE, the slack intervals do not decide: no flip can be stated"
        else:
            why = None
        return cls(variant, change, base, head, why)

    def to_dict(self) -> dict[str, Any]:
        """The change as an `ab` file stores it."""
        return {
            "variant": self.variant,
            "change": str(self.change),
            "base": _reading_to_dict(self.base),
            "head": _reading_to_dict(self.head),
            "why": fields.storable(self.why),
        }

    @classmethod
    def from_dict(cls, raw: Any, at: At) -> BoundChange:
        """A variant's change read back, every field checked, its change held to what the two readings give."""
        entry = fields.mapping(raw, at)
        case_held.known_keys(entry, CHANGE_KEYS, at)
        variant = fields.name(entry.get("variant"), at / "variant", empty=False)
        change = Change(fields.word(entry.get("change"), at / "change", CHANGES))
        base, head = (_reading(entry.get(side), at / side) for side in ("base", "head"))
        implied = change_of(base.bound if base else None, head.bound if head else None)
        if change != implied:
            (at / "change").fail(
                f"{str(change)!r} from {_said(base)} on base and {_said(head)} on head, which read {str(implied)!r}: "
                "a flip is stated only between two decided readings"
            )
        # held to the rule it was written by, then read by the rule now: a side with room is never the bound
        # (bound_rule.reread), so a file from before that rule states no flip of it
        now = tuple(None if side is None else _reread(side) for side in (base, head))
        if now != (base, head):
            return cls.of(variant, now[0], now[1], fields.optional_text(entry.get("why"), at / "why"))
        return cls(variant, change, base, head, fields.optional_text(entry.get("why"), at / "why"))


def _first_note(*readings: Reading | None) -> str | None:
    return next((reading.note for reading in readings if reading is not None and reading.note), None)


def _said(reading: Reading | None) -> str:
    return "no reading" if reading is None else str(reading.bound)


def _reread(reading: Reading) -> Reading:
    """A stored reading as the rule reads it now from its slack intervals (bound_rule.reread, bound_rule.reworded,
    bound_rule.one_side_reworded)."""
    intervals = {str(slack.side): slack.slack_ci_s for slack in reading.slacks}
    kind = BoundKind(bound_rule.reread(str(reading.bound), intervals, reading.step_s))
    note = bound_rule.reworded(reading.note, str(kind), str(reading.bound))
    if kind == BoundKind.INCONCLUSIVE:  # "no slack worth naming" of one side only where its interval shows it
        note = bound_rule.one_side_reworded(note, intervals, reading.step_s)
    if (kind, note) == (reading.bound, reading.note):
        return reading
    return Reading(kind, reading.step_s, reading.rounds, reading.slacks, note, reading.shortest_step_s)


def _reading_to_dict(reading: Reading | None) -> dict[str, Any] | None:
    if reading is None:
        return None
    return {
        "bound": str(reading.bound),
        "step_s": reading.step_s,
        "rounds": reading.rounds,
        "slacks": [
            {
                "side": str(slack.side),
                "slack_s": slack.slack_s,
                "slack_ci_s": None if slack.slack_ci_s is None else list(slack.slack_ci_s),
                "at_least_s": slack.at_least_s,
            }
            for slack in reading.slacks
        ],
        "note": fields.storable(reading.note),
        "shortest_step_s": reading.shortest_step_s,
    }


#: every key a bound change, a side's reading and a slack have held (schema 6 on: BoundChange.to_dict,
#: _reading_to_dict, each its type's fields); the schema documents no extra keys, so another is an edit
CHANGE_KEYS = frozenset({"variant", "change", "base", "head", "why"})
READING_KEYS = frozenset({"bound", "step_s", "rounds", "slacks", "note", "shortest_step_s"})
SLACK_KEYS = frozenset({"side", "slack_s", "slack_ci_s", "at_least_s"})


def _reading(raw: Any, at: At) -> Reading | None:
    """One side's reading, checked: its kind, a step and slacks that are times, an interval that holds its slack,
    a side named once, and a reading its own slack intervals can give (results.bound_rule, as a results file's)."""
    if raw is None:
        return None
    reading = fields.mapping(raw, at)
    case_held.known_keys(reading, READING_KEYS, at)
    kind = BoundKind(fields.word(reading.get("bound"), at / "bound", _KINDS))
    step_s = _time(reading.get("step_s"), at / "step_s")
    rounds = fields.count(reading.get("rounds"), at / "rounds")
    if rounds > MAX_ROUNDS:
        (at / "rounds").fail(f"{rounds} perturbation rounds is more than any case takes ({MAX_ROUNDS})")
    slacks: list[Slack] = []
    for index, raw_slack in enumerate(fields.optional_list(reading.get("slacks"), at / "slacks")):
        slacks.append(_slack(raw_slack, at / "slacks" / index, {str(found.side) for found in slacks}))
    if step_s <= 0 and (rounds > 0 or slacks):
        (at / "step_s").fail(f"a step of {step_s:g} s with {rounds} round(s) and {len(slacks)} slack(s): a measured step takes time")
    shortest = recordable.duration(reading.get("shortest_step_s"), at / "shortest_step_s")
    if shortest is None and kind in (BoundKind.HOST, BoundKind.DEVICE) and len(slacks) == len(SIDES):
        (at / "shortest_step_s").fail(
            f"missing: a {kind}-bound reading of two sides is held to their slack intervals by a margin of the shortest step its rounds had"
        )
    intervals = {str(slack.side): slack.slack_ci_s for slack in slacks}
    bound_rule.check_reading(str(kind), intervals, rounds, step_s, shortest or 0.0, at / "bound", at / "slacks")
    return Reading(kind, step_s, rounds, tuple(slacks), fields.optional_text(reading.get("note"), at / "note"), shortest)


def _slack(raw: Any, at: At, seen: set[str]) -> Slack:
    slack = fields.mapping(raw, at)
    case_held.known_keys(slack, SLACK_KEYS, at)
    side = fields.word(slack.get("side"), at / "side", _SIDE_WORDS)
    if side in seen:
        (at / "side").fail(f"the {side}'s slack is stated twice")
    slack_s = _time(slack.get("slack_s"), at / "slack_s")
    interval = fields.interval(slack.get("slack_ci_s"), at / "slack_ci_s")
    bound_rule.check_slack(slack_s, interval, at)  # within its interval, which lies at or above 0, as a results file's
    at_least = recordable.duration(slack.get("at_least_s"), at / "at_least_s")
    return Slack(Side(side), slack_s, interval, at_least)


def _time(value: Any, at: At) -> float:
    """A time in seconds: a finite number, not negative, never null."""
    seconds = recordable.duration(fields.number(value, at), at)
    assert seconds is not None  # fields.number refused null
    return seconds


def changes(
    base: Mapping[str, Bound], head: Mapping[str, Bound], variants: list[str], top_share: float, why: Mapping[str, str | None]
) -> tuple[BoundChange, ...]:
    """Each of `variants`' change from base's bounds to head's; `why`: each side's note where it has no bound at all
    (no step to perturb), said for a variant neither side could read."""
    found = []
    for variant in variants:
        readings = [Reading.of(side[variant], top_share) if variant in side else None for side in (base, head)]
        missing = [
            f"{name}: {why.get(name) or 'no bound taken'}"
            for name, reading in zip(("base", "head"), readings, strict=True)
            if reading is None
        ]
        alike = len(missing) == 2 and why.get("base") == why.get("head") and why.get("base")
        said = why.get("base") if alike else "; ".join(missing) or None
        found.append(BoundChange.of(variant, readings[0], readings[1], said))
    return tuple(found)
