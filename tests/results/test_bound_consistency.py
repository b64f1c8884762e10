"""A stored bound held to its own numbers on load (results.bound_shape.check_bound): a reading that verdicts.bound's
decision rule cannot give from the stored slack intervals, or a ceiling that is not step / (step − the device's
slack), is refused in one line naming the file and the key; every bound the fit writes reads back."""

from __future__ import annotations

import copy
import dataclasses
import json
import math
from typing import Any

import pytest

from asyncbench.results import schema
from asyncbench.results.bound import BoundKind, Side
from asyncbench.results.schema import Report
from asyncbench.verdicts import bound as fitting
from tests.support.bounds import device_bound, host_bound, result_with, synchronous
from tests.support.helpers import report_of
from tests.verdicts.test_bound import STEP_S, STEPS, planted


def _file(*bounds: Any) -> dict[str, Any]:
    return json.loads(report_of([result_with(*bounds)]).to_json())


def _refused(raw: dict[str, Any]) -> str:
    with pytest.raises(schema.ResultsFileError) as refused:
        Report.from_dict(copy.deepcopy(raw), "edited.json")
    message = str(refused.value)
    assert "edited.json" in message
    assert "\n" not in message
    return message


def _stored(raw: dict[str, Any], variant: str = "a") -> dict[str, Any]:
    return raw["results"][0]["bound"][variant]


@pytest.mark.parametrize(
    ("host", "device", "sides"),
    [
        (1.0, 0.6, (Side.HOST, Side.DEVICE)),  # host-bound
        (0.5, 1.0, (Side.HOST, Side.DEVICE)),  # device-bound
        (1.0, 0.97, (Side.HOST, Side.DEVICE)),  # balanced or inconclusive
        (0.5, 1.0, (Side.HOST,)),  # one side (MXNet): device-bound from the host's slack
        (1.0, 0.5, (Side.HOST,)),  # one side without slack: inconclusive
    ],
)
def test_every_bound_the_fit_writes_reads_back(host, device, sides):
    for seed in range(3):
        observations, _ = planted(host, device, seed=seed, sides=sides)
        fitted = fitting.fit("a", observations, True, steps_per_call=STEPS)
        [result] = Report.from_dict(_file(fitted), "fitted.json").results
        assert result.bound["a"].bound == fitted.bound


def test_a_device_bound_edited_to_host_bound_is_refused():
    raw = _file(device_bound("a"))  # the host has 0.42 ms of slack, the device none
    _stored(raw)["bound"] = "host"
    message = _refused(raw)
    assert "results[0].bound.a.bound" in message
    assert "reads host" in message
    assert "host slack [400 µs–440 µs]" in message


def test_a_host_bound_edited_to_device_bound_or_balanced_is_refused():
    raw = _file(host_bound("a"))  # the device has 0.3 ms of slack, the host none
    _stored(raw)["bound"] = "device"
    assert "reads device" in _refused(raw)
    _stored(raw)["bound"] = "balanced"
    assert "reach past 7.5% of the 1.00 ms step" in _refused(raw)


def test_a_reading_with_too_few_rounds_or_without_a_side_is_inconclusive_or_refused():
    raw = _file(device_bound("a"))
    _stored(raw)["rounds"] = fitting.MIN_ROUNDS - 1  # fewer than its observations were taken in: an edit
    assert f"rounds: {fitting.MIN_ROUNDS - 1} perturbation round(s) said, 6 in its observations" in _refused(raw)
    _stored(raw)["rounds"] = 1  # as fewer rounds are stored: the observations of round 0 alone
    _stored(raw)["observations"] = [o for o in _stored(raw)["observations"] if o[0] == 0]
    assert "gives no reading: it is inconclusive" in _refused(raw)
    raw = _file(device_bound("a"))
    _stored(raw)["sides"]["host"]["slack_ci_s"] = None
    assert "a slack without an interval" in _refused(raw)


def test_one_side_reads_exactly_what_its_slack_says():
    raw = _file(device_bound("a"))
    stored = _stored(raw)
    del stored["sides"]["device"]
    stored["ceiling"] = stored["ceiling_ci"] = None
    Report.from_dict(copy.deepcopy(raw))  # the host's 0.42 ms [0.4-0.44] of a 1.1 ms step: device-bound
    stored["bound"] = "inconclusive"
    assert "reads inconclusive, but its one side's host slack" in _refused(raw)
    stored["sides"]["host"]["slack_ci_s"] = [0.0, 0.00005]
    stored["sides"]["host"]["slack_s"] = 0.00001
    Report.from_dict(copy.deepcopy(raw))  # a host without slack, no device measured: inconclusive
    stored["bound"] = "device"
    assert "reads inconclusive" in _refused(raw)


def test_a_synchronous_bound_has_no_sides_and_no_ceiling():
    raw = _file(synchronous("a"))
    _stored(raw)["sides"] = copy.deepcopy(_stored(_file(device_bound("a")))["sides"])
    assert "a synchronous step has no sides" in _refused(raw)
    raw = _file(synchronous("a"))
    _stored(raw)["ceiling"] = 1.5
    assert "no device slack to read it from" in _refused(raw)


def test_a_ceiling_that_is_not_step_over_step_less_the_device_slack_is_refused():
    raw = _file(host_bound("a"))  # 1 ms / (1 ms − 0.3 ms) = 1.4286
    _stored(raw)["ceiling"] = 2.5
    message = _refused(raw)
    assert "results[0].bound.a.ceiling" in message
    assert "2.5× contradicts the bound's own numbers: step / (step − the device's slack) is 1.42857×" in message
    _stored(raw)["ceiling"] = None
    assert "missing" in _refused(raw)
    _stored(raw)["ceiling"] = 1 / 0.7 * (1 + 1e-12)  # rounding: read back
    Report.from_dict(copy.deepcopy(raw))


def test_twenty_fitted_variants_of_a_file_read_back():
    fitted = [fitting.fit(f"v{i}", planted(1.0, 0.6, seed=i)[0], True, steps_per_call=STEPS) for i in range(20)]
    [result] = Report.from_dict(_file(*fitted)).results
    assert {name: b.bound for name, b in result.bound.items()} == {b.variant: b.bound for b in fitted}


def test_show_refuses_a_hand_edited_reading_in_one_line(tmp_path):
    from tests.support.cli import asyncbench, refused

    raw = _file(device_bound("a"))
    _stored(raw)["bound"] = "host"
    path = tmp_path / "edited.json"
    path.write_text(json.dumps(raw))
    refused(asyncbench("show", str(path)), "edited.json", "bound.a.bound", "reads host")


def test_a_bound_on_shared_cores_reads_back_and_is_never_balanced():
    observations, _ = planted(1.0, 1.0, seed=1)
    shared = fitting.fit("a", observations, True, steps_per_call=STEPS, shares_cores=True)
    raw = _file(shared)
    assert _stored(raw)["shares_cores"] is True
    [result] = Report.from_dict(copy.deepcopy(raw), "fitted.json").results
    assert result.bound["a"].shares_cores
    assert result.bound["a"].bound == shared.bound
    balanced = fitting.fit("a", observations, True, steps_per_call=STEPS)
    assert "shares_cores" not in _stored(_file(balanced))  # older readers' files stay as they were
    edited = _file(balanced)
    _stored(edited)["shares_cores"] = True
    assert "device shares the host's cores" in _refused(edited)
    _stored(edited)["shares_cores"] = "yes"
    assert "shares_cores" in _refused(edited)


def test_a_negative_slack_interval_is_refused():
    # issue 52: a slack_ci_s of [-0.002, -0.001] was shown as '0 ns [below 0 by 2 ms–below 0 by 1 ms]' and recorded
    raw = _file(device_bound("a"))
    _stored(raw)["sides"]["host"]["slack_ci_s"] = [-0.002, -0.001]
    message = _refused(raw)
    assert "results[0].bound.a.sides.host.slack_ci_s" in message
    assert "a slack cannot be negative" in message
    raw = _file(device_bound("a"))
    _stored(raw)["sides"]["device"]["slack_ci_s"] = [-0.000001, 0.000012]
    assert "results[0].bound.a.sides.device.slack_ci_s" in _refused(raw)


def test_a_slack_outside_its_own_interval_is_refused_and_one_at_its_end_to_the_rounding_reads_back():
    raw = _file(device_bound("a"))  # the host's slack 0.42 ms [0.40-0.44]
    _stored(raw)["sides"]["host"]["slack_s"] = 1.0
    message = _refused(raw)
    assert "results[0].bound.a.sides.host.slack_s" in message
    assert "outside its own interval" in message
    _stored(raw)["sides"]["host"]["slack_s"] = 0.00044 + 1e-9  # a nanosecond past its end: rounding
    Report.from_dict(copy.deepcopy(raw))
    _stored(raw)["sides"]["host"]["slack_s"] = 0.0004 - 1e-6
    assert "outside its own interval" in _refused(raw)


def test_a_step_of_0_is_refused_where_the_bound_has_rounds_or_sides_and_kept_where_nothing_was_measured():
    raw = _file(device_bound("a"))
    _stored(raw)["step_s"] = 0
    message = _refused(raw)
    assert "results[0].bound.a.step_s" in message
    assert "a measured step takes time" in message
    raw = _file(synchronous("a"))  # rounds, no sides
    _stored(raw)["step_s"] = 0.0
    assert "results[0].bound.a.step_s" in _refused(raw)
    # what the fit writes for a variant with no perturbation round (one step a sample): step 0, no rounds, no side
    nothing = fitting.fit("a", (), True, note="one step a sample: nothing to tell")
    assert (nothing.step_s, nothing.rounds, nothing.sides) == (0.0, 0, ())
    [result] = Report.from_dict(_file(nothing)).results
    assert result.bound["a"].step_s == 0.0


def test_a_bound_of_a_variant_the_result_does_not_have_is_refused():
    raw = _file(device_bound("a"))
    raw["results"][0]["bound"]["nope"] = raw["results"][0]["bound"]["a"]
    message = _refused(raw)
    assert "results[0].bound.nope" in message
    assert "which the result does not have (its variants: a, matmul)" in message


def test_a_synchronous_bound_with_sides_is_refused_for_its_sides_before_its_ceiling():
    # issue 52: a synchronous reading with sides (and a ceiling) was refused for 'a ceiling of 1× with no device slack'
    raw = _file(synchronous("a"))
    edited = _stored(raw)
    device = _stored(_file(device_bound("a")))
    edited.update(sides=copy.deepcopy(device["sides"]), ceiling=device["ceiling"], ceiling_ci=device["ceiling_ci"])
    message = _refused(raw)
    assert "results[0].bound.a.sides" in message
    assert "a synchronous step has no sides" in message


def test_a_ceiling_interval_that_is_not_the_image_of_the_device_slack_interval_is_refused(tmp_path):
    # the row: a device slack up to 577 µs of a 955 µs step, its ceiling hand-edited to [1.0, 1.01]
    from tests.support.cli import asyncbench, refused

    raw = _file(host_bound("a"))
    stored = _stored(raw)
    stored.update(step_s=0.000955, ceiling=1.0, ceiling_ci=[1.0, 1.01])
    stored["sides"]["device"].update(slack_s=0.0, slack_ci_s=[0.0, 0.000577])
    stored["bound"] = "inconclusive"
    path = tmp_path / "edited.json"
    path.write_text(json.dumps(raw))
    refused(asyncbench("show", str(path)), "edited.json", "bound.a.ceiling_ci", "contradicts the bound's own numbers")
    stored["ceiling_ci"] = [1.0, 0.000955 / (0.000955 - 0.000577)]  # the image: read back
    Report.from_dict(copy.deepcopy(raw))


def test_an_unbounded_ceiling_interval_is_stored_as_its_low_end_and_read_back():
    observations, _ = planted(1.0, 0.97, seed=0)
    fitted = fitting.fit("a", observations, True, steps_per_call=STEPS)
    device = fitted.side(Side.DEVICE)
    assert device is not None
    assert device.slack_ci_s is not None
    edited = dataclasses.replace(
        fitted,
        bound=BoundKind.INCONCLUSIVE,
        sides=(fitted.sides[0], dataclasses.replace(device, slack_ci_s=(0.0, fitted.step_s))),
        ceiling_ci=(1.0, math.inf),
    )
    raw = _file(edited)
    assert _stored(raw)["ceiling_ci"] is None
    assert _stored(raw)["ceiling_ci_low"] == 1.0
    [result] = Report.from_dict(copy.deepcopy(raw)).results
    assert result.bound["a"].ceiling_ci == (1.0, math.inf)
    _stored(raw)["ceiling_ci_low"] = 1.5  # not the image of the slack's low end
    assert "bound.a.ceiling_ci_low" in _refused(raw)


def test_a_ceiling_where_the_device_slack_reaches_the_whole_step_is_none_or_unbounded():
    """The user's edit: a variant whose device slack is its whole step (no ceiling: step / 0) given `ceiling: 1.0`
    read back (exit 0), though no floor the stored figures allow gives 1×. A floor of a nanosecond or two before
    rounding gives one of about a million: read back."""
    raw = _file(host_bound("a"))  # a 1 ms step
    stored = _stored(raw)
    stored["sides"]["device"].update(slack_s=0.001, slack_ci_s=[0.00098, 0.001], levels_s=[0.0001, 0.0012])
    stored["ceiling"] = stored["ceiling_ci"] = None
    Report.from_dict(copy.deepcopy(raw))  # as the fit writes it: no ceiling
    for forged in (1.0, 5.0):
        stored["ceiling"] = forged
        message = _refused(raw)
        assert "results[0].bound.a.ceiling" in message
        assert "the device's slack reaches the whole step" in message
    stored["ceiling"] = 1e9  # 1 ms over a floor of 1 ns, within the nanosecond each time is stored to
    Report.from_dict(copy.deepcopy(raw))


def test_a_scale_below_the_step_its_levels_were_asked_of_is_refused():
    """A run asks no level past MAX_INJECTED_SHARE of the probed step (scale_s): a scale of 0, or of a third of the
    step, beside levels of up to the whole step was read back; the scale the levels were asked at reads back."""
    observations, _ = planted(0.6, 1.0, seed=0)  # levels of up to STEP_S
    fitted = fitting.fit("a", observations, True, steps_per_call=STEPS, scale_s=STEP_S)
    raw = _file(fitted)
    Report.from_dict(copy.deepcopy(raw))
    for forged in (0.0, STEP_S / 3):
        _stored(raw)["scale_s"] = forged
        assert "bound.a.scale_s" in _refused(raw)
