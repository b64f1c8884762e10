"""A stored check's detail is the one `run` writes of its fields (results.check_detail): a hand-edited detail, or one
whose figures are not its stored value and interval, is refused when its file is read, never shown as the tool's."""

from __future__ import annotations

import dataclasses
import json
from typing import Any

import pytest

from asyncbench.errors import InputError
from asyncbench.results import check_detail, schema
from asyncbench.results.fields import At
from asyncbench.results.model import Result, Verdict
from asyncbench.results.schema import Report
from asyncbench.spec import expect
from asyncbench.verdicts import checks
from tests.results.test_check_rule import CHECKS, SYNC_ASYNC, _result


def _saved(tmp_path: Any, texts: list[str], result: Result | None = None, steps: int | None = None) -> tuple[Any, dict[str, Any]]:
    """A results file of `result` (sync_async's) with the checks `run` gives it; and its JSON, to edit."""
    result = result or _result()
    judged = checks.evaluate(tuple(expect.parse(text, SYNC_ASYNC) for text in texts), result)
    if steps is not None:  # as session.step_measurement says a check on a user's step
        result = dataclasses.replace(result, params={"steps": steps})
        judged = tuple(dataclasses.replace(c, detail=f"per step ({steps} steps a sample): {c.detail}") for c in judged)
    path = tmp_path / "r.json"
    Report.new({"name": "c"}, {"python": "3"}, (dataclasses.replace(result, checks=judged),)).save(path)
    return path, json.loads(path.read_text())


def _refused(path: Any, raw: dict[str, Any], index: int = 0) -> None:
    path.write_text(json.dumps(raw))
    with pytest.raises(schema.ResultsFileError, match=rf"r\.json: results\[0\]\.checks\[{index}\]\.detail: .* is not what a run writes"):
        Report.load(path)


def test_every_detail_run_writes_is_read_back_as_written(tmp_path):
    path, raw = _saved(tmp_path, list(CHECKS) + ["model_error < 1"])
    loaded = Report.load(path)
    assert [c.detail for c in loaded.results[0].checks] == [c["detail"] for c in raw["results"][0]["checks"]]


def test_a_check_without_an_interval_is_read_back(tmp_path):
    few = _result()
    few = dataclasses.replace(few, bounds={"speedup": None})  # type: ignore[dict-item]
    judged = checks.evaluate((expect.parse("speedup >= 1.5", SYNC_ASYNC),), few)
    assert judged[0].verdict == Verdict.INCONCLUSIVE
    path = tmp_path / "r.json"
    Report.new({}, {}, (dataclasses.replace(few, checks=judged),)).save(path)
    assert Report.load(path).results[0].checks == judged


def test_a_per_step_prefix_of_the_cases_own_steps_is_read_back_and_one_of_other_steps_is_refused(tmp_path):
    path, raw = _saved(tmp_path, ["done_s.median[sync] < 2s"], steps=20)
    assert Report.load(path).results[0].checks[0].detail.startswith("per step (20 steps a sample): done_s.median[sync] = ")
    raw["results"][0]["checks"][0]["detail"] = raw["results"][0]["checks"][0]["detail"].replace("(20 steps", "(7 steps")
    _refused(path, raw)


@pytest.mark.parametrize("text", list(CHECKS))
def test_a_detail_with_words_of_its_own_added_is_refused(tmp_path, text):
    path, raw = _saved(tmp_path, [text])
    raw["results"][0]["checks"][0]["detail"] += "; 10x faster than main"
    _refused(path, raw)


def test_a_hand_written_detail_is_refused(tmp_path):
    path, raw = _saved(tmp_path, ["done_s.median[sync] < 2s"])
    raw["results"][0]["checks"][0]["detail"] = "done_s = 1 ms (95% interval), expected < 2 s; 10x faster than main"
    _refused(path, raw)


@pytest.mark.parametrize(
    "text, edit",
    [
        ("speedup >= 1.5", lambda d: d.replace("[1.83–2.25]", "[1.95–2.05]")),  # an interval that is not its bounds
        ("speedup >= 1.5", lambda d: d.replace("2.00×", "3.00×", 1)),  # a value that is not its value
        ("done_s.max[async] < 500ms", lambda d: d.replace("600 ms", "400 ms", 1)),  # one measurement, another figure
        ("speedup >= 2.5", lambda d: d.replace("(short by", "(far short by")),  # a miss it does not say
        ("done_s.median[sync] < 2s", lambda d: d.replace("[sync]", "[fast]")),  # a variant the case has not
    ],
)
def test_a_detail_whose_figures_are_not_its_stored_ones_is_refused(tmp_path, text, edit):
    path, raw = _saved(tmp_path, [text])
    detail = raw["results"][0]["checks"][0]["detail"]
    raw["results"][0]["checks"][0]["detail"] = edit(detail)
    assert raw["results"][0]["checks"][0]["detail"] != detail
    _refused(path, raw)


def _census_case(detail: str) -> dict[str, Any]:
    check = {"expect": "syncs_per_step <= 0", "verdict": "fail", "value": 3.0, "bounds": [3.0, 3.0], "confidence": 0.999}
    return {"status": "ok", "metrics": {}, "checks": [{**check, "detail": detail}]}


CENSUS_FAIL = "syncs_per_step = 3 [3–3] (99.9% interval), expected <= 0; waits at step.py:14 (jax.Array.item, 1 per step)"


def test_a_census_checks_points_are_held_to_their_form_and_its_figures_to_its_fields():
    at = At("r.json") / "results" / 0
    expected = check_detail.with_interval("syncs_per_step", 3.0, (3.0, 3.0), "", "99.9%", check_detail.wanted("<=", 0.0, ""))
    assert CENSUS_FAIL.startswith(expected)  # as verdicts.checks.census_check writes it
    check_detail.details_held(_census_case(CENSUS_FAIL), at, None)
    for forged in (CENSUS_FAIL + "; 10x faster than main", CENSUS_FAIL.replace("= 3 [3–3]", "= 0 [0–0]")):
        with pytest.raises(InputError, match=r"checks\[0\]\.detail: .* is not what a run writes"):
            check_detail.details_held(_census_case(forged), at, None)


def test_a_threshold_is_stated_to_the_digits_it_has_so_a_value_beside_it_never_reads_as_it():
    """A trial: `illusion < 1.0002` read 'illusion = 1.001× [1.001–1.002] ..., expected < 1.00× (over by 0.0949%)',
    a threshold shown as a value the interval lies wholly above; and 'expected < 1.00 ms' of `done_s.median < 1.0002ms`."""
    assert check_detail.wanted("<", 1.0002, "x") == "expected < 1.0002×"
    assert check_detail.wanted("<", 0.0010002, "s") == "expected < 1.0002 ms"
    # as before where three figures are the threshold itself
    assert check_detail.wanted("<", 2.0, "x") == "expected < 2.00×"
    assert check_detail.wanted("<=", 0.01, "s") == "expected <= 10.0 ms"
    assert check_detail.wanted(">", 1000.5, "") == "expected > 1000.5"
