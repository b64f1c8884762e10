"""A point lies within its own interval, or it is not asyncbench's (issue 53, item 1): nothing rejected one outside it,
so a recorder that stored an `ab` gate's last block's log ratio beside the true interval drew every point outside its
own error bar, unnoticed. Now the recorder refuses such a point before anything is written (a bug there fails
loudly), a results file that says one is refused in one line (exit 2, nothing of it stored), and a store that holds
one reads as damaged, as a row that is not what asyncbench writes does."""

from __future__ import annotations

import json

import pytest

from asyncbench.history import recorded, store, target
from asyncbench.history.database import StoreError
from asyncbench.results.schema import Report
from tests.support.cli import asyncbench, refused
from tests.support.helpers import quick_numpy_results
from tests.support.stores import a_store, snapshot, sql


@pytest.fixture(scope="module")
def results_file(tmp_path_factory):
    return quick_numpy_results(tmp_path_factory.mktemp("results") / "r.json")


def test_a_recorder_that_puts_a_point_outside_its_interval_fails_and_stores_nothing(tmp_path, results_file, monkeypatch):
    report = Report.load(results_file)
    made = recorded.quantities

    def shifted(result):  # what the `ab` recorder did: a figure that is not the one its interval bounds
        rows = made(result)
        return [{**row, "value": row["high"] * 2} if row["high"] is not None else row for row in rows]

    monkeypatch.setattr(recorded, "quantities", shifted)
    opened = store.open_store(target.resolve(str(tmp_path / "h.sqlite")), writing=True)
    with pytest.raises(StoreError, match=r"cannot record: .*(done_s|machine_s): a point .* lies outside its own interval \["):
        opened.record(report)
    assert opened.recent(10) == []
    assert opened.series() == []


def test_a_results_file_whose_median_lies_outside_its_interval_is_refused_in_one_line(tmp_path, results_file):
    raw = json.loads(results_file.read_text())
    # a variant with an interval: under a CI runner's load a quick run's first variant drifted and had none
    done_s = next(v["done_s"] for r in raw["results"] for v in r["variants"].values() if v["done_s"]["ci_high"] is not None)
    done_s["median"] = done_s["ci_high"] * 3
    (tmp_path / "forged.json").write_text(json.dumps(raw))
    done = asyncbench("record", "forged.json", "--history", "h.sqlite", cwd=tmp_path)
    refused(done, "forged.json", "done_s", "outside its own interval", "not what asyncbench writes")
    assert not (tmp_path / "h.sqlite").exists()  # refused as the file is read, before a store is made


@pytest.mark.parametrize("command", [("history",), ("report", "-o", "page.html")], ids=["history", "report"])
def test_a_stored_point_outside_its_interval_reads_as_a_damaged_store(command, tmp_path, results_file):
    path = a_store(tmp_path, results_file)
    sql(path, "UPDATE asyncbench_points SET value = high * 2 WHERE id = (SELECT min(id) FROM asyncbench_points WHERE high > 0)")
    before = snapshot(tmp_path)
    done = asyncbench(*command, "--history", "h.sqlite", cwd=tmp_path)
    refused(done, "h.sqlite", "lies outside its own interval", "damaged")
    assert snapshot(tmp_path) == before
