# ruff: noqa: F811 (the `history` fixture, imported, is a test's argument)
"""An `ab` file (and a results file's reference) edited by hand: figures beyond any real one are refused in one line,
exit 2, as other forged fields are; a file edited after it was recorded is not silently taken as the run recorded."""

from __future__ import annotations

import copy
import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest

from asyncbench.history import store, target
from asyncbench.results import ab_report, paired
from asyncbench.results.labels import Label
from asyncbench.results.schema import Report
from tests.support.cli import in_process, invoke
from tests.support.helpers import quick_numpy_results
from tests.support.stores import history  # noqa: F401 - the fixture, imported


@pytest.fixture(scope="module")
def facts(tmp_path_factory) -> dict[str, Any]:
    return dict(Report.load(quick_numpy_results(tmp_path_factory.mktemp("results") / "r.json")).environment)


def _ab(facts: dict[str, Any]) -> dict[str, Any]:
    """A real `ab` file's JSON, one case with one paired ratio."""
    side = paired.Side("head", "a1b2c3d (HEAD)", "python3", "3.11", facts=facts)
    ratio = paired.PairedRatio("matmul", paired.VARIANT, "s", 0.010, 0.013, 1.3, (1.22, 1.38), Label.SLOWER)
    case = paired.PairedCase("matmul[numpy,cpu]", "ok", ratios=(ratio,), rounds=40, elapsed_s=44.8)
    report = ab_report.ABReport(
        "2026-11-23T12:00:00+00:00", "0.1.0", dataclasses.replace(side, name="base"), side, 0.05, 0.01, False, "SIGSTOP", (case,)
    )
    return json.loads(report.to_json())


@pytest.mark.parametrize(
    ("key", "where"),
    [("base", "cases[0].ratios[0].base"), ("head", "cases[0].ratios[0].head"), ("elapsed_s", "cases[0].elapsed_s")],
)
def test_a_figure_beyond_any_real_one_is_refused_in_one_line(facts, tmp_path, key, where):
    """The trial: 1e300 s as a median (or a case's time) was shown as a 300-digit number that pushed the case's name
    out of the table, and `show` exited 0."""
    raw = _ab(facts)
    if key == "elapsed_s":
        raw["cases"][0]["elapsed_s"] = 1e300
    else:
        raw["cases"][0]["ratios"][0][key] = 1e300
    (tmp_path / "ab.json").write_text(json.dumps(raw))
    shown = invoke("show", str(tmp_path / "ab.json"))
    assert shown.exit_code == 2, shown.output
    assert f"{where}: 1e+300 s is longer than any time `ab` measures" in shown.output
    assert "0000000000" not in shown.output


def test_a_reference_load_beyond_any_real_one_is_refused(tmp_path):
    raw = json.loads(quick_numpy_results(tmp_path / "r.json").read_text())
    raw["results"][0]["reference"]["load_per_core"] = 1e300
    (tmp_path / "r.json").write_text(json.dumps(raw))
    compared = invoke("compare", str(tmp_path / "r.json"), str(tmp_path / "r.json"))
    assert compared.exit_code == 2, compared.output
    assert "reference.load_per_core: 1e+300 is above any load a core has" in compared.output


@pytest.mark.parametrize(
    "edit",
    [
        lambda raw: raw["cases"][0].update(id="other[numpy,cpu]"),
        lambda raw: raw["cases"][0]["ratios"][0].update(name="renamed"),
    ],
    ids=["case-id", "variant"],
)
def test_an_ab_file_edited_after_it_was_recorded_is_refused_not_dropped_in_silence(history, facts, tmp_path, edit):
    """The trial: a file whose content differs from the run recorded under its id said `already recorded (run 1)`,
    exit 0, and its new content was dropped without a word."""
    raw = _ab(facts)
    (tmp_path / "ab.json").write_text(json.dumps(raw))
    assert in_process("record", "ab.json", "--history", history, cwd=tmp_path).returncode == 0
    same = in_process("record", "ab.json", "--history", history, cwd=tmp_path)
    assert same.returncode == 0, same.stderr
    assert "ab.json: already recorded (run 1)" in same.stderr, same.stderr
    edited = copy.deepcopy(raw)
    edit(edited)
    (tmp_path / "ab.json").write_text(json.dumps(edited))
    again = in_process("record", "ab.json", "--history", history, cwd=tmp_path)
    assert again.returncode == 2, again.stderr
    assert "ab.json: already recorded as run 1, but its" in again.stderr, again.stderr
    assert "differ" in again.stderr
    assert "not recorded" in again.stderr
    assert [run.id for run in store.open_store(target.resolve(history)).recent(10)] == [1]


def test_a_results_file_edited_after_it_was_recorded_is_refused_as_an_ab_file_is(history, tmp_path):
    path = quick_numpy_results(tmp_path / "r.json")
    assert in_process("record", "r.json", "--history", history, cwd=tmp_path).returncode == 0
    raw = json.loads(Path(path).read_text())
    raw["results"][0]["status"] = "error"  # a case that errored is recorded (one every case of which was skipped is not)
    raw["results"][0]["reason"] = "edited"
    Path(path).write_text(json.dumps(raw))
    again = in_process("record", "r.json", "--history", history, cwd=tmp_path)
    assert again.returncode == 2, again.stderr
    assert "r.json: already recorded as run 1, but its cases differ" in again.stderr, again.stderr
