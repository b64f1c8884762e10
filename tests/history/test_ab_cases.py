"""What an `ab` case ran reaches the history as the file states it: its workload, backend, device and params, not
what can be parsed out of its id (whose name is the experiment's, and which names only the params that differ from
the defaults). Older files, which state only the id, still read as they did, under the keys they were stored by."""

from __future__ import annotations

import copy
import dataclasses
import json
import sqlite3
from pathlib import Path

import pytest

from asyncbench.errors import InputError
from asyncbench.history import keys, tables
from asyncbench.results import ab_file, ab_report, paired
from asyncbench.results.labels import Label
from asyncbench.results.model import Case, Settings
from tests.support.cli import invoke

FACTS = {"cpu": "Test CPU", "cpu_cores_logical": 2, "hostname": "runner", "frameworks": {"numpy": {"version": "2.0"}}}
# The experiment is named `mm`, its workload is `matmul`; `dtype` is at its default, so the id does not name it.
CASE = Case("mm[numpy,cpu,n=256]", "mm", "matmul", "numpy", "cpu", {"n": 256, "dtype": "float32"}, Settings())
# An `ab` file of schema 1 (no run id: keyed by its content), as such a file was written.
IDLESS = {
    "created": "2026-01-05T10:00:00+00:00",
    "tool_version": "0.1.0",
    "schema_version": 1,
    "base": {"name": "base", "revision": "b0b0b0b0b0b0 (origin/main)", "python": "python3", "python_version": "3.11"},
    "head": {"name": "head", "revision": "a1b2c3d4e5f6 (HEAD)", "python": "python3", "python_version": "3.11", "facts": FACTS},
    "max_regression": 0.05,
    "family_error": 0.01,
    "allow_inconclusive": False,
    "idle_side": "SIGSTOP",
    "cases": [
        {
            "id": "mm[numpy,cpu,n=64]",
            "status": "ok",
            "rounds": 40,
            "ratios": [
                {"name": "matmul", "kind": "variant", "unit": "s", "base": 0.01, "head": 0.013, "ratio": 1.3}
                | {"ratio_ci": [1.22, 1.38], "label": "SLOWER", "verdict": "fail"}
            ],
        },
        {"id": "mm[numpy,cpu,n=128]", "status": "skipped", "reason": "too big"},
    ],
}
# IDLESS's key as asyncbench computed it before the reader was typed (commit 36d3163): a store that holds the file
# must find it again, not record it twice.
IDLESS_KEY = "40c8a5095a7153f26cddd749289a0a2727ad9cabb0b3666453dda0df64c95b94"


def _ab_file(tmp_path: Path) -> Path:
    side = paired.Side("head", "a1b2c3d (HEAD)", "python3", "3.11", facts=FACTS)
    ratio = paired.PairedRatio("matmul", paired.VARIANT, "s", 0.010, 0.013, 1.3, (1.22, 1.38), Label.SLOWER)
    row = paired.PairedCase.of(CASE, "ok", ratios=(ratio,), rounds=100, blocks=10)
    report = ab_report.ABReport(
        "2026-11-23T12:00:00+00:00", "0.1.0", dataclasses.replace(side, name="base"), side, 0.05, 0.01, False, "SIGSTOP", (row,)
    )
    path = tmp_path / "ab.json"
    path.write_text(report.to_json())
    return path


def _stored_cases(history: Path) -> list[tuple[str, str, str, str, dict]]:
    with sqlite3.connect(history) as connection:
        rows = connection.execute(f"SELECT case_id, workload, backend, device, params FROM {tables.PREFIX}cases").fetchall()
    return [(case_id, workload, backend, device, json.loads(params)) for case_id, workload, backend, device, params in rows]


def test_an_ab_cases_workload_and_params_survive_recording(tmp_path):
    path = _ab_file(tmp_path)
    [case] = ab_file.read(path).cases
    assert (case.workload, case.backend, case.device, dict(case.params)) == ("matmul", "numpy", "cpu", CASE.params)
    history = tmp_path / "h.sqlite"
    done = invoke("record", str(path), "--history", str(history))
    assert done.exit_code == 0, done.output
    assert _stored_cases(history) == [("mm[numpy,cpu,n=256]", "matmul", "numpy", "cpu", {"n": 256, "dtype": "float32"})]


def test_a_verdict_is_its_labels_and_a_file_that_says_otherwise_is_refused(tmp_path):
    raw = json.loads(_ab_file(tmp_path).read_text())
    ratio = raw["cases"][0]["ratios"][0]
    assert (ratio["label"], ratio["verdict"]) == ("SLOWER", "fail")  # the words files held before the enum
    assert ab_file.from_dict(raw, "ab.json").cases[0].ratios[0].verdict == Label.SLOWER.verdict
    ratio["verdict"] = "pass"
    with pytest.raises(InputError, match=r"cases\[0\]\.ratios\[0\]\.verdict"):
        ab_file.from_dict(raw, "ab.json")


@pytest.mark.parametrize(
    ("spoil", "key"),
    [
        (lambda case: case.update(params=["n", 256]), "cases[0].params"),
        (lambda case: case.update(params={"n\x1b[2J": 1}), "cases[0].params"),
        (lambda case: case.update(backend="--output=x"), "cases[0].backend"),
        (lambda case: case.update(workload=""), "cases[0].workload"),
    ],
)
def test_what_a_case_ran_is_held_to_its_vocabulary(spoil, key, tmp_path):
    raw = json.loads(_ab_file(tmp_path).read_text())
    spoil(raw["cases"][0])
    with pytest.raises(InputError, match=key.replace("[", r"\[").replace("]", r"\]")):
        ab_file.from_dict(raw, "ab.json")


def test_a_file_before_schema_4_reads_its_case_from_the_id_under_the_key_it_was_stored_by():
    read = ab_file.from_dict(copy.deepcopy(IDLESS), "old.json")
    assert [(c.workload, c.backend, c.device, dict(c.params)) for c in read.cases] == [("mm", "numpy", "cpu", {})] * 2
    assert keys.of_ab(read).key == IDLESS_KEY
