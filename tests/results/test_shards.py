"""Shards for CI matrices: the cut (balanced, deterministic, every case once), `--shard I/N` read, the `shard` field
of a results file (schema 8, older files still load, `record`'s checks), and the N files put back together."""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from asyncbench.errors import InputError
from asyncbench.results import budget, journal, schema, shards
from asyncbench.results.model import ERROR, PlannedCase, ShardOf
from asyncbench.results.schema import Report
from tests.support.helpers import ok_result

ROOT = Path(__file__).resolve().parents[2]

# --- --shard I/N -------------------------------------------------------------------------------------------------


def test_shard_is_read_as_index_of_count():
    assert shards.parse("2/4") == shards.Shard(2, 4)
    assert shards.parse("1/1") == shards.Shard(1, 1)
    assert str(shards.parse(" 3/7 ")) == "3/7"


@pytest.mark.parametrize(
    ("given", "said"),
    [
        ("5/4", "--shard 5/4: there are only 4 shards: I is 1 to 4"),
        ("0/4", "--shard 0/4: shards count from 1: the first of 4 is 1/4"),
        ("a/b", "--shard 'a/b': expected I/N"),
        ("1/0", "--shard 1/0: N is how many shards"),
        ("2", "--shard '2': expected I/N"),
        ("-1/4", "--shard '-1/4': expected I/N"),
        ("1/300", "--shard 1/300: at most 256 shards"),
        ("1/4\n--output=x", "expected I/N"),
    ],
)
def test_a_shard_that_is_none_is_one_line_naming_it(given, said):
    with pytest.raises(InputError) as refused:
        shards.parse(given)
    assert said in str(refused.value)
    assert "\n" not in str(refused.value)


# --- the cut -----------------------------------------------------------------------------------------------------

COSTS = {
    "equal": [1000] * 13,
    "one long": [10_000] + [1000] * 11,
    "mixed": [3000, 100, 100, 2000, 500, 500, 500, 10_000, 100, 700, 700, 2000, 300, 300, 4000],
    "fewer than shards": [1000, 2000, 3000],
}


@pytest.mark.parametrize("count", range(1, 8))
@pytest.mark.parametrize("name", list(COSTS))
def test_the_cut_puts_every_case_in_exactly_one_shard_and_balances_cost(name, count):
    costs = COSTS[name]
    chosen = shards.assign(costs, count)
    assert len(chosen) == len(costs)
    assert set(chosen) <= set(range(1, count + 1))  # each case in one shard
    assert shards.assign(costs, count) == chosen  # the same cut every time
    loads = [sum(c for c, s in zip(costs, chosen, strict=True) if s == shard) for shard in range(1, count + 1)]
    sizes = [chosen.count(shard) for shard in range(1, count + 1)]
    # no shard is idle while another holds two cases, and the costliest shard exceeds the mean by less than one case
    # (the greedy rule's bound; the best cut can do no better than the mean or the longest case)
    if len(costs) >= count:
        assert min(sizes) >= 1
    assert max(loads) <= max(sum(costs) / count + max(costs) * (count - 1) / count, max(costs))
    if len(set(costs)) == 1:
        assert max(sizes) - min(sizes) <= 1  # equal costs: dealt out in turn
        assert chosen == tuple(i % count + 1 for i in range(len(costs)))


def test_a_long_case_gets_a_shard_of_its_own():
    assert shards.assign([1000, 1000, 1000, 3000], 2) == (2, 2, 2, 1)


# --- a real plan cut: the engine's side --------------------------------------------------------------------------

CONFIG = """\
experiments:
  - name: sync_async
    workload: sync_async
    backends: [numpy, torch]
    devices: [cpu]
    sweep: {n_ops: [10, 100, 1000]}
    expect: ["done_s.median < 10s"]
  - name: matmul
    workload: matmul
    backends: [numpy, torch]
    devices: [cpu, cuda]
    max_time_s: 4
  - name: small_ops
    workload: small_ops
    backends: [numpy]
    devices: [cpu]
"""


def _plan(tmp_path):
    from asyncbench.spec import config

    path = tmp_path / "plan.yaml"
    path.write_text(CONFIG, encoding="utf-8")
    return config.load(str(path))


@pytest.mark.parametrize("count", range(1, 8))
def test_a_plan_cut_into_n_shards_runs_each_case_once_in_plan_order(tmp_path, count):
    from asyncbench.engine import jobs
    from asyncbench.engine import shards as cut

    plan = _plan(tmp_path)
    whole = [case.id for case in jobs.planned(plan)]
    picked = [cut.select(plan, shards.Shard(index, count)) for index in range(1, count + 1)]
    ids = [case.id for one in picked for case in one.shard.cases]
    assert sorted(ids) == sorted(whole)
    assert len(ids) == len(set(ids))
    for one in picked:
        mine = [case.id for case in one.shard.cases]
        assert mine == [i for i in whole if i in mine]  # plan order kept inside a shard
        assert [case.id for case in jobs.planned(one.config)] == mine  # the shard's plan makes exactly its cases
        assert (one.shard.plan, one.shard.plan_cases, one.shard.count) == (picked[0].shard.plan, len(whole), count)
        assert [whole[place] for place in one.shard.positions] == mine
    # every check is judged at the confidence it has unsharded: the shards' rates add up to the run's
    assert sum(one.family_error for one in picked) == pytest.approx(budget.FAMILY_ERROR)


def test_the_plans_digest_changes_with_what_the_cases_are(tmp_path):
    from asyncbench.engine import shards as cut
    from asyncbench.spec import overrides

    plan = _plan(tmp_path)
    quick = overrides.apply_overrides(plan, workloads=(), backends=(), devices=(), sets=(), quick=True, executor_options={})
    other = overrides.apply_overrides(plan, workloads=(), backends=(), devices=(), sets=("n_ops=5",), quick=False, executor_options={})
    digests = {cut.select(p, shards.Shard(1, 2)).shard.plan for p in (plan, quick, other)}
    assert len(digests) == 3


_CUT = """
import json, sys
from asyncbench.engine import shards as cut
from asyncbench.results import shards
from asyncbench.spec import config
plan = config.load(sys.argv[1])
picked = [cut.select(plan, shards.Shard(i, 3)).shard for i in (1, 2, 3)]
print(json.dumps([[one.plan, *(c.id for c in one.cases)] for one in picked]))
"""


def test_the_cut_is_the_same_in_every_process_whatever_its_hash_seed(tmp_path):
    """Each matrix job cuts the plan on its own: Python's str hash differs per process, the cut must not."""
    path = tmp_path / "plan.yaml"
    path.write_text(CONFIG, encoding="utf-8")
    seen = set()
    for seed in ("0", "1", "4242"):
        env = {**os.environ, "PYTHONHASHSEED": seed, "PYTHONPATH": str(ROOT)}
        done = subprocess.run([sys.executable, "-c", _CUT, str(path)], capture_output=True, text=True, env=env, timeout=120, check=True)
        seen.add(done.stdout)
    assert len(seen) == 1


# --- the field in a results file ---------------------------------------------------------------------------------

PLAN = "ab" * 32
CASE = {"id": "m", "experiment": "m", "workload": "matmul", "backend": "torch", "device": "cpu"}


def _case(case_id: str) -> PlannedCase:
    return PlannedCase(case_id, "m", "matmul", "torch", "cpu", {"size": 64})


def _shard_report(index: int, count: int, ids: list[str], finished: list[str] | None = None, host: str = "", plan: str = PLAN):
    stamp = ShardOf(index, count, plan, 8, tuple(_case(i) for i in ids), tuple(range(index - 1, 8, count))[: len(ids)])
    rows = tuple(ok_result(i) for i in (ids if finished is None else finished))
    report = Report.new({"name": "plan", "experiments": []}, {"hostname": host or f"runner-{index}", "python": "3.12"}, rows)
    return dataclasses.replace(report, shard=stamp, interrupted=finished is not None)


def test_a_shards_file_says_which_shard_of_which_plan_and_loads_back(tmp_path):
    report = _shard_report(2, 4, ["m[torch,cpu,k=a]", "m[torch,cpu,k=b]"])
    path = tmp_path / "s.json"
    report.save(path)
    raw = json.loads(path.read_text())
    assert raw["schema_version"] == schema.SCHEMA_VERSION
    assert (raw["shard"]["index"], raw["shard"]["count"], raw["shard"]["plan"]) == (2, 4, PLAN)
    assert [c["id"] for c in raw["shard"]["cases"]] == ["m[torch,cpu,k=a]", "m[torch,cpu,k=b]"]
    assert Report.load(path).shard == report.shard
    schema.check_file(raw, str(path))  # what record takes


def test_a_file_without_a_shard_and_a_schema_7_file_still_load(tmp_path):
    path = tmp_path / "old.json"
    raw = Report.new({}, {}, (ok_result("m[torch,cpu]"),)).to_dict()
    raw["schema_version"] = 7
    assert "shard" not in raw
    path.write_text(json.dumps(raw))
    assert Report.load(path).shard is None
    schema.check_file(raw, str(path))


def test_a_journal_keeps_the_shard_of_a_run_that_did_not_end(tmp_path):
    report = _shard_report(1, 2, ["m[torch,cpu,k=a]"])
    kept = journal.Journal.start(str(tmp_path / "s.json"), dataclasses.replace(report, results=()))
    kept.close()
    assert journal.read(journal.path_for(tmp_path / "s.json")).report.shard == report.shard


@pytest.mark.parametrize(
    ("change", "key", "said"),
    [
        ({"index": 0}, "shard.index", "shards count from 1"),
        ({"index": 5, "count": 4}, "shard.index", "shard 5 of 4"),
        ({"count": 100_000}, "shard.count", "1 to 256"),
        ({"index": "1"}, "shard.index", "whole number"),
        ({"plan": "ab\x1b[2J"}, "shard.plan", "not a plan's digest"),
        ({"plan_cases": -1}, "shard.plan_cases", "whole number"),
        ({"positions": [99]}, "shard.positions[0]", "beyond the plan's 8 cases"),
        ({"positions": []}, "shard.positions", "0 positions for 1 cases"),
        ({"cases": [{**CASE, "id": "m\nasyncbench: ok"}]}, "shard.cases[0].id", "control"),
        ({"cases": [{**CASE, "backend": "--output=x"}]}, "shard.cases[0].backend", "not a name"),
    ],
)
def test_record_refuses_a_shard_field_that_is_none_naming_the_key(change, key, said):
    raw = _shard_report(1, 2, ["m[torch,cpu,k=a]"]).to_dict()
    raw["shard"].update(change)
    with pytest.raises(InputError) as refused:
        schema.check_file(raw, "s.json")
    assert key in str(refused.value)
    assert said in str(refused.value)


def test_a_shard_that_is_not_an_object_is_refused_too():
    raw = _shard_report(1, 2, ["m[torch,cpu,k=a]"]).to_dict()
    raw["shard"] = "1/2"
    with pytest.raises(InputError, match="shard"):
        schema.check_file(raw, "s.json")
    with pytest.raises(schema.ResultsFileError, match="shard"):  # the typed reader holds it to the same checks first
        Report.from_dict(raw, "s.json")


# --- the shards' files put together ------------------------------------------------------------------------------


def _four():
    return [(f"s{i}.json", _shard_report(i, 4, [f"m[torch,cpu,k={i}a]", f"m[torch,cpu,k={i}b]"])) for i in (3, 1, 4, 2)]


def test_four_shards_merge_into_one_report_in_shard_order_each_row_naming_its_machine():
    report = shards.merged(_four())
    # in plan order, as the whole plan's run has them: shard i holds the plan's cases i-1, i-1+4 (dealt out in turn)
    assert [r.id for r in report.results] == [f"m[torch,cpu,k={i}{x}]" for x in "ab" for i in (1, 2, 3, 4)]
    assert [r.machine for r in report.results] == [f"runner-{i}" for _ in "ab" for i in (1, 2, 3, 4)]
    assert set(report.environment["machines"]) == {f"runner-{i}" for i in (1, 2, 3, 4)}
    assert report.environment["sweep"]["plan"] == PLAN
    assert report.shard is None
    assert not report.interrupted
    assert [job["shard"] for job in report.environment["sweep"]["jobs"]] == ["1/4", "2/4", "3/4", "4/4"]


def test_a_shard_cut_short_gives_an_error_row_for_each_case_it_did_not_finish():
    given = _four()
    given[0] = ("s3.json", _shard_report(3, 4, ["m[torch,cpu,k=3a]", "m[torch,cpu,k=3b]"], finished=["m[torch,cpu,k=3a]"]))
    report = shards.merged(given)
    [lost] = [r for r in report.results if r.status == ERROR]
    assert lost.id == "m[torch,cpu,k=3b]"
    assert lost.reason.startswith("shard 3/4 ended interrupted (s3.json)")
    assert report.interrupted


@pytest.mark.parametrize(
    ("given", "said"),
    [
        (lambda f: f[:3], "shard 2/4 missing: 1 of 4 not given (given: 1/4 (s1.json), 3/4 (s3.json), 4/4 (s4.json))"),
        (lambda f: [f[0], f[1]], "shards 2/4, 4/4 missing: 2 of 4 not given"),
        (lambda f: [*f, ("again.json", f[0][1])], "again.json: shard 3/4 given twice: s3.json is shard 3/4 too"),
        (
            lambda f: [*f[:3], ("b.json", _shard_report(2, 4, ["x[torch,cpu]"], plan="cd" * 32))],
            "b.json: shard 2/4 of another plan than s3.json's",
        ),
        (lambda f: [*f, ("e.json", _shard_report(5, 5, ["x[torch,cpu]"]))], "e.json: shard 5/5 of 5 shards, where s3.json is shard 3/4"),
        (
            lambda f: [*f[:3], ("old.json", dataclasses.replace(f[3][1], tool_version="0.0.1"))],
            "old.json: shard 2/4 was run by asyncbench 0.0.1",
        ),
        (lambda f: [*f, ("whole.json", dataclasses.replace(f[0][1], shard=None))], "whole.json: not a shard's results"),
        (lambda f: [], "no shard's results given"),
    ],
)
def test_shards_that_do_not_belong_together_are_one_line_naming_the_shard(given, said):
    with pytest.raises(InputError) as refused:
        shards.merged(given(_four()))
    assert said in str(refused.value)
    assert "\n" not in str(refused.value)
