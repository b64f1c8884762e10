"""What `ab --syncs` and `ab --bound` compare between the two sides of a case, from each side's information rounds
(taken once per case, apart from the timed blocks): the sync points new on head, each variant's bound on base and on
head and whether it flipped, and a side's answer held to a results file's shape (the side runs the user's code in
its own revision, so its answer is read as any file is). The pairing (engine.paired) asks for them as a case ends."""

from __future__ import annotations

import dataclasses
import linecache
import os
from typing import Any, Callable, Mapping, Sequence

from asyncbench.results import fields
from asyncbench.results.bound import Bound, bound_from_dict
from asyncbench.results.bound_change import BoundChange, changes
from asyncbench.results.bound_shape import check_bound
from asyncbench.results.fields import At
from asyncbench.results.new_syncs import NewSync
from asyncbench.results.syncs import Census, SyncPoint
from asyncbench.verdicts import bound as bounds
from asyncbench.verdicts import syncs


def bound_changes(taken: Mapping[str, tuple[dict[str, Bound], str | None]], names: Sequence[str]) -> tuple[BoundChange, ...]:
    """Each sampled variant's bound on base and on head, and whether it flipped (results.bound_change)."""
    (base, base_note), (head, head_note) = taken["base"], taken["head"]
    return changes(base, head, list(names), bounds.TOP_OF_LEVELS, {"base": base_note, "head": head_note})


def new_syncs(censuses: Mapping[str, Mapping[str, Census]], trees: Mapping[str, str | None]) -> tuple[NewSync, ...]:
    """The points where head's step waits and base's does not: compared by file (relative to each side's tree),
    kind, call and the line's source, so that a line moved by an edit above it is not new."""
    base_key, head_key = (_sync_key(trees[name]) for name in ("base", "head"))
    found = syncs.new_on_head(censuses["base"], censuses["head"], base_key, head_key)
    relative = _relative(trees["head"])
    return tuple(NewSync(variant, dataclasses.replace(point, file=relative(point.file))) for variant, point in found)


def bounds_read(taken: Any, side: str) -> tuple[dict[str, Bound], str | None]:
    """A side's answer to "bound": each variant's bound, held to the shape a results file's is (check_bound), and why
    there is none; InputError for anything off (the side runs the user's code in its own revision)."""
    at = At(f"the {side} side's bounds")
    answer = fields.mapping(taken, at)
    found = {}
    for name, raw in fields.optional_mapping(answer.get("bounds"), at / "bounds").items():
        check_bound(raw, at / "bounds" / name)
        found[name] = bound_from_dict(name, raw)
    return found, fields.optional_text(answer.get("note"), at / "note")


def _relative(tree: str | None) -> Callable[[str], str]:
    """A side's file relative to its tree (or to the current folder, the working tree's), where it is inside it."""
    root = tree or os.getcwd()

    def relative(file: str) -> str:
        inside = os.path.relpath(file, root) if os.path.isabs(file) else file
        return file if inside.startswith(os.pardir) else inside

    return relative


def _sync_key(tree: str | None) -> Callable[[SyncPoint], tuple[str, str, str, str]]:
    """What a sync point is across revisions: its file within the side's tree, kind, call and the line's source
    (its number where the source cannot be read)."""
    relative = _relative(tree)
    return lambda point: (
        relative(point.file),
        str(point.kind),
        point.call,
        linecache.getline(point.file, point.line).strip() or str(point.line),
    )
