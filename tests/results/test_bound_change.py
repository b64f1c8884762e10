"""`ab --bound`: what changed between base's bound and head's (results.bound_change), and how an `ab` file keeps it.

A flip is stated only between two decided readings; an INCONCLUSIVE side makes the variant undecided, a synchronous
one not measured with one line why. The file round trip keeps every figure, an older file (schema 5) still reads,
and a tampered change (a flip claimed from an inconclusive reading, an unknown kind, a number that is no time) is
an InputError naming the key."""

from __future__ import annotations

import copy
import dataclasses
import json
from typing import Any

import pytest

from asyncbench.errors import InputError
from asyncbench.results.ab_report import AB_SCHEMA_VERSION, ABReport
from asyncbench.results.bound import Bound, BoundKind, Perturbed, Side, SideBound
from asyncbench.results.bound_change import BoundChange, Change, Reading, change_of, changes
from asyncbench.results.labels import Label
from asyncbench.results.paired import PairedCase, PairedRatio
from asyncbench.results.paired import Side as ABSide
from asyncbench.verdicts.bound import SYNCHRONOUS_NOTE, TOP_OF_LEVELS

HOST, DEVICE, BALANCED, INCONCLUSIVE, SYNCHRONOUS = (
    BoundKind.HOST,
    BoundKind.DEVICE,
    BoundKind.BALANCED,
    BoundKind.INCONCLUSIVE,
    BoundKind.SYNCHRONOUS,
)


def _bound(kind: BoundKind, host_slack_s: float = 0.0, device_slack_s: float = 4e-4, note: str | None = None) -> Bound:
    """A 1 ms step's bound with both sides fitted (levels up to 1.5 ms), or none for a synchronous backend."""
    levels = (2.5e-4, 5e-4, 7.5e-4, 1e-3, 1.5e-3)
    sides = tuple(
        SideBound(side, slack, (max(slack - 2e-5, 0.0), slack + 2e-5), 1.0, (0.95, 1.05), levels)
        for side, slack in ((Side.HOST, host_slack_s), (Side.DEVICE, device_slack_s))
    )
    if kind == SYNCHRONOUS:
        return Bound("step", kind, 1e-3, 0, note=note or SYNCHRONOUS_NOTE)
    plain = tuple(Perturbed(r, None, 0.0, 0.0, 1e-3) for r in range(12))  # each round's unperturbed sample
    return Bound("step", kind, 1e-3, 12, sides=sides, note=note, observations=plain)


@pytest.mark.parametrize(
    ("base", "head", "change"),
    [
        (HOST, DEVICE, Change.FLIPPED),
        (DEVICE, HOST, Change.FLIPPED),
        (HOST, BALANCED, Change.FLIPPED),
        (BALANCED, DEVICE, Change.FLIPPED),
        (HOST, HOST, Change.UNCHANGED),
        (BALANCED, BALANCED, Change.UNCHANGED),
        (INCONCLUSIVE, DEVICE, Change.UNDECIDED),
        (HOST, INCONCLUSIVE, Change.UNDECIDED),
        (INCONCLUSIVE, INCONCLUSIVE, Change.UNDECIDED),
        (SYNCHRONOUS, SYNCHRONOUS, Change.NOT_MEASURED),
        (None, HOST, Change.NOT_MEASURED),
    ],
)
def test_a_flip_is_stated_only_between_two_decided_readings(base, head, change):
    assert change_of(base, head) == change


def test_an_inconclusive_side_is_undecided_and_says_which_side():
    (found,) = changes({"step": _bound(INCONCLUSIVE)}, {"step": _bound(DEVICE, 4e-4, 0.0)}, ["step"], TOP_OF_LEVELS, {})
    assert found.change == Change.UNDECIDED
    assert found.why is not None
    assert found.why.startswith("base: INCONCLUSIVE")
    assert "no flip" in found.why
    assert found.base is not None
    assert found.head is not None
    assert found.head.slack(Side.HOST) is not None


def test_a_flip_keeps_each_sides_slack_intervals():
    (found,) = changes({"step": _bound(HOST, 0.0, 4e-4)}, {"step": _bound(DEVICE, 4e-4, 0.0)}, ["step"], TOP_OF_LEVELS, {})
    assert (found.change, found.why) == (Change.FLIPPED, None)
    assert found.base is not None
    assert found.head is not None
    assert (found.base.bound, found.head.bound) == (HOST, DEVICE)
    base_device = found.base.slack(Side.DEVICE)
    assert base_device is not None
    assert base_device.slack_ci_s == pytest.approx((3.8e-4, 4.2e-4))
    head_host = found.head.slack(Side.HOST)
    assert head_host is not None
    assert head_host.slack_s == pytest.approx(4e-4)


def test_a_synchronous_backend_or_no_step_to_perturb_is_not_measured_in_one_line():
    (synchronous,) = changes({"step": _bound(SYNCHRONOUS)}, {"step": _bound(SYNCHRONOUS)}, ["step"], TOP_OF_LEVELS, {})
    assert (synchronous.change, synchronous.why) == (Change.NOT_MEASURED, SYNCHRONOUS_NOTE)
    why = "--bound measures step-form workloads"
    (builtin,) = changes({}, {}, ["loop"], TOP_OF_LEVELS, {"base": why, "head": why})
    assert (builtin.change, builtin.why, builtin.base, builtin.head) == (Change.NOT_MEASURED, why, None, None)
    (one_sided,) = changes({}, {"step": _bound(HOST)}, ["step"], TOP_OF_LEVELS, {"base": why})
    assert one_sided.change == Change.NOT_MEASURED
    assert one_sided.why == f"base: {why}"


def test_a_slack_that_reaches_the_largest_delay_is_kept_as_at_least_that():
    reading = Reading.of(_bound(DEVICE, host_slack_s=1.5e-3, device_slack_s=0.0), TOP_OF_LEVELS)
    host = reading.slack(Side.HOST)
    assert host is not None
    assert host.at_least_s == pytest.approx(1.5e-3)
    device = reading.slack(Side.DEVICE)
    assert device is not None
    assert device.at_least_s is None


def test_a_slack_at_the_top_whose_interval_reaches_lower_is_not_kept_as_at_least_it():
    """As `run --bound`'s table (report.bound.slack): '≥ x' only where the interval's low end reaches the top; an
    estimate at the top whose interval reaches 0 is said with its interval ('~0 [≤ x]'), not '≥ x'."""
    found = _bound(DEVICE, host_slack_s=1.5e-3, device_slack_s=0.0)
    host = dataclasses.replace(found.sides[0], slack_ci_s=(0.0, 1.5e-3))
    reading = Reading.of(dataclasses.replace(found, sides=(host, found.sides[1])), TOP_OF_LEVELS)
    kept = reading.slack(Side.HOST)
    assert kept is not None
    assert kept.at_least_s is None


# --- the `ab` file ----------------------------------------------------------------------------------------------


def _report(bound_changes: tuple[BoundChange, ...] | None) -> ABReport:
    side = ABSide("head", "working tree", "python", "3.11")
    row = PairedRatio("step", "variant", "s", 1e-3, 1e-3, 1.0, (0.99, 1.01), Label.SAME)
    case = PairedCase("work[jax,cpu]", "ok", ratios=(row,), rounds=50, blocks=10, bound_changes=bound_changes)
    return ABReport("2026-01-01T00:00:00+00:00", "0", side, side, 0.05, 0.01, False, "frozen", (case,))


def _flipped() -> tuple[BoundChange, ...]:
    base, head = _bound(HOST, 0.0, 4e-4, note="a note\x1b[31m"), _bound(DEVICE, 4e-4, 0.0)
    return changes({"step": base}, {"step": head}, ["step"], TOP_OF_LEVELS, {})


def _written(bound_changes: tuple[BoundChange, ...] | None) -> dict[str, Any]:
    return json.loads(_report(bound_changes).to_json())


def test_the_changes_round_trip_through_an_ab_file():
    raw = _written(_flipped())
    assert raw["schema_version"] == AB_SCHEMA_VERSION >= 6
    (case,) = ABReport.from_dict(raw, "ab.json").cases
    assert case.bound_changes is not None
    (read,) = case.bound_changes
    (written,) = _flipped()
    assert read.change == written.change == Change.FLIPPED
    assert read.head == written.head
    assert read.base is not None
    assert read.base.note == "a note\\x1b[31m"
    assert written.base is not None
    assert read.base.slacks == written.base.slacks


def test_an_older_ab_file_without_bounds_still_reads():
    raw = _written(None)
    assert raw["cases"][0]["bound_changes"] is None
    raw["schema_version"] = 5
    del raw["cases"][0]["bound_changes"]
    (case,) = ABReport.from_dict(raw, "old.json").cases
    assert case.bound_changes is None


def _tampered(change: Any) -> dict[str, Any]:
    raw = _written(_flipped())
    change(raw["cases"][0]["bound_changes"][0])
    return raw


@pytest.mark.parametrize(
    ("tamper", "key", "said"),
    [
        (lambda c: c["base"].update(bound="cpu-bound"), "base.bound", "is not one of"),
        (lambda c: c["head"].update(bound="inconclusive"), "change", "a flip is stated only between two decided readings"),
        (lambda c: c.update(change="unchanged"), "change", "a flip is stated only"),
        (lambda c: c.update(change="reversed"), "change", "is not one of"),
        (lambda c: c["base"]["slacks"][0].update(slack_s=-1e-3), "slack_s", "cannot be negative"),
        (lambda c: c["base"]["slacks"][0].update(slack_s="fast"), "slack_s", "expected a number"),
        (lambda c: c["base"]["slacks"][0].update(slack_ci_s=[2e-3, 1e-3]), "slack_ci_s", "is above high"),
        (lambda c: c["head"]["slacks"][1].update(side="host"), "side", "stated twice"),
        (lambda c: c["head"].update(step_s=float("inf")), "step_s", "finite"),
        (lambda c: c["head"].update(rounds=10**9), "rounds", "more than any case takes"),
        (lambda c: c["head"].update(slacks={"host": 1}), "slacks", "expected a list"),
    ],
)
def test_a_tampered_change_is_one_line_naming_its_key(tamper, key, said):
    raw = _tampered(tamper)
    with pytest.raises(InputError) as raised:
        ABReport.from_dict(copy.deepcopy(raw), "ab.json")
    shown = str(raised.value)
    assert "\n" not in shown
    assert said in shown
    assert key in shown
    assert "bound_changes" in shown


def test_each_sides_reading_is_held_to_its_own_slack_intervals_as_a_results_file_is():
    # issue 52: host [0-20.7 µs] and device [0-102 µs] of a 2.28 ms step read balanced; edited to host, it was a flip
    raw = _written(_flipped())
    change = raw["cases"][0]["bound_changes"][0]
    assert change["base"]["shortest_step_s"] == pytest.approx(1e-3)
    change["base"].update(
        bound="balanced",
        step_s=0.00228,
        shortest_step_s=0.00221,
        slacks=[
            {"side": "host", "slack_s": 0.0000051, "slack_ci_s": [0.0, 0.0000207], "at_least_s": None},
            {"side": "device", "slack_s": 0.0000402, "slack_ci_s": [0.0, 0.000102], "at_least_s": None},
        ],
    )
    (case,) = ABReport.from_dict(copy.deepcopy(raw), "ab.json").cases  # balanced → device-bound: a flip
    assert case.bound_changes is not None
    assert case.bound_changes[0].change == Change.FLIPPED
    change["base"]["bound"] = "host"
    with pytest.raises(InputError, match=r"bound_changes\[0\]\.base\.bound: reads host, but its host slack \[0 ns–20\.7 µs\]"):
        ABReport.from_dict(copy.deepcopy(raw), "ab.json")
