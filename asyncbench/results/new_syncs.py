"""The sync points `ab --syncs` lists as new on head (a wait head's step reaches and base's does not), read back from an
`ab` file: each point held to what results.recordable holds a census's points to."""

from __future__ import annotations

from dataclasses import dataclass
from dataclasses import fields as dataclass_fields
from typing import Any

from asyncbench.results import case_held, fields, recordable
from asyncbench.results.fields import At
from asyncbench.results.syncs import SYNC_KINDS, SyncKind, SyncPoint, point_holds


@dataclass(frozen=True)
class NewSync:
    """A point where head's step waits and base's does not (`ab --syncs`): its variant, and the point as head's
    census has it (its file relative to head's tree)."""

    variant: str
    point: SyncPoint

    @classmethod
    def from_dict(cls, raw: Any, at: At) -> NewSync:
        """{variant, point} (schema 5), the point held to what results.recordable holds a census's points to."""
        entry = fields.mapping(raw, at)
        case_held.known_keys(entry, ENTRY_KEYS, at)
        return cls(fields.name(entry.get("variant"), at / "variant"), read_point(entry.get("point"), at / "point"))


#: every key a new sync point's entry and its point have held (schema 5 on: asdict of NewSync and SyncPoint); the
#: schema documents no extra keys, so another is an edit (results.case_held.known_keys)
ENTRY_KEYS = frozenset(entry.name for entry in dataclass_fields(NewSync))
POINT_KEYS = frozenset(entry.name for entry in dataclass_fields(SyncPoint))


def read_point(raw: Any, at: At) -> SyncPoint:
    """A sync point, each field checked."""
    point = fields.mapping(raw, at)
    case_held.known_keys(point, POINT_KEYS, at)
    interval = fields.interval(point.get("wait_ci_s"), at / "wait_ci_s")
    calls, waits = fields.number(point.get("calls_per_step"), at / "calls_per_step"), point.get("wait_s_per_step")
    if calls < 0:
        (at / "calls_per_step").fail(f"a count of waits cannot be negative ({calls:g})")
    blocked = recordable.duration(waits, at / "wait_s_per_step")
    if blocked is None:
        (at / "wait_s_per_step").fail("expected a time in seconds, got null")
    rounds = {}
    for key in ("calls_rounds", "wait_s_rounds"):
        values = fields.optional_list(point.get(key), at / key)
        for number, value in enumerate(values):
            recordable.duration(value, at / key / number)  # a count or a time: a finite number, not negative
        rounds[key] = tuple(float(value) for value in values)
    drained = fields.optional_number(point.get("drained_per_step"), at / "drained_per_step")
    point_holds(point, None, at)  # its figures the medians of its rounds, its wait within its own interval
    return SyncPoint(
        file=fields.name(point.get("file"), at / "file", empty=False),
        line=fields.count(point.get("line"), at / "line"),
        kind=SyncKind(fields.word(point.get("kind"), at / "kind", SYNC_KINDS)),
        call=fields.name(point.get("call"), at / "call"),
        calls_per_step=calls,
        wait_s_per_step=blocked,
        wait_ci_s=interval,
        drained_per_step=drained,
        calls_rounds=rounds["calls_rounds"],
        wait_s_rounds=rounds["wait_s_rounds"],
    )


def read_all(raw: Any, at: At) -> tuple[NewSync, ...] | None:
    """A case's sync points new on head; None where no census was taken."""
    if raw is None:
        return None
    return tuple(NewSync.from_dict(entry, at / index) for index, entry in enumerate(fields.listed(raw, at)))
