"""A stored bound's figures held to what the fit and the verification write (results.bound_held): fitted bounds and
verifications read back as written, and a trial's hand edits (a cost past its slack outside its interval or not its
observations' slope, a slack past the step, a `reached` its pairs contradict) are refused in one line."""

from __future__ import annotations

import copy
import dataclasses
import json
from typing import Any

import pytest

from asyncbench.results import schema
from asyncbench.results.bound import Bound, BoundKind, Perturbed, Side
from asyncbench.results.schema import Report
from asyncbench.verdicts import bound as fitting
from asyncbench.verdicts import verified
from tests.support.bounds import host_bound, result_with, verified_host_bound
from tests.support.helpers import report_of
from tests.verdicts.test_bound import STEP_S, STEPS, planted


def _fitted(rounds: int, seed: int = 0, host: float = 0.6, device: float = 1.0) -> Bound:
    observations, _ = planted(host, device, rounds=rounds, seed=seed)
    return fitting.fit("a", observations, True, steps_per_call=STEPS)


def _held_at_the_step() -> Bound:
    """The trial's one round whose device knee lay at 133% of the step: its slack held at the step."""
    observations = [Perturbed(0, None, 0.0, 0.0, STEP_S)]
    for level in (0.5, 1.0, 1.5, 2.0):
        injected = level * STEP_S
        observations.append(Perturbed(0, Side.HOST, injected, injected, STEP_S + injected))
        observations.append(Perturbed(0, Side.DEVICE, injected, injected, STEP_S + injected / STEPS + max(0.0, injected - 1.33 * STEP_S)))
    return fitting.fit("a", observations, True, steps_per_call=STEPS)


def _raw(bound: Bound) -> dict[str, Any]:
    return json.loads(report_of([result_with(bound)]).to_json())


def _reads(raw: dict[str, Any]) -> Bound:
    [result] = Report.from_dict(copy.deepcopy(raw), "r.json").results
    return result.bound["a"]


def _refused(raw: dict[str, Any]) -> str:
    with pytest.raises(schema.ResultsFileError) as refused:
        Report.from_dict(copy.deepcopy(raw), "hostile.json")
    message = str(refused.value)
    assert "hostile.json" in message
    assert "\n" not in message
    return message


@pytest.mark.parametrize("rounds, seed", [(1, 0), (3, 1), (4, 2), (6, 3), (30, 4)])
def test_fitted_bounds_with_and_without_intervals_read_back_as_written(rounds, seed):
    fitted = _fitted(rounds, seed)
    raw = _raw(fitted)
    first = _reads(raw)
    assert _reads(_raw(first)) == first
    assert first.side(Side.DEVICE) is not None


def test_a_slack_held_at_the_step_reads_back_as_written():
    fitted = _held_at_the_step()
    device = fitted.side(Side.DEVICE)
    assert device is not None
    assert device.slack_s == pytest.approx(STEP_S)
    assert _reads(_raw(fitted)).side(Side.DEVICE) is not None


def test_a_verification_of_a_fitted_bound_reads_back_as_written():
    fitted = _fitted(30, 5)
    pairs = [(0.001 + 1e-6 * (r % 3), 0.0009 + 1e-6 * ((r + 1) % 3)) for r in range(12)]
    checked = dataclasses.replace(fitted, verified=verified.verified("jit", pairs, fitted))
    assert checked.verified is not None
    loaded = _reads(_raw(checked))
    assert loaded.verified is not None
    assert loaded.verified.reached == checked.verified.reached


def test_a_cost_past_outside_its_own_interval_is_refused():
    raw = _raw(_fitted(30, 6))
    device = raw["results"][0]["bound"]["a"]["sides"]["device"]
    assert device["cost_past_ci"] is not None
    device["cost_past"] = 3.0
    message = _refused(raw)
    assert "sides.device.cost_past" in message
    assert "outside its own interval" in message
    assert "not what asyncbench writes" in message


def test_a_cost_past_of_too_few_rounds_is_held_to_its_observations():
    raw = _raw(_fitted(3, 7))
    device = raw["results"][0]["bound"]["a"]["sides"]["device"]
    assert device["cost_past_ci"] is None
    _reads(raw)
    device["cost_past"] = 3.0
    message = _refused(raw)
    assert "sides.device.cost_past" in message
    # a trial edited slack_s and read "3 lies not what its observations give at its slack": which of the two was
    # edited the pair cannot tell, so the line names both, in words that parse
    assert "3 is not the slope its observations give past its slack_s of " in message
    assert "the cost or the slack is not what asyncbench writes" in message


def test_a_step_that_is_not_its_unperturbed_median_is_refused():
    raw = _raw(_fitted(30, 8))
    raw["results"][0]["bound"]["a"]["step_s"] = 0.0005
    message = _refused(raw)
    assert "step_s" in message
    assert "median of its unperturbed observations" in message


def test_a_slack_or_its_interval_past_the_step_is_refused():
    raw = _raw(host_bound("a"))  # no observations: the step is what the file says
    bound = raw["results"][0]["bound"]["a"]
    bound["step_s"] = 0.0005
    bound["ceiling"] = 0.0005 / (0.0005 - 0.0003)
    bound["sides"]["host"]["slack_ci_s"] = [0.0, 0.0007]
    message = _refused(raw)
    assert "sides.host.slack_ci_s" in message
    assert "140% of the 500 µs step: a slack lies within the step" in message


def test_a_reached_its_pairs_and_slack_contradict_is_refused():
    raw = _raw(verified_host_bound("a"))
    _reads(raw)  # 240 µs saved of a 300 µs slack: 80%
    raw["results"][0]["bound"]["a"]["verified"]["reached"] = 0.85
    message = _refused(raw)
    assert "verified.reached" in message
    assert "not its saving over the device's slack (240 µs of 300 µs: 80" in message


def test_a_reached_outside_its_interval_or_without_a_device_slack_is_refused():
    raw = _raw(verified_host_bound("a"))
    raw["results"][0]["bound"]["a"]["verified"]["reached"] = 0.9
    assert "outside its own interval" in _refused(raw)
    raw = _raw(verified_host_bound("a"))
    del raw["results"][0]["bound"]["a"]["verified"]["pairs"]
    assert "no pairs stored" in _refused(raw)


@pytest.mark.parametrize("reached", [1e300, -1e300])
def test_a_refused_reached_is_quoted_short(reached):
    """A number quoted back in a refusal was written out in full (300 digits for 1e300): it reads `1e+302%`."""
    raw = _raw(verified_host_bound("a"))
    raw["results"][0]["bound"]["a"]["verified"]["reached"] = reached
    raw["results"][0]["bound"]["a"]["verified"]["reached_ci"] = [-1e301, 1e301]
    message = _refused(raw)
    assert "verified.reached" in message
    assert "e+302% is not its saving" in message
    assert len(message) < 300, message


def _pairs(plain_s: float, captured_s: float, rounds: int = 12) -> list[tuple[float, float]]:
    return [(plain_s + 2e-6 * (r % 3), captured_s + 2e-6 * ((r + 1) % 3)) for r in range(rounds)]


#: torch.compile's caveat (backends.step_capture), its example in dynamo's words ("; " and all)
BREAKS = "compile: 2 graph break(s): the compiled step runs partly eagerly; e.g. x; y"


def _no_interval(bound: Bound) -> Bound:
    sides = tuple(dataclasses.replace(side, slack_ci_s=None, cost_past_ci=None) for side in bound.sides)
    return dataclasses.replace(bound, bound=BoundKind.INCONCLUSIVE, sides=sides, rounds=3, ceiling_ci=None)


@pytest.mark.parametrize(
    "bound, pairs, how, caveat, timed",
    [
        (host_bound("a"), _pairs(0.001, 0.00076), "jit", None, None),  # no note
        (host_bound("a"), _pairs(0.001, 0.0005), "compile", None, None),  # faster than the floor
        (host_bound("a"), _pairs(0.001, 0.0011), "jit", None, None),  # slower than the plain step
        (host_bound("a"), _pairs(0.001, 0.00076), "compile", BREAKS, None),
        (host_bound("a"), _pairs(0.001, 0.00076), "jit", None, 0.0004),  # the plain step disturbed
        (_fitted(30, 9, host=1.0, device=0.6), _pairs(0.001, 0.0009), "jit", None, None),  # device-bound: no device slack
        (_fitted(3, 10), _pairs(0.001, 0.0009), "jit", None, None),  # not judged: no interval
        (_no_interval(host_bound("a")), _pairs(0.001, 0.0009), "graph", None, None),
    ],
)
def test_the_notes_a_verification_writes_read_back(bound, pairs, how, caveat, timed):
    found = verified.verified(how, pairs, bound, timed_step_s=timed, caveat=caveat)
    checked = dataclasses.replace(bound, variant="a", verified=found)
    loaded = _reads(_raw(checked))
    assert loaded.verified is not None
    assert loaded.verified.note == found.note


def test_a_refused_captures_reason_is_the_backends_and_reads_back():
    refused = verified.verified("graph", (), host_bound("a"), "not graphed: CUDA graphs need a CUDA device")
    assert _reads(_raw(dataclasses.replace(host_bound("a"), verified=refused))).verified == refused


def test_a_verification_note_with_a_part_the_tool_never_writes_is_refused():
    raw = _raw(verified_host_bound("a"))
    stored = raw["results"][0]["bound"]["a"]["verified"]
    stored["note"] = "slower than the plain step (captured 760 µs vs plain 1 ms a step); FORGED: jit saved 9 ms"
    message = _refused(raw)
    assert "verified.note" in message
    assert "'FORGED: jit saved 9 ms' is no part of a note `--bound-verify` writes" in message
    stored["note"] = "FORGED: the ceiling was reached"
    assert "verified.note" in _refused(raw)


def test_levels_that_are_not_its_observations_medians_are_refused():
    raw = _raw(_fitted(30, 9))
    device = raw["results"][0]["bound"]["a"]["sides"]["device"]
    assert len(device["levels_s"]) > 1
    device["levels_s"] = [0.5]
    message = _refused(raw)
    assert "sides.device.levels_s" in message
    assert "medians of its observations' injected lengths" in message
    assert "not what asyncbench writes" in message


def test_levels_without_observations_are_read_as_stored():
    raw = _raw(host_bound("a"))
    bound = raw["results"][0]["bound"]["a"]
    assert not bound.get("observations")
    host = bound["sides"]["host"]
    host["levels_s"] = [float(level) * 1.5 for level in host["levels_s"]]
    assert _reads(raw).side(Side.HOST).levels_s == tuple(host["levels_s"])
