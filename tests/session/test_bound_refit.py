"""A host- or device-bound reading's slacks and costs are held to what its stored observations give (session.reading
._rekinded refits it on reading, and holds each side's slack, slack interval, cost past and its interval to the
refit's): a trial's narrowed slack interval ([915 µs, 3.72 ms] edited to [2.00, 2.50] ms) was shown as measured, a
host interval edited to reach 0 was shown beside DEVICE-BOUND, and observations scaled ×3 were shown beside slacks
they do not give. Each is refused in one line naming the figure, exit 2; a genuine file reads as written."""

from __future__ import annotations

import copy
import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest

from asyncbench.errors import InputError
from asyncbench.results.bound import Bound, BoundKind, as_stored
from asyncbench.results.schema import Report
from asyncbench.session import reading
from asyncbench.verdicts import bound as fitting
from tests.results.test_bound_held import _fitted
from tests.support.bounds import result_with
from tests.support.cli import invoke
from tests.support.helpers import report_of
from tests.verdicts.test_bound import STEPS, planted


def _device_bound() -> Bound:
    """A genuine device-bound fit: the host's slack 398 µs [389–408] of a 1.03 ms step, the device's ~0 [≤ 6.35 µs]."""
    fitted = _fitted(30, 4, host=0.6, device=1.0)
    assert fitted.bound == BoundKind.DEVICE
    return fitted


def _raw(bound: Bound) -> dict[str, Any]:
    return json.loads(report_of([result_with(bound)]).to_json())


def _written(raw: dict[str, Any], tmp_path: Path) -> Path:
    path = tmp_path / "r.json"
    path.write_text(json.dumps(raw))
    Report.from_dict(copy.deepcopy(raw), str(path))  # the results layer takes it: what refuses it is the refit
    return path


def _refused(raw: dict[str, Any], tmp_path: Path, key: str) -> str:
    path = _written(raw, tmp_path)
    with pytest.raises(InputError) as refused:
        reading.load_results(path)
    message = str(refused.value)
    assert str(path) in message
    assert key in message
    assert "\n" not in message
    shown = invoke("show", str(path))
    assert shown.exit_code == 2
    return message


def _host(raw: dict[str, Any]) -> dict[str, Any]:
    return raw["results"][0]["bound"]["a"]["sides"]["host"]


def test_a_genuine_device_bound_reads_as_written_and_shows(tmp_path):
    fitted = _device_bound()
    path = _written(_raw(fitted), tmp_path)
    [result] = reading.load_results(path).results
    stored = Report.from_dict(_raw(fitted), "r.json").results[0].bound["a"]
    assert result.bound["a"] == dataclasses.replace(stored, difference_ci=fitted.difference_ci)  # not stored: refit
    assert invoke("show", str(path)).exit_code == 0


def test_the_fit_is_of_the_observations_as_stored_so_a_refit_gives_the_same_figures():
    observations, _ = planted(0.6, 1.0, rounds=30, seed=4)
    first = fitting.fit("a", observations, True, steps_per_call=STEPS)
    again = fitting.fit("a", [as_stored(o) for o in first.observations], True, steps_per_call=STEPS)
    assert again.sides == first.sides
    assert again.observations == first.observations


def test_a_narrowed_slack_interval_is_refused(tmp_path):
    raw = _raw(_device_bound())
    _host(raw)["slack_ci_s"] = [0.00039, 0.000405]  # within the fit's [389–408] µs, holding the slack: shape-valid
    message = _refused(raw, tmp_path, "sides.host.slack_ci_s")
    assert "is not what its observations give" in message
    assert "389 µs" in message  # the refit's interval, said beside the stored one


def test_a_moved_slack_is_refused(tmp_path):
    raw = _raw(_device_bound())
    _host(raw)["slack_s"] = 0.0004  # 398 µs → 400 µs, within its interval
    _refused(raw, tmp_path, "sides.host.slack_s")


def test_a_narrowed_cost_interval_is_refused(tmp_path):
    raw = _raw(_device_bound())
    cost = _host(raw)["cost_past"]
    _host(raw)["cost_past_ci"] = [cost - 0.001, cost + 0.001]
    _refused(raw, tmp_path, "sides.host.cost_past_ci")


def test_a_host_interval_reaching_0_beside_device_bound_is_refused(tmp_path):
    """The trial's (a): DEVICE-BOUND was shown beside a host slack of '~0 [≤ x] (≤ y%)', which cannot read it."""
    raw = _raw(_device_bound())
    _host(raw)["slack_ci_s"][0] = 0.0
    _refused(raw, tmp_path, "sides.host.slack_ci_s")


def test_observations_scaled_under_their_slacks_are_refused(tmp_path):
    """The trial's (b): the host's observations ×3 read INCONCLUSIVE on the refit, shown beside the stored slacks
    that read DEVICE-BOUND."""
    raw = _raw(_device_bound())
    bound = raw["results"][0]["bound"]["a"]
    for observation in bound["observations"]:
        if observation[1] == "host":
            observation[4] = round(observation[4] * 3, 9)
    _refused(raw, tmp_path, "results[0].bound.a.sides.")


@pytest.mark.parametrize(
    ("rounds", "seed", "host", "kind"),
    [(6, 1, 0.97, BoundKind.BALANCED), (6, 0, 0.9, BoundKind.INCONCLUSIVE)],
    ids=["balanced", "inconclusive"],
)
def test_a_balanced_or_inconclusive_narrowed_interval_is_refused_and_a_genuine_one_reads_as_written(tmp_path, rounds, seed, host, kind):
    """Only host- and device-bound readings were refitted: a balanced or inconclusive one's slack intervals, shown
    beside it all the same, could be narrowed in the file (or narrowed and relabelled balanced) and were shown."""
    fitted = _fitted(rounds, seed, host=host, device=1.0)
    assert fitted.bound == kind
    [result] = reading.load_results(_written(_raw(fitted), tmp_path)).results
    assert result.bound["a"].bound == kind
    raw = _raw(fitted)
    low, high = _host(raw)["slack_ci_s"]
    _host(raw)["slack_ci_s"] = [low + (high - low) / 4, high - (high - low) / 4]
    _refused(raw, tmp_path, "sides.host.slack_ci_s")
