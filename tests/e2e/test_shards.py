"""A CI matrix for real: a plan run as 4 shards in 4 `asyncbench run --shard I/4` processes at once, merged by
`asyncbench merge`, gives the unsharded plan's cases, each row naming its machine; and each way the shards can fail
to belong together is one line, exit 2, naming the shard (those refusals, and a shard with no case, run in this
process: cli.in_process, the same commands without an interpreter's start each)."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.support.cli import CLI_TIMEOUT_S as TIMEOUT_S
from tests.support.cli import asyncbench, cli_env, in_process

# Five quick cases on numpy (CPU; no framework to import, so the matrix's four processes start in a second): shard
# sizes 2, 1, 1, 1 of 4 (dealt out in turn: every case has the same max_time_s), and a ninth shard of nine has none.
PLAN = """\
experiments:
  - name: sync_async
    workload: sync_async
    backends: [numpy]
    devices: [cpu]
    sweep: {n_ops: [10, 30, 100, 300]}
    expect: ["done_s.median < 10s"]
  - name: matmul
    workload: matmul
    backends: [numpy]
    devices: [cpu]
"""

# --quick's 20 rounds give no interval at the check's share of 1% (99.975%) when rounds drift: inconclusive, let pass
QUICK = ["--quick", "--no-progress", "--allow-inconclusive"]


@pytest.fixture(scope="module")
def matrix(tmp_path_factory) -> Path:
    """The 4 shards' files, each from its own process, all 4 running at once as a matrix's jobs would."""
    folder = tmp_path_factory.mktemp("matrix")
    (folder / "plan.yaml").write_text(PLAN, encoding="utf-8")
    started = time.perf_counter()
    jobs = [
        subprocess.Popen(
            [sys.executable, "-m", "asyncbench", "run", "plan.yaml", *QUICK, "--shard", f"{i}/4", "-o", f"shard-{i}.json"],
            cwd=folder,
            env=cli_env(),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for i in (1, 2, 3, 4)
    ]
    ended = [job.communicate(timeout=TIMEOUT_S) for job in jobs]
    for job, (_, err) in zip(jobs, ended, strict=True):
        assert job.returncode == 0, err
    print(f"4 shards in 4 processes: {time.perf_counter() - started:.1f} s")
    return folder


def _plan_ids(folder: Path) -> list[str]:
    """The unsharded plan's case ids, from the plan's one expansion (as `run` without --shard would run them)."""
    code = (
        "import json, sys\n"
        "from asyncbench.engine import jobs\n"
        "from asyncbench.session import planning, requests\n"
        "plan = planning.plan(requests.Selection(configs=('plan.yaml',), quick=True))\n"
        "print(json.dumps([case.id for case in jobs.planned(plan)]))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=folder, capture_output=True, text=True, env=cli_env(), timeout=TIMEOUT_S, check=True
    )
    return json.loads(done.stdout)


def test_four_shards_merged_are_the_unsharded_plan_each_row_naming_its_machine(matrix):
    shards = [json.loads((matrix / f"shard-{i}.json").read_text()) for i in (1, 2, 3, 4)]
    assert [(s["shard"]["index"], s["shard"]["count"]) for s in shards] == [(1, 4), (2, 4), (3, 4), (4, 4)]
    assert len({s["shard"]["plan"] for s in shards}) == 1
    assert [len(s["results"]) for s in shards] == [2, 1, 1, 1]
    # every shard judges its check at the confidence it has in the whole plan: 1% over the plan's 4 checks
    checks = [check for s in shards for r in s["results"] for check in r.get("checks", [])]
    assert len(checks) == 4
    assert [check["family_error"] for check in checks] == pytest.approx([0.0025] * 4)

    done = asyncbench(
        "merge", *(f"shard-{i}.json" for i in (1, 2, 3, 4)), "-o", "all.json", "--csv", "all.csv", "--allow-inconclusive", cwd=matrix
    )
    assert done.returncode == 0, done.stderr
    merged = json.loads((matrix / "all.json").read_text())
    assert [r["id"] for r in merged["results"]] == _plan_ids(matrix)  # the plan's cases, once each, in plan order
    # merged, the checks share the plan's 1%, as the unsharded run says (a new user read one shard's 0.25% there)
    assert [c["family_error"] for r in merged["results"] for c in r.get("checks", [])] == pytest.approx([0.01] * 4)
    assert "sharing a 1% false-alarm rate" in done.stdout
    hosts = {s["environment"]["hostname"] for s in shards}
    assert all(r["machine"] in hosts for r in merged["results"])
    assert "shard" not in merged
    assert "machine" in (matrix / "all.csv").read_text().splitlines()[0]
    # the merged report is a results file like any other: shown and compared
    assert asyncbench("show", "all.json", cwd=matrix).returncode == 0
    compared = asyncbench("compare", "all.json", "all.json", "--format", "json", cwd=matrix)
    # 1: a --quick row from four shards sharing two cores can be too noisy to call SAME even against itself
    assert compared.returncode in (0, 1), compared.stderr
    rows = json.loads(compared.stdout)["rows"]
    assert {row["id"] for row in rows} == {r["id"] for r in merged["results"]}  # every merged case is compared
    # a file against itself: every ratio is exactly 1, and never called a difference, whatever its noise
    assert all(row["ratio"] == pytest.approx(1.0) for row in rows), rows
    assert {row["label"] for row in rows} <= {"SAME", "NOT SLOWER", "INCONCLUSIVE"}, rows
    assert "fail" not in {row["verdict"] for row in rows}


def _one_line_exit_2(done: subprocess.CompletedProcess[str], *said: str) -> None:
    assert done.returncode == 2, done.stderr
    assert len(done.stderr.strip().splitlines()) == 1, done.stderr
    assert "Traceback" not in done.stderr
    for fragment in said:
        assert fragment in done.stderr


def test_a_missing_shard_is_named(matrix):
    _one_line_exit_2(in_process("merge", "shard-1.json", "shard-2.json", "shard-4.json", "-o", "x.json", cwd=matrix), "shard 3/4 missing")
    assert not (matrix / "x.json").exists()


def test_the_same_shard_twice_is_named(matrix):
    done = in_process("merge", "shard-1.json", "shard-2.json", "shard-3.json", "shard-4.json", "shard-2.json", cwd=matrix)
    _one_line_exit_2(done, "shard-2.json: shard 2/4 given twice")


def test_shards_of_another_plan_or_another_asyncbench_are_named(matrix):
    raw = json.loads((matrix / "shard-3.json").read_text())
    (matrix / "other-plan.json").write_text(json.dumps({**raw, "shard": {**raw["shard"], "plan": "cd" * 32}}))
    (matrix / "other-version.json").write_text(json.dumps({**raw, "tool": {**raw["tool"], "version": "0.0.1"}}))
    _one_line_exit_2(
        in_process("merge", "shard-1.json", "shard-2.json", "other-plan.json", "shard-4.json", cwd=matrix),
        "other-plan.json: shard 3/4 of another plan",
    )
    _one_line_exit_2(
        in_process("merge", "shard-1.json", "shard-2.json", "other-version.json", "shard-4.json", cwd=matrix), "asyncbench 0.0.1"
    )


def test_a_shard_run_with_other_options_is_another_plan(matrix):
    done = asyncbench("run", "plan.yaml", *QUICK, "--set", "max_time_s=0.05", "--shard", "4/4", "-o", "other.json", cwd=matrix)
    assert done.returncode == 0, done.stderr
    _one_line_exit_2(
        in_process("merge", "shard-1.json", "shard-2.json", "shard-3.json", "other.json", cwd=matrix),
        "other.json: shard 4/4 of another plan",
    )


def test_a_shard_with_no_case_says_so_and_passes_so_the_matrix_goes_on_to_merge(matrix):
    done = in_process("run", "plan.yaml", *QUICK, "--shard", "9/9", "-o", "empty.json", cwd=matrix)
    assert done.returncode == 0, done.stderr
    assert "shard 9/9 has no case: the plan has 5, fewer than 9 shards" in done.stderr
    empty = json.loads((matrix / "empty.json").read_text())
    assert empty["results"] == []
    assert (empty["shard"]["index"], empty["shard"]["count"], empty["shard"]["plan_cases"]) == (9, 9, 5)


@pytest.mark.parametrize(("shard", "said"), [("5/4", "--shard 5/4"), ("0/4", "--shard 0/4"), ("a/b", "--shard 'a/b'")])
def test_a_shard_that_is_none_is_one_line_before_anything_runs(tmp_path, shard, said):
    (tmp_path / "plan.yaml").write_text(PLAN, encoding="utf-8")
    done = in_process("run", "plan.yaml", *QUICK, "--shard", shard, "-o", "s.json", cwd=tmp_path)
    _one_line_exit_2(done, said)
    assert not (tmp_path / "s.json").exists()


# One experiment on two pooled backends on the CPU: the unsharded run notes their pools side by side on each row.
BESIDE = """\
experiments:
  - name: matmul
    workload: matmul
    backends: [numpy, torch]
    devices: [cpu]
"""


def test_shards_of_one_backend_each_merge_with_the_thread_pool_note_the_unsharded_run_prints(tmp_path):
    """Shards that each held one backend lost the note an unsharded run of both prints on each CPU row ("threads:
    numpy, torch each free ...: a gap between them may be their pools'"): each shard saw no other backend beside its
    own. The merged report says what the whole plan's run says."""
    pytest.importorskip("torch")
    (tmp_path / "plan.yaml").write_text(BESIDE, encoding="utf-8")
    quick = ["--quick", "--no-progress"]
    for argv in (["-o", "all.json"], ["--shard", "1/2", "-o", "s1.json"], ["--shard", "2/2", "-o", "s2.json"]):
        done = in_process("run", "plan.yaml", *quick, *argv, cwd=tmp_path)
        assert done.returncode == 0, done.stderr
    shards = [json.loads((tmp_path / name).read_text())["results"] for name in ("s1.json", "s2.json")]
    assert [[row["backend"] for row in rows] for rows in shards] == [["numpy"], ["torch"]]
    assert not any("threads:" in (row.get("note") or "") for rows in shards for row in rows)
    merged = in_process("merge", "s1.json", "s2.json", "-o", "merged.json", cwd=tmp_path)
    assert merged.returncode == 0, merged.stderr

    def notes(name: str) -> dict[str, str]:
        rows = json.loads((tmp_path / name).read_text())["results"]
        return {row["backend"]: next(part for part in row["note"].split("; ") if part.startswith("threads:")) for row in rows}

    whole = notes("all.json")
    assert whole["numpy"].startswith("threads: numpy, torch ")
    assert notes("merged.json") == whole
    assert whole["torch"] in merged.stdout
