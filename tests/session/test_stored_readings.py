"""A results file's readings are made again from its figures, never shown as the file wrote them (issue 53).

A hand-edited file whose reading says "the step is 10x faster than before" would print those words under its row as
the tool's own conclusion, beside figures that contradict them. Every reader rebuilds each ok result's reading with
the rule of the workload that wrote it (a built-in, the step form) and drops a user's own Workload class's stored
words (workloads.stored_readings). A genuine file renders exactly as before: the rebuilt reading is the stored one.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest

from asyncbench.results import journal
from asyncbench.results.model import OK, PlannedCase, ShardOf
from asyncbench.results.schema import Report
from asyncbench.session import reading, shards
from asyncbench.session.requests import Outputs, RunRequest
from asyncbench.session.saver import Saver
from asyncbench.workloads import stored_readings
from asyncbench.workloads.step_reading import StepForm
from tests.support.cli import asyncbench, invoke
from tests.support.helpers import ok_result, quick_numpy_results

FORGED = "the step is 10x faster than before"

#: a user's step: its results are read back by the step form's rule, its module never imported to do it
STEP = """\
import asyncbench


@asyncbench.step
def tiny(backend, device, params):
    x = backend.ones((16, 16), "float32", device)
    return lambda: x @ x
"""


@pytest.fixture(scope="module")
def written(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    """Files the tool writes: matmul (--quick), and sync_async, small_ops and a user's step (--quick) in another."""
    folder = tmp_path_factory.mktemp("stored_readings")
    (folder / "tiny_step.py").write_text(STEP, encoding="utf-8")
    done = asyncbench(
        "run", "-w", "sync_async", "-w", "small_ops", "-w", "tiny_step.py:tiny", "-b", "numpy", "--quick", "--no-progress",
        "--allow-inconclusive", "-o", "several.json", cwd=folder,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    return [quick_numpy_results(folder / "matmul.json"), folder / "several.json"]


def _forged(path: Path, to: Path, **changed: Any) -> Path:
    """`path`'s file with every ok result's reading (and `changed` fields) edited by hand."""
    raw = json.loads(path.read_text(encoding="utf-8"))
    for result in raw["results"]:
        if result["status"] == OK:
            result.update(reading=FORGED, **changed)
    to.write_text(json.dumps(raw), encoding="utf-8")
    return to


def test_a_genuine_files_readings_are_rebuilt_as_stored(written):
    """Built-ins and a step, --quick: each rebuilt reading is the very line the run stored, so the file renders as
    it did; the step's result is read by the step form's rule (its module is not imported)."""
    step_rows = 0
    for path in written:
        raw = json.loads(path.read_text(encoding="utf-8"))
        loaded = reading.load_results(path)
        assert len(loaded.results) == len(raw["results"])
        for result, stored in zip(loaded.results, raw["results"], strict=True):
            assert result.status == OK, result.id
            assert stored["reading"], result.id
            assert result.reading == stored["reading"], result.id
            step_rows += isinstance(stored_readings.rule_for(result), StepForm)
    assert step_rows == 1


def test_a_forged_reading_is_not_shown_by_show_or_compare(written, tmp_path):
    for index, path in enumerate(written):
        forged = _forged(path, tmp_path / f"forged-{index}.json")
        genuine = [r.reading for r in reading.load_results(path).results]
        for argv in (["show", str(forged)], ["show", str(forged), "--format", "markdown"], ["compare", str(path), str(forged)]):
            shown = invoke(*argv, env={"COLUMNS": "400"})
            assert FORGED not in shown.output, argv
        assert [r.reading for r in reading.load_results(forged).results] == genuine
        assert any(g and g in invoke("show", str(forged), "--format", "markdown").output for g in genuine)


def test_a_user_workloads_stored_words_are_dropped(written, tmp_path):
    """A user's own Workload class cannot be asked again without importing its module: its stored words are not
    shown as a reading (the figures still are)."""
    forged = _forged(written[0], tmp_path / "mine.json", workload=str(tmp_path / "mine.py") + ":Mine")
    loaded = reading.load_results(forged)
    assert loaded.results
    assert all(r.reading is None and r.metrics for r in loaded.results)
    assert FORGED not in invoke("show", str(forged)).output


def test_a_rows_reading_that_is_not_ok_is_dropped(written, tmp_path):
    raw = json.loads(written[0].read_text(encoding="utf-8"))
    report = Report.from_dict(raw, str(written[0]))
    error = dataclasses.replace(report.results[0], status="error", reason="died", reading=FORGED)
    assert stored_readings.rebuilt(error).reading is None


def test_a_journals_forged_reading_is_not_shown(written, tmp_path):
    """A run that did not end is read from its journal: its readings are made again as a results file's are."""
    report = Report.load(written[0])
    target = tmp_path / "cut.json"
    kept = journal.Journal.start(target, report)
    from asyncbench.results import records

    forged = [dataclasses.replace(r, reading=FORGED) for r in report.results]
    kept.append([journal.declared(r.workload, r.metric_info) for r in forged[:1]] + [records.result_line(r) for r in forged])
    kept.close()
    loaded = reading.load_results(target)
    assert [r.reading for r in loaded.results] == [r.reading for r in report.results]
    assert FORGED not in invoke("show", str(target)).output


def test_merge_rebuilds_each_shards_readings(tmp_path, monkeypatch):
    """`merge` reads shards as `show` reads a file: a shard's forged reading does not reach the merged report."""
    from asyncbench.results import shard_plan

    monkeypatch.setattr(shard_plan, "proven", lambda ordered: None)  # the forgery checks: tests/e2e/test_merge_forgery.py
    paths = []
    for index, case in ((1, "m[torch,cpu,k=a]"), (2, "m[torch,cpu,k=b]")):
        stamp = ShardOf(index, 2, "ab" * 32, 2, (PlannedCase(case, "m", "matmul", "torch", "cpu", {}),), (index - 1,))
        row = dataclasses.replace(ok_result(case), reading=FORGED)
        report = Report.new({"name": "plan", "experiments": []}, {"hostname": f"runner-{index}"}, (row,))
        dataclasses.replace(report, shard=stamp).save(tmp_path / f"s{index}.json")
        paths.append(str(tmp_path / f"s{index}.json"))
    place = shards.Merged(paths, RunRequest(outputs=Outputs(str(tmp_path / "all.json")), progress=False), lambda line: None)
    place.preflight()
    place.start(Saver(None, lambda line: None), contextlib.ExitStack())
    merged = place.collect(interrupted=False)
    assert merged.results
    assert all(r.reading != FORGED for r in merged.results)


def test_a_runs_reading_is_made_from_its_samples_as_stored(tmp_path):
    """A reading is made from the samples as the file stores them (to the nanosecond), so reading the file back
    rebuilds the very same line: here the raw samples' judged illusion is 1.19×, the stored ones' 1.20×."""
    from asyncbench.results import stats
    from asyncbench.results.model import Samples, VariantResult
    from asyncbench.workloads import BUILT_IN
    from asyncbench.workloads.matmul import VARIANT
    from tests.support.helpers import report_of

    issue, done = (100.4e-9,) * 12, (119.51e-9,) * 12
    variant = VariantResult(Samples(issue, done), stats.summarize(issue), stats.summarize(done), None)
    row = dataclasses.replace(
        ok_result("mm[numpy,cpu]"),
        variants={VARIANT: variant},
        metrics={"issue_s": issue[0], "done_s": done[0], "illusion": done[0] / issue[0], "gflops": 1.0},  # as its rounds give
        bounds={"illusion": (done[0] / issue[0],) * 2, "gflops": (0.9, 1.1)},  # (no params: no FLOP count to hold gflops to)
        asynchronous=True,
    )
    matmul = BUILT_IN["matmul"]
    described = matmul.describe(row)
    assert described.reading
    assert described.reading != matmul.reading(row)
    report_of([described]).save(tmp_path / "r.json")
    assert reading.load_results(tmp_path / "r.json").results[0].reading == described.reading
