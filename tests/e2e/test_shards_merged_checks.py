"""A plan of 2 experiments and 3 `expect:` checks run for real as 2 shards and merged: each check's detail says the
level its interval was taken at, the level its stored `confidence` is (a detail once said the level rounded down to a
readable one: "(99.95% interval)" beside a confidence of 0.99967), the merged file's family_error is the plan's and
its confidences the unsharded run's; and `compare` of a shard with the merged file, which holds that shard's very
samples, says so as it says a file compared with itself is the same run."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from asyncbench.results import budget, units
from tests.support.cli import asyncbench

PLAN = """\
experiments:
  - name: sync_async
    workload: sync_async
    backends: [numpy]
    devices: [cpu]
    expect: ["done_s.median < 10s", "done_s.median[async] < 10s"]
  - name: matmul
    workload: matmul
    backends: [numpy]
    devices: [cpu]
    expect: ["done_s.median < 10s"]
"""

# --quick's rounds may give a check no interval at its share of 1%: inconclusive, let pass
QUICK = ["--quick", "--no-progress", "--allow-inconclusive"]


@pytest.fixture(scope="module")
def merged(tmp_path_factory) -> Path:
    """s1.json, s2.json (the plan's 2 shards), all.json (merged) and whole.json (the plan unsharded)."""
    folder = tmp_path_factory.mktemp("merged")
    (folder / "plan.yaml").write_text(PLAN, encoding="utf-8")
    for args in (
        ["run", "plan.yaml", *QUICK, "--shard", "1/2", "-o", "s1.json"],
        ["run", "plan.yaml", *QUICK, "--shard", "2/2", "-o", "s2.json"],
        ["merge", "s1.json", "s2.json", "--allow-inconclusive", "-o", "all.json"],
        ["run", "plan.yaml", *QUICK, "-o", "whole.json"],
    ):
        done = asyncbench(*args, cwd=folder)
        assert done.returncode == 0, done.stderr
    return folder


def _checks(path: Path) -> list[dict]:
    return [check for row in json.loads(path.read_text())["results"] for check in row.get("checks") or ()]


def test_merged_checks_say_the_level_they_store_and_the_plan_s_family_error(merged):
    checks = _checks(merged / "all.json")
    assert len(checks) == 3
    shards = _checks(merged / "s1.json") + _checks(merged / "s2.json")
    whole = _checks(merged / "whole.json")
    for check, shard, alone in zip(checks, shards, whole, strict=True):
        assert check["family_error"] == pytest.approx(budget.FAMILY_ERROR)  # 0.667% + 0.333%: the plan's 1%
        assert check.get("confidence") == shard.get("confidence")  # judged in its shard, kept as judged
        if check.get("bounds") is not None:
            if alone.get("bounds") is not None:
                assert check["confidence"] == pytest.approx(alone["confidence"])  # the level the unsharded run judges it at
            said = re.search(r"\((\d+(?:\.\d+)?%) interval\)", check["detail"])
            assert said is not None, check["detail"]
            assert said[1] == units.exact_confidence(check["confidence"]), (check["detail"], check["confidence"])


def test_a_shard_compared_with_the_file_merged_from_it_says_both_hold_the_same_samples(merged):
    against_merged = asyncbench("compare", "s1.json", "all.json", cwd=merged)
    itself = asyncbench("compare", "s1.json", "s1.json", cwd=merged)
    other = asyncbench("compare", "s1.json", "whole.json", cwd=merged)
    assert "both files hold the same samples" in " ".join(against_merged.stdout.split())
    assert "same samples" not in " ".join(other.stdout.split())
    assert "same samples" not in " ".join(itself.stdout.split())  # the same run says so: one note
    assert against_merged.returncode == itself.returncode  # a note only: the verdicts are the method's, as judged
    assert against_merged.stdout.strip().splitlines()[-1] == itself.stdout.strip().splitlines()[-1]
    as_json = asyncbench("compare", "s1.json", "all.json", "--format", "json", cwd=merged)
    raw = json.loads(as_json.stdout)
    assert raw["same_samples"] is True
    assert raw["same_run"] is False
    assert all(row["same_samples"] for row in raw["rows"])
