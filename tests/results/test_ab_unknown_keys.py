"""An `ab` file's keys held to what some `ab` schema writes, at every level its reader reads (a new user's trial): a
copy with a top-level `extra`, a case's `evil_key='<b>x</b>'` or a side's `zzz` was shown and recorded as if `ab`
had written it, where a results file's reader refuses a key no schema version writes (results.case_held)."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest

from asyncbench.errors import InputError
from asyncbench.results.ab_report import ABReport
from asyncbench.results.bound import Bound, BoundKind, Perturbed, Side, SideBound
from asyncbench.results.bound_change import changes
from asyncbench.results.labels import Label
from asyncbench.results.new_syncs import NewSync
from asyncbench.results.paired import PairedCase, PairedRatio
from asyncbench.results.paired import Side as ABSide
from asyncbench.results.syncs import SyncKind, SyncPoint
from asyncbench.verdicts.bound import TOP_OF_LEVELS

GOOD = Path(__file__).parents[1] / "hostile" / "cases" / "good" / "ab.json"


def _bound(kind: BoundKind, host_slack_s: float, device_slack_s: float) -> Bound:
    levels = (2.5e-4, 5e-4, 7.5e-4, 1e-3, 1.5e-3)
    sides = tuple(
        SideBound(side, slack, (max(slack - 2e-5, 0.0), slack + 2e-5), 1.0, (0.95, 1.05), levels)
        for side, slack in ((Side.HOST, host_slack_s), (Side.DEVICE, device_slack_s))
    )
    plain = tuple(Perturbed(r, None, 0.0, 0.0, 1e-3) for r in range(12))
    return Bound("step", kind, 1e-3, 12, sides=sides, observations=plain)


def _full() -> dict[str, Any]:
    """An `ab` file with every level a reader reads: sides, a case, a ratio, a new sync point and a bound change."""
    side = ABSide("head", "a1b2c3d4e5 (HEAD)", "python3", "3.11.4")
    row = PairedRatio("step", "variant", "s", 1e-3, 1.01e-3, 1.01, (0.99, 1.02), Label.SAME)
    point = SyncPoint("src/train.py", 12, SyncKind.CONVERSION, "torch.Tensor.item", 4.0, 3e-5, (2.7e-5, 4.3e-5))
    found = changes({"step": _bound(BoundKind.HOST, 0.0, 4e-4)}, {"step": _bound(BoundKind.DEVICE, 4e-4, 0.0)}, ["step"], TOP_OF_LEVELS, {})
    case = PairedCase(
        "work[jax,cpu]", "ok", ratios=(row,), rounds=50, blocks=10, new_syncs=(NewSync("step", point),), bound_changes=tuple(found)
    )
    base = dataclasses.replace(side, name="base")
    report = ABReport("2026-01-01T00:00:00+00:00", "0", base, side, 0.05, 0.01, False, "frozen", (case,))
    return json.loads(report.to_json())


def _at(raw: dict[str, Any], path: str) -> dict[str, Any]:
    node: Any = raw
    for step in path.split(".") if path else ():
        node = node[int(step)] if isinstance(node, list) else node[step]
    return node  # type: ignore[no-any-return]


def test_the_files_the_tests_build_read_as_they_are():
    ABReport.from_dict(_full(), "ab.json")
    ABReport.from_dict(json.loads(GOOD.read_text(encoding="utf-8")), "ab.json")


@pytest.mark.parametrize(
    ("where", "key", "named"),
    [
        ("", "extra", "extra"),
        ("base", "zzz", "base.zzz"),
        ("head", "zzz", "head.zzz"),
        ("cases.0", "evil_key", "cases[0].evil_key"),
        ("cases.0.ratios.0", "confidence_bonus", "cases[0].ratios[0].confidence_bonus"),
        ("cases.0.new_syncs.0", "why", "cases[0].new_syncs[0].why"),
        ("cases.0.new_syncs.0.point", "saved_s", "cases[0].new_syncs[0].point.saved_s"),
        ("cases.0.bound_changes.0", "flipped", "cases[0].bound_changes[0].flipped"),
        ("cases.0.bound_changes.0.head", "verified", "cases[0].bound_changes[0].head.verified"),
        ("cases.0.bound_changes.0.head.slacks.0", "most_s", "cases[0].bound_changes[0].head.slacks[0].most_s"),
    ],
)
def test_a_key_no_ab_schema_writes_is_refused_by_its_path(where: str, key: str, named: str):
    raw = _full()
    _at(raw, where)[key] = "<b>x</b>"
    with pytest.raises(InputError, match="no key any") as refused:
        ABReport.from_dict(raw, "ab.json")
    assert named in str(refused.value)
