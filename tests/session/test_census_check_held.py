"""A results file's census checks held to the census they report on, on reading (session.census_held): a trial's
`sync_wait_s < 100us` stored as `✗ … = 9.30 ms` above a census edited, consistently, to 50 µs per step was shown
as stored, a figure the file's own census does not give. A genuine file reads as `run` judged it; a check whose
verdict, value or interval is not what its census gives at its stored level is refused, naming the check."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from asyncbench.errors import InputError
from asyncbench.results import budget, records
from asyncbench.results.schema import SCHEMA_VERSION, Report
from asyncbench.session import reading
from asyncbench.spec import expect
from asyncbench.verdicts import checks
from asyncbench.workloads import BUILT_IN

# a real census (`run -w conversion -b jax -d cpu --syncs --quick`): 6 census rounds of 4 variants
CENSUS = json.loads((Path(__file__).parents[1] / "hostile" / "cases" / "good" / "census-raw.json").read_text(encoding="utf-8"))
TEXTS = ("sync_wait_s < 100us", "syncs_per_step[conversion] <= 10")


def _raw(shared: budget.Budget | None = None) -> dict[str, Any]:
    """The census file, as `run` writes it now, with the checks `run` judges of it (at 95% alone, or at a share of
    `shared`)."""
    data = copy.deepcopy(CENSUS)
    data["schema_version"] = SCHEMA_VERSION
    result = Report.from_dict(data, "r.json").results[0]
    judged = [checks.census_check(expect.parse(text, BUILT_IN[result.workload]), result, shared) for text in TEXTS]
    data["results"][0]["checks"] = [records.check_to_dict(check) for check in judged]
    return data


def _read(raw: dict[str, Any]) -> Report:
    return reading.reverified(Report.from_dict(raw, "edited.json"), "edited.json")


def _census_waits(raw: dict[str, Any], each_s: float) -> None:
    """Every point of every variant's census edited, consistently, to wait `each_s` in every round."""
    for point in (point for census in raw["results"][0]["syncs"].values() for point in census["points"]):
        point["wait_s_rounds"] = [each_s] * len(point["wait_s_rounds"])
        point["wait_s_per_step"] = each_s
        point["wait_ci_s"] = [each_s, each_s]


@pytest.mark.parametrize("shared", [None, budget.Budget(0.01, 2, 6, 1000)])
def test_a_genuine_files_census_checks_read_back_as_run_judged_them(shared):
    raw = _raw(shared)
    (result,) = _read(raw).results
    assert [records.check_to_dict(check) for check in result.checks] == raw["results"][0]["checks"]


@pytest.mark.parametrize(
    ("each_s", "key"),
    [
        (2.5e-5, "verdict"),  # the trial's: a census of 50 µs per step (two points) beside a stored ✗ of 972 µs
        (4e-4, "value"),  # still over 100 µs, so still a fail: its figure is not the census's
    ],
)
def test_a_census_edited_under_its_stored_check_is_refused_naming_the_check(each_s, key):
    raw = _raw()
    assert raw["results"][0]["checks"][0]["verdict"] == "fail"
    _census_waits(raw, each_s)
    with pytest.raises(InputError) as refused:
        _read(raw)
    assert f"results[0].checks[0].{key}" in str(refused.value)
    assert "census" in str(refused.value)


def test_a_census_checks_interval_edited_alone_is_refused():
    raw = _raw()
    check = raw["results"][0]["checks"][0]
    check["bounds"] = [check["bounds"][0] * 0.9, check["bounds"][1]]
    with pytest.raises(InputError) as refused:
        _read(raw)
    assert "results[0].checks[0]" in str(refused.value)


def test_an_older_files_census_checks_are_shown_as_stored():
    """A file of a schema before the rules that judge now (session.reading.HELD_FROM_SCHEMA): judged and worded by
    the rules then, shown as stored, as its bounds' figures are."""
    raw = _raw()
    raw["schema_version"] = reading.HELD_FROM_SCHEMA - 1
    raw["results"][0]["checks"][0]["bounds"][0] *= 0.9
    (result,) = _read(raw).results
    assert result.checks[0].bounds == tuple(raw["results"][0]["checks"][0]["bounds"])
