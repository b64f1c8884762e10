"""A result's `bound` in a results file (schema 11): written per variant, absent when none, read back as written,
files of schema 10 and older still read, and a hostile bound refused with the file and the key, never a traceback."""

from __future__ import annotations

import copy
import dataclasses
import json
import math
from typing import Any, Callable

import pytest

from asyncbench.results import records, schema
from asyncbench.results.bound_shape import MAX_LEVELS, MAX_ROUNDS
from asyncbench.results.schema import Report
from tests.support.bounds import device_bound, host_bound, result_with, synchronous
from tests.support.helpers import ok_result, report_of


def _file(*results: Any) -> dict[str, Any]:
    return json.loads(report_of(list(results)).to_json())


def test_a_results_bound_is_written_per_variant_and_read_back_as_it_was(tmp_path):
    result = result_with(device_bound("a"), host_bound("b"), synchronous("c"))
    path = tmp_path / "r.json"
    report_of([result]).save(path)
    raw = json.loads(path.read_text())
    assert raw["schema_version"] == schema.SCHEMA_VERSION == 12
    stored = raw["results"][0]["bound"]
    assert sorted(stored) == ["a", "b", "c"]
    assert stored["a"]["bound"] == "device"
    assert stored["a"]["sides"]["host"]["slack_s"] == 0.00042
    assert stored["a"]["sides"]["host"]["slack_ci_s"] == [0.0004, 0.00044]
    assert stored["a"]["observations"][0] == [0, None, 0.0, 0.0, 0.0011]
    [loaded] = Report.load(path).results
    assert loaded.bound == result.bound


def test_a_result_without_a_bound_stores_none_and_reads_none():
    stored = records.result_to_dict(ok_result("m[torch,cpu]"))
    assert "bound" not in stored
    assert records.result_from_dict(stored).bound == {}


def test_a_file_of_schema_10_without_bounds_still_reads():
    raw = _file(ok_result("m[torch,cpu]"))
    raw["schema_version"] = 10
    [result] = Report.from_dict(raw).results
    assert result.bound == {}


def _set(path: str, value: Any) -> Callable[[dict[str, Any]], None]:
    """A change to the first result's bound of variant `a` at a dotted path (list indexes as numbers)."""

    def change(bound: dict[str, Any]) -> None:
        *parents, last = path.split(".")
        where: Any = bound
        for key in parents:
            where = where[int(key)] if isinstance(where, list) else where[key]
        if isinstance(where, list):
            where[int(last)] = value
        else:
            where[last] = value

    return change


HOSTILE = {
    "keys-missing": (lambda b: b.clear() or b.update({"x": 1}), "bound"),
    "kind-unknown": (_set("bound", "sideways"), "sideways"),
    "kind-a-number": (_set("bound", 3), "3"),
    "step-a-string": (_set("step_s", "1ms"), "step_s"),
    "step-null": (_set("step_s", None), "step_s"),
    "step-negative": (_set("step_s", -0.001), "negative"),
    "step-nan": (_set("step_s", math.nan), "step_s"),
    "rounds-negative": (_set("rounds", -1), "rounds"),
    "rounds-huge": (_set("rounds", 10**15), "rounds"),
    "rounds-a-float": (_set("rounds", 6.5), "rounds"),
    "side-unknown": (lambda b: b["sides"].update({"gpu": b["sides"]["host"]}), "gpu"),
    "sides-a-list": (_set("sides", [1, 2]), "sides"),
    "slack-nan": (_set("sides.host.slack_s", math.nan), "slack_s"),
    "slack-inf": (_set("sides.host.slack_s", math.inf), "slack_s"),
    "slack-bool": (_set("sides.host.slack_s", True), "slack_s"),
    "slack-interval-reversed": (_set("sides.host.slack_ci_s", [0.0005, 0.0004]), "slack_ci_s"),
    "slack-interval-three": (_set("sides.host.slack_ci_s", [0.0, 0.1, 0.2]), "slack_ci_s"),
    "cost-negative": (_set("sides.device.cost_past", -1.0), "cost_past"),
    "levels-huge": (_set("sides.host.levels_s", [0.001] * (MAX_LEVELS + 1)), "levels_s"),
    "level-a-string": (_set("sides.host.levels_s", ["1ms"]), "levels_s"),
    "ceiling-zero": (_set("ceiling", 0.0), "ceiling"),
    "ceiling-interval-a-string": (_set("ceiling_ci", "1-2"), "ceiling_ci"),
    "note-control": (_set("note", "ok\x1b[2J"), "note"),
    "note-a-list": (_set("note", ["x"]), "note"),
    "observations-huge": (lambda b: b.update(observations=[[0, None, 0.0, 0.0, 0.001]] * (6 * (1 + 2 * MAX_LEVELS) + 1)), "observations"),
    "observations-an-object": (_set("observations", {"0": 1}), "observations"),
    "observation-short": (_set("observations.3", [0, "host", 0.1]), "observations"),
    "observation-side-unknown": (_set("observations.3.1", "gpu"), "gpu"),
    "observation-round-negative": (_set("observations.3.0", -2), "observations"),
    "observation-round-huge": (_set("observations.3.0", MAX_ROUNDS), "observations"),
    "observation-time-nan": (_set("observations.3.4", math.nan), "observations"),
    "observation-time-negative": (_set("observations.3.3", -0.1), "negative"),
    "observation-time-a-string": (_set("observations.3.2", "0.1"), "observations"),
    "scale-negative": (_set("scale_s", -0.001), "scale_s"),
    "scale-a-string": (_set("scale_s", "1ms"), "scale_s"),
    "scale-inf": (_set("scale_s", math.inf), "scale_s"),
}


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_a_hostile_bound_is_refused_with_the_file_and_the_key(name):
    change, said = HOSTILE[name]
    raw = _file(result_with(device_bound("a")))
    bound = raw["results"][0]["bound"]["a"]
    change(bound)
    with pytest.raises(schema.ResultsFileError) as refused:
        Report.from_dict(copy.deepcopy(raw), "hostile.json")
    message = str(refused.value)
    assert "hostile.json" in message
    assert "bound" in message
    assert said in message


def test_a_bound_that_is_not_an_object_or_of_a_bad_variant_name_is_refused():
    raw = _file(result_with(device_bound("a")))
    raw["results"][0]["bound"] = [1, 2]
    with pytest.raises(schema.ResultsFileError, match="bound"):
        Report.from_dict(raw, "hostile.json")
    raw["results"][0]["bound"] = {"a\x00b": raw["results"][0].get("bound", {})}
    with pytest.raises(schema.ResultsFileError, match="bound"):
        Report.from_dict(raw, "hostile.json")


def test_a_long_valid_bound_is_checked_quickly():
    bound = device_bound("a")
    raw = _file(result_with(bound))
    stored = raw["results"][0]["bound"]["a"]
    stored["rounds"] = 2000
    # each side's levels as injected (results.bound_held holds its levels_s to their medians), 12 a round
    injected = [(None, 0.0)] * 4 + [(side, level) for side, fit in stored["sides"].items() for level in fit["levels_s"]]
    injected = (injected * 12)[:12]
    stored["observations"] = [[r, side, level, level, 0.0011] for r in range(2000) for side, level in injected]
    [result] = Report.from_dict(raw).results
    assert len(result.bound["a"].observations) == 24_000


def test_a_bounds_steps_per_call_is_written_read_back_and_must_be_at_least_one():
    raw = _file(result_with(device_bound("a")))
    stored = raw["results"][0]["bound"]["a"]
    assert stored["steps_per_call"] == device_bound("a").steps_per_call
    older = copy.deepcopy(raw)
    del older["results"][0]["bound"]["a"]["steps_per_call"]  # written before the field: one step a sample
    assert schema.Report.from_dict(older).results[0].bound["a"].steps_per_call == 1
    stored["steps_per_call"] = 0
    with pytest.raises(schema.ResultsFileError, match="steps_per_call"):
        schema.Report.from_dict(raw)


def test_a_bounds_verified_is_written_read_back_and_absent_without_it(tmp_path):
    from asyncbench.results.bound import Verified, VerifyHow
    from tests.support.bounds import verified_host_bound

    refused = dataclasses.replace(host_bound("b"), verified=Verified(VerifyHow.GRAPH, note="not graphed: CUDA graphs need a CUDA device"))
    result = result_with(verified_host_bound("a"), refused, device_bound("c"))
    path = tmp_path / "r.json"
    report_of([result]).save(path)
    stored = json.loads(path.read_text())["results"][0]["bound"]
    assert stored["a"]["verified"]["how"] == "jit"
    assert stored["a"]["verified"]["reached_ci"] == [0.7375, 0.8714]
    assert stored["a"]["verified"]["pairs"][0] == [0.001, 0.00076]
    assert stored["b"]["verified"]["step_s"] is None
    assert "verified" not in stored["c"]  # a file without --bound-verify reads as before
    [loaded] = schema.Report.load(path).results
    assert loaded.bound == result.bound
    assert loaded.bound["c"].verified is None


VERIFIED_HOSTILE = {
    "how-unknown": ("how", "xla", "xla"),
    "step-negative": ("step_s", -1.0, "negative"),
    "reached-a-string": ("reached", "80%", "reached"),
    "reached-interval-reversed": ("reached_ci", [0.9, 0.1], "reached_ci"),
    "pairs-short": ("pairs", [[0.001]], "pairs"),
    "pair-nan": ("pairs", [[0.001, math.nan]], "pairs"),
    "note-control": ("note", "x\x1b[2J", "note"),
    "past-floor-a-string": ("past_floor", "yes", "past_floor"),
}


@pytest.mark.parametrize("name", sorted(VERIFIED_HOSTILE))
def test_a_hostile_verified_is_refused_with_the_file_and_the_key(name):
    from tests.support.bounds import verified_host_bound

    key, value, said = VERIFIED_HOSTILE[name]
    raw = _file(result_with(verified_host_bound("a")))
    raw["results"][0]["bound"]["a"]["verified"][key] = value
    with pytest.raises(schema.ResultsFileError) as refused:
        schema.Report.from_dict(copy.deepcopy(raw), "hostile.json")
    assert "hostile.json" in str(refused.value)
    assert "verified" in str(refused.value)
    assert said in str(refused.value)


def test_a_bounds_scale_is_written_read_back_and_absent_without_it():
    scaled = dataclasses.replace(device_bound("a"), scale_s=0.00105)
    raw = _file(result_with(scaled, device_bound("b")))
    stored = raw["results"][0]["bound"]
    assert stored["a"]["scale_s"] == 0.00105
    assert "scale_s" not in stored["b"]
    (result,) = Report.from_dict(copy.deepcopy(raw), "r.json").results
    assert result.bound["a"] == scaled
    assert result.bound["b"].scale_s is None
