"""Issue 53, item 10 (d): multi_device's and copy_overlap's readings follow from the measured part times and their
intervals, re-read from the committed H100 rows whose readings contradicted their numbers.

- multi_device[torch,cuda:0,size=2000,n_iter=10] (results/nvidia-h100-80gb-hbm3/default.json): the GPU's part took
  3.67 ms and the CPU's 12.9 ms, 3.5× apart, and the note said "balanced to similar alone-times".
- copy_overlap[torch,cuda:0,size=512,n_matrices=8] (quick/default.json) and its config twin (quick/
  automatic-parallelism.json): the overlapped run took 0.43 ms against sequential's 0.345 ms, and the reading said
  "little overlap"; CuPy's twin there saved time (1.16× [1.10–1.20]) and was read "overlap not shown either way".

Each row's own samples go through today's round metrics and reading (engine.rounds.figures, Workload.describe), so
the tests read what a run would print now from the numbers the GPU gave.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from asyncbench.engine import rounds
from asyncbench.results.model import OK, Result
from asyncbench.results.schema import Report
from asyncbench.workloads import BUILT_IN, multi_device
from tests.support.stream_device import StreamSimBackend

H100 = Path(__file__).resolve().parents[2] / "results" / "nvidia-h100-80gb-hbm3"


def reread(path: Path, case_id: str) -> Result:
    """The committed row `case_id` of `path` with its metrics, intervals and reading made again by today's code."""
    (row,) = [r for r in Report.load(path).results if r.id == case_id]
    workload = BUILT_IN[row.workload]
    metrics, bounds = rounds.figures(workload, row.params, row.variants, row.asynchronous)
    return workload.describe(dataclasses.replace(row, metrics=metrics, bounds=bounds, reading=None))


# --- multi_device: "balanced" only where the measured parts are ------------------------------------------------


def test_parts_3_5x_apart_on_the_h100_are_read_as_not_balanced():
    result = reread(H100 / "default.json", "multi_device[torch,cuda:0,size=2000,n_iter=10]")
    low, high = result.bounds["parts_ratio"]
    assert 3.3 < low <= result.metrics["parts_ratio"] <= high < 3.7  # 12.9 ms against 3.67 ms
    reading = result.reading or ""
    assert "not balanced" in reading
    assert "3.52×" in reading
    # with parts that far apart, perfect overlap could make together at most 1 + 1/3.52 = 1.28× faster
    assert "at most 1.28×" in reading


def test_parts_within_the_threshold_on_the_h100_are_read_as_balanced():
    result = reread(H100 / "automatic-parallelism.json", "parallel-computation-on-gpus[torch,cuda:0]")  # 131 and 105 ms
    assert result.bounds["parts_ratio"][1] < multi_device.BALANCED_WITHIN
    assert "the parts were balanced" in (result.reading or "")
    assert "not balanced" not in (result.reading or "")


def test_a_ratio_whose_interval_straddles_the_threshold_says_neither():
    workload = BUILT_IN["multi_device"]
    result = reread(H100 / "default.json", "multi_device[torch,cuda:0,size=2000,n_iter=10]")
    straddling = dataclasses.replace(
        result,
        metrics={**result.metrics, "parts_ratio": 1.5},
        bounds={**result.bounds, "parts_ratio": (1.3, 1.7)},
    )
    reading = workload.reading(straddling)
    assert "balanced parts not shown either way" in reading
    assert "not balanced" not in reading
    assert "the parts were balanced" not in reading
    assert "straddles 1.5" in reading


def test_the_note_says_how_the_count_was_set_never_that_the_parts_came_out_balanced(monkeypatch):
    """The H100's calibration: one 2000² product 0.367 ms on the GPU, 12.6 ms on the CPU; 10 × 0.367 / 12.6 rounds to
    0, raised to the fewest, 1: a CPU part 3.4× the GPU's, which the note called "balanced to similar alone-times"."""
    timed = iter([0.367e-3, 12.6e-3])
    monkeypatch.setattr(multi_device, "_fastest_s", lambda run, sync: next(timed))
    backend = StreamSimBackend(gpus=1)
    try:
        prepared = BUILT_IN["multi_device"].setup(backend, "cuda:0", {"size": 8, "n_iter": 10, "partner": "cpu", "dtype": "float32"})
    finally:
        backend.close()
    note = prepared.note or ""
    assert "cpu ×1 products" in note
    assert "balanced" not in note
    assert "similar" not in note
    assert "cpu's count from one product timed on each: cuda:0 367 µs, cpu 12.6 ms; 1 is the fewest, n_iter 34 would match them" in note


# --- copy_overlap: overlap only where the interval of sequential − overlapped excludes zero -----------------------


@pytest.mark.parametrize(
    "file, case_id",
    [
        ("quick/default.json", "copy_overlap[torch,cuda:0,size=512,n_matrices=8]"),
        ("quick/automatic-parallelism.json", "parallel-computation-and-communication[torch,cuda:0,size=512,n_matrices=8]"),
    ],
)
def test_an_overlapped_run_slower_than_sequential_on_the_h100_reads_no_overlap(file, case_id):
    result = reread(H100 / file, case_id)
    low, high = result.bounds["overlap_saved_s"]
    assert high < 0  # overlapped took 0.42-0.43 ms, sequential 0.33-0.345 ms
    reading = result.reading or ""
    assert reading.startswith("no overlap (overlapped run slower): it took ")
    assert "µs" in reading.split("more than sequential")[0]
    assert "little overlap" not in reading
    assert "ran under" not in reading


def test_an_overlapped_run_faster_than_sequential_on_the_h100_reads_overlap():
    result = reread(H100 / "quick/automatic-parallelism.json", "parallel-computation-and-communication[cupy,cuda:0,size=512,n_matrices=8]")
    assert result.bounds["overlap_saved_s"][0] > 0
    reading = result.reading or ""
    assert reading.startswith("overlap: copies ran under the products; the overlapped run saved 51.6 µs [33.7–60.9]")


def test_a_saving_whose_interval_reaches_zero_says_no_overlap_shown():
    result = reread(H100 / "quick/default.json", "copy_overlap[cupy,cuda:0,size=512,n_matrices=8]")  # 1.12× [0.94–1.30]
    low, high = result.bounds["overlap_saved_s"]
    assert low <= 0 <= high
    reading = result.reading or ""
    assert reading.startswith("no overlap shown")
    assert "ran under" not in reading


def test_the_textbook_sized_rows_still_read_as_copies_under_the_products():
    result = reread(H100 / "default.json", "copy_overlap[torch,cuda:0,size=2000,n_matrices=20]")  # 12.9 ms against 7.3 ms
    assert result.bounds["overlap_saved_s"][0] > 5e-3
    assert (result.reading or "").startswith("overlap: copies ran under the products")


def test_a_row_from_before_the_saving_was_recorded_is_read_from_the_speedup():
    """A results file older than schema 3 is re-described from its metrics: without overlap_saved_s the speedup's
    interval against 1 (sequential / overlapped, the same rounds' sign) decides."""
    result = reread(H100 / "quick/default.json", "copy_overlap[torch,cuda:0,size=512,n_matrices=8]")
    old = dataclasses.replace(
        result,
        metrics={k: v for k, v in result.metrics.items() if k != "overlap_saved_s"},
        bounds={k: v for k, v in result.bounds.items() if k != "overlap_saved_s"},
    )
    assert old.status == OK
    assert BUILT_IN["copy_overlap"].reading(old).startswith("no overlap (overlapped run slower)")
