"""A census point's kind is its call's as the census classifies it (results.syncs.kind_held): a real census reads
back as written, a hand edit that names a call of another kind is refused in one line."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from asyncbench.results import fields
from asyncbench.results.schema import Report, ResultsFileError
from asyncbench.results.syncs import kind_held

GOOD = Path(__file__).parent.parent / "hostile" / "cases" / "good" / "census-raw.json"


def _census() -> dict[str, Any]:
    return json.loads(GOOD.read_text(encoding="utf-8"))


def _points(raw: dict[str, Any], variant: str) -> list[dict[str, Any]]:
    return raw["results"][0]["syncs"][variant]["points"]


def _refused(raw: dict[str, Any]) -> str:
    with pytest.raises(ResultsFileError) as refused:
        Report.from_dict(copy.deepcopy(raw), "hostile.json")
    message = str(refused.value)
    assert "hostile.json" in message
    assert "\n" not in message
    assert "not what asyncbench writes" in message
    return message


def test_a_real_census_reads_back_with_its_kinds():
    [result] = Report.from_dict(_census(), "r.json").results
    kinds = {(point.call, str(point.kind)) for census in result.syncs.values() for point in census.points}
    assert ("jax.Array.__str__", "print") in kinds
    assert ("JaxBackend.to_host → numpy.asarray(jax.Array)", "conversion") in kinds


def test_a_conversion_whose_call_is_print_is_refused():
    raw = _census()
    [point] = [p for p in _points(raw, "item") if p["line"] == 56]
    point["call"] = "print"
    message = _refused(raw)
    assert "syncs.item.points[0].kind" in message
    assert "'conversion' for a call of 'print', which no hook names" in message


def test_a_known_call_of_another_kind_is_refused():
    raw = _census()
    _points(raw, "print")[0]["kind"] = "conversion"  # jax.Array.__str__
    message = _refused(raw)
    assert "the census classifies 'jax.Array.__str__' as 'print'" in message


def test_the_fallbacks_and_another_backends_calls_are_not_held_to_the_table():
    at = fields.At("r.json")
    kind_held("unattributed", "print", at)  # a builtin's wait: the frame fallback's
    kind_held("queue full", "jax.Array.item", at)
    kind_held("conversion", "streamsim.Array.item", at)  # the test device's hook (a plugin's alike)
    kind_held("conversion", "jax.numpy.sum → jax.Array._value", at)
