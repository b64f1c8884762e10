"""How many census rounds a results file may hold: a short case's census checks take more rounds than it timed
(verdicts.checks.census_rounds_needed), and every file `run` writes reads back; a claim past what any check can need
(a hostile file's rounds) is still refused, naming the key."""

from __future__ import annotations

import copy
import json
import statistics
from pathlib import Path
from typing import Any

import pytest

from asyncbench.results import budget, records
from asyncbench.results.schema import Report, ResultsFileError

# a real census (`run -w conversion -b jax -d cpu --syncs --quick`): 9 timed rounds, 6 census rounds
CENSUS = json.loads((Path(__file__).parents[1] / "hostile" / "cases" / "good" / "census-raw.json").read_text(encoding="utf-8"))


def _with_census_rounds(rounds: int) -> dict[str, Any]:
    """The file with each census holding `rounds` rounds (each point's per-round lists as long, its real rounds over
    again, and its figures their medians, as a census writes them: a reader holds each point to its rounds)."""
    data = copy.deepcopy(CENSUS)
    for census in data["results"][0]["syncs"].values():
        census["rounds"] = rounds
        for point in census["points"]:
            for key, figure in (("calls_rounds", "calls_per_step"), ("wait_s_rounds", "wait_s_per_step")):
                point[key] = [point[key][index % len(point[key])] for index in range(rounds)]
                point[figure] = round(statistics.median(point[key]), 9)
            point["wait_ci_s"] = [min(point["wait_s_rounds"]), max(point["wait_s_rounds"])]
    return data


def test_the_rounds_a_census_check_needs_read_back_past_the_case_s_timed_rounds():
    # 14: what four census checks at a 1% family rate need (the trial's 2-second gate of 9 timed rounds held 14)
    needed = budget.rounds_for_median(budget.Budget(0.01, 4, 6, 1000).confidence())
    assert needed > len(CENSUS["results"][0]["variants"]["none"]["samples"]["done_s"])
    for rounds in (needed, records.CENSUS_CHECK_MOST):
        report = Report.from_dict(_with_census_rounds(rounds), "r.json")
        assert {census.rounds for census in report.results[0].syncs.values()} == {rounds}


def test_the_most_rounds_is_what_a_check_at_the_highest_confidence_a_float_holds_needs():
    assert records.CENSUS_CHECK_MOST == budget.rounds_for_median(1 - 2**-53) == 54


@pytest.mark.parametrize("rounds", [records.CENSUS_CHECK_MOST + 1, 10**15])
def test_more_census_rounds_than_any_check_needs_are_refused_naming_the_key(rounds):
    data = copy.deepcopy(CENSUS)
    data["results"][0]["syncs"]["none"]["rounds"] = rounds  # refused before its points are read
    with pytest.raises(ResultsFileError) as refused:
        Report.from_dict(data, "r.json")
    assert "results[0].syncs.none.rounds" in str(refused.value)
    assert f"at most {records.CENSUS_CHECK_MOST}" in str(refused.value)
