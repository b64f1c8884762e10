"""`run --bound` end to end through the CLI, on a tiny JAX step on a CPU: the flag, and a config's `bound: true`,
reach the case in its worker; its perturbation rounds perturb both sides; a run without them takes none; a built-in
workload's row says that --bound measures step-form workloads; a synchronous backend is fitted as such.

In the run's processes (the JAX case runs in a worker) a `sitecustomize` cuts the perturbation rounds to two, so
the test stays short: two rounds are too few for an interval, and the reading is INCONCLUSIVE and says so; what
is asserted is that the rounds reached the results file, both sides perturbed, and the table printed."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from asyncbench.engine import measuring
from tests.support.cli import asyncbench, invoke

ROOT = Path(__file__).resolve().parents[2]
pytest.importorskip("jax")

STEP = """\
import jax.numpy as jnp

import asyncbench


@asyncbench.step(sync_every=(0,), steps=2)
def train(backend, device, params):
    x = jnp.ones((64, 64)) / 64

    def step():
        return jnp.tanh(x @ x)

    return step
"""
#: a step for every backend (numpy's rows): its code names no framework
ANY_STEP = """\
import asyncbench


@asyncbench.step(sync_every=(0,), steps=2)
def train(backend, device, params):
    x = backend.random((16, 16), "float32", device)()
    return lambda: x @ x
"""
SETTINGS = ["--set", "min_samples=2", "--set", "max_samples=2", "--set", "warmup=1"]
#: loaded by every Python of the run (its folder first on PYTHONPATH): two perturbation rounds, not ten, none more
#: for a bound check's level, and none after them for precision
SITECUSTOMIZE = """\
from asyncbench.measure import extra_rounds, perturbation
from asyncbench.verdicts import bound_checks

perturbation.SCHEDULE = extra_rounds.Schedule(first=2, every=100, least=2)
bound_checks.bound_rounds_needed = lambda *_: 0
perturbation.PRECISION_SHARE = float("inf")  # two rounds have no interval: stop after them, not at the budget
"""


#: as SITECUSTOMIZE, but as many rounds as the checks' intervals need at the run's level (and none after them)
SITECUSTOMIZE_CHECKED = """\
from asyncbench.measure import extra_rounds, perturbation

perturbation.SCHEDULE = extra_rounds.Schedule(first=2, every=100, least=2)
perturbation.PRECISION_SHARE = float("inf")
"""


def run(folder: Path, *args: str, site: str = SITECUSTOMIZE) -> subprocess.CompletedProcess[str]:
    """`asyncbench run ARGS -o r.json` in `folder` (with step.py and anystep.py)."""
    (folder / "step.py").write_text(STEP)
    (folder / "anystep.py").write_text(ANY_STEP)
    (folder / "site").mkdir(exist_ok=True)
    (folder / "site" / "sitecustomize.py").write_text(site)
    path = os.pathsep.join([str(folder / "site"), str(ROOT)])
    return asyncbench("run", "--no-progress", "-o", "r.json", *args, cwd=folder, env={"PYTHONPATH": path, "COLUMNS": "160"}, timeout=120)


def rows(folder: Path) -> list[dict[str, Any]]:
    return json.loads((folder / "r.json").read_text())["results"]


def test_run_bound_takes_perturbation_rounds_of_the_step_on_both_sides(tmp_path: Path) -> None:
    done = run(tmp_path, "-w", "step.py:train", "-b", "jax", "-d", "cpu", "--bound", *SETTINGS)
    assert done.returncode == 0, done.stdout + done.stderr
    (row,) = rows(tmp_path)
    assert row["status"] == "ok"
    (variant,) = row["bound"]
    assert variant == "sync_every=0"
    stored = row["bound"][variant]
    assert stored["rounds"] == 2
    assert stored["steps_per_call"] == 2
    assert stored["bound"] == "inconclusive"  # two rounds: too few for an interval, and the note says so
    assert stored["shares_cores"] is True  # JAX on a CPU: its threads share the host's cores
    assert "too few for an interval" in stored["note"]
    observations = stored["observations"]
    assert {side for _, side, *_ in observations} == {None, "host", "device"}
    assert {number for number, *_ in observations} == {0, 1}
    assert all(step_s > 0 and injected_s >= 0 for _, _, _, injected_s, step_s in observations)
    assert set(stored["sides"]) == {"host", "device"}
    assert "INCONCLUSIVE" in done.stdout


def test_a_configs_bound_true_fits_a_synchronous_step_as_such_and_a_built_in_workload_gets_a_note(tmp_path: Path) -> None:
    (tmp_path / "c.yaml").write_text(
        "bound: true\ndefaults: {backends: [numpy], devices: [cpu], min_samples: 2, max_samples: 2, warmup: 1}\n"
        "experiments:\n  - workload: anystep.py:train\n  - workload: sync_async\n    params: {n_ops: 10}\n"
    )
    done = run(tmp_path, "c.yaml", "--in-process")
    assert done.returncode == 0, done.stdout + done.stderr
    step_row, built_in = rows(tmp_path)
    # numpy is synchronous: fitted as such, without a perturbation round
    synchronous = step_row["bound"]["sync_every=0"]
    assert (synchronous["bound"], synchronous["rounds"], synchronous["observations"]) == ("synchronous", 0, [])
    assert "bound" not in built_in
    assert step_row["status"] == built_in["status"] == "ok"
    assert measuring.NOT_PERTURBABLE in built_in["note"]
    assert measuring.NOT_PERTURBABLE not in (step_row.get("note") or "")
    # `bound_verify: jit` on numpy: it captures nothing, and the run is refused in one line before it measures
    (tmp_path / "v.yaml").write_text("bound_verify: jit\n" + (tmp_path / "c.yaml").read_text().removeprefix("bound: true\n"))
    refused = run(tmp_path, "v.yaml", "--in-process")
    assert refused.returncode == 2, refused.stdout + refused.stderr
    assert "--bound-verify jit: numpy cannot capture a step that way" in refused.stderr


def test_run_help_shows_bound_with_an_example() -> None:
    shown = invoke("run", "--help").output
    assert "--bound" in shown
    assert "--bound-verify [jit|compile|graph]" in shown
    assert "what bounds your step" in shown


def test_a_bound_check_takes_perturbation_rounds_without_the_flag_and_two_rounds_leave_it_inconclusive(tmp_path: Path) -> None:
    (tmp_path / "c.yaml").write_text(
        "defaults: {backends: [jax], devices: [cpu], min_samples: 2, max_samples: 2, warmup: 1}\n"
        "experiments:\n  - workload: step.py:train\n    expect: ['bound == device', 'slack_share[host] >= 20%']\n"
    )
    done = run(tmp_path, "c.yaml", "--in-process")
    assert done.returncode != 0, done.stdout + done.stderr
    (row,) = rows(tmp_path)
    assert row["status"] == "ok"
    stored = row["bound"]["sync_every=0"]  # no --bound: the checks asked for it
    assert stored["rounds"] == 2
    assert stored["bound"] == "inconclusive"
    reading, share = row["checks"]
    assert (reading["expect"], reading["verdict"]) == ("bound == device", "inconclusive")
    assert "2 perturbation rounds, too few rounds for a 9" in reading["detail"]  # as the threshold check below
    assert share["verdict"] == "inconclusive"
    assert "over 2 paired rounds, too few for a 9" in share["detail"]  # no interval at the run's level from two rounds
    assert share["detail"].endswith(")")  # '(it needs 10)': how many it needs, the bracket closed
    assert "INCONCLUSIVE" in done.stdout


def test_a_bound_check_on_a_synchronous_step_or_a_built_in_workload_cannot_be_evaluated_and_fails_the_run(tmp_path: Path) -> None:
    (tmp_path / "c.yaml").write_text(
        "defaults: {backends: [numpy], devices: [cpu], min_samples: 2, max_samples: 2, warmup: 1}\n"
        "experiments:\n  - workload: anystep.py:train\n    expect: ['bound == device']\n"
        "  - workload: sync_async\n    params: {n_ops: 10}\n    expect: ['slack_s[host] >= 1ms']\n"
    )
    done = run(tmp_path, "c.yaml", "--in-process")
    assert done.returncode == 1, done.stdout + done.stderr
    step_row, built_in = rows(tmp_path)
    ((synchronous,), (unbound,)) = step_row["checks"], built_in["checks"]
    assert (synchronous["verdict"], unbound["verdict"]) == ("not measured", "not measured")
    assert "cannot be evaluated: synchronous: the host is the device" in synchronous["detail"]
    assert "cannot be evaluated: no bound was measured for this case" in unbound["detail"]
    assert "2 checks could not be evaluated" in done.stdout


def test_a_threshold_check_injects_its_own_level_on_a_planted_step_and_is_judged_from_the_paired_slowdown(tmp_path: Path) -> None:
    # a host-bound planted step (2 ops of 0.5 ms of host spin, 0.1 ms of device work each): its host has no slack
    # (or on shared cores a little), and a host delay of 90% of the step is not absorbed
    (tmp_path / "c.yaml").write_text(
        "defaults: {backends: [jax], devices: [cpu], min_samples: 2, max_samples: 2, warmup: 1}\n"
        "experiments:\n  - workload: asyncbench.workloads.bound_planted:planted\n"
        "    params: {host_s: 0.0005, device_s: 0.0001, ops: 2, steps: 5}\n"
        "    expect: ['slack_share[host] >= 90%']\n"
    )
    done = run(tmp_path, "c.yaml", "--in-process", "--threads", "1", site=SITECUSTOMIZE_CHECKED)
    assert done.returncode == 1, done.stdout + done.stderr
    (row,) = rows(tmp_path)
    ((check,),) = [row["checks"]]
    # never a pass: the host has not that slack (a loaded 2-core machine preempts the spins and the step by
    # milliseconds, and its nine rounds may not decide it: the verdicts themselves are tests/verdicts/test_bound_levels.py's)
    assert check["verdict"] in ("fail", "inconclusive"), check["detail"]
    assert "slack_share[host]: a host delay of" in check["detail"]
    assert ", 90% of the " in check["detail"]
    assert " step the levels were set from, probed before the rounds (as run: " in check["detail"]
    assert "paired rounds" in check["detail"]
    stored = row["bound"]["sync_every=0"]
    level_s = 0.9 * stored["scale_s"]  # the level the check asked for, found again from the file
    at_level = [o for o in stored["observations"] if o[1] == "host" and abs(o[2] - level_s) <= 2e-9]
    rounds = {number for number, *_ in stored["observations"]}
    assert len(rounds) == stored["rounds"] >= 6  # as many as the check's interval needs at the run's level
    assert {number for number, *_ in at_level} == rounds  # in every round, once
    assert len(at_level) == len(rounds)
    assert "slack_share[host] >= 90%" in done.stdout
