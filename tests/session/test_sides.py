"""An `ab` gate's sides (session/sides.py): the config a side reads is the file as its revision has it, and a GPU
that admits one process is refused in one line before a side starts."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from asyncbench.backends import cuda_devices
from asyncbench.errors import InputError
from asyncbench.results.model import Case, Settings
from asyncbench.session import sides


def test_ab_reads_a_linked_config_where_it_was_named_so_a_revision_from_before_the_link_has_it(tmp_path):
    """`ab configs/ci-gate.yaml --base OLD`: each side reads configs/ci-gate.yaml as its revision has it (a file in
    revisions from before the suites moved into the package), not the path the link leads to today."""
    repo, old = tmp_path / "repo", tmp_path / "old"
    (repo / "asyncbench" / "suites").mkdir(parents=True)
    (repo / "asyncbench" / "suites" / "ci-gate.yaml").write_text("name: new\n", encoding="utf-8")
    (repo / "configs").mkdir()
    (repo / "configs" / "ci-gate.yaml").symlink_to("../asyncbench/suites/ci-gate.yaml")
    (old / "configs").mkdir(parents=True)
    (old / "configs" / "ci-gate.yaml").write_text("name: old\n", encoding="utf-8")
    named = str(repo / "configs" / "ci-gate.yaml")
    (there,) = sides.configs_in(sides.Tree(old, "OLD"), repo.resolve(), (named,), "--base")
    assert Path(there).read_text(encoding="utf-8") == "name: old\n"


def _case(device: str) -> Case:
    return Case(f"m[torch,{device}]", "m", "matmul", "torch", device, {}, Settings())


def test_ab_refuses_a_gpu_case_on_a_gpu_that_admits_one_process_in_one_line(monkeypatch):
    monkeypatch.setattr(cuda_devices, "compute_modes", lambda: {0: "default", 1: "exclusive_process"})
    with pytest.raises(InputError) as refused:
        sides.check_gpus([_case("cpu"), _case("cuda:0")])
    message = str(refused.value)
    assert message.startswith("cuda:1 admits one process at a time (compute mode EXCLUSIVE_PROCESS), and ab measures m[torch,cuda:0]")
    assert "\n" not in message
    sides.check_gpus([_case("cpu")])  # no GPU case: nothing to refuse
    monkeypatch.setattr(cuda_devices, "compute_modes", lambda: {0: "default"})
    sides.check_gpus([_case("cuda:0")])
    assert os.environ.get("CUDA_VISIBLE_DEVICES") != ""  # nothing here hid the GPUs to get there
