"""The step form: each row its own backend, and one question per case for a gate.

A user's step runs where it declares (`@asyncbench.step(backends=...)`), or,
undeclared, where its code's framework is; a row never carries a backend its
code does not touch. A gate judges the step's time, not the barrier
experiment's three variants, unless the user chose `sync_every`.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from asyncbench.backends import BACKENDS, get_backend
from asyncbench.workloads import plugins
from asyncbench.workloads.step_form import StepWorkload, step, variant_name
from tests.support.cli import asyncbench
from tests.support.helpers import forgetting_user_modules, load_step, runs_on

STEPS = """
import numpy as np
import torch

import asyncbench
from mysteps_helpers import build


@asyncbench.step
def torch_only(backend, device, params):
    x = torch.ones(32, 32)
    return lambda: x @ x


@asyncbench.step
def numpy_only(backend, device, params):
    x = np.ones((32, 32), np.float32)
    return lambda: x @ x


@asyncbench.step
def torch_with_numpy_data(backend, device, params):
    x = torch.from_numpy(np.random.rand(32, 32).astype(np.float32))
    return lambda: x @ x


@asyncbench.step
def torch_through_a_helper(backend, device, params):
    model = build()
    return lambda: model


@asyncbench.step
def neutral(backend, device, params):
    x = backend.random((32, 32), "float32", device)()
    return lambda: x @ x


@asyncbench.step(backends=("numpy", "jax"))
def declared(backend, device, params):
    return lambda: None
"""
HELPERS = """
import torch


def build():
    return torch.nn.Linear(4, 4)
"""
# A model made by a library outside the step's folder: its code names no framework, its callable holds torch's.
LIBRARY = """
import torch


def model():
    return torch.nn.Linear(4, 4)
"""
HIDDEN = """
import asyncbench
import vendorlib


@asyncbench.step
def hidden(backend, device, params):
    model = vendorlib.model()
    return lambda: model
"""
ALL = ("numpy", "torch", "jax")


@pytest.fixture(autouse=True)
def _user_modules():
    yield from forgetting_user_modules("mysteps_helpers", "vendorlib")


@pytest.fixture
def steps(tmp_path: Path) -> Path:
    (tmp_path / "steps.py").write_text(STEPS)
    (tmp_path / "mysteps_helpers.py").write_text(HELPERS)
    return tmp_path


def _load(folder: Path, name: str) -> StepWorkload:
    return load_step(folder, name)


def _runs_on(workload: StepWorkload) -> set[str]:
    return runs_on(workload, ALL)


@pytest.mark.parametrize(
    "name, where",
    [
        ("torch_only", {"torch"}),
        ("numpy_only", {"numpy"}),
        ("torch_with_numpy_data", {"torch"}),  # numpy beside torch is torch's data preparation
        ("torch_through_a_helper", {"torch"}),  # a helper from the step's own folder is read like the step
        ("neutral", set(ALL)),  # it reaches arrays through `backend` only: every backend's own
        ("declared", {"numpy", "jax"}),
    ],
)
def test_a_step_runs_only_on_the_backends_its_code_is_written_for(steps, name, where):
    assert _runs_on(_load(steps, name)) == where


def test_the_skip_reason_names_both_frameworks_and_how_to_declare(steps):
    reason = _load(steps, "torch_only").skip_reason(get_backend("jax"), "cpu", {})
    assert reason is not None
    assert "names torch, not jax" in reason
    assert '@asyncbench.step(backends=("jax", "torch"))' in reason
    assert "\n" not in reason
    declared = _load(steps, "declared").skip_reason(get_backend("torch"), "cpu", {})
    assert declared == 'declared declares @asyncbench.step(backends=("jax", "numpy")): not run on torch'


def test_a_neutral_step_sets_up_on_each_backend_with_its_own_arrays(steps):
    workload = _load(steps, "neutral")
    for name in ("numpy", "torch"):
        prepared = workload.setup(get_backend(name), "cpu", workload.defaults())
        assert set(prepared.variants) == {variant_name(k) for k in (0, 4, 1)}


def test_a_step_that_holds_another_frameworks_objects_it_does_not_name_is_refused_at_set_up(tmp_path, monkeypatch):
    library = tmp_path / "site"
    library.mkdir()
    (library / "vendorlib.py").write_text(LIBRARY)
    monkeypatch.syspath_prepend(str(library))
    (tmp_path / "project").mkdir()
    (tmp_path / "project" / "hidden.py").write_text(HIDDEN)
    workload = plugins.load(plugins.canonical("hidden.py:hidden", tmp_path / "project"))
    assert isinstance(workload, StepWorkload)
    assert workload.named_backends() == frozenset()  # its code names no framework: not skipped before set-up
    with pytest.raises(TypeError, match=r"holds torch objects and none of numpy's.*backends=\(\"torch\",\)"):
        workload.setup(get_backend("numpy"), "cpu", workload.defaults())
    assert workload.setup(get_backend("torch"), "cpu", workload.defaults()).variants


def test_a_declaration_naming_no_backend_or_an_unknown_one_is_refused():
    with pytest.raises(ValueError, match="unknown backend 'pytorch'; the backends are numpy, torch"):
        step(backends=("pytorch",))(lambda backend, device, params: lambda: None)
    with pytest.raises(ValueError, match="no backend named"):
        step(backends=())(lambda backend, device, params: lambda: None)
    assert step(backends="torch")(lambda backend, device, params: lambda: None).backends == ("torch",)


def test_backends_know_their_frameworks_objects_without_importing_them():
    import numpy
    import torch

    torch_backend, numpy_backend = BACKENDS["torch"], BACKENDS["numpy"]
    for value in (torch.ones(2), torch.nn.Linear(2, 2), torch, torch.randn):
        assert torch_backend.owns(value)
        assert not numpy_backend.owns(value)
    for value in (numpy.ones(2), numpy.float64(1.0), numpy.matmul):
        assert numpy_backend.owns(value)
        assert not torch_backend.owns(value)
    assert not any(backend.owns(value) for backend in BACKENDS.values() for value in (1.0, None, "x", [1]))


def test_a_torch_step_run_without_b_gives_its_torch_row_alone_and_with_b_the_skip_says_why(steps, tmp_path, monkeypatch):
    done = asyncbench(
        *["run", "-w", "steps.py:torch_only", "-d", "cpu", "--quick", "--no-progress"],
        *["--set", "max_time_s=0.5", "-o", str(tmp_path / "r.json")],
        cwd=steps,
        env={"OMP_NUM_THREADS": "1"},
    )
    # no error row either, and no skipped row of a backend nobody asked for (numpy, jax, MXNet: the step's code is
    # torch's, so they are not planned; MXNet's worker could not even import the file)
    assert done.returncode in (0, 1), done.stdout + done.stderr
    results = {r["backend"]: r["status"] for r in json.loads((tmp_path / "r.json").read_text())["results"]}
    assert results == {"torch": "ok"}, done.stdout
    assert "skipped" not in done.stdout
    # a backend the user names keeps its row, skipped with the reason (test_the_skip_reason_names_both_frameworks...)
    from asyncbench.session import planning
    from asyncbench.session.requests import Selection

    monkeypatch.chdir(steps)
    plan = planning.plan(Selection(workloads=("steps.py:torch_only",), backends=("jax", "torch"), devices=("cpu",)))
    assert plan.experiments[0].backends == ("jax", "torch")


STEP_FORM_VARIANTS = [variant_name(k) for k in (0, 4, 1)]


def test_a_gate_judges_the_steps_time_alone_unless_sync_every_was_chosen():
    workload = step(lambda backend, device, params: lambda: None, name="loop")
    defaults = workload.defaults()
    assert workload.gated(defaults, STEP_FORM_VARIANTS) == (variant_name(0),)
    chosen = {**defaults, "sync_every": [0, 1]}  # a config's params or --set sync_every=[0,1]
    assert workload.gated(chosen, [variant_name(0), variant_name(1)]) == (variant_name(0), variant_name(1))
    declared = step(sync_every=(0, 8), name="own")(lambda backend, device, params: lambda: None)
    assert declared.gated(declared.defaults(), [variant_name(0), variant_name(8)]) == (variant_name(0),)
    without_zero = {**defaults, "sync_every": [4, 1]}  # no unsynchronized variant to stand for the step: all of them
    assert workload.gated(without_zero, [variant_name(4), variant_name(1)]) == (variant_name(4), variant_name(1))


def test_a_workloads_gate_leaves_out_its_instrumentation_variants():
    workload = step(lambda backend, device, params: lambda: None, name="loop")
    workload.instrumentation = (variant_name(0),)
    chosen = {**workload.defaults(), "sync_every": [0, 1]}
    assert workload.gated(chosen, [variant_name(0), variant_name(1)]) == (variant_name(1),)
