"""A stored check's interval held to the one its stored rounds give at its confidence (results.case_held), and the
one family-wise false-alarm rate a run's checks share.

`run` takes a check's interval as the median's interval of the rounds at the check's confidence
(verdicts.checks._interval): where the file keeps those rounds (a step form's per-round metric, a clock's samples)
the interval is theirs exactly, so a narrower one written over it (a trial's `illusion` [1.16–1.64] made [1.30–1.60]
and "pass") is refused; the file `run` wrote (tests/results/golden/check_details_v12.json, ten checks) still reads."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from asyncbench.results import check_detail, units
from asyncbench.results.schema import Report, ResultsFileError

WRITTEN = Path(__file__).parent / "golden" / "check_details_v12.json"


def _raw() -> dict[str, Any]:
    return json.loads(WRITTEN.read_text())


def _with_bounds(check: dict[str, Any], bounds: list[float], label: str, unit: str) -> None:
    """`check` given `bounds`, and the detail `run` would write of them (so the detail's own rule holds)."""
    check["bounds"] = bounds
    wanted = check["detail"].partition("), ")[2]
    check["detail"] = check_detail.with_interval(
        label, check["value"], (bounds[0], bounds[1]), unit, units.confidence(check["confidence"]), wanted
    )


def test_a_real_runs_checks_read_back_and_round_trip(tmp_path):
    report = Report.from_dict(_raw(), str(WRITTEN))
    again = tmp_path / "again.json"
    report.save(again)
    assert [c.bounds for r in Report.load(again).results for c in r.checks] == [c.bounds for r in report.results for c in r.checks]


def test_a_metric_checks_interval_narrower_than_its_rounds_give_is_refused():
    raw = _raw()
    step = raw["results"][1]
    check = step["checks"][0]  # slowdown_k1 <= 3, its 99.98% interval of the 20 rounds stored
    _with_bounds(check, list(step["bounds"]["slowdown_k1"]), "slowdown_k1", "x")  # the 95% one: held by containment
    with pytest.raises(ResultsFileError) as refused:
        Report.from_dict(raw, "forged.json")
    assert "checks[0].bounds" in str(refused.value)
    assert "not what asyncbench writes" in str(refused.value)


def test_a_clock_checks_forged_interval_is_refused():
    raw = _raw()
    case = raw["results"][0]
    check = case["checks"][2]  # done_s.median[async] < 10s
    summary = case["variants"]["async"]["done_s"]
    _with_bounds(check, [summary["ci_low"], summary["ci_high"]], "done_s.median[async]", "s")
    with pytest.raises(ResultsFileError) as refused:
        Report.from_dict(raw, "forged.json")
    assert "checks[2].bounds" in str(refused.value)
    assert "not what asyncbench writes" in str(refused.value)


def test_a_tampered_confidence_is_named_as_stored():
    raw = _raw()
    for result in raw["results"]:
        for check in result["checks"]:
            if check.get("family_error") is not None:
                check["family_error"] = 0.5
    raw["results"][1]["checks"][0]["confidence"] = 0.7
    with pytest.raises(ResultsFileError) as refused:
        Report.from_dict(raw, "forged.json")
    assert "its confidence is 0.7" in str(refused.value)


def test_checks_that_state_different_family_errors_are_refused():
    raw = _raw()
    raw["results"][1]["checks"][0]["family_error"] = 0.5  # its confidence 0.9998 is at least 1 - 0.5
    with pytest.raises(ResultsFileError) as refused:
        Report.from_dict(copy.deepcopy(raw), "forged.json")
    assert "results[1].checks[0].family_error" in str(refused.value)
    assert "share one" in str(refused.value)


@pytest.mark.parametrize("index", [4, 5])  # t2_s < 1s, device_s.median < 1s: neither was measured
def test_a_not_measured_metric_or_clock_check_edited_to_inconclusive_is_refused(index):
    """NOT_MEASURED fails a gate; INCONCLUSIVE passes one under --allow-inconclusive: an edit from one to the other
    of a check with no value (nothing measured) was read as it was written."""
    raw = _raw()
    assert raw["results"][0]["checks"][index]["verdict"] == "not measured"
    raw["results"][0]["checks"][index]["verdict"] = "inconclusive"
    with pytest.raises(ResultsFileError, match=rf"checks\[{index}\]\.verdict: an 'inconclusive' of .* with no value"):
        Report.from_dict(raw, "edited.json")
