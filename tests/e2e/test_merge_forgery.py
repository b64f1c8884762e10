"""`asyncbench merge` takes a case only from the shard that planned it (issue 56).

Two real shards' files (`run --shard I/2` on a tiny numpy plan), then forged
as a shard's file edited on its way from a CI runner could be: a row of the
other shard's case (a thousand times slower) copied or moved in, a row of a
case no shard planned, a planned case moved from one shard's list to the
other's, a case added to a shard's list, a setting changed in one file's
config, a row dropped. Each is refused through the real CLI: exit 2, one line
per mistake naming the file and the case, no traceback, nothing written.
"""

from __future__ import annotations

import copy
import dataclasses
import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from asyncbench.results import shard_plan, shards, stats
from asyncbench.results.model import OK, PlannedCase, Settings, ShardOf
from asyncbench.results.schema import Report
from tests.support.cli import asyncbench
from tests.support.helpers import ok_result
from tests.support.restated import restated

# Four quick numpy cases of equal cost: the cut deals them out in turn, shard 1 gets the plan's places 0 and 2,
# shard 2 places 1 and 3.
PLAN = """\
experiments:
  - name: sync_async
    workload: sync_async
    backends: [numpy]
    devices: [cpu]
    sweep: {n_ops: [10, 30, 100]}
  - name: matmul
    workload: matmul
    backends: [numpy]
    devices: [cpu]
"""
QUICK = ["--quick", "--no-progress", "--allow-inconclusive"]
SLOWER = 1000.0


@pytest.fixture(scope="module")
def matrix(tmp_path_factory: pytest.TempPathFactory) -> dict[int, dict[str, Any]]:
    """The two shards' files as `run --shard I/2` wrote them, parsed."""
    folder = tmp_path_factory.mktemp("forgery")
    (folder / "plan.yaml").write_text(PLAN, encoding="utf-8")
    for index in (1, 2):
        done = asyncbench("run", "plan.yaml", *QUICK, "--shard", f"{index}/2", "-o", f"shard-{index}.json", cwd=folder)
        assert done.returncode == 0, done.stderr
    files = {index: json.loads((folder / f"shard-{index}.json").read_text(encoding="utf-8")) for index in (1, 2)}
    assert [len(files[i]["results"]) for i in (1, 2)] == [2, 2]
    return files


def _slower(row: dict[str, Any]) -> dict[str, Any]:
    """The row, every time in it a thousand times longer."""
    forged = copy.deepcopy(row)
    for variant in forged["variants"].values():
        for clock in ("issue_s", "done_s"):
            variant["samples"][clock] = [value * SLOWER for value in variant["samples"][clock]]
            # its summary the scaled samples' own (a reader holds one to the other), as a careful forger would make it
            variant[clock] = dataclasses.asdict(stats.summarize(variant["samples"][clock]))
    # and its paired figures those the scaled samples give (a reader holds them to the samples: results.workload_figures)
    return restated(forged)


def _merge(tmp_path: Path, files: dict[int, dict[str, Any]]) -> subprocess.CompletedProcess[str]:
    for index, raw in files.items():
        (tmp_path / f"shard-{index}.json").write_text(json.dumps(raw), encoding="utf-8")
    done = asyncbench("merge", "shard-1.json", "shard-2.json", "-o", "all.json", "--markdown", "all.md", cwd=tmp_path)
    assert "Traceback" not in done.stderr
    assert not (tmp_path / "all.json").exists(), "a refused merge wrote its report"
    assert not (tmp_path / "all.md").exists()
    assert not [p.name for p in tmp_path.iterdir() if p.name.startswith(".")], "a temporary file was left"
    return done


def _lines(done: subprocess.CompletedProcess[str]) -> list[str]:
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert all(line.startswith("asyncbench: error: ") for line in lines), lines
    return lines


def _copy_in(files: dict[int, dict[str, Any]]) -> None:
    """Shard 1's file carries shard 2's first case, a thousand times slower; shard 2's real row is still there."""
    files[1]["results"].append(_slower(files[2]["results"][0]))


def _move_in(files: dict[int, dict[str, Any]]) -> None:
    """Shard 2's first case moved to shard 1's file, a thousand times slower, and taken out of shard 2's."""
    files[1]["results"].append(_slower(files[2]["results"].pop(0)))


def _unplanned(files: dict[int, dict[str, Any]]) -> None:
    """A row for a case no shard planned (n_ops=999 is no point of the sweep)."""
    row = _slower(files[1]["results"][0])
    row["id"] = "sync_async[numpy,cpu,n_ops=999]"
    row["params"] = {**row["params"], "n_ops": 999}
    files[1]["results"].append(restated(row))  # its per-op figures of 999 ops: the forgery is the case, not its figures


def test_the_real_shards_merge(matrix, tmp_path):
    """What the forgeries are made from merges: every refusal below is the forgery's."""
    done = asyncbench("merge", *(f"shard-{i}.json" for i in (1, 2)), "-o", "all.json", cwd=_written(tmp_path, matrix))
    assert done.returncode == 0, done.stderr
    assert len(json.loads((tmp_path / "all.json").read_text())["results"]) == 4


def _written(folder: Path, files: dict[int, dict[str, Any]]) -> Path:
    for index, raw in files.items():
        (folder / f"shard-{index}.json").write_text(json.dumps(raw), encoding="utf-8")
    return folder


@pytest.mark.parametrize("forge", [_copy_in, _move_in], ids=["copied", "moved"])
def test_a_row_of_the_other_shards_case_is_refused_naming_the_file_and_the_case(matrix, tmp_path, forge):
    files = copy.deepcopy(matrix)
    case = files[2]["results"][0]["id"]
    forge(files)
    lines = _lines(_merge(tmp_path, files))
    forged = [line for line in lines if line.startswith("asyncbench: error: shard-1.json: ")]
    assert len(forged) == 1, lines
    assert case in forged[0], forged
    assert "shard 2/2" in forged[0], forged
    if forge is _copy_in:
        assert len(lines) == 1, lines
    else:  # shard 2's own row taken out: its loss is a mistake of its own, said on a line of its own
        assert len(lines) == 2, lines
        assert lines[1].startswith("asyncbench: error: shard-2.json: "), lines
        assert case in lines[1], lines


def test_a_row_of_a_case_no_shard_planned_is_refused(matrix, tmp_path):
    files = copy.deepcopy(matrix)
    _unplanned(files)
    [line] = _lines(_merge(tmp_path, files))
    assert line.startswith("asyncbench: error: shard-1.json: ")
    assert "sync_async[numpy,cpu,n_ops=999]" in line
    assert "no case of the plan" in line


def test_a_case_moved_into_a_shards_planned_list_is_refused_by_the_plans_cut(matrix, tmp_path):
    """The forger edits shard 1's list of planned cases too: the plan's cut (redone from the files) gives the case
    to shard 2, which says so, so shard 1's claim is the forged one."""
    files = copy.deepcopy(matrix)
    stamp = files[2]["shard"]
    case, place = stamp["cases"][0], stamp["positions"][0]
    files[1]["shard"]["cases"].append(case)
    files[1]["shard"]["positions"].append(place)
    _copy_in(files)
    [line] = _lines(_merge(tmp_path, files))
    assert line.startswith("asyncbench: error: shard-1.json: ")
    assert case["id"] in line
    assert "shard 2/2" in line


def test_a_case_added_to_a_shards_planned_list_is_refused(matrix, tmp_path):
    """An unplanned case in shard 1's list, at a place of its own (the plan said one case more): the plan's digest,
    which shard 2 states, is not made by the cases the shards list."""
    files = copy.deepcopy(matrix)
    _unplanned(files)
    row = files[1]["results"][-1]
    stamp = files[1]["shard"]
    stamp["cases"].append({key: row[key] for key in ("id", "experiment", "workload", "backend", "device", "params")})
    stamp["positions"].append(stamp["plan_cases"])
    stamp["plan_cases"] += 1
    lines = _lines(_merge(tmp_path, files))
    assert len(lines) == 1, lines
    assert lines[0].startswith("asyncbench: error: shard-1.json: "), lines
    assert "sync_async[numpy,cpu,n_ops=999]" in lines[0], lines


def test_a_planned_case_changed_in_a_shards_list_is_refused_naming_it(matrix, tmp_path):
    """A planned case's params edited in shard 1's list: no config makes the plan's digest from the shards' cases,
    and the case is no point of shard 1's own config's sweep."""
    files = copy.deepcopy(matrix)
    case = files[1]["shard"]["cases"][0]
    case["params"]["n_ops"] = 11
    [line] = _lines(_merge(tmp_path, files))
    assert line.startswith("asyncbench: error: shard-1.json: ")
    assert case["id"] in line
    assert "no point of its config's sweep" in line


def test_a_setting_changed_in_one_files_config_is_refused(matrix, tmp_path):
    """The cut and the digest are the config's: a file whose config does not make the plan every shard names."""
    files = copy.deepcopy(matrix)
    files[1]["config"]["experiments"][0]["max_time_s"] = 100.0
    [line] = _lines(_merge(tmp_path, files))
    assert line.startswith("asyncbench: error: shard-1.json: ")
    assert "config" in line


def test_a_finished_shards_row_taken_out_is_refused(matrix, tmp_path):
    files = copy.deepcopy(matrix)
    case = files[2]["results"].pop(0)["id"]
    [line] = _lines(_merge(tmp_path, files))
    assert line.startswith("asyncbench: error: shard-2.json: ")
    assert case in line


def test_a_row_whose_params_are_not_its_planned_cases_is_refused(matrix, tmp_path):
    """A new user's forgery: the id of a planned case kept, the params edited (the merged table showed one size
    twice). The id is a name; what ran is its work and params, and those must be the planned case's."""
    files = copy.deepcopy(matrix)
    row = files[2]["results"][0]
    row["params"] = {**row["params"], "n_ops": 12345}
    [line] = _lines(_merge(tmp_path, files))
    assert line.startswith("asyncbench: error: shard-2.json: ")
    assert row["id"] in line
    # the reader holds each row's params to its own id before merge holds the rows to the plan (results.case_held)
    assert "params.n_ops: 12345, but its id" in line


def test_a_row_given_twice_is_refused(matrix, tmp_path):
    files = copy.deepcopy(matrix)
    files[2]["results"].append(_slower(files[2]["results"][0]))
    [line] = _lines(_merge(tmp_path, files))
    assert line.startswith("asyncbench: error: shard-2.json: ")
    assert files[2]["results"][0]["id"] in line


def test_mistakes_in_both_files_are_a_line_each(matrix, tmp_path):
    files = copy.deepcopy(matrix)
    _unplanned(files)
    files[2]["results"].append(_slower(files[1]["results"][0]))
    lines = _lines(_merge(tmp_path, files))
    assert len(lines) == 2, lines
    assert [line.split(": ")[2] for line in lines] == ["shard-1.json", "shard-2.json"]


def test_a_file_of_many_forged_rows_is_said_in_a_screenful(matrix, tmp_path):
    files = copy.deepcopy(matrix)
    for n_ops in range(1000, 1025):
        row = copy.deepcopy(files[1]["results"][0])
        row["id"], row["params"] = f"sync_async[numpy,cpu,n_ops={n_ops}]", {**row["params"], "n_ops": n_ops}
        files[1]["results"].append(restated(row))
    lines = _lines(_merge(tmp_path, files))
    assert len(lines) == shard_plan.MOST_SAID + 1, lines
    assert all("no case of the plan" in line for line in lines[:-1])
    assert lines[-1] == f"asyncbench: error: and 5 more mistakes of the same files (the first {shard_plan.MOST_SAID} are said)"


# --- a case two shards measured: taken from the shard that planned it as it ran ----------------------------------


def _resolved_matrix(first_interrupted: bool = False) -> list[tuple[str, Report]]:
    """A plan of `m` on `cuda` and on `cuda:0` in two shards: shard 1's `cuda` became cuda:0 where it ran, so both
    shards measured m[torch,cuda:0]; shard 2 planned it as it ran."""
    settings = dataclasses.asdict(Settings())
    planned = [PlannedCase(f"m[torch,{device}]", "m", "matmul", "torch", device, {}) for device in ("cuda", "cuda:0")]
    plan = shards.digest([shards.identity(case, settings, []) for case in planned])
    experiment = {"name": "m", "workload": "matmul", "backends": ["torch"], "devices": ["cuda", "cuda:0"], "params": {}, **settings}
    made = []
    for index, case in enumerate(planned, start=1):
        row = dataclasses.replace(ok_result("m[torch,cuda:0]"), device="cuda:0")
        report = Report.new({"name": "plan", "experiments": [experiment]}, {"hostname": f"runner-{index}"}, (row,))
        stamp = ShardOf(index, 2, plan, 2, (case,), (index - 1,))
        made.append((f"s{index}.json", dataclasses.replace(report, shard=stamp, interrupted=first_interrupted and index == 1)))
    return made


@pytest.mark.parametrize("interrupted", [False, True], ids=["finished", "first cut short"])
def test_a_case_two_shards_measured_is_taken_from_the_shard_that_planned_it_as_it_ran(interrupted):
    given = _resolved_matrix(interrupted)
    shard_plan.proven(shards.ordered(given))  # shard 1's cuda:0 row is its own `cuda` case, resolved
    report = shards.merged(given)
    assert [(row.id, row.machine, row.status) for row in report.results] == [("m[torch,cuda:0]", "runner-2", OK)]
