"""`run --syncs` with census checks, end to end through the CLI: a step that waits fails `syncs_per_step == 0` and the
check names its line; the same config without --syncs is not measured (exit 1, never a pass); on numpy nothing waits
for a device, and the check passes on that fact."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("jax")

STEP = """\
import jax.numpy as jnp

import asyncbench


@asyncbench.step(sync_every=(0,), steps=3)
def train(backend, device, params):
    x = jnp.ones((32, 32)) / 32
    w = jnp.ones((32, 32))

    def step():
        nonlocal w
        w = jnp.tanh(x @ w)
        w.sum().item()  # line 14: waits every step
        return w

    return step
"""
NUMPY_STEP = """\
import asyncbench


@asyncbench.step(sync_every=(0,), steps=2)
def train(backend, device, params):
    x = backend.random((16, 16), "float32", device)()
    return lambda: float((x @ x).sum())
"""
CONFIG = """\
defaults: {devices: [cpu], min_samples: 6, max_time_s: 2, warmup: 1}
experiments:
  - workload: step.py:train
    backends: [jax]
    expect:
      - syncs_per_step == 0
      - syncs_per_step[step.py:14] <= 1
      - sync_wait_s[print] < 1ms
"""


def run(folder: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "asyncbench", "run", "gate.yaml", "--no-progress", "-o", "r.json", "--markdown", "r.md", *args],
        cwd=folder,
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "OPENBLAS_NUM_THREADS": "1"},
    )


def test_census_checks_fail_and_pass_with_syncs(tmp_path):
    (tmp_path / "step.py").write_text(STEP)
    (tmp_path / "gate.yaml").write_text(CONFIG)

    done = run(tmp_path, "--syncs")
    assert done.returncode == 1, done.stdout + done.stderr
    (result,) = json.loads((tmp_path / "r.json").read_text())["results"]
    verdicts = {check["expect"]: check["verdict"] for check in result["checks"]}
    assert verdicts == {"syncs_per_step == 0": "fail", "syncs_per_step[step.py:14] <= 1": "pass", "sync_wait_s[print] < 1ms": "pass"}
    failing = next(check for check in result["checks"] if check["verdict"] == "fail")
    assert "waits at step.py:14 (jax.Array.item, 1 per step)" in failing["detail"]  # once in each of 3 steps a sample
    (census,) = result["syncs"].values()
    assert census["rounds"] >= 10  # topped up to what the checks' level needs, past the census's own six
    assert "where the step waited" in (tmp_path / "r.md").read_text()


def test_census_checks_take_their_census_rounds_without_syncs_and_show_its_table(tmp_path):
    # As a bound check takes its perturbation rounds without --bound: a config's census check is a gate as it
    # stands, never `not measured` for want of a flag the config cannot say.
    (tmp_path / "step.py").write_text(STEP)
    (tmp_path / "gate.yaml").write_text(CONFIG)
    done = run(tmp_path)
    assert done.returncode == 1, done.stdout + done.stderr  # syncs_per_step == 0 fails: the step waits
    (result,) = json.loads((tmp_path / "r.json").read_text())["results"]
    verdicts = {check["expect"]: check["verdict"] for check in result["checks"]}
    assert verdicts == {"syncs_per_step == 0": "fail", "syncs_per_step[step.py:14] <= 1": "pass", "sync_wait_s[print] < 1ms": "pass"}
    (census,) = result["syncs"].values()
    assert census["rounds"] >= 10
    assert "run it with --syncs" not in done.stdout
    assert "where the step waited" in done.stdout  # the table beside the checks, as --syncs shows it


def test_on_numpy_nothing_waits_for_a_device_and_the_check_passes_on_that_fact(tmp_path):
    (tmp_path / "step.py").write_text(NUMPY_STEP)
    (tmp_path / "gate.yaml").write_text(CONFIG.replace("[jax]", "[numpy]").replace("      - syncs_per_step[step.py:14] <= 1\n", ""))
    done = run(tmp_path, "--syncs")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "no waits (numpy runs synchronously: nothing waits for a device)" in done.stdout


def test_a_short_case_whose_census_checks_took_more_rounds_than_it_timed_reads_back(tmp_path):
    # Six timed rounds, while the three checks' level needs more census rounds (past the census's own six): the file
    # `run` writes must be one `show` and `compare` read, not one its reader refuses for holding them.
    (tmp_path / "step.py").write_text(STEP)
    (tmp_path / "gate.yaml").write_text(CONFIG.replace("min_samples: 6,", "min_samples: 6, max_samples: 6,"))
    done = run(tmp_path, "--syncs")
    assert done.returncode == 1, done.stdout + done.stderr  # syncs_per_step == 0 fails: the step waits
    (result,) = json.loads((tmp_path / "r.json").read_text())["results"]
    (census,) = result["syncs"].values()
    (variant,) = result["variants"].values()
    assert census["rounds"] > len(variant["samples"]["done_s"]) == 6
    for argv in (["show", "r.json"], ["compare", "r.json", "r.json"]):
        read = subprocess.run([sys.executable, "-m", "asyncbench", *argv], cwd=tmp_path, capture_output=True, text=True, timeout=120)
        assert read.returncode != 2, read.stderr  # 2: refused (compare's 1 is a verdict)
        assert not read.stderr
        if argv[0] == "show":
            assert f"{census['rounds']} census rounds" in read.stdout
