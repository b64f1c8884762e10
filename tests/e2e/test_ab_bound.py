"""`asyncbench ab --bound`: each side takes the case's perturbation rounds once and fits its bound, and the file,
the table and the pull-request comment list each variant's reading on base and on head with the change.

The step is the planted one (asyncbench.workloads.bound_planted), host-heavy on base and device-heavy on head. In
the run's processes a `sitecustomize` cuts the perturbation rounds to two (as tests/e2e/test_bound_run.py does),
so the test stays short: two rounds are too few for an interval, both readings are INCONCLUSIVE, and what must
come out is "undecided", never a flip the intervals do not support. What is asserted is that both sides' rounds
reached the file, each side perturbed on both of its sides, and that the gate's exit is the ratios' alone."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from asyncbench.report import bound_changes
from asyncbench.results.ab_report import AB_SCHEMA_VERSION
from tests.support.ab_repo import ab, git

ROOT = Path(__file__).resolve().parents[2]
pytest.importorskip("jax")

WORKLOAD = """\
import asyncbench
from asyncbench.workloads.bound_planted import planted_step

HOST_S, DEVICE_S = 0.0004, 0.0001


@asyncbench.step(sync_every=(0,), steps=2)
def work(backend, device, params):
    return planted_step(backend, device, {"host_s": HOST_S, "device_s": DEVICE_S, "ops": 2, "wait_after": 0})
"""
CONFIG = """\
defaults: {backends: [jax], devices: [cpu], min_samples: 6, max_time_s: 2, warmup: 1}
experiments:
  - name: work
    workload: work.py:work
"""
#: loaded by every Python of the run (its folder first on PYTHONPATH): two perturbation rounds, none after them
SITECUSTOMIZE = """\
from asyncbench.measure import extra_rounds, perturbation

perturbation.SCHEDULE = extra_rounds.Schedule(first=2, every=100, least=2)
perturbation.PRECISION_SHARE = float("inf")  # two rounds have no interval: stop after them, not at the budget
"""


def test_ab_bound_lists_each_variant_s_bound_on_both_sides_and_claims_no_flip_from_undecided_readings(tmp_path: Path):
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "work.py").write_text(WORKLOAD)
    (repo / "gate.yaml").write_text(CONFIG)
    git(repo, "init", "-q")
    git(repo, "add", ".")
    git(repo, "commit", "-qm", "base")
    (repo / "work.py").write_text(WORKLOAD.replace("HOST_S, DEVICE_S = 0.0004, 0.0001", "HOST_S, DEVICE_S = 0.0001, 0.0004"))
    (tmp_path / "site").mkdir()
    (tmp_path / "site" / "sitecustomize.py").write_text(SITECUSTOMIZE)
    path = os.pathsep.join([str(tmp_path / "site"), str(ROOT)])

    done = ab(
        "gate.yaml",
        "--base",
        "HEAD",
        "--bound",
        "--gate-time",
        "10s",
        "--gate-time-max",
        "10s",
        "-o",
        "ab.json",
        "--markdown",
        "ab.md",
        cwd=repo,
        env={"PYTHONPATH": path, "COLUMNS": "200", "PJRT_NPROC": "1"},
    )

    assert done.returncode in (0, 1), done.stderr + done.stdout  # the timing verdict is not what this test is about
    raw = json.loads((repo / "ab.json").read_text())
    assert raw["schema_version"] == AB_SCHEMA_VERSION  # 6 brought bound_changes
    (case,) = raw["cases"]
    assert case["status"] == "ok", case
    (change,) = case["bound_changes"]
    assert change["variant"] == "sync_every=0"
    assert change["change"] == "undecided", change  # two rounds: no interval on either side, so no flip is claimed
    for side in ("base", "head"):
        reading = change[side]
        assert (reading["bound"], reading["rounds"]) == ("inconclusive", 2), reading
        assert [slack["side"] for slack in reading["slacks"]] == ["host", "device"]  # JAX on a CPU: both sides perturbed
        assert reading["step_s"] > 0
    assert bound_changes.TITLE in done.stdout
    assert "undecided" in done.stdout
    assert "| work[jax,cpu] | sync_every=0 | INCONCLUSIVE | INCONCLUSIVE | undecided |" in (repo / "ab.md").read_text()
    assert "FLIPPED" not in done.stdout
    # the gate's exit is the ratios' alone: SLOWER (head's step is as long, but its host is idle) or not
    failed = any(ratio["label"] in ("SLOWER", "INCONCLUSIVE") for ratio in case["ratios"])
    assert done.returncode == (1 if failed else 0)
