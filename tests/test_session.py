"""The session: one request from plan to outcome, and results files made ready to render."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from asyncbench.errors import EXIT_ERRORS, EXIT_OK, InputError
from asyncbench.session import local, reading
from asyncbench.session.requests import Outputs, RunRequest, Selection


@pytest.fixture(scope="module")
def measured(tmp_path_factory) -> Path:
    """A real run of sync_async on numpy, saved."""
    path = tmp_path_factory.mktemp("session") / "r.json"
    request = RunRequest(Selection(workloads=("sync_async",), backends=("numpy",), quick=True), Outputs(str(path)), progress=False)
    ended = local.run(request, say=lambda line: None)
    assert ended.code == EXIT_OK
    return path


def test_a_run_stores_each_metrics_unit_once_per_workload_and_each_cases_reading(measured):
    data = json.loads(measured.read_text())
    (result,) = data["results"]
    declared = data["metric_info"]["sync_async"]
    assert declared["speedup"] == {
        "unit": "x",
        "help": "sync done time / async done time: each round's own ratio (paired), its median over the rounds",
    }
    assert declared["t1_s"]["unit"] == "s"
    assert "metric_info" not in result  # its workload's, stored once
    assert result["reading"].startswith("synchronous backend")
    (loaded,) = reading.load_results(measured).results
    assert loaded.metric_info["speedup"].unit == "x"


def test_a_run_that_ends_leaves_its_results_file_with_each_cases_time_and_no_journal(measured):
    (result,) = json.loads(measured.read_text())["results"]
    sampling = result["sampling"]["elapsed_s"]
    assert result["case_s"] > sampling > 0  # the whole case: set-up and memory runs besides the sampling
    assert not Path(f"{measured}.journal").exists()


def test_a_schema_2_file_gets_units_and_reading_from_the_built_in_workload(measured, tmp_path):
    raw = json.loads(measured.read_text())
    raw["schema_version"] = 2
    del raw["metric_info"]
    for result in raw["results"]:
        del result["reading"]
        result.pop("reference", None)  # schema 10's
    old = tmp_path / "v2.json"
    old.write_text(json.dumps(raw))
    (result,) = reading.load_results(old).results
    assert result.metric_info["speedup"].unit == "x"
    assert result.reading is not None
    assert result.reading.startswith("synchronous backend")


def test_an_output_that_cannot_be_written_after_the_run_is_an_error_of_the_run(tmp_path, monkeypatch):
    """The outcome is judged once; a file that fails to be written afterwards adds its reason and exit 3."""
    from asyncbench.results import writing

    real = writing.atomic_write

    def full_for_markdown(path, content):
        if str(path).endswith(".md"):
            raise OSError(28, "No space left on device", str(path))
        real(path, content)

    monkeypatch.setattr(writing, "atomic_write", full_for_markdown)
    said: list[str] = []
    request = RunRequest(
        Selection(workloads=("matmul",), backends=("numpy",), quick=True),
        Outputs(files={"markdown": str(tmp_path / "s.md")}),
        progress=False,
    )
    ended = local.run(request, say=said.append)
    assert ended.code == EXIT_ERRORS
    assert ended.view.outcome is not None
    assert ended.view.outcome.reasons[0] == f"could not write {tmp_path / 's.md'}"
    assert any("cannot write an output: No space left on device" in line for line in said)


def test_a_bad_request_is_refused_before_anything_runs(tmp_path):
    with pytest.raises(InputError, match="the same file is named for two outputs"):
        local.run(
            RunRequest(Selection(workloads=("matmul",)), Outputs(str(tmp_path / "a"), {"csv": str(tmp_path / "a")})),
            say=lambda line: None,
        )
