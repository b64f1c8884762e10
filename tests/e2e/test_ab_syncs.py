"""`asyncbench ab --syncs`: each side's census of where its step waits, and the points new on head listed in the
table, the JSON and the pull-request comment; a wait that an edit above it moved down a line is not new."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support.ab_repo import ab, git

pytest.importorskip("jax")

WORKLOAD = """\
import jax.numpy as jnp

import asyncbench


@asyncbench.step(sync_every=(0,), steps=4)
def work(backend, device, params):
    x = jnp.ones((64, 64)) / 64
    w = jnp.ones((64, 64))

    def step():
        nonlocal w
        w = jnp.tanh(x @ w)
        float(w[0, 0])  # a wait on both sides
        return w

    return step
"""
CONFIG = """\
defaults: {backends: [jax], devices: [cpu], min_samples: 6, max_time_s: 3, warmup: 1}
experiments:
  - name: work
    workload: work.py:work
"""


def test_a_wait_new_on_head_is_listed_and_a_moved_one_is_not(tmp_path: Path):
    (tmp_path / "work.py").write_text(WORKLOAD)
    (tmp_path / "gate.yaml").write_text(CONFIG)
    git(tmp_path, "init", "-q")
    git(tmp_path, "add", ".")
    git(tmp_path, "commit", "-qm", "base")
    head = WORKLOAD.replace("        nonlocal w\n", "        nonlocal w\n        # an edit above the old wait moves it down a line\n")
    head = head.replace("        return w\n", "        w.sum().item()  # new on head\n        return w\n")
    (tmp_path / "work.py").write_text(head)
    new_line = head.splitlines().index("        w.sum().item()  # new on head") + 1

    done = ab(
        "gate.yaml",
        "--base",
        "HEAD",
        "--syncs",
        "--gate-time",
        "10s",
        "--gate-time-max",
        "10s",
        "-o",
        "ab.json",
        "--markdown",
        "ab.md",
        cwd=tmp_path,
    )

    assert done.returncode in (0, 1), done.stderr + done.stdout  # the timing verdict is not what this test is about
    (case,) = json.loads((tmp_path / "ab.json").read_text())["cases"]
    assert [(new["variant"], new["point"]["file"], new["point"]["line"], new["point"]["call"]) for new in case["new_syncs"]] == [
        ("sync_every=0", "work.py", new_line, "jax.Array.item")
    ]
    assert case["new_syncs"][0]["point"]["calls_per_step"] == 1  # once in each of the 4 steps of a sample: once per step
    assert f"work.py:{new_line}" in done.stdout
    assert f"`work.py:{new_line}`" in (tmp_path / "ab.md").read_text()
